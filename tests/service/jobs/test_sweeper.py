"""Recovery by the sweeper: a resolve job killed with its worker, a lost bot job, and a
step flipped to `resolving` whose job was never enqueued are all picked up again once
they are `stuck_after` old (2 s in the test settings), and resolved exactly once.
Real worker processes are started and killed; waits poll with a bound.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from dataclasses import replace
from typing import Any

import pytest
from rq import Queue
from rq.job import Job
from rq.registry import ScheduledJobRegistry, StartedJobRegistry
from rq.serializers import JSONSerializer

from service.channels.contacts import set_contact
from service.core.kontor import Kontor
from service.jobs.queue import NOTIFY, RESOLVE, deadline_id
from service.jobs.sweep import replan, sweep
from tests.service.conftest import default_step, domain_game, process_env, wait_until

# Also with the store on a Valkey Cluster and the queue on a Valkey of its own (issue 24).
pytestmark = pytest.mark.cluster

#: A worker like `python -m workers` whose resolutions hang for 30 s (so it can be killed mid-job).
SLOW_WORKER = textwrap.dedent("""
    import time
    import service.core.kontor
    original = service.core.kontor.Kontor.resolve
    def slow(self, gid, phase):
        time.sleep(30)
        return original(self, gid, phase)
    service.core.kontor.Kontor.resolve = slow
    from workers.__main__ import main
    main(["--burst"])
""")


def env(kontor: Kontor, **extra: str) -> dict[str, str]:
    return process_env(kontor.settings, **extra)


def job(kontor: Kontor, job_id: str) -> Job | None:
    if not kontor.rq.exists(f"rq:job:{job_id}"):
        return None
    return Job.fetch(job_id, connection=kontor.rq, serializer=JSONSerializer)


def stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> int:
    proc.send_signal(sig)
    try:
        return proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise


def wait_stuck(kontor: Kontor, gid: str, field: str) -> None:
    """Poll the store's clock until the open step's `field` time stamp is `stuck_after` old."""
    since = float(kontor.store.phase(gid)[field])
    wait_until(lambda: kontor.now() - since > kontor.settings.stuck_after, timeout=10)


def flip_without_job(kontor: Kontor, gid: str) -> tuple[int, int, dict[str, Any]]:
    """The last order stored and the step flipped, but no resolve job enqueued (a crash
    between the flip and the enqueue): the store's submit, without `Kontor.submit`."""
    ph = kontor.current_phase(gid, "public")
    (seat,) = ph["requested"]
    order = kontor.current_phase(gid, seat)["you"]["default_order"]
    record = {"order": order, "via": "test", "at": f"{kontor.now():.6f}", "jti": None, "token": None}
    assert kontor.store.submit(gid, ph["id"], seat, record, None, 0).status == "trigger"
    return ph["id"], seat, order


def assert_resolved_once(kontor: Kontor, gid: str, phase: int) -> dict[str, Any]:
    assert kontor.current_phase(gid, "public")["id"] == phase + 1
    entries = [e for e in kontor.store.history(gid) if e["phase"] == phase]
    events = [e for e in kontor.events(gid, "public", 0, 500)["items"]
              if e["type"] == "step_resolved" and e["phase"] == phase]
    assert len(entries) == 1 and len(events) == 1
    return entries[0]


