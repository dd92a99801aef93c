"""First Buyer (FB, 2): W-OPEN. Its player is the acting First Buyer this round and gains
the pre-emption (O3, O11, FD5, R23); the marker's rotation is unchanged."""

from __future__ import annotations

from engine.fantasy.specials.base import Kind, Play
from engine.fantasy.state import S


def check(s: S, seat: int, play: Play) -> None:
    return None


KIND = Kind("FB", "open", (), check)  # resolved by windows.resolve_open
