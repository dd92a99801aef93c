"""Phase 6, upkeep and status: automatic upkeep, D6-CREDIT and D6-ADVANCE (H-91 to H-97,
R-5, R-12); and the final ranking (H-98 to H-100, R-13).

A seat that cannot pay its upkeep has its money made public, drops to the highest lower
level whose upkeep it can pay, pays that, and may take one credit (+2000). Then each
seat in turn order may buy 0–2 levels at the arrival track's price; Sozialer Aufstieg
makes a level cost 1200; a seat holding a credit cannot advance.
"""

from __future__ import annotations

from typing import Any

from engine.core.errors import IllegalOrder
from engine.core.events import Event, event
from engine.haendler.context import Ctx, S, gain, level_price, need, pay, play_card, shape
from engine.haendler.decision import Decision, Order
from engine.haendler.free import Wallet

AUFSTIEG = "sozialer_aufstieg"


def pay_upkeep(ctx: Ctx, s: S, seat: int, ev: list[Event]) -> bool:
    """H-91. Returns whether the seat dropped (and so may take a credit)."""
    player = s["players"][seat]
    upkeep = ctx.board.upkeep[player["level"] - 1]
    if upkeep <= player["money"]:
        pay(s, seat, upkeep)
        if upkeep:
            ev.append(event("upkeep", seat=seat, paid=upkeep, level=player["level"]))
        return False
    money = player["money"]
    level = max(lv for lv in range(1, player["level"]) if ctx.board.upkeep[lv - 1] <= money)
    player["level"] = level
    paid = ctx.board.upkeep[level - 1]
    pay(s, seat, paid)
    ev.append(event("upkeep_shortfall", seat=seat, money=money, level=level, paid=paid))
    return True


def _credit_check(ctx: Ctx, s: S, seat: int, order: Order, w: Wallet) -> None:
    if shape(order, "take", bool, False):
        need(s["credit_supply"] > 0, "no_credit_left", "the credit supply is empty")


def _credit_apply(ctx: Ctx, s: S, orders: dict[int, Order], ev: list[Event]) -> None:
    (seat, order), = orders.items()
    if order.get("take"):
        s["credit_supply"] -= 1
        s["players"][seat]["credits"] += 1
        gain(s, seat, ctx.comp.credit_value)
    ev.append(event("credit", seat=seat, taken=bool(order.get("take")), value=ctx.comp.credit_value))


CREDIT = Decision(
    "credit", "D6-CREDIT", False, ("take",),
    lambda ctx, s, seat: {"value": ctx.comp.credit_value, "repay": ctx.comp.credit_repay, "supply": s["credit_supply"]},
    _credit_check, _credit_apply, lambda ctx, s, seat: {"take": False},
)  # fmt: skip


def advance_cost(ctx: Ctx, s: S, levels: int, cards: int) -> int:
    return cards * ctx.comp.sozialer_aufstieg_price + (levels - cards) * level_price(ctx, s)


def _advance_choices(ctx: Ctx, s: S, seat: int) -> dict[str, object]:
    player = s["players"][seat]
    return {
        "level": player["level"],
        "max_levels": min(ctx.comp.max_levels_per_round, ctx.board.top_level - player["level"]),
        "level_price": level_price(ctx, s),
        "card_price": ctx.comp.sozialer_aufstieg_price,
        "cards": player["hand"].get(AUFSTIEG, 0),
        "credits": player["credits"],
        "repay": ctx.comp.credit_repay,
        "money": player["money"],
    }


def _advance_check(ctx: Ctx, s: S, seat: int, order: Order, w: Wallet) -> None:
    player = s["players"][seat]
    levels, cards = shape(order, "levels", int, 0), shape(order, "cards", int, 0)
    if levels < 0 or cards < 0:
        raise IllegalOrder("malformed_order", "levels and cards are counts")
    most = min(ctx.comp.max_levels_per_round, ctx.board.top_level - player["level"])
    if levels > most:
        raise IllegalOrder("too_many_levels",
                           f"you may advance at most {most} level(s) now (2 a round, never past the top)")  # fmt: skip
    if cards > levels:
        raise IllegalOrder("malformed_order", "Sozialer Aufstieg pays for one level per card")
    if cards > w.hand.get(AUFSTIEG, 0):
        raise IllegalOrder("no_such_card", "you do not hold that many Sozialer Aufstieg")
    if levels:
        left = player["credits"] - (shape(order, "repay", int, 0) or 0)
        if left != 0:
            raise IllegalOrder("has_credit", "repay every credit before advancing (H-94)")
        price = advance_cost(ctx, s, levels, cards)
        if price > w.money:
            raise IllegalOrder("not_enough_money", f"{levels} level(s) cost {price}, more than you have")


def _advance_apply(ctx: Ctx, s: S, orders: dict[int, Order], ev: list[Event]) -> None:
    (seat, order), = orders.items()
    levels, cards = order.get("levels") or 0, order.get("cards") or 0
    if not levels:
        ev.append(event("advance", seat=seat, levels=0, paid=0, level=s["players"][seat]["level"]))
        return
    price = advance_cost(ctx, s, levels, cards)
    pay(s, seat, price)
    if cards:
        play_card(s, seat, AUFSTIEG, cards)
    s["players"][seat]["level"] += levels
    ev.append(event("advance", seat=seat, levels=levels, cards=cards, paid=price,
                    level=s["players"][seat]["level"]))  # fmt: skip


ADVANCE = Decision(
    "advance", "D6-ADVANCE", False, ("levels", "cards"),
    _advance_choices, _advance_check, _advance_apply, lambda ctx, s, seat: {"levels": 0},
)  # fmt: skip


def ranking(s: S) -> list[dict[str, Any]]:
    """H-100: seats without credits first, by level then money; then credit holders the
    same way. Seats equal in group, level and money share their place.

    Each row's `tiebreak` says what set it apart from the row before: "credits" (the
    credit group), "level", "money", or "shared" (a shared place); None for the first."""

    def key(p: int) -> tuple[int, int, int]:
        pl = s["players"][p]
        return (1 if pl["credits"] else 0, -pl["level"], -pl["money"])

    seats = sorted(range(s["seats"]), key=lambda p: (key(p), p))
    out: list[dict[str, Any]] = []
    for i, p in enumerate(seats):
        place = out[-1]["place"] if out and key(seats[i - 1]) == key(p) else i + 1
        pl = s["players"][p]
        tiebreak = None
        if i:
            before, mine = key(seats[i - 1]), key(p)
            diff = next((k for k in range(3) if before[k] != mine[k]), None)
            tiebreak = "shared" if diff is None else ("credits", "level", "money")[diff]
        out.append({"seat": p, "place": place, "level": pl["level"], "money": pl["money"], "credits": pl["credits"],
                    "tiebreak": tiebreak})  # fmt: skip
    return out