def test_a_killed_resolve_job_is_recovered_by_the_sweeper(kontor: Kontor, worker: Any) -> None:
    """The drain job that took the step off the ready list dies mid-resolution."""
    gid, _ = domain_game(kontor, 2)
    ph = kontor.current_phase(gid, "public")
    (seat,) = ph["requested"]
    order = kontor.current_phase(gid, seat)["you"]["default_order"]
    assert kontor.submit(gid, ph["id"], seat, order, via="test")["step_status"] == "resolving"
    first = f"resolve-{gid}-{ph['id']}"  # the sweep's re-enqueue is `<first>-r1`

    proc = subprocess.Popen([sys.executable, "-c", SLOW_WORKER], env=env(kontor),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        started = StartedJobRegistry(RESOLVE, connection=kontor.rq, serializer=JSONSerializer)
        wait_until(lambda: any(j.startswith("drain-") for j in started.get_job_ids()) or proc.poll() is not None,
                   timeout=20)
        assert proc.poll() is None
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)

    # The worker died mid-job: nothing committed, the step stays `resolving`.
    assert kontor.current_phase(gid, "public")["status"] == "resolving"
    assert kontor.store.history(gid) == []
    worker()  # a live worker does not pick up a job another worker had started
    assert kontor.current_phase(gid, "public")["status"] == "resolving"

    wait_stuck(kontor, gid, "flipped_at")
    assert sweep(kontor)["stuck"] == 1
    assert sweep(kontor)["stuck"] == 0  # not again before another stuck_after
    again = job(kontor, f"{first}-r1")
    assert again is not None and again.get_status() == "queued"
    worker()
    assert job(kontor, f"{first}-r1") is None  # done (no job keeps a result)
    assert assert_resolved_once(kontor, gid, ph["id"])["orders"] == {str(seat): order}
    assert sweep(kontor)["stuck"] == 0


def test_a_lost_bot_job_is_enqueued_again_by_the_sweeper(kontor: Kontor, worker: Any) -> None:
    gid, _ = domain_game(kontor, 2, bots={0: "random"}, options={"start_player": 0})
    ph = kontor.current_phase(gid, "public")
    assert ph["requested"] == [0]
    lost = job(kontor, f"bot-{gid}-{ph['id']}-0")
    assert lost is not None
    lost.delete()
    worker()
    assert kontor.current_phase(gid, "public")["answered"] == []

    wait_stuck(kontor, gid, "opened_at")
    assert sweep(kontor)["bots"] == 1
    worker()
    entry = assert_resolved_once(kontor, gid, ph["id"])
    assert list(entry["orders"]) == ["0"] and entry["defaults"] == []
    assert kontor.current_phase(gid, "public")["requested"] == [1]  # the human seat's turn: the bot is done


def test_a_step_flipped_without_a_job_is_recovered(kontor: Kontor, worker: Any) -> None:
    gid, _ = domain_game(kontor, 2)
    phase, seat, order = flip_without_job(kontor, gid)
    assert job(kontor, f"resolve-{gid}-{phase}") is None
    worker()
    assert kontor.current_phase(gid, "public")["status"] == "resolving"

    wait_stuck(kontor, gid, "flipped_at")
    assert sweep(kontor)["stuck"] == 1
    worker()
    entry = assert_resolved_once(kontor, gid, phase)
    assert entry["orders"] == {str(seat): order} and entry["defaults"] == []


def test_the_sweeper_process_recovers_a_step_and_stops_cleanly_on_sigterm(kontor: Kontor, worker: Any) -> None:
    gid, _ = domain_game(kontor, 2)
    phase, _, _ = flip_without_job(kontor, gid)
    proc = subprocess.Popen([sys.executable, "-m", "workers.sweeper"],
                            env=env(kontor, KONTOR_SWEEP_INTERVAL="0.2", KONTOR_STUCK_AFTER="1"),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: job(kontor, f"resolve-{gid}-{phase}-r1") or proc.poll() is not None, timeout=20)
        assert proc.poll() is None
    finally:
        code = stop(proc)
    out = proc.stdout.read().decode() if proc.stdout else ""
    assert code == 0, out
    assert "Traceback" not in out, out
    worker()
    assert_resolved_once(kontor, gid, phase)


