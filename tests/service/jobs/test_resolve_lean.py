"""A resolved step's store and queue work, lean (issue 26): one read (resolve_read.lua),
one commit script that also answers the seats as they were at the commit, and one
command that takes back the closed step's deadline check while it schedules the next
step's. What each of these must keep doing is pinned here; nothing asserts a timing.
"""

from __future__ import annotations

from typing import Any

import pytest
from redis.cluster import RedisCluster
from rq import Queue
from rq.job import Job, JobStatus
from rq.registry import ScheduledJobRegistry
from rq.serializers import JSONSerializer

from engine.core import registry
from service.core.kontor import Kontor
from service.jobs.queue import RESOLVE, deadline_id
from tests.service.conftest import default_step, domain_game

# Also with the store on a Valkey Cluster and the queue on a Valkey of its own (issue 24).
pytestmark = pytest.mark.cluster

SLOW = {"sealed_seconds": 3600, "sequential_seconds": 3600}


def _scheduled(k: Kontor) -> ScheduledJobRegistry:
    return ScheduledJobRegistry(RESOLVE, connection=k.rq, serializer=JSONSerializer)


def _open(k: Kontor, gid: str) -> tuple[int, float]:
    ph = k.store.phase(gid)
    return int(ph["id"]), float(ph["deadline"])


def test_resolve_read_answers_the_steps_orders_with_meta_phase_and_state(kontor: Kontor) -> None:
    gid, _ = domain_game(kontor, 3, deadlines=SLOW)
    step, _ = _open(kontor, gid)
    kontor.submit(gid, step, 1, _default(kontor, gid, 1), via="test")
    meta, ph, state, orders = kontor.store.resolve_read(gid, step)
    assert (meta, ph, state) == kontor.store.snapshot(gid)
    assert orders == kontor.store.orders(gid, step) and set(orders) == {1}


def _default(k: Kontor, gid: str, seat: int) -> Any:
    meta, _, state = k.store.snapshot(gid)
    return registry.get(meta["title"]).default_order(state, seat)


def test_resolve_hands_the_deadline_check_on_to_a_job_rq_runs(kontor: Kontor, worker: Any) -> None:
    """The next step's check, scheduled by the same command that took back the closed
    step's (`_HAND_ON`), is the job RQ itself would have scheduled, and RQ runs it."""
    gid, _ = domain_game(kontor, 3, deadlines=SLOW)
    first, first_at = _open(kontor, gid)
    default_step(kontor, gid)
    worker()
    step, at = _open(kontor, gid)
    assert step == first + 1
    job_id = deadline_id(gid, step, at)
    assert _scheduled(kontor).get_job_ids() == [job_id]  # the closed step's check is gone
    assert not kontor.rq.exists(f"rq:job:{deadline_id(gid, first, first_at)}")

    # The job hash has every field RQ's own schedule writes (compared with a check
    # scheduled by RQ, under another step's id), and reads back as RQ's job.
    kontor.jobs.deadline(gid, step + 7, at + 60)
    ours, rqs = (kontor.rq.hgetall(f"rq:job:{j}") for j in (job_id, deadline_id(gid, step + 7, at + 60)))
    assert set(ours) == set(rqs)
    for field in (b"status", b"timeout", b"result_ttl", b"failure_ttl"):
        assert ours[field] == rqs[field]
    job = Job.fetch(job_id, connection=kontor.rq, serializer=JSONSerializer)
    assert job.func_name == "service.jobs.queue.deadline" and job.args == [gid, step]
    assert job.get_status() == JobStatus.SCHEDULED and job.timeout == kontor.jobs.resolve_timeout
    kontor.jobs.cancel_deadline(gid, step + 7, at + 60)

    # Due (as the scheduler moves it to the queue), it runs: early, and plans itself again.
    _scheduled(kontor).remove(job_id)
    Queue(RESOLVE, connection=kontor.rq, serializer=JSONSerializer).enqueue_job(job)
    worker()
    assert _open(kontor, gid) == (step, at)
    assert any(j.startswith(f"{job_id}-e") for j in _scheduled(kontor).get_job_ids())


def test_jobs_deadline_hand_on_refuses_a_duplicate_and_still_takes_back_the_old_check(kontor: Kontor) -> None:
    gid, _ = domain_game(kontor, 2, deadlines=SLOW)
    step, at = _open(kontor, gid)
    old = deadline_id(gid, step, at)
    assert old in _scheduled(kontor).get_job_ids()
    assert kontor.jobs.deadline(gid, step + 1, at + 60, cancel=(step, at)) is True
    assert old not in _scheduled(kontor).get_job_ids() and not kontor.rq.exists(f"rq:job:{old}")
    new = deadline_id(gid, step + 1, at + 60)
    assert new in _scheduled(kontor).get_job_ids()
    # Once more (a job run twice): refused as RQ refuses a duplicate id, the check stays.
    assert kontor.jobs.deadline(gid, step + 1, at + 60, cancel=(step, at)) is False
    assert new in _scheduled(kontor).get_job_ids() and kontor.rq.exists(f"rq:job:{new}")


