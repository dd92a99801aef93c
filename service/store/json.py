"""The one compact-JSON helper (`dumps`) and its strict reader (`loads`).

Everything the service writes as JSON text for itself (store records, scripts' arguments,
receipts' digests, webhook payloads) is written by `dumps`: no spaces after `,` and `:`,
so the same data is the same bytes everywhere (a receipt is a digest of these bytes, a
webhook signature covers them).

Both are strict: `NaN`, `Infinity` and `-Infinity` are not JSON (RFC 8259 §6), and a
number that is not a number would slip past every range check (`NaN > limit` is false),
so `dumps` refuses to write them and `loads` refuses to read them (ValueError).

(Inside `service/store/` an `import json` still is the standard library's: absolute imports.)
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["dumps", "loads"]

# One encoder per option set, made once: `json.dumps` with any option builds a new
# encoder on every call, and `dumps` is on the order path.
_ENCODERS = {(ascii_only, sort): json.JSONEncoder(separators=(",", ":"), allow_nan=False,
                                                  ensure_ascii=ascii_only, sort_keys=sort)
             for ascii_only in (True, False) for sort in (True, False)}


def dumps(data: Any, *, ensure_ascii: bool = True, sort_keys: bool = False) -> str:
    """Compact JSON text of `data`, as `json.dumps(data, separators=(",", ":"))` writes
    it, but never with NaN or an infinity (ValueError)."""
    return _ENCODERS[ensure_ascii, sort_keys].encode(data)


def _refuse(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")


_DECODER = json.JSONDecoder(parse_constant=_refuse)


def loads(text: str | bytes | bytearray) -> Any:
    """The value of JSON text (UTF-8 when given bytes); ValueError for anything that is
    not JSON, `NaN`, `Infinity` and `-Infinity` included."""
    if not isinstance(text, str):
        text = bytes(text).decode()
    return _DECODER.decode(text)
