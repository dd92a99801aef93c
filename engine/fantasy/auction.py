"""Phase 1's auctions (§8.4–8.8, R2, R15, FD2–FD4) and the Antitrust auction (O23, R11,
R22, FD7): D-SELECT, D-OPEN, D-BID and D-LONE.

The auction is public state (`s["auction"]`); whose turn it is follows from it. The
display keeps its positions for the whole round (R20): a sold or discarded card leaves
a gap (`None`).
"""

from __future__ import annotations

from typing import Any

from engine.core.events import ALL, Event, event
from engine.fantasy.components import kind_of
from engine.fantasy.decision import Decision, Order, Wallet
from engine.fantasy.state import (
    AFTER,
    ITEM_CARDS,
    MINIMUMS,
    S,
    credit,
    eligibles,
    fail,
    is_item,
    left,
    minimum,
    need,
    order_from,
    seat_entry,
    sort_cards,
    whole,
)


# -- the display ---------------------------------------------------------------------
def shown(s: S) -> list[dict[str, Any]]:
    """The cards still displayed, by position (an entry is a non-empty object, a gap None)."""
    return list(filter(None, s["display"]))


def take_from_display(s: S, pos: int) -> str:
    """Remove the card at `pos` from the display and return its id (a face-down special's
    identity comes from the secret map)."""
    display = s["display"] = s["display"].copy()  # copy on write: the list may be shared
    entry, display[pos - 1] = display[pos - 1], None
    card = entry["card"]
    if card is not None:
        return card if type(card) is str else str(card)  # `str(card)`, without the call for a str
    facedown = dict(s["facedown"])
    card = facedown.pop(str(pos))
    s["facedown"] = facedown
    return str(card)


def discard_position(s: S, pos: int, ev: list[Event]) -> None:
    """FD13: an unsold item is discarded face up, a face-down special unseen."""
    entry = s["display"][pos - 1]
    card = take_from_display(s, pos)
    if entry["card"] is None:
        s["buried"] = [*s["buried"], card]
        ev.append({"type": "discarded", "visible_to": ALL, "pos": pos, "card": None})
    else:
        s["discard"] = [*s["discard"], card]
        ev.append({"type": "discarded", "visible_to": ALL, "pos": pos, "card": card})


def display_min(s: S, pos: int) -> int:
    return minimum(s["display"][pos - 1]["card"])


def position(s: S, order: Order, key: str = "pos") -> int:
    pos: Any = order.get(key)
    # `type(x) is int or whole(x)`: `whole`, with the common case first (here and below).
    if not ((type(pos) is int or whole(pos)) and 1 <= pos <= len(s["display"]) and s["display"][pos - 1] is not None):
        fail("no_such_position", f"{key} must name a displayed card's position (R20), not {pos!r}")
    return pos if type(pos) is int else int(pos)  # `int(pos)`, without the call for an int


# -- O8, O9: the next card ---------------------------------------------------------------
def opener(s: S) -> int:
    """O9: the AFB if eligible, else the first eligible player clockwise from the AFB's left."""
    off = s["offer"]
    bought, nd = off["bought"], off["nd"]
    for p in order_from(s, s["afb"]):
        if p not in bought and p not in nd:  # `eligible(s, p)`, written out
            return p
    raise AssertionError("no eligible player")


def offer_next(s: S, ev: list[Event]) -> bool:
    """O8 before every card; returns False when the offer phase is over."""
    if not any(s["display"]):  # `shown(s)` is empty
        return False
    who = eligibles(s)
    if not who:
        for d in shown(s):
            discard_position(s, d["pos"], ev)
        return False
    if len(who) == 1:
        s["auction"] = {"mode": "offer", "stage": "lone", "seat": who[0]}
        return True
    s["auction"] = {"mode": "offer", "stage": "select", "seat": opener(s)}
    return True


def end_offer(s: S) -> None:
    s["auction"] = None
    s["offer"] = {**s["offer"], "preempt": None}


# -- sale -------------------------------------------------------------------------------
def sell(s: S, buyer: int, card: str, price: int, pos: int | None, ev: list[Event], to: int | None = None) -> None:
    """O17 (or O23 when `to` is the Antitrust target): pay, take the card."""
    p = seat_entry(s, buyer)  # `credit` and `add_items` / `add_hand`, on one copy of the entry
    p["crowns"] -= price
    if to is not None:
        credit(s, to, price)
    # The frequent events here and below are `event(...)` written out, in the same order.
    if card in ITEM_CARDS or is_item(card):  # `is_item`, the common case first
        p["items"] = sort_cards([*p["items"], card])
        ev.append({"type": "sold", "visible_to": ALL, "seat": buyer, "pos": pos, "card": card, "price": price,
                   "to": to})
    else:
        p["hand"] = sort_cards([*p["hand"], card])
        ev.append({"type": "sold", "visible_to": ALL, "seat": buyer, "pos": pos, "card": None, "price": price,
                   "to": to})
        ev.append(event("special_bought", [buyer], seat=buyer, pos=pos, card=card))
    if to is None:
        off = s["offer"] = s["offer"].copy()  # `{**s["offer"], "bought": [...]}`, one dict fewer
        off["bought"] = [*off["bought"], buyer]


