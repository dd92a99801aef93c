"""RQ jobs. Each takes ids and the expected phase, checks, then acts; running one twice
is harmless (the store's compare-and-set makes a duplicate a no-op). Exceptions are
never swallowed, so RQ's retries and failed-job registry see them."""

from __future__ import annotations

import functools

from rq import get_current_job

from service.config import Settings
from service.games import Kontor
from service.logs import current_id

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


def _tag() -> None:
    job = get_current_job()
    current_id.set(job.id if job else "-")


def resolve(game: str, phase: int) -> str:
    _tag()
    return kontor().resolve(game, phase)


def deadline(game: str, phase: int) -> str:
    _tag()
    return kontor().deadline(game, phase)


def bot_order(game: str, phase: int, seat: int) -> str:
    _tag()
    return kontor().bot_order(game, phase, seat)


def notify_commit(game: str, closing: int, first_event: int, last_event: int, deadline: str) -> int:
    _tag()
    from service.notify import Notifier

    return Notifier(kontor()).commit(game, closing, first_event, last_event, deadline)


def notify_events(game: str, first_event: int, last_event: int) -> int:
    _tag()
    from service.notify import Notifier

    return Notifier(kontor()).events(game, first_event, last_event)


def send_mail(game: str, delivery: str, attempt: int) -> str:
    _tag()
    from service.mail import send_delivery

    return send_delivery(kontor(), game, delivery, attempt)


def send_webhook(game: str, delivery: str, attempt: int) -> str:
    _tag()
    from service.webhooks import deliver

    return deliver(kontor(), game, delivery, attempt)


def inbound_mail(mail_id: str) -> str:
    _tag()
    from service.inbound import process

    return process(kontor(), mail_id)


def noop() -> str:
    """The benchmark's floor: an empty job."""
    return "ok"
