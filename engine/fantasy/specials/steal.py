"""Steal an Item (ST, 3): W-CLOSE; an item card an opponent owns. The card moves, face up,
to the card's player (O22)."""

from __future__ import annotations

from engine.core.events import Event
from engine.fantasy.specials.base import Kind, Play, opponent_item
from engine.fantasy.state import S, add_items, drop_item


def check(s: S, seat: int, play: Play) -> None:
    opponent_item(s, seat, play)


def effect(s: S, seat: int, play: Play, ev: list[Event]) -> bool:
    drop_item(s, play["owner"], play["item"])
    add_items(s, seat, [play["item"]])
    return True


KIND = Kind("ST", "close", ("item",), check, effect)
