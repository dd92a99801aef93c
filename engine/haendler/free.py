"""Free actions attached to any order (H-22): repaying credits (H-96) and, in the
negotiation variant, transfers of money or influence cards (H-106).

`check_free` validates them and returns the seat's `Wallet` after them, against which
the order's main action is then validated. `apply_free` applies them; in a window the
game applies every seat's free actions, in turn order, before any main action, so money
or cards received by transfer cannot be used in that window's main action.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from engine.core.events import Event, event
from engine.haendler.context import Ctx, S, amount, gain, hand_add, need, pay, shape

FREE_KEYS = ("repay", "transfers")


class Wallet(NamedTuple):
    """A seat's money and hand as its main action may use them."""

    money: int
    hand: dict[str, int]


def check_free(ctx: Ctx, s: S, seat: int, order: dict[str, Any]) -> Wallet:
    player = s["players"][seat]
    if "repay" not in order and "transfers" not in order:
        return Wallet(player["money"], player["hand"])
    money, hand = player["money"], dict(player["hand"])
    repay = shape(order, "repay", int, 0)
    need(repay >= 0, "malformed_order", "repay must be 0 or more", field="repay")
    need(
        repay <= player["credits"],
        "nothing_to_repay",
        f"you hold {player['credits']} credit(s) and cannot repay {repay}",
    )
    money -= repay * ctx.comp.credit_repay
    need(
        money >= 0,
        "not_enough_money",
        f"repaying {repay} credit(s) costs {repay * ctx.comp.credit_repay}",
    )
    transfers = shape(order, "transfers", list, [])
    if transfers:
        need(
            s["options"]["negotiation"],
            "bad_transfer",
            "transfers exist only in the negotiation variant",
        )
    for i, t in enumerate(transfers):
        to = shape(t, "to", int)
        need(
            to is not None and 0 <= to < s["seats"] and to != seat,
            "bad_transfer",
            f"transfers[{i}].to must be another seat",
        )
        extra = sorted(set(t) - {"to", "money", "cards"})
        need(not extra, "bad_transfer",
             f"only money and influence cards can be transferred, not {', '.join(extra)} (H-106)")  # fmt: skip
        money -= amount(ctx, t.get("money", 0), f"transfers[{i}].money")
        cards = shape(t, "cards", dict, {})
        for kind, k in cards.items():
            need(
                isinstance(k, int) and not isinstance(k, bool) and k >= 0,
                "malformed_order",
                f"transfers[{i}].cards.{kind} must be a count",
            )
            need(hand.get(kind, 0) >= k, "no_such_card", f"you do not hold {k} {kind} card(s)")
            hand[kind] = hand.get(kind, 0) - k
        need(money >= 0, "not_enough_money", "you cannot give more money than you have")
    return Wallet(money, {k: v for k, v in hand.items() if v})


def apply_free(ctx: Ctx, s: S, seat: int, order: dict[str, Any], ev: list[Event]) -> None:
    repay = order.get("repay") or 0
    if repay:
        pay(s, seat, repay * ctx.comp.credit_repay)
        s["players"][seat]["credits"] -= repay
        s["credit_supply"] += repay
        ev.append(event("credit_repaid", seat=seat, count=repay))
    for t in order.get("transfers") or []:
        to, money, cards = t["to"], t.get("money", 0) or 0, t.get("cards") or {}
        pay(s, seat, money)
        gain(s, to, money)
        for kind, k in cards.items():
            if k:
                hand_add(s, seat, kind, -k)
                hand_add(s, to, kind, k)
        n = sum(cards.values())
        ev.append(event("transfer", seat=seat, to=to, money=money, cards=n))
        if n:
            ev.append(event("transfer_cards", [seat, to], seat=seat, to=to, cards=dict(cards)))
