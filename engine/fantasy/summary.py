"""What a player needs to decide, as plain text, built from a view only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.core.game import Request
from engine.fantasy.describe import card_name, side_words, type_name
from engine.fantasy.state import C

Names = Sequence[str]

PHASES = {"offer": "phase 1: offer", "prices": "phase 2: prices", "income": "phase 3: income", "end": "game over"}
ASK = {
    "w_open": "as the offer begins, play Market Closed, No Delivery or First Buyer, or pass",
    "w_close": "as the offer ends, play Antitrust Law, Defective Item, Steal an Item or Trading, or pass",
    "w_spy": "now that the price sheets are in, play one Spy, or pass",
    "w_reveal": "before the price sheets are revealed, play Out of Season, Bad Check or Racketeering, or pass",
    "select": "choose a displayed card, then open the bidding or pass the opening",
    "open": "open the bidding or pass the opening",
    "bid": "raise or pass (a pass is final)",
    "lone": "take one displayed card at its minimum, or decline",
    "price": "submit your sealed price sheet",
    "spy": "look at the price sheets and revise your own, or keep it",
    "accept": "accept or reject a trading proposal",
}


def headline(view: dict[str, Any]) -> str:
    if view.get("over"):
        return "game over"
    return f"round {view.get('round')} of {view.get('rounds')}, {PHASES.get(view.get('phase', ''), '')}"


def describe_request(request: Request, view: dict[str, Any], names: Names) -> str:
    text = f"{names[request.seat]}: {ASK.get(request.kind, request.kind)}"
    ch = request.choices
    if request.kind == "bid":
        text += f" (high bid {ch.get('high')} by {names[ch['bidder']]})"
    elif request.kind == "open":
        text += f" (minimum {ch.get('min')})"
    return text + "."


def _items(items: list[str]) -> str:
    counts: dict[str, int] = {}
    for c in items:
        t = c.rstrip("0123456789")
        counts[t] = counts.get(t, 0) + 1
    return ", ".join(f"{n} {type_name(t)}" for t, n in counts.items()) or "no items"


def summary(view: dict[str, Any], names: Names) -> str:
    lines = [f"Fantasy Business, {headline(view)}."]
    if view.get("marker") is not None:
        lines.append(f"First Buyer marker: {names[view['marker']]}; acting First Buyer: {names[view['afb']]}.")
    for i, p in enumerate(view.get("players", [])):
        crowns = f"{p['crowns']} crowns, " if "crowns" in p else ""
        hand = p.get("hand")
        specials = (", ".join(card_name(c) for c in hand) if hand else "none") if hand is not None \
            else f"{p.get('hand_size', 0)} hidden"
        lines.append(f"- {names[i]}: {crowns}{_items(p.get('items', []))}; specials: {specials}.")
        if p.get("sheet"):
            lines.append("  price sheet: " + ", ".join(f"{type_name(t)} {v}" for t, v in p["sheet"].items()))
    display = [d for d in view.get("display", []) if d is not None]
    if display and view.get("phase") == "offer":
        lines.append("Display: " + ", ".join(
            f"{d['pos']}: {card_name(d['card']) if d['card'] else 'special (face down)'}" for d in display) + ".")
    a = view.get("auction")
    if a and a.get("stage") == "bid":
        lines.append(f"High bid: {a['high']} by {names[a['bidder']]}.")
    if view.get("prices"):
        lines.append("Last revealed prices: " + "; ".join(
            f"{names[int(k)]}: " + ", ".join(f"{type_name(t)} {v}" for t, v in sh.items())
            for k, sh in view["prices"].items()) + ".")
    for p in view.get("proposals") or []:
        frm, to = names[p["from"]], names[p["to"]]
        lines.append(f"Open proposal from {frm} to {to}: {frm} gives {side_words(p['give'])}; "
                     f"{to} gives {side_words(p['get'])}.")
    lines.append(f"Deck: {view.get('deck_size', 0)} cards.")
    pend = view.get("pending")
    if pend and not view.get("over"):
        lead = "Waiting for" if len(pend["seats"]) == 1 else "Asked of"  # a sealed step: answers are not shown
        lines.append(f"{lead} {', '.join(names[s] for s in pend['seats'])}: "
                     f"{ASK.get(pend['kind'], pend['kind'])}.")
    if view.get("over") and view.get("scores"):
        lines.append("Final scores: " + ", ".join(f"{names[int(k)]} {v}" for k, v in view["scores"].items()) + ".")
    lines.append("Base values: " + ", ".join(f"{t.name} {t.base}" for t in C.item_types) + ".")
    return "\n".join(lines)
