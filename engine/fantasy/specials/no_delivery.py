"""No Delivery (ND, 2): W-OPEN; an opponent. The target is ineligible for this round's
offer phase and one fewer card is revealed (O4, O6, FD4)."""

from __future__ import annotations

from engine.fantasy.specials.base import Kind, Play, opponent
from engine.fantasy.state import S


def check(s: S, seat: int, play: Play) -> None:
    opponent(s, seat, play)


KIND = Kind("ND", "open", ("target",), check)  # resolved by windows.resolve_open