def pool(s: S, a: dict[str, Any]) -> list[int]:
    """Who may bid: eligible players (O13), or everyone but the target (R11)."""
    if a["mode"] == "antitrust":
        return [p for p in range(s["seats"]) if p != a["target"]]
    return eligibles(s)


def next_turn(s: S, a: dict[str, Any], after: int) -> int:
    """O13: the next seat clockwise from `after` that may still bid (may be the high bidder)."""
    out = a["out"]
    if a["mode"] == "antitrust":
        target = a["target"]
        for p in AFTER[s["seats"]][after]:
            if p not in out and p != target:
                return p
    else:  # the seats out of this auction, and those not eligible (`eligible`)
        off = s["offer"]
        bought, nd = off["bought"], off["nd"]
        for p in AFTER[s["seats"]][after]:
            if p not in out and p not in bought and p not in nd:
                return p
    return int(a["bidder"])


def asked(s: S, kind: str, seat: int) -> bool:
    """Ask `seat` for the auction's next order (`kind`) as `flow.advance` would, and say
    so; False (nothing asked) where advance has more to do first (a trading proposal)."""
    if not s["proposals"] and (s["at"] == "offer" or s["at"] == "queue") and not s["over"]:
        s["pending"] = {"kind": kind, "seats": [seat]}
        return True
    return False


def finish_card(s: S, a: dict[str, Any], ev: list[Event]) -> None:
    """After a sale or a discard: the next card (O8) or the next Antitrust card."""
    if a["mode"] == "antitrust":
        next_antitrust(s, a["target"], a["type"], a["left"], ev)
    else:
        s["auction"] = None


def opened(s: S, a: dict[str, Any], seat: int, amount: int, ev: list[Event]) -> bool:
    """The opening bid; True when it asked the next bidder (`asked`). `a` is the auction
    its caller built or copied for this resolve (no state holds it yet), so it is changed
    in place: `{**a, "stage": "bid", "high": amount, "bidder": seat, "out": []}`."""
    ev.append({"type": "opened", "visible_to": ALL, "seat": seat, "amount": amount, "pos": a.get("pos"),
               "card": a.get("card")})
    a["stage"], a["high"], a["bidder"], a["out"] = "bid", amount, seat, []
    nxt = a["seat"] = next_turn(s, a, seat)
    s["auction"] = a
    if nxt == seat:
        sold(s, a, ev)
        return False
    return asked(s, "bid", nxt)


def sold(s: S, a: dict[str, Any], ev: list[Event]) -> None:
    if a["mode"] == "antitrust":
        sell(s, a["bidder"], a["card"], a["high"], None, ev, to=a["target"])
    else:
        card = take_from_display(s, a["pos"])
        sell(s, a["bidder"], card, a["high"], a["pos"], ev)
    finish_card(s, a, ev)


# -- D-SELECT (O10, O11) -------------------------------------------------------------------
def _positions(s: S) -> list[dict[str, Any]]:
    """The choices' displayed cards, by position, with their minimum bids (`shown`)."""
    return [{"pos": d["pos"], "card": (card := d["card"]), "min": MINIMUMS[card]} for d in s["display"] if d]


def _select_choices(s: S, seat: int, shared: None) -> dict[str, Any]:
    return {"positions": _positions(s), "crowns": s["players"][seat]["crowns"],
            "preempt": s["offer"]["preempt"] == seat}


def _select_check(s: S, seat: int, o: Order, w: Wallet) -> None:
    # `position(s, o)` and `display_min(s, pos)`, written out: every selection
    pos: Any = o.get("pos")
    display = s["display"]
    if not ((type(pos) is int or whole(pos)) and 1 <= pos <= len(display) and (entry := display[pos - 1]) is not None):
        fail("no_such_position", f"pos must name a displayed card's position (R20), not {pos!r}")
    low = MINIMUMS[entry["card"]]
    if o.get("preempt"):
        need(o.get("preempt") is True and "bid" not in o, "malformed_order", "preempt is true, without a bid")
        need(s["offer"]["preempt"] == seat, "no_preemption", "you hold no pre-emption this round (O11)")
        if w["crowns"] < low:
            fail("not_enough_crowns", f"buying at the minimum costs {low}; you have {w['crowns']} (O11)")
        return
    if not ("preempt" not in o or o["preempt"] is False):  # `need(...)`, written out: every selection
        fail("malformed_order", "preempt is true or absent")
    _opening(o, low, w)


