"""Live streams on sharded pub/sub (issue 24): each runs on one Valkey and on a 3-master
cluster (marker `cluster`). A stream gets exactly `/events`' events for games on every
shard, at once (not at the keep-alive's read); a seat change closes a seat stream at
once; a process whose subscription connection was killed subscribes again and its
streams hear the next change at once; the process unsubscribes when a game's last
stream ends. (Through the domain layer's `Live`, as the route serves it.)"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from service.core.kontor import Kontor
from service.core.live import KEEPALIVE, Live
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
    assert killed >= 1 and listeners(kontor, gid) == 0
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
