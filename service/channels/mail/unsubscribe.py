"""Unsubscribe tokens: `<base64url of the address>.<HMAC of it>` under the server secret,
so no one can unsubscribe an address they did not mail. Used by the mail renderer (the
link and `List-Unsubscribe`), the unsubscribe page and the inbound `unsubscribe@` address.
"""

from __future__ import annotations

import base64
import hmac
from typing import TYPE_CHECKING

from service.channels.secret import mac
from service.core.errors import Problem

if TYPE_CHECKING:
    from service.core.kontor import Kontor


def unsubscribe_token(k: Kontor, address: str) -> str:
    """`<base64url of the address>.<HMAC of it>` (the address lowercased)."""
    addr = address.strip().lower()
    encoded = base64.urlsafe_b64encode(addr.encode()).decode().rstrip("=")
    return f"{encoded}.{mac(k, 'unsub', addr, length=24)}"


def unsubscribe_address(k: Kontor, token: str) -> str:
    """The address a genuine unsubscribe token names; any other token: `no_such_token`."""
    encoded, _, signature = token.rpartition(".")
    addr = None
    if encoded and len(token) <= 1024:
        try:
            addr = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
        except (ValueError, UnicodeDecodeError):  # binascii.Error is a ValueError
            addr = None
    if addr is None or not hmac.compare_digest(signature.encode(), mac(k, "unsub", addr, length=24).encode()):
        raise Problem("no_such_token", "this unsubscribe link is not valid (it may have been cut or mistyped)")
    return addr


def unsubscribe_by_token(k: Kontor, token: str, on: bool = True) -> str:
    """Unsubscribe (`on=False`: subscribe again) the address a token names; the address.
    Used by the unsubscribe links and by mail to `unsubscribe@<mail_domain>`. A token
    that is not genuine changes nothing (`no_such_token`)."""
    address = unsubscribe_address(k, token)
    k.store.set_unsubscribed(address, on)
    return address


def unsubscribe_url(k: Kontor, address: str) -> str:
    return f"{k.settings.public_url.rstrip('/')}/unsubscribe/{unsubscribe_token(k, address)}"
