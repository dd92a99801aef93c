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
import logging
import math
import os
import secrets
import signal
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Generic, ParamSpec, TypeVar

import redis
from rq import Queue, Retry, Worker, get_current_job
from rq.exceptions import DuplicateJobError
from rq.job import Job, JobStatus
from rq.serializers import JSONSerializer
from rq.utils import get_call_string, utcformat
from rq.utils import now as rq_now

#: RQ's set of its queues' keys (rq.queue.Queue.redis_queues_keys).
RQ_QUEUES_KEY = Queue.redis_queues_keys

RESOLVE = "resolve"
NOTIFY = "notify"
QUEUES = (RESOLVE, NOTIFY)

log = logging.getLogger("kontor.jobs")

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


@task(NOTIFY)
def absence_end(game: str, seat: int) -> int:
    """Tell a seat what was played for it during its absences that have ended (issue 25;
    the sweep is the net under a lost one: told once either way)."""
    raise NotImplementedError


@task(RESOLVE)
def noop() -> str:
    """The benchmark's floor: an empty job."""
    raise NotImplementedError


TASKS: tuple[Task[Any, Any], ...] = (resolve, drain, deadline, bot_order, notify, send_mail, send_webhook, inbound_mail,
                                     absence_end, noop)

_RETRY = (3, [2, 10, 30])

#: How long RQ keeps a finished job and its result: nobody reads a result (a job's
#: outcome is in the store), so none is kept; failed jobs stay for a week to debug.
RESULT_TTL = 0
FAILURE_TTL = 7 * 86400

#: The ready list (`Jobs.ready`). A step whose last order is in (or whose deadline passed)
#: is pushed on `<prefix>:{ready}:steps` as `<game> <step>`, and a `drain` job is enqueued
#: only when fewer than `Jobs.drainers` drain jobs hold a lease in `<prefix>:{ready}:drainers`
#: (ZSET lease id -> expiry, store clock). A drain job takes steps off the list and resolves
#: each, and ends (dropping its lease) when the list stays empty for `LINGER` seconds.
#: Under load one job resolves many steps, so RQ's own bookkeeping (a job's status,
#: registries, heartbeats: several times the work of resolving a small step) is paid once
#: per burst instead of once per step. The scripts are atomic: a step pushed while a
#: drainer holds its lease is taken by it (the drainer looks at the list once more inside
#: the script that drops its lease), and one pushed after the lease was dropped starts a
#: new drain job, so no step waits for nobody.
#:
#: Leases with a heartbeat (no stall when a worker dies, issue 23): a step being resolved
#: is held in `<prefix>:{ready}:held` (ZSET `<game> <step> <holder>` -> expiry), taken off
#: the list into it in the same script (`_TAKE`), or held there by any other job that
#: resolves a step (`Jobs.holding`: a `resolve` job, a bot's or a deadline's job that
#: resolves the step its order completed). While the worker works, a thread of its
#: process renews every lease it holds (its drain job's too) every `resolve_heartbeat`
#: seconds to `resolve_lease` seconds ahead (`Leases`). A worker that dies (SIGKILL, OOM,
#: a lost host) stops renewing: its leases run out, and the next check (`Jobs.reap`, the
#: sweeper every `lease_check` seconds) puts the steps they held back at the head of the
#: list and starts a drain job when fewer than `Jobs.drainers` live ones hold a lease. A slow
#: but live worker (a long resolution, a pause, SIGSTOP) may lose its lease the same way;
#: then two resolve the step, and the commit's compare-and-set on the step and its state
#: version (commit.lua) lets exactly one of them commit: the other changes nothing and
#: makes no notices. The sweep's `stuck_after` stays as the last resort.
#:
#: Resolved where it was triggered (the setting `resolve_in_web`, `service/http/inweb.py`):
#: a web process that flipped a step (an order's, a host's action) sets `Jobs.here`, and
#: `Jobs.resolve` hands the step to it instead of the list. Once its answer is on its
#: way (a greenlet of its own), the web resolves it with the worker's code
#: (`Kontor.resolve`, in `Jobs.deferring`, then the commit's notices as the worker makes
#: them), holding nothing: a hold and its release would be two round trips a step here.
#: A web that dies before its commit leaves the step on no list, held by nobody, as one
#: that died before its push: the sweep's `orphaned` check puts it on the list once
#: `resolve_lease` seconds have passed since its flip (within `resolve_lease +
#: sweep_interval` seconds). A resolution that raises puts the step on the list
#: (`ready`), so a trigger is never dropped; and two that resolve the same step (a web
#: and a worker after the orphan check) commit it once (commit.lua's compare-and-set).
#: The web runs no RQ job: it calls the resolution itself, never a job body. The commit's
#: notices go on the ready list as `<game> -<through>` (`Jobs.notices_ready`): a drain job
#: that takes such an item makes them, with its webhooks, as the worker's own resolution
#: would have (a web that sent them itself was slower and dearer: its one loop waits on
#: the receivers).


