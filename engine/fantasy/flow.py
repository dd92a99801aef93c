"""The order of play (§7): round start, W-OPEN, the reveal, the auctions, W-CLOSE and its
queue, price sheets, W-SPY and the Spy revisions, W-REVEAL, income, the marker's move
and the end (§11).

`advance` runs every step that needs nobody's decision and stops at the next decision
point, which it records in `s["pending"]` (public). `s["at"]` is the cursor.
"""

from __future__ import annotations

from engine.core.events import Event, event
from engine.core.stream import shuffle
from engine.fantasy import auction, income, trading
from engine.fantasy.specials.windows import run_queue
from engine.fantasy.state import C, S, holders, holds_types, is_item, left

WINDOW_AT = {"w_open": "w_open", "w_close": "w_close", "w_spy": "w_spy", "w_reveal": "w_reveal"}


def deal(s: S) -> None:
    """S4: the 72 cards in canonical order, shuffled (FD1 order of use, step 2)."""
    deck, s["rng"] = shuffle(s["rng"], list(C.deck))
    s["deck"] = deck


def _ask(s: S, kind: str, seats: list[int]) -> None:
    s["pending"] = {"kind": kind, "seats": seats}


def advance(s: S, ev: list[Event]) -> None:
    a = s["auction"]
    if a is not None and not s["proposals"] and (s["at"] == "offer" or s["at"] == "queue") and not s["over"]:
        # Most steps are an auction's: the loop below would ask its next seat at once.
        s["pending"] = {"kind": a["stage"], "seats": [a["seat"]]}
        return
    s["pending"] = None
    while not s["over"]:
        if s["proposals"] and s["phase"] == "offer":  # V4: the recipient of an order's proposal answers first
            trading.lapse_undeliverable(s, ev)  # those that can no longer be carried out lapse
            if trading.ask_first(s):
                _ask(s, "accept", [s["proposals"][0]["to"]])
                return
        at = s["at"]
        if at == "offer" or at == "queue":  # first: most steps are the auctions'
            a = s["auction"]
            if a is not None:
                s["pending"] = {"kind": a["stage"], "seats": [a["seat"]]}  # `_ask`, written out
                return
            if at == "queue":
                run_queue(s, ev)
            elif not auction.offer_next(s, ev):
                auction.end_offer(s)
                ev.append(event("offer_ended"))
                s["at"] = "w_close"
        elif at == "round":
            _start_round(s, ev)
        elif at in WINDOW_AT:
            asked = holders(s)  # R3, R25: every holder of any special, fixed as it opens
            if asked:
                _ask(s, at, asked)
                return
            s["at"] = {"w_open": "reveal", "w_close": "prices", "w_spy": "spy", "w_reveal": "income"}[at]
        elif at == "reveal":
            _reveal(s, ev)
        elif at == "prices":
            s["phase"] = "prices"
            trading.lapse_all(s, ev)
            owners = [p for p, entry in enumerate(s["players"]) if entry["items"]]
            s["at"] = "w_spy"
            if owners:
                _ask(s, "price", owners)
                return
        elif at == "spy":
            if s["spies"]:
                _ask(s, "spy", [s["spies"][0]])
                return
            s["at"] = "w_reveal"
        elif at == "income":
            s["phase"] = "income"
            income.run_income(s, ev)
            _end_round(s, ev)
        else:  # pragma: no cover
            raise AssertionError(f"unknown cursor {at!r}")


def _start_round(s: S, ev: list[Event]) -> None:
    """§7 step 1: the AFB is the marker holder."""
    s["afb"] = s["marker"]
    s["phase"] = "offer"
    s["offer"] = {"bought": [], "nd": [], "preempt": None, "closed": False}
    s["display"], s["facedown"], s["auction"] = [], {}, None
    s["spies"], s["queue"] = [], []
    s["income"] = {}
    _clear_sheets(s)
    ev.append(event("round_started", round=s["round"], marker=s["marker"]))
    s["at"] = "w_open"


def _reveal(s: S, ev: list[Event]) -> None:
    """O6 (FD15): k = n - (No Delivery cards that took effect) cards, into positions 1..k."""
    k = max(0, s["seats"] - len(s["offer"]["nd"]))
    drawn, s["deck"] = s["deck"][:k], s["deck"][k:]
    display, facedown = [], {}
    for i, card in enumerate(drawn, start=1):
        if is_item(card):
            display.append({"pos": i, "card": card})
        else:
            display.append({"pos": i, "card": None})
            facedown[str(i)] = card
    s["display"], s["facedown"] = display, facedown
    ev.append(event("offer_revealed", display=display, afb=s["afb"]))
    s["at"] = "offer"


def _end_round(s: S, ev: list[Event]) -> None:
    """E1–E3: the marker passes left; after the last round the game is scored."""
    s["marker"] = left(s, s["marker"])
    _clear_sheets(s)
    if s["round"] >= s["rounds"]:
        s["over"] = True
        s["at"] = "end"
        s["phase"] = "end"
        ranking = income.ranking(s)
        s["scores"] = {str(r["seat"]): r["score"] for r in ranking}
        ev.append(event("game_over", ranking=ranking))
        return
    ev.append(event("marker_passed", marker=s["marker"]))
    s["round"] += 1
    s["at"] = "round"


def _clear_sheets(s: S) -> None:
    players = s["players"]
    for p in players:
        if p["sheet"] is not None:
            break
    else:
        return  # no sheet to clear
    # Copy on write as `seat_entry` does, with the players list copied once.
    players = s["players"] = players.copy()
    for seat, p in enumerate(players):
        if p["sheet"] is not None:
            p = players[seat] = p.copy()
            p["sheet"] = None


def owned_types(s: S, seat: int) -> list[str]:  # re-export for the summary
    return holds_types(s, seat)
