"""Live streams on sharded pub/sub (issue 24): each runs on one Valkey and on a 3-master
cluster (marker `cluster`). A stream gets exactly `/events`' events for games on every
shard, at once (not at the keep-alive's read); a seat change closes a seat stream at
once; a process whose subscription connection was killed subscribes again and its
streams hear the next change at once; the process unsubscribes when a game's last
stream ends (through the domain layer's `Live`, as the route serves it). And the hub on
a cluster of its own follows its games through a failover and a slot move."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
import redis
from redis.cluster import key_slot

from service.core.kontor import Kontor
from service.core.live import KEEPALIVE, Hub, Live
from service.dev.cluster import start_cluster
from service.store import Store
from service.store.base import store_client
from tests.service.conftest import default_step, domain_game, open_step, wait_until
from tests.service.core.test_live import frames

pytestmark = pytest.mark.cluster

#: A change must reach an open stream well before the keep-alive's read would find it.
SOON = 5.0


def servers(kontor: Kontor) -> list[redis.Redis]:
    """A plain client of every master of the store (one on a single Valkey)."""
    r = kontor.store.r
    if isinstance(r, redis.RedisCluster):
        return [r.get_redis_connection(n) for n in r.get_primaries()]
    return [r]


def listeners(kontor: Kontor, gid: str) -> int:
    """How many connections are subscribed to the game's `live` channel (every server)."""
    channel = kontor.store.live_channel(gid)
    return sum(int(s.execute_command("PUBSUB", "SHARDNUMSUB", channel)[1]) for s in servers(kontor))


def games_on_every_shard(kontor: Kontor) -> list[str]:
    """Started 2-seat games, one on each master of a cluster (three on a single Valkey)."""
    single = len(servers(kontor)) == 1
    made: dict[str, str] = {}
    for n in range(40):
        gid, _ = domain_game(kontor, 2)
        made.setdefault(str(n) if single else kontor.store.live_node(gid), gid)
        if len(made) == 3:
            return list(made.values())
    raise AssertionError(f"no game on every shard: {sorted(made)}")


class Stream:
    """An open stream (`Live.frames`) and its frames, read one at a time."""

    def __init__(self, kontor: Kontor, gid: str, caller: Any = "public", kid: str | None = None) -> None:
        self.writes = Live(kontor, gid, caller, 0, time.time() + 300, kid=kid).frames()
        self.it: Iterator[dict[str, Any]] = frames(type("R", (), {"response": self.writes})())

    def until(self, done: Any) -> tuple[list[dict[str, Any]], float]:
        """The frames up to the first that `done(frame)`, and how long they took."""
        start = time.monotonic()
        got: list[dict[str, Any]] = []
        for frame in self.it:
            got.append(frame)
            if done(frame):
                return got, time.monotonic() - start
            assert time.monotonic() - start < 2 * KEEPALIVE, got
        raise AssertionError(f"the stream ended: {got}")

    def close(self) -> None:
        self.writes.close()


def step(phase: int) -> Any:
    return lambda f: f.get("event") == "step" and f["data"]["phase"] == phase


def play_step(kontor: Kontor, gid: str, worker: Any) -> int:
    """Every requested seat's default order in the open step, resolved; the step's number."""
    phase = open_step(kontor, gid)["id"]
    default_step(kontor, gid)
    worker()
    return int(phase)


