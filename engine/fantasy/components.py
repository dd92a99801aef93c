"""Fantasy Business components, read from `engine/data/fantasy/fantasy-business.json`.

Item types, counts, base values, special cards and the rule constants are data (rules
§3, R10): this module validates the file (a bad file names the file and the field) and
exposes it as one frozen `Components` object, with the canonical deck order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, NoReturn

from engine.core.errors import DataError

DATA = Path(__file__).resolve().parent.parent / "data" / "fantasy"
FILE = "fantasy-business.json"
FORMAT = "fantasy-business/1"
WINDOWS = ("open", "close", "spy", "reveal", "instant")
#: The 13 special kinds the rules define (§12); the data file must name exactly these.
SPECIAL_KINDS = ("AL", "BC", "DI", "DS", "MC", "ND", "FB", "OS", "RA", "SP", "ST", "SU", "TR")


@dataclass(frozen=True)
class ItemType:
    id: str
    name: str
    base: int
    count: int


@dataclass(frozen=True)
class Special:
    id: str
    name: str
    count: int
    window: str


@dataclass(frozen=True)
class Components:
    start_crowns: int
    special_min_bid: int
    rounds: dict[int, int]
    item_types: tuple[ItemType, ...]
    specials: tuple[Special, ...]
    racketeering_amount: int
    subsidies_amount: int
    lowest_bonus: int
    provenance: str
    # derived
    types: tuple[str, ...]
    base: dict[str, int]
    type_names: dict[str, str]
    special_names: dict[str, str]
    window_of: dict[str, str]
    deck: tuple[str, ...]  # canonical deck order (§3)
    type_rank: dict[str, int]


_KIND: dict[str, str] = {}


def kind_of(card: str) -> str:
    """The type or special id of a card id ("SW3" -> "SW")."""
    kind = _KIND.get(card)
    if kind is None:
        kind = _KIND[card] = card.rstrip("0123456789")
    return kind


def copy_no(card: str) -> int:
    return int(card[len(kind_of(card)):])


@lru_cache(maxsize=1)
def components() -> Components:
    """The validated data file shipped with the engine."""
    path = DATA / FILE
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(FILE, "(syntax)", str(exc)) from None
    return parse_components(doc, FILE)


def parse_components(doc: Any, file: str) -> Components:
    def fail(field: str, problem: str) -> NoReturn:
        raise DataError(file, field, problem)

    def count(value: Any, field: str, least: int = 0) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            fail(field, f"must be a whole number of at least {least}, not {value!r}")
        return value

    def text(value: Any, field: str) -> str:
        if not isinstance(value, str) or not value.strip():
            fail(field, "must be a non-empty string")
        return value

    if not isinstance(doc, dict):
        fail("(document)", "must be a JSON object")
    if doc.get("format") != FORMAT:
        fail("format", f"must be {FORMAT!r}")
    rounds_doc = doc.get("rounds")
    if not isinstance(rounds_doc, dict) or not rounds_doc:
        fail("rounds", "must map seat counts to round counts")
    rounds: dict[int, int] = {}
    for k, v in rounds_doc.items():
        if not isinstance(k, str) or not k.isdigit():
            fail(f"rounds.{k}", "keys are seat counts")
        rounds[int(k)] = count(v, f"rounds.{k}", 1)
    types_doc = doc.get("item_types")
    if not isinstance(types_doc, list) or not types_doc:
        fail("item_types", "must be a non-empty list")
    items: list[ItemType] = []
    for i, t in enumerate(types_doc):
        if not isinstance(t, dict):
            fail(f"item_types[{i}]", "must be an object")
        tid = text(t.get("id"), f"item_types[{i}].id")
        if not tid.isalpha() or not tid.isupper():
            fail(f"item_types[{i}].id", "must be upper-case letters")
        items.append(ItemType(tid, text(t.get("name"), f"item_types[{i}].name"),
                              count(t.get("base"), f"item_types[{i}].base", 1),
                              count(t.get("count"), f"item_types[{i}].count", 1)))
    specials_doc = doc.get("specials")
    if not isinstance(specials_doc, list) or not specials_doc:
        fail("specials", "must be a non-empty list")
    specials: list[Special] = []
    for i, sp in enumerate(specials_doc):
        if not isinstance(sp, dict):
            fail(f"specials[{i}]", "must be an object")
        window = sp.get("window")
        if window not in WINDOWS:
            fail(f"specials[{i}].window", f"must be one of {', '.join(WINDOWS)}")
        specials.append(Special(text(sp.get("id"), f"specials[{i}].id"), text(sp.get("name"), f"specials[{i}].name"),
                                count(sp.get("count"), f"specials[{i}].count", 1), window))
    ids = [t.id for t in items] + [s.id for s in specials]
    dup = sorted({x for x in ids if ids.count(x) > 1})
    if dup:
        fail("item_types/specials", f"duplicate id(s) {', '.join(dup)}")
    if sorted(s.id for s in specials) != sorted(SPECIAL_KINDS):
        fail("specials", f"must list exactly the 13 kinds {', '.join(SPECIAL_KINDS)}")
    deck = tuple(f"{t.id}{n}" for t in items for n in range(1, t.count + 1)) + tuple(
        f"{s.id}{n}" for s in specials for n in range(1, s.count + 1))
    return Components(
        start_crowns=count(doc.get("start_crowns"), "start_crowns"),
        special_min_bid=count(doc.get("special_min_bid"), "special_min_bid", 1),
        rounds=rounds,
        item_types=tuple(items),
        specials=tuple(specials),
        racketeering_amount=count(doc.get("racketeering_amount"), "racketeering_amount", 1),
        subsidies_amount=count(doc.get("subsidies_amount"), "subsidies_amount", 1),
        lowest_bonus=count(doc.get("lowest_bonus"), "lowest_bonus"),
        provenance=str(doc.get("provenance", "")),
        types=tuple(t.id for t in items),
        base={t.id: t.base for t in items},
        type_names={t.id: t.name for t in items},
        special_names={s.id: s.name for s in specials},
        window_of={s.id: s.window for s in specials},
        deck=deck,
        type_rank={t.id: i for i, t in enumerate(items)},
    )
