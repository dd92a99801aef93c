"""Exactly-once resolution under concurrent submission, against the real store, a real
threaded HTTP server and a real RQ worker.

Every seat submits its sealed order at the same moment from its own thread (a barrier
releases them together), 200 times: each time exactly one submission flips the step,
the worker resolves it once, and the history holds every seat's order as submitted.

Setup is cheap on purpose: the games are made and the steps in between played with
default orders through the domain layer; only the sealed steps that ask every seat are
hammered over HTTP, and only those are resolved by the RQ worker.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
import requests
from rq import Queue
from rq.serializers import JSONSerializer

from engine.core import registry
from engine.core.game import Request
from service.core.kontor import Kontor
from service.http.limits import EXTENSION
from service.jobs.queue import RESOLVE
from service.store.ratelimit import RateLimits
from tests.service.conftest import Player, domain_game, drive_until, open_step

# Also with the store on a Valkey Cluster and the queue on a Valkey of its own (issue 24).
pytestmark = pytest.mark.cluster

ROUNDS = 200
WAVES = 4
SEATS = 4

#: One submission: who signs it, for which phase, which order.
Submission = tuple[Player, int, dict[str, Any]]


def sealed4(ph: dict[str, Any]) -> bool:
    """A sealed step asking every seat (`drive_until` target)."""
    return bool(ph["sealed"]) and sorted(ph["requested"]) == list(range(SEATS))


def settler(kontor: Kontor, games: list[str]) -> Callable[[], None]:
    """For the steps between the hammered ones: resolve every flipped step in this thread
    with the same domain call the resolve job makes, and drop the then useless queued
    jobs (an RQ job costs more than the resolution itself; the hammered steps are
    resolved by the real worker)."""

    def settle() -> None:
        for g, ph in kontor.store.phases(games).items():
            if ph.get("status") == "resolving":
                assert kontor.resolve(g, int(ph["id"])) == "committed"
        Queue(RESOLVE, connection=kontor.rq, serializer=JSONSerializer).empty()
        kontor.rq.delete(*kontor.jobs.ready_keys)  # the emptied drain jobs' leases and steps

    return settle


def sealed_games(kontor: Kontor, n: int, seed: int = 0) -> list[tuple[str, dict[int, Player]]]:
    """`n` started 4-seat games, each with its first sealed step (`cart_bid`) open."""
    games = [domain_game(kontor, SEATS, seed=seed + i) for i in range(n)]
    gids = [g for g, _ in games]
    drive_until(kontor, settler(kontor, gids), gids, sealed4)
    for g, _ in games:
        ph = kontor.current_phase(g, "public")
        assert ph["kind"] == "cart_bid" and ph["answered"] == []
    return games


def requests_of(kontor: Kontor, gid: str) -> dict[int, Request]:
    """What the open step asks of each seat (from one snapshot, the engine's own requests)."""
    meta, _, state = kontor.store.snapshot(gid)
    return {r.seat: r for r in registry.get(meta["title"]).requests(state)}


def bid(kontor: Kontor, gid: str, seat: int, salt: int, req: Request | None = None) -> dict[str, Any]:
    """A legal cart bid that is not the default (0), different per seat and salt."""
    ch = (req or requests_of(kontor, gid)[seat]).choices
    steps = ch["max"] // ch["step"]
    assert steps >= 8
    return {"bid": ch["step"] * (1 + (seat * 3 + salt) % steps)}


def hammer(base: str, rounds: list[list[Submission]]) -> list[list[requests.Response]]:
    """Per round, one thread per submission PUTs its signed order; a barrier releases
    them together. The answers, in submission order."""
    width = len(rounds[0])
    assert all(len(r) == width for r in rounds)
    barrier = threading.Barrier(width)
    answers: list[list[Any]] = [[None] * width for _ in rounds]
    errors: list[BaseException] = []

    def run(i: int) -> None:
        http = requests.Session()
        try:
            for n, subs in enumerate(rounds):
                player, phase, order = subs[i]
                token = player.order_token(phase, order)
                url = f"{base}/games/{player.game}/phases/{phase}/orders/{player.seat}"
                barrier.wait(timeout=30)
                answers[n][i] = http.put(url, json={"token": token}, timeout=30)
        except BaseException as exc:  # surfaced in the test thread below
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(width)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    return answers


def resolutions(kontor: Kontor, gid: str, phase: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The history entries and the `step_resolved` events of one phase."""
    entries = [e for e in kontor.store.history(gid) if e["phase"] == phase]
    events = kontor.events(gid, "public", 0, 500)
    assert not events["more"]
    resolved = [e for e in events["items"] if e["type"] == "step_resolved" and e["phase"] == phase]
    return entries, resolved


def assert_resolved_once(kontor: Kontor, gid: str, phase: int, orders: dict[int, dict[str, Any]]) -> None:
    """The phase advanced by one, its history entry holds exactly `orders`, and its
    resolve job ran once (one job, one commit, one event)."""
    ph = kontor.current_phase(gid, "public")
    assert ph["id"] == phase + 1
    entries, resolved = resolutions(kontor, gid, phase)
    assert len(entries) == 1 and len(resolved) == 1
    assert entries[0]["orders"] == {str(s): o for s, o in orders.items()}
    assert entries[0]["defaults"] == [] and resolved[0]["defaults"] == [] and not resolved[0]["by_deadline"]
    # No resolve job of its own was needed (a drain job took it), none kept; no re-enqueue.
    assert not kontor.rq.exists(f"rq:job:resolve-{gid}-{phase}")
    assert not kontor.rq.exists(f"rq:job:resolve-{gid}-{phase}-r1")


def order_for(kontor: Kontor, gid: str, req: Request, salt: int) -> dict[str, Any]:
    """A legal order for the seat of `req` in the open sealed step, other than the default
    where the kind allows it (cart bids and wheel arrows)."""
    if req.kind == "cart_bid":
        return bid(kontor, gid, req.seat, salt, req)
    if req.kind == "wheel":
        options = [None, *req.choices["goods"]]
        seat = req.seat
        return {"arrows": [options[(seat + salt) % len(options)], options[(seat * 2 + salt + 1) % len(options)]]}
    state = kontor.store.state(gid)
    return dict(registry.get("haendler").default_order(state, req.seat))


def test_all_seats_submit_at_once_200_times_exactly_one_resolution(
        kontor: Kontor, worker: Any, app: Any, live_server: str) -> None:
    # 800 orders from one address within a minute: concurrency is tested here, not the
    # request limits (`limit_order_address`), which this server raises out of the way.
    app.extensions[EXTENSION] = RateLimits(replace(kontor.settings, limit_order_address="100000/minute"))
    # 50 games x their first 4 sealed steps that ask every seat (cart bids, then a wheel step).
    games = [domain_game(kontor, SEATS, seed=i) for i in range(ROUNDS // WAVES)]
    gids = [g for g, _ in games]
    settle = settler(kontor, gids)
    done = 0
    for wave in range(WAVES):
        drive_until(kontor, settle, gids, sealed4)
        rounds: list[list[Submission]] = []
        for gid, players in games:
            phase = open_step(kontor, gid)["id"]
            asked = requests_of(kontor, gid)
            assert kontor.store.answered(gid, phase) == []
            rounds.append([(players[s], phase, order_for(kontor, gid, asked[s], wave)) for s in range(SEATS)])

        answers = hammer(live_server, rounds)

        for subs, got in zip(rounds, answers, strict=True):
            assert [r.status_code for r in got] == [202] * SEATS, [r.text for r in got]
            receipts = [r.json() for r in got]
            assert sorted(x["step_status"] for x in receipts) == ["collecting"] * (SEATS - 1) + ["resolving"]
            assert not any(x["replaced"] for x in receipts)
            assert [x["order"] for x in receipts] == [o for _, _, o in subs]
            assert kontor.current_phase(subs[0][0].game, "public")["status"] == "resolving"
        worker()
        for subs in rounds:
            player, phase, _ = subs[0]
            assert_resolved_once(kontor, player.game, phase, {p.seat or 0: o for p, _, o in subs})
            done += 1
    assert done == ROUNDS


@pytest.fixture
def two_answered(kontor: Kontor) -> list[tuple[str, dict[int, Player], int, dict[int, Any]]]:
    """Games at their first sealed step where seats 1 and 2 have answered (through the
    domain layer) and seats 0 and 3 have not: id, players, phase, the stored orders."""
    out = []
    for gid, players in sealed_games(kontor, 20, seed=1000):
        phase = kontor.current_phase(gid, "public")["id"]
        orders = {s: bid(kontor, gid, s, 0) for s in (1, 2)}
        for s, order in orders.items():
            kontor.submit(gid, phase, s, order, via="test")
        out.append((gid, players, phase, orders))
    return out


def test_one_seat_racing_two_orders_in_replace_mode_keeps_the_later_one(
        kontor: Kontor, worker: Any, live_server: str, two_answered: Any) -> None:
    rounds = [[(players[0], phase, bid(kontor, gid, 0, k)) for k in (1, 2)]
              for gid, players, phase, _ in two_answered]
    answers = hammer(live_server, rounds)
    for (gid, _, phase, orders), got in zip(two_answered, answers, strict=True):
        assert [r.status_code for r in got] == [202, 202], [r.text for r in got]
        receipts = [r.json() for r in got]
        assert [x["step_status"] for x in receipts] == ["collecting", "collecting"]
        # Both were stored, one after the other: the second to land replaced the first and is what counts.
        assert sorted(x["replaced"] for x in receipts) == [False, True]
        orders[0] = next(x["order"] for x in receipts if x["replaced"])
        assert kontor.store.orders(gid, phase)[0]["order"] == orders[0]
        orders[3] = bid(kontor, gid, 3, 0)
        assert kontor.submit(gid, phase, 3, orders[3], via="test")["step_status"] == "resolving"
    worker()
    for gid, _, phase, orders in two_answered:
        assert_resolved_once(kontor, gid, phase, orders)


def test_the_last_seat_racing_two_orders_flips_once_and_the_other_is_locked_out(
        kontor: Kontor, worker: Any, live_server: str, two_answered: Any) -> None:
    for gid, _, phase, orders in two_answered:
        orders[0] = bid(kontor, gid, 0, 0)
        kontor.submit(gid, phase, 0, orders[0], via="test")
    rounds = [[(players[3], phase, bid(kontor, gid, 3, k)) for k in (1, 2)]
              for gid, players, phase, _ in two_answered]
    answers = hammer(live_server, rounds)
    for (_, _, _, orders), got in zip(two_answered, answers, strict=True):
        assert sorted(r.status_code for r in got) == [202, 409], [r.text for r in got]
        ok = next(r for r in got if r.status_code == 202).json()
        refused = next(r for r in got if r.status_code == 409)
        assert ok["step_status"] == "resolving" and not ok["replaced"]
        assert refused.headers["Content-Type"].startswith("application/problem+json")
        assert refused.json()["code"] == "step_locked"
        orders[3] = ok["order"]
    worker()
    for gid, _, phase, orders in two_answered:
        assert_resolved_once(kontor, gid, phase, orders)


def answer_all(kontor: Kontor, gid: str) -> int:
    """Every seat answers the open sealed step (domain layer); the step flips. Its id."""
    phase = int(kontor.current_phase(gid, "public")["id"])
    for s in range(SEATS):
        kontor.submit(gid, phase, s, bid(kontor, gid, s, 0), via="test")
    assert kontor.current_phase(gid, "public")["status"] == "resolving"
    return phase


def test_a_duplicate_resolve_commits_once(kontor: Kontor, worker: Any) -> None:
    (gid, _), (gid2, _) = sealed_games(kontor, 2, seed=2000)
    phase = answer_all(kontor, gid)

    # Twice in a row (a duplicate job): the first commits, the second changes nothing.
    assert kontor.resolve(gid, phase) == "committed"
    assert kontor.resolve(gid, phase) == "noop"
    # The step on the ready list again (a duplicate push, taken by a drain job), a resolve
    # job of its own (a drain job's fallback), a refused duplicate of that, and a
    # sweeper-style re-enqueue: all no-ops.
    assert kontor.jobs.resolve(gid, phase) is True
    assert kontor.jobs.resolve_job(gid, phase) is True
    assert kontor.jobs.resolve_job(gid, phase) is False
    assert kontor.jobs.resolve(gid, phase, attempt=1) is True
    worker()
    for suffix in ("", "-r1"):  # both ran (and, keeping no result, are gone)
        assert not kontor.rq.exists(f"rq:job:resolve-{gid}-{phase}{suffix}")
    entries, resolved = resolutions(kontor, gid, phase)
    assert len(entries) == 1 and len(resolved) == 1
    assert kontor.current_phase(gid, "public")["id"] == phase + 1

    # Eight resolvers at the same moment (the second game's step, its job left queued): one commit.
    phase2 = answer_all(kontor, gid2)
    barrier = threading.Barrier(8)
    outcomes: list[str] = []

    def resolve() -> None:
        k = Kontor(kontor.settings)
        barrier.wait(timeout=30)
        outcomes.append(k.resolve(gid2, phase2))

    threads = [threading.Thread(target=resolve) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(outcomes) == ["committed"] + ["noop"] * 7
    entries, resolved = resolutions(kontor, gid2, phase2)
    assert len(entries) == 1 and len(resolved) == 1
    assert kontor.current_phase(gid2, "public")["id"] == phase2 + 1
