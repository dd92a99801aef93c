"""The bodies of the jobs declared in `service.jobs.queue`, attached with `@<task>.body`.

Each takes ids and the expected step, checks, then acts; running one twice is harmless
(the store's compare-and-set makes a duplicate a no-op; a notice's deliveries have ids
derived from what they tell, so a second notify job sends nothing twice). Exceptions
are never swallowed, so RQ's retries and failed-job registry see them. The worker imports this module before
its first job (`workers/__main__.py`).
"""

from __future__ import annotations

import contextvars
import functools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from rq import get_current_job

from service.channels.inbound.judge import process
from service.channels.mail.send import send_delivery
from service.channels.notify import Notifier
from service.channels.webhook.deliver import deliver, deliver_all
from service.config import Settings
from service.core.kontor import Kontor
from service.jobs import queue
from service.logs import current_id, game_id

log = logging.getLogger("kontor.jobs")

#: Longest a drain job keeps taking steps, seconds (its RQ timeout is `resolve_timeout`).
DRAIN_SECONDS = 20.0

#: Most commits whose notices a worker process makes and sends beside its drain job at
#: once (`Pipeline`): the drain takes its next step while a commit's webhooks are in flight.
IN_FLIGHT = 8

_settings: Settings | None = None


def configure(settings: Settings | None) -> None:
    """Use these settings instead of the environment (tests and benchmarks that run a
    worker in their own process)."""
    global _settings
    _settings = settings
    kontor.cache_clear()


@functools.cache
def kontor() -> Kontor:
    """One `Kontor` per worker process, configured from the environment."""
    return Kontor(_settings or Settings.from_env())


def _tag(game: str | None = None) -> None:
    job = get_current_job()
    current_id.set(job.id if job else "-")
    game_id.set(game)


T = TypeVar("T")


def planned(body: Callable[[], T], pipe: Pipeline | None = None) -> T:
    """Run a job's body, then, in this same job, what it would have enqueued next
    (`Jobs.deferring`): the resolution of a step its order completed, and a commit's
    notices, made and sent at once (`notices`). So a resolved step costs one job, not
    one for the resolution, one for the notices and one per webhook. A deferred call
    that fails is enqueued after all (RQ's retries and the failed registry see it);
    if the body itself raises, its deferred calls are enqueued before RQ sees the error.
    `pipe` (a drain job's): a commit's notices go to it, made and sent beside the job
    (`Pipeline.notices`), instead of in turn."""
    k = kontor()
    try:
        with k.jobs.deferring() as later:
            out = body()
    except BaseException:
        _enqueue(k, later)
        raise
    failed: list[queue.Call] = []
    while later:
        call = later.pop(0)
        more: list[queue.Call] = []
        try:
            with k.jobs.deferring() as more:
                if call.task is queue.resolve:
                    with k.jobs.holding(*call.args):
                        k.resolve(*call.args)
                elif pipe is not None:
                    pipe.notices(*call.args)
                else:
                    notices(k, *call.args)
        except Exception:
            log.exception("%s%s failed in the job that planned it; enqueued", call.task.name, call.args)
            failed.append(call)
        later.extend(more)
    _enqueue(k, failed)
    return out


