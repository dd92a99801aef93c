"""A master of the clustered store killed in live play (issue 24): 6 nodes (3 masters, 3
replicas, `cluster-node-timeout` 2 s), the job queue on a Valkey of its own, one web process,
one worker and one sweeper. Six 4-seat games are played over HTTP (each seat sends its
order once per step); after about 100 acknowledged orders the master holding the first
game's slot is SIGKILLed. Its replica takes over (about 2 to 4 s); the games on the other
masters never stop, those on the killed one wait, then all go on for further steps.

What an acknowledged order can lose: the cluster replicates asynchronously, so an order
answered 202 by the master just before it died may never have reached the replica that
took over. The players notice: the step shows their seat as not answered any more and they
send again. The test counts such acknowledged-then-missing orders over ~200 orders around
the kill and asserts they are at most the orders the killed master acknowledged in its last
second (the replication window). Measured on a loaded 2-core machine, loopback: 0 lost of
225-240 orders in each of 5 runs (17-44 of them acknowledged by the killed master in its
last second); the killed master's games accepted no order for 2.7-3.3 s, the others went on;
about 10 s a run. Zero is no promise: under load, or with a slower replica link, the last
writes before a crash can be lost (`docs/operations.md`, failover). A replica that had not
finished its first sync when its master died takes over EMPTY: the fixture waits for every
replica's link (`repl-diskless-sync-delay` 0), and the test asserts the victim's replica was
in sync before the kill (a run without that wait lost whole games: 404, and the sweep took
them out of the registry).
What the test asserts strictly is that the game state stays consistent: every committed
step replays (`engine.core.verify`: orders, state digest and events of each step), step
numbers are unique and consecutive (no step resolved twice), and every acknowledged order
that was not seen missing is the one its step's history holds.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import requests

from engine.core.verify import verify_history
from service.config import Settings
from service.core.kontor import Kontor
from tests.service.conftest import Player
from tests.service.hosts import Hosts, http_game

SEATS = 4
GAMES = 6
BEFORE = 100  # acknowledged orders before the kill
AFTER = 100  # ... and after it
MORE_STEPS = 2  # steps every game makes after the kill


@pytest.fixture
def cluster6() -> Iterator[Any]:
    from service.dev.cluster import start_cluster

    # A replica's first full sync waits `repl-diskless-sync-delay` (5 s by default) for
    # more replicas: a master killed before it ends leaves an empty replica to take over.
    cluster = start_cluster(masters=3, replicas=1, **{"repl-diskless-sync-delay": 0})
    try:
        wait(lambda: all(link(s) == "up" for s in cluster.replicas), 30, "the replicas' first sync")
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def hosts(valkey: Any, cluster6: Any, tmp_path: Path) -> Iterator[Hosts]:
    redis.Redis.from_url(valkey.connection_url).flushall()
    h = Hosts(cluster6.url, valkey.connection_url, tmp_path)
    try:
        yield h
    finally:
        h.stop()


class Seats(threading.Thread):
    """The players of one game: each requested seat sends its order once per step; a seat
    whose acknowledged order the step no longer shows (lost in a failover) sends again."""

    def __init__(self, base: str, gid: str, players: list[Player]) -> None:
        super().__init__(daemon=True, name=f"seats-{gid}")
        self.base, self.gid, self.players = base, gid, players
        self.http = requests.Session()
        #: (phase, seat) -> (order, when acknowledged)
        self.acked: dict[tuple[int, int], tuple[dict[str, Any], float]] = {}
        #: acknowledged orders the step no longer showed: (phase, seat, when acknowledged, when seen missing)
        self.lost: list[tuple[int, int, float, float]] = []
        self.top = 0  # the highest step seen open
        self.rolled_back: list[tuple[int, int]] = []  # (highest seen, open again)
        self.errors = 0
        self.stop = threading.Event()
        self.failure: BaseException | None = None

    def get(self, path: str, **kwargs: Any) -> Any:
        r = self.http.get(self.base + path, timeout=10, **kwargs)
        return r.json() if r.status_code == 200 else None

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                try:
                    self.round()
                except requests.RequestException:
                    self.errors += 1
                    time.sleep(0.1)
        except BaseException as exc:  # noqa: BLE001  (the test shows it)
            self.failure = exc

    def round(self) -> None:
        ph = self.get(f"/games/{self.gid}/phases/current")
        if ph is None:
            self.errors += 1
            time.sleep(0.1)
            return
        phase = ph["id"]
        if phase < self.top:
            self.rolled_back.append((self.top, phase))
        self.top = max(self.top, phase)
        if ph["status"] != "collecting":
            time.sleep(0.05)
            return
        answered = set(ph["answered"])
        for seat in ph["requested"]:
            if seat in answered:
                continue
            if (phase, seat) in self.acked:  # acknowledged, and now not there
                _, when = self.acked.pop((phase, seat))
                self.lost.append((phase, seat, when, time.time()))
            p = self.players[seat]
            you = self.get(f"/games/{self.gid}/phases/current", headers=p.bearer())
            if you is None or you["id"] != phase:
                self.errors += 1
                return
            order = you["you"]["default_order"]
            r = self.http.put(f"{self.base}/games/{self.gid}/phases/{phase}/orders/{seat}", timeout=10,
                              json={"token": p.order_token(phase, order)})
            if r.status_code == 202:
                self.acked[(phase, seat)] = (order, time.time())
            else:
                self.errors += 1
        time.sleep(0.05)


def link(server: Any) -> str:
    """A replica's link to its master (`up` once it is in sync)."""
    info = redis.Redis(host=server.host, port=server.port, decode_responses=True).info("replication")
    return str(info.get("master_link_status"))


