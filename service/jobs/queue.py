"""Putting work on the RQ queues: every job kind declared once, here, by its signature.

A job kind is a `Task`: a typed stand-in defined in this module whose body
`service.jobs.tasks` attaches with `@<task>.body` (the worker imports it at start). The
enqueue API (`Jobs`) takes the task object itself (`resolve.call(game, phase)`), so the
arguments are checked against the one signature by mypy, and RQ is given the task's own
import path (`service.jobs.queue.resolve`), derived from the object, never typed by
hand: a rename is a type error, not a job the worker cannot find.

Job ids are deterministic; a duplicate enqueue of the same id is refused by RQ
(`unique=True`) and is harmless. Arguments are JSON only.
"""

from __future__ import annotations

import contextvars
import functools
import math
import os
import secrets
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Generic, ParamSpec, TypeVar

import redis
from rq import Queue, Retry, Worker, get_current_job
from rq.exceptions import DuplicateJobError
from rq.job import Job
from rq.serializers import JSONSerializer

RESOLVE = "resolve"
NOTIFY = "notify"
QUEUES = (RESOLVE, NOTIFY)

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class Call:
    """One job to enqueue: the task's import path and its arguments."""

    task: Task[Any, Any]
    args: tuple[Any, ...]


class Task(Generic[P, R]):
    """A job kind: its queue and signature, declared in this module; its body is given
    by `service.jobs.tasks`. Calling the task (what the worker does) runs the body."""

    def __init__(self, signature: Callable[P, R], queue: str) -> None:
        functools.update_wrapper(self, signature)
        self.name = signature.__name__
        self.path = f"{__name__}.{self.name}"
        self.queue = queue
        self.signature = signature
        self._body: Callable[P, R] | None = None

    def body(self, fn: Callable[P, R]) -> Callable[P, R]:
        """Attach the body (used once, as a decorator, in `service.jobs.tasks`)."""
        self._body = fn
        return fn

    @property
    def has_body(self) -> bool:
        return self._body is not None

    def call(self, *args: P.args, **kwargs: P.kwargs) -> Call:
        """This task with these arguments, to enqueue (positional JSON arguments only)."""
        if kwargs:
            raise TypeError("jobs take positional arguments only")
        return Call(self, args)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if self._body is None:
            raise LookupError(f"job {self.name} has no body in this process: import service.jobs.tasks")
        return self._body(*args, **kwargs)


def task(queue: str) -> Callable[[Callable[P, R]], Task[P, R]]:
    """Declare a job kind on `queue` from a stub with its signature and docstring."""
    def declare(signature: Callable[P, R]) -> Task[P, R]:
        return Task(signature, queue)
    return declare


# -- the job kinds ------------------------------------------------------------------------
@task(RESOLVE)
def resolve(game: str, phase: int) -> str:
    """Resolve a step that has flipped to `resolving` (a duplicate is a no-op)."""
    raise NotImplementedError


@task(RESOLVE)
def drain(lease: str) -> int:
    """Resolve the steps waiting in the ready list, one after another, while there are
    any (`Jobs.ready`); how many were taken."""
    raise NotImplementedError


@task(RESOLVE)
def deadline(game: str, phase: int) -> str:
    """Check a step's deadline (early, extended, or resolve with defaults)."""
    raise NotImplementedError


@task(RESOLVE)
def bot_order(game: str, phase: int, seat: int) -> str:
    """Play a bot seat's order for the open step."""
    raise NotImplementedError


@task(NOTIFY)
def notify(game: str, through: int) -> int:
    """Make and dispatch the notices of the game's events after its notified mark, up
    to event `through` (commits and messages alike), and move the mark."""
    raise NotImplementedError


@task(NOTIFY)
def send_mail(game: str, delivery: str, attempt: int) -> str:
    """Send one mail delivery (attempt `attempt`)."""
    raise NotImplementedError


@task(NOTIFY)
def send_webhook(game: str, delivery: str, attempt: int) -> str:
    """POST one webhook delivery (attempt `attempt`)."""
    raise NotImplementedError


@task(NOTIFY)
def inbound_mail(mail_id: str) -> str:
    """Judge one inbound mail kept in the store."""
    raise NotImplementedError


@task(RESOLVE)
def noop() -> str:
    """The benchmark's floor: an empty job."""
    raise NotImplementedError


