"""Steal an Item (ST, 3): W-CLOSE; an opponent ("target") and an item card they own. The
card moves, face up, to the card's player (O22), unless it has moved (R12, R16, R21)."""

from __future__ import annotations

from engine.core.events import Event
from engine.fantasy.specials.base import Kind, Play, item_card, opponent, opponent_item
from engine.fantasy.state import S, add_items, drop_item


def check(s: S, seat: int, play: Play) -> None:
    opponent_item(s, seat, play)


def stored(s: S, seat: int, play: Play) -> None:
    opponent(s, seat, play)
    item_card(play)


def effect(s: S, seat: int, play: Play, ev: list[Event]) -> bool:
    drop_item(s, play["target"], play["item"])
    add_items(s, seat, [play["item"]])
    return True


KIND = Kind("ST", "close", ("target", "item"), check, effect, stored)
