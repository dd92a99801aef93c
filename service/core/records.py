"""The stored order record, built in one place for every way an order comes in.

A seat's order for a step is stored as one JSON text, `{"order", "via", "at", "jti",
"token"}`, and its receipt is the digest of exactly that text. Two paths store it:

* `Orders.submit` (the route, mail, bots) builds the record with `order_record`, and
  `submit.lua` stores `dumps(record)`;
* the fast path (`service.http.fastpath`) cannot know the time stamp before the store
  script runs (it is the store's clock at the moment of storing), so it takes the same
  record's text split at its time stamp (`order_record_around_time`), and `order.lua`
  stores `head .. stamp .. tail`, the stamp formatted as `stamp` formats it.

Both texts come from the one `order_record` dict through the one `dumps`, so the two
paths store the same bytes for the same order (`tests/service/test_intake_fast.py`
guards it: the same records, receipts and store effects from both paths).
"""

from __future__ import annotations

import hashlib
from typing import Any

from service.store import dumps

#: The empty time stamp the record's text is split at (see `order_record_around_time`).
_AT = '"at":""'


def stamp(now: float) -> str:
    """The record's time stamp: the store's clock in seconds with microseconds,
    `%.6f` (order.lua formats its clock with `string.format('%.6f', now)`)."""
    return f"{now:.6f}"


def order_record(order: Any, via: str, at: str, jti: str | None, token: str | None) -> dict[str, Any]:
    """The record stored for an order: `at` its time stamp (`stamp`), `jti` and `token`
    the one-time id and the signed token it came in (None for a bot's or an unsigned
    mail's order). The key order is part of the stored text, hence of the receipt."""
    return {"order": order, "via": via, "at": at, "jti": jti, "token": token}


def order_record_around_time(order: Any, via: str, jti: str | None, token: str | None) -> tuple[str, str]:
    """`(head, tail)` with `head + at + tail == dumps(order_record(order, via, at, jti,
    token))` for every time stamp `at` made by `stamp` (digits and a dot need no JSON
    escaping).

    The text is the record's with an empty time stamp, split after the last `"at":"`:
    the record's own. Only `jti` and `token` follow it, two JSON strings (or nulls), and
    inside a JSON string every `"` is written `\\"`, so `:"` never occurs there."""
    head, at, tail = dumps(order_record(order, via, "", jti, token)).rpartition(_AT)
    return head + at[:-1], at[-1:] + tail


def receipt_of_text(text: str) -> str:
    """The receipt of a stored record's JSON text: a short digest quoted back to the
    seat (`service.core.base.receipt_of` is this of `dumps(record)`)."""
    return hashlib.sha256(text.encode()).hexdigest()[:20]
