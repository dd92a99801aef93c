"""A game's closed events, packed: the old part of a game's events stream is kept as
compressed chunks, so a long game costs a fraction of the memory its stream took.

The events stream (`events`) holds event n as entry `<n>-1` (fields `e`, `at`, and on a
commit's events `c`, `d`; on a resolved step's first event also `h`, the step's history
record; and `v`, the counts behind each viewer's event ids, `service.store.numbering`).
Event numbers run 1, 2, 3, ... without gaps (`meta.event_seq` counts them; the store's
own numbers, never shown: a viewer is shown ids of its own), so chunk k holds events
`k*CHUNK + 1` to `(k+1)*CHUNK`. Once a chunk is full, `compact` packs it (raw deflate of
one compact JSON array of `[n, event, at, c, d, h]`, and `v` after them when the event has
counts, behind a format byte) onto the game's `archive` LIST (entry k = chunk k), the
counts after its last event onto `chunkids` (entry k, for `event_find.lua`), and trims
it from the stream in one script (archive.lua), so at any moment the archive holds events
`1..ARCHIVE_LEN*CHUNK` and the stream every event after them: never both, never neither.
A reader reads the stream, then the archive's length (in one pipeline, `read`), then
unpacks the chunks it needs: chunks never change once written, and a chunk packed between
its two reads has its events in both, so the stream's copies of packed events are dropped
(`merge`); nothing is missed, as the archive only grows.

Who compacts: the store, right after a commit or an appended message that filled a chunk
(`Effects.commit_step`, `Games.append_events`). Lost with a process (a kill between the
commit and the compaction), it is done by the next one: `compact` packs every full chunk
not packed yet. Nothing else depends on it: the events are all there either way.

Games stored before the archive existed have none (length 0): their stream is read as is,
and their chunks are packed at their next compaction.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from typing import Any

from redis.client import NEVER_DECODE

from service.store.json import dumps, loads

#: Events per packed chunk. 32 Die Händler events (about 3.7 KB as stream entries) pack
#: into about 0.9 KB; smaller chunks pack worse, larger ones leave more in the stream.
CHUNK = 32

#: The first byte of a packed chunk: its format (raw deflate of compact JSON).
FORMAT = b"\x01"

#: One event as the readers get it: number, event, and its stream fields (`at`, and on a
#: commit's events `c`, `d` and maybe `h`; `e` left out).
Row = tuple[int, dict[str, Any], dict[str, str]]


def pack(rows: Iterable[Row]) -> bytes:
    """A chunk's packed form."""
    items = [[n, ev, f["at"], f.get("c"), f.get("d"), loads(f["h"]) if "h" in f else None,
              *([f.get("v"), loads(f["x"])] if "x" in f else [f["v"]] if "v" in f else [])] for n, ev, f in rows]
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return FORMAT + c.compress(dumps(items).encode()) + c.flush()


def unpack(blob: bytes) -> list[Row]:
    """The rows of a packed chunk (ValueError for an unknown format)."""
    if blob[:1] != FORMAT:
        raise ValueError(f"unknown packed chunk format {blob[:1]!r}")
    out: list[Row] = []
    # [n, ev, at, c, d, h] then the counts `v` when stored, and an unprompted action's
    # history record `x` (act.lua) after them (`v` null when there are none).
    for n, ev, at, c, d, h, *v in loads(zlib.decompress(blob[1:], -15)):
        fields = {"at": at}
        if c is not None:
            fields["c"] = c
        if d is not None:
            fields["d"] = d
        if h is not None:
            fields["h"] = dumps(h)
        if v and v[0] is not None:
            fields["v"] = v[0]
        if len(v) > 1:
            fields["x"] = dumps(v[1])
        out.append((int(n), ev, fields))
    return out


def stream_rows(raw: Any) -> list[Row]:
    """Rows of an XRANGE answer."""
    return [(int(i.split("-")[0]), loads(f["e"]), {k: v for k, v in f.items() if k != "e"}) for i, f in raw]


def chunks_of(first: int, last: int) -> tuple[int, int]:
    """The chunks (first, last index) holding events `first` to `last`."""
    return (first - 1) // CHUNK, (last - 1) // CHUNK


def read_chunks(r: Any, key: str, first: int, last: int) -> list[Row]:
    """The rows of packed chunks `first` to `last` (indexes) of archive `key`."""
    blobs = r.execute_command("LRANGE", key, first, last, **{NEVER_DECODE: True})
    return [row for blob in blobs for row in unpack(blob)]


def merge(r: Any, key: str, packed: int, lo: int, hi: int | None, count: int | None, stream: Any) -> list[Row]:
    """Events `lo` to `hi` (None: to the last), at most `count` (None: all), from the
    archive `key` holding `packed` chunks and `stream`, the XRANGE answer for them read
    just before `packed` was (events packed in between are taken from the archive)."""
    rows: list[Row] = []
    archived = packed * CHUNK
    if lo <= archived and (hi is None or hi >= lo):
        top = archived if hi is None else min(hi, archived)
        if count is not None:
            top = min(top, lo + count - 1)
        first, last = chunks_of(lo, top)
        rows = [row for row in read_chunks(r, key, first, last) if lo <= row[0] <= top]
    rows += [row for row in stream_rows(stream) if row[0] > archived]
    return rows if count is None else rows[:count]


def read(r: Any, events_key: str, archive_key: str, lo: int, hi: int | None, count: int | None) -> list[Row]:
    """Events `lo` to `hi` (None: to the last), at most `count` (None: all), of a game:
    the stream, then the archive's length (one round trip), then the packed chunks needed."""
    pipe = r.pipeline(transaction=False)
    pipe.xrange(events_key, min=f"{lo}-1", max=f"{hi}-1" if hi is not None else "+", count=count)
    pipe.llen(archive_key)
    raw, packed = pipe.execute()
    return merge(r, archive_key, int(packed), lo, hi, count, raw)


def compact(r: Any, script: Any, events_key: str, archive_key: str, meta_key: str, ids_key: str) -> int:
    """Pack every full chunk of a game's events not packed yet (see the module's
    docstring); the number of chunks packed now. Safe to run twice at once: the script
    packs chunk k only while the archive holds k chunks and the stream events k*CHUNK+1..."""
    done = 0
    while True:
        pipe = r.pipeline(transaction=True)
        pipe.llen(archive_key)
        pipe.hget(meta_key, "event_seq")
        packed, seq = pipe.execute()
        first, last = packed * CHUNK + 1, (packed + 1) * CHUNK
        if last > int(seq or 0):
            return done
        rows = stream_rows(r.xrange(events_key, min=f"{first}-1", max=f"{last}-1"))
        if [n for n, _, _ in rows] != list(range(first, last + 1)):
            return done  # not there as expected (packed meanwhile): nothing to do now
        if not int(script(keys=[events_key, archive_key, ids_key], args=[packed, first, last, pack(rows)])):
            return done
        done += 1


def filled(last: int, added: int) -> bool:
    """Whether appending `added` events numbered through `last` filled a chunk."""
    return added > 0 and (last - added) // CHUNK != last // CHUNK
