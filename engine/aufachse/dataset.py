"""Loading and validating an Auf Achse data set (rules B3–B5, R22).

A data set is five JSON files in `engine/data/aufachse/<id>/` (`cities`, `edges`,
`orders`, `events`, `components`, plus `dataset.json` with its id and name), or the same
parts as one inline document `{"id", "name", "cities", "edges", "orders", "events",
"components"}` (the `data` option). Every check names the file and the field that failed
(`DataError`). The order of the entries matters: shuffles start from file order (RNG6).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, NoReturn

from engine.aufachse.board import Board, build_board
from engine.aufachse.cards import EFFECTS, JAM_BY, SIZES, Components, EventCard, OrderCard, Trailer
from engine.core.errors import DataError

DATA = Path(__file__).resolve().parent.parent / "data" / "aufachse"
DEFAULT = "auf-achse-substitute-v1"
PARTS = ("cities", "edges", "orders", "events", "components")


@dataclass(frozen=True)
class DataSet:
    id: str
    name: str
    key: str
    board: Board
    orders: dict[str, OrderCard]
    order_ids: tuple[str, ...]
    events: dict[str, EventCard]
    event_ids: tuple[str, ...]
    comp: Components
    hashes: dict[str, str]

    def pile(self, seats: int, kids: bool) -> int:
        return self.comp.kids_public_pile if kids else self.comp.public_pile[seats]

    def hand(self, kids: bool) -> int:
        return self.comp.kids_hand_size if kids else self.comp.hand_size


def data_names() -> list[str]:
    """Ids of the data sets shipped with Kontor."""
    return sorted(p.name for p in DATA.iterdir() if (p / "dataset.json").is_file())


def load_data(spec: Any) -> DataSet:
    """A shipped data set by id, or an inline document."""
    if isinstance(spec, str):
        return _load_named(spec)
    if not isinstance(spec, dict):
        raise DataError("data", "(document)", "must be a data set id or a data set document")
    text = json.dumps(spec, sort_keys=True, ensure_ascii=False)
    return _load_inline(text)


@lru_cache(maxsize=16)
def _load_inline(text: str) -> DataSet:
    doc = json.loads(text)
    label = f"data {str(doc.get('id', '(inline)'))!r}"
    for part in PARTS:
        if part not in doc:
            raise DataError(label, part, "is missing")
    files = {p: f"{label} {p}" for p in PARTS}
    hashes = {p: hashlib.sha256(json.dumps(doc[p], sort_keys=True).encode()).hexdigest() for p in PARTS}
    return parse(doc, files, hashes)


@lru_cache(maxsize=8)
def _load_named(name: str) -> DataSet:
    if not name or "/" in name or "\\" in name or name.startswith("."):
        raise DataError("data", "id", f"{name!r} is not a data set id")
    folder = DATA / name
    if not (folder / "dataset.json").is_file():
        raise DataError(f"{name}/dataset.json", "(file)", f"no such data set (known: {', '.join(data_names())})")
    doc: dict[str, Any] = {}
    hashes: dict[str, str] = {}
    files = {p: f"{name}/{p}.json" for p in PARTS}
    for part in ("dataset", *PARTS):
        path = folder / f"{part}.json"
        if not path.is_file():
            raise DataError(f"{name}/{part}.json", "(file)", "is missing")
        raw = path.read_bytes()
        hashes[part] = hashlib.sha256(raw).hexdigest()
        try:
            value = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise DataError(f"{name}/{part}.json", "(syntax)", str(exc)) from None
        if part == "dataset":
            if not isinstance(value, dict):
                raise DataError(f"{name}/dataset.json", "(document)", "must be an object")
            doc.update({k: v for k, v in value.items() if k in ("id", "name")})
        else:
            doc[part] = value
    if doc.get("id") != name:
        raise DataError(f"{name}/dataset.json", "id", f"must be {name!r}")
    return parse(doc, files, hashes)


class _Check:
    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, fld: str, problem: str) -> NoReturn:
        raise DataError(self.file, fld, problem)

    def list_of_objects(self, value: Any, fld: str) -> list[dict[str, Any]]:
        if not isinstance(value, list) or not all(isinstance(x, dict) for x in value):
            self.fail(fld, "must be a list of objects")
        return value

    def int_(self, value: Any, fld: str, least: int = 0) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            self.fail(fld, f"must be an integer ≥ {least}")
        return value

    def str_(self, value: Any, fld: str) -> str:
        if not isinstance(value, str) or not value or not value.isascii():
            self.fail(fld, "must be a non-empty ASCII string")
        return value


def parse(doc: dict[str, Any], files: dict[str, str], hashes: dict[str, str]) -> DataSet:
    """Validate the parts of a data set (B4) and build it."""
    data_id = doc.get("id")
    if not isinstance(data_id, str) or not data_id:
        raise DataError(files["cities"].split()[0], "id", "a data set needs an id")
    comp = _components(doc["components"], _Check(files["components"]))
    c = _Check(files["cities"])
    cities = c.list_of_objects(doc["cities"], "(document)")
    seen: set[str] = set()
    for i, city in enumerate(cities):
        cid = c.str_(city.get("id"), f"[{i}].id")
        if cid in seen:
            c.fail(f"[{i}].id", f"duplicate id {cid!r}")
        seen.add(cid)
        if cid.startswith("R") and cid[1:2].isdigit():
            c.fail(f"[{i}].id", "a city id may not look like a road space id")
        for key in ("x", "y"):
            if isinstance(city.get(key), bool) or not isinstance(city.get(key), int | float):
                c.fail(f"[{i}].{key}", "must be a number")
        if city.get("status") not in ("confirmed", "seed", "substitute"):
            c.fail(f"[{i}].status", "must be confirmed, seed or substitute")
        if not isinstance(city.get("name", cid), str):
            c.fail(f"[{i}].name", "must be a string")
    if len(cities) < 2:
        c.fail("(document)", "needs at least 2 cities")
    c = _Check(files["edges"])
    edges = c.list_of_objects(doc["edges"], "(document)")
    ids: set[int] = set()
    for i, e in enumerate(edges):
        eid = c.int_(e.get("id"), f"[{i}].id", 1)
        if eid in ids:
            c.fail(f"[{i}].id", f"duplicate id {eid}")
        ids.add(eid)
        for end in ("from", "to"):
            if e.get(end) not in seen:
                c.fail(f"[{i}].{end}", f"{e.get(end)!r} is not a city")
        if e["from"] == e["to"]:
            c.fail(f"[{i}].to", "a connection joins two different cities")
        if e.get("kind") not in ("road", "ferry"):
            c.fail(f"[{i}].kind", "must be road or ferry")
        pips = c.int_(e.get("pips"), f"[{i}].pips", 1)
        evs = e.get("event_spaces")
        if not isinstance(evs, list) or any(isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= pips - 1
                                            for k in evs) or len(set(evs)) != len(evs):
            c.fail(f"[{i}].event_spaces", f"must list distinct indices in 1..{pips - 1}")
    board = build_board(cities, edges)
    reach = board.distances([board.cities[0]])
    if len(reach) != len(board.spaces):
        missing = sorted(set(board.spaces) - set(reach), key=board.rank.__getitem__)[0]
        c.fail("(graph)", f"the space graph is not connected ({missing!r} cannot be reached)")
    c = _Check(files["orders"])
    orders: dict[str, OrderCard] = {}
    for i, o in enumerate(c.list_of_objects(doc["orders"], "(document)")):
        oid = c.str_(o.get("id"), f"[{i}].id")
        if oid in orders:
            c.fail(f"[{i}].id", f"duplicate id {oid!r}")
        for end in ("start", "dest"):
            if o.get(end) not in seen:
                c.fail(f"{oid}.{end}", f"{o.get(end)!r} is not a city")
        if o["start"] == o["dest"]:
            c.fail(f"{oid}.dest", "start and destination must differ")
        goods = c.int_(o.get("goods"), f"{oid}.goods", 2)
        if goods > comp.truck_capacity:
            c.fail(f"{oid}.goods", f"{goods} goods exceed the truck capacity {comp.truck_capacity} (R22)")
        pay = c.int_(o.get("pay"), f"{oid}.pay", 1)
        bids = o.get("bids")
        if not isinstance(bids, list) or len(bids) != 5 or not all(isinstance(b, dict) for b in bids):
            c.fail(f"{oid}.bids", "needs exactly 5 bids")
        costs: list[int] = []
        for k, b in enumerate(bids):
            if b.get("step", k + 1) != k + 1:
                c.fail(f"{oid}.bids[{k}].step", f"must be {k + 1}")
            cost = c.int_(b.get("cost"), f"{oid}.bids[{k}].cost", 0)
            if costs and cost <= costs[-1]:
                c.fail(f"{oid}.bids[{k}].cost", "costs must increase strictly")
            if b.get("net") != pay - cost:
                c.fail(f"{oid}.bids[{k}].net", f"must be pay − cost = {pay - cost}")
            costs.append(cost)
        orders[oid] = OrderCard(oid, o["start"], o["dest"], goods, pay, tuple(costs), str(o.get("status", "")))
    need = max(max(comp.hand_size * n + comp.public_pile[n] for n in range(2, 7)),
               max(comp.kids_hand_size * n + comp.kids_public_pile for n in range(2, 7)))
    if len(orders) < need:
        c.fail("(document)", f"{len(orders)} orders are too few: the largest game needs {need}")
    c = _Check(files["events"])
    events: dict[str, EventCard] = {}
    expanded: list[str] = []
    for i, ev in enumerate(c.list_of_objects(doc["events"], "(document)")):
        cid = c.str_(ev.get("id"), f"[{i}].id")
        if cid in events:
            c.fail(f"[{i}].id", f"duplicate id {cid!r}")
        qty = c.int_(ev.get("qty"), f"{cid}.qty", 1)
        eff = ev.get("effect")
        if not isinstance(eff, dict) or eff.get("type") not in EFFECTS:
            c.fail(f"{cid}.effect.type", f"unknown effect type {eff.get('type') if isinstance(eff, dict) else eff!r}")
        for param in EFFECTS[eff["type"]]:
            if param not in eff:
                c.fail(f"{cid}.effect.{param}", "is missing")
        for param in ("amount", "per", "min", "fallback", "max_pips"):
            if param in eff:
                c.int_(eff[param], f"{cid}.effect.{param}", 0)
        if eff["type"] == "place_jam" and eff["by"] not in JAM_BY:
            c.fail(f"{cid}.effect.by", f"must be one of {', '.join(JAM_BY)}")
        if eff["type"] == "free_trailer" and eff["size"] not in SIZES:
            c.fail(f"{cid}.effect.size", "must be small or large")
        events[cid] = EventCard(cid, qty, str(ev.get("title", eid)), dict(eff))
        expanded += [cid] * qty
    key = hashlib.sha256(json.dumps(hashes, sort_keys=True).encode()).hexdigest()[:16]
    return DataSet(
        id=data_id, name=str(doc.get("name", data_id)), key=key, board=board, orders=orders,
        order_ids=tuple(orders), events=events, event_ids=tuple(expanded), comp=comp, hashes=hashes,
    )


def _components(value: Any, c: _Check) -> Components:
    if not isinstance(value, dict):
        c.fail("(document)", "must be an object")
    pile = value.get("public_pile")
    if not isinstance(pile, dict) or sorted(pile) != ["2", "3", "4", "5", "6"] and sorted(pile) != [2, 3, 4, 5, 6]:
        c.fail("public_pile", "must give a pile size for 2 to 6 players")
    trailers = value.get("trailers")
    if not isinstance(trailers, dict) or sorted(trailers) != ["large", "small"]:
        c.fail("trailers", "must describe small and large")
    kids = value.get("kids")
    if not isinstance(kids, dict):
        c.fail("kids", "must be an object")
    tr = {}
    for size in SIZES:
        t = trailers[size]
        if not isinstance(t, dict):
            c.fail(f"trailers.{size}", "must be an object")
        tr[size] = Trailer(c.int_(t.get("count"), f"trailers.{size}.count"),
                           c.int_(t.get("capacity"), f"trailers.{size}.capacity", 1),
                           c.int_(t.get("price"), f"trailers.{size}.price"))
    if not isinstance(kids.get("trailers"), bool):
        c.fail("kids.trailers", "must be true or false")
    slots = c.int_(value.get("display_slots"), "display_slots", 1)
    return Components(
        start_cash=c.int_(value.get("start_cash"), "start_cash"),
        truck_capacity=c.int_(value.get("truck_capacity"), "truck_capacity", 1),
        hand_size=c.int_(value.get("hand_size"), "hand_size", 1),
        display_slots=slots,
        public_pile={int(k): c.int_(v, f"public_pile.{k}", slots) for k, v in pile.items()},
        trailers=tr,
        trailer_refund=c.int_(value.get("trailer_refund"), "trailer_refund"),
        road_space_limit=c.int_(value.get("road_space_limit"), "road_space_limit", 1),
        kids_hand_size=c.int_(kids.get("hand_size"), "kids.hand_size", 1),
        kids_public_pile=c.int_(kids.get("public_pile"), "kids.public_pile", slots),
        kids_trailers=kids["trailers"],
    )
