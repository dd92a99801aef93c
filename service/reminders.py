"""Reminders before a deadline. (To be completed.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from service.games import Kontor


def remind(k: Kontor, now: float) -> int:
    """Send due reminders; how many. Called by every sweep."""
    return 0
