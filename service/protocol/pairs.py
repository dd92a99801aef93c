"""Orders written as `KEY=VALUE` pairs (the `kontor order -k` flags and order blocks in
mail): each VALUE is JSON when it parses as strict JSON, else text.

Strict (`jsonlimits.loads`): `bid=NaN` or `bid=1e999` is the text it reads as, not a
number that passes every range check by comparing false, and a value nested thousands
deep is text too, not a `RecursionError` in the mail worker.
"""

from __future__ import annotations

from typing import Any

from service.protocol.jsonlimits import loads


def parse_value(text: str) -> Any:
    """A JSON value when `text` parses as one (`300`, `true`, `[1,2]`), else the text itself."""
    try:
        return loads(text)
    except ValueError:
        return text


def parse_pairs(pairs: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """`("bid=300", "good=wein")` -> `{"bid": 300, "good": "wein"}`; ValueError names a
    pair that is not KEY=VALUE."""
    out: dict[str, Any] = {}
    for pair in pairs:
        k, sep, v = pair.partition("=")
        if not sep or not k.strip():
            raise ValueError(f"{pair!r} is not KEY=VALUE")
        out[k.strip()] = parse_value(v)
    return out
