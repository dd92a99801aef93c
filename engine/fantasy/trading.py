"""The trading variant (R9, V4): public, binding transfers of item cards, special cards
and crowns between two players.

A proposal is made at any time outside the frozen span (from D-PRICE to the end of
income), as an action of its own (`engine.fantasy.actions`) or riding on an order
(`"propose": {...}`, kept for programs). Its recipient may accept or reject it at once
(an action) and is asked (D-ACCEPT) before play goes on; the proposer may withdraw it
until then. The recipient's own side is checked privately on acceptance; a proposal that
can no longer be carried out lapses publicly, and every open proposal lapses when the
offer phase ends. A special card shows publicly only as "a special card".
"""

from __future__ import annotations

from typing import Any

from engine.core.events import Event, event
from engine.fantasy.decision import Decision, Order, Wallet
from engine.fantasy.state import (
    S,
    add_hand,
    add_items,
    credit,
    drop_hand,
    drop_item,
    high_bid_held,
    need,
    seat_entry,
    seat_no,
    whole,
)


def _side(x: Any, key: str, specials: bool) -> dict[str, Any]:
    need(isinstance(x, dict), "bad_transfer",
         f"{key} is an object with items, crowns" + (", specials" if specials else ""))
    allowed = {"items", "crowns", "specials"}
    need(not set(x) - allowed, "bad_transfer", f"{key} takes only {', '.join(sorted(allowed))}")
    items, crowns = x.get("items", []), x.get("crowns", 0)
    need(isinstance(items, list) and all(isinstance(c, str) for c in items) and len(set(items)) == len(items),
         "bad_transfer", f"{key}.items is a list of distinct item cards")
    need(whole(crowns) and crowns >= 0, "bad_transfer", f"{key}.crowns is a whole number, 0 or more")
    out: dict[str, Any] = {"items": list(items), "crowns": int(crowns)}
    sp = x.get("specials", [] if specials else 0)
    if specials:
        need(isinstance(sp, list) and all(isinstance(c, str) for c in sp) and len(set(sp)) == len(sp),
             "bad_transfer", f"{key}.specials is a list of distinct special cards")
        out["specials"] = list(sp)
    else:  # the recipient's specials are hidden: the proposal asks for a number, they choose which
        need(whole(sp) and sp >= 0, "bad_transfer", f"{key}.specials is a number of special cards")
        out["specials"] = int(sp)
    return out


def check_proposal(s: S, seat: int, order: Order, w: Wallet) -> None:
    if "propose" not in order:
        return
    check_offer(s, seat, order["propose"], w)


def check_offer(s: S, seat: int, prop: Any, w: Wallet) -> None:
    """V4: `seat` may propose `prop` ({to, give, get}) now, with `w` its crowns and hand."""
    need(bool(s["options"]["trading"]), "trading_off", "transfers exist only in the trading variant (R9)")
    need(s["phase"] == "offer", "transfers_frozen", "transfers are frozen from the price sheets to the end "
         "of income (V4)")
    need(all(p["from"] != seat for p in s["proposals"]), "proposal_open", "you already have an open proposal")
    need(isinstance(prop, dict) and set(prop) <= {"to", "give", "get"}, "bad_transfer",
         "a proposal names the other player and what each side gives")
    to = prop.get("to")
    need(seat_no(to, s) and to != seat, "bad_transfer", "a proposal goes to one other player")
    give, get = _side(prop.get("give", {}), "give", True), _side(prop.get("get", {}), "get", False)
    mine = s["players"][seat]["items"]
    need(all(c in mine for c in give["items"]), "bad_transfer", "give.items must be your own item cards")
    need(all(c in w["hand"] for c in give["specials"]), "bad_transfer", "give.specials must be cards in your hand")
    need(give["crowns"] <= w["crowns"] - high_bid_held(s, seat), "not_enough_crowns",
         "you cannot give more crowns than you have beyond a high bid you hold (R27)")
    theirs = s["players"][to]["items"]
    need(all(c in theirs for c in get["items"]), "bad_transfer", "get.items must be item cards the recipient owns")
    need(bool(give["items"] or give["specials"] or give["crowns"] or get["items"] or get["crowns"]
              or get["specials"]),
         "bad_transfer", "a proposal transfers something")


def add_proposal(s: S, seat: int, prop: dict[str, Any], ev: list[Event], ask: bool = True) -> None:
    """Open `seat`'s proposal `prop` (checked by `check_offer`). A proposal riding on an
    order asks its recipient before play goes on (D-ACCEPT); one made as an action
    (`ask` False) waits for the recipient's answer, given as an action, until the phase
    ends."""
    give = _side(prop.get("give", {}), "give", True)
    get = _side(prop.get("get", {}), "get", False)
    public = {"from": seat, "to": prop["to"],
              "give": {"items": give["items"], "crowns": give["crowns"], "specials": len(give["specials"])},
              "get": get}
    if not ask:
        public["ask"] = False
    s["proposals"] = [*s["proposals"], public]
    seat_entry(s, seat)["offered"] = give["specials"]
    ev.append(event("proposed", **{k: v for k, v in public.items() if k != "ask"}))


