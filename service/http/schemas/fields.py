"""Strict marshmallow fields for what clients send: a value of the wrong type is refused,
never converted with a loss (marshmallow's defaults take `"2"` and `10.5` as the integers
2 and 10, `true` as 1, `"yes"` and `1` as true, and `１` (a full-width digit) as 1).

Bodies are JSON, so their fields take exactly the JSON type. Query strings are text, so
their numbers are parsed from ASCII digits only."""

from __future__ import annotations

import re
from typing import Any

from marshmallow import fields as f

_QUERY_INT = re.compile(r"-?[0-9]{1,18}")
#: The largest integer `QueryInt` reads (18 digits); a field without a smaller bound
#: states it in the document.
QUERY_INT_MAX = 10**18 - 1
_QUERY_FLOAT = re.compile(r"-?[0-9]{1,18}(\.[0-9]{1,18})?([eE][-+]?[0-9]{1,3})?")


class Int(f.Integer):
    """A JSON integer: not a string, not a float (not even `2.0`), not a boolean."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(strict=True, **kwargs)


class Bool(f.Boolean):
    """A JSON `true` or `false`, nothing else (not `1`, which equals `True` in Python)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> bool:
        if type(value) is not bool:
            raise self.make_error("invalid", input=value)
        return value


class QueryInt(f.Integer):
    """An integer in a query string: ASCII digits, an optional minus."""

    def _validated(self, value: Any) -> int:
        if not (isinstance(value, str) and _QUERY_INT.fullmatch(value)):
            raise self.make_error("invalid")
        return super()._validated(value)  # type: ignore[no-any-return]


class QueryFloat(f.Float):
    """A finite number in a query string, written with ASCII digits."""

    def _validated(self, value: Any) -> float:
        if not (isinstance(value, str) and _QUERY_FLOAT.fullmatch(value)):
            raise self.make_error("invalid")
        return super()._validated(value)  # type: ignore[no-any-return]
