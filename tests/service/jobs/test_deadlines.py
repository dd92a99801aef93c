"""Deadlines: a step that expires is resolved with the engine's default orders for the
seats that did not answer, by the deadline job or by the sweeper, on the store's clock;
a check that fires early changes nothing; the `extend` policy grants one extension; a
real RQ scheduler fires the deadline by itself. Steps here last 1 second (the test
settings allow it); nothing sleeps for a worker, waits poll the store's clock with a bound.
"""

from __future__ import annotations

import math
import os
import re
import signal
import subprocess
import sys
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from rq import Queue
from rq.job import Job
from rq.registry import ScheduledJobRegistry
from rq.serializers import JSONSerializer

import service.jobs.tasks
from service.core.kontor import Kontor
from service.jobs.queue import RESOLVE
from service.jobs.sweep import sweep
from tests.service.conftest import Player, default_step, domain_game, join, problem, start, wait_until

FAST = {"sealed_seconds": 1, "sequential_seconds": 1, "on_expiry": "defaults"}
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00$")


def deadline_of(kontor: Kontor, gid: str) -> float:
    return float(kontor.store.phase(gid)["deadline"])


def wait_past_deadline(kontor: Kontor, gid: str) -> None:
    """Poll the store's clock (the one deadlines are measured on) until the open step is overdue."""
    due = deadline_of(kontor, gid)
    wait_until(lambda: kontor.now() > due, timeout=10)


def resolved_event(kontor: Kontor, gid: str, phase: int) -> dict[str, Any]:
    items = [e for e in kontor.events(gid, "public", 0, 500)["items"]
             if e["type"] == "step_resolved" and e["phase"] == phase]
    assert len(items) == 1, items
    return items[0]


def history_entry(kontor: Kontor, gid: str, phase: int) -> dict[str, Any]:
    entries = [e for e in kontor.store.history(gid) if e["phase"] == phase]
    assert len(entries) == 1, entries
    return entries[0]


def defaults_of(kontor: Kontor, gid: str) -> dict[int, Any]:
    ph = kontor.current_phase(gid, "public")
    return {s: kontor.current_phase(gid, s)["you"]["default_order"] for s in ph["requested"]}


def test_an_expired_step_is_resolved_with_defaults_by_the_deadline_job_and_by_the_sweeper(
        kontor: Kontor, worker: Any) -> None:
    gid, _ = domain_game(kontor, 4, deadlines=FAST)

    # A sequential step nobody answers: the deadline job (the function RQ runs) resolves it.
    ph = kontor.current_phase(gid, "public")
    assert not ph["sealed"] and len(ph["requested"]) == 1
    defaults = defaults_of(kontor, gid)
    wait_past_deadline(kontor, gid)
    assert service.jobs.tasks.deadline(gid, ph["id"]) == "trigger"
    # The job that flipped the step resolves it too (no second job).
    assert kontor.current_phase(gid, "public")["id"] == ph["id"] + 1
    assert service.jobs.tasks.deadline(gid, ph["id"]) == "noop"  # a second check changes nothing
    worker()
    ev = resolved_event(kontor, gid, ph["id"])
    assert ev["defaults"] == ph["requested"] and ev["by_deadline"] is True
    entry = history_entry(kontor, gid, ph["id"])
    assert entry["defaults"] == ph["requested"]
    assert entry["orders"] == {str(s): o for s, o in defaults.items()}
    assert kontor.current_phase(gid, "public")["id"] == ph["id"] + 1

    # The first sealed step: two seats answer, the sweeper finds it overdue.
    for _ in range(20):
        if kontor.current_phase(gid, "public")["sealed"]:
            break
        default_step(kontor, gid)
        worker()
    ph = kontor.current_phase(gid, "public")
    assert ph["sealed"] and sorted(ph["requested"]) == [0, 1, 2, 3]
    defaults = defaults_of(kontor, gid)
    answered = {0: {"bid": 100}, 2: {"bid": 300}}
    for s, order in answered.items():
        kontor.submit(gid, ph["id"], s, order, via="test")
    wait_past_deadline(kontor, gid)
    stats = sweep(kontor)
    assert stats["deadlines"] == 1 and stats["stuck"] == 0
    worker()
    ev = resolved_event(kontor, gid, ph["id"])
    assert ev["defaults"] == [1, 3] and ev["by_deadline"] is True
    entry = history_entry(kontor, gid, ph["id"])
    assert entry["defaults"] == [1, 3]
    assert entry["orders"] == {"0": answered[0], "1": defaults[1], "2": answered[2], "3": defaults[3]}
    assert kontor.current_phase(gid, "public")["id"] == ph["id"] + 1


