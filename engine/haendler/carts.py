"""Phase 2, cart auctions and loading: D2-BID, D2-MASTER, D2-LOAD (H-45 to H-55, R-6, R-7).

Carts are taken in number order. A cart in a city without a loading master is auctioned
by sealed bid (highest wins, ties to the earliest in turn order, all-zero makes the start
player master for free). The master then loads goods of one type and publishes a tariff
(price for 1, price for 2) or REFUSED for every other seat (step A); the other seats then
load in one sealed window, paying the tariff or playing Kostenlose Zuladung (step B).
In the light variant every tariff is fixed at 200/400 and cannot be set or refused.
"""

from __future__ import annotations

from typing import Any

from engine.core.errors import IllegalOrder
from engine.core.events import Event, event
from engine.haendler.context import (
    Ctx,
    S,
    amount,
    gain,
    hand_size,
    need,
    pay,
    play_card,
    shape,
    store_add,
    store_count,
    turn_order,
)  # fmt: skip
from engine.haendler.decision import Decision, Order
from engine.haendler.free import Wallet

ZULADUNG = "kostenlose_zuladung"


def cart_of(s: S) -> tuple[int, dict[str, Any]]:
    """The cart (number, data) the open phase-2 decision is about."""
    number = s["pending"]["cart"]
    return number, s["carts"][number - 1]


def master_type(cart: dict[str, Any]) -> str | None:
    """The type of the master's goods on the cart, or None while it has none (H-51)."""
    if cart["master"] is None:
        return None
    row = cart["rows"][cart["master"]]
    return row[0] if row else None


def load_row(cart: dict[str, Any], seat: int, goods: list[str]) -> None:
    """Put goods on seat's row of the cart. `copy_state` shares the rows between states,
    so this, their only writer besides the sale that empties them, copies on write."""
    rows = list(cart["rows"])
    rows[seat] = [*rows[seat], *goods]
    cart["rows"] = rows


def loadable(s: S, seat: int, cart: dict[str, Any]) -> list[str]:
    """Goods `seat` could load from its warehouse in the cart's city, as a non-master."""
    mtype = master_type(cart)
    store = s["stores"][seat].get(cart["at"], {})
    return [g for g, k in store.items() if k and g != mtype]


def load_eligible(ctx: Ctx, s: S, cart: dict[str, Any]) -> list[int]:
    """D2-LOAD WHO: every non-master with room, a loadable good, and a tariff or a card.

    All three facts are public (warehouses, rows, tariffs, hand sizes), so being asked
    reveals nothing (H-16)."""
    out = []
    for seat in turn_order(s):
        if seat == cart["master"] or len(cart["rows"][seat]) >= ctx.comp.other_slots:
            continue
        if not loadable(s, seat, cart):
            continue
        if s["tariffs"].get(str(seat)) is None and hand_size(s, seat) == 0:
            continue
        out.append(seat)
    return out


# -- D2-BID -------------------------------------------------------------------------------
def _bid_choices(ctx: Ctx, s: S, seat: int) -> dict[str, object]:
    number, cart = cart_of(s)
    money = s["players"][seat]["money"]
    return {"cart": number, "city": cart["at"], "min": 0, "max": money, "step": ctx.comp.money_step}


def _bid_check(ctx: Ctx, s: S, seat: int, order: Order, w: Wallet) -> None:
    bid = amount(ctx, order.get("bid", 0), "bid")
    if bid > w.money:
        raise IllegalOrder("not_enough_money", f"you cannot bid {bid}: more than you have")


def _bid_apply(ctx: Ctx, s: S, orders: dict[int, Order], ev: list[Event]) -> None:
    number, cart = cart_of(s)
    bids = {seat: orders[seat].get("bid", 0) or 0 for seat in orders}
    order = turn_order(s)
    winner = max(order, key=lambda seat: (bids.get(seat, 0), -order.index(seat)))
    pay(s, winner, bids[winner])
    cart["master"] = winner
    ev.append(event("cart_auction", cart=number, bids={str(k): v for k, v in bids.items()},
                    master=winner, paid=bids[winner]))  # fmt: skip


BID = Decision(
    "cart_bid", "D2-BID", True, ("bid",),
    _bid_choices, _bid_check, _bid_apply, lambda ctx, s, seat: {"bid": 0},
)  # fmt: skip


# -- D2-MASTER ----------------------------------------------------------------------------
def master_types(s: S, seat: int, cart: dict[str, Any]) -> list[str]:
    """Types the master may load now (H-50, H-51)."""
    mtype = master_type(cart)
    store = s["stores"][seat].get(cart["at"], {})
    if mtype is not None:
        return [mtype] if store.get(mtype) else []
    others = {g for p, row in enumerate(cart["rows"]) if p != seat for g in row}
    return [g for g, k in store.items() if k and g not in others]


def _master_choices(ctx: Ctx, s: S, seat: int) -> dict[str, object]:
    number, cart = cart_of(s)
    room = ctx.comp.master_slots - len(cart["rows"][seat])
    return {
        "cart": number,
        "city": cart["at"],
        "goods": {g: min(room, store_count(s, seat, cart["at"], g)) for g in master_types(s, seat, cart)},
        "tariff_for": [p for p in range(s["seats"]) if p != seat],
        "fixed_tariff": list(ctx.comp.light_tariff) if s["options"]["light"] else None,
        "step": ctx.comp.money_step,
    }  # fmt: skip


