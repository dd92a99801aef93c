"""Trading (TR, 3): W-CLOSE; one of the player's own items ("give"), an opponent ("target")
and an item card they own. The two cards swap owners (O22). It fails, unspent, if either
has moved by the time it resolves (R12, R16, R21: `windows.run_queue` checks)."""

from __future__ import annotations

from engine.core.events import Event
from engine.fantasy.specials.base import Kind, Play, item_card, opponent, opponent_item
from engine.fantasy.state import S, add_items, drop_item, need


def check(s: S, seat: int, play: Play) -> None:
    give = play.get("give")
    need(isinstance(give, str) and give in s["players"][seat]["items"], "bad_target",
         f"give must be one of your own item cards, not {give!r}")
    opponent_item(s, seat, play)


def stored(s: S, seat: int, play: Play) -> None:
    item_card(play, "give")
    opponent(s, seat, play)
    item_card(play)


def effect(s: S, seat: int, play: Play, ev: list[Event]) -> bool:
    give, take, other = play["give"], play["item"], play["target"]
    drop_item(s, seat, give)
    drop_item(s, other, take)
    add_items(s, seat, [take])
    add_items(s, other, [give])
    return True


KIND = Kind("TR", "close", ("give", "target", "item"), check, effect, stored)
