"""One plain sentence per event, with player names and display names (the game log).

A sentence shows exactly what its event carries, so it may go to whoever may see the
event (a face-down special bought shows as "the special at position 3").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.fantasy.components import kind_of
from engine.fantasy.state import C

Names = Sequence[str]


def card_name(card: str | None) -> str:
    """A card by its name ("Swords", "Steal an Item"): copies of a kind are alike, and a
    card's id is never shown to a player."""
    if card is None:
        return "a special card"
    kind = kind_of(card)
    return C.type_names.get(kind) or C.special_names.get(kind, kind)


def type_name(t: str) -> str:
    return C.type_names.get(t, t)


def _at(e: dict[str, Any]) -> str:
    if e.get("pos") is None:
        return card_name(e.get("card"))
    if e.get("card") is None:
        return f"the special at position {e['pos']}"
    return f"{card_name(e['card'])} at position {e['pos']}"


def play_words(p: dict[str, Any], names: Names) -> str:
    kind = kind_of(p["card"])
    who = names[p["seat"]] if "seat" in p else "someone"
    name = C.special_names[kind]
    if kind in ("ND", "DS"):
        return f"{who}: {name} on {names[p['target']]}"
    if kind == "AL":
        return f"{who}: {name} against {names[p['target']]} for {type_name(p['type'])}"
    if kind in ("DI", "ST"):
        return f"{who}: {name} on {card_name(p['item'])}"
    if kind == "TR":
        return f"{who}: {name}, giving {card_name(p['give'])} for {card_name(p['item'])}"
    if kind == "OS":
        return f"{who}: {name} on {type_name(p['type'])}"
    if kind == "BC":
        return f"{who}: {name} against {names[p['target']]} for {type_name(p['type'])}"
    if kind == "RA":
        return f"{who}: {name}, threatening {names[p['target']]} after {names[p['trigger']]} receives income"
    if kind == "SU":
        return f"{who}: {name}, +{C.subsidies_amount}"
    return f"{who}: {name}"


#: The special-card windows (R3) in words.
WINDOWS = {"open": "The window as the offer begins", "close": "The window as the offer ends",
           "spy": "The Spy window", "reveal": "The window before the price sheets are revealed",
           "instant": "an instant"}
#: The same, inside a sentence.
WINDOWS_IN = {"open": "as the offer begins", "close": "as the offer ends", "spy": "in the Spy window",
              "reveal": "before the price sheets are revealed", "instant": "as an instant"}
WHY = {"market_closed": "Market Closed was played", "second_first_buyer": "another First Buyer came first",
       "target_moved": "its target has moved", "invalid": "its target is no longer valid"}


def side_words(side: dict[str, Any]) -> str:
    """One side of a transfer in words (a special given shows only as a count where the event has one)."""
    parts = [card_name(c) for c in side.get("items", [])]
    sp = side.get("specials", 0)
    if isinstance(sp, list):
        parts += [card_name(c) for c in sp]
    elif sp:
        parts.append(f"{sp} special card{'s' if sp != 1 else ''}")
    if side.get("crowns"):
        parts.append(f"{side['crowns']} crown{'s' if side['crowns'] != 1 else ''}")
    return ", ".join(parts) or "nothing"