def _master_check(ctx: Ctx, s: S, seat: int, order: Order, w: Wallet) -> None:
    number, cart = cart_of(s)
    k = shape(order, "load", int, 0)
    need(k >= 0, "malformed_order", "load must be 0 or more")
    if k:
        good = shape(order, "good", str)
        room = ctx.comp.master_slots - len(cart["rows"][seat])
        need(good is not None, "malformed_order", "name the good to load")
        need(k <= room, "too_many_goods", f"you may hold at most {ctx.comp.master_slots} goods on a cart")
        have = store_count(s, seat, cart["at"], good)
        need(have >= k, "not_in_warehouse", f"your warehouse in {ctx.board.node_name(cart['at'])} holds {have} "
             f"{ctx.board.goods_names.get(good, good)}")
        need(good in master_types(s, seat, cart), "master_type",
             f"you cannot load {good!r} as master: it must be your one type, "
             "and not a type another seat has loaded")  # fmt: skip
    tariffs = shape(order, "tariffs", dict, {})
    if s["options"]["light"]:
        need(not tariffs, "tariffs_fixed", "in the light variant tariffs are fixed at 200/400")
    for key, tariff in tariffs.items():
        if not key.isdigit() or int(key) >= s["seats"] or int(key) == seat:
            raise IllegalOrder("malformed_order", f"tariffs key {key!r} is not another seat")
        if tariff is not None:
            if not isinstance(tariff, list) or len(tariff) != 2:
                raise IllegalOrder("malformed_order",
                                   "a tariff is [price for 1 good, price for 2 goods] or null (refused)")  # fmt: skip
            amount(ctx, tariff[0], f"tariffs.{key}[0]")
            amount(ctx, tariff[1], f"tariffs.{key}[1]")


def _master_apply(ctx: Ctx, s: S, orders: dict[int, Order], ev: list[Event]) -> None:
    number, cart = cart_of(s)
    (seat, order), = orders.items()
    k, good = order.get("load") or 0, order.get("good")
    if k and good is not None:
        store_add(s, seat, cart["at"], good, -k)
        load_row(cart, seat, [good] * k)
    if s["options"]["light"]:
        fixed = list(ctx.comp.light_tariff)
        s["tariffs"] = {str(p): fixed for p in range(s["seats"]) if p != seat}
    else:
        given = order.get("tariffs") or {}
        s["tariffs"] = {str(p): given.get(str(p)) for p in range(s["seats"]) if p != seat}
    ev.append(event("cart_master", cart=number, seat=seat, loaded=[good] * k if k else [],
                    tariffs=s["tariffs"]))  # fmt: skip


MASTER = Decision(
    "master", "D2-MASTER", False, ("load", "good", "tariffs"),
    _master_choices, _master_check, _master_apply, lambda ctx, s, seat: {"load": 0},
)  # fmt: skip


# -- D2-LOAD ------------------------------------------------------------------------------
def _load_choices(ctx: Ctx, s: S, seat: int) -> dict[str, object]:
    number, cart = cart_of(s)
    return {
        "cart": number,
        "city": cart["at"],
        "room": ctx.comp.other_slots - len(cart["rows"][seat]),
        "goods": {g: store_count(s, seat, cart["at"], g) for g in loadable(s, seat, cart)},
        "tariff": s["tariffs"].get(str(seat)),
        "can_play_card": s["players"][seat]["hand"].get(ZULADUNG, 0) > 0,
        "money": s["players"][seat]["money"],
    }


def _load_check(ctx: Ctx, s: S, seat: int, order: Order, w: Wallet) -> None:
    number, cart = cart_of(s)
    goods = shape(order, "goods", list, [])
    need(all(isinstance(g, str) for g in goods), "malformed_order", "goods is a list of good names")
    card = shape(order, "card", bool, False)
    room = ctx.comp.other_slots - len(cart["rows"][seat])
    need(len(goods) <= room, "too_many_goods", f"you may load {room} more good(s) on this cart")
    mtype = master_type(cart)
    for good in set(goods):
        need(good != mtype, "master_type", f"{good!r} is the loading master's type; only the master loads it")
        have = store_count(s, seat, cart["at"], good)
        need(goods.count(good) <= have, "not_in_warehouse", f"your warehouse in {ctx.board.node_name(cart['at'])} "
             f"holds {have} {ctx.board.goods_names.get(good, good)}")
    if card:
        need(bool(goods), "malformed_order", "Kostenlose Zuladung needs goods to load")
        need(w.hand.get(ZULADUNG, 0) > 0, "no_such_card", "you hold no Kostenlose Zuladung")
    elif goods:
        tariff = s["tariffs"].get(str(seat))
        need(tariff is not None, "refused", "the loading master refused you; only a card loads")
        price = tariff[len(goods) - 1]
        need(price <= w.money, "not_enough_money", f"the tariff is {price}, more than you have")


def _load_apply(ctx: Ctx, s: S, orders: dict[int, Order], ev: list[Event]) -> None:
    number, cart = cart_of(s)
    loads = []
    for seat in turn_order(s):
        order = orders.get(seat)
        if not order or not order.get("goods"):
            continue
        goods = order["goods"]
        for good in goods:
            store_add(s, seat, cart["at"], good, -1)
        load_row(cart, seat, goods)
        paid = 0
        if order.get("card"):
            play_card(s, seat, ZULADUNG)
        else:
            paid = s["tariffs"][str(seat)][len(goods) - 1]
            pay(s, seat, paid)
            gain(s, cart["master"], paid)
        loads.append({"seat": seat, "goods": goods, "paid": paid, "card": bool(order.get("card"))})
    ev.append(event("cart_loaded", cart=number, loads=loads))


LOAD = Decision(
    "load", "D2-LOAD", True, ("goods", "card"),
    _load_choices, _load_check, _load_apply, lambda ctx, s, seat: {"goods": []},
)  # fmt: skip
