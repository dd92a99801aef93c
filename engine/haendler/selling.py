"""Phase 5, selling delivered goods: D5-BONUS and the automatic sale (H-84 to H-90, R-11).

The arrival track moves up one per arrived cart (never past 8). Influence holders with
goods on an arrived cart may play Verkauf mit Bonus, one per cart. Then each arrived
cart is sold in number order (sell price, plus the city bonus for types the city does not
produce or on a Verkauf mit Bonus cart), emptied and freed of its master; last, the
bonus markers are updated.
"""

from __future__ import annotations

from engine.core.events import Event, event
from engine.haendler.context import (
    Ctx,
    S,
    all_played,
    gain,
    hand_size,
    need,
    own,
    play_card,
    sell_price,
    shape,
    turn_order,
)  # fmt: skip
from engine.haendler.decision import Decision, Order
from engine.haendler.free import Wallet

BONUS_CARD = "verkauf_mit_bonus"


def arrived(s: S) -> list[int]:
    """Numbers of the carts that arrived this round."""
    return [i + 1 for i, c in enumerate(s["carts"]) if c["arrived"]]


def my_arrived(s: S, seat: int) -> list[int]:
    return [n for n in arrived(s) if s["carts"][n - 1]["rows"][seat]]


def bonus_eligible(ctx: Ctx, s: S) -> list[int]:
    if all_played(ctx, s, BONUS_CARD):
        return []
    return [p for p in turn_order(s) if hand_size(s, p) and my_arrived(s, p)]


def _check(ctx: Ctx, s: S, seat: int, order: Order, w: Wallet) -> None:
    carts = shape(order, "carts", list, [])
    need(len(set(carts)) == len(carts), "malformed_order", "name each cart at most once (R-26)")
    mine = my_arrived(s, seat)
    for c in carts:
        need(c in mine, "illegal_move", f"cart {c!r} did not arrive with goods of yours")
    held = w.hand.get(BONUS_CARD, 0)
    need(len(carts) <= held, "no_such_card", f"you hold {held} Verkauf mit Bonus card(s)")


def _apply(ctx: Ctx, s: S, orders: dict[int, Order], ev: list[Event]) -> None:
    plays = {}
    for seat in turn_order(s):
        carts = (orders.get(seat) or {}).get("carts") or []
        if carts:
            play_card(s, seat, BONUS_CARD, len(carts))
        if seat in orders:
            plays[str(seat)] = carts
    s["bonus_cards"] = plays
    ev.append(event("bonus_cards_played", plays=plays))


BONUS = Decision(
    "bonus", "D5-BONUS", True, ("carts",),
    lambda ctx, s, seat: {"carts": my_arrived(s, seat), "cards": s["players"][seat]["hand"].get(BONUS_CARD, 0)},
    _check, _apply, lambda ctx, s, seat: {"carts": []},
)  # fmt: skip


def advance_track(ctx: Ctx, s: S, ev: list[Event]) -> None:
    """H-85: one position per arrived cart, capped at the track's end."""
    n = len(arrived(s))
    if n:
        s["arrivals"] = min(ctx.comp.arrival_cap, s["arrivals"] + n)
        ev.append(event("arrival_track", arrived=arrived(s), position=s["arrivals"]))


def sell_and_update(ctx: Ctx, s: S, ev: list[Event]) -> None:
    """H-87 to H-90: sales cart by cart, emptying, bonus update, end check."""
    bonus_cards = s.pop("bonus_cards", {})
    stock = own(s, "stock")
    for n in arrived(s):
        cart = s["carts"][n - 1]
        city, bonus = cart["at"], s["bonus"][cart["at"]]
        sales = []
        for seat, row in enumerate(cart["rows"]):
            boosted = n in bonus_cards.get(str(seat), [])
            total = 0
            for good in row:
                extra = bonus if boosted or good not in ctx.board.produces[city] else 0
                total += sell_price(ctx, s, good) + extra
                stock[good] += 1
            if row:
                gain(s, seat, total)
                sales.append({"seat": seat, "goods": list(row), "received": total})
        cart["rows"] = [[] for _ in cart["rows"]]
        cart["master"] = None
        ev.append(event("cart_sold", cart=n, city=city, bonus=bonus, sales=sales))
    k = len(arrived(s))
    held = {c["at"] for c in s["carts"] if ctx.board.is_city(c["at"])}
    values = ctx.board.bonus_values
    markers = own(s, "bonus")
    for city in ctx.board.cities:
        up = min(len(values) - 1, values.index(markers[city]) + k)
        markers[city] = values[0] if city in held else values[up]
    for cart in s["carts"]:
        cart["arrived"] = False
    ev.append(event("bonus_markers", bonus=dict(s["bonus"])))
    if s["arrivals"] >= ctx.comp.end_threshold[s["seats"]] and not s["last_round"]:
        s["last_round"] = True
        ev.append(event("last_round", arrivals=s["arrivals"]))
