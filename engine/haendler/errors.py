"""Die Händler's order codes: stable, returned as the API's problem `code`, never renamed."""

from __future__ import annotations

from engine.core.errors import declare_codes

ORDER_CODES: dict[str, str] = declare_codes({
    "not_enough_money": "The order would make the seat's money negative.",
    "bad_amount": "An amount is negative or not a multiple of the money step.",
    "out_of_stock": "The stock does not hold enough pieces of that good.",
    "wrong_city": "The city is not on the board, or does not produce that good.",
    "not_in_warehouse": "Your warehouse in that city holds fewer pieces of that good than the order names.",
    "too_many_goods": "The order names more goods than the rule allows.",
    "no_such_card": "The seat does not hold that card, or it is not in play.",
    "card_not_affordable": "The card's printed cost is more than the seat's money.",
    "bid_too_low": "A bid must be above the current high bid.",
    "master_type": "The good breaks the loading master's type rule.",
    "refused": "The loading master refused this seat and no card was played.",
    "tariffs_fixed": "In the light variant tariffs are fixed and cannot be set.",
    "illegal_move": "The cart or messenger move breaks a movement rule.",
    "must_move": "A cart can be moved with this tile, so the tile cannot be forfeited.",
    "no_such_tile": "That movement tile is not face up.",
    "price_limit": "Kontor cannot move a price past the top or bottom row.",
    "has_credit": "A seat holding a credit cannot advance status.",
    "too_many_levels": "At most two levels a round, and never above the top level.",
    "no_credit_left": "The credit supply is empty.",
    "bad_transfer": "The transfer is not allowed (variant off, bad receiver or amount).",
    "nothing_to_repay": "The seat holds fewer credits than it tries to repay.",
})