def test_a_step_whose_trigger_was_lost_is_put_back_after_a_lease_not_after_stuck_after(
        settings: Any, worker: Any) -> None:
    """The web that flipped a step to `resolving` died before it pushed the step on the
    ready list (seen in the crash test: the game waited `stuck_after`, then behind a long
    drain job for its own job): the sweep finds a resolving step that is on no list and
    held by nobody once it is `resolve_lease` old, and puts it on the ready list, where a
    running drainer takes it. Once: it counts as the first re-enqueue, so a step that
    keeps failing still ends in `stuck_after`'s bounded attempts. A step waiting on the
    list, or held by a job resolving it, is left alone."""
    from dataclasses import replace

    kontor = Kontor(replace(settings, resolve_lease=0.3, stuck_after=600))
    gid, _ = domain_game(kontor, 2)
    phase, seat, order = flip_without_job(kontor, gid)
    assert kontor.jobs.orphaned(gid, phase)
    since = float(kontor.store.phase(gid)["flipped_at"])
    wait_until(lambda: kontor.now() - since > 0.3, timeout=10)
    stats = sweep(kontor)
    assert (stats["orphans"], stats["stuck"]) == (1, 0)
    assert not kontor.jobs.orphaned(gid, phase)  # on the ready list now
    assert sweep(kontor)["orphans"] == 0
    worker()
    entry = assert_resolved_once(kontor, gid, phase)
    assert entry["orders"] == {str(seat): order}

    # a step whose trigger is on the list (no worker ran yet), or that a job holds while
    # it resolves it, is not an orphan
    other, _ = domain_game(kontor, 2)
    ph = kontor.current_phase(other, "public")
    (seat,) = ph["requested"]
    kontor.submit(other, ph["id"], seat, kontor.current_phase(other, seat)["you"]["default_order"], via="test")
    assert kontor.current_phase(other, "public")["status"] == "resolving"
    since = float(kontor.store.phase(other)["flipped_at"])
    wait_until(lambda: kontor.now() - since > 0.3, timeout=10)
    assert not kontor.jobs.orphaned(other, ph["id"])
    assert sweep(kontor)["orphans"] == 0
    kontor.rq.delete(kontor.jobs.ready_keys[0])  # as if a drainer had popped it: held now
    with kontor.jobs.holding(other, ph["id"]):
        assert not kontor.jobs.orphaned(other, ph["id"])
        assert sweep(kontor)["orphans"] == 0
    assert kontor.jobs.orphaned(other, ph["id"])  # the hold given back, nothing resolved it


def test_the_next_sweep_waits_the_interval_or_a_multiple_of_a_long_sweep() -> None:
    """A short sweep: the next begins `sweep_interval` after it began. A sweep over very
    many games that took t seconds: the next waits `sweep_rest` × t after it ended, so
    the sweeper keeps to 1 / (1 + rest) of a core; `sweep_rest` 0: the interval alone."""
    from service.config import Settings
    from workers.sweeper import next_sweep

    s = Settings(sweep_interval=5.0, sweep_rest=3.0)
    assert next_sweep(s, 100.0, 100.2) == 105.0
    assert next_sweep(s, 100.0, 102.0) == 108.0  # 2 s of sweep, then 6 s of rest
    assert next_sweep(Settings(sweep_interval=5.0, sweep_rest=0.0), 100.0, 108.0) == 108.0


def notify_jobs(kontor: Kontor, gid: str) -> list[str]:
    return [j for j in Queue(NOTIFY, connection=kontor.rq, serializer=JSONSerializer).get_job_ids()
            if j.startswith(f"notify-{gid}-")]


def test_a_gap_in_the_notices_younger_than_the_grace_is_left_to_its_commit(kontor: Kontor, worker: Any) -> None:
    """A commit's notices are made by its own work within milliseconds: the sweep leaves a
    gap younger than `effects_grace` alone (before, every sweep enqueued a notify job for
    every game whose notices were under way, each doing nothing), and enqueues one for a
    gap as old as the grace."""
    gid, _ = domain_game(kontor, 2, deadlines={"sealed_seconds": 3600, "sequential_seconds": 3600})
    set_contact(Kontor(replace(kontor.settings, webhook_allow_loopback=True)), gid, 0,
                {"webhook_url": "http://127.0.0.1:9/hook"})
    worker()
    # The mark behind the events, as while a commit's notices are being made.
    kontor.r.hset(kontor.store.key(gid, "meta"), "notified_through", "0")
    meta = kontor.store.meta(gid)
    patient = Kontor(replace(kontor.settings, effects_grace=3600))
    assert sweep(patient)["notices"] == 0
    assert notify_jobs(kontor, gid) == []
    assert sweep(Kontor(replace(kontor.settings, effects_grace=0)))["notices"] == 1
    assert notify_jobs(kontor, gid) == [f"notify-{gid}-{meta['event_seq']}"]