def test_a_deadline_check_that_fires_early_changes_nothing_and_reschedules(kontor: Kontor, worker: Any) -> None:
    gid, _ = domain_game(kontor, 4, deadlines={"sealed_seconds": 600, "sequential_seconds": 600})
    phase = kontor.current_phase(gid, "public")["id"]
    due = deadline_of(kontor, gid)
    when = math.ceil(due) + 1
    scheduled = ScheduledJobRegistry(RESOLVE, connection=kontor.rq, serializer=JSONSerializer)
    job_id = f"deadline-{gid}-{phase}-{when}"
    assert job_id in scheduled.get_job_ids()

    # The scheduled job is lost; an early check (the sweeper's or a stray job's) puts it back.
    Job.fetch(job_id, connection=kontor.rq, serializer=JSONSerializer).delete()
    assert job_id not in scheduled.get_job_ids()
    before = kontor.store.phase(gid)
    assert service.jobs.tasks.deadline(gid, phase) == "early"
    assert kontor.store.phase(gid) == before
    assert job_id in scheduled.get_job_ids()
    assert scheduled.get_scheduled_time(job_id) == datetime.fromtimestamp(when, UTC)

    # A deadline job run by RQ before its time: early, nothing changes, still scheduled.
    queue = Queue(RESOLVE, connection=kontor.rq, serializer=JSONSerializer)
    stray = queue.enqueue("service.jobs.queue.deadline", gid, phase)
    worker()
    assert stray.return_value() == "early"
    assert kontor.store.phase(gid) == before and kontor.store.answered(gid, phase) == []
    assert kontor.store.history(gid) == []

    # The scheduled job itself fired early (a scheduler whose clock runs ahead of the store's):
    # it must still leave a deadline check scheduled behind it.
    scheduled.remove(job_id)
    queue.enqueue_job(Job.fetch(job_id, connection=kontor.rq, serializer=JSONSerializer))
    worker()
    assert kontor.store.phase(gid) == before
    # (It kept no result, as no job does: its early check is the one it left behind,
    # under a new id since it still held its own while it ran.)
    assert any(j.startswith(f"{job_id}-e") for j in scheduled.get_job_ids())


def test_the_extend_policy_extends_once_then_applies_defaults(kontor: Kontor, worker: Any) -> None:
    gid, _ = domain_game(kontor, 4, deadlines={**FAST, "on_expiry": "extend", "extension_seconds": 1})
    ph = kontor.current_phase(gid, "public")
    assert ph["extended"] is False
    first = deadline_of(kontor, gid)
    defaults = defaults_of(kontor, gid)
    wait_past_deadline(kontor, gid)

    assert service.jobs.tasks.deadline(gid, ph["id"]) == "extended"
    now = kontor.current_phase(gid, "public")
    assert now["status"] == "collecting" and now["extended"] is True
    second = deadline_of(kontor, gid)
    assert second > first
    assert datetime.fromisoformat(now["deadline"]) > datetime.fromisoformat(ph["deadline"])
    scheduled = ScheduledJobRegistry(RESOLVE, connection=kontor.rq, serializer=JSONSerializer)
    assert f"deadline-{gid}-{ph['id']}-{math.ceil(second) + 1}" in scheduled.get_job_ids()
    assert service.jobs.tasks.deadline(gid, ph["id"]) == "early"  # the extension is not over yet

    wait_past_deadline(kontor, gid)
    assert service.jobs.tasks.deadline(gid, ph["id"]) == "trigger"
    worker()
    ev = resolved_event(kontor, gid, ph["id"])
    assert ev["defaults"] == ph["requested"] and ev["by_deadline"] is True
    assert history_entry(kontor, gid, ph["id"])["orders"] == {str(s): o for s, o in defaults.items()}


