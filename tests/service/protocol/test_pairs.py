"""`KEY=VALUE` orders: a value is strict JSON or else its text."""

from __future__ import annotations

from typing import Any

import pytest

from service.protocol.pairs import parse_pairs, parse_value


@pytest.mark.parametrize("text, value", [
    ("300", 300), ("true", True), ("[1,2]", [1, 2]), ('{"a": 1}', {"a": 1}), ("wein", "wein"), ("", ""),
    ("2.5", 2.5), ('"quoted"', "quoted"),
])
def test_values_are_json_or_text(text: str, value: Any) -> None:
    assert parse_value(text) == value and type(parse_value(text)) is type(value)


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", "1e999", "[NaN]", "[" * 5000 + "]" * 5000])
def test_what_is_not_strict_json_stays_text(text: str) -> None:
    """Before: NaN and inf as numbers (a bid of NaN compares false with every limit), and a
    RecursionError for the deep one."""
    assert parse_value(text) == text


def test_pairs() -> None:
    assert parse_pairs(["bid=300", " good = wein", "x=NaN"]) == {"bid": 300, "good": " wein", "x": "NaN"}
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_pairs(["novalue"])
