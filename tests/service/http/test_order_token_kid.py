"""The kid the request limits count an order by (`limits.token_kid`), kept per header
text: the same answer as read afresh, for any header, twice over."""

from __future__ import annotations

import base64
import json
from typing import Any

from service.http import limits


def b64(obj: Any) -> str:
    raw = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def afresh(token: Any) -> str | None:
    limits._KIDS.clear()
    return limits.token_kid(token)


def test_order_token_kid_kept_reads_as_afresh() -> None:
    tokens = [f"{b64({'alg': 'Ed25519', 'kid': 'abc_DEF-1'})}.x.y", f"{b64({'kid': 'a' * 101})}.x.y",
              f"{b64({'kid': 'spa ce'})}.x.y", f"{b64({'kid': 7})}.x.y", f"{b64([1])}.x.y", f"{b64(b'{')}.x.y",
              "!!!.x.y", ".x.y", "nodots", f"{b64({'kid': 'k'})}", f"{b64({'kid': 'k2'})}.", 12, None,
              f"{b64({'kid': 'k3', 'pad': 'x' * 400})}.x.y"]
    expected = [afresh(t) for t in tokens]
    assert expected[0] == "abc_DEF-1" and expected[-3:] == [None, None, None]
    assert expected[1] is None and expected[2] is None and expected[3] is None
    for _ in range(2):
        assert [limits.token_kid(t) for t in tokens] == expected


def test_order_token_kid_keeps_a_bounded_number() -> None:
    limits._KIDS.clear()
    for i in range(limits.KIDS_KEPT + 5):
        assert limits.token_kid(f"{b64({'kid': f'k{i}'})}.x.y") == f"k{i}"
    assert len(limits._KIDS) <= limits.KIDS_KEPT
