"""Defective Item (DI, 2): W-CLOSE; an item card an opponent owns. The card is removed from
the game (O22)."""

from __future__ import annotations

from engine.core.events import Event
from engine.fantasy.specials.base import Kind, Play, opponent_item
from engine.fantasy.state import S, drop_item


def check(s: S, seat: int, play: Play) -> None:
    opponent_item(s, seat, play)


def effect(s: S, seat: int, play: Play, ev: list[Event]) -> bool:
    drop_item(s, play["owner"], play["item"])
    s["removed"] = [*s["removed"], play["item"]]
    return True


KIND = Kind("DI", "close", ("item",), check, effect)
