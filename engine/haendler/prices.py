"""Phase 4, price changes and warehouse sales: D4-WHEEL, D4-KONTOR, D4-SALES (H-78 to
H-83, R-10).

Sealed votes raise their type one row each, wrapping from the top row to the bottom.
Kontor holders then shift one price one row (Kontor without wrap, Großes Kontor with).
Last, one sealed window serves Lagerverkauf (up to 3 goods from one warehouse at the buy
price) and Sonder-Verkauf (one good per card for 800, no bonus).
"""

from __future__ import annotations

from typing import Any

from engine.core.errors import IllegalOrder
from engine.core.events import Event, event
from engine.haendler.context import (
    Ctx,
    S,
    buy_price,
    counts,
    gain,
    has,
    need,
    own,
    play_card,
    shape,
    store_add,
    store_count,
    turn_order,
)  # fmt: skip
from engine.haendler.decision import Decision, Order
from engine.haendler.free import Wallet

SONDER = "sonder_verkauf"


def wrap_row(row: int, shift: int, top: int) -> int:
    """H-78: rows 1..top, moving `shift` rows up with wrap-around."""
    return (row - 1 + shift) % top + 1


# -- D4-WHEEL -----------------------------------------------------------------------------
def _wheel_check(ctx: Ctx, s: S, seat: int, order: Order, w: Wallet) -> None:
    arrows = shape(order, "arrows", list, [None, None])
    if len(arrows) != 2:
        raise IllegalOrder("malformed_order", "the wheel has exactly two arrows")
    for a in arrows:
        if a is not None and a not in ctx.board.goods:
            raise IllegalOrder("malformed_order", f"an arrow points at a good or at the shield (null), not {a!r}")


def _wheel_apply(ctx: Ctx, s: S, orders: dict[int, Order], ev: list[Event]) -> None:
    votes: dict[str, int] = {}
    shown = {}
    for seat in turn_order(s):
        arrows = (orders.get(seat) or {}).get("arrows") or [None, None]
        shown[str(seat)] = arrows
        for a in arrows:
            if a is not None:
                votes[a] = votes.get(a, 0) + 1
    prices = own(s, "prices")
    for good, n in votes.items():
        prices[good] = wrap_row(prices[good], n, ctx.board.top_row)
    ev.append(event("price_votes", arrows=shown, votes=votes, prices=dict(s["prices"])))


WHEEL = Decision(
    "wheel", "D4-WHEEL", True, ("arrows",),
    lambda ctx, s, seat: {"goods": list(ctx.board.goods), "rows": dict(s["prices"])},
    _wheel_check, _wheel_apply, lambda ctx, s, seat: {"arrows": [None, None]},
)  # fmt: skip


# -- D4-KONTOR ----------------------------------------------------------------------------
def kontor_cards(ctx: Ctx, s: S, seat: int) -> list[str]:
    return [a for a in s["players"][seat]["abilities"] if ctx.comp.abilities[a].kind == "price"]


def _shift(ctx: Ctx, prices: dict[str, int], move: dict[str, Any], cards: list[str]) -> None:
    card, good, way = shape(move, "card", str), shape(move, "good", str), shape(move, "dir", str)
    if card not in cards:
        raise IllegalOrder("no_such_card", f"you have no unused price card {card!r}")
    if good not in ctx.board.goods:
        raise IllegalOrder("malformed_order", f"{good!r} is not a good")
    if way not in ("up", "down"):
        raise IllegalOrder("malformed_order", "dir is 'up' or 'down'")
    cards.remove(card)
    row, top = prices[good], ctx.board.top_row
    if not ctx.comp.abilities[card].wrap and row == (top if way == "up" else 1):
        side = "top" if way == "up" else "bottom"
        raise IllegalOrder("price_limit", f"Kontor cannot move {good} {way}: it is on the {side} row")
    prices[good] = wrap_row(row, 1 if way == "up" else -1, top)


def _kontor_check(ctx: Ctx, s: S, seat: int, order: Order, w: Wallet) -> None:
    prices, cards = dict(s["prices"]), kontor_cards(ctx, s, seat)
    for move in shape(order, "moves", list, []):
        _shift(ctx, prices, move, cards)


