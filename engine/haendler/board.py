"""The Die Händler board file: loading, validation (rules §18.9) and the road graph.

A board is a TOML document (or the same structure as a dict, for a board a user
supplies inline). Every check names the file and the field that failed. The rules read
the board only through `Board`, never through numbers in code.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, NoReturn

from engine.core.errors import DataError

DATA = Path(__file__).resolve().parent.parent / "data" / "haendler"
BOARDS = DATA / "boards"
FORMAT = "die-haendler-board/1"
#: The six good types of H-3; a board must use exactly these ids.
GOODS = ("tuch", "wein", "salz", "nahrung", "eisen", "seide")


@dataclass(frozen=True)
class Board:
    """A validated board with its directed road graph (successors in board order)."""

    id: str
    name: str
    provenance: str
    goods: tuple[str, ...]
    stock_per_type: int
    cities: tuple[str, ...]
    city_names: dict[str, str]
    produces: dict[str, frozenset[str]]
    start_cities: tuple[str, ...]
    messenger_start: str
    bonus_values: tuple[int, ...]
    bonus_with_cart: int
    bonus_without_cart: int
    price_rows: tuple[tuple[int, int], ...]
    level_names: tuple[str, ...]
    upkeep: tuple[int, ...]
    arrival_level_price: tuple[int, ...]
    nodes: tuple[str, ...]
    succ: dict[str, tuple[str, ...]]
    pred: dict[str, tuple[str, ...]]
    doc: dict[str, Any]
    key: str
    #: Display names of the goods ("Salz"), of the junctions ("Reims"), the roads as
    #: (from, to, spaces) in board order, and the optional drawing positions (x, y) of
    #: cities and junctions given by the file (empty when it gives none).
    goods_names: dict[str, str] = dataclasses.field(default_factory=dict)
    junction_names: dict[str, str] = dataclasses.field(default_factory=dict)
    roads: tuple[tuple[str, str, int], ...] = ()
    positions: dict[str, tuple[float, float]] = dataclasses.field(default_factory=dict)

    @property
    def producers(self) -> dict[str, list[str]]:
        """For each good, the cities producing it, in board order (computed once)."""
        found: dict[str, list[str]] | None = self.__dict__.get("_producers")
        if found is None:
            found = {g: [c for c in self.cities if g in self.produces[c]] for g in self.goods}
            object.__setattr__(self, "_producers", found)
        return found

    def node_name(self, node: str) -> str:
        """The display name of a city or junction (its id when it has none)."""
        return self.city_names.get(node) or self.junction_names.get(node) or node

    def is_city(self, node: str) -> bool:
        return node in self.produces

    def is_space(self, node: str) -> bool:
        return node in self.succ and node not in self.produces

    @property
    def top_row(self) -> int:
        return len(self.price_rows)

    @property
    def top_level(self) -> int:
        return len(self.upkeep)


def load_board(spec: str | dict[str, Any]) -> Board:
    """A shipped board by id (a file in `data/haendler/boards/`), or an inline document."""
    if isinstance(spec, str):
        return _load_named(spec)
    if not isinstance(spec, dict):
        raise DataError("board", "(document)", "must be a board id or a board document")
    return parse_board(spec, f"board {spec.get('id', '(inline)')!r}")


def board_names() -> list[str]:
    """Ids of the boards shipped with Kontor."""
    return sorted(p.stem for p in BOARDS.glob("*.toml"))


@lru_cache(maxsize=32)
def _load_named(name: str) -> Board:
    if "/" in name or "\\" in name or name.startswith("."):
        raise DataError("board", "id", f"{name!r} is not a board id")
    path = BOARDS / f"{name}.toml"
    if not path.is_file():
        known = ", ".join(board_names())
        raise DataError(f"boards/{name}.toml", "(file)", f"no such board (known: {known})")
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise DataError(f"boards/{name}.toml", "(syntax)", str(exc)) from None
    return parse_board(doc, f"boards/{name}.toml")


def parse_board(doc: dict[str, Any], file: str) -> Board:
    """Validate a board document (rules §18.9) and build its graph."""
    c = _Checker(file, doc)
    if doc.get("format") != FORMAT:
        c.fail("format", f"must be {FORMAT!r}")
    board_id = c.string("id")
    goods = c.list_of("goods", str)
    if sorted(goods) != sorted(GOODS) or len(goods) != len(GOODS):
        c.fail("goods", f"must be exactly {', '.join(GOODS)}")
    stock = c.positive_int("stock_per_type")

    cities = c.list_of("cities", dict)
    if len(cities) < 3:
        c.fail("cities", "a board needs at least 3 cities")
    city_ids: list[str] = []
    names: dict[str, str] = {}
    produces: dict[str, frozenset[str]] = {}
    for i, city in enumerate(cities):
        where = f"cities[{i}]"
        cid = city.get("id")
        if not isinstance(cid, str) or not cid:
            c.fail(f"{where}.id", "must be a non-empty string")
        if cid in produces:
            c.fail(f"{where}.id", f"duplicate city {cid!r}")
        made = city.get("produces")
        if not isinstance(made, list) or not made or any(g not in GOODS for g in made):
            c.fail(f"{where}.produces", "must list goods from the board's goods")
        city_ids.append(cid)
        names[cid] = str(city.get("name", cid))
        produces[cid] = frozenset(made)
    for good in GOODS:
        if not any(good in made for made in produces.values()):
            c.fail("cities", f"no city produces {good!r}")

    junction_docs = c.list_of("junctions", dict, required=False)
    junctions = [j.get("id") for j in junction_docs]
    for i, jid in enumerate(junctions):
        if not isinstance(jid, str) or not jid or jid in produces or junctions.index(jid) != i:
            c.fail(f"junctions[{i}].id", "must be a unique id that is not a city")
    goods_names = _goods_names(c, doc.get("goods_names"))
    positions = {
        **{city["id"]: p for i, city in enumerate(cities) if (p := _position(c, f"cities[{i}]", city))},
        **{j["id"]: p for i, j in enumerate(junction_docs) if (p := _position(c, f"junctions[{i}]", j))},
    }
    starts = c.list_of("start_cities", str)
    if len(starts) != 3 or len(set(starts)) != 3 or any(s not in produces for s in starts):
        c.fail("start_cities", "must name 3 distinct cities")

    succ, pred = _build_graph(c, city_ids, junctions)
    _check_connected(c, succ, pred, city_ids)

    messenger = c.string("messenger_start")
    if messenger not in succ or messenger in produces:
        c.fail("messenger_start", f"{messenger!r} is not a road space")

    rows = c.list_of("price_rows", list)
    if len(rows) < 2 or any(len(r) != 2 or not all(_is_amount(v) for v in r) for r in rows):
        c.fail("price_rows", "needs at least 2 rows of [buy, sell] non-negative integers")
    for i in range(1, len(rows)):
        if rows[i][0] < rows[i - 1][0] or rows[i][1] <= rows[i - 1][1]:
            c.fail(f"price_rows[{i}]", "buy prices may not fall and sell prices must rise")

    levels = c.list_of("status_levels", dict)
    upkeep = [lv.get("upkeep") for lv in levels]
    if len(levels) < 2 or not all(_is_amount(u) for u in upkeep):
        c.fail("status_levels", "needs at least 2 levels, each with an integer upkeep")
    if upkeep[0] != 0:
        c.fail("status_levels[0].upkeep", "level 1 must have upkeep 0")
    for i in range(1, len(upkeep)):
        if upkeep[i] < upkeep[i - 1]:
            c.fail(f"status_levels[{i}].upkeep", "upkeep may not decrease")

    arrival = c.list_of("arrival_level_price", int)
    if len(arrival) != 9 or not all(_is_amount(v) for v in arrival):
        c.fail("arrival_level_price", "needs exactly 9 non-negative integers (arrivals 0..8)")

    bonus = doc.get("bonus_track")
    if not isinstance(bonus, dict):
        c.fail("bonus_track", "must be a table with values, start_with_cart, start_without_cart")
    values = bonus.get("values")
    if not isinstance(values, list) or len(values) < 2 or not all(_is_amount(v) for v in values):
        c.fail("bonus_track.values", "needs at least 2 non-negative integers")
    if any(values[i] <= values[i - 1] for i in range(1, len(values))):
        c.fail("bonus_track.values", "must rise")
    for field in ("start_with_cart", "start_without_cart"):
        if bonus.get(field) not in values:
            c.fail(f"bonus_track.{field}", "must be one of bonus_track.values")

    key_src = json.dumps(doc, sort_keys=True, ensure_ascii=False)
    return Board(
        id=board_id,
        name=str(doc.get("name", board_id)),
        provenance=str(doc.get("provenance", "unknown")),
        goods=tuple(goods),
        stock_per_type=stock,
        cities=tuple(city_ids),
        city_names=names,
        produces=produces,
        start_cities=tuple(starts),
        messenger_start=messenger,
        bonus_values=tuple(values),
        bonus_with_cart=bonus["start_with_cart"],
        bonus_without_cart=bonus["start_without_cart"],
        price_rows=tuple((int(b), int(s)) for b, s in rows),
        level_names=tuple(str(lv.get("name", f"level {i + 1}")) for i, lv in enumerate(levels)),
        upkeep=tuple(upkeep),
        arrival_level_price=tuple(arrival),
        nodes=tuple(succ),
        succ=succ,
        pred=pred,
        doc=doc,
        key=f"{board_id}:{hashlib.sha256(key_src.encode()).hexdigest()[:16]}",
        goods_names=goods_names,
        junction_names={j["id"]: str(j.get("name", j["id"])) for j in junction_docs},
        roads=tuple((r["from"], r["to"], r["spaces"]) for r in doc["roads"]),
        positions=positions,
    )


def _goods_names(c: _Checker, names: object) -> dict[str, str]:
    """The optional `[goods_names]` table: a display name for exactly each good."""
    if names is None:
        return {g: g.capitalize() for g in GOODS}
    if not isinstance(names, dict) or sorted(names) != sorted(GOODS):
        c.fail("goods_names", f"must give a name to exactly {', '.join(GOODS)}")
    for good in GOODS:
        if not isinstance(names[good], str) or not names[good].strip():
            c.fail(f"goods_names.{good}", "must be a non-empty string")
    return {g: str(names[g]) for g in GOODS}


def _position(c: _Checker, where: str, node: dict[str, Any]) -> tuple[float, float] | None:
    """A node's optional drawing position: numbers `x` and `y`, both or neither."""
    if node.get("x") is None and node.get("y") is None:
        return None
    xy: list[float] = []
    for name in ("x", "y"):
        v = node.get(name)
        if not isinstance(v, int | float) or isinstance(v, bool) or not -1e6 <= v <= 1e6:
            c.fail(f"{where}.{name}", "must be a number (give both x and y, or neither)")
        xy.append(float(v))
    return xy[0], xy[1]