_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def pool() -> ThreadPoolExecutor:
    """The process's threads that make and send commits' notices beside its drain job
    (`IN_FLIGHT`)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(IN_FLIGHT, thread_name_prefix="notices")
        return _pool


class Pipeline:
    """A drain job's commits whose notices are made and sent beside it (at most
    `IN_FLIGHT` at once), each wholly as the job would make them itself (`planned` of
    `notices`: the notices lock, the deliveries stored, sent, recorded, the mark moved as
    the lock is let go, in that order), so that the job takes its next step while a
    commit's webhooks are in flight instead of waiting for every receiver's answer.

    A game's commits stay in order: its notices lock lets one job at a time make them,
    and one that finds it taken leaves them to the holder, which looks again as it lets
    go (`Notifier.catch_up`). A process that dies meanwhile leaves what a job that died
    in its sends leaves: the lock expires, the mark has not moved, a step still held is
    reaped, and the sweep's notify job sends what was never attempted (the deliveries'
    ids are derived: none twice). The job ends only after them (`join`)."""

    def __init__(self, k: Kontor, lease: str) -> None:
        self.k, self.lease = k, lease
        self.slots = threading.BoundedSemaphore(IN_FLIGHT)
        self.futures: list[Future[None]] = []
        self._made: list[str] = []  # held items whose notices are made, not yet let go
        self._made_lock = threading.Lock()

    def notices(self, game: str, through: int, held: bool = False) -> None:
        """Make and send the game's notices through event `through` beside the job (a
        notify job of their own if that fails); waits while `IN_FLIGHT` commits are.
        `held`: the job holds the ready list's item `<game> -<through>` (`Jobs.take`),
        let go of once they are made: by the job's next take (`made`), in the same script
        call, or as the job ends. (Meanwhile the heartbeat renews its hold as before.)"""
        self.slots.acquire()
        self.futures = [f for f in self.futures if not f.done()]
        ctx = contextvars.copy_context()  # (the log's ids)
        ctx.run(queue.not_deferring)
        try:
            self.futures.append(pool().submit(ctx.run, self._run, game, through, held))
        except BaseException:
            self.slots.release()
            raise

    def _run(self, game: str, through: int, held: bool) -> None:
        try:
            planned(functools.partial(notices, self.k, game, through))
        except Exception:
            log.exception("game %s: notices through %d failed in a drain job; enqueued on their own", game, through)
            self.k.jobs.notify(game, through)
        finally:
            if held:
                with self._made_lock:
                    self._made.append(queue.held_member(game, -through, self.lease))
            self.slots.release()

    def made(self) -> list[str]:
        """The held items whose notices were made since the last call (`notices`), for the
        job's next take to let go of (`Jobs.take`'s `also`)."""
        with self._made_lock:
            out, self._made = self._made, []
        return out

    def unmade(self, members: list[str]) -> None:
        """Items `made` answered that were not let go of after all (the take failed)."""
        with self._made_lock:
            self._made[:0] = members

    def join(self) -> None:
        """Wait for every commit handed to the pipeline; raise the first error of one
        that could not even be enqueued on its own."""
        futures, self.futures = self.futures, []
        errors = [e for e in (f.exception() for f in futures) if e is not None]
        if errors:
            raise errors[0]


def _enqueue(k: Kontor, calls: list[queue.Call]) -> None:
    for call in calls:
        if call.task is queue.resolve:
            k.jobs.resolve(*call.args)
        else:
            k.jobs.notify(*call.args)


def notices(k: Kontor, game: str, through: int) -> int:
    """Make the notices of a game's events through `through` and send its webhooks from
    this job (`deliver_all`); mail and retries are jobs of their own."""
    return Notifier(k, send=deliver_all).catch_up(game, through)


@queue.resolve.body
def resolve(game: str, phase: int) -> str:
    _tag(game)
    k = kontor()

    def body() -> str:
        with k.jobs.holding(game, phase):
            return k.resolve(game, phase)
    return planned(body)


@queue.drain.body
def drain(lease: str) -> int:
    """Resolve the steps of the ready list while it has any (`Jobs.take`), each as the
    `resolve` job would (`planned`: its bots' orders and its notices in this same job). A
    step whose resolution fails gets a `resolve` job of its own (RQ's retries and failed
    registry see it) and the drain goes on. An item of a negative step is a commit's
    notices (`Jobs.notices_ready`: a web resolved the step), made as the notify job makes
    them (a notify job of their own if that fails). A commit's notices, either way, are
    made and sent beside the drain (`Pipeline`), which takes its next step meanwhile; the
    job ends once they are. Stops taking after `DRAIN_SECONDS` (another
    drain job is then started if steps wait), well inside the job's timeout. Its lease
    and the step it holds are renewed by the heartbeat while it works (`Jobs.draining`,
    `Jobs.take`): killed, its step is resolved again within seconds (`Jobs.reap`)."""
    k = kontor()
    end = time.monotonic() + DRAIN_SECONDS
    n = 0
    done: tuple[str, int] | None = None  # the step resolved last, still held until the next take
    pipe = Pipeline(k, lease)  # commits' notices, made and sent beside the drain
    with k.jobs.draining(lease):
        try:
            while time.monotonic() < end:
                made = pipe.made()
                try:
                    step, done = k.jobs.take(lease, done=done, also=made), None
                except BaseException:
                    pipe.unmade(made)
                    raise
                if step is None:
                    return n
                game, phase = step
                n += 1
                _tag(game)
                if phase < 0:  # a commit's notices, through event -phase (`Jobs.notices_ready`)
                    pipe.notices(game, -phase, held=True)  # (held until they are made)
                    continue
                try:
                    planned(functools.partial(k.resolve, game, phase), pipe)
                except Exception:
                    log.exception("game %s phase %d: resolving failed in a drain job; enqueued on its own", game,
                                  phase)
                    k.jobs.resolve_job(game, phase)
                done = step
            pipe.join()
            k.jobs.hand_over(lease)
        finally:
            try:
                pipe.join()  # the job ends after its commits' notices
            finally:
                last = [queue.held_member(*done, lease)] if done is not None else []
                k.jobs.release_held([*pipe.made(), *last])
    return n


@queue.deadline.body
def deadline(game: str, phase: int) -> str:
    _tag(game)
    return planned(lambda: kontor().deadline(game, phase))


@queue.bot_order.body
def bot_order(game: str, phase: int, seat: int) -> str:
    _tag(game)
    return planned(lambda: kontor().bot_order(game, phase, seat))


@queue.notify.body
def notify(game: str, through: int) -> int:
    _tag(game)
    return notices(kontor(), game, through)


@queue.send_mail.body
def send_mail(game: str, delivery: str, attempt: int) -> str:
    _tag(game)
    return send_delivery(kontor(), game, delivery, attempt)


@queue.send_webhook.body
def send_webhook(game: str, delivery: str, attempt: int) -> str:
    _tag(game)
    return deliver(kontor(), game, delivery, attempt)


@queue.inbound_mail.body
def inbound_mail(mail_id: str) -> str:
    _tag()
    return process(kontor(), mail_id)


@queue.absence_end.body
def absence_end(game: str, seat: int) -> int:
    _tag(game)
    return kontor().absence_end(game, seat)


@queue.noop.body
def noop() -> str:
    return "ok"
