"""An SVG picture of the table, built from a view only: the board with cities, road
spaces (event spaces marked), markers and trucks, and a side panel with the players and
the display. Accessible (title, desc, text labels) and deterministic."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from engine.aufachse.context import ctx_of

COLOURS = ("#c0392b", "#d4ac0d", "#2e86c1", "#229954", "#8e44ad", "#7f8c8d")
W, H, PANEL = 640, 700, 300


def picture(view: dict[str, Any], names: Sequence[str]) -> str:
    ctx = ctx_of(view)
    board = ctx.board
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
           f'viewBox="0 0 {W + PANEL} {H}" role="img" aria-labelledby="t d">',
           "<title id=\"t\">Auf Achse — the board</title>",
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
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{fill}" stroke="#555"><title>{escape(sid)}'
                   f"{' (event space)' if sid in board.events else ''}</title></circle>")
    for c in board.cities:
        x, y = where[c]
        out.append(f'<rect x="{x - 5:.1f}" y="{y - 5:.1f}" width="10" height="10" fill="#333"/>'
                   f'<text x="{x + 7:.1f}" y="{y + 4:.1f}" font-size="10">{escape(board.city_names[c])}</text>')
    for label, sp in (("Roadworks", view.get("roadworks")), ("Traffic jam", (view.get("jam") or {}).get("at"))):
        if sp and sp in where:
            x, y = where[sp]
            out.append(f'<text x="{x - 5:.1f}" y="{y - 6:.1f}" font-size="12" fill="#e67e22">'
                       f'{"⚠" if label == "Roadworks" else "✖"}<title>{label} on {escape(sp)}</title></text>')
    for seat, p in enumerate(view.get("players", [])):
        if p.get("at") in where:
            x, y = where[p["at"]]
            out.append(f'<circle cx="{x + 4 * (seat % 3) - 4:.1f}" cy="{y + 8 + 4 * (seat // 3):.1f}" r="4" '
                       f'fill="{COLOURS[seat % 6]}"><title>{escape(_n(names, seat))}\'s truck at '
                       f'{escape(p["at"])}</title></circle>')
    y = 24
    for seat, p in enumerate(view.get("players", [])):
        out.append(f'<rect x="{W + 8}" y="{y - 10}" width="10" height="10" fill="{COLOURS[seat % 6]}"/>'
                   f'<text x="{W + 24}" y="{y}" font-size="12">{escape(_n(names, seat))}: cash {p["cash"]}, '
                   f'loaded {len(p.get("loaded", []))}</text>')
        y += 18
    y += 10
    out.append(f'<text x="{W + 8}" y="{y}" font-size="12" font-weight="bold">Public orders</text>')
    for i, c in enumerate(view.get("display", []), 1):
        o = ctx.orders.get(c)
        y += 16
        names_of = board.city_names
        text = f"{i}. {c} {names_of[o.start]}→{names_of[o.dest]}, {o.goods} goods, {o.pay}" if o else f"{i}. {c}"
        out.append(f'<text x="{W + 8}" y="{y}" font-size="11">{escape(text)}</text>')
    out.append("</svg>")
    return "".join(out)


def _n(names: Sequence[str], seat: int) -> str:
    return names[seat] if seat < len(names) else f"seat {seat}"


def _desc(view: dict[str, Any], names: Sequence[str]) -> str:
    parts = [f"{_n(names, i)}: truck at {p.get('at') or 'nowhere'}, cash {p['cash']}"
             for i, p in enumerate(view.get("players", []))]
    return "; ".join(parts) + f". Public orders: {', '.join(view.get('display', [])) or 'none'}."
