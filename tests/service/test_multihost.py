"""Many hosts on a clustered store (issue 24): the game store on a 3-master Valkey Cluster,
the job queue on a Valkey of its own, and two of each service process, as separate hosts
would run them: two web processes (the Procfile's gunicorn line), two workers (`python -m
workers`) and two sweepers (`python -m workers.sweeper`).

Four games of four seats are created alternately on both webs; each seat reads its step on
one web and sends its signed order to the other; every game has a public stream open on each
web. One game has a short deadline and a seat that never answers. Then:

* every stream got exactly the events `/events` lists (same ids, same items, in order: no
  gap, no duplicate);
* one commit per step: the `step_resolved` step numbers are unique and follow each other, and
  each step's orders are the ones accepted (its requested seats less its defaults);
* the deadline game's steps defaulted exactly the silent seat, when it was asked, by the
  deadline; the other games' steps none;
* both workers took jobs.

Every process runs in a process group of its own and is killed by group at the end.
"""

from __future__ import annotations

import os
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from rq import Worker

from tests.service.conftest import Player
from tests.service.hosts import Hosts, Watch, all_events, call, http_game

SEATS = 4
GAMES = 4
STEPS = 10
#: The deadline game (the last): its steps last 3 s; seat `SILENT` never answers.
DEADLINES = {"sealed_seconds": 3, "sequential_seconds": 3, "on_expiry": "defaults"}
SILENT = 3


@pytest.fixture
def watches() -> Iterator[list[Watch]]:
    """The test's open streams, closed at the end."""
    out: list[Watch] = []
    yield out
    for w in out:
        w.close()


@pytest.fixture
def hosts(valkey: Any, valkey_cluster: Any, tmp_path: Path) -> Iterator[Hosts]:
    redis.Redis.from_url(valkey.connection_url).flushall()
    valkey_cluster.flushall()
    h = Hosts(valkey_cluster.url, valkey.connection_url, tmp_path)
    try:
        yield h
    finally:
        h.stop()


class Game:
    """One game as its players see it: where it was made, its seats, what they sent."""

    def __init__(self, gid: str, players: list[Player], silent: int | None) -> None:
        self.gid, self.players, self.silent = gid, players, silent
        #: step -> the seats whose order was accepted (202)
        self.sent: dict[int, set[int]] = defaultdict(set)
        #: step -> the seats it asked
        self.asked: dict[int, list[int]] = {}
        self.error: BaseException | None = None

    def play(self, webs: list[str], steps: int, timeout: float) -> None:
        try:
            for n in range(steps):
                read, send = webs[n % 2], webs[(n + 1) % 2]
                ph = call("GET", f"{read}/games/{self.gid}/phases/current", 200)
                if not ph["requested"]:
                    return
                phase = ph["id"]
                self.asked[phase] = list(ph["requested"])
                for seat in ph["requested"]:
                    if seat == self.silent:
                        continue
                    p = self.players[seat]
                    you = call("GET", f"{read}/games/{self.gid}/phases/current", 200, headers=p.bearer())["you"]
                    call("PUT", f"{send}/games/{self.gid}/phases/{phase}/orders/{seat}", 202,
                         json={"token": p.order_token(phase, you["default_order"])})
                    self.sent[phase].add(seat)
                end = time.monotonic() + timeout
                while call("GET", f"{send}/games/{self.gid}/phases/current", 200)["id"] == phase:
                    assert time.monotonic() < end, f"step {phase} of {self.gid} not resolved in {timeout} s"
                    time.sleep(0.1)
        except BaseException as exc:  # noqa: BLE001  (the test shows it)
            self.error = exc


def test_two_webs_two_workers_two_sweepers_on_a_cluster(hosts: Hosts, valkey: Any, watches: list[Watch]) -> None:
    started = time.monotonic()
    webs = [hosts.web("web0"), hosts.web("web1")]
    for i in range(2):
        hosts.worker(f"worker{i}")
        hosts.sweeper(f"sweeper{i}")
    games: list[Game] = []
    for i in range(GAMES):
        deadline = i == GAMES - 1
        gid, _, players = http_game(webs[i % 2], webs[(i + 1) % 2], SEATS,
                                    **({"deadlines": DEADLINES} if deadline else {}))
        games.append(Game(gid, players, SILENT if deadline else None))
        watches += [Watch(web, gid) for web in webs]
    threads = [threading.Thread(target=g.play, args=(webs, STEPS, 30.0)) for g in games]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    for g in games:
        assert g.error is None, f"{g.gid}: {g.error!r}\n{hosts.log('web0')[-1500:]}\n{hosts.log('worker0')[-1500:]}"

    for g in games:
        listed = {web: all_events(web, g.gid) for web in webs}
        assert listed[webs[0]] == listed[webs[1]]
        events = listed[webs[0]]
        # every stream on both webs: exactly what /events lists
        for w in (w for w in watches if w.gid == g.gid):
            w.until(events[-1]["id"], timeout=15)
            assert w.error is None and w.closed is None, (w.base, w.error, w.closed)
            assert w.ids == [e["id"] for e in events], (w.base, g.gid)
            assert w.events == events, (w.base, g.gid)
        # one commit per step, with the orders accepted
        resolved = [e for e in events if e["type"] == "step_resolved"]
        phases = [e["phase"] for e in resolved]
        assert len(phases) == len(set(phases)) and phases == list(range(phases[0], phases[0] + len(phases)))
        assert set(g.asked) <= set(phases) and len(g.asked) == STEPS
        for e in resolved:
            if e["phase"] not in g.asked:  # resolved before the players looked (none expected)
                continue
            asked = g.asked[e["phase"]]
            want = [g.silent] if g.silent in asked else []
            assert e["defaults"] == want, (g.gid, e)
            assert e["by_deadline"] is bool(want), (g.gid, e)
            assert g.sent[e["phase"]] == set(asked) - set(want), (g.gid, e)
    assert any(g.silent in g.asked[p] for g in games if g.silent is not None for p in g.asked)

    # both workers took jobs (each worker process is the child of its supervisor's group)
    queue = redis.Redis.from_url(valkey.connection_url)
    took: dict[str, int] = {}
    for w in Worker.all(connection=queue):
        group = os.getpgid(w.pid)
        name = next(n for n, p in hosts.procs.items() if p.pid == group)
        took[name] = took.get(name, 0) + w.successful_job_count
    assert set(took) == {"worker0", "worker1"} and all(took.values()), took
    took_s = time.monotonic() - started
    print(f"\n4 games x {STEPS} steps on 2 webs, 2 workers, 2 sweepers in {took_s:.1f} s; jobs {took}")
    for name in ("web0", "web1", "worker0", "worker1", "sweeper0", "sweeper1"):
        assert "Traceback" not in hosts.log(name), hosts.log(name)[-3000:]