def _opening(o: Order, low: int, w: Wallet) -> None:
    bid = o.get("bid")
    if bid is None:
        return  # passes the opening
    if not (type(bid) is int or whole(bid)):  # `need(...)`, written out: every opening bid
        fail("malformed_order", "bid is a whole number of crowns, or null to pass the opening")
    if bid < low:
        fail("bid_too_low", f"the opening must be at least {low} (O10)")
    if bid > w["crowns"]:
        fail("not_enough_crowns", f"you have {w['crowns']} crowns and cannot bid {bid} (O16)")


def _select_apply(s: S, orders: dict[int, Order], ev: list[Event]) -> bool:
    for seat in orders:  # the one order: `(seat, o), = orders.items()`, without the pairs
        o = orders[seat]
    pos = o["pos"]
    if type(pos) is not int:  # `int(...)`, without the call for an int (and so below)
        pos = int(pos)
    entry = s["display"][pos - 1]
    card = entry["card"]
    a: dict[str, Any] = {"mode": "offer", "stage": "open", "pos": pos, "card": card, "min": MINIMUMS[card],
                         "opener": seat}  # "min": `display_min`
    if o.get("preempt"):
        ev.append(event("preempted", seat=seat, pos=pos, card=entry["card"], price=a["min"]))
        s["offer"] = {**s["offer"], "preempt": None}
        card = take_from_display(s, pos)
        sell(s, seat, card, a["min"], pos, ev)
        s["auction"] = None
        return False
    ev.append({"type": "selected", "visible_to": ALL, "seat": seat, "pos": pos, "card": card})
    bid = o.get("bid")
    if bid is not None:
        return opened(s, a, seat, bid if type(bid) is int else int(bid), ev)
    ev.append({"type": "opening_passed", "visible_to": ALL, "seat": seat, "pos": pos, "card": card})
    off = s["offer"]
    gone = off["bought"] + off["nd"]  # the seats not `eligible`
    a["to_open"] = [p for p in order_from(s, seat)[1:] if p not in gone]
    return _ask_open(s, a, ev)


def _ask_open(s: S, a: dict[str, Any], ev: list[Event]) -> bool:
    """The next seat to open, if any (True when `asked`); else the card is discarded."""
    if not a["to_open"]:  # O12 / O23: everyone passed the opening
        if a["mode"] == "antitrust":
            s["discard"] = [*s["discard"], a["card"]]
            ev.append(event("discarded", pos=None, card=a["card"]))
        else:
            discard_position(s, a["pos"], ev)
        finish_card(s, a, ev)
        return False
    seat = a["seat"] = a["to_open"][0]
    s["auction"] = a
    return asked(s, "open", seat)


def _select_default(s: S, seat: int) -> Order:
    return {"pos": shown(s)[0]["pos"], "bid": None}


SELECT = Decision("select", "D-SELECT", False, ("pos", "bid", "preempt"), _select_choices, _select_check,
                  _select_apply, _select_default)


# -- D-OPEN (O12, O23, R22) ------------------------------------------------------------------
def _open_choices(s: S, seat: int, shared: None) -> dict[str, Any]:
    a = s["auction"]
    return {"pos": a.get("pos"), "card": a.get("card"), "min": a["min"], "crowns": s["players"][seat]["crowns"]}


def _open_check(s: S, seat: int, o: Order, w: Wallet) -> None:
    _opening(o, s["auction"]["min"], w)


def _open_apply(s: S, orders: dict[int, Order], ev: list[Event]) -> bool:
    for seat in orders:  # the one order: `(seat, o), = orders.items()`, without the pairs
        o = orders[seat]
    a = s["auction"].copy()
    bid = o.get("bid")
    if bid is not None:
        return opened(s, a, seat, bid if type(bid) is int else int(bid), ev)
    ev.append({"type": "opening_passed", "visible_to": ALL, "seat": seat, "pos": a.get("pos"),
               "card": a.get("card")})
    a["to_open"] = a["to_open"][1:]
    return _ask_open(s, a, ev)


OPEN = Decision("open", "D-OPEN", False, ("bid",), _open_choices, _open_check, _open_apply,
                lambda s, seat: {"bid": None})


# -- D-BID (O13–O16) --------------------------------------------------------------------------
def _bid_choices(s: S, seat: int, shared: None) -> dict[str, Any]:
    a = s["auction"]
    return {"pos": a["pos"], "card": a["card"], "high": a["high"], "bidder": a["bidder"],
            "crowns": s["players"][seat]["crowns"]}


