"""The bodies of the jobs declared in `service.jobs.queue`, attached with `@<task>.body`.

Each takes ids and the expected step, checks, then acts; running one twice is harmless
(the store's compare-and-set makes a duplicate a no-op; a notice's deliveries have ids
derived from what they tell, so a second notify job sends nothing twice). Exceptions
are never swallowed, so RQ's retries and failed-job registry see them. The worker imports this module before
its first job (`workers/__main__.py`).
"""

from __future__ import annotations

import functools

from rq import get_current_job

from service.channels.inbound.judge import process
from service.channels.mail.send import send_delivery
from service.channels.notify import Notifier
from service.channels.webhook.deliver import deliver
from service.config import Settings
from service.core.kontor import Kontor
from service.jobs import queue
from service.logs import current_id, game_id

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


@queue.resolve.body
def resolve(game: str, phase: int) -> str:
    _tag(game)
    return kontor().resolve(game, phase)


@queue.deadline.body
def deadline(game: str, phase: int) -> str:
    _tag(game)
    return kontor().deadline(game, phase)


@queue.bot_order.body
def bot_order(game: str, phase: int, seat: int) -> str:
    _tag(game)
    return kontor().bot_order(game, phase, seat)


@queue.notify.body
def notify(game: str, through: int) -> int:
    _tag(game)
    return Notifier(kontor()).catch_up(game, through)


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


@queue.noop.body
def noop() -> str:
    return "ok"
