"""Out of Season (OS, 2): W-REVEAL; an item type. Nobody earns income for it this round
(P6); on a type nobody owns it is accepted, spent and has no effect (R18)."""

from __future__ import annotations

from engine.core.events import Event
from engine.fantasy.specials.base import Kind, Play, type_id
from engine.fantasy.state import S


def check(s: S, seat: int, play: Play) -> None:
    type_id(play)


def effect(s: S, seat: int, play: Play, ev: list[Event]) -> bool:
    rv = s["reveal"]
    if play["type"] not in rv["os"]:
        s["reveal"] = {**rv, "os": [*rv["os"], play["type"]]}
    return True


KIND = Kind("OS", "reveal", ("type",), check, effect)
