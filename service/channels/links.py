"""Links to a game's web page, for every channel that tells a player something.

A game's page is `/play/<game>` (what the public sees) and a seat's page is
`/play/<game>/<seat>`. A notice for a seat of a game that takes reply-address orders may
carry a *page capability* for one step: `?step=<n>&cap=<mac>`, an HMAC of game, step and
seat under the server secret (the same trust as the seat's per-step reply address: whoever
reads that seat's mail may answer that one step on the page, without a key). A capability
is checked with `check_page_cap`; it never opens another step or another seat.
"""
from __future__ import annotations

import hmac
from typing import TYPE_CHECKING

from service.channels.secret import mac

if TYPE_CHECKING:
    from service.core.kontor import Kontor


def page_cap(k: Kontor, gid: str, phase: int, seat: int) -> str:
    """The capability that lets the page submit `seat`'s order for step `phase` only."""
    return mac(k, "page", gid, phase, seat, length=26)


def check_page_cap(k: Kontor, gid: str, phase: int, seat: int, cap: str) -> bool:
    """True when `cap` is the genuine capability of this game, step and seat."""
    return hmac.compare_digest(cap.encode(), page_cap(k, gid, phase, seat).encode())


def page_url(k: Kontor, gid: str, seat: int | None = None, phase: int | None = None) -> str:
    """The game's page, or `seat`'s page; with `phase`, carrying that step's capability."""
    base = f"{k.settings.public_url.rstrip('/')}/play/{gid}"
    if seat is None:
        return base
    url = f"{base}/{seat}"
    if phase is not None:
        url += f"?step={phase}&cap={page_cap(k, gid, phase, seat)}"
    return url
