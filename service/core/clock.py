"""Time as the service shows it. The one clock is the store's (`Store.now`)."""

from __future__ import annotations

from datetime import UTC, datetime

#: Stored time stamps (text) most recently shown, and how: a live stream shows each event's
#: time to every viewer of the game, so most are made once, not once per stream.
_SHOWN: dict[str, str] = {}
#: At most so many kept (then the memory starts again).
SHOWN_KEPT = 4096


def iso(ts: float | str | None) -> str | None:
    """A UTC time stamp with its offset, to the millisecond."""
    if ts in (None, ""):
        return None
    if type(ts) is str:
        out = _SHOWN.get(ts)
        if out is None:
            out = datetime.fromtimestamp(float(ts), UTC).isoformat(timespec="milliseconds")
            if len(_SHOWN) >= SHOWN_KEPT:
                _SHOWN.clear()
            _SHOWN[ts] = out
        return out
    return datetime.fromtimestamp(float(ts), UTC).isoformat(timespec="milliseconds")  # type: ignore[arg-type]
