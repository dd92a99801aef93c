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
from typing import TYPE_CHECKING, Any

from service.channels.secret import mac
from service.core.errors import Problem

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


def submit_keyless(k: Kontor, gid: str, phase: int, seat: int, order: Any, via: str) -> dict[str, Any]:
    """Submit an order that comes without a signature, vouched for by a secret only the
    seat's mail holds (its per-step reply address, or its page capability): taken only
    in a game created with `"mail_orders": "reply_address"`, then through the one
    `Kontor.submit` path. The receipt says `via`."""
    if k._meta(gid).get("reply_orders") != "1":
        raise Problem("reply_orders_disabled", "this game takes orders by email only as signed order tokens")
    if (k.store.seats(gid).get(seat) or {}).get("bot"):
        raise Problem("seat_played_by_bot", "a bot plays this seat now (the host gave it one), so it takes no "
                                            "order by mail or link; the host can give the seat back to you")
    return k.submit(gid, phase, seat, order, via=via)


def submit_by_link(k: Kontor, gid: str, phase: int, seat: int, cap: str, order: Any) -> dict[str, Any]:
    """The order of a seat's page opened from its mail's link: `cap` must be the
    capability of this very game, step and seat (checked in constant time); then as a
    reply-address order (`submit_keyless`), recorded `via` `page`."""
    if not isinstance(cap, str) or not cap.isascii() or not check_page_cap(k, gid, phase, seat, cap):
        raise Problem("bad_page_link")
    return submit_keyless(k, gid, phase, seat, order, via="page")