#: `Jobs.drainers` is how many drain jobs may hold a lease at once over the whole installation
#: (the leases live in the queue's Valkey, shared by every host): the setting `drainers`
#: (`KONTOR_DRAINERS`), about the worker processes of every worker host together. Its
#: default, 0, is `default_drainers()`: this host's cores, at least 2, right for one host
#: running everything; with several hosts it would be the core count of whichever process
#: pushes the step (often a web host): set it, the same, on every host.
def default_drainers() -> int:
    """The drain jobs at once when the setting `drainers` is 0: this host's cores, at least 2."""
    return max(2, os.cpu_count() or 1)


#: Seconds a drain job's lease lasts from its enqueue until it starts (it waits in RQ's
#: queue; once it runs, the heartbeat keeps it `resolve_lease` seconds ahead).
LEASE = 30
#: Seconds a drainer waits on an empty list before it ends (the setting `drain_linger`).
LINGER = 0.05
#: KEYS: the list, the leases. ARGV: the item (none if empty), drainers, LEASE, a new lease id. 1: enqueue
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
#: KEYS: the list, the leases, the held steps. ARGV: the lease id, the lease's seconds, the
#: mode: `take` (the next item, renewing the lease), `last` (the same, else drop the
#: lease), `renew`, `hold` (no take: hold ARGV[4] as a taken item); a taken item is held
#: as `<item> <lease id>` for the same seconds. ARGV[5] and on: held members to drop first
#: (the step the drainer has just resolved, the commits whose notices it has made since
#: its last take); none, or '', for none.
_TAKE = """
local item = false
for i = 5, #ARGV do
  if ARGV[i] ~= '' then redis.call('ZREM', KEYS[3], ARGV[i]) end
end
local t = redis.call('TIME')
local until_ = tonumber(t[1]) + tonumber(t[2]) / 1e6 + tonumber(ARGV[2])
if ARGV[3] == 'hold' then
  item = ARGV[4]
elseif ARGV[3] ~= 'renew' then
  item = redis.call('LPOP', KEYS[1])
end
if item then redis.call('ZADD', KEYS[3], until_, item .. ' ' .. ARGV[1]) end
if item or ARGV[3] == 'renew' then
  if ARGV[3] ~= 'hold' then redis.call('ZADD', KEYS[2], until_, ARGV[1]) end
elseif ARGV[3] == 'last' then
  redis.call('ZREM', KEYS[2], ARGV[1])
end
return item
"""
#: KEYS: the list, the held steps. ARGV: the item `<game> <step>`. 1 when the step is
#: neither on the list nor held by anyone (its trigger was lost: the process that flipped
#: it to `resolving` died before it pushed it, or a drainer died between its pop and its
#: hold), else 0.
_ORPHANED = """
if redis.call('LPOS', KEYS[1], ARGV[1]) then return 0 end
local prefix = ARGV[1] .. ' '
for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  if string.sub(m, 1, #prefix) == prefix then return 0 end
end
return 1
"""
#: KEYS: the held steps, the leases. ARGV: seconds ahead, how many held members, the held
#: members, then the lease ids. Renews those still there (a lease that ran out and was
#: reaped is not made again).
_RENEW = """
local t = redis.call('TIME')
local until_ = tonumber(t[1]) + tonumber(t[2]) / 1e6 + tonumber(ARGV[1])
local n = tonumber(ARGV[2])
for i = 3, #ARGV do
  if i < 3 + n then
    redis.call('ZADD', KEYS[1], 'XX', until_, ARGV[i])
  else
    redis.call('ZADD', KEYS[2], 'XX', until_, ARGV[i])
  end
end
return 0
"""
#: KEYS: the list, the leases, the held steps. ARGV: drainers, LEASE, a new lease id, the
#: running leases' seconds. Puts the steps of run-out holds back at the head of the list,
#: drops run-out leases, and takes a lease for a new drain job when steps wait and fewer
#: than `drainers` hold one. Answers {steps put back, 1 to enqueue a drain job under the new
#: lease id, then the leases of drain jobs not started for more than `ENQUEUE_GRACE` s}.
_REAP = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local lost = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
for _, m in ipairs(lost) do
  redis.call('ZREM', KEYS[3], m)
  redis.call('LPUSH', KEYS[1], string.match(m, '^(.*) [^ ]+$'))
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local out = {#lost, 0}
if redis.call('LLEN', KEYS[1]) > 0 and redis.call('ZCARD', KEYS[2]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[3])
  out[2] = 1
end
local waiting = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. (now + tonumber(ARGV[4])),
  '(' .. (now + tonumber(ARGV[2]) - tonumber(ARGV[5])))
