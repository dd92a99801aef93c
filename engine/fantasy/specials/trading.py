"""Trading (TR, 3): W-CLOSE; one of the player's own items and an item an opponent owns.
The two cards swap owners (O22). It fails, unspent, if either has moved (R12, R16)."""

from __future__ import annotations

from engine.core.events import Event
from engine.fantasy.specials.base import Kind, Play, opponent_item
from engine.fantasy.state import S, add_items, drop_item, need


def check(s: S, seat: int, play: Play) -> None:
    give = play.get("give")
    need(isinstance(give, str) and give in s["players"][seat]["items"], "bad_target",
         f"give must be one of your own item cards, not {give!r}")
    opponent_item(s, seat, play)


def effect(s: S, seat: int, play: Play, ev: list[Event]) -> bool:
    give, take, other = play["give"], play["item"], play["owner"]
    if give not in s["players"][seat]["items"]:
        return False
    drop_item(s, seat, give)
    drop_item(s, other, take)
    add_items(s, seat, [take])
    add_items(s, other, [give])
    return True


KIND = Kind("TR", "close", ("give", "item"), check, effect)
