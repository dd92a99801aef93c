"""Strict JSON for everything that comes over the wire: bodies and token payloads.

Python's `json` module is lenient in two ways an attacker can use:

* It accepts `NaN`, `Infinity` and `-Infinity` (and turns `1e999` into `inf`). A claim
  `"exp": NaN` compares false with everything, so a bearer token would never expire.
* It recurses once per nesting level: a body of 10,000 `[` ends in a `RecursionError`
  (a 500) before any schema sees it.

`check_depth` refuses text nested deeper than `MAX_DEPTH` without recursing, and
`loads` is `json.loads` after that check with the non-finite numbers refused. Both raise
subclasses of `ValueError` (as `json.loads` does for bad JSON), so callers that already
refuse malformed JSON refuse these too; callers that want a distinct answer (the HTTP
layer answers `too_deep`) catch `TooDeep` first.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

#: The deepest nesting of arrays and objects accepted. Kontor's own documents (orders,
#: views, settings) stay far below it.
MAX_DEPTH = 32

#: A JSON string (with its escapes): brackets inside strings do not nest.
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class TooDeep(ValueError):
    """The JSON text nests arrays and objects deeper than allowed."""


class NotFinite(ValueError):
    """The JSON text holds NaN, Infinity, -Infinity or a number too large for a double."""


def check_depth(text: str | bytes, limit: int = MAX_DEPTH) -> None:
    """Raise `TooDeep` when `text` nests arrays and objects more than `limit` deep.

    Works on the text, before any parser recursion, and never recurses itself. Text that
    is not JSON is not judged here (the parser refuses it afterwards)."""
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8", errors="replace")
    if text.count("[") + text.count("{") <= limit:  # the common case: cannot be too deep
        return
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    depth = 0
    for ch in brackets:
        if ch in "[{":
            depth += 1
            if depth > limit:
                raise TooDeep(f"JSON nested more than {limit} levels deep")
        elif depth:
            depth -= 1


def _constant(name: str) -> Any:
    raise NotFinite(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NotFinite(f"{text} is out of range")
    return value


def loads(text: str | bytes, limit: int = MAX_DEPTH) -> Any:
    """`json.loads`, strictly: at most `limit` levels deep (`TooDeep`), finite numbers
    only (`NotFinite`); other malformed text raises `json.JSONDecodeError` as usual."""
    check_depth(text, limit)
    return json.loads(text, parse_constant=_constant, parse_float=_finite)