def test_streams_of_games_on_every_shard_get_exactly_the_events_at_once(kontor: Kontor, worker: Any) -> None:
    games = games_on_every_shard(kontor)
    if isinstance(kontor.store.r, redis.RedisCluster):
        assert len({kontor.store.live_node(g) for g in games}) == 3
    streams, firsts = [], []
    for gid in games:  # the public's stream of each game, its first write read
        last = kontor.events(gid, "public", 0, 500)["items"][-1]["id"]
        s = Stream(kontor, gid)
        firsts.append(s.until(lambda f, last=last: f.get("id") == str(last))[0])
        streams.append(s)
    wait_until(lambda: all(listeners(kontor, g) == 1 for g in games))  # one subscription a game, on its server
    played = [play_step(kontor, g, worker) for g in games]
    heard = [s.until(step(phase + 1)) for s, phase in zip(streams, played, strict=True)]
    for s in streams:
        s.close()
    for gid, first, (later, took) in zip(games, firsts, heard, strict=True):
        assert took < SOON, (gid, took)
        assert not any("comment" in f for f in later)  # woken by the commit, not by the keep-alive
        events = kontor.events(gid, "public", 0, 500)["items"]
        assert any(e["type"] == "step_resolved" for e in events)
        got = [int(f["id"]) for f in first + later if f.get("event") == "game"]
        assert got == [e["id"] for e in events], gid


def test_a_seat_stream_closes_at_once_when_the_seat_changes_hands(kontor: Kontor) -> None:
    gid, _ = domain_game(kontor, 2)
    kid = kontor.store.seats(gid)[1]["kid"]
    s = Stream(kontor, gid, 1, kid)
    s.until(lambda f: f.get("event") == "step")
    changed = time.monotonic()
    kontor.update_seat(gid, 1, None, None, "greedy")
    got, _ = s.until(lambda f: f.get("event") == "closed")
    took = time.monotonic() - changed
    s.close()
    assert got[-1]["data"]["code"] == "seat_changed", got
    assert took < SOON, took


def test_a_killed_subscription_is_made_again_and_its_streams_hear_the_next_change(kontor: Kontor,
                                                                                  worker: Any) -> None:
    gid, _ = domain_game(kontor, 2)
    last = kontor.events(gid, "public", 0, 500)["items"][-1]["id"]
    s = Stream(kontor, gid)
    s.until(lambda f: f.get("id") == str(last))
    wait_until(lambda: listeners(kontor, gid) == 1)
    killed = sum(int(r.client_kill_filter(_type="pubsub")) for r in servers(kontor))
    assert killed >= 1
    # The next change: its message went nowhere while the subscription was gone, but the
    # subscription made again wakes the stream, which reads it.
    phase = play_step(kontor, gid, worker)
    later, took = s.until(step(phase + 1))
    assert took < SOON, took
    assert any(f.get("event") == "game" and f["data"]["type"] == "step_resolved" for f in later)
    wait_until(lambda: listeners(kontor, gid) == 1)
    # And the one after, by its own message.
    phase = play_step(kontor, gid, worker)
    later, took = s.until(step(phase + 1))
    assert took < SOON, took
    s.close()
    # The game's last stream here ended: the process unsubscribes.
    wait_until(lambda: listeners(kontor, gid) == 0, SOON)


