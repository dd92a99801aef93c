"""RQ jobs. Each takes ids and the expected phase, checks, then acts; running one twice
is harmless (the store's compare-and-set makes a duplicate a no-op). Exceptions are
never swallowed, so RQ's retries and failed-job registry see them."""

from __future__ import annotations

import functools

from service.config import Settings
from service.games import Kontor

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


def resolve(game: str, phase: int) -> str:
    return kontor().resolve(game, phase)


def deadline(game: str, phase: int) -> str:
    return kontor().deadline(game, phase)


def bot_order(game: str, phase: int, seat: int) -> str:
    return kontor().bot_order(game, phase, seat)


def noop() -> str:
    """The benchmark's floor: an empty job."""
    return "ok"
