"""Auf Achse's order codes: stable, returned as the API's problem `code`, never renamed."""

from __future__ import annotations

from engine.core.errors import declare_codes

ORDER_CODES: dict[str, str] = declare_codes({
    "not_enough_money": "The order would make the seat's money negative.",
    "no_such_space": "The space is not on the board.",
    "space_full": "A road space holds at most two trucks at the end of a move (R3, M6).",
    "bad_die": "The die or the declared value N does not fit the roll (M7).",
    "bad_path": "The path is not a simple path of adjacent spaces from the truck (M4).",
    "blocked_path": "The path enters or passes a space holding a marker (M5, K4).",
    "must_use_full_value": "The path stops early where no pips may be forfeited (M8, AD1, R23).",
    "cannot_wait": "A truck may wait only next to a marker (M9, AD4).",
    "bad_roadworks": "The roadworks target breaks K1, or is missing or not allowed.",
    "no_such_order": "The order card is not in the seat's hand, or not where the order says.",
    "wrong_city": "The truck does not stand in the order's start city (L2).",
    "over_capacity": "The goods would exceed the truck's capacity (L2, H3).",
    "no_trailers": "Trailers cannot be bought or sold now (kids variant, supply empty, none owned, H1).",
    "pick_required": "An eligible arrival must pick a public order or decline (P2).",
    "cannot_pick": "No public order may be picked now (P1).",
    "no_such_slot": "The display has no card in that slot.",
    "bad_bid": "The bid is not a step the auction allows (A3, A4).",
    "not_allowed_here": "That part of an order is not allowed in this decision.",
    "bad_deliveries": "The listed deliveries are not exactly the orders delivered in this city (R27).",
    "bad_space": "The space is not allowed for this marker (K1, K3, AD6).",
    "out_of_range": "The city is beyond the shortcut's range (E13).",
})
