"""The host's pause, resume and extension of the open step's deadline (issue 25,
`service.core.hosting`): a pause stops the clock (no deadline passes, the sweeper passes
the step by, no order flips it), the resume moves the deadline on by exactly the time
paused as the store's own clock measured it, and resolves a step every seat answered
meanwhile; an extension moves the deadline and its check. Steps here last seconds (the
test settings allow it); waits poll the store's clock with a bound."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import service.jobs.tasks
from service import words
from service.core.errors import Problem
from service.core.kontor import Kontor
from service.core.timebank import pauses_of
from service.jobs.queue import deadline_id
from service.jobs.sweep import sweep
from tests.playertext import problems
from tests.service.conftest import Player, footprint, wait_until
from tests.service.jobs.test_kill import env_of
from tests.service.stall import registered


@pytest.fixture(autouse=True)
def stall() -> Iterator[Any]:
    with registered() as game:
        yield game


def micro(text: str | Decimal) -> int:
    """A time stamp as the store wrote it ('%.6f' text, or a JSON number read exactly) in
    whole microseconds: the exact arithmetic the test checks the shift with."""
    return int(Decimal(str(text)) * 1_000_000)


def stall_game(k: Kontor, seconds: int = 3) -> tuple[str, Any]:
    """A started Stall game of two seats (seat 0 asked in step 1), steps of `seconds`."""
    host = Player.new()
    gid = k.create_game("stall", 2, None, {"sealed_seconds": seconds, "sequential_seconds": seconds,
                                           "on_expiry": "defaults"}, 7, host.key.public)["id"]
    for seat in range(2):
        p = Player.new()
        k.join(gid, ("Ada", "Bo")[seat], p.key.public, seat)
    k.start(gid)
    return gid, host


def public_events(k: Kontor, gid: str) -> list[dict[str, Any]]:
    return list(k.events(gid, "public", 0, 500)["items"])


def test_pause_shifts_the_deadline_exactly_across_a_sweep_and_a_worker_kill(kontor: Kontor, worker: Any,
                                                                           tmp_path: Path) -> None:
    k = kontor
    gid, _ = stall_game(k, seconds=2)
    ph = k.store.phase(gid)
    pid, old = int(ph["id"]), ph["deadline"]
    k.pause(gid)
    paused = k.store.phase(gid)
    assert paused["paused_at"] and paused["deadline"] == old and paused["status"] == "collecting"
    assert k.game(gid)["paused_since"] == k.game(gid)["phase"]["paused_since"] is not None
    # The planned check is taken back; none is planned while paused.
    assert k.jobs.missing([deadline_id(gid, pid, float(old))])

    # The old deadline passes while paused: the sweep and the deadline check do nothing.
    wait_until(lambda: k.now() > float(old) + 0.5, timeout=10)
    stats = sweep(k)
    assert (stats["deadlines"], stats["paused"], stats["replanned"]) == (0, 1, 0), stats
    assert service.jobs.tasks.deadline(gid, pid) == "paused"
    assert k.store.expire(gid, pid, "defaults", 0).status == "paused"  # expire.lua on its own too
    assert k.store.phase(gid)["status"] == "collecting"
    assert k.jobs.missing([deadline_id(gid, pid, float(old))])

    # A worker runs through the pause and is killed mid-way (SIGKILL, as a power cut):
    # nothing resolved meanwhile, nothing is left half-done.
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "workers"], env=env_of(k.settings, "after_commit"),
                                stdout=out, stderr=subprocess.STDOUT)
        try:
            time.sleep(2.5)
            assert proc.poll() is None, log.read_text()  # it never reached a commit
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    assert k.store.phase(gid)["status"] == "collecting" and len(k.store.history(gid)) == 0
    assert sweep(k)["deadlines"] == 0

    k.resume(gid)
    after = k.store.phase(gid)
    assert not after["paused_at"]
    [[start, end]] = json.loads(after["pauses"], parse_float=Decimal)
    assert micro(start) == micro(paused["paused_at"])
    # Exactly the span paused, to the microsecond, as the store's clock measured it.
    assert micro(after["deadline"]) == micro(old) + (micro(end) - micro(start))
    assert micro(end) - micro(start) > 3_000_000
    assert sum(b - a for a, b in pauses_of(after)[0]) == pytest.approx(float(end - start))
    assert not k.jobs.missing([deadline_id(gid, pid, float(after["deadline"]))]), "the moved check is planned"

    # Before the shifted deadline the check is early; after it, the step resolves by defaults.
    assert service.jobs.tasks.deadline(gid, pid) == "early"
    assert k.store.phase(gid)["status"] == "collecting"
    wait_until(lambda: k.now() > float(after["deadline"]), timeout=10)
    assert sweep(k)["deadlines"] == 1
    worker()
    flipped = [e for e in public_events(k, gid) if e["type"] == "step_resolved"]
    assert len(flipped) == 1 and flipped[0]["defaults"] == [0] and flipped[0]["by_deadline"] is True
    [entry] = k.store.history(gid)
    assert entry["defaults"] == [0]
    assert k.store.phase(gid)["id"] == str(pid + 1)
    types = [e["type"] for e in public_events(k, gid)]
    assert types.index("game_paused") < types.index("game_resumed") < types.index("step_resolved")


def test_pause_keeps_the_last_order_unresolved_and_resume_resolves_it(kontor: Kontor, worker: Any) -> None:
    k = kontor
    gid, _ = stall_game(k, seconds=600)
    k.pause(gid)
    receipt = k.submit(gid, 1, 0, {"buy": "wein", "count": 1}, via="test")
    assert receipt["step_status"] == "collecting"
    ph = k.store.phase(gid)
    assert ph["status"] == "collecting" and k.store.answered(gid, 1) == [0]
    worker()
    assert k.store.phase(gid)["id"] == "1"
    # A second order replaces the first, as usual, and still does not flip the step.
    assert k.submit(gid, 1, 0, {"buy": "wein", "count": 2}, via="test")["replaced"] is True
    assert k.store.phase(gid)["status"] == "collecting"
    k.resume(gid)
    assert k.store.phase(gid)["status"] == "resolving"
    worker()
    assert k.store.phase(gid)["id"] == "2"
    [entry] = k.store.history(gid)
    assert entry["orders"] == {"0": {"buy": "wein", "count": 2}} and entry["defaults"] == []


def test_pause_refuses_an_action_and_changes_nothing(kontor: Kontor) -> None:
    k = kontor
    gid, _ = stall_game(k, seconds=600)
    k.pause(gid)
    before = footprint(k, gid)
    with pytest.raises(Problem) as err:
        k.act(gid, 1, {"hoard": "wein"}, via="test")
    assert err.value.code == "game_paused" and err.value.status == 409
    assert footprint(k, gid) == before
    # Once resumed, the same action is taken.
    k.resume(gid)
    assert k.act(gid, 1, {"hoard": "wein"}, via="test")["accepted"] is True


def test_pause_twice_and_resume_unpaused_are_refused(kontor: Kontor) -> None:
    k = kontor
    host = Player.new()
    lobby = k.create_game("stall", 2, None, None, 7, host.key.public)["id"]
    for call in (k.pause, k.resume, lambda g: k.extend(g, 60)):
        with pytest.raises(Problem) as err:
            call(lobby)
        assert err.value.code == "game_not_started"
    gid, _ = stall_game(k, seconds=600)
    with pytest.raises(Problem) as err:
        k.resume(gid)
    assert err.value.code == "game_not_paused"
    k.pause(gid)
    before = footprint(k, gid)
    with pytest.raises(Problem) as err:
        k.pause(gid)
    assert err.value.code == "game_paused" and err.value.extra["paused_since"]
    assert footprint(k, gid) == before
    with pytest.raises(Problem) as err:
        k.pause("0000000000")
    assert err.value.code == "game_not_found"


def test_pause_refused_while_the_step_resolves(kontor: Kontor) -> None:
    k = kontor
    gid, _ = stall_game(k, seconds=600)
    k.submit(gid, 1, 0, {"pass": True}, via="test")  # the last order: the step flips, no worker runs
    assert k.store.phase(gid)["status"] == "resolving"
    with pytest.raises(Problem) as err:
        k.pause(gid)
    assert err.value.code == "step_locked"
    assert not k.store.phase(gid).get("paused_at")


def test_extend_moves_the_deadline_and_its_check(kontor: Kontor) -> None:
    k = kontor
    gid, _ = stall_game(k, seconds=600)
    old = k.store.phase(gid)["deadline"]
    game = k.extend(gid, 3600)
    new = k.store.phase(gid)["deadline"]
    assert micro(new) == micro(old) + 3600 * 1_000_000
    assert game["phase"]["deadline"] is not None and game["phase"]["paused_since"] is None
    assert not k.jobs.missing([deadline_id(gid, 1, float(new))])
    assert k.jobs.missing([deadline_id(gid, 1, float(old))]), "the old check is taken back"
    [ev] = [e for e in public_events(k, gid) if e["type"] == "deadline_extended"]
    assert (ev["seconds"], ev["paused"]) == (3600, False)
    # Out of bounds, or not a whole number: refused, nothing changed.
    before = footprint(k, gid)
    for bad in (k.settings.min_step_seconds - 1, -60, k.settings.max_step_seconds + 1, 60.0, "60", True, None):
        with pytest.raises(Problem) as err:
            k.extend(gid, bad)
        assert err.value.code == "bad_extension", bad
    assert footprint(k, gid) == before


def test_extend_while_paused_moves_the_deadline_again_on_resume(kontor: Kontor) -> None:
    k = kontor
    gid, _ = stall_game(k, seconds=600)
    old = k.store.phase(gid)["deadline"]
    k.pause(gid)
    k.extend(gid, 86400)
    mid = k.store.phase(gid)
    assert micro(mid["deadline"]) == micro(old) + 86400 * 1_000_000 and mid["paused_at"]
    assert k.jobs.missing([deadline_id(gid, 1, float(mid["deadline"]))]), "no check while paused"
    k.resume(gid)
    after = k.store.phase(gid)
    [[start, end]] = json.loads(after["pauses"], parse_float=Decimal)
    assert micro(after["deadline"]) == micro(mid["deadline"]) + micro(end) - micro(start)
    assert not k.jobs.missing([deadline_id(gid, 1, float(after["deadline"]))])


def test_pause_resume_and_extend_are_told_in_words(kontor: Kontor) -> None:
    k = kontor
    gid, _ = stall_game(k, seconds=600)
    k.pause(gid)
    k.extend(gid, 2 * 86400 + 3 * 3600)
    k.resume(gid)
    names = k.names(gid, k.store.meta(gid))
    said = {e["type"]: words.describe(None, e, names) for e in public_events(k, gid)}
    assert said["game_paused"].startswith("The host paused the game; the clock is stopped")
    assert said["deadline_extended"].startswith("The host extended the deadline by 2 days 3 hours")
    assert said["game_resumed"].startswith("The host resumed the game after ")
    assert "the deadline moved to " in said["game_resumed"]
    for kind in ("game_paused", "deadline_extended", "game_resumed"):
        assert not problems(said[kind]), said[kind]
