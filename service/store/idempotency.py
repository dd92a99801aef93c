"""The idempotency aggregate: `Idempotency-Key` records per client, so a retried request
is answered with the first answer instead of being done twice (`service.http.api`).
"""

from __future__ import annotations

from typing import Any

from service.store.base import Base
from service.store.json import dumps, loads


class Idempotency(Base):
    """Mixin of `Store`: a key's record is claimed (in flight), finished (the answer kept
    for replay) or released (the request failed: the key may be used again)."""

    def idem_claim(self, client: str, key: str, fingerprint: str, ttl: int) -> dict[str, Any] | None:
        """None if this request may go ahead (the key is now in flight), else the record."""
        k = self.idem_key(client, key)
        if self.r.set(k, dumps({"state": "inflight", "fp": fingerprint}), nx=True, ex=ttl):
            return None
        raw = self.r.get(k)
        return loads(raw) if raw else {"state": "inflight", "fp": fingerprint}

    def idem_finish(self, client: str, key: str, fingerprint: str, status: int, body: Any,
                    headers: dict[str, str], ttl: int) -> None:
        k = self.idem_key(client, key)
        self.r.set(k, dumps({"state": "done", "fp": fingerprint, "status": status, "body": body,
                             "headers": headers}), ex=ttl)

    def idem_release(self, client: str, key: str) -> None:
        self.r.delete(self.idem_key(client, key))