for _, m in ipairs(waiting) do out[#out + 1] = m end
return out
"""
#: Seconds after its enqueue a drain job that has not started yet is looked up in RQ by
#: `Jobs.reap`: a process killed between taking a drain job's lease and enqueueing the
#: job leaves a lease nobody will run, which would hold one of the `Jobs.drainers` places for
#: `LEASE` seconds.
ENQUEUE_GRACE = 2.0

#: The calls a running job defers to do itself once its body returned (`Jobs.deferring`).
_deferred: contextvars.ContextVar[list[Call] | None] = contextvars.ContextVar("kontor_deferred", default=None)


def held_member(game: str, phase: int, holder: str) -> str:
    """A step's hold in the held steps, `<game> <step> <holder>` (a commit's notices: a
    negative step, `Jobs.notices_ready`)."""
    return f"{game} {phase} {holder}"


def not_deferring() -> None:
    """In the current context, resolve and notify calls are enqueued, not deferred: what a
    thread that runs in a copy of a job's context sets first (`tasks.Pipeline`), so that
    it never adds to the list of the job's `deferring` block."""
    _deferred.set(None)


#: Take a scheduled job back: its hash is deleted only when it was still in the scheduled
#: registry (KEYS: the registry, the job's hash; ARGV: the job's id).
_CANCEL_SCHEDULED = """
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then redis.call('DEL', KEYS[2]) return 1 end
return 0
"""


