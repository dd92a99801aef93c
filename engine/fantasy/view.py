"""What of a Fantasy Business state each viewer sees (rules §4, R8, R14).

Declared as data; `engine.core.info.strip` builds every view from it by allow-list.

* Public: every seat's items, its hand **size** (`hand_size`), the marker holder and the
  acting First Buyer, the display (a face-down special shows only as a position), the
  auction, every discard of items and played specials, removed cards, the revealed
  price sheets of the last income, the pending decision, the rounds, options, the open
  trading proposals (a special offered shows only as a count).
* A seat's own: its crowns, the identity of its specials (`hand`), its price sheet
  before the reveal, the specials it offers in a trading proposal.
* Granted (`shown_to`): a Divination Spell shows the target's hand to the caster at the
  next decision point (the caster also gets a private event with it); a Spy, while it
  revises (D-SPY), sees every current price sheet; a proposal's recipient sees the
  specials offered to it.
* Secret: the deck (its size is public, `deck_size`), the face-down specials in the
  display, and unsold face-down specials discarded unseen (`buried`).
* Never: the random stream (the seed is revealed by the service at the end).
* At the end every Own and Secret part opens (everything but the stream).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.core.info import NEVER, PUBLIC, Fields, Information, Own, Seats, Secret


def divination_grant(state: dict[str, Any], owner: int) -> Iterable[int]:
    """The casters of a Divination Spell on `owner` whose look is open now."""
    step = state.get("step")
    return [look["by"] for look in state.get("looks", ()) if look["at"] == owner and look["step"] == step]


def spy_grant(state: dict[str, Any], owner: int) -> Iterable[int]:
    """The Spy acting now (D-SPY) sees every current sheet (P5, FD8)."""
    pending = state.get("pending")
    if pending and pending.get("kind") == "spy":
        return list(pending["seats"])
    return []


def offer_grant(state: dict[str, Any], owner: int) -> Iterable[int]:
    """The recipient of `owner`'s open proposal sees the specials offered (V4)."""
    return [p["to"] for p in state.get("proposals", ()) if p["from"] == owner]


INFORMATION = Information({
    "title": PUBLIC,
    "options": PUBLIC,
    "seats": PUBLIC,
    "rounds": PUBLIC,
    "round": PUBLIC,
    "step": PUBLIC,
    "over": PUBLIC,
    "phase": PUBLIC,
    "at": PUBLIC,
    "marker": PUBLIC,
    "afb": PUBLIC,
    "rng": NEVER,
    "players": Seats(Fields({
        "crowns": Own(),
        "hand": Own(count_as="hand_size", count="len", shown_to=divination_grant),
        "items": PUBLIC,
        "sheet": Own(shown_to=spy_grant),
        "offered": Own(count_as="offered_specials", count="len", shown_to=offer_grant),
    })),
    "deck": Secret(count_as="deck_size", count="len"),
    "display": PUBLIC,
    "facedown": Secret(),
    "discard": PUBLIC,
    "buried": Secret(count_as="buried_count", count="len"),
    "removed": PUBLIC,
    "offer": PUBLIC,
    "auction": PUBLIC,
    "queue": PUBLIC,
    "spies": PUBLIC,
    "reveal": PUBLIC,
    "prices": PUBLIC,
    "income": PUBLIC,
    "pending": PUBLIC,
    "looks": PUBLIC,
    "proposals": PUBLIC,
    "scores": PUBLIC,
})  # fmt: skip