def describe_event(e: dict[str, Any], names: Names) -> str:  # noqa: C901 - one branch per event type
    t = e["type"]
    who = names[e["seat"]] if isinstance(e.get("seat"), int) else ""
    if t == "round_started":
        return f"Round {e['round']} begins; {names[e['marker']]} holds the First Buyer marker."
    if t == "window_closed":
        w = WINDOWS[e["window"]]
        if not e["plays"]:
            return f"{w} closes: no cards played."
        return f"{w} closes: " + "; ".join(play_words(p, names) for p in e["plays"]) + "."
    if t == "played":
        w = WINDOWS_IN.get(e.get("window", ""), "")
        if e.get("window") == "instant":
            if kind_of(e["card"]) == "DS":
                return f"{who} cast Divination Spell on {names[e['play']['target']]}."
            return f"{who}: Subsidies, +{C.subsidies_amount}."
        return f"{play_words(e['play'], names)} takes effect ({w})."
    if t == "returned":
        return f"{who}'s {card_name(e['card'])} returns to their hand unspent: {WHY.get(e['why'], e['why'])}."
    if t == "offer_revealed":
        if not e["display"]:
            return "No cards are revealed."
        cards = ", ".join(f"{d['pos']}: {card_name(d['card']) if d['card'] else 'special (face down)'}"
                          for d in e["display"])
        return f"{names[e['afb']]} reveals the offer: {cards}."
    if t == "selected":
        return f"{who} selects {_at(e)}."
    if t == "opening_passed":
        return f"{who} passes the opening of {_at(e)}."
    if t == "opened":
        return f"{who} opens {_at(e)} at {e['amount']}."
    if t == "raised":
        return f"{who} raises to {e['amount']}."
    if t == "passed":
        return f"{who} passes."
    if t == "sold":
        pay = f" (paid to {names[e['to']]})" if e.get("to") is not None else ""
        return f"{who} bought {_at(e)} for {e['price']}{pay}."
    if t == "special_bought":
        return f"{who} looks at the special bought: {card_name(e['card'])}."
    if t == "discarded":
        if e.get("card") is None:
            return f"The special at position {e['pos']} is discarded unseen."
        return f"Nobody buys {_at(e)}; it is discarded."
    if t == "preempted":
        return f"{who} pre-empts {_at(e)} for {e['price']}."
    if t == "lone_take":
        return f"{who}, the last eligible player, takes {_at(e)} for {e['price']}."
    if t == "lone_declined":
        return f"{who}, the last eligible player, declines the remaining cards."
    if t == "antitrust_auction":
        cards = ", ".join(card_name(c) for c in e["cards"])
        return f"Antitrust auction of {names[e['target']]}'s {type_name(e['item_type'])}: {cards}."
    if t == "offer_ended":
        return "The offer phase ends."
    if t == "sheets_submitted":
        return f"Price sheets are in from {', '.join(names[p] for p in e['seats'])}."
    if t == "spy_saw":
        sheets = "; ".join(f"{names[int(k)]}: " + ", ".join(f"{type_name(t)} {v}" for t, v in sh.items())
                           for k, sh in e["sheets"].items())
        return f"{who} spies the price sheets: {sheets or 'none'}."
    if t == "spy_done":
        return f"{who} has finished spying."
    if t == "sheets_revealed":
        sheets = "; ".join(f"{names[int(k)]}: " + ", ".join(f"{type_name(t)} {v}" for t, v in sh.items())
                           for k, sh in e["sheets"].items())
        return f"Price sheets revealed: {sheets or 'nobody sells'}."
    if t == "income":
        extra = " (Bad Check)" if e.get("bad_check") else ""
        return (f"{who} earns {e['amount']} for {e['cards']} {type_name(e['item_type'])} at {e['price']}{extra}.")
    if t == "out_of_season_applied":
        return f"{type_name(e['item_type'])} are out of season: no income for them."
    if t == "racketeering_paid":
        return f"Racketeering: {names[e['target']]} pays {e['amount']} to {who}."
    if t == "marker_passed":
        return f"The First Buyer marker passes to {names[e['marker']]}."
    if t == "game_over":
        parts = [f"{names[r['seat']]} {r['score']}" for r in e["ranking"]]
        best = [names[r["seat"]] for r in e["ranking"] if r["place"] == 1]
        return f"Game over. Scores: {', '.join(parts)}. Winner: {' and '.join(best)}."
    if t == "divination_seen":
        hand = ", ".join(card_name(c) for c in e["hand"]) or "no cards"
        return f"{who} sees {names[e['target']]}'s hand: {hand}."
    if t == "proposed":
        frm = names[e["from"]]
        return (f"{frm} proposes to {names[e['to']]}: {frm} gives {side_words(e['give'])}; "
                f"{names[e['to']]} gives {side_words(e['get'])}.")
    if t == "proposal_rejected":
        return f"{who} rejects {names[e['by']]}'s proposal."
    if t == "proposal_withdrawn":
        return f"{who} withdraws the proposal to {names[e['to']]}."
    if t == "proposal_lapsed":
        return f"{who}'s proposal to {names[e['to']]} lapses."
    if t == "transferred":
        return f"{who} → {names[e['to']]}: {side_words(e['give'])}; {names[e['to']]} → {who}: {side_words(e['get'])}."
    if t == "transferred_specials":
        parts = []
        if e["specials"]:
            parts.append(f"{who} gives {names[e['to']]} {', '.join(card_name(c) for c in e['specials'])}")
        if e.get("returned"):
            parts.append(f"{names[e['to']]} gives {who} {', '.join(card_name(c) for c in e['returned'])}")
        return "; ".join(parts) + "."
    return f"{t}."
