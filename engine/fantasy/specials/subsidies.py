"""Subsidies (SU, 2): instant. The bank pays the player 5 crowns (§12)."""

from __future__ import annotations

from engine.core.events import Event
from engine.fantasy.specials.base import Kind, Play
from engine.fantasy.state import C, S, credit


def check(s: S, seat: int, play: Play) -> None:
    return None


def effect(s: S, seat: int, play: Play, ev: list[Event]) -> bool:
    credit(s, seat, C.subsidies_amount)
    return True


KIND = Kind("SU", "instant", (), check, effect)