def slot_owner(cluster: Any, gid: str) -> Any:
    """The master (a server of `cluster.masters`) that holds the slot of game `gid`."""
    client = cluster.client()
    node = client.get_node_from_key(f"kontor:{{g:{gid}}}:meta")
    return next(s for s in cluster.masters if s.port == node.port)


def roles(cluster: Any, dead: Any) -> dict[int, dict[str, Any]]:
    """Each node's entry of `CLUSTER NODES` (flags, master_id, slots) as a live node sees
    it, by port."""
    alive = next(s for s in cluster.nodes if s is not dead)
    nodes = redis.Redis(host=alive.host, port=alive.port, decode_responses=True).execute_command("CLUSTER NODES")
    return {int(addr.split("@")[0].rsplit(":", 1)[1]): node for addr, node in nodes.items()}


def replay(kontor: Kontor, gid: str) -> tuple[list[int], Any]:
    """The committed steps of a running game (their numbers) and the replay's report of
    them: the game's history as `/history` will publish it once the game is over."""
    meta = kontor.store.meta(gid)
    steps = kontor.store.history(gid)
    doc = {"format": "kontor-history/1", "title": meta["title"], "seats": int(meta["seats"]),
           "options": json.loads(meta["options"]), "seed": json.loads(meta["seed"]), "steps": steps}
    return [s["phase"] for s in steps], verify_history(doc)


def wait(predicate: Any, timeout: float, what: str, state: Any = lambda: "") -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, f"timed out waiting for {what}: {state()}"
        time.sleep(0.1)


