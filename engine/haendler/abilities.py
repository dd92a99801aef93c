"""Dealing the special ability cards at setup (H-32 to H-34, R-15).

`pairs` (default): the four printed pairs are dealt at random and each seat pays 1000.
`auction`: an open ascending auction run by two decisions, D0-NAME (the chooser names a
remaining card, opening at its printed cost) and D0-BID (the next eligible seat
clockwise raises in steps of 100 or passes for good). The flow (`flow.py`) finds the
chooser and the next bidder; this module holds the decisions and the award.
"""

from __future__ import annotations

from engine.core.events import Event, event
from engine.core.rng import shuffled
from engine.haendler.context import Ctx, S, amount, need, pay, shape
from engine.haendler.decision import Decision, Order
from engine.haendler.free import Wallet


def deal_pairs(ctx: Ctx, s: S, ev: list[Event]) -> None:
    """H-33: one printed pair to each seat at random; each pays the pair price."""
    pairs, s["rng"] = shuffled(s["rng"], [list(p) for p in ctx.comp.pairs])
    for seat in range(s["seats"]):
        s["players"][seat]["abilities"] = pairs[seat]
        pay(s, seat, ctx.comp.pair_price)
        ev.append(event("abilities_dealt", seat=seat, cards=pairs[seat], paid=ctx.comp.pair_price))
    s["pool"] = []


def affordable(ctx: Ctx, s: S, seat: int) -> list[str]:
    money = s["players"][seat]["money"]
    return [c for c in s["pool"] if ctx.comp.abilities[c].cost <= money]


def take_card(s: S, seat: int, card: str, price: int, ev: list[Event]) -> None:
    pay(s, seat, price)
    player = s["players"][seat]
    player["abilities"] = [*player["abilities"], card]  # shared between states: replace
    s["pool"] = [c for c in s["pool"] if c != card]  # shared between states: replace
    s["auction"] = None
    ev.append(event("ability_bought", seat=seat, card=card, paid=price))


def forced_take(ctx: Ctx, s: S, seat: int, ev: list[Event]) -> None:
    """H-34 last paragraph: a chooser who can pay no card takes the cheapest for all
    their money (ties: the order of H-8)."""
    card = min(s["pool"], key=lambda c: ctx.comp.abilities[c].cost)
    take_card(s, seat, card, s["players"][seat]["money"], ev)


def _name_choices(ctx: Ctx, s: S, seat: int) -> dict[str, object]:
    return {"cards": {c: ctx.comp.abilities[c].cost for c in affordable(ctx, s, seat)}}


def _name_check(ctx: Ctx, s: S, seat: int, order: Order, w: Wallet) -> None:
    card = shape(order, "card", str)
    need(card in s["pool"], "no_such_card", f"{card!r} is not a remaining ability card")
    cost = ctx.comp.abilities[card].cost
    need(cost <= w.money, "card_not_affordable", f"{card} costs {cost}, more than you have")


def _name_apply(ctx: Ctx, s: S, orders: dict[int, Order], ev: list[Event]) -> None:
    (seat, order), = orders.items()
    card = order["card"]
    s["auction"] = {
        "card": card,
        "high": ctx.comp.abilities[card].cost,
        "bidder": seat,
        "chooser": seat,
        "passed": [],
        "next": (seat + 1) % s["seats"],
    }
    ev.append(event("ability_named", seat=seat, card=card, bid=s["auction"]["high"]))


def _name_default(ctx: Ctx, s: S, seat: int) -> Order:
    cards = affordable(ctx, s, seat)
    return {"card": min(cards, key=lambda c: ctx.comp.abilities[c].cost)}


NAME = Decision(
    "name_card", "D0-NAME", False, ("card",),
    _name_choices, _name_check, _name_apply, _name_default,
)  # fmt: skip


def _bid_choices(ctx: Ctx, s: S, seat: int) -> dict[str, object]:
    a = s["auction"]
    return {
        "card": a["card"],
        "high": a["high"],
        "bidder": a["bidder"],
        "min": a["high"] + ctx.comp.money_step,
        "max": s["players"][seat]["money"],
        "step": ctx.comp.money_step,
    }


def _bid_check(ctx: Ctx, s: S, seat: int, order: Order, w: Wallet) -> None:
    if shape(order, "pass", bool, False):
        need("bid" not in order, "malformed_order", "give either a bid or a pass")
        return
    bid = amount(ctx, order.get("bid"), "bid")
    high = s["auction"]["high"]
    need(bid > high, "bid_too_low", f"a raise must be above the high bid of {high}")
    need(bid <= w.money, "not_enough_money", f"you cannot bid {bid}: more than you have")


def _bid_apply(ctx: Ctx, s: S, orders: dict[int, Order], ev: list[Event]) -> None:
    (seat, order), = orders.items()
    a = s["auction"]
    if order.get("pass"):
        a["passed"].append(seat)
        ev.append(event("ability_pass", seat=seat, card=a["card"]))
    else:
        a["high"], a["bidder"] = order["bid"], seat
        ev.append(event("ability_bid", seat=seat, card=a["card"], bid=order["bid"]))
    a["next"] = (seat + 1) % s["seats"]


BID = Decision(
    "card_bid", "D0-BID", False, ("bid", "pass"),
    _bid_choices, _bid_check, _bid_apply, lambda ctx, s, seat: {"pass": True},
)  # fmt: skip