def test_a_sweep_plans_no_deadline_check_for_a_step_that_closed_after_it_read_it(kontor: Kontor,
                                                                                 worker: Any) -> None:
    """A sweep reads the open steps, then asks RQ for their jobs: a step that closed in
    between had its check taken back by its commit. That check is missing but not lost,
    and is not planned again (before, every sweep of fast games left such checks
    scheduled, each until its deadline a day later)."""
    gid, _ = domain_game(kontor, 2, deadlines={"sealed_seconds": 3600, "sequential_seconds": 3600})
    read = kontor.store.phase(gid)  # as the sweep read it
    stale = deadline_id(gid, int(read["id"]), float(read["deadline"]))
    default_step(kontor, gid)
    worker()  # the step closes: its check is taken back, the next step's scheduled
    assert kontor.store.phase(gid)["id"] != read["id"] and kontor.jobs.missing([stale]) == {stale}
    assert replan(kontor, {gid: read}, kontor.now()) == 0
    assert kontor.jobs.missing([stale]) == {stale}
    now = kontor.store.phase(gid)
    scheduled = ScheduledJobRegistry(RESOLVE, connection=kontor.rq, serializer=JSONSerializer)
    assert scheduled.get_job_ids() == [deadline_id(gid, int(now["id"]), float(now["deadline"]))]


def test_a_deadline_check_planned_as_its_step_closes_is_taken_back(kontor: Kontor, worker: Any,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The step closes after the sweep found it still open and before its check is
    planned (the commit had nothing to take back): the sweep takes its own check back."""
    gid, _ = domain_game(kontor, 2, deadlines={"sealed_seconds": 3600, "sequential_seconds": 3600})
    read = kontor.store.phase(gid)
    stale = deadline_id(gid, int(read["id"]), float(read["deadline"]))
    kontor.jobs.cancel_deadline(gid, int(read["id"]), float(read["deadline"]))  # lost (a process died)
    plan = kontor.jobs.deadline

    def closing_first(game: str, phase: int, at: float, cancel: Any = None) -> bool:
        default_step(kontor, gid)
        worker()  # the step closes between the sweep's second read and its plan
        return plan(game, phase, at, cancel)

    monkeypatch.setattr(kontor.jobs, "deadline", closing_first)
    assert replan(kontor, {gid: read}, kontor.now()) == 0
    assert kontor.jobs.missing([stale]) == {stale}
    scheduled = ScheduledJobRegistry(RESOLVE, connection=kontor.rq, serializer=JSONSerializer).get_job_ids()
    assert stale not in scheduled and len(scheduled) == 1


def test_a_lost_deadline_check_is_planned_again_once_its_step_is_as_old_as_the_grace(kontor: Kontor) -> None:
    """A step opened less than `effects_grace` ago is left to its commit, whose hand-on of
    the check follows it; once as old as the grace, its lost check is planned again."""
    gid, _ = domain_game(kontor, 2, deadlines={"sealed_seconds": 3600, "sequential_seconds": 3600})
    read = kontor.store.phase(gid)
    job_id = deadline_id(gid, int(read["id"]), float(read["deadline"]))
    kontor.jobs.cancel_deadline(gid, int(read["id"]), float(read["deadline"]))  # lost (a process died)
    assert replan(Kontor(replace(kontor.settings, effects_grace=3600)), {gid: read}, kontor.now()) == 0
    assert kontor.jobs.missing([job_id]) == {job_id}
    assert replan(kontor, {gid: read}, kontor.now()) == 1
    assert not kontor.jobs.missing([job_id])
