"""What of an Auf Achse state each viewer sees (rules §4, R14).

Declared as data; `engine.core.info.strip` builds every view from it by allow-list.

* Public: the board (truck positions, both markers with the jam's owner and expiry),
  every seat's cash, debts, trailers, loaded orders, skipped turns and hand size; the
  cards won at auction that are still in a hand (`open`: they were face up); the dice
  and the roll log; the display; the sizes of the public deck, event deck and reserve;
  the event cards used; every auction bid and pass; the discard pile; the open decision.
* A seat's own: the identity of the order cards in its hand (`hand`; others see
  `hand_size`).
* Secret until the end: the order of the public deck, the event deck and the reserve.
* Never shown: the random stream (`rng`); the seed is revealed by the service.
* At the end everything opens except the stream (RNG7).
"""

from __future__ import annotations

from typing import Any

from engine.core.info import NEVER, PUBLIC, Derived, Fields, Information, Own, Seats, Secret

#: The version of the rules specification this engine implements (published with the
#: data set id and file hashes beside the commitment, RNG2).
RULES_VERSION = 1


def _data(state: dict[str, Any]) -> dict[str, Any]:
    from engine.aufachse.context import ctx_of

    ctx = ctx_of(state)
    return {"id": ctx.id, "name": ctx.name, "hashes": dict(ctx.hashes), "rules_version": RULES_VERSION}


INFORMATION = Information({
    "title": PUBLIC,
    "options": PUBLIC,
    "data": Derived(_data),
    "data_key": PUBLIC,
    "seats": PUBLIC,
    "rng": NEVER,
    "step": PUBLIC,
    "over": PUBLIC,
    "phase": PUBLIC,
    "first": PUBLIC,
    "turn": PUBLIC,
    "turn_no": PUBLIC,
    "round": PUBLIC,
    "dice": PUBLIC,
    "rolls": PUBLIC,
    "players": Seats(Fields({
        "cash": PUBLIC,
        "debts": PUBLIC,
        "hand": Own(count_as="hand_size", count="len"),
        "open": PUBLIC,
        "loaded": PUBLIC,
        "trailers": PUBLIC,
        "skips": PUBLIC,
        "at": PUBLIC,
    })),
    "display": PUBLIC,
    "deck": Secret(count_as="deck_size", count="len"),
    "reserve": Secret(count_as="reserve_size", count="len"),
    "events": Secret(count_as="event_deck_size", count="len"),
    "used_events": PUBLIC,
    "discard": PUBLIC,
    "supply": PUBLIC,
    "roadworks": PUBLIC,
    "jam": PUBLIC,
    "auction": PUBLIC,
    "pending": PUBLIC,
    "queue": PUBLIC,
    "fresh": PUBLIC,
    "bank": PUBLIC,
    "last_move": PUBLIC,
})  # fmt: skip
