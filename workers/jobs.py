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


def noop() -> str:
    """The benchmark's floor: an empty job."""
    return "ok"
