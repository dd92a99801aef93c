"""Market Closed (MC, 1): W-OPEN. No cards are revealed and there are no auctions this
round; every other card played in the window returns unspent (O2, FD5)."""

from __future__ import annotations

from engine.fantasy.specials.base import Kind, Play
from engine.fantasy.state import S


def check(s: S, seat: int, play: Play) -> None:
    return None


KIND = Kind("MC", "open", (), check)  # resolved by windows.resolve_open
