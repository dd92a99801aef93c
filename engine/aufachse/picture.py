"""An SVG picture of the table, built from a view only: the board with cities, road
spaces (event spaces marked), markers and trucks, and a side panel with the players and
the display. Accessible (title, desc, text labels) and deterministic."""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import escape
from typing import Any

from engine.aufachse.context import ctx_of
from engine.aufachse.describe import order_words
from engine.aufachse.summary import headline

COLOURS = ("#c0392b", "#d4ac0d", "#2e86c1", "#229954", "#8e44ad", "#7f8c8d")
W, H, PANEL = 640, 700, 380
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def place_id(space: str) -> str:
    """The id of a space's element in the picture ("space-Hamburg", "space-R3.1"): what a
    prompt's option names as its `place`, so a page can make the space clickable."""
    return "space-" + _UNSAFE.sub(lambda m: f"_{ord(m.group()):x}_", space)


def picture(view: dict[str, Any], names: Sequence[str]) -> str:
    ctx = ctx_of(view)
    board = ctx.board
    space_name = board.name
    xs = [p[0] for p in board.positions.values()]
    ys = [p[1] for p in board.positions.values()]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)

    def pos(city: str) -> tuple[float, float]:
        x, y = board.positions[city]
        return 30 + (x - x0) / (x1 - x0 or 1) * (W - 60), 30 + (y1 - y) / (y1 - y0 or 1) * (H - 60)

    where: dict[str, tuple[float, float]] = {c: pos(c) for c in board.cities}
    for eid, a, b, _kind, pips, _ev in board.edges:
        (ax, ay), (bx, by) = where[a], where[b]
        for k in range(1, pips):
            where[f"R{eid}.{k}"] = (ax + (bx - ax) * k / pips, ay + (by - ay) * k / pips)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W + PANEL}" height="{H}" '
           f'viewBox="0 0 {W + PANEL} {H}" role="img" aria-labelledby="t d" '
           f'font-family="DejaVu Sans, Verdana, sans-serif">',
           f"<title id=\"t\">Auf Achse — {escape(headline(view))}</title>",
           f"<desc id=\"d\">{escape(_desc(view, names))}</desc>",
           f'<rect width="{W + PANEL}" height="{H}" fill="#f7f4ea"/>']
    for _eid, a, b, kind, _p, _ev in board.edges:
        (ax, ay), (bx, by) = where[a], where[b]
        dash = ' stroke-dasharray="6 4"' if kind == "ferry" else ""
        out.append(f'<line x1="{ax:.1f}" y1="{ay:.1f}" x2="{bx:.1f}" y2="{by:.1f}" stroke="#999"{dash}/>')
    for sid in board.spaces:
        if sid in board.city_set:
            continue
        x, y = where[sid]
        fill = "#e74c3c" if sid in board.events else "#fff"
        out.append(f'<circle id="{place_id(sid)}" cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{fill}" stroke="#555">'
                   f"<title>{escape(space_name(sid))}{' (event space)' if sid in board.events else ''}</title>"
                   "</circle>")
    for c in board.cities:
        x, y = where[c]
        out.append(f'<g id="{place_id(c)}"><title>{escape(board.city_names[c])}</title>'
                   f'<rect x="{x - 5:.1f}" y="{y - 5:.1f}" width="10" height="10" fill="#333"/>'
                   f'<text x="{x + 7:.1f}" y="{y + 4:.1f}" font-size="10">{escape(board.city_names[c])}</text></g>')
    for label, sp in (("Roadworks", view.get("roadworks")), ("Traffic jam", (view.get("jam") or {}).get("at"))):
        if sp and sp in where:
            x, y = where[sp]
            out.append(f'<text x="{x - 5:.1f}" y="{y - 6:.1f}" font-size="12" fill="#e67e22">'
                       f'{"⚠" if label == "Roadworks" else "✖"}<title>{label} on {escape(space_name(sp))}'
                       "</title></text>")
    for seat, p in enumerate(view.get("players", [])):
        if p.get("at") in where:
            x, y = where[p["at"]]
            cx, cy = x + 9 * (seat % 3) - 9, y + 12 + 9 * (seat // 3)
            out.append(f'<g><title>{escape(_n(names, seat))}\'s truck at {escape(space_name(p["at"]))}</title>'
                       f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="6" fill="{COLOURS[seat % 6]}" stroke="#222"/>'
                       f'<text x="{cx:.1f}" y="{cy + 3.5:.1f}" font-size="9" text-anchor="middle" fill="#fff">'
                       f'{escape(_n(names, seat)[:1])}</text></g>')
    out += _panel(view, names, ctx)
    out.append("</svg>")
    return "".join(out)


def _order(ctx: Any, card: str) -> str:
    return order_words(ctx, card, "")


def _line(x: float, y: float, text: str, size: int = 11, weight: str = "normal") -> str:
    return f'<text x="{x}" y="{y}" font-size="{size}" font-weight="{weight}">{escape(text)}</text>'


def _panel(view: dict[str, Any], names: Sequence[str], ctx: Any) -> list[str]:
    """The side panel: where the game stands, the dice, each player, the viewer's hand,
    the public orders and the markers."""
    x, y = W + 8, 22
    space_name = ctx.board.name
    out = [_line(x, y, f"Auf Achse — {headline(view)}", 13, "bold")]
    dice = view.get("dice")
    if dice:
        y += 17
        out.append(_line(x, y, f"Dice: {dice[0]} and {dice[1]}"))
    y += 8
    for seat, p in enumerate(view.get("players", [])):
        y += 20
        trailers = p.get("trailers") or {}
        trailer_text = ", ".join(f"{n} {k}" for k, n in sorted(trailers.items()) if n) or "no trailers"
        debts = sum(d.get("amount", 0) for d in p.get("debts") or [] if isinstance(d, dict))
        out.append(f'<rect x="{x}" y="{y - 10}" width="11" height="11" fill="{COLOURS[seat % 6]}" stroke="#222"/>')
        out.append(_line(x + 16, y, f"{_n(names, seat)}: {p.get('cash', 0):,} cash"
                         + (f", {debts:,} debts" if debts else ""), 12, "bold"))
        y += 14
        out.append(_line(x + 16, y, f"at {space_name(p['at']) if p.get('at') else 'not placed'}; {trailer_text}; "
                         f"{p.get('hand_size', 0)} in hand", 10))
        for card in (p.get("loaded") or [])[:4]:
            y += 13
            out.append(_line(x + 16, y, f"loaded: {_order(ctx, card)}", 10))
    for seat, p in enumerate(view.get("players", [])):
        if isinstance(p.get("hand"), list):
            y += 24
            out.append(_line(x, y, f"{_n(names, seat)}'s hand", 12, "bold"))
            for card in p["hand"][:6] or ["(empty)"]:
                y += 14
                out.append(_line(x + 8, y, _order(ctx, card) if card != "(empty)" else card, 10))
    y += 24
    out.append(_line(x, y, "Public orders", 12, "bold"))
    auction = view.get("auction") or {}
    for i, card in enumerate(view.get("display", []), 1):
        y += 14
        mark = "  (under auction)" if auction.get("card") == card else ""
        out.append(_line(x + 8, y, f"{i}. {_order(ctx, card)}{mark}", 10))
    if not view.get("display"):
        y += 14
        out.append(_line(x + 8, y, "none", 10))
    y += 14
    out.append(_line(x + 8, y, f"public deck {view.get('deck_size', 0)}, event deck {view.get('event_deck_size', 0)}",
                     10))
    markers = [f"roadworks on {space_name(view['roadworks'])}" if view.get("roadworks") else "",
               f"traffic jam on {space_name((view.get('jam') or {}).get('at'))}"
               if (view.get("jam") or {}).get("at") else ""]
    y += 20
    out.append(_line(x, y, "Markers: " + ("; ".join(m for m in markers if m) or "none on the board"), 10))
    y += 22
    out.append(f'<circle cx="{x + 4}" cy="{y - 4}" r="3" fill="#e74c3c" stroke="#555"/>')
    out.append(_line(x + 12, y, "event space   ○ road space   ■ city   - - ferry", 10))
    return out


def _n(names: Sequence[str], seat: int) -> str:
    return names[seat] if seat < len(names) else f"seat {seat}"


def _desc(view: dict[str, Any], names: Sequence[str]) -> str:
    ctx = ctx_of(view)
    parts = [f"{_n(names, i)}: truck {'at ' + ctx.board.name(p['at']) if p.get('at') else 'not placed'}, "
             f"cash {p['cash']}" for i, p in enumerate(view.get("players", []))]
    shown = "; ".join(_order(ctx, c) for c in view.get("display", [])) or "none"
    return "; ".join(parts) + f". Public orders: {shown}."