def _build_graph(
    c: _Checker, cities: list[str], junctions: list[str]
) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    succ: dict[str, list[str]] = {n: [] for n in [*cities, *junctions]}
    pred: dict[str, list[str]] = {n: [] for n in succ}
    seen: set[tuple[str, str]] = set()
    ends = set(succ)  # roads join cities and junctions, never plain road spaces (§18.4, §18.9)

    def link(a: str, b: str) -> None:
        succ[a].append(b)
        pred[b].append(a)

    for i, road in enumerate(c.list_of("roads", dict)):
        a, b, n = road.get("from"), road.get("to"), road.get("spaces")
        if not isinstance(a, str) or not isinstance(b, str) or a not in ends or b not in ends or a == b:
            c.fail(f"roads[{i}]", "must join two different existing nodes")
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            c.fail(f"roads[{i}].spaces", "must be an integer >= 0")
        if (a, b) in seen:
            c.fail(f"roads[{i}]", f"a second road from {a} to {b}")
        seen.add((a, b))
        chain = [a, *(f"{a}>{b}:{k}" for k in range(1, n + 1)), b]
        for node in chain[1:-1]:
            succ[node], pred[node] = [], []
        for x, y in zip(chain, chain[1:], strict=False):
            link(x, y)
    for node, nxt in succ.items():
        if not nxt:
            c.fail("roads", f"node {node} has no successor")
    for city in cities:
        if not pred[city]:
            c.fail("roads", f"city {city} has no entry")
    return {k: tuple(v) for k, v in succ.items()}, {k: tuple(v) for k, v in pred.items()}


