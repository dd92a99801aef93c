"""The idempotency aggregate: `Idempotency-Key` records per client, so a retried request
is answered with the first answer instead of being done twice (`service.http.api`).

A finished record keeps the whole first answer (a new game's is about 2.7 KB of JSON) for
the key's lifetime, so it is stored deflated (`PACKED` and raw deflate of its JSON); a
record in flight, and any record stored before, is plain JSON.
"""

from __future__ import annotations

import zlib
from typing import Any

from redis.client import NEVER_DECODE

from service.store.base import Base
from service.store.json import dumps, loads

#: The first byte of a deflated record (JSON text never starts with it).
PACKED = b"\x01"


def _pack(record: dict[str, Any]) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return PACKED + c.compress(dumps(record).encode()) + c.flush()


def _unpack(raw: bytes) -> dict[str, Any]:
    if raw[:1] == PACKED:
        return dict(loads(zlib.decompress(raw[1:], -15)))
    return dict(loads(raw))


class Idempotency(Base):
    """Mixin of `Store`: a key's record is claimed (in flight), finished (the answer kept
    for replay) or released (the request failed: the key may be used again)."""

    def idem_claim(self, client: str, key: str, fingerprint: str, ttl: int) -> dict[str, Any] | None:
        """None if this request may go ahead (the key is now in flight), else the record."""
        k = self.idem_key(client, key)
        if self.r.set(k, dumps({"state": "inflight", "fp": fingerprint}), nx=True, ex=ttl):
            return None
        raw = self.r.execute_command("GET", k, **{NEVER_DECODE: True})
        return _unpack(raw) if raw else {"state": "inflight", "fp": fingerprint}

    def idem_finish(self, client: str, key: str, fingerprint: str, status: int, body: Any,
                    headers: dict[str, str], ttl: int, game: str | None = None) -> None:
        """Keep the first answer for `ttl` seconds; when it is about a `game`, note the
        record in the game's `idem` set, so it goes with the game (lobby expiry)."""
        k = self.idem_key(client, key)
        pipe = self.r.pipeline(transaction=False)
        pipe.set(k, _pack({"state": "done", "fp": fingerprint, "status": status, "body": body,
                           "headers": headers}), ex=ttl)
        if game:
            pipe.sadd(self.key(game, "idem"), k)
            pipe.expire(self.key(game, "idem"), ttl)
        pipe.execute()

    def idem_release(self, client: str, key: str) -> None:
        self.r.delete(self.idem_key(client, key))
