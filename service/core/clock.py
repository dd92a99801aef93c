"""Time as the service shows it. The one clock is the store's (`Store.now`)."""

from __future__ import annotations

import functools
from datetime import UTC, datetime


def iso(ts: float | str | None) -> str | None:
    """A UTC time stamp with its offset, to the millisecond."""
    if ts in (None, ""):
        return None
    return _iso(float(ts))  # type: ignore[arg-type]


@functools.lru_cache(maxsize=1024)
def _iso(ts: float) -> str:
    """`iso` of a number (kept: a commit stamps its records with the same few times)."""
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds")
