"""Event ids per viewer: each viewer numbers the events it may see 1, 2, 3, ... with no
gaps, so its ids say nothing about the events it may not see (how many, or when).

A game's events are stored in one order (event n is stream entry `<n>-1`, `meta.event_seq`
counts them: the store's own, internal number). With each event the script that appends
it (commit.lua, act.lua, append.lua, through the prelude numbering.lua) stores the
*counts* at that point, field `v`: `"P,S0,S1,..."`, how many events so far the public may
see (P) and each seat may see (Sk: the public ones and those shown to seat k), and keeps
the counts after the last event in the meta (`event_ids`). Viewer v's id of an event it
may see is its count after that event; a viewer that may not see an event sees no id of
it, and its count does not move.

Reading after a viewer id `a` (`/events?after=`, `Last-Event-ID`) starts at the event
where the viewer's count reached `a`: found in one script (event_find.lua) by a binary
search over the stream, or, for events already packed (`service.store.archive`), over the
list `chunkids` (entry k: the counts after chunk k's last event), then the reader reads
on from there and keeps the events the viewer may see with an id above `a`.

Games stored before the counts existed (events with no `v`, no `event_ids` in the meta)
go on without them; their counts are made on the fly from the start of their events
(`count`), at a read's cost proportional to the game's length.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from engine.core.events import ALL
from service.store import archive

#: The counts after an event: (public, seat 0, seat 1, ...).
Counts = tuple[int, ...]

#: One event with its counts: (stored number, event, time stamp, counts).
Numbered = tuple[int, dict[str, Any], str, Counts]


class Start(NamedTuple):
    """Where a viewer's events after its id `after` begin (`Games.event_start`): the
    stored number `lo` of the first event to read, the counts before it, the counts now
    (after the last event) and the stored number of the last event."""

    lo: int
    before: Counts
    now: Counts
    seq: int


def zeros(seats: int) -> Counts:
    return (0,) * (seats + 1)


def parse(raw: str | None) -> Counts | None:
    """Counts as stored (`v`, `event_ids`), None for none."""
    return tuple(int(x) for x in raw.split(",")) if raw else None


def slot(viewer: int | str) -> int:
    """A viewer's place in the counts: 0 the public, k + 1 seat k."""
    if viewer == "public":
        return 0
    if isinstance(viewer, int) and not isinstance(viewer, bool) and viewer >= 0:
        return viewer + 1
    raise ValueError(f"no event numbering for viewer {viewer!r}")


def step(before: Counts, ev: dict[str, Any]) -> Counts:
    """The counts after event `ev` (what the scripts store with it: numbering.lua)."""
    vis = ev.get("visible_to")
    if vis == ALL:
        return tuple(c + 1 for c in before)
    seen = {s + 1 for s in vis if isinstance(s, int) and s >= 0} if isinstance(vis, list) else set()
    return tuple(c + 1 if i in seen else c for i, c in enumerate(before))


def count(rows: Iterable[tuple[int, dict[str, Any], str, Counts | None]], before: Counts) -> list[Numbered]:
    """`rows` (consecutive events, the first right after the counts `before`) each with
    its counts: as stored, else (a game stored before the counts) made here."""
    out: list[Numbered] = []
    for n, ev, at, counts in rows:
        before = counts if counts is not None else step(before, ev)
        out.append((n, ev, at, before))
    return out


def sees(ev: dict[str, Any], viewer: int | str) -> bool:
    vis = ev.get("visible_to")
    return vis == ALL or (isinstance(viewer, int) and isinstance(vis, list) and viewer in vis)


def rows_of(rows: Iterable[tuple[int, dict[str, Any], dict[str, str]]]) -> list[
        tuple[int, dict[str, Any], str, Counts | None]]:
    """Rows as the archive reads them (`service.store.archive.Row`) with their stored counts."""
    return [(n, ev, f["at"], parse(f.get("v"))) for n, ev, f in rows]


def counted(r: Any, events_key: str, archive_key: str, meta_key: str, first: int, last: int,
            rows: list[archive.Row] | None = None) -> list[tuple[int, dict[str, Any], dict[str, str], Counts]]:
    """Events `first` to `last` (archive rows; `rows`: as read already) each with its
    counts: as stored, or for a game stored before the counts, made from its first event on."""
    if rows is None:
        rows = archive.read(r, events_key, archive_key, first, last, None)
    if any("v" not in f for _, _, f in rows):
        seats = int(r.hget(meta_key, "seats") or 0)
        rows = archive.read(r, events_key, archive_key, 1, last, None) if first > 1 else rows
        counts = dict((n, c) for n, _, _, c in count(rows_of(rows), zeros(seats)))
        return [(n, ev, f, counts[n]) for n, ev, f in rows if n >= first]
    return [(n, ev, f, parse(f["v"]) or ()) for n, ev, f in rows]
