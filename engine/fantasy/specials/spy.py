"""Spy (SP, 2): W-SPY, at most one per player per window (R13). Its player sees every price
sheet and may revise its own (P5, FD8; the revision is `pricing.SPY`), even with no items
(R26)."""

from __future__ import annotations

from engine.core.events import Event
from engine.fantasy.specials.base import Kind, Play
from engine.fantasy.state import S


def check(s: S, seat: int, play: Play) -> None:
    return None


def effect(s: S, seat: int, play: Play, ev: list[Event]) -> bool:
    s["spies"] = [*s["spies"], seat]
    return True


KIND = Kind("SP", "spy", (), check, effect)
