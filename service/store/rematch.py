"""The rematch aggregate: a finished game's claim of its rematch, the rematch's game made
with every seat filled, the finished game told once, and the intents the sweep finishes
(`service.core.rematch`).

Order of the writes (each one is safe to repeat, so a crash anywhere leaves nothing the
next request or the sweep cannot finish):

1. the intent (`rematches`, a global ZSET: finished game -> when it was asked), before
   anything else, so the sweep finds every rematch begun;
2. the claim in the finished game's slot (rematch_claim.lua): the new game's id and host
   key, once; later callers read them back;
3. the new game: its registry entry, its meta, keys, seats and contacts in one script
   (rematch_create.lua), its listing index entries (as `Games.create`); then its start,
   a compare-and-set commit like any start;
4. the finished game told, once (rematch_told.lua: the event `rematch_started`);
5. the intent dropped.
"""

from __future__ import annotations

from typing import Any

from service.store import archive
from service.store.base import Base
from service.store.games import Outcome
from service.store.json import dumps

#: Seconds a rematch intent may wait before the sweep finishes it (a request still
#: working on it is far quicker; finishing it twice is harmless anyway).
REMATCH_GRACE = 30


class Rematches(Base):
    """Mixin of `Store`: rematches."""

    def intend_rematch(self, game: str, now: float) -> None:
        """Record that `game`'s rematch is being made (kept until `rematch_done`)."""
        self.r.zadd(self.rematches_key, {game: now}, nx=True)

    def rematch_done(self, game: str) -> None:
        self.r.zrem(self.rematches_key, game)

    def rematch_intents(self, before: float, limit: int) -> list[str]:
        """The finished games whose rematch was begun at or before `before` and not
        finished (oldest first, at most `limit`)."""
        return list(self.r.zrangebyscore(self.rematches_key, "-inf", repr(before), start=0, num=limit))  # type: ignore[arg-type]

    def claim_rematch(self, game: str, candidate: str, host_key: str) -> Outcome:
        """Claim `game`'s rematch for the new game id `candidate` with host key `host_key`
        (rematch_claim.lua): Outcome('new'|'claimed', id, host key) or ('no_game'|'not_finished')."""
        out = self._run("rematch_claim", [self.key(game, "meta")], [candidate, host_key])
        return Outcome(*out)

    def create_rematch(self, game: str, meta: dict[str, str], host_kid: str,
                       seats: dict[int, dict[str, Any]], contacts: dict[int, dict[str, Any]]) -> bool:
        """Create the rematch's game `game` with its `seats` (records) and `contacts`
        (rematch_create.lua; False when it exists already), with its registry entry first
        and its listing index entries after, as `Games.create` does."""
        created = float(meta["created_at"])
        self.r.zadd(self.games_key(game), {game: created}, nx=True)
        args: list[Any] = [game, host_kid, len(seats)]
        for seat, rec in sorted(seats.items()):
            args += [seat, rec.get("kid") or "", dumps(rec)]
        args.append(len(contacts))
        for seat, contact in sorted(contacts.items()):
            args += [seat, dumps(contact)]
        args += [x for kv in meta.items() for x in kv]
        keys = [self.key(game, "meta"), self.key(game, "keys"), self.key(game, "seats"), self.key(game, "contact")]
        made = bool(self.scripts["rematch_create"](keys=keys, args=args))
        if made:  # (an existing game: a creation cut short has the repair add what it left out)
            pipe = self.r.pipeline(transaction=False)
            for index in ("all", "lobby"):
                pipe.zadd(self.index_key(index, game), {game: created}, nx=True)
            pipe.execute()
        return made

    def tell_rematch(self, game: str, new: str, event: dict[str, Any]) -> Outcome:
        """Append `event` (`rematch_started`) to the finished `game` once, if its rematch is
        `new` (rematch_told.lua): Outcome('told', event number) or ('kept', why)."""
        out = Outcome(*self._run("rematch_told", [self.key(game, "meta"), self.key(game, "events")],
                                 [new, dumps(event)]))
        if out.status == "told" and archive.filled(int(out.value), 1):
            self.compact_events(game)  # type: ignore[attr-defined]
        return out