#: The check of a step's deadline handed on to the next step's (`Jobs.deadline` with
#: `cancel`), in one command: the closed step's scheduled check taken back as
#: `_CANCEL_SCHEDULED` does, and the new one scheduled as RQ's own unique schedule does
#: (rq.scripts.UNIQUE_SCHEDULE_SCRIPT: refused when a job of its id exists; the job hash
#: RQ's `Job.to_dict` makes). KEYS: the scheduled registry, the old job's hash, the new
#: job's hash, RQ's set of queues. ARGV: the old id, the new id, TTL (-1 none), the
#: schedule's timestamp, the queue's key, then the new job hash's field/value pairs.
#: Answers 1 when the new check is scheduled, 0 when one of its id is there already.
_HAND_ON = """
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then redis.call('DEL', KEYS[2]) end
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
redis.call('HSET', KEYS[3], unpack(ARGV, 6))
local ttl = tonumber(ARGV[3])
if ttl and ttl > 0 then redis.call('EXPIRE', KEYS[3], ttl) end
redis.call('ZADD', KEYS[1], tonumber(ARGV[4]), ARGV[2])
redis.call('SADD', KEYS[4], ARGV[5])
return 1
"""


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
    webhooks sent, its notified mark not moved yet), after_reap (`Jobs.reap`: steps put
    back on the ready list, no drain job enqueued yet; tests/service/jobs/test_lease.py),
    inweb_resolving (`service/http/inweb.py`: a web process is to resolve a step it
    flipped, and has not yet; tests/service/jobs/test_inweb.py).
    Never set outside those tests."""
    if os.environ.get("KONTOR_CRASH_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)


class Leases:
    """The leases one process holds (`Jobs.holding`, a running drain job's), renewed by a
    heartbeat thread every `every` seconds to `ttl` seconds ahead while any is held; the
    thread ends when none is (and starts again with the next). The thread runs beside
    the job: a long resolution keeps its lease, a dead or stopped process loses it."""

    def __init__(self, connection: redis.Redis, keys: list[str], ttl: float, every: float) -> None:
        self.connection = connection
        self.keys = keys  # the held steps, the drainers' leases
        self.ttl = ttl
        self.every = every
        self._renew = connection.register_script(_RENEW)
        self._held: dict[str, int] = {}
        self._drainers: dict[str, int] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def keep(self, member: str, drainer: bool = False) -> None:
        """Renew this held step (`<game> <step> <holder>`), or this drain job's lease, from
        now on until `drop`."""
        with self._lock:
            into = self._drainers if drainer else self._held
            into[member] = into.get(member, 0) + 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._beat, name="kontor-lease-heartbeat", daemon=True)
                self._thread.start()

    def drop(self, member: str, drainer: bool = False) -> None:
        """Stop renewing it (the caller removes it from the store)."""
        with self._lock:
            into = self._drainers if drainer else self._held
            n = into.get(member, 0) - 1
            if n > 0:
                into[member] = n
            else:
                into.pop(member, None)

    def renew(self) -> bool:
        """Renew every lease held now (one script); False when none is held."""
        with self._lock:
            held, drainers = list(self._held), list(self._drainers)
        if not held and not drainers:
            return False
        self._renew(keys=self.keys, args=[self.ttl, len(held), *held, *drainers])
        return True

    def _beat(self) -> None:
        while True:
            time.sleep(self.every)
            with self._lock:
                if not self._held and not self._drainers:
                    self._thread = None
                    return
            try:
                self.renew()
            except Exception:  # a store hiccup: the next beat tries again
                log.warning("lease heartbeat failed; retrying in %.1f s", self.every, exc_info=True)


class Jobs:
    """The enqueue API the core and the channels use (ids, delays, retries)."""

    def __init__(self, connection: redis.Redis, resolve_timeout: int = 60, prefix: str = "kontor",
                 lease: float = 3.0, heartbeat: float = 1.0, drainers: int = 0, linger: float = LINGER,
                 lean: Callable[[Any], Any] | None = None) -> None:
        """`lean`: makes a registered script's calls cheaper (the store's `lean_scripts`:
        on connections of their own, the client's call when those fail); the ready list's
        and the deadline hand-on's scripts, a few calls a step, go through it."""
        self.connection = connection
        #: Seconds `take` waits on an empty ready list (the setting `drain_linger`).
        self.linger = linger
        #: Drain jobs that may hold a lease at once, over every host (the setting `drainers`; 0: this host's cores).
        self.drainers = drainers if drainers > 0 else default_drainers()
        self.resolve_timeout = resolve_timeout
        self.queues = {name: Queue(name, connection=connection, serializer=JSONSerializer) for name in QUEUES}
        # The ready list's keys share one hash tag, so its scripts also run on a Redis Cluster.
        self.ready_keys = [f"{prefix}:{{ready}}:steps", f"{prefix}:{{ready}}:drainers", f"{prefix}:{{ready}}:held"]
        self.lease = lease
        self.leases = Leases(connection, [self.ready_keys[2], self.ready_keys[1]], lease, heartbeat)
        self._push = connection.register_script(_PUSH)
        #: Connections of this process kept for `_pushed` (pid: a forked child makes its own).
        self._kept: tuple[int, list[Any]] = (os.getpid(), [])
        wrap = lean or (lambda script: script)
        self._take = wrap(connection.register_script(_TAKE))
        self._reap = wrap(connection.register_script(_REAP))
        self._orphaned = wrap(connection.register_script(_ORPHANED))
        self._hand_on = wrap(connection.register_script(_HAND_ON))
        self._scheduled_key = self.queues[RESOLVE].scheduled_job_registry.key
        #: The deadline check's job hash as a template (`deadline_fields`), made at the first.
        self._deadline_template: tuple[list[tuple[str, Any]], int] | None = None
        #: Resolves a step flipped in this process, here (`service/http/inweb.py`, set by
        #: the web when `resolve_in_web` says so); None: the ready list. It never raises:
        #: whatever it cannot do ends on the ready list.
        self.here: Callable[[str, int], None] | None = None

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
        running job inside `deferring`; handed to `here` (the web that flipped it resolves
        it) when this process has one."""
        if not attempt and self._defer(resolve.call(game, phase)):
            return True
        if not attempt:
            if self.here is not None:
                self.here(game, phase)
                return True
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

    def notices_ready(self, game: str, through: int) -> bool:
        """Hand a commit's notices (the game's events through `through`) to a worker through
        the ready list, as `<game> -<through>` (a negative step: `take` answers it as such,
        and the drain job makes the notices, as the notify job would, instead of resolving):
        what a web that resolved a step here does with them (`service/http/inweb.py`), so
        the deliveries leave from the workers, in the drain jobs that already run, not one
        RQ job each. Held, reaped and put back as a step is."""
        self._push_ready(f"{game} -{through}")
        return True

    def orphaned(self, game: str, phase: int) -> bool:
        """Whether a `resolving` step is waiting for nobody: not on the ready list and not
        held (`_ORPHANED`). The sweep puts such a step back (`service.jobs.sweep`)."""
        keys = [self.ready_keys[0], self.ready_keys[2]]
        return bool(self._orphaned(keys=keys, args=[f"{game} {phase}"]))

    def hand_over(self, lease: str) -> None:
        """A drain job that stops before the list is empty: drop its lease, and start
        another drain job if steps wait (as a push would)."""
        self.connection.zrem(self.ready_keys[1], lease)
        if self.connection.llen(self.ready_keys[0]):
            self._push_ready("")

    def _push_ready(self, item: str) -> None:
        """`_PUSH` (`item` on the list, unless empty), and the drain job it asks for."""
        lease = f"drain-{secrets.token_hex(8)}"
        if self._pushed(self.ready_keys, [item, self.drainers, LEASE, lease]):
            self.put(drain.call(lease), job_id=lease)

    def _pushed(self, keys: list[str], args: list[Any]) -> Any:
        """`_PUSH` on a connection this process keeps for it, without the client's pool
        and retry machinery (the web's fast order path pushes every step it flips: two
        thirds of that push's cost); through the client (which retries) on a cluster, a
        pool other than a plain one, or when the kept connection failed. (A push sent
        again after a failed connection may put the step on the list twice, as the
        client's retry may: a duplicate resolve is a no-op.)"""
        client = self.connection
        pool = getattr(client, "connection_pool", None)
        if type(client) is not redis.Redis or type(pool) is not redis.ConnectionPool or getattr(pool, "cache", None):
            return self._push(keys=keys, args=args)
        pid, idle = self._kept
        if pid != os.getpid():  # forked: the parent's connections are not ours
            idle = []
            self._kept = (os.getpid(), idle)
        conn = idle.pop() if idle else pool.connection_class(**pool.connection_kwargs)
        try:
            try:
                conn.send_command("EVALSHA", self._push.sha, len(keys), *keys, *args)
                out = conn.read_response()
            except redis.exceptions.NoScriptError:  # the server forgot it (restarted): load it
                conn.send_command("SCRIPT", "LOAD", self._push.script)
                conn.read_response()
                conn.send_command("EVALSHA", self._push.sha, len(keys), *keys, *args)
                out = conn.read_response()
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError):
            conn.disconnect()
            return self._push(keys=keys, args=args)
        except BaseException:
            conn.disconnect()
            raise
        idle.append(conn)
        return out

    def take(self, lease: str, linger: float | None = None, done: tuple[str, int] | None = None,
             also: Sequence[str] = ()) -> tuple[str, int] | None:
        """The next step on the ready list for the drain job holding `lease` (renewing
        it), held for it (`<game> <step> <lease>` in the held steps, renewed by the
        heartbeat until `release`, or until the next take names it `done`); None once the
        list stayed empty for `linger` seconds (default: `self.linger`), and the lease is
        then dropped (unless a step came meanwhile, which is returned). (A worker that dies between the wait's
        pop and the hold, a few microseconds, leaves that one step to the sweep's
        `stuck_after`.) `also`: held members (`<game> <step> <lease>`) dropped in the same
        script call, as `release` would drop each (a drain job's commits whose notices are
        made: `service.jobs.tasks.Pipeline`)."""
        dropped = [*also, *([held_member(*done, lease)] if done is not None else [])]
        for member in dropped:
            self.leases.drop(member)
        item = self._take(keys=self.ready_keys, args=[lease, self.lease, "take", "", *dropped])
        linger = self.linger if linger is None else linger
        if item is None and linger > 0:
            got = self.connection.blpop([self.ready_keys[0]], timeout=linger)
            if got is not None:
                item = got[1]
                self._take(keys=self.ready_keys, args=[lease, self.lease, "hold", item, ""])
                self._take(keys=self.ready_keys, args=[lease, self.lease, "renew", "", ""])
        if item is None:
            item = self._take(keys=self.ready_keys, args=[lease, self.lease, "last", "", ""])
        if item is None:
            return None
        text = item.decode() if isinstance(item, bytes) else str(item)
        self.leases.keep(f"{text} {lease}")
        game, _, phase = text.partition(" ")
        return game, int(phase)

    def release(self, game: str, phase: int, holder: str) -> None:
        """The step `holder` held is resolved (or handed to a job of its own): drop its hold."""
        self.release_held([held_member(game, phase, holder)])

    def release_held(self, members: Sequence[str]) -> None:
        """Drop these holds (`<game> <step> <holder>`), each resolved or its notices made."""
        if not members:
            return
        for member in members:
            self.leases.drop(member)
        self.connection.zrem(self.ready_keys[2], *members)

    @contextmanager
    def holding(self, game: str, phase: int) -> Iterator[None]:
        """Hold the step while the block resolves it (a job other than a drain job): a
        worker that dies meanwhile leaves it to `reap`, not to `stuck_after`."""
        holder = f"job-{secrets.token_hex(6)}"
        self._take(keys=self.ready_keys, args=[holder, self.lease, "hold", f"{game} {phase}", ""])
        self.leases.keep(held_member(game, phase, holder))
        try:
            yield
        finally:
            self.release(game, phase, holder)

    @contextmanager
    def draining(self, lease: str) -> Iterator[None]:
        """The drain job holding `lease` runs: its lease is renewed by the heartbeat (no
        longer the `LEASE` of a job waiting to start) until the block ends."""
        self._take(keys=self.ready_keys, args=[lease, self.lease, "renew", "", ""])
        self.leases.keep(lease, drainer=True)
        try:
            yield
        finally:
            self.leases.drop(lease, drainer=True)

    def reap(self) -> int:
        """The quick check (the sweeper's, every `lease_check` seconds): every step whose
        holder's lease ran out (a dead or stopped worker) goes back to the head of the
        ready list, and a drain job is started when steps wait and fewer than `Jobs.drainers`
        hold a live lease. How many steps were put back. Safe anywhere, any number of
        times; a process killed between the script and the enqueue leaves the steps on the
        list, and the next check (which looks at the list, not at what it moved) starts the
        drain job. The lease such a death leaves (taken for a drain job never enqueued, here
        or by a push) is dropped once RQ has no job of its id `ENQUEUE_GRACE` seconds on."""
        lease = f"drain-{secrets.token_hex(8)}"
        back, start, *waiting = self._reap(keys=self.ready_keys,
                                           args=[self.drainers, LEASE, lease, self.lease, ENQUEUE_GRACE])
        if back:
            crash_point("after_reap")
        if start:
            self.put(drain.call(lease), job_id=lease)
        ids = [w.decode() if isinstance(w, bytes) else str(w) for w in waiting]
        unqueued = sorted(self.missing([i for i in ids if i != lease]))
        if unqueued:
            log.warning("drain leases with no job (a process died before enqueueing it): %s; dropped", unqueued)
            self.connection.zrem(self.ready_keys[1], *unqueued)
            if self.connection.llen(self.ready_keys[0]):
                self._push_ready("")
        return int(back)

    def deadline(self, game: str, phase: int, at: float, cancel: tuple[int, float] | None = None) -> bool:
        """Check the step's deadline one second after it (RQ's scheduler has whole-second
        granularity and may fire early; the check re-reads the server clock anyway).
        `cancel`: (step, deadline) of the step a commit has just closed, whose check is
        taken back in the same command (`cancel_deadline`; `_HAND_ON`): a resolved
        step's two queue writes are one round trip."""
        when = math.ceil(at) + 1
        job_id = deadline_id(game, phase, at)
        current = get_current_job()
        if current is not None and current.id.startswith(job_id):
            # This very job fired early (a scheduler clock ahead of the store's) and still
            # holds the id: a duplicate would be refused and the check lost until a sweep.
            job_id = f"{job_id}-e{secrets.token_hex(3)}"
        if cancel is None:
            return self.put(deadline.call(game, phase), job_id=job_id, at=datetime.fromtimestamp(when, UTC))
        q = self.queues[RESOLVE]
        fields, ttl = self.deadline_fields(game, phase)
        old = deadline_id(game, *cancel)
        keys = [self._scheduled_key, Job.key_for(old), Job.key_for(job_id), RQ_QUEUES_KEY]
        return bool(self._hand_on(keys=keys, args=[old, job_id, ttl, when, q.key, *fields]))

    def deadline_fields(self, game: str, phase: int) -> tuple[list[Any], int]:
        """The hash of the deadline check of step `phase` as RQ's own unique schedule writes
        it (`create_job(...).to_dict()`, as name, value, ...), and its ttl (-1: none).
        Made from a template job made once per process: only the time made, the call's
        data and its description differ from job to job (tests/service/jobs/
        test_resolve_lean.py compares the two ways). A fifth of a hand-on's CPU, once a step."""
        template = self._deadline_template
        if template is None:
            job = self.queues[RESOLVE].create_job(deadline.path, args=("", 0), job_id="template",
                                                  status=JobStatus.SCHEDULED, timeout=self.resolve_timeout,
                                                  result_ttl=RESULT_TTL, failure_ttl=FAILURE_TTL)
            template = self._deadline_template = (
                [(name, value if isinstance(value, (bytes, str)) else str(value))
                 for name, value in job.to_dict().items() if value is not None],
                job.ttl if job.ttl is not None else -1)
        made = {"created_at": utcformat(rq_now()),
                "data": zlib.compress(JSONSerializer.dumps((deadline.path, None, (game, phase), {}))),  # type: ignore[no-untyped-call]
                "description": get_call_string(deadline.path, (game, phase), {})}
        fields: list[Any] = []
        for name, value in template[0]:
            fields += (name, made.get(name, value))
        return fields, template[1]

    def cancel_deadline(self, game: str, phase: int, at: float) -> None:
        """Take back the deadline check of step `phase` due at `at` (the step resolved):
        its scheduled job would find nothing to do and holds memory until it fires,
        the whole length of the step (24 h by default). One round trip; a check already
        due or running is left alone (it is a no-op)."""
        job_id = deadline_id(game, phase, at)
        registry = self.queues[RESOLVE].scheduled_job_registry
        # The job's hash goes only with its schedule: a check enqueued or running already
        # (the very check whose defaults resolved the step) keeps it, or RQ fails to read
        # the status of the job it runs (`InvalidJobOperation`, logged as an error).
        self.connection.eval(_CANCEL_SCHEDULED, 2, registry.key, Job.key_for(job_id), job_id)

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

    def absence_end(self, game: str, seat: int, at: float) -> bool:
        """At `at` (an absence's end), tell the seat what was played for it (issue 25)."""
        return self.put(absence_end.call(game, seat), job_id=f"absence-{game}-{seat}-{math.ceil(at)}",
                        at=datetime.fromtimestamp(math.ceil(at) + 1, UTC))

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
