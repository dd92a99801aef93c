"""Typed engine errors with stable codes.

The codes are the public contract: the API returns them as the problem+json `code`
(prefixed by nothing), clients branch on them, and they are never renamed. Every code a
title raises is listed here once, so the API can document them all.
"""

from __future__ import annotations

from typing import Any

#: Stable codes of `IllegalOrder`, with a short description for the API docs.
ORDER_CODES: dict[str, str] = {
    "not_your_turn": "No decision is open for this seat.",
    "malformed_order": "The order does not have the shape this decision takes.",
    "wrong_kind": "The order is for another kind of decision than the open one.",
    "not_enough_money": "The order would make the seat's money negative.",
    "bad_amount": "An amount is negative or not a multiple of the money step.",
    "out_of_stock": "The stock does not hold enough pieces of that good.",
    "wrong_city": "The city does not produce that good, or the seat has no such goods there.",
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
    "game_over": "The game has ended.",
}


class EngineError(Exception):
    """Base of every error the engine raises on purpose."""

    code = "engine_error"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, **self.details}


class IllegalOrder(EngineError):
    """An order that `validate` refuses. The state is never touched."""

    def __init__(self, code: str, message: str, **details: Any) -> None:
        if code not in ORDER_CODES:
            raise ValueError(f"unregistered order error code {code!r}")
        super().__init__(message, **details)
        self.code = code


class OptionsError(EngineError):
    """Game options (or the seat count) that a title does not accept."""

    code = "bad_options"


class DataError(EngineError):
    """A board, card or table file that fails validation; names the file and the field."""

    code = "bad_data_file"

    def __init__(self, file: str, field: str, problem: str) -> None:
        super().__init__(f"{file}: {field}: {problem}", file=file, field=field)
