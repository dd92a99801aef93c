"""One plain sentence per event, with player names and display names (rules §4: every
event here is public except `reserve_card`, which only its drawer sees)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from engine.aufachse.dataset import DEFAULT, DataSet, load_data


def _ctx() -> DataSet:
    return load_data(DEFAULT)


def space_name(space: Any) -> str:
    if not isinstance(space, str):
        return str(space)
    return _ctx().board.name(space) if _ctx().board.is_space(space) else space


def card_name(card: Any) -> str:
    """An order card in words: "the order Kassel → Magdeburg (3 goods, pays 1000)"."""
    return order_words(_ctx(), card)


def order_words(ctx: DataSet, card: Any, article: str = "the order ") -> str:
    """An order card of `ctx` in words, never by its id: "the order Kassel → Magdeburg
    (3 goods, pays 1000)" (`article` leads)."""
    o = ctx.orders.get(card) if isinstance(card, str) else None
    if o is None:
        return "an order"
    names = ctx.board.city_names
    return f"{article}{names[o.start]} → {names[o.dest]} ({o.goods} goods, pays {o.pay})"


def event_title(card: Any) -> str:
    """An event card in words: its title in quotes ("“Abkürzung”")."""
    e = _ctx().events.get(card) if isinstance(card, str) else None
    return f"“{e.title}”" if e else "an event card"


def goods_from(card: Any) -> str:
    """What an order carries, from where: "3 goods from Kassel"."""
    ctx = _ctx()
    o = ctx.orders.get(card) if isinstance(card, str) else None
    if o is None:
        return "an order"
    return f"{o.goods} goods from {ctx.board.city_names[o.start]}"


def _who(names: Sequence[str], seat: Any) -> str:
    if seat is None:
        return "the bank"
    if isinstance(seat, int) and 0 <= seat < len(names):
        return names[seat]
    return f"seat {seat}"


EFFECT_WORDS = {
    "gain": "a payment from the bank", "gain_per_goods": "a payment per goods piece", "pay": "a payment to the bank",
    "pay_per_goods": "a toll per goods piece", "collect_from_each": "a payment from every other player",
    "extra_move": "an extra move", "clear_markers": "clearing both markers", "move_roadworks": "moving the roadworks",
    "place_jam": "a traffic jam", "free_trailer": "a free trailer", "draw_reserve_order": "an extra order",
    "shortcut": "a shortcut to a city", "skip_turn": "a skipped turn",
}


def _moved(e: dict[str, Any], w: Callable[[Any], str]) -> str:
    who = w(e["seat"])
    if not e["path"]:
        return f"{who} waits at {space_name(e['start'])} (using a {e['n']})."
    k = len(e["path"])
    tail = f", forfeiting {e['forfeited']} pip{'s' if e['forfeited'] != 1 else ''}" if e["forfeited"] else ""
    return (f"{who} uses a {e['n']} and drives {k} space{'s' if k != 1 else ''} from "
            f"{space_name(e['start'])} to {space_name(e['path'][-1])}{tail}.")


def describe_event(e: dict[str, Any], names: Sequence[str]) -> str:
    def w(seat: Any) -> str:
        return _who(names, seat)

    t = e["type"]
    seat = e.get("seat")
    table: dict[str, Callable[[], str]] = {
        "placed": lambda: f"{w(seat)} places the truck on {space_name(e['space'])}.",
        "rolled": lambda: f"{w(seat)} rolls {e['dice'][0]} and {e['dice'][1]}" + (" for the extra move." if e.get(
            "extra") else "."),
        "skipped": lambda: f"{w(seat)} sits out this turn (a skipped turn is used up).",
        "blocked": lambda: f"{w(seat)}'s truck is blocked and stays where it is.",
        "moved": lambda: _moved(e, w),
        "roadworks": lambda: f"{w(seat)} puts the roadworks on {space_name(e['space'])}.",
        "event_card": lambda: f"{w(seat)} draws the event card {event_title(e['card'])}: "
                              f"{EFFECT_WORDS.get(e['effect'], e['effect'])}.",
        "gain": lambda: f"The bank pays {w(seat)} {e['amount']}.",
        "paid": lambda: f"{w(seat)} pays {e['amount']} to {w(e['to'])}.",
        "debt": lambda: f"{w(seat)} cannot pay and now owes {w(e['to'])} {e['amount']} (twice the amount).",
        "debt_paid": lambda: f"{w(seat)} settles a debt of {e['amount']} to {w(e['to'])}.",
        "markers_cleared": lambda: f"Thanks to {w(seat)}'s card, both markers leave the board.",
        "no_jam_space": lambda: f"There is no free space for {w(seat)}'s traffic jam, so nothing happens.",
        "jam": lambda: f"{w(seat)} puts the traffic jam on {space_name(e['space'])}; it belongs to {w(e['owner'])}.",
        "jam_removed": lambda: f"The traffic jam on {space_name(e['space'])} is removed.",
        "trailer_free": lambda: f"{w(seat)} gets a free {e['size']} trailer.",
        "trailer_bought": lambda: f"{w(seat)} buys a {e['size']} trailer for {e['price']}.",
        "trailer_sold": lambda: f"{w(seat)} sells a {e['size']} trailer back for {e['price']}.",
        "reserve_drawn": lambda: f"{w(seat)} draws an extra order from the reserve into the hand.",
        "reserve_card": lambda: f"{w(seat)} drew the order {card_name(e['order'])}.",
        "reserve_empty": lambda: f"The reserve is empty, so {w(seat)} draws no extra order.",
        "event_deck_empty": lambda: f"The event deck is empty, so {w(seat)} draws nothing.",
        "skip_pending": lambda: f"{w(seat)} will skip the next turn.",
        "shortcut": lambda: f"{w(seat)} takes the shortcut from {space_name(e['start'])} to "
                            f"{space_name(e['city'])}.",
        "shortcut_declined": lambda: f"{w(seat)} does not take the shortcut.",
        "loaded": lambda: f"{w(seat)} loads {card_name(e['card'])}.",
        "delivered": lambda: f"{w(seat)} delivers {goods_from(e['card'])} in {space_name(e['city'])} and earns "
                             f"{e['pay']}.",
        "refilled": lambda: f"T{card_name(e['card'])[1:]} comes into the display at slot {e['slot']}.",
        "declined": lambda: f"{w(seat)} declines; {card_name(e['card'])} is discarded.",
        "picked": lambda: f"{w(seat)} picks {card_name(e['card'])} from slot {e['slot']} for auction.",
        "bid": lambda: f"{w(seat)} {'matches' if e.get('match') else 'bids'} {e['step']} for "
                       f"{card_name(e['card'])}.",
        "passed": lambda: f"{w(seat)} passes on {card_name(e['card'])}.",
        "auto_pass": lambda: f"{w(seat)} cannot bid higher and passes on {card_name(e['card'])}.",
        "won": lambda: f"{w(seat)} wins {card_name(e['card'])}" + (
            f" with a bid of {e['step']} and pays {e['cost']}." if e["cost"] else " free."),
        "taken": lambda: f"{w(seat)} takes {card_name(e['card'])}" + (
            " and loads it." if e["loaded"] else " into the hand (no room to load it)."),
        "game_over": lambda: "The game is over. " + "; ".join(
            f"{r['place']}. {w(r['seat'])} {r['money']}" for r in e["ranking"]) + ".",
    }
    make = table.get(t)
    return make() if make else f"{t.replace('_', ' ')}."
