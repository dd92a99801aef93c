"""Absences (issue 25): the dates each seat of a game declared it is away
(`service.core.absence`), and the schedule the sweep walks to tell a seat, once an
absence has ended, what was played for it.

Keys (`service.store.keys`): per game `absences` HASH seat -> JSON list of
`{"from": s, "until": s}` (whole seconds since the epoch, sorted; an absence that has
ended stays listed until it was told: absence_told.lua takes it out as it appends the
summary event); global `{absences-B}` ZSET "<game>:<seat>" -> the end of the seat's
earliest listed absence, in bucket B = crc32(game) mod `INDEX_BUCKETS` (written before
and after the seat's list, so no listed absence is unknown to the sweep).
"""

from __future__ import annotations

from typing import Any

from service.store import archive
from service.store.base import Base
from service.store.games import Outcome
from service.store.json import dumps, loads
from service.store.keys import INDEX_BUCKETS


class Absences(Base):
    """Mixin of `Store`: the seats' absences."""

    def absences_key(self, game: str) -> str:
        return self.key(game, "absences")

    def absence_due_key(self, game: str) -> str:
        """The bucket of the absences' schedule that holds `game`'s seats."""
        return self.absence_due_bucket(self.bucket_of(game))

    def absence_due_bucket(self, bucket: int) -> str:
        return f"{self.prefix}:{{absences-{bucket}}}"

    def absences(self, game: str) -> dict[int, list[dict[str, int]]]:
        """Every seat's listed absences (one round trip)."""
        return {int(s): loads(raw) for s, raw in self.r.hgetall(self.absences_key(game)).items()}

    def seat_absences(self, game: str, seat: int) -> tuple[list[dict[str, int]], str]:
        """A seat's listed absences and their stored text (for `set_absences`' compare)."""
        raw = self.r.hget(self.absences_key(game), str(seat)) or ""
        return (loads(raw) if raw else []), raw

    def set_absences(self, game: str, seat: int, read: str, absences: list[dict[str, int]]) -> bool:
        """Replace a seat's list if it is still `read` (absences.lua); False: it moved."""
        out = self._run("absences", [self.absences_key(game)], [seat, read, dumps(absences) if absences else ""])
        return out[0] == "ok"

    def tell_absence(self, game: str, seat: int, start: int, end: int, event: dict[str, Any]) -> Outcome:
        """Take the ended absence `start`..`end` off the seat's list and append `event` in
        one script (absence_told.lua): Outcome('ok', first, last), 'told' or 'no_game'."""
        keys = [self.key(game, "meta"), self.key(game, "events"), self.absences_key(game)]
        out = self._run("absence_told", keys, [seat, start, end, dumps(event)])
        if out[0] == "ok" and archive.filled(int(out[2]), 1):
            self.compact_events(game)  # type: ignore[attr-defined]
        return Outcome(out[0], out[1] if len(out) > 1 else "", out[2] if len(out) > 2 else "")

    def set_policy(self, game: str, read: str, policy: dict[str, Any]) -> bool:
        """Replace the game's deadline policy if it is still `read` (a compare-and-set)."""
        return self._run("policy_set", [self.key(game, "meta")], [read, dumps(policy)])[0] == "ok"

    def plan_absence_end(self, game: str, seat: int, at: float | None) -> None:
        """Put the seat's earliest listed absence end `at` on the sweep's schedule (None:
        take it off)."""
        if at is None:
            self.r.zrem(self.absence_due_key(game), f"{game}:{seat}")
        else:
            self.r.zadd(self.absence_due_key(game), {f"{game}:{seat}": at})

    def due_absence_ends(self, now: float, limit: int) -> list[tuple[str, int]]:
        """(game, seat) of absences that ended by `now`, up to `limit` per bucket."""
        pipe = self.r.pipeline(transaction=False)
        for b in range(INDEX_BUCKETS):
            pipe.zrangebyscore(self.absence_due_bucket(b), "-inf", now, start=0, num=limit)
        out = []
        for rows in pipe.execute():
            for member in rows:
                game, _, seat = member.rpartition(":")
                out.append((game, int(seat)))
        return out
