"""Fewer, cheaper jobs: a resolved step is planned and told by the one job that resolved
it, its webhooks go out together, and what no longer matters leaves the store at once
(the closed step's deadline job and one-time token ids, every job's result).

Counting jobs uses a real RQ worker in burst mode; nothing asserts a timing.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from typing import Any

import pytest
import redis
from rq import Queue
from rq.job import Job
from rq.registry import ScheduledJobRegistry
from rq.serializers import JSONSerializer

import service.jobs.tasks
from service.channels.contacts import set_contact
from service.channels.notify import Notifier
from service.config import Settings
from service.core.errors import Problem
from service.core.kontor import Kontor
from service.jobs.queue import QUEUES, RESOLVE, deadline_id
from tests.service.channels import Hooks, payloads
from tests.service.conftest import BurstWorker, Player, default_step, domain_game, process_env, raw_store

# Also with the store on a Valkey Cluster and the queue on a Valkey of its own (issue 24).
pytestmark = pytest.mark.cluster

SLOW = {"sealed_seconds": 3600, "sequential_seconds": 3600}


class Counting(BurstWorker):
    """A burst worker that counts the jobs it runs."""

    ran = 0

    def execute_job(self, job: Job, queue: Queue) -> Any:
        self.ran += 1
        return super().execute_job(job, queue)


def run_jobs(settings: Settings) -> int:
    """Run every queued job with a real burst worker; how many jobs it ran."""
    conn = redis.Redis.from_url(settings.queue)
    queues = [Queue(q, connection=conn, serializer=JSONSerializer) for q in QUEUES]
    worker = Counting(queues, connection=conn, serializer=JSONSerializer)
    worker.work(burst=True, logging_level="WARNING")
    return worker.ran


def hooked_game(k: Kontor, hooks: Hooks, seats: int) -> str:
    """A started game, every seat a player with a webhook (its start not told yet)."""
    host = Player.new()
    gid = k.create_game("haendler", seats, None, SLOW, 7, host.key.public)["id"]
    for seat in range(seats):
        k.join(gid, f"P{seat}", Player.new().key.public, seat)
        out = set_contact(k, gid, seat, {"webhook_url": hooks.url(f"/s{seat}")})
        hooks.secrets[f"/s{seat}"] = out["webhook_secret"]
    k.start(gid)
    return gid


def test_a_resolved_step_is_resolved_planned_and_told_in_one_job(nkontor: Kontor, notify_settings: Settings,
                                                                  hooks: Hooks) -> None:
    k = nkontor
    gid = hooked_game(k, hooks, 4)
    run_jobs(notify_settings)
    before = {seat: len(hooks.at(f"/s{seat}")) for seat in range(4)}
    phase = int(k.store.phase(gid)["id"])

    default_step(k, gid)  # the last order flips the step: one resolve job waits
    assert run_jobs(notify_settings) == 1
    assert int(k.store.phase(gid)["id"]) == phase + 1
    assert k.store.notified_through(gid) == int(k.store.meta(gid)["event_seq"])
    for seat in range(4):  # each seat got its step.resolved, then its step.opened, verified
        got = hooks.at(f"/s{seat}")[before[seat]:]
        assert all(h.verified for h in got)
        assert [(p["type"], p["data"]["phase"]) for p in payloads(got)] == [("step.resolved", phase),
                                                                               ("step.opened", phase + 1)]
        assert len({h.headers["webhook-id"] for h in got}) == 2
    records = [d for seat in range(4) for d in k.store.deliveries(gid, seat, 100)]
    assert records and all(d["status"] == "sent" and d["attempts"] == 1 for d in records)
    assert not any(k.rq.keys("rq:results:*")) and not k.rq.keys("rq:job:resolve-*")  # no result kept


def test_a_failed_webhook_of_a_batch_retries_on_its_own(nkontor: Kontor, notify_settings: Settings,
                                                        hooks: Hooks) -> None:
    k = nkontor
    # The retry waits 3 s, not the fixture's 0.1 s: RQ schedules in whole seconds, and a
    # burst worker slowed by a loaded machine ran a retry due that soon in the same burst
    # (then nothing was left "retrying" to look at).
    notify_settings = replace(notify_settings, webhook_schedule="0,3,0.2,0.3")
    service.jobs.tasks.configure(notify_settings)
    gid = hooked_game(k, hooks, 2)
    run_jobs(notify_settings)
    hooks.answers["/s1"] = [500]
    default_step(k, gid)
    run_jobs(notify_settings)
    mine = {seat: [d for d in k.store.deliveries(gid, seat, 100) if d["attempts"]] for seat in (0, 1)}
    assert all(d["status"] == "sent" for d in mine[0])
    retrying = [d for d in mine[1] if d["status"] == "retrying"]
    assert len(retrying) == 1 and retrying[0]["last_status"] == 500
    retry_job = f"webhook-{retrying[0]['id']}-2"
    assert Queue("notify", connection=k.rq, serializer=JSONSerializer).scheduled_job_registry.get_job_ids() == [
        retry_job]
    time.sleep(3.3)
    from tests.service.channels import work_all
    work_all(notify_settings)
    again = k.store.delivery(gid, retrying[0]["id"])
    assert again is not None and again["status"] == "sent" and again["attempts"] == 2
    ids = [h.headers["webhook-id"] for h in hooks.at("/s1")]
    assert ids.count(retrying[0]["id"]) == 2  # the same webhook-id on the retry


def test_a_resolved_steps_deadline_check_is_taken_back(kontor: Kontor, worker: Any) -> None:
    gid, _ = domain_game(kontor, 3, deadlines=SLOW)
    scheduled = ScheduledJobRegistry(RESOLVE, connection=kontor.rq, serializer=JSONSerializer)
    for _ in range(4):
        ph = kontor.store.phase(gid)
        assert scheduled.get_job_ids() == [deadline_id(gid, int(ph["id"]), float(ph["deadline"]))]
        default_step(kontor, gid)
        worker()
    # The checks of the four closed steps are gone, with their job hashes; one waits.
    assert len(scheduled.get_job_ids()) == 1
    assert len(kontor.rq.keys(f"rq:job:deadline-{gid}-*")) == 1


def test_a_deadline_check_enqueued_already_keeps_its_job_when_its_step_closes(kontor: Kontor) -> None:
    """`cancel_deadline` takes back only a check still scheduled: one enqueued or running
    (the very check whose defaults resolved the step) keeps its job hash, which RQ reads
    while it runs (deleting it made RQ log `InvalidJobOperation` for every such check)."""
    gid, _ = domain_game(kontor, 2, deadlines=SLOW)
    ph = kontor.store.phase(gid)
    step, at = int(ph["id"]), float(ph["deadline"])
    job_id = deadline_id(gid, step, at)
    scheduled = ScheduledJobRegistry(RESOLVE, connection=kontor.rq, serializer=JSONSerializer)
    scheduled.remove(job_id)  # as the scheduler does when the check falls due: it is enqueued
    kontor.jobs.cancel_deadline(gid, step, at)
    assert kontor.rq.exists(f"rq:job:{job_id}") == 1
    kontor.jobs.deadline(gid, step + 1, at + 60)  # a check still scheduled goes, with its hash
    later = deadline_id(gid, step + 1, at + 60)
    kontor.jobs.cancel_deadline(gid, step + 1, at + 60)
    assert later not in scheduled.get_job_ids() and kontor.rq.exists(f"rq:job:{later}") == 0


def test_a_closed_steps_one_time_ids_are_dropped_and_a_replay_is_refused_while_open(kontor: Kontor,
                                                                                     worker: Any) -> None:
    gid, _ = domain_game(kontor, 2, deadlines=SLOW)
    ph = kontor.store.phase(gid)
    phase, seat = int(ph["id"]), json.loads(ph["expected"])[0]
    meta, _, state = kontor.store.snapshot(gid)
    from engine.core import registry
    order = registry.get(meta["title"]).default_order(state, seat)
    ttl = kontor.settings.order_max_age + kontor.settings.clock_skew
    kontor.submit(gid, phase, seat, order, via="http", jti="a" * 32, token="t")
    key = kontor.store.key(gid, "jti", phase)
    assert raw_store(kontor).smembers(key) == {b"a" * 32} and 0 < raw_store(kontor).ttl(key) <= ttl
    if kontor.store.phase(gid)["status"] == "collecting":  # a replay of the same token while open
        with pytest.raises(Problem) as exc:
            kontor.submit(gid, phase, seat, order, via="http", jti="a" * 32, token="t")
        assert exc.value.code == "token_replayed"
    default_step(kontor, gid)
    worker()
    assert int(kontor.store.phase(gid)["id"]) > phase
    assert not raw_store(kontor).exists(key)  # the step is closed: no token of it can be accepted again


def test_one_job_at_a_time_makes_a_games_notices(nkontor: Kontor, notify_settings: Settings,
                                                 hooks: Hooks) -> None:
    """A second job that finds a game's notices being made leaves them to the holder,
    which looks again once it lets go: nothing is sent twice, nothing left behind."""
    k = nkontor
    gid = hooked_game(k, hooks, 2)
    seq = int(k.store.meta(gid)["event_seq"])
    assert k.store.lock_notices(gid, "other", 30)
    assert Notifier(k).catch_up(gid, seq) == 0  # held by another job: left to it
    assert k.store.notified_through(gid) < seq and not hooks.received
    assert k.store.unlock_notices(gid, "other") == (seq, k.store.notified_through(gid))
    default_step(k, gid)  # more events come in meanwhile
    worker_ran = run_jobs(notify_settings)
    assert worker_ran >= 1
    seq = int(k.store.meta(gid)["event_seq"])
    assert k.store.notified_through(gid) == seq
    ids = [h.headers["webhook-id"] for h in hooks.received]
    assert len(ids) == len(set(ids)) and len(ids) == 2 * 3  # start, then resolved + opened, per seat
    assert not raw_store(k).exists(k.store.key(gid, "notifying"))


def test_workers_count_runs_that_many_workers_and_one_scheduler(settings: Settings) -> None:
    env = process_env(settings)
    # its own process group: a failing assertion must not leave the two workers running
    # (orphans that would go on taking jobs from later tests' stores on the same port)
    proc = subprocess.Popen([sys.executable, "-m", "workers", "--count", "2"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    r = redis.Redis.from_url(settings.queue, decode_responses=True)  # RQ's keys: the queue
    try:
        end = time.monotonic() + 60
        while time.monotonic() < end and not (r.scard("rq:workers") == 2 and r.exists(*(
                f"rq:scheduler-lock:{q}" for q in QUEUES)) == len(QUEUES)):
            time.sleep(0.2)
        names = r.smembers("rq:workers")
        assert len(names) == 2
        pids = {int(r.hget(name, "pid") or 0) for name in names}
        assert len(pids) == 2 and proc.pid not in pids  # two child processes
        holders = {r.get(f"rq:scheduler-lock:{q}") for q in QUEUES}
        # every queue has its scheduler, run by one of the two (RQ's lock per queue: two
        # workers starting together may each take some queues' locks)
        assert None not in holders and 1 <= len(holders) <= len(names)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0  # once both workers ended
        for pid in pids:
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

