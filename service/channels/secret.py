"""The server secret and short MACs under it: the one place the channels derive secret
addresses, links and capabilities from (reply addresses and deliveries in
`service.channels.notify`, page capabilities in `service.channels.links`, unsubscribe
tokens)."""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from service.core.kontor import Kontor


def server_secret(k: Kontor) -> bytes:
    return (k.settings.secret or k.store.secret()).encode()


def mac(k: Kontor, *parts: object, length: int = 16) -> str:
    """A short lowercase base32 HMAC-SHA256 of `parts` under the server secret."""
    digest = hmac.new(server_secret(k), "|".join(map(str, parts)).encode(), hashlib.sha256).digest()
    # (base32 writes 8 letters per 5 bytes: the first `length` letters are those of the
    # first 5 * ceil(length / 8) bytes alone)
    return base64.b32encode(digest[:5 * -(-length // 8)]).decode().lower().rstrip("=")[:length]
