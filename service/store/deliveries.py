"""The deliveries aggregate: what the channels keep (`service.channels`): seats' contact
settings, delivery records of mails and webhooks, unsubscribed addresses, the once-per-step
reminder marks, and the notices waiting for a digest mail.
"""

from __future__ import annotations

from typing import Any

import redis

from service.store.base import Base
from service.store.json import dumps, loads
from service.store.keys import INDEX_BUCKETS

#: How many delivery records are kept per seat (the oldest are dropped).
DELIVERIES_KEPT = 500
#: How many notices are held for a seat's next mail in `asked` mode (the oldest are dropped).
HELD_KEPT = 60


class Deliveries(Base):
    """Mixin of `Store`: contacts, deliveries, unsubscribed addresses, reminders, digests."""

    def has_contacts(self, game: str) -> bool:
        """Whether any seat of the game set a contact (else nobody is to be told anything)."""
        return bool(self.r.hlen(self.key(game, "contact")))

    def with_contacts(self, games: list[str]) -> list[str]:
        """The games (of `games`, in that order) in which any seat set a contact, in one
        round trip."""
        pipe = self.r.pipeline(transaction=False)
        for game in games:
            pipe.hlen(self.key(game, "contact"))
        return [game for game, n in zip(games, pipe.execute(), strict=True) if n]

    def contacts(self, game: str) -> dict[int, dict[str, Any]]:
        raw: dict[str, str] = self.r.hgetall(self.key(game, "contact"))  # type: ignore[assignment]
        return contacts_of(raw)

    def contacts_and_time(self, game: str) -> tuple[dict[int, dict[str, Any]], float]:
        """`contacts` and the store's clock (`now`), in one round trip."""
        pipe = self.r.pipeline(transaction=False)
        pipe.hgetall(self.key(game, "contact"))
        if isinstance(self.r, redis.RedisCluster):  # a cluster pipeline takes no TIME: asked apart
            return contacts_of(pipe.execute()[0]), self.now()
        pipe.time()
        raw, (sec, micro) = pipe.execute()
        return contacts_of(raw), float(sec) + micro / 1e6

    def contact(self, game: str, seat: int) -> dict[str, Any] | None:
        raw = self.r.hget(self.key(game, "contact"), str(seat))
        return loads(raw) if raw else None  # type: ignore[arg-type]

    def set_contact(self, game: str, seat: int, record: dict[str, Any]) -> None:
        self.r.hset(self.key(game, "contact"), str(seat), dumps(record))

    def gone(self, game: str) -> dict[str, dict[str, Any]]:
        """The game's former contacts ("<seat>:<n>" -> {seat, kid, contact, through,
        told}): contacts of holders the host replaced, oldest first per seat (seat.lua)."""
        raw: dict[str, str] = self.r.hgetall(self.key(game, "gone"))  # type: ignore[assignment]
        return gone_of(raw)

    def gone_contact(self, game: str, field: str) -> dict[str, Any] | None:
        """The contact settings of one former contact (`gone`), as its holder set them."""
        raw = self.r.hget(self.key(game, "gone"), field)
        return loads(loads(raw)["contact"]) if raw else None  # type: ignore[arg-type]

    def mark_gone_told(self, game: str, field: str) -> None:
        """A former contact has had its one farewell: nothing more goes to it."""
        key = self.key(game, "gone")

        def change(pipe: Any) -> None:
            raw = pipe.hget(key, field)
            if raw is None:
                return
            rec = loads(raw)
            rec["told"] = True
            pipe.multi()
            pipe.hset(key, field, dumps(rec))

        self.r.transaction(change, key)

    def drop_gone_mark(self, game: str, seat: int, field: str) -> None:
        """Take the mark of former contact `field` off the seat's contact once its
        farewell is made (unless the new holder has set a contact over it)."""
        key = self.key(game, "contact")

        def change(pipe: Any) -> None:
            raw = pipe.hget(key, str(seat))
            if raw is None or loads(raw).get("gone") != field:
                return
            pipe.multi()
            pipe.hdel(key, str(seat))

        self.r.transaction(change, key)

    def contact_for(self, game: str, record: dict[str, Any]) -> dict[str, Any]:
        """The contact a delivery record goes to: a former contact's for a farewell
        (`former`), else the seat's current one ({} for none)."""
        if record.get("former"):
            return self.gone_contact(game, record["former"]) or {}
        return self.contact(game, record["seat"]) or {}

    def update_contact(self, game: str, seat: int, **fields: Any) -> None:
        """Change some fields of a seat's contact (a delivery's outcome), atomically."""
        key = self.key(game, "contact")

        def change(pipe: Any) -> None:
            raw = pipe.hget(key, str(seat))
            if raw is None:
                return
            rec = loads(raw)
            rec.update(fields)
            pipe.multi()
            pipe.hset(key, str(seat), dumps(rec))

        self.r.transaction(change, key)

    def unsubscribed(self, address: str) -> bool:
        return bool(self.r.sismember(self.unsubscribed_key, address.lower()))

    def set_unsubscribed(self, address: str, on: bool = True) -> None:
        (self.r.sadd if on else self.r.srem)(self.unsubscribed_key, address.lower())

    def add_delivery(self, game: str, seat: int, record: dict[str, Any]) -> None:
        pipe = self.r.pipeline(transaction=True)
        pipe.hset(self.key(game, "delivery"), record["id"], dumps(record))
        pipe.lpush(self.key(game, "deliveries", seat), record["id"])
        pipe.ltrim(self.key(game, "deliveries", seat), 0, DELIVERIES_KEPT - 1)
        pipe.execute()

    def delivery(self, game: str, did: str) -> dict[str, Any] | None:
        raw = self.r.hget(self.key(game, "delivery"), did)
        return loads(raw) if raw else None  # type: ignore[arg-type]

    def update_delivery(self, game: str, did: str, **fields: Any) -> dict[str, Any] | None:
        """Change some fields of a delivery record, atomically; the new record."""
        key = self.key(game, "delivery")
        out: list[dict[str, Any]] = []

        def change(pipe: Any) -> None:
            raw = pipe.hget(key, did)
            if raw is None:
                return
            rec = loads(raw)
            rec.update(fields)
            pipe.multi()
            pipe.hset(key, did, dumps(rec))
            out.append(rec)

        self.r.transaction(change, key)
        return out[0] if out else None

    def deliveries(self, game: str, seat: int, limit: int) -> list[dict[str, Any]]:
        ids = self.r.lrange(self.key(game, "deliveries", seat), 0, limit - 1)
        if not ids:
            return []
        raw = self.r.hmget(self.key(game, "delivery"), ids)  # type: ignore[arg-type]
        return [loads(x) for x in raw if x]  # type: ignore[union-attr]

    def mark_reminded(self, game: str, phase: int, seat: int, now: float) -> bool:
        """True the first time for this seat and step (a reminder is sent once)."""
        return bool(self.r.hsetnx(self.key(game, "reminded"), f"{phase}:{seat}", f"{now:.6f}"))

    def push_digest(self, game: str, seat: int, notices: list[dict[str, Any]], due: float) -> None:
        """Keep notices for the seat's next digest, which is due at `due` unless it was
        scheduled already (the game's bucket of the schedule, `digests_key`, member
        `<game>:<seat>`). Two calls, each within one slot (the game's, then the bucket's):
        the notices first, then the schedule (ZADD NX: a second call changes nothing), so a
        sweep that takes the schedule in between still finds the notices or leaves a new
        schedule for them."""
        self.r.rpush(self.key(game, "digest", seat), *(dumps(n) for n in notices))
        self.r.zadd(self.digests_key(game), {f"{game}:{seat}": due}, nx=True)

    def due_digests(self, now: float) -> list[tuple[str, int]]:
        """Take the digests due by `now` off the schedule, every bucket of it (and the
        schedule of a store written before the buckets): (game, seat) of each this process
        removed (ZREM), so exactly one process sends each."""
        keys = [self.digests_bucket(b) for b in range(INDEX_BUCKETS)] + [self.digests_before_key]
        pipe = self.r.pipeline(transaction=False)
        for key in keys:
            pipe.zrangebyscore(key, "-inf", now)
        out = []
        for key, members in zip(keys, pipe.execute(), strict=True):
            for member in members:
                game, _, seat = member.rpartition(":")
                if self.r.zrem(key, member):
                    out.append((game, int(seat)))
        return out

    def held(self, game: str, seat: int) -> list[dict[str, Any]]:
        """The notices held for the seat's next mail, oldest first."""
        return [loads(x) for x in self.r.lrange(self.key(game, "held", seat), 0, -1)]  # type: ignore[union-attr]

    def drop_held(self, game: str, seat: int, count: int) -> None:
        """Drop the `count` oldest held notices (those a mail now tells)."""
        if count:
            self.r.ltrim(self.key(game, "held", seat), count, -1)

    def take_digest(self, game: str, seat: int) -> list[dict[str, Any]]:
        """Take (and remove) every notice waiting for the seat's digest, atomically."""
        pipe = self.r.pipeline(transaction=True)
        pipe.lrange(self.key(game, "digest", seat), 0, -1)
        pipe.delete(self.key(game, "digest", seat))
        raw, _ = pipe.execute()
        return [loads(x) for x in raw]


def contacts_of(raw: dict[str, str]) -> dict[int, dict[str, Any]]:
    """The contacts hash as read (`Deliveries.contacts`), by seat."""
    return {int(s): loads(v) for s, v in raw.items()}


def gone_of(raw: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The former contacts hash as read (`Deliveries.gone`), oldest first per seat."""
    out = {field: {**loads(v), "field": field} for field, v in raw.items()}
    return dict(sorted(out.items(), key=lambda kv: (kv[1]["seat"], int(kv[0].rpartition(":")[2]))))
