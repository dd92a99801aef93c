"""Time as the service shows it. The one clock is the store's (`Store.now`)."""

from __future__ import annotations

from datetime import UTC, datetime


def iso(ts: float | str | None) -> str | None:
    """A UTC time stamp with its offset, to the millisecond."""
    if ts in (None, ""):
        return None
    return datetime.fromtimestamp(float(ts), UTC).isoformat(timespec="milliseconds")  # type: ignore[arg-type]
