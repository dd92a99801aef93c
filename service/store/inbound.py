"""The inbound aggregate: mails received for orders (`service.channels.inbound`), each
kept as a HASH of text fields (the raw mail, its envelope, then its outcome and receipt)
for a limited time, with an index by receipt time."""

from __future__ import annotations

from service.store.base import Base
from service.store.keys import INDEX_BUCKETS


class Inbound(Base):
    """Mixin of `Store`: keep an inbound mail, claim it for judging once, note its outcome."""

    def keep_inbound(self, mail_id: str, fields: dict[str, str], now: float, keep: float) -> None:
        """Keep a new inbound mail's fields for `keep` seconds and index it at `now`; index
        entries older than `keep` are dropped on the way. The mail itself first (one
        transaction on its own key), then its index bucket's entry (another, on the
        bucket): each within one slot. A crash in between leaves a kept mail that the
        index does not list; its job was not queued yet, and its sender was not told
        it was taken, so nothing is lost that was promised."""
        key, index = self.inbound_key(mail_id), self.inbound_index_key(mail_id)
        pipe = self.r.pipeline(transaction=True)
        pipe.hset(key, mapping=fields)  # type: ignore[arg-type]
        pipe.expire(key, int(keep))
        pipe.execute()
        pipe = self.r.pipeline(transaction=True)
        pipe.zadd(index, {mail_id: now})
        pipe.zremrangebyscore(index, "-inf", now - keep)
        pipe.execute()

    def inbound_ids(self) -> list[str]:
        """Every indexed inbound mail's id, oldest first (every bucket of the index)."""
        pipe = self.r.pipeline(transaction=False)
        for b in range(INDEX_BUCKETS):
            pipe.zrange(self.inbound_bucket(b), 0, -1, withscores=True)
        entries = [(float(at), mail_id) for bucket in pipe.execute() for mail_id, at in bucket]
        return [mail_id for _, mail_id in sorted(entries)]

    def inbound(self, mail_id: str) -> dict[str, str]:
        """A kept inbound mail's fields as stored; empty when it is gone."""
        return self.r.hgetall(self.inbound_key(mail_id))  # type: ignore[return-value]

    def claim_inbound(self, mail_id: str) -> bool:
        """True for the one caller that may judge the mail (its `status` becomes
        `processing`); False when it was claimed already (a duplicate job)."""
        return bool(self.r.hsetnx(self.inbound_key(mail_id), "status", "processing"))

    def release_inbound(self, mail_id: str) -> None:
        """Undo `claim_inbound`, so a retry of the job may judge the mail again."""
        self.r.hdel(self.inbound_key(mail_id), "status")

    def note_inbound(self, mail_id: str, fields: dict[str, str]) -> None:
        """Set some fields of a kept inbound mail (its outcome, its receipt)."""
        self.r.hset(self.inbound_key(mail_id), mapping=fields)  # type: ignore[arg-type]
