"""An SVG picture of the table as a view shows it: accessible (text labels, <title> and
<desc>), deterministic, small."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from engine.fantasy.describe import card_name
from engine.fantasy.summary import headline

Names = Sequence[str]
COLOURS = {"HH": "#9c6", "SC": "#c9f", "BA": "#c96", "SW": "#aab", "AR": "#889", "HO": "#a75", "SS": "#fd8",
           "MP": "#6cf"}


def _card(x: int, y: int, label: str, fill: str, tip: str) -> str:
    return (f'<g><title>{escape(tip)}</title><rect x="{x}" y="{y}" width="54" height="30" rx="4" '
            f'fill="{fill}" stroke="#333"/><text x="{x + 27}" y="{y + 20}" text-anchor="middle" '
            f'font-size="12">{escape(label)}</text></g>')


def picture(view: dict[str, Any], names: Names) -> str:
    players = view.get("players", [])
    width, row = 900, 44
    height = 120 + row * max(1, len(players))
    head = headline(view)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-labelledby="t d" font-family="sans-serif">',
           f'<title id="t">Fantasy Business: {escape(head)}</title>',
           f'<desc id="d">The offer display, then each player with crowns (if visible), special-card count '
           f'and items. {escape(head)}.</desc>',
           f'<text x="10" y="20" font-size="16">{escape(head)}</text>',
           '<text x="10" y="50" font-size="13">Display:</text>']
    x = 80
    for d in view.get("display", []):
        if d is None:
            x += 60
            continue
        card = d["card"]
        label = f"{d['pos']}:{card}" if card else f"{d['pos']}:?"
        fill = COLOURS.get(card.rstrip("0123456789"), "#ddd") if card else "#444"
        out.append(_card(x, 32, label, fill, f"position {d['pos']}: {card_name(card)}"))
        x += 60
    for i, p in enumerate(players):
        y = 90 + i * row
        marker = " (marker)" if view.get("marker") == i else ""
        crowns = f", {p['crowns']} crowns" if "crowns" in p else ""
        hand = p.get("hand")
        specials = len(hand) if hand is not None else p.get("hand_size", 0)
        out.append(f'<text x="10" y="{y + 20}" font-size="13">{escape(names[i])}{marker}{crowns}, '
                   f'{specials} specials</text>')
        for j, c in enumerate(p.get("items", [])[:10]):
            out.append(_card(330 + j * 56, y, c, COLOURS.get(c.rstrip("0123456789"), "#ddd"), card_name(c)))
        if len(p.get("items", [])) > 10:
            out.append(f'<text x="{330 + 10 * 56}" y="{y + 20}" font-size="12">+{len(p["items"]) - 10}</text>')
    out.append("</svg>")
    return "".join(out)
