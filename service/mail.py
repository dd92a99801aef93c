"""Email out. (To be completed.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from service.games import Kontor


def send_delivery(k: Kontor, gid: str, delivery: str, attempt: int) -> str:
    raise NotImplementedError


def send_digests(k: Kontor, now: float) -> int:
    """Send the digest mails that are due; how many. Called by every sweep."""
    return 0
