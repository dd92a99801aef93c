"""Fantasy Business's order codes: stable, returned as the API's problem `code`, never renamed."""

from __future__ import annotations

from engine.core.errors import declare_codes

ORDER_CODES: dict[str, str] = declare_codes({
    "not_enough_crowns": "The bid, purchase or transfer is more than the seat's crowns (O16, R27).",
    "bid_too_low": "An opening must reach the card's minimum; a raise must beat the high bid (O10, O14).",
    "no_such_position": "That display position is empty or does not exist (R20).",
    "no_preemption": "The seat holds no pre-emption this round (O11).",
    "no_such_card": "The seat does not hold that card, or it is not playable in this window.",
    "bad_target": "The special card's target is not valid now (FD6, O19, O20, P6).",
    "one_spy": "At most one Spy card per player in each W-SPY window (R13).",
    "bad_sheet": "A price sheet must name exactly the item types the seat owns (R19).",
    "price_out_of_range": "A price must be from base (or 1 in the below-base variant) to twice base (R5).",
    "trading_off": "Transfers exist only in the trading variant (R9, V4).",
    "transfers_frozen": "Transfers are frozen from D-PRICE to the end of income (V4).",
    "bad_transfer": "The transfer names something its side does not own, or is malformed (V4).",
    "proposal_open": "This seat already has an open proposal (V4).",
    "no_proposal": "There is no such open proposal to answer or withdraw (V4).",
    "proposal_asked": "The proposal is its recipient's open decision now: it is answered there, not withdrawn "
                      "or answered as an action (V4).",
    "offer_gone": "On acceptance, a side no longer owns what it offers (V4).",
    "special_committed": "A special card in the transfer or instant is part of a play or order already "
                         "submitted in the open window (V4, FD12).",
})
