"""Phase 1, buying goods: D1-BUY (H-41 to H-44, R-1, R-18).

Each seat in turn order buys 0 to 3 goods from the stock at the buy price of each type
and puts each in its warehouse in a city producing that type. Günstiger Einkauf makes a
whole buy step cost 100 (nothing when nothing is bought), in both buy steps of round 1.
"""

from __future__ import annotations

from engine.core.errors import IllegalOrder
from engine.core.events import Event, event
from engine.haendler.context import Ctx, S, buy_price, counts, has, own, pay, shape, store_add
from engine.haendler.decision import Decision, Order
from engine.haendler.free import Wallet


def cost(ctx: Ctx, s: S, seat: int, goods: list[str]) -> int:
    if has(s, seat, "guenstiger_einkauf"):
        return ctx.comp.guenstiger_einkauf_price if goods else 0
    return sum(buy_price(ctx, s, g) for g in goods)


def _choices(ctx: Ctx, s: S, seat: int) -> dict[str, object]:
    return {
        "max": ctx.comp.max_buy,
        "prices": {g: buy_price(ctx, s, g) for g in ctx.board.goods},
        "stock": dict(s["stock"]),
        "cities": {g: list(cities) for g, cities in ctx.board.producers.items()},
        "whole_step_price": ctx.comp.guenstiger_einkauf_price if has(s, seat, "guenstiger_einkauf") else None,
        "money": s["players"][seat]["money"],
    }  # fmt: skip


def _parse(order: Order) -> list[tuple[str, str]]:
    entries = shape(order, "goods", list, [])
    out = []
    for i, e in enumerate(entries):
        good, city = shape(e, "good", str), shape(e, "city", str)
        if good is None or city is None:
            raise IllegalOrder("malformed_order", f"goods[{i}] needs good and city")
        out.append((good, city))
    return out


def _check(ctx: Ctx, s: S, seat: int, order: Order, w: Wallet) -> None:
    entries = _parse(order)
    if len(entries) > ctx.comp.max_buy:
        raise IllegalOrder("too_many_goods", f"buy at most {ctx.comp.max_buy} goods")
    produces = ctx.board.produces
    for good, city in entries:
        if good not in ctx.board.goods:
            raise IllegalOrder("malformed_order", f"{good!r} is not a good")
        if city not in produces:
            raise IllegalOrder("wrong_city", f"{city!r} is not a city")
        if good not in produces[city]:
            raise IllegalOrder("wrong_city",
                               f"{ctx.board.city_names[city]} does not produce {ctx.board.goods_names[good]}")
    for good, k in counts([g for g, _ in entries]).items():
        if s["stock"][good] < k:
            raise IllegalOrder("out_of_stock", f"the stock holds {s['stock'][good]} {ctx.board.goods_names[good]}")
    price = cost(ctx, s, seat, [g for g, _ in entries])
    if price > w.money:
        raise IllegalOrder("not_enough_money", f"these goods cost {price}, more than you have")


def _apply(ctx: Ctx, s: S, orders: dict[int, Order], ev: list[Event]) -> None:
    (seat, order), = orders.items()
    entries = [(e["good"], e["city"]) for e in order.get("goods") or []]  # validated
    price = cost(ctx, s, seat, [g for g, _ in entries])
    pay(s, seat, price)
    stock = own(s, "stock")
    for good, city in entries:
        stock[good] -= 1
        store_add(s, seat, city, good, 1)
    bought = [{"good": g, "city": c} for g, c in entries]
    ev.append(event("bought", seat=seat, goods=bought, paid=price))


BUY = Decision(
    "buy", "D1-BUY", False, ("goods",),
    _choices, _check, _apply, lambda ctx, s, seat: {"goods": []},
)  # fmt: skip