def _check_connected(
    c: _Checker,
    succ: dict[str, tuple[str, ...]],
    pred: dict[str, tuple[str, ...]],
    cities: list[str],
) -> None:
    start = cities[0]
    for graph, way in ((succ, "reached from"), (pred, "able to reach")):
        seen, todo = {start}, [start]
        while todo:
            for nxt in graph[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        missing = sorted(set(succ) - seen)
        if missing:
            c.fail("roads", f"not strongly connected: {missing[0]} is not {way} {start}")


def _is_amount(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


class _Checker:
    def __init__(self, file: str, doc: dict[str, Any]) -> None:
        self.file, self.doc = file, doc

    def fail(self, field: str, problem: str) -> NoReturn:
        raise DataError(self.file, field, problem)

    def string(self, field: str) -> str:
        v = self.doc.get(field)
        if not isinstance(v, str) or not v:
            self.fail(field, "must be a non-empty string")
        return str(v)

    def positive_int(self, field: str) -> int:
        v = self.doc.get(field)
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            self.fail(field, "must be a positive integer")
        return int(v)

    def list_of(self, field: str, kind: type, required: bool = True) -> list[Any]:
        v = self.doc.get(field)
        if v is None and not required:
            return []
        if not isinstance(v, list) or not all(isinstance(x, kind) for x in v):
            self.fail(field, f"must be a list of {kind.__name__}")
        return list(v)
