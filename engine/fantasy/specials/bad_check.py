"""Bad Check (BC, 1): W-REVEAL; an opponent X and a type t that X owns. X earns nothing
for t this round; X's price still counts for L and H (FD10, R17)."""

from __future__ import annotations

from engine.core.events import Event
from engine.fantasy.specials.base import Kind, Play, opponent, type_id
from engine.fantasy.state import S, need, type_count


def check(s: S, seat: int, play: Play) -> None:
    x, t = opponent(s, seat, play), type_id(play)
    need(type_count(s, x, t) > 0, "bad_target", "Bad Check names a type the opponent owns (P6)")


def effect(s: S, seat: int, play: Play, ev: list[Event]) -> bool:
    rv = s["reveal"]
    s["reveal"] = {**rv, "bc": [*rv["bc"], [play["target"], play["type"]]]}
    return True


KIND = Kind("BC", "reveal", ("target", "type"), check, effect)