def test_a_real_scheduler_fires_a_deadline_by_itself(kontor: Kontor) -> None:
    gid, _ = domain_game(kontor, 2, deadlines=FAST)
    ph = kontor.current_phase(gid, "public")
    env = {**os.environ, "KONTOR_REDIS_URL": kontor.settings.redis_url}
    proc = subprocess.Popen([sys.executable, "-m", "workers"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_until(lambda: kontor.current_phase(gid, "public")["id"] > ph["id"] or proc.poll() is not None,
                   timeout=20, interval=0.1)
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    ev = resolved_event(kontor, gid, ph["id"])
    assert ev["defaults"] == ph["requested"] and ev["by_deadline"] is True
    assert kontor.current_phase(gid, "public")["id"] == ph["id"] + 1


@pytest.mark.parametrize(("deadlines", "codes"), [
    ({"sealed_seconds": 0}, {"bad_deadline_policy"}),
    ({"sequential_seconds": 0}, {"bad_deadline_policy"}),
    ({"sealed_seconds": 9 * 7 * 86400}, {"bad_deadline_policy"}),
    ({"extension_seconds": 9 * 7 * 86400, "on_expiry": "extend"}, {"bad_deadline_policy"}),
    ({"on_expiry": "x"}, {"bad_deadline_policy", "invalid_request"}),
    ({"sealed_seconds": "soon"}, {"bad_deadline_policy", "invalid_request"}),
])
def test_a_bad_deadline_policy_is_refused_and_creates_nothing(
        client: Any, kontor: Kontor, deadlines: dict[str, Any], codes: set[str]) -> None:
    body = {"title": "haendler", "seats": 2, "host_key": Player.new().key.public, "deadlines": deadlines}
    r = client.post("/games", json=body, headers={"Idempotency-Key": uuid.uuid4().hex})
    code = r.get_json()["code"]
    assert code in codes
    problem(r, 422, code)
    assert list(kontor.r.scan_iter(match=f"{kontor.settings.key_prefix}:{{g:*")) == []
    assert kontor.store.registered() == 0
    assert client.get("/games").get_json()["items"] == []


def test_api_timestamps_are_iso_8601_utc_with_offset(client: Any, kontor: Kontor) -> None:
    host = Player.new()
    r = client.post("/games", json={"title": "haendler", "seats": 2, "host_key": host.key.public,
                                    "deadlines": FAST}, headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 201, r.get_json()
    host.game = gid = r.get_json()["id"]
    players = [Player.new(), Player.new()]
    for seat, p in enumerate(players):
        join(client, gid, p, f"P{seat}", seat)
    start(client, host)
    game = client.get(f"/games/{gid}").get_json()
    ph = client.get(f"/games/{gid}/phases/current").get_json()
    seat = ph["requested"][0]
    you = client.get(f"/games/{gid}/phases/current", headers=players[seat].bearer()).get_json()["you"]
    receipt = client.put(f"/games/{gid}/phases/{ph['id']}/orders/{seat}",
                         json={"token": players[seat].order_token(ph["id"], you["default_order"])}).get_json()
    events = client.get(f"/games/{gid}/events").get_json()["items"]
    stamps = [game["created_at"], game["updated_at"], game["phase"]["opened_at"], game["phase"]["deadline"],
              ph["opened_at"], ph["deadline"], receipt["received_at"], *(p["joined_at"] for p in game["players"]),
              *(e["at"] for e in events)]
    for stamp in stamps:
        assert isinstance(stamp, str) and ISO_UTC.match(stamp), stamp
        assert datetime.fromisoformat(stamp).utcoffset().total_seconds() == 0  # type: ignore[union-attr]
    # The step lasts what the policy says, on the store's clock.
    span = datetime.fromisoformat(ph["deadline"]) - datetime.fromisoformat(ph["opened_at"])
    assert span.total_seconds() == pytest.approx(FAST["sequential_seconds"], abs=0.002)
