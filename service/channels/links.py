"""Links to a game's web page, for every channel that tells a player something.

A game's page is `/play/<game>` (what the public sees) and a seat's page is
`/play/<game>/<seat>`. A notice for a seat of a game that takes reply-address orders may
carry a *page capability* for one step: `?step=<n>&cap=<mac>`, an HMAC of game, step and
seat under the server secret (the same trust as the seat's per-step reply address: whoever
reads that seat's mail may answer that one step on the page, without a key). A capability
is checked with `check_page_cap`; it never opens another step or another seat.

Both secrets are bound to the seat's *holder* when they are made (`seat_holder`: the key
id of the player key the seat has then; none for a bot): once the host gives the seat a
new key or a bot, every link and reply address made before fails (`verify_page_cap`
says `seat_changed` when it was the former player's, `bad_page_link` otherwise), and the
new holder's next mail carries fresh ones. A seat given back to the very same key takes
its links again (the same person holds them).
"""
from __future__ import annotations

import hmac
from typing import TYPE_CHECKING, Any

from service.channels.secret import mac
from service.core.errors import Problem

if TYPE_CHECKING:
    from service.core.kontor import Kontor


SEAT_CHANGED = ("this link was sent to the seat's former player: the host has given the seat to another "
                "player or a bot since, so it opens nothing and takes no order")


def seat_holder(k: Kontor, gid: str, seat: int) -> str:
    """Who holds `seat` now, as the seat's secrets are bound to it: its player key's id
    ("" for a bot or an empty seat)."""
    return str((k.store.seats(gid).get(seat) or {}).get("kid") or "")


def former_holders(k: Kontor, gid: str, seat: int) -> list[str]:
    """The key ids that held `seat` before (and "" when a bot may have held it)."""
    return [kid for kid, rec in k.store.formers(gid).items() if rec.get("seat") == seat] + [""]


def page_cap(k: Kontor, gid: str, phase: int, seat: int, holder: str | None = None) -> str:
    """The capability that lets the page submit `seat`'s order for step `phase` only,
    bound to the seat's current holder (or `holder`)."""
    return mac(k, "page", gid, phase, seat, seat_holder(k, gid, seat) if holder is None else holder, length=26)


def check_page_cap(k: Kontor, gid: str, phase: int, seat: int, cap: str) -> bool:
    """True when `cap` is the genuine capability of this game, step and seat for the
    seat's current holder."""
    return hmac.compare_digest(cap.encode(), page_cap(k, gid, phase, seat).encode())


def verify_page_cap(k: Kontor, gid: str, phase: int, seat: int, cap: object) -> None:
    """Raise unless `cap` is the capability of this game, step and seat for its current
    holder: `seat_changed` when it was made for a former holder of the seat (so the
    former player learns why, and nothing more), else `bad_page_link`."""
    if not isinstance(cap, str) or not cap.isascii():
        raise Problem("bad_page_link")
    if check_page_cap(k, gid, phase, seat, cap):
        return
    current = seat_holder(k, gid, seat)
    if any(hmac.compare_digest(cap.encode(), page_cap(k, gid, phase, seat, kid).encode())
           for kid in former_holders(k, gid, seat) if kid != current):
        raise Problem("seat_changed", SEAT_CHANGED)
    raise Problem("bad_page_link")


def page_url(k: Kontor, gid: str, seat: int | None = None, phase: int | None = None, holder: str | None = None) -> str:
    """The game's page, or `seat`'s page; with `phase`, carrying that step's capability
    (bound to the seat's current holder: `holder` when the caller read it already)."""
    base = f"{k.settings.public_url.rstrip('/')}/play/{gid}"
    if seat is None:
        return base
    url = f"{base}/{seat}"
    if phase is not None:
        url += f"?step={phase}&cap={page_cap(k, gid, phase, seat, holder)}"
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
    reply-address order (`submit_keyless`), recorded `via` `page`. A seat a bot plays
    says so first (who plays a seat is public); a link of the seat's former player is
    `seat_changed`."""
    if (k.store.seats(gid).get(seat) or {}).get("bot"):
        raise Problem("seat_played_by_bot", "a bot plays this seat now (the host gave it one), so it takes no "
                                            "order by mail or link; the host can give the seat back to you")
    verify_page_cap(k, gid, phase, seat, cap)
    return submit_keyless(k, gid, phase, seat, order, via="page")
