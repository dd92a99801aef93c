"""Events: what a resolve tells the world, each with who may see it.

An event is a plain dict `{"type": ..., "visible_to": "all" | [seats], ...data}` so it
can be stored and sent as JSON unchanged. A sealed order is revealed only in the event
of the step that resolves it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Event = dict[str, Any]

ALL = "all"


def event(type_: str, audience: str | Iterable[int] = ALL, **data: Any) -> Event:
    """Build an event; `audience` is `ALL` or the seats that may see it."""
    vis: str | list[int] = ALL if audience == ALL else sorted(set(audience))  # type: ignore[arg-type]
    return {"type": type_, "visible_to": vis, **data}


def visible_to(ev: Event, viewer: int | str) -> bool:
    """Whether `viewer` (a seat, "public" or "admin") may see `ev`."""
    if viewer == "admin" or ev["visible_to"] == ALL:
        return True
    return isinstance(viewer, int) and viewer in ev["visible_to"]