def test_jobs_deadline_hand_on_leaves_a_check_that_is_running_its_job(kontor: Kontor) -> None:
    """The closed step's check already enqueued or running (its defaults resolved the
    step) keeps its job hash, as `cancel_deadline` leaves it."""
    gid, _ = domain_game(kontor, 2, deadlines=SLOW)
    step, at = _open(kontor, gid)
    old = deadline_id(gid, step, at)
    _scheduled(kontor).remove(old)  # due: the scheduler moved it to the queue
    assert kontor.jobs.deadline(gid, step + 1, at + 60, cancel=(step, at)) is True
    assert kontor.rq.exists(f"rq:job:{old}") == 1


def test_resolve_plans_the_bot_of_a_seat_made_a_bot_while_the_step_resolved(kontor: Kontor, worker: Any) -> None:
    """The seats the commit plans bots from are the ones at the commit (commit.lua answers
    them): a seat the host makes a bot after the step flipped, before it is resolved,
    plays the next step."""
    gid, _ = domain_game(kontor, 3, deadlines=SLOW)
    step, _ = _open(kontor, gid)
    default_step(kontor, gid)
    assert kontor.store.phase(gid)["status"] == "resolving"
    kontor.update_seat(gid, 2, None, None, "random")  # no bot job: the step is not collecting
    worker()
    # The bot played: seat 2 answered the next step, or (nobody else answering) that step
    # was resolved on its order alone and the game went on.
    nxt = int(kontor.store.phase(gid)["id"])
    assert nxt > step + 1 or (nxt == step + 1 and 2 in kontor.store.answered(gid, nxt))


def test_resolve_keeps_the_meta_as_the_commit_always_wrote_it(kontor: Kontor, worker: Any) -> None:
    """commit.lua reads and writes the meta once: the event count, each viewer's ids, the
    status and the notified mark (nobody has a contact: it moves on) as before; a game
    stored before the mark existed gets it at its count before the commit."""
    gid, _ = domain_game(kontor, 3, deadlines=SLOW)
    meta_key = kontor.store.key(gid, "meta")
    kontor.store.r.hdel(meta_key, "notified_through")
    seq = int(kontor.store.meta(gid)["event_seq"])
    step, _ = _open(kontor, gid)
    default_step(kontor, gid)
    assert kontor.resolve(gid, step) == "committed"
    meta = kontor.store.meta(gid)
    events = kontor.store.events_between(gid, seq + 1, int(meta["event_seq"]))
    last = int(meta["event_seq"])
    assert last > seq and [n for n, _, _ in events] == list(range(seq + 1, last + 1))
    assert meta["notified_through"] == meta["event_seq"]  # nobody to tell
    assert meta["status"] == "running" and float(meta["updated_at"]) > 0
    public, *per_seat = (int(x) for x in meta["event_ids"].split(","))
    assert public >= len([e for _, e, _ in events if e["visible_to"] == "all"]) and len(per_seat) == 3
    worker()


def test_resolve_a_step_costs_few_store_commands(kontor: Kontor) -> None:
    """A resolved step's store and queue work, counted in Valkey commands (each command a
    script runs counts too): the one read, the commit, the deadline hand-on."""
    gid, _ = domain_game(kontor, 3, deadlines=SLOW)
    step, _ = _open(kontor, gid)
    default_step(kontor, gid)

    def calls() -> int:
        info = kontor.rq.info("commandstats")
        return sum(int(v["calls"]) for name, v in info.items() if name.startswith("cmdstat_"))

    if isinstance(kontor.store.r, RedisCluster):
        pytest.skip("the store is a cluster: its commands are on other servers than the queue's")
    before = calls()
    assert kontor.resolve(gid, step) == "committed"
    used = calls() - before - 1  # the INFO itself
    assert used <= 32, used  # 42 before issue 26


@pytest.mark.parametrize("game,phase", [("g1", 2), ("a'b\"c", 0), ("spiel-ünï", 123456)])
def test_jobs_deadline_fields_are_the_hash_rq_makes_for_the_check(kontor: Kontor, game: str, phase: int) -> None:
    """The hand-on's job hash, made from a template (`Jobs.deadline_fields`), is what RQ's
    own `create_job(...).to_dict()` makes for the same check: every field, in order, with
    the same values but the time it was made (and that one within the second)."""
    from rq.utils import utcparse

    ours, ttl = kontor.jobs.deadline_fields(game, phase)
    job = Queue(RESOLVE, connection=kontor.rq, serializer=JSONSerializer).create_job(
        "service.jobs.queue.deadline", args=(game, phase), job_id="x", status=JobStatus.SCHEDULED,
        timeout=kontor.jobs.resolve_timeout, result_ttl=0, failure_ttl=7 * 86400)
    rqs = [(name, value if isinstance(value, (bytes, str)) else str(value))
           for name, value in job.to_dict().items() if value is not None]
    assert [name for name, _ in rqs] == ours[::2]
    made = dict(zip(ours[::2], ours[1::2], strict=True))
    for name, value in rqs:
        if name == "created_at":
            assert abs((utcparse(made[name]) - utcparse(value)).total_seconds()) < 5
        else:
            assert made[name] == value, name
    assert ttl == (job.ttl if job.ttl is not None else -1)
    kept = Job(connection=kontor.rq, serializer=JSONSerializer)
    kept.restore({k.encode(): v.encode() if isinstance(v, str) else v for k, v in made.items()})
    assert kept.func_name == "service.jobs.queue.deadline" and kept.args == [game, phase]
