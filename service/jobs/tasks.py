"""The bodies of the jobs declared in `service.jobs.queue`, attached with `@<task>.body`.

Each takes ids and the expected step, checks, then acts; running one twice is harmless
(the store's compare-and-set makes a duplicate a no-op; a notice's deliveries have ids
derived from what they tell, so a second notify job sends nothing twice). Exceptions
are never swallowed, so RQ's retries and failed-job registry see them. The worker imports this module before
its first job (`workers/__main__.py`).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
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


def planned(body: Callable[[], T]) -> T:
    """Run a job's body, then, in this same job, what it would have enqueued next
    (`Jobs.deferring`): the resolution of a step its order completed, and a commit's
    notices, made and sent at once (`notices`). So a resolved step costs one job, not
    one for the resolution, one for the notices and one per webhook. A deferred call
    that fails is enqueued after all (RQ's retries and the failed registry see it);
    if the body itself raises, its deferred calls are enqueued before RQ sees the error."""
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
                else:
                    notices(k, *call.args)
        except Exception:
            log.exception("%s%s failed in the job that planned it; enqueued", call.task.name, call.args)
            failed.append(call)
        later.extend(more)
    _enqueue(k, failed)
    return out


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
    them (a notify job of their own if that fails). Stops taking after `DRAIN_SECONDS` (another
    drain job is then started if steps wait), well inside the job's timeout. Its lease
    and the step it holds are renewed by the heartbeat while it works (`Jobs.draining`,
    `Jobs.take`): killed, its step is resolved again within seconds (`Jobs.reap`)."""
    k = kontor()
    end = time.monotonic() + DRAIN_SECONDS
    n = 0
    done: tuple[str, int] | None = None  # the step resolved last, still held until the next take
    with k.jobs.draining(lease):
        try:
            while time.monotonic() < end:
                step, done = k.jobs.take(lease, done=done), None
                if step is None:
                    return n
                game, phase = step
                n += 1
                _tag(game)
                if phase < 0:  # a commit's notices, through event -phase (`Jobs.notices_ready`)
                    try:
                        planned(functools.partial(notices, k, game, -phase))
                    except Exception:
                        log.exception("game %s: notices through %d failed in a drain job; enqueued on their own",
                                      game, -phase)
                        k.jobs.notify(game, -phase)
                    done = step
                    continue
                try:
                    planned(functools.partial(k.resolve, game, phase))
                except Exception:
                    log.exception("game %s phase %d: resolving failed in a drain job; enqueued on its own", game,
                                  phase)
                    k.jobs.resolve_job(game, phase)
                done = step
            k.jobs.hand_over(lease)
        finally:
            if done is not None:
                k.jobs.release(*done, lease)
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