def _kontor_apply(ctx: Ctx, s: S, orders: dict[int, Order], ev: list[Event]) -> None:
    (seat, order), = orders.items()
    cards = kontor_cards(ctx, s, seat)
    moves = order.get("moves") or []
    prices = own(s, "prices")
    for move in moves:
        _shift(ctx, prices, move, cards)
    ev.append(event("price_adjusted", seat=seat, moves=moves, prices=dict(s["prices"])))


KONTOR = Decision(
    "kontor", "D4-KONTOR", False, ("moves",),
    lambda ctx, s, seat: {"cards": kontor_cards(ctx, s, seat), "rows": dict(s["prices"]), "top": ctx.board.top_row},
    _kontor_check, _kontor_apply, lambda ctx, s, seat: {"moves": []},
)  # fmt: skip


# -- D4-SALES -----------------------------------------------------------------------------
def _sales_choices(ctx: Ctx, s: S, seat: int) -> dict[str, object]:
    return {
        "lagerverkauf": has(s, seat, "lagerverkauf"),
        "lagerverkauf_max": ctx.comp.lagerverkauf_max,
        "sonder_verkauf_cards": s["players"][seat]["hand"].get(SONDER, 0),
        "sonder_verkauf_price": ctx.comp.sonder_verkauf_price,
        "buy_prices": {g: buy_price(ctx, s, g) for g in ctx.board.goods},
        "warehouses": {city: dict(goods) for city, goods in s["stores"][seat].items()},
    }


def _sales_parse(order: Order) -> tuple[str | None, list[str], list[tuple[str, str]]]:
    lager = shape(order, "lager", dict, {})
    city = shape(lager, "city", str) if lager else None
    goods = shape(lager, "goods", list, []) if lager else []
    sonder = [(shape(x, "city", str), shape(x, "good", str)) for x in shape(order, "sonder", list, [])]
    return city, goods, sonder


def _sales_check(ctx: Ctx, s: S, seat: int, order: Order, w: Wallet) -> None:
    city, goods, sonder = _sales_parse(order)
    if goods:
        need(has(s, seat, "lagerverkauf"), "no_such_card", "you do not hold Lagerverkauf")
        need(len(goods) <= ctx.comp.lagerverkauf_max, "too_many_goods",
             f"Lagerverkauf sells at most {ctx.comp.lagerverkauf_max} goods")  # fmt: skip
    held = w.hand.get(SONDER, 0)
    need(len(sonder) <= held, "no_such_card", f"you hold {held} Sonder-Verkauf card(s)")
    wanted = counts([f"{city}|{g}" for g in goods] + [f"{c}|{g}" for c, g in sonder])
    for key, k in wanted.items():
        c, g = key.split("|")
        need(store_count(s, seat, c, g) >= k, "not_in_warehouse", f"your warehouse in {c} holds fewer than {k} {g}")


def _sales_apply(ctx: Ctx, s: S, orders: dict[int, Order], ev: list[Event]) -> None:
    parsed = {seat: _sales_parse(orders[seat]) for seat in turn_order(s) if seat in orders}
    lager, sonder = [], []
    stock = own(s, "stock")
    for seat, (city, goods, _) in parsed.items():
        if goods and city is not None:
            paid = sum(buy_price(ctx, s, g) for g in goods)
            for g in goods:
                store_add(s, seat, city, g, -1)
                stock[g] += 1
            gain(s, seat, paid)
            lager.append({"seat": seat, "city": city, "goods": goods, "received": paid})
    for seat, (_, _, cards) in parsed.items():
        for c, g in cards:
            play_card(s, seat, SONDER)
            store_add(s, seat, c, g, -1)
            stock[g] += 1
            gain(s, seat, ctx.comp.sonder_verkauf_price)
            sonder.append({"seat": seat, "city": c, "good": g, "received": ctx.comp.sonder_verkauf_price})
    ev.append(event("warehouse_sales", lagerverkauf=lager, sonder_verkauf=sonder))


SALES = Decision(
    "sales", "D4-SALES", True, ("lager", "sonder"),
    _sales_choices, _sales_check, _sales_apply, lambda ctx, s, seat: {},
)  # fmt: skip