def _bid_check(s: S, seat: int, o: Order, w: Wallet) -> None:
    bid = o.get("bid")
    if bid is None:
        return  # a final pass
    high = s["auction"]["high"]
    if not (type(bid) is int or whole(bid)):  # `need(...)`, written out: every raise
        fail("malformed_order", "bid is a whole number of crowns, or null to pass")
    if bid <= high:
        fail("bid_too_low", f"a raise must be above the high bid of {high} (O14)")
    if bid > w["crowns"]:
        fail("not_enough_crowns", f"you have {w['crowns']} crowns and cannot bid {bid} (O16)")


def _bid_apply(s: S, orders: dict[int, Order], ev: list[Event]) -> bool:
    for seat in orders:  # the one order: `(seat, o), = orders.items()`, without the pairs
        o = orders[seat]
    a = s["auction"].copy()
    bid = o.get("bid")
    # The events are `event(...)` written out: bids are most of a game's steps.
    if bid is not None:
        a["high"] = high = bid if type(bid) is int else int(bid)
        a["bidder"] = seat
        ev.append({"type": "raised", "visible_to": ALL, "seat": seat, "amount": high, "pos": a["pos"],
                   "card": a["card"]})
    else:
        a["out"] = [*a["out"], seat]
        ev.append({"type": "passed", "visible_to": ALL, "seat": seat, "pos": a["pos"], "card": a["card"]})
    if a["mode"] == "antitrust":
        nxt = next_turn(s, a, seat)
    else:  # `next_turn`, written out without joining the lists of seats gone
        off, out = s["offer"], a["out"]
        bought, nd = off["bought"], off["nd"]
        for nxt in AFTER[s["seats"]][seat]:
            if nxt not in out and nxt not in bought and nxt not in nd:
                break
        else:
            nxt = int(a["bidder"])
    a["seat"] = nxt
    s["auction"] = a
    if nxt == a["bidder"]:
        sold(s, a, ev)
        return False
    # `asked(s, "bid", nxt)`, written out: bids are most of a game's steps.
    if not s["proposals"] and (s["at"] == "offer" or s["at"] == "queue") and not s["over"]:
        s["pending"] = {"kind": "bid", "seats": [nxt]}
        return True
    return False


BID = Decision("bid", "D-BID", False, ("bid",), _bid_choices, _bid_check, _bid_apply,
               lambda s, seat: {"bid": None})


# -- D-LONE (O18, FD3) ---------------------------------------------------------------------------
def _lone_choices(s: S, seat: int, shared: None) -> dict[str, Any]:
    return {"positions": _positions(s), "crowns": s["players"][seat]["crowns"]}


def _lone_check(s: S, seat: int, o: Order, w: Wallet) -> None:
    if o.get("take") is None:
        return  # declines
    pos = position(s, o, "take")
    low = display_min(s, pos)
    if w["crowns"] < low:
        fail("not_enough_crowns", f"taking it costs {low}; you have {w['crowns']} crowns (O18)")


def _lone_apply(s: S, orders: dict[int, Order], ev: list[Event]) -> None:
    seat, o = next(iter(orders.items()))
    if o.get("take") is not None:
        pos = int(o["take"])
        low = display_min(s, pos)
        ev.append(event("lone_take", seat=seat, pos=pos, card=s["display"][pos - 1]["card"], price=low))
        sell(s, seat, take_from_display(s, pos), low, pos, ev)
    else:
        ev.append(event("lone_declined", seat=seat))
    for d in shown(s):
        discard_position(s, d["pos"], ev)
    s["auction"] = None


LONE = Decision("lone", "D-LONE", False, ("take",), _lone_choices, _lone_check, _lone_apply,
                lambda s, seat: {"take": None})


# -- the Antitrust auction (O23, FD7, R11, R22) ----------------------------------------------------
def start_antitrust(s: S, target: int, t: str, ev: list[Event]) -> None:
    cards = [c for c in s["players"][target]["items"] if kind_of(c) == t]
    p = seat_entry(s, target)
    p["items"] = [c for c in p["items"] if kind_of(c) != t]
    ev.append(event("antitrust_auction", target=target, item_type=t, cards=cards))
    next_antitrust(s, target, t, cards, ev)


def next_antitrust(s: S, target: int, t: str, cards: list[str], ev: list[Event]) -> None:
    if not cards:
        s["auction"] = None
        return
    card, rest = cards[0], cards[1:]
    a: dict[str, Any] = {"mode": "antitrust", "stage": "open", "pos": None, "card": card, "min": minimum(card),
                         "target": target, "type": t, "left": rest, "opener": left(s, target),
                         "to_open": [p for p in order_from(s, left(s, target)) if p != target]}
    _ask_open(s, a, ev)


def auction_kind(s: S) -> str:
    return str(s["auction"]["stage"])


def can_afford(s: S, seat: int, amount: int) -> bool:  # for bots and tests
    return bool(s["players"][seat]["crowns"] >= amount)

