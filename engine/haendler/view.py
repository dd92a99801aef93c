"""What of a Die Händler state each viewer sees (rules §2, H-13 to H-16, H-99).

Declared as data; `engine.core.info.strip` builds every view from it by allow-list.

* Public (H-13): the board's prices, bonus markers, arrival track, every status, every
  warehouse, every cart with its master and rows, the messenger, the stock, every seat's
  tiles, ability cards and credits, the cards played and removed, the credit supply,
  tariffs, the ability pool and auction, and the open decision.
* A seat's own (H-14): its money and the kinds of influence cards in its hand. Others
  see the hand's size only (`hand_size`).
* Secret to all (H-14): the influence deck's composition; its size is public
  (`deck_size`). A seat choosing a card sees the deck in its request's choices (H-73).
* Never shown: the RNG state (the seed is revealed by the service at the end, and a
  replay rebuilds the stream). The board is shown as its id, name and provenance.
* At the end all money and hands open (H-99).

H-91's reveal of a dropping seat's money happens in the `upkeep_shortfall` event, which
carries it for everyone by rule, not through the view.
"""

from __future__ import annotations

from typing import Any

from engine.core.info import NEVER, PUBLIC, Derived, Fields, Information, Own, Seats, Secret, owner_fields


def _board(state: dict[str, Any]) -> dict[str, Any]:
    from engine.haendler.context import ctx_of  # the board a state was set up with

    board = ctx_of(state).board
    return {"id": board.id, "name": board.name, "provenance": board.provenance}


INFORMATION = Information({
    "title": PUBLIC,
    "options": PUBLIC,
    "board": Derived(_board),
    "board_key": PUBLIC,
    "seats": PUBLIC,
    "rng": NEVER,
    "round": PUBLIC,
    "start": PUBLIC,
    "step": PUBLIC,
    "over": PUBLIC,
    "last_round": PUBLIC,
    "players": Seats(Fields({
        "money": Own(),
        "level": PUBLIC,
        "tiles": PUBLIC,
        "abilities": PUBLIC,
        "hand": Own(count_as="hand_size"),
        "credits": PUBLIC,
    })),
    "stores": PUBLIC,
    "stock": PUBLIC,
    "prices": PUBLIC,
    "bonus": PUBLIC,
    "arrivals": PUBLIC,
    "carts": PUBLIC,
    "blocks": PUBLIC,
    "messenger": PUBLIC,
    "deck": Secret(count_as="deck_size"),
    "played": PUBLIC,
    "removed": PUBLIC,
    "credit_supply": PUBLIC,
    "tariffs": PUBLIC,
    "pool": PUBLIC,
    "auction": PUBLIC,
    "pending": PUBLIC,
    "at": PUBLIC,
})  # fmt: skip

#: The fields of a seat shown only to that seat (H-14), from the declaration above.
HIDDEN_PLAYER_FIELDS = tuple(owner_fields(INFORMATION)["players"])
