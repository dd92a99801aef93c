"""Public orders (rules §13, §16): the display, declining, the auction and the kids
variant's automatic taking."""

from __future__ import annotations

from typing import Any

from engine.aufachse.context import Run, capacity, end_check, fail, load, pay_bank

S = dict[str, Any]


def refill(run: Run) -> None:
    """P4: the top card of the public deck goes to the highest slot. In the kids variant
    a card refilled where a truck stands is marked as not yet taken by it (R20)."""
    s = run.s
    if not s.get("deck") or len(s["display"]) >= run.ctx.comp.display_slots:
        return
    card = run.own("deck").pop(0)
    run.own("display").append(card)
    run.say("refilled", card=card, slot=len(s["display"]))
    if s["options"]["kids"]:
        start = run.ctx.orders[card].start
        for q, pl in enumerate(s["players"]):
            if pl["at"] == start:
                run.own("fresh").append([q, card])


def remove_from_display(run: Run, card: str) -> None:
    """A card leaves the display: the cards above slide down and the deck refills (P4)."""
    s = run.s
    if card in s["display"]:
        run.own("display").remove(card)
        if s["fresh"]:
            s["fresh"] = [f for f in s["fresh"] if f[1] != card]
        refill(run)


def decline(run: Run, seat: int) -> None:
    """P3: the card in slot 1 is discarded; the display slides and refills."""
    s = run.s
    card = s["display"][0]
    run.own("discard").append(card)
    run.say("declined", seat=seat, card=card)
    remove_from_display(run, card)
    end_check(run)


def pick(run: Run, seat: int, slot: Any) -> None:
    """P2: pick a displayed order; the auction starts (A1)."""
    s = run.s
    if isinstance(slot, bool) or not isinstance(slot, int) or not 1 <= slot <= len(s["display"]):
        fail("no_such_slot", f"the display has no card in slot {slot!r} (slots 1–{len(s['display'])})")
    card = s["display"][slot - 1]
    s["auction"] = {"card": card, "slot": slot, "picker": seat, "step": 0, "holder": seat,
                    "passed": [], "cursor": seat, "log": []}
    run.say("picked", seat=seat, card=card, slot=slot)
    run.own("queue").insert(0, {"t": "auction"})


def allowed_bids(run_or_ctx: Any, s: S, seat: int) -> list[int]:
    """A3 / A4: the steps `seat` may bid now (cash ≥ cost)."""
    ctx = getattr(run_or_ctx, "ctx", run_or_ctx)
    a = s["auction"]
    card = ctx.orders[a["card"]]
    low = a["step"] if seat == a["picker"] else a["step"] + 1
    cash = s["players"][seat]["cash"]
    return [b for b in range(max(low, 1), 6) if card.cost(b) <= cash]


def next_bidder(run: Run) -> int | None:
    """A2 / A5 / A6: the next seat to ask, passing automatically for a seat whose only
    choice is to pass; None once the auction is over."""
    s = run.s
    a = run.own("auction")
    n = s["seats"]
    while True:
        if all(q in a["passed"] for q in range(n) if q != a["holder"]):
            return None
        q = a["cursor"]
        for _ in range(n):
            q = (q + 1) % n
            if q != a["holder"] and q not in a["passed"]:
                break
        a["cursor"] = q
        if allowed_bids(run, s, q):
            return int(q)
        a["passed"].append(q)
        a["log"].append([q, "pass"])
        run.say("auto_pass", seat=q, card=a["card"])


def end_auction(run: Run) -> None:
    """A6 / A7: the holder pays the step's cost and takes the card into the hand; then
    D-LOAD-WON (A8) and the slide (A9)."""
    s = run.s
    a = s["auction"]
    card = run.ctx.orders[a["card"]]
    winner = a["holder"]
    cost = card.cost(a["step"])
    if cost:
        pay_bank(run, winner, cost, f"bid step {a['step']}")
    run.player(winner)["open"].append(card.id)
    run.own("display").remove(card.id)  # the card leaves its slot; the refill waits for A9
    if s["fresh"]:
        s["fresh"] = [f for f in s["fresh"] if f[1] != card.id]
    run.say("won", seat=winner, card=card.id, step=a["step"], cost=cost)
    s["auction"] = None
    # the end check follows the slide (A9), after D-LOAD-WON
    run.own("queue")[0:0] = [{"t": "load_won", "seat": winner, "card": card.id}, {"t": "slide", "card": card.id}]


def bid(run: Run, seat: int, order: dict[str, Any]) -> None:
    s = run.s
    a = run.own("auction")
    if order.get("pass") is True and "bid" not in order:
        a["passed"].append(seat)
        a["log"].append([seat, "pass"])
        run.say("passed", seat=seat, card=a["card"])
    else:
        b = order.get("bid")
        if isinstance(b, bool) or not isinstance(b, int) or "pass" in order:
            fail("malformed_order", "a bid order is {\"bid\": step} or {\"pass\": true}")
        allowed = allowed_bids(run, s, seat)
        if b not in allowed:
            card = run.ctx.orders[a["card"]]
            if 1 <= b <= 5 and card.cost(b) > s["players"][seat]["cash"] and b >= a["step"]:
                fail("not_enough_money", f"step {b} costs {card.cost(b)}, more than your cash "
                                         f"{s['players'][seat]['cash']} (A5)")
            fail("bad_bid", f"step {b} is not allowed now; the auction stands at step {a['step']} (A3, A4)")
        match = b == a["step"]
        a["step"] = b
        a["holder"] = seat
        a["log"].append([seat, b])
        run.say("bid", seat=seat, card=a["card"], step=b, match=match)
    run.own("queue").insert(0, {"t": "auction"})


def kids_take(run: Run, seat: int, city: str) -> None:
    """Y3: the seat takes every displayed order starting in `city`, except those refilled
    while its truck stood there (R20); each loads at once if it fits, else goes to hand."""
    s = run.s
    if not s["options"]["kids"]:
        return
    pl = run.player(seat)
    ctx = run.ctx
    while True:
        card = next((c for c in s["display"] if ctx.orders[c].start == city and [seat, c] not in s["fresh"]), None)
        if card is None:
            return
        fits = load(ctx, pl) + ctx.orders[card].goods <= capacity(ctx, pl)
        (pl["loaded"] if fits else pl["open"]).append(card)
        run.say("taken", seat=seat, card=card, loaded=fits)
        remove_from_display(run, card)
        end_check(run)