def ask_first(s: S) -> bool:
    """Whether an open proposal asks its recipient now (D-ACCEPT); if so it is put first
    (the proposals that wait for an answer given as an action keep their order)."""
    props = s["proposals"]
    asking = [p for p in props if p.get("ask", True)]
    if not asking:
        return False
    if asking[0] is not props[0]:
        s["proposals"] = asking + [p for p in props if not p.get("ask", True)]
    return True


def lapse_all(s: S, ev: list[Event]) -> None:
    for p in s["proposals"]:
        ev.append(event("proposal_lapsed", seat=p["from"], to=p["to"], why="phase_end"))
        seat_entry(s, p["from"])["offered"] = []
    s["proposals"] = []


def _choices(s: S, seat: int, shared: None) -> dict[str, Any]:
    return {"proposal": s["proposals"][0], "specials": list(s["players"][s["proposals"][0]["from"]]["offered"]),
            "hand": list(s["players"][seat]["hand"])}


def _check(s: S, seat: int, o: Order, w: Wallet) -> None:
    need(isinstance(o.get("accept", False), bool), "malformed_order", "accept is true or false")
    if not o.get("accept"):
        return
    get = s["proposals"][0]["get"]
    mine_sp = o.get("specials", [])
    need(isinstance(mine_sp, list) and len(set(map(str, mine_sp))) == len(mine_sp) == get["specials"]
         and all(c in w["hand"] for c in mine_sp), "bad_transfer",
         f"the proposal asks for {get['specials']} of your special cards: name them in specials")
    mine = s["players"][seat]["items"]
    need(all(c in mine for c in get["items"]), "bad_transfer", "you no longer own every item asked of you")
    need(get["crowns"] <= w["crowns"] - high_bid_held(s, seat), "not_enough_crowns",
         f"you cannot pay {get['crowns']} crowns and keep any high bid you hold (R27)")


def _apply(s: S, orders: dict[int, Order], ev: list[Event]) -> None:
    seat, o = next(iter(orders.items()))
    prop, s["proposals"] = s["proposals"][0], s["proposals"][1:]
    giver = prop["from"]
    specials = list(s["players"][giver]["offered"])
    seat_entry(s, giver)["offered"] = []
    if not o.get("accept"):
        ev.append(event("proposal_rejected", seat=seat, by=giver))
        return
    gp = s["players"][giver]
    ok = (all(c in gp["items"] for c in prop["give"]["items"]) and all(c in gp["hand"] for c in specials)
          and gp["crowns"] - prop["give"]["crowns"] >= high_bid_held(s, giver))
    if not ok:
        ev.append(event("proposal_lapsed", seat=giver, to=seat, why="cannot_deliver"))
        return
    carry_out(s, prop, specials, list(o.get("specials", [])), ev)


def carry_out(s: S, prop: dict[str, Any], specials: list[str], theirs: list[str], ev: list[Event]) -> None:
    """The transfer of `prop` (already taken off the open proposals), atomically: the
    proposer's `specials` for the recipient's `theirs`, items and crowns both ways."""
    giver, seat = prop["from"], prop["to"]
    give, get = prop["give"], prop["get"]
    for c in give["items"]:
        drop_item(s, giver, c)
    add_items(s, seat, give["items"])
    for c in get["items"]:
        drop_item(s, seat, c)
    add_items(s, giver, get["items"])
    drop_hand(s, giver, specials)
    drop_hand(s, seat, theirs)
    add_hand(s, seat, specials)
    add_hand(s, giver, theirs)
    credit(s, giver, get["crowns"] - give["crowns"])
    credit(s, seat, give["crowns"] - get["crowns"])
    ev.append(event("transferred", seat=giver, to=seat, give=give, get=get))
    if specials or theirs:
        ev.append(event("transferred_specials", [giver, seat], seat=giver, to=seat, specials=specials,
                        returned=theirs))


def deliverable(s: S, prop: dict[str, Any]) -> bool:
    """V4: `prop` can still be carried out as far as the proposer's side and the public
    part of the recipient's side go: the proposer owns what it gives and keeps a high bid
    it holds (R27, counted net), the recipient still owns the items asked of it."""
    giver, to = prop["from"], prop["to"]
    gp = s["players"][giver]
    give, get = prop["give"], prop["get"]
    return (all(c in gp["items"] for c in give["items"]) and all(c in gp["hand"] for c in gp["offered"])
            and gp["crowns"] - give["crowns"] + get["crowns"] >= high_bid_held(s, giver)
            and all(c in s["players"][to]["items"] for c in get["items"]))


def lapse_undeliverable(s: S, ev: list[Event], keep: dict[str, Any] | None = None) -> None:
    """V4: every open proposal (but `keep`, the one its recipient is asked about now) that
    can no longer be carried out lapses, publicly."""
    if not s["proposals"]:
        return
    kept = []
    for p in s["proposals"]:
        if p is keep or deliverable(s, p):
            kept.append(p)
        else:
            ev.append(event("proposal_lapsed", seat=p["from"], to=p["to"], why="cannot_deliver"))
            seat_entry(s, p["from"])["offered"] = []
    if len(kept) != len(s["proposals"]):
        s["proposals"] = kept


ACCEPT = Decision("accept", "D-ACCEPT", False, ("accept", "specials"), _choices, _check, _apply,
                  lambda s, seat: {"accept": False})
