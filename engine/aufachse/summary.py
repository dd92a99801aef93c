"""Readable text for people, built from a view only: the headline, what a request asks,
and a one-screen summary of the table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.aufachse.context import ctx_of
from engine.aufachse.describe import order_words
from engine.core.game import Request

ASK = {
    "place": "place your truck on any space",
    "move": "choose where your truck drives",
    "arrive": "act on arrival: trailers, loads, and pick or decline a public order",
    "bid": "bid for the public order or pass",
    "load_won": "load the order you won, or keep it in hand",
    "event_space": "choose the space for the marker",
    "shortcut": "choose a city for the shortcut, or decline",
}


def _name(names: Sequence[str], seat: Any) -> str:
    return names[seat] if isinstance(seat, int) and 0 <= seat < len(names) else f"seat {seat}"


def headline(view: dict[str, Any]) -> str:
    if view.get("over"):
        return "game over"
    if view.get("phase") == "place":
        return "setup: placing trucks"
    return f"round {view.get('round', 0)}, turn {view.get('turn_no', 0)}"


def describe_request(request: Request, view: dict[str, Any], names: Sequence[str]) -> str:
    text = f"{_name(names, request.seat)}: {ASK.get(request.kind, request.kind)}"
    ch = request.choices
    if request.kind == "move":
        text += f"; the dice show {ch['dice'][0]} and {ch['dice'][1]}" + (" (extra move)" if ch.get("extra") else "")
    elif request.kind == "bid":
        text = (f"{_name(names, request.seat)}: bid for {order_words(ctx_of(view), ch['card'])} or pass; "
                + (f"the bid stands at {ch['step']}" if ch["step"] else "nobody has bid yet"))
    elif request.kind == "load_won":
        text += f" ({order_words(ctx_of(view), ch['card'])})"
    return text + "."


def _money(p: dict[str, Any]) -> str:
    debts = p.get("debts") or []
    out = f"cash {p['cash']}"
    if debts:
        out += f", debts {sum(d['amount'] for d in debts)}"
    return out


def summary(view: dict[str, Any], names: Sequence[str]) -> str:
    ctx = ctx_of(view)

    def card_name(card: str) -> str:
        return order_words(ctx, card, "")

    space_name = ctx.board.name
    lines = [f"Auf Achse — {headline(view)}."]
    data = view.get("data") or {}
    if data:
        lines.append(f"Board: {data.get('name', data.get('id'))}.")
    if view.get("dice") and not view.get("over"):
        lines.append(f"Dice: {view['dice'][0]} and {view['dice'][1]}.")
    for seat, p in enumerate(view.get("players", [])):
        tr = p.get("trailers", {})
        trailers = ", ".join(f"{n} {k}" for k, n in tr.items() if n) or "no trailers"
        hand_n = p.get("hand_size", len(p.get("hand") or [])) + len(p.get("open", []))
        at = f"truck at {space_name(p['at'])}" if p.get("at") else "truck not placed yet"
        marks = " (to move)" if view.get("turn") == seat and not view.get("over") and view.get("phase") == "play" \
            else ""
        lines.append(f"- {_name(names, seat)}{marks}: {_money(p)}; {at}; {trailers}; "
                     f"{hand_n} order{'s' if hand_n != 1 else ''} in hand; "
                     f"loaded: {'; '.join(map(card_name, p.get('loaded', []))) or 'nothing'}"
                     + (f"; skips {p['skips']}" if p.get("skips") else "") + ".")
        if p.get("hand"):
            lines.append(f"  Hand: {'; '.join(card_name(c) for c in p['hand'])}.")
        if p.get("open"):
            lines.append(f"  Won at auction, in hand: {'; '.join(card_name(c) for c in p['open'])}.")
    disp = view.get("display", [])
    lines.append("Public orders: " + ("; ".join(f"{i}. {card_name(c)}" for i, c in enumerate(disp, 1)) or "none")
                 + f". Public deck: {view.get('deck_size', len(view.get('deck') or []))} cards.")
    signs: list[str] = []
    if view.get("roadworks"):
        signs.append(f"roadworks on {space_name(view['roadworks'])}")
    if view.get("jam"):
        signs.append(f"traffic jam on {space_name(view['jam']['at'])} (owner {_name(names, view['jam']['owner'])})")
    lines.append("Markers: " + (", ".join(signs) if signs else "none on the board") + ".")
    lines.append(f"Event deck: {view.get('event_deck_size', len(view.get('events') or []))} cards; "
                 f"used: {', '.join(_event(ctx, e) for e in view.get('used_events', [])) or 'none'}.")
    a = view.get("auction")
    if a:
        lines.append(f"Auction: {card_name(a['card'])}, the bid at {a['step']}, held by {_name(names, a['holder'])}.")
    pend = view.get("pending")
    if pend and not view.get("over"):
        asked = ASK.get(pend["kind"], pend["kind"]).replace("your ", "their ").replace("you ", "they ")
        lines.append(f"Waiting for {_name(names, pend['seat'])} to {asked}.")
    if view.get("over"):
        lines.append("Final money (cash − debts + debts owed to you): " + ", ".join(
            f"{_name(names, i)} {_final(view, i)}" for i in range(len(view.get('players', [])))) + ".")
    return "\n".join(lines)


def _event(ctx: Any, card: str) -> str:
    e = ctx.events.get(card)
    return f"“{e.title}”" if e is not None else "an event card"


def _final(view: dict[str, Any], seat: int) -> int:
    ps = view["players"]
    owed = sum(d["amount"] for q in ps for d in q["debts"] if d["to"] == seat)
    return int(ps[seat]["cash"] - sum(d["amount"] for d in ps[seat]["debts"]) + owed)
