"""JSON Schemas (a Draft 2020-12 subset) of Die Händler's orders, one per decision kind.

Built from the loaded board (goods, cities) and components (cards, carts, tiles, limits),
never from lists written here. The schema documents an order's shape and drives the web
page's form (`enum` with `x-labels` for display names, `minimum`/`maximum`, `items` of
arrays); the one legality path stays `Haendler.validate` (the schema never says, for
example, which city produces which good or what a seat can afford).
"""

from __future__ import annotations

from typing import Any

from engine.haendler.board import Board
from engine.haendler.components import Components

Schema = dict[str, Any]


def _enum(ids: list[Any] | tuple[Any, ...], labels: dict[Any, str], description: str, title: str) -> Schema:
    return {"enum": list(ids), "x-labels": {str(i): labels.get(i, str(i)) for i in ids},
            "title": title, "description": description}


def _int(title: str, description: str, minimum: int | None = None, maximum: int | None = None,
         step: int | None = None) -> Schema:
    out: Schema = {"type": "integer", "title": title, "description": description}
    if minimum is not None:
        out["minimum"] = minimum
    if maximum is not None:
        out["maximum"] = maximum
    if step is not None:
        out["multipleOf"] = step
    return out


def _list(title: str, description: str, items: Schema, max_items: int | None = None) -> Schema:
    out: Schema = {"type": "array", "title": title, "description": description, "items": items}
    if max_items is not None:
        out["maxItems"] = max_items
    return out


def _row(props: Schema, required: list[str]) -> Schema:
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def order_properties(board: Board, comp: Components, kind: str) -> Schema:
    """The order's own properties for decision `kind` (the free actions are added by the caller)."""
    goods = list(board.goods)
    good_names = {g: g.replace("_", " ").capitalize() for g in goods}
    cities = list(board.cities)

    def good(description: str = "a type of good") -> Schema:
        return {**_enum(goods, good_names, description, "Good"), "type": "string"}

    def city(description: str = "a city") -> Schema:
        return {**_enum(cities, board.city_names, description, "City"), "type": "string"}

    carts = list(range(1, comp.carts + 1))
    cart = {**_enum(carts, {c: f"cart {c}" for c in carts}, "a cart, by number", "Cart"), "type": "integer"}
    step, card_names = comp.money_step, {a.id: a.name for a in comp.abilities.values()}
    money = _int("Amount", f"money, in steps of {step}", 0, None, step)
    influence = {**_enum(list(comp.default_ranking), comp.influence_names, "an influence card kind",
                         "Influence card"), "type": "string"}
    if kind == "name_card":
        return {"card": {**_enum(list(comp.abilities), card_names,
                                 "the special ability card to auction (you must afford its cost)", "Card"),
                         "type": "string"}}
    if kind in ("card_bid", "cart_bid"):
        out: Schema = {"bid": {**money, "title": "Bid",
                               "description": f"your bid, in steps of {step}, not above your money"
                               + (" (above the high bid)" if kind == "card_bid" else "")}}
        if kind == "card_bid":
            out["pass"] = {"type": "boolean", "title": "Pass", "description": "pass (final for this card)"}
        return out
    if kind == "buy":
        return {"goods": _list("Goods to buy", f"0 to {comp.max_buy} goods, each from a city that produces it",
                               _row({"good": good(), "city": city("a city that produces the good")},
                                    ["good", "city"]), comp.max_buy)}
    if kind == "master":
        tariff = {"type": ["array", "null"], "items": {**money, "title": "Price"}, "minItems": 2, "maxItems": 2,
                  "description": "[price for 1 good, price for 2 goods], or null: refused"}
        return {"load": _int("Goods to load", "how many of your goods to load (yours on the cart at most "
                             f"{comp.master_slots})", 0, comp.master_slots),
                "good": good("the type you load"),
                "tariffs": {"type": "object", "title": "Tariffs",
                            "description": "for each other seat (its number as text) a tariff; left out: refused",
                            "additionalProperties": tariff}}
    if kind == "load":
        return {"goods": _list("Goods to load", f"at most {comp.other_slots} goods from your warehouse here, "
                               "none of the master's type", good(), comp.other_slots),
                "card": {"type": "boolean", "title": "Kostenlose Zuladung",
                         "description": "play Kostenlose Zuladung: load for free"}}
    if kind in ("achsbruch", "bonus"):
        what = "an Achsbruch card on each cart listed" if kind == "achsbruch" else \
            "a Verkauf mit Bonus card on each arrived cart listed"
        return {"carts": _list("Carts", what, cart)}
    if kind == "move":
        tiles = list(comp.tiles)
        messengers = [a.id for a in comp.abilities.values() if a.kind == "messenger"]
        move_step = {"type": "object", "additionalProperties": False, "properties": {
            "tile": {**_enum(tiles, {t: f"tile {t}" for t in tiles}, "the face-up tile played", "Tile"),
                     "type": "integer"},
            "forfeit": {"type": "boolean", "title": "Forfeit", "description": "flip the tile without moving"},
            "cart": cart,
            "points": _int("Wagnerei points", "Wagnerei points added", 0),
            "messenger": {**_enum(messengers, card_names, "the messenger card used", "Messenger card"),
                          "type": "string"},
            "to": {"type": "string", "title": "To", "description": "the end: a city id or a road space "
                   "such as KOE>BRU:3 (your choices list the legal ends)"}}}
        return {"lift": _list("Lift Achsbruch", "carts on which you lift your own Achsbruch", cart),
                "steps": _list("Steps", "in order: exactly one tile step, then Wagnerei and messenger moves",
                               move_step),
                "prefer": _list("Preferred cards", "a ranking of influence card kinds for a card you gain",
                                influence)}
    if kind == "wheel":
        arrow = {"type": ["string", "null"], "enum": [*goods, None], "title": "Arrow",
                 "x-labels": {**good_names, "null": "shield (no vote)"},
                 "description": "a good, or null: your shield"}
        return {"arrows": {**_list("Arrows", "your two arrows", arrow), "minItems": 2, "maxItems": 2}}
    if kind == "kontor":
        kontors = [a.id for a in comp.abilities.values() if a.kind == "price"]
        return {"moves": _list("Price moves", "at most one per Kontor card you hold", _row({
            "card": {**_enum(kontors, card_names, "the card used", "Card"), "type": "string"},
            "good": good("the price moved"),
            "dir": {**_enum(["up", "down"], {"up": "one row up", "down": "one row down"}, "the direction",
                            "Direction"), "type": "string"}}, ["card", "good", "dir"]), len(kontors))}
    if kind == "sales":
        return {"lager": {"type": "object", "title": "Lagerverkauf",
                          "description": f"up to {comp.lagerverkauf_max} goods from one warehouse at the buy price",
                          "additionalProperties": False, "required": ["city", "goods"], "properties": {
                              "city": city("the warehouse's city"),
                              "goods": _list("Goods", "the goods sold", good(), comp.lagerverkauf_max)}},
                "sonder": _list("Sonder-Verkauf", f"one per card: a good sold for {comp.sonder_verkauf_price}",
                                _row({"city": city("the warehouse's city"), "good": good()}, ["city", "good"]))}
    if kind == "credit":
        return {"take": {"type": "boolean", "title": "Take a credit",
                         "description": f"take one credit (+{comp.credit_value})"}}
    if kind == "advance":
        return {"levels": _int("Levels", "levels to buy (not past the top level)", 0, comp.max_levels_per_round),
                "cards": _int("Sozialer Aufstieg", "Sozialer Aufstieg cards used, at most one per level", 0,
                              comp.max_levels_per_round)}
    raise KeyError(kind)
