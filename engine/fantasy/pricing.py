"""Phase 2's price sheets (§9.1, R5, R19, P1–P3) and the Spy's revision (D-SPY, P5, FD8).

A sheet is `{"prices": {type: crowns}}` naming exactly the types the seat owns. It is the
seat's own until the reveal (I1); a Spy sees every current sheet while it revises.
"""

from __future__ import annotations

from typing import Any

from engine.core.events import Event, event
from engine.fantasy.decision import Decision, Order, Wallet
from engine.fantasy.state import CARD_KIND, TYPES, C, S, fail, holds_types, need, seat_entry, whole

#: R5: each type's prices, base to twice base; 1 to twice base in the below-base variant (V1).
_RANGES = {below: {t: ((1 if below else b), 2 * b) for t, b in C.base.items()} for below in (False, True)}


def price_range(s: S, t: str) -> tuple[int, int]:
    """R5: base to twice base; 1 to twice base in the below-base variant (V1)."""
    return _RANGES[bool(s["options"]["below_base"])][t]


def check_sheet(s: S, seat: int, prices: Any) -> None:
    """R5, R19: `prices` names exactly the types `seat` owns, each at a whole price in its range."""
    if type(prices) is dict:  # the common case, a sheet that passes, checked in one loop
        try:
            owned = TYPES.intersection(map(CARD_KIND.__getitem__, s["players"][seat]["items"]))
        except KeyError:  # a card outside the deck (a hand-made state): the general check
            owned = None
        if prices.keys() == owned:
            ranges = _RANGES[bool(s["options"]["below_base"])]
            for t, p in prices.items():
                if type(p) is not int:
                    break
                low, high = ranges[t]
                if not low <= p <= high:
                    break
            else:
                return
    _check_sheet(s, seat, prices)


def _check_sheet(s: S, seat: int, prices: Any) -> None:
    """`check_sheet` type by type in canonical order, naming the first fault."""
    need(isinstance(prices, dict), "malformed_order", "prices maps each item type you own to a price")
    owned = holds_types(s, seat)
    if prices.keys() != set(owned):  # not exactly the owned types (R19)
        missing = [t for t in owned if t not in prices]
        extra = sorted(t for t in prices if t not in owned)
        fail("bad_sheet", "a price sheet names exactly the types you own (R19): "
             + (f"missing {', '.join(missing)}" if missing else "") + ("; " if missing and extra else "")
             + (f"you own no {', '.join(map(str, extra))}" if extra else ""))
    ranges = _RANGES[bool(s["options"]["below_base"])]
    for t in owned:
        p = prices[t]
        low, high = ranges[t]
        if type(p) is not int and not whole(p):  # `whole`, with the common case first
            fail("malformed_order", f"the price of {t} is a whole number")
        if not low <= p <= high:
            fail("price_out_of_range", f"{C.type_names[t]} sells from {low} to {high}, not {p} (R5)")


def default_sheet(s: S, seat: int) -> dict[str, int]:
    """P3: the base value for every owned type."""
    return {t: C.base[t] for t in holds_types(s, seat)}


def _price_choices(s: S, seat: int, shared: None) -> dict[str, Any]:
    ranges = _RANGES[bool(s["options"]["below_base"])]
    return {"types": {t: list(ranges[t]) for t in holds_types(s, seat)}}


def _price_check(s: S, seat: int, o: Order, w: Wallet) -> None:
    check_sheet(s, seat, o.get("prices"))


def _price_apply(s: S, orders: dict[int, Order], ev: list[Event]) -> None:
    players = s["players"] = s["players"].copy()  # `seat_entry` for every seat, the list copied once
    for seat in sorted(orders):
        p = players[seat] = players[seat].copy()
        p["sheet"] = dict(orders[seat]["prices"])
    ev.append(event("sheets_submitted", seats=sorted(orders)))


PRICE = Decision("price", "D-PRICE", True, ("prices",), _price_choices, _price_check, _price_apply,
                 lambda s, seat: {"prices": default_sheet(s, seat)})


# -- D-SPY (P5, FD8, R26) ---------------------------------------------------------------------
def _spy_choices(s: S, seat: int, shared: None) -> dict[str, Any]:
    # The Spy may see every sheet now (view.spy_grant); the choices carry them too.
    sheets = {str(i): p["sheet"] for i, p in enumerate(s["players"]) if p["sheet"] is not None}
    return {"sheets": sheets, "types": {t: list(price_range(s, t)) for t in holds_types(s, seat)}}


def _spy_check(s: S, seat: int, o: Order, w: Wallet) -> None:
    if o.get("prices") is None:
        return  # keeps the sheet
    check_sheet(s, seat, o["prices"])


def _spy_apply(s: S, orders: dict[int, Order], ev: list[Event]) -> None:
    seat, o = next(iter(orders.items()))
    sheets = {str(i): p["sheet"] for i, p in enumerate(s["players"]) if p["sheet"] is not None}
    ev.append(event("spy_saw", [seat], seat=seat, sheets=sheets))
    revised = o.get("prices") is not None
    if revised:
        seat_entry(s, seat)["sheet"] = dict(o["prices"])
    ev.append(event("spy_done", seat=seat))
    s["spies"] = s["spies"][1:]


SPY = Decision("spy", "D-SPY", False, ("prices",), _spy_choices, _spy_check, _spy_apply,
               lambda s, seat: {"prices": None})
