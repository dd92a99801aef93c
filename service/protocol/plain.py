"""Orders in plain words, for players who answer by mail without tools: `bid 300`,
`levels 1`, `space Magdeburg`, `pass`, `default`. Read against the step's own order (its
default order, which names the order's fields, and the kind's JSON Schema), so no title
is named here; `plain_form` writes an order the same way, for a mail to show the exact
words that reply with it.

Grammar (case-insensitive; commas, semicolons, colons and `=` separate like spaces):

* `default` (or `default order`): the step's default order.
* `pass`: the default order with every list and mapping emptied, understood only where
  that leaves nothing chosen (every value null, 0, false, empty): "pass" never plays a
  substantive default (a city, a card) behind the player's back.
* `FIELD VALUE ...` pairs, a field being one of the order's own (`bid`, `levels`): the
  values up to the next field name are that field's value, a list when the field's
  default is a list or more than one value follows. A value is a number, `true`/`false`,
  `none`/`null`, or a word kept as text. An order of one field whose default is a single
  value may leave its name out (`300` for `bid 300`) when the reply names no field.
* Filler words (`I`, `my`, `order`, `please`, `and`, ...) are skipped unless they are a
  field's name.
* Fields the default order holds as null and the reply leaves out stay null (not doing
  that optional thing); no other default is merged in.

Anything else is refused with the reason (`ValueError`); what is understood is still
checked by the engine like any order. Nested orders (lists of objects) cannot be said in
plain words: they take `KEY=VALUE` lines with JSON values, or a JSON object.
"""

from __future__ import annotations

import re
from typing import Any

from service.protocol.pairs import parse_value

#: Words a plain order may hold around its fields.
FILLER = frozenset({"i", "my", "order", "orders", "is", "please", "and", "the", "a", "an", "to", "want", "will",
                    "play", "choose", "thanks", "thank", "you"})
#: Words read as null.
NONE_WORDS = frozenset({"none", "null", "nothing", "-"})
_SPLIT = re.compile(r"[\s,;:=]+")


def fields_of(default: dict[str, Any], schema: dict[str, Any] | None) -> list[str]:
    """The order's own field names: the default order's, then the schema's (not `kind`)."""
    props = (schema or {}).get("properties") or {}
    names = list(default) + [p for p in props if p not in default]
    return [n for n in names if n != "kind"]


def _key(word: str) -> str:
    return word.lower().replace("-", "_")


def _value(word: str) -> Any:
    if word.lower() in NONE_WORDS:
        return None
    if word.lower() in ("true", "yes"):
        return True
    if word.lower() in ("false", "no"):
        return False
    return parse_value(word)


def emptied(value: Any) -> Any:
    """A value with nothing chosen: lists and mappings empty, everything else as it is."""
    return [] if isinstance(value, list) else {} if isinstance(value, dict) else value


def nothing(value: Any) -> bool:
    return value in (None, 0, False, "", [], {}) and not (isinstance(value, float) and value != 0)


def read_plain(text: str, default: dict[str, Any], schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """The order `text` says in plain words (see the module's grammar); ValueError says
    why it cannot be read."""
    words = [w for w in _SPLIT.split(text.strip()) if w]
    if not words:
        raise ValueError("the reply holds no order")
    lowered = [w.lower().strip(".!") for w in words]
    if lowered in (["default"], ["default", "order"], ["use", "default"], ["use", "default", "order"]):
        return dict(default)
    if lowered == ["pass"]:
        passed = {k: emptied(v) for k, v in default.items()}
        if not all(nothing(v) for v in passed.values()):
            raise ValueError(f"this step has no 'pass' (your default order is {plain_form(default, schema)!r}); "
                             "reply 'default' for it, or say your order")
        return passed
    names = fields_of(default, schema)
    known = {_key(n): n for n in names}
    main = [n for n in default if n != "kind"]
    implicit = (len(main) == 1 and not isinstance(default[main[0]], list | dict)
                and not any(_key(w.strip(".!")) in known for w in words))
    out: dict[str, list[Any]] = {}
    current: str | None = None
    for word in words:
        key = _key(word.strip(".!"))
        if key in known:
            current = known[key]
            if current in out:
                raise ValueError(f"the reply names {current!r} twice")
            out[current] = []
        elif key in FILLER and current is None:
            continue
        elif current is None:
            if not implicit:
                raise ValueError(f"{word!r} is not a field of this step's order: start with one of "
                                 f"{', '.join(names)}")
            current = main[0]
            out[current] = [_value(word.strip("."))]
        elif key in FILLER:
            continue
        else:
            out[current].append(_value(word.strip(".")))
    order: dict[str, Any] = {}
    for name, values in out.items():
        if not values:
            raise ValueError(f"{name!r} has no value after it")
        many = isinstance(default.get(name), list) or ((schema or {}).get("properties", {}).get(name) or {}).get(
            "type") == "array"
        order[name] = values if many or len(values) > 1 else values[0]
        if many and values == [None]:
            order[name] = []
    for name, value in default.items():
        if name not in order and value is None:
            order[name] = None
    return order


def plain_form(order: Any, schema: dict[str, Any] | None = None) -> str | None:
    """`order` in the words `read_plain` reads back to it (`bid 300`, `carts 1 2`,
    `pos 1 bid none`), or None when it cannot be said so (nested values, text with
    spaces, or a name that reads as something else)."""
    if not isinstance(order, dict):
        return None
    if not order:
        return "pass"
    parts: list[str] = []
    names = {_key(n) for n in fields_of(order, schema)}
    for key, value in order.items():
        values = value if isinstance(value, list) else [value]
        if isinstance(value, list) and not value:
            values = ["none"]
        said = []
        for v in values:
            if isinstance(v, dict | list):
                return None
            word = "none" if v is None else ("true" if v is True else "false" if v is False else str(v))
            if not word or _SPLIT.search(word) or _key(word) in names or _key(word) in FILLER:
                return None
            said.append(word)
        parts.append(" ".join([key, *said]))
    text = " ".join(parts)
    try:
        back = read_plain(text, order, schema)
    except ValueError:
        return None
    return text if back == order else None