TASKS: tuple[Task[Any, Any], ...] = (resolve, drain, deadline, bot_order, notify, send_mail, send_webhook, inbound_mail,
                                     noop)

_RETRY = (3, [2, 10, 30])

#: How long RQ keeps a finished job and its result: nobody reads a result (a job's
#: outcome is in the store), so none is kept; failed jobs stay for a week to debug.
RESULT_TTL = 0
FAILURE_TTL = 7 * 86400

#: The ready list (`Jobs.ready`). A step whose last order is in (or whose deadline passed)
#: is pushed on `<prefix>:{ready}:steps` as `<game> <step>`, and a `drain` job is enqueued
#: only when fewer than `DRAINERS` drain jobs hold a lease in `<prefix>:{ready}:drainers`
#: (ZSET lease id -> expiry, store clock). A drain job takes steps off the list and resolves
#: each, renewing its lease at each take, and ends (dropping its lease) when the list stays
#: empty for `LINGER` seconds. Under load one job resolves many steps, so RQ's own
#: bookkeeping (a job's status, registries, heartbeats: several times the work of
#: resolving a small step) is paid once per burst instead of once per step. The scripts
#: are atomic: a step pushed while a drainer holds its lease is taken by it (the drainer
#: looks at the list once more inside the script that drops its lease), and one pushed
#: after the lease was dropped starts a new drain job, so no step waits for nobody. A
#: drain job that dies (a killed worker) holds its lease until it expires (`LEASE`); its
#: steps stay `resolving` and the sweep enqueues them again after `stuck_after`, as for
#: any lost job.
DRAINERS = max(2, os.cpu_count() or 1)
#: Seconds a drainer's lease lasts without a take (longer than any one resolution).
LEASE = 30
#: Seconds a drainer waits on an empty list before it ends.
LINGER = 0.05
#: KEYS: the list, the leases. ARGV: the item (none if empty), DRAINERS, LEASE, a new lease id. 1: enqueue
#: a drain job under that lease id.
_PUSH = """
if ARGV[1] ~= '' then redis.call('RPUSH', KEYS[1], ARGV[1]) end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[2]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[4])
  return 1
end
return 0
"""
#: KEYS: the list, the leases. ARGV: the lease id, LEASE, the mode: `take` (the next item,
#: renewing the lease), `last` (the same, else drop the lease), `renew`.
_TAKE = """
local item = false
if ARGV[3] ~= 'renew' then item = redis.call('LPOP', KEYS[1]) end
if item or ARGV[3] == 'renew' then
  local t = redis.call('TIME')
  redis.call('ZADD', KEYS[2], tonumber(t[1]) + tonumber(t[2]) / 1e6 + tonumber(ARGV[2]), ARGV[1])
elseif ARGV[3] == 'last' then
  redis.call('ZREM', KEYS[2], ARGV[1])
end
return item
"""

#: The calls a running job defers to do itself once its body returned (`Jobs.deferring`).
_deferred: contextvars.ContextVar[list[Call] | None] = contextvars.ContextVar("kontor_deferred", default=None)


def deadline_id(game: str, phase: int, at: float) -> str:
    """The id of the deadline check of step `phase` due at `at` (one per deadline)."""
    return f"deadline-{game}-{phase}-{math.ceil(at) + 1}"


def bot_id(game: str, phase: int, seat: int) -> str:
    """The id of the bot job of `seat` in step `phase` (before any re-enqueue suffix)."""
    return f"bot-{game}-{phase}-{seat}"