def test_a_master_killed_in_live_play_loses_no_committed_step(hosts: Hosts, cluster6: Any, valkey: Any) -> None:
    started = time.monotonic()
    web = hosts.web("web")
    hosts.worker("worker")
    hosts.sweeper("sweeper")
    seats = [Seats(web, gid, players) for gid, _, players in (http_game(web, web, SEATS) for _ in range(GAMES))]
    for s in seats:
        s.start()
    acks = lambda: sum(len(s.acked) + len(s.lost) for s in seats)  # noqa: E731
    try:
        wait(lambda: acks() >= BEFORE or any(s.failure for s in seats), 60, f"{BEFORE} orders")
        victim = slot_owner(cluster6, seats[0].gid)
        on_victim = [s for s in seats if slot_owner(cluster6, s.gid) is victim]
        tops = {s.gid: s.top for s in seats}
        before_kill = roles(cluster6, victim)
        replica = next(port for port, node in before_kill.items()
                       if node["master_id"] == before_kill[victim.port]["node_id"])
        replica_of_victim = next(r for r in cluster6.replicas if r.port == replica)
        assert link(replica_of_victim) == "up"  # in sync with the master about to die
        killed_at = time.time()
        os.kill(victim._process.pid, signal.SIGKILL)
        before = acks()
        wait(lambda: (acks() >= before + AFTER and all(s.top >= tops[s.gid] + MORE_STEPS for s in seats))
             or any(s.failure for s in seats), 90, "the games to go on after the failover",
             lambda: (f"steps (at the kill, now, failed requests): "
                      f"{[(s.gid, tops[s.gid], s.top, s.errors) for s in seats]}; nodes: "
                      f"{[(p, n['flags']) for p, n in roles(cluster6, victim).items()]}\n"
                      + "\n".join(f"{n}: {hosts.log(n)[-1500:]}" for n in ("web", "worker", "sweeper"))))
    finally:
        for s in seats:
            s.stop.set()
        for s in seats:
            s.join(timeout=20)
    for s in seats:
        assert s.failure is None, (s.gid, s.failure)

    # The killed master's replica took over its slots.
    after = roles(cluster6, victim)
    assert "fail" in after[victim.port]["flags"] and "master" in after[replica]["flags"], after
    assert after[replica]["slots"] == before_kill[victim.port]["slots"], after
    # The outage of its games: the longest pause between two acknowledged orders of theirs.
    times = sorted(when for s in on_victim for _, when in s.acked.values() if when > killed_at - 1)
    outage = max(b - a for a, b in zip(times, times[1:], strict=False))

    # What acknowledged orders were lost: at most the killed master's last second of them.
    lost = [(s.gid, *x) for s in seats for x in s.lost]
    window = [(s.gid, k) for s in on_victim for k, (_, when) in s.acked.items() if killed_at - 1 <= when <= killed_at]
    window += [x for x in lost if killed_at - 1 <= x[3] <= killed_at]
    total = acks()
    print(f"\nfailover: {total} orders acknowledged, {len(lost)} lost ({len(window)} acknowledged by the killed "
          f"master in its last second); its games accepted no order for {outage:.1f} s; "
          f"{sum(s.errors for s in seats)} refused or failed requests; "
          f"steps open again after the failover: {[(s.gid, s.rolled_back) for s in seats if s.rolled_back]}; "
          f"{time.monotonic() - started:.1f} s")
    assert all(x[0] in {s.gid for s in on_victim} for x in lost), lost  # only the killed master's games
    assert len(lost) <= len(window), (lost, window)

    # The state stays consistent: every committed step replays, none was resolved twice,
    # and every acknowledged order still known is the one its step's history holds.
    kontor = Kontor(Settings(redis_url=cluster6.url, queue_url=valkey.connection_url, durability="none"))
    for s in seats:
        phases, report = replay(kontor, s.gid)
        assert phases == list(range(1, len(phases) + 1)), (s.gid, phases)
        assert len(phases) >= tops[s.gid] - 1 + MORE_STEPS, (s.gid, phases, tops[s.gid])
        assert report.steps == len(phases), (s.gid, report.as_dict())
        assert all("still running" in p for p in report.problems), (s.gid, report.as_dict())
        history = {h["phase"]: h for h in kontor.store.history(s.gid, events=False)}
        for (phase, seat), (order, _) in s.acked.items():
            if phase in history:
                assert history[phase]["orders"][str(seat)] == order, (s.gid, phase, seat)
                assert seat not in history[phase]["defaults"], (s.gid, phase, seat)
        events: list[dict[str, Any]] = []
        after = 0
        while True:
            page = kontor.events(s.gid, "public", after, 500)
            events, after = events + page["items"], page["next"]
            if not page["more"]:
                break
        resolved = [e["phase"] for e in events if e["type"] == "step_resolved"]
        assert resolved == phases, (s.gid, resolved, phases)
