"""Loading, delivery (rules §11) and trailers (§12)."""

from __future__ import annotations

from typing import Any

from engine.aufachse.cards import SIZES
from engine.aufachse.context import Run, capacity, credit, end_check, fail, load, pay_bank
from engine.aufachse.describe import order_words

S = dict[str, Any]


def strings(value: Any, what: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        fail("malformed_order", f"{what} must be a list of order ids")
    return value


def trailer_actions(run: Run, seat: int, actions: Any) -> None:
    """H1–H3: buys and sells, in the order listed: [{"buy": "small"}, {"sell": "large"}]."""
    if actions is None:
        return
    if not isinstance(actions, list) or not all(
        isinstance(a, dict) and len(a) == 1 and next(iter(a)) in ("buy", "sell") and next(iter(a.values())) in SIZES
        for a in actions
    ):
        fail("malformed_order", 'trailers must be a list like [{"buy": "small"}, {"sell": "large"}]')
    if not actions:
        return
    s, ctx = run.s, run.ctx
    if s["options"]["kids"]:
        fail("no_trailers", "the kids variant has no trailers (H4, Y1)")
    if s["turn"] != seat:
        fail("no_trailers", "only the active player may buy or sell trailers (H1)")
    pl = run.player(seat)
    for a in actions:
        (verb, size), = a.items()
        spec = ctx.comp.trailers[size]
        if verb == "buy":
            if s["supply"][size] <= 0:
                fail("no_trailers", f"no {size} trailer is left in the supply (H2)")
            pay_bank(run, seat, spec.price, f"a {size} trailer")
            run.own("supply")[size] -= 1
            pl["trailers"][size] += 1
            run.say("trailer_bought", seat=seat, size=size, price=spec.price)
        else:
            if pl["trailers"][size] <= 0:
                fail("no_trailers", f"you own no {size} trailer to sell (H3)")
            pl["trailers"][size] -= 1
            if load(ctx, pl) > capacity(ctx, pl):
                fail("over_capacity", f"selling the {size} trailer would leave Load {load(ctx, pl)} above "
                                      f"capacity {capacity(ctx, pl)} (H3)")
            run.own("supply")[size] += 1
            run.say("trailer_sold", seat=seat, size=size, price=ctx.comp.trailer_refund)
            credit(run, seat, ctx.comp.trailer_refund, "trailer refund")


def load_orders(run: Run, seat: int, cards: Any) -> None:
    """L2: load hand orders that start in the city where the truck stands."""
    ctx = run.ctx
    pl = run.player(seat)
    for card in strings(cards, "load"):
        in_hand = pl["hand"] if card in pl["hand"] else pl["open"] if card in pl["open"] else None
        if in_hand is None:
            fail("no_such_order", f"{order_words(run.ctx, card, 'the order ')} is not in your hand (L2)"
                 if card in run.ctx.orders else "that is not an order in your hand (L2)")
        o = ctx.orders[card]
        if pl["at"] != o.start:
            fail("wrong_city", f"{order_words(ctx, card)} starts in {ctx.board.city_names[o.start]}, and your truck "
                               "is not there (L2)")
        if load(ctx, pl) + o.goods > capacity(ctx, pl):
            fail("over_capacity", f"{order_words(ctx, card)} needs {o.goods} goods of room; Load is {load(ctx, pl)} of "
                                  f"{capacity(ctx, pl)} (L2)")
        in_hand.remove(card)
        pl["loaded"].append(card)
        run.say("loaded", seat=seat, card=card, city=o.start)


def deliver(run: Run, seat: int, city: str, listed: Any = None) -> None:
    """L4 / T5.1 / R27: deliver every loaded order bound for `city`, in the listed order
    (oldest loaded first by default); each payment settles debts and runs the end check."""
    ctx = run.ctx
    pl = run.s["players"][seat]
    due = [c for c in pl["loaded"] if ctx.orders[c].dest == city]
    if due:
        pl = run.player(seat)
    if listed is not None:
        order = strings(listed, "deliver")
        if sorted(order) != sorted(due):
            listing = "; ".join(order_words(ctx, c, "") for c in due) or "none"
            fail("bad_deliveries", f"the orders delivered in {ctx.board.city_names[city]} are {listing} (R27)")
        due = order
    for card in due:
        pl["loaded"].remove(card)
        run.own("discard").append(card)
        pay = ctx.orders[card].pay
        run.say("delivered", seat=seat, card=card, city=city, pay=pay)
        credit(run, seat, pay, "delivery")
        end_check(run)
