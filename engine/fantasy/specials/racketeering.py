"""Racketeering (RA, 1): W-REVEAL; an opponent X and a trigger player Y. Right after Y's
first positive income credit (else at the end of income), X pays the card's player 6
crowns, or all X's crowns if fewer (FD9, P6)."""

from __future__ import annotations

from engine.core.events import Event
from engine.fantasy.specials.base import Kind, Play, opponent
from engine.fantasy.state import S, need, seat_no


def check(s: S, seat: int, play: Play) -> None:
    opponent(s, seat, play)
    need(seat_no(play.get("trigger"), s), "bad_target", "trigger must be a seat number")


def effect(s: S, seat: int, play: Play, ev: list[Event]) -> bool:
    rv = s["reveal"]
    s["reveal"] = {**rv, "ra": [*rv["ra"], {"by": seat, "x": play["target"], "y": play["trigger"], "fired": False}]}
    return True


KIND = Kind("RA", "reveal", ("target", "trigger"), check, effect)