# -- the hub through a failover and a slot move (a cluster of its own: 3 masters, 3 replicas) --
class Heard(Hub):
    """The service's hub, noting every wake (when, which game, the message)."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.heard: list[tuple[float, str | None, str]] = []

    def wake(self, gid: str | None, note: str = "") -> None:
        self.heard.append((time.monotonic(), gid, note))
        super().wake(gid, note)


def test_the_hub_follows_its_games_through_a_failover_and_a_slot_move() -> None:
    cluster = start_cluster(masters=3, replicas=1)
    try:
        r = store_client(cluster.url)
        store = Store(r, "kontor")
        publish = r.register_script("redis.call('SPUBLISH', (string.gsub(KEYS[1], ':phase$', ':live')), ARGV[1])")
        games: dict[str, str] = {}  # node -> a game whose slot it holds
        while len(games) < 3:
            gid = uuid.uuid4().hex[:10]
            games.setdefault(store.live_node(gid), gid)

        def tell(gid: str, note: str) -> None:
            for _ in range(100):  # while the cluster fails over, the publish is refused
                try:
                    publish(keys=[store.key(gid, "phase")], args=[note])
                    return
                except (redis.ConnectionError, redis.ResponseError, redis.exceptions.ClusterError):
                    time.sleep(0.1)
            raise AssertionError(f"no server took {gid}'s publish")

        def on(gid: str) -> int:
            """Subscribers of the game's channel on the master that holds its slot now."""
            node = r.get_node_from_key(store.live_channel(gid))
            return int(r.get_redis_connection(node).execute_command("PUBSUB", "SHARDNUMSUB",
                                                                    store.live_channel(gid))[1])

        hub = Heard(store)
        with ExitStack() as streams:
            woken = {gid: streams.enter_context(hub.watch(gid)) for gid in games.values()}
            got: dict[str, list[str]] = {gid: [] for gid in games.values()}

            def told(gid: str, note: str) -> bool:
                """Whether the game's stream was woken by `note` (since it was last told)."""
                got[gid] += hub.take(woken[gid])
                if note in got[gid]:
                    got[gid] = []
                    return True
                return False

            wait_until(lambda: all(on(g) == 1 for g in games.values()))
            for gid in games.values():
                tell(gid, "commit")
            for gid in games.values():
                wait_until(lambda gid=gid: told(gid, "commit"))
            # A master dies; its replica takes over its slots. The game's subscription moves
            # to it and says so (a wake: its streams read what they missed meanwhile).
            lost, gid = next(iter(games.items()))
            killed = time.monotonic()
            next(m for m in cluster.masters if f"{m.host}:{m.port}" == lost).stop(timeout=5)
            tell(gid, "commit")
            wait_until(lambda: any(g == gid and not note and at > killed for at, g, note in hub.heard), 20)
            r.nodes_manager.initialize()
            wait_until(lambda: on(gid) == 1)
            assert hub.routes[gid].node == r.get_node_from_key(store.live_channel(gid)).name != lost
            tell(gid, "events")
            wait_until(lambda: told(gid, "events"))
            # A slot moves to another master: the old one drops the subscription unasked, the
            # hub subscribes on the new one.
            gid = list(games.values())[1]
            slot = key_slot(store.live_channel(gid).encode())
            source = r.get_node_from_key(store.live_channel(gid))
            target = next(n for n in r.get_primaries() if n.name != source.name)
            r.get_redis_connection(source).execute_command(
                "CLUSTER", "MIGRATESLOTS", "SLOTSRANGE", slot, slot,
                "NODE", r.get_redis_connection(target).execute_command("CLUSTER", "MYID"))
            wait_until(lambda: r.nodes_manager.initialize() or
                       r.get_node_from_key(store.live_channel(gid)).name == target.name)
            wait_until(lambda: on(gid) == 1 and hub.routes[gid].node == target.name)
            tell(gid, "commit")
            wait_until(lambda: told(gid, "commit"))
        # Every stream gone: every subscription too.
        wait_until(lambda: not hub.shards)
    finally:
        cluster.stop()


def test_the_hub_subscribes_again_after_the_store_restarts(tmp_path: Any) -> None:
    from service.dev.valkey import start_valkey

    server = start_valkey(tmp_path / "a", persist=False, attempts=8)
    port = server.port
    try:
        store = Store(store_client(server.connection_url), "kontor")
        gid = uuid.uuid4().hex[:10]
        hub = Heard(store)
        with hub.watch(gid) as woken:
            channel = store.live_channel(gid)
            wait_until(lambda: store.r.execute_command("PUBSUB", "SHARDNUMSUB", channel)[1] == 1)
            server.stop(timeout=5)
            time.sleep(0.5)  # the subscription fails meanwhile, and again while it tries
            down = time.monotonic()
            server = start_valkey(tmp_path / "b", port, persist=False)
            wait_until(lambda: any(g == gid and not note and at > down for at, g, note in hub.heard), 10)
            wait_until(lambda: store.r.execute_command("PUBSUB", "SHARDNUMSUB", channel)[1] == 1)
            hub.take(woken)
            store.r.spublish(channel, "commit")
            wait_until(lambda: woken.is_set() and "commit" in hub.take(woken))
    finally:
        server.stop(timeout=5)
