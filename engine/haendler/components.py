"""Die Händler components, cards and rule constants, read from `components.toml`.

Printed costs, card counts, credit amounts and the like are data (rules §1, §14): this
module validates the file and exposes it as one frozen `Components` object.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NoReturn

from engine.core.errors import DataError
from engine.haendler.board import DATA

FORMAT = "die-haendler-components/1"
ABILITY_KINDS = ("buy", "movement", "messenger", "price", "warehouse")
_INTS = (
    "start_money", "money_step", "carts", "master_slots", "other_slots", "max_buy",
    "credit_cards", "credit_value", "credit_repay", "arrival_cap", "max_levels_per_round",
    "guenstiger_einkauf_price", "lagerverkauf_max", "sonder_verkauf_price",
    "sozialer_aufstieg_price", "pair_price",
)  # fmt: skip


@dataclass(frozen=True)
class Ability:
    id: str
    name: str
    cost: int
    kind: str
    points: int = 0
    spaces: tuple[int, ...] = ()
    wrap: bool = False


@dataclass(frozen=True)
class Components:
    start_money: int
    money_step: int
    tiles: tuple[int, ...]
    carts: int
    master_slots: int
    other_slots: int
    max_buy: int
    credit_cards: int
    credit_value: int
    credit_repay: int
    arrival_cap: int
    max_levels_per_round: int
    guenstiger_einkauf_price: int
    lagerverkauf_max: int
    sonder_verkauf_price: int
    sozialer_aufstieg_price: int
    pair_price: int
    light_tariff: tuple[int, int]
    default_ranking: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]
    end_threshold: dict[int, int]
    abilities: dict[str, Ability]  # in the order of the table in H-8
    influence: dict[str, int]  # kind -> count
    influence_names: dict[str, str]
    light_removed: frozenset[str]


@lru_cache(maxsize=1)
def components() -> Components:
    """The validated components file shipped with the engine."""
    path = DATA / "components.toml"
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise DataError("components.toml", "(syntax)", str(exc)) from None
    return parse_components(doc, "components.toml")


def parse_components(doc: dict[str, Any], file: str) -> Components:
    def fail(field: str, problem: str) -> NoReturn:
        raise DataError(file, field, problem)

    if doc.get("format") != FORMAT:
        fail("format", f"must be {FORMAT!r}")
    for key in _INTS:
        v = doc.get(key)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            fail(key, "must be a non-negative integer")
    abilities: dict[str, Ability] = {}
    for i, a in enumerate(doc.get("abilities") or []):
        if a.get("kind") not in ABILITY_KINDS or not isinstance(a.get("cost"), int):
            fail(f"abilities[{i}]", f"needs an integer cost and a kind in {ABILITY_KINDS}")
        abilities[a["id"]] = Ability(
            id=a["id"], name=a.get("name", a["id"]), cost=a["cost"], kind=a["kind"],
            points=int(a.get("points", 0)), spaces=tuple(a.get("spaces", ())),
            wrap=bool(a.get("wrap", False)),
        )  # fmt: skip
    if len(abilities) != 8:
        fail("abilities", "needs the 8 special ability cards")
    influence = {c["id"]: c.get("count") for c in doc.get("influence") or []}
    if len(influence) != 5 or not all(isinstance(n, int) and n > 0 for n in influence.values()):
        fail("influence", "needs the 5 influence kinds, each with a positive count")
    pairs = doc.get("pairs") or []
    flat = [c for pair in pairs for c in pair]
    if any(len(p) != 2 for p in pairs) or sorted(flat) != sorted(abilities):
        fail("pairs", "must pair up all 8 ability cards")
    ranking = doc.get("default_ranking") or []
    if sorted(ranking) != sorted(influence):
        fail("default_ranking", "must rank every influence kind once")
    thresholds = {int(k): v for k, v in (doc.get("end_threshold") or {}).items()}
    if sorted(thresholds) != [2, 3, 4]:
        fail("end_threshold", "needs a threshold for 2, 3 and 4 players")
    tiles = doc.get("tiles")
    if not isinstance(tiles, list) or not tiles or not all(isinstance(t, int) for t in tiles):
        fail("tiles", "must be a list of tile values")
    tariff = doc.get("light_tariff")
    if not isinstance(tariff, list) or len(tariff) != 2:
        fail("light_tariff", "must be [price for 1, price for 2]")
    return Components(
        **{k: doc[k] for k in _INTS},
        tiles=tuple(tiles),
        light_tariff=(tariff[0], tariff[1]),
        default_ranking=tuple(ranking),
        pairs=tuple((p[0], p[1]) for p in pairs),
        end_threshold=thresholds,
        abilities=abilities,
        influence=influence,
        influence_names={c["id"]: c.get("name", c["id"]) for c in doc["influence"]},
        light_removed=frozenset(c["id"] for c in doc["influence"] if not c.get("light", True)),
    )