def crash_point(name: str) -> None:
    """Die here, as a power cut or the OOM killer would, when `KONTOR_CRASH_AT` names
    this point: the kill test (tests/service/jobs/test_kill.py) sets it in a worker or
    web process to prove every effect of a commit is made again after such a death.
    Points: after_commit, after_activate, after_notify, after_deadline (`Orders._commit`),
    after_delivery (`Notifier.dispatch`), after_send (`Notifier.flush`: a commit's
    webhooks sent, its notified mark not moved yet). Never set outside that test."""
    if os.environ.get("KONTOR_CRASH_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)


class Jobs:
    """The enqueue API the core and the channels use (ids, delays, retries)."""

    def __init__(self, connection: redis.Redis, resolve_timeout: int = 60, prefix: str = "kontor") -> None:
        self.connection = connection
        self.resolve_timeout = resolve_timeout
        self.queues = {name: Queue(name, connection=connection, serializer=JSONSerializer) for name in QUEUES}
        # The ready list's keys share one hash tag, so its scripts also run on a Redis Cluster.
        self.ready_keys = [f"{prefix}:{{ready}}:steps", f"{prefix}:{{ready}}:drainers"]
        self._push = connection.register_script(_PUSH)
        self._take = connection.register_script(_TAKE)

    def put(self, call: Call, *, job_id: str, retry: Retry | None = None, at: datetime | None = None,
            delay: float = 0) -> bool:
        """Enqueue `call` under `job_id` (now, at `at`, or `delay` seconds from now); False
        when a job of that id is already there."""
        q = self.queues[call.task.queue]
        opts: dict[str, Any] = {"job_id": job_id, "unique": True, "result_ttl": RESULT_TTL, "failure_ttl": FAILURE_TTL,
                                "job_timeout": self.resolve_timeout if call.task.queue == RESOLVE else 120}
        if retry is not None:
            opts["retry"] = retry
        try:
            if at is not None:
                q.enqueue_at(at, call.task.path, *call.args, **opts)
            elif delay > 0:
                q.enqueue_in(timedelta(seconds=delay), call.task.path, *call.args, **opts)
            else:
                q.enqueue(call.task.path, *call.args, **opts)
        except DuplicateJobError:
            return False
        return True

    @contextmanager
    def deferring(self) -> Iterator[list[Call]]:
        """Inside a job: the resolve and notify calls made in this block are not enqueued
        but collected in the list yielded, for the job to run them itself once its body
        returned (`service.jobs.tasks`): a bot's order that completes a step resolves it
        in the same job, and a commit's notices are made and sent by the job that
        committed, instead of one more job each. Whatever the job then fails to do is
        enqueued after all; a process killed first leaves it to the sweep, as a lost job
        would (the step stays `resolving`, the notified mark lags)."""
        calls: list[Call] = []
        token = _deferred.set(calls)
        try:
            yield calls
        finally:
            _deferred.reset(token)

    @staticmethod
    def _defer(call: Call) -> bool:
        calls = _deferred.get()
        if calls is None:
            return False
        if call not in calls:
            calls.append(call)
        return True

    def resolve(self, game: str, phase: int, attempt: int = 0) -> bool:
        """Resolve a step that has flipped to `resolving`; `attempt` > 0 for the sweeper's
        re-enqueues (a new id, since the lost job's id may still be held). Deferred to the
        running job inside `deferring`."""
        if not attempt and self._defer(resolve.call(game, phase)):
            return True
        if not attempt:
            return self.ready(game, phase)
        return self.put(resolve.call(game, phase), job_id=f"resolve-{game}-{phase}-r{attempt}",
                        retry=Retry(max=_RETRY[0], interval=_RETRY[1]))

    def resolve_job(self, game: str, phase: int) -> bool:
        """A job of its own for one step: what a drain job falls back to when resolving
        the step failed (RQ's retries and failed registry then see it)."""
        return self.put(resolve.call(game, phase), job_id=f"resolve-{game}-{phase}",
                        retry=Retry(max=_RETRY[0], interval=_RETRY[1]))

    def ready(self, game: str, phase: int) -> bool:
        """Put a step on the ready list; enqueue a drain job when too few hold a lease."""
        self._push_ready(f"{game} {phase}")
        return True

    def hand_over(self, lease: str) -> None:
        """A drain job that stops before the list is empty: drop its lease, and start
        another drain job if steps wait (as a push would)."""
        self.connection.zrem(self.ready_keys[1], lease)
        if self.connection.llen(self.ready_keys[0]):
            self._push_ready("")

    def _push_ready(self, item: str) -> None:
        """`_PUSH` (`item` on the list, unless empty), and the drain job it asks for."""
        lease = f"drain-{secrets.token_hex(8)}"
        if self._push(keys=self.ready_keys, args=[item, DRAINERS, LEASE, lease]):
            self.put(drain.call(lease), job_id=lease)

    def take(self, lease: str, linger: float = LINGER) -> tuple[str, int] | None:
        """The next step on the ready list for the drain job holding `lease` (renewing
        it); None once the list stayed empty for `linger` seconds, and the lease is then
        dropped (unless a step came meanwhile, which is returned)."""
        item = self._take(keys=self.ready_keys, args=[lease, LEASE, "take"])
        if item is None and linger > 0:
            got = self.connection.blpop([self.ready_keys[0]], timeout=linger)
            if got is not None:
                item = got[1]
                self._take(keys=self.ready_keys, args=[lease, LEASE, "renew"])
        if item is None:
            item = self._take(keys=self.ready_keys, args=[lease, LEASE, "last"])
        if item is None:
            return None
        game, _, phase = (item.decode() if isinstance(item, bytes) else str(item)).partition(" ")
        return game, int(phase)

    def deadline(self, game: str, phase: int, at: float) -> bool:
        """Check the step's deadline one second after it (RQ's scheduler has whole-second
        granularity and may fire early; the check re-reads the server clock anyway)."""
        when = math.ceil(at) + 1
        job_id = deadline_id(game, phase, at)
        current = get_current_job()
        if current is not None and current.id.startswith(job_id):
            # This very job fired early (a scheduler clock ahead of the store's) and still
            # holds the id: a duplicate would be refused and the check lost until a sweep.
            job_id = f"{job_id}-e{secrets.token_hex(3)}"
        return self.put(deadline.call(game, phase), job_id=job_id, at=datetime.fromtimestamp(when, UTC))

    def cancel_deadline(self, game: str, phase: int, at: float) -> None:
        """Take back the deadline check of step `phase` due at `at` (the step resolved):
        its scheduled job would find nothing to do and holds memory until it fires,
        the whole length of the step (24 h by default). One round trip; a check already
        due or running is left alone (it is a no-op)."""
        job_id = deadline_id(game, phase, at)
        registry = self.queues[RESOLVE].scheduled_job_registry
        pipe = self.connection.pipeline(transaction=False)
        pipe.zrem(registry.key, job_id)
        pipe.delete(Job.key_for(job_id))
        pipe.execute()

    def bot(self, game: str, phase: int, seat: int, attempt: int = 0) -> bool:
        suffix = f"-r{attempt}" if attempt else ""
        return self.put(bot_order.call(game, phase, seat), job_id=f"{bot_id(game, phase, seat)}{suffix}",
                        retry=Retry(max=_RETRY[0], interval=_RETRY[1]))

    # -- notifications (the `notify` queue) ---------------------------------------------
    def notify(self, game: str, through: int, attempt: int = 0) -> bool:
        """Make the notices of the game's events through `through` that have none yet (one
        job per commit or message; the sweep enqueues the gap again, `attempt` > 0, under
        a new id since a killed job's id may still be held)."""
        if not attempt and self._defer(notify.call(game, through)):
            return True
        suffix = f"-s{attempt}" if attempt else ""
        return self.put(notify.call(game, through), job_id=f"notify-{game}-{through}{suffix}")

    def mail(self, game: str, delivery: str, attempt: int = 1, delay: float = 0) -> bool:
        return self.put(send_mail.call(game, delivery, attempt), job_id=f"mail-{delivery}-{attempt}", delay=delay)

    def webhook(self, game: str, delivery: str, attempt: int = 1, delay: float = 0) -> bool:
        return self.put(send_webhook.call(game, delivery, attempt), job_id=f"webhook-{delivery}-{attempt}",
                        delay=delay)

    def inbound(self, mail_id: str) -> bool:
        """Process one inbound mail kept in the store under `mail_id`."""
        return self.put(inbound_mail.call(mail_id), job_id=f"inbound-{mail_id}")

    @staticmethod
    def crash_point(name: str) -> None:
        """`crash_point` (for the code that reaches the queue through a `Kontor`)."""
        crash_point(name)

    def missing(self, job_ids: list[str]) -> set[str]:
        """Which of these jobs are not in RQ (neither waiting, scheduled, running, nor
        kept as finished or failed): the sweep plans them again."""
        pipe = self.connection.pipeline(transaction=False)
        for job_id in job_ids:
            pipe.exists(f"rq:job:{job_id}")
        return {job_id for job_id, n in zip(job_ids, pipe.execute(), strict=True) if not n}

    # -- for metrics ----------------------------------------------------------------------
    def depths(self) -> dict[str, dict[str, int]]:
        """Per queue: jobs waiting, running, failed and scheduled."""
        out = {}
        for name, q in self.queues.items():
            out[name] = {"queued": q.count, "started": q.started_job_registry.count,
                         "failed": q.failed_job_registry.count, "scheduled": q.scheduled_job_registry.count}
        return out

    def workers(self) -> int:
        return int(Worker.count(connection=self.connection))
