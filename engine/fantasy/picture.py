"""An SVG picture of the Fantasy Business table as a view shows it.

Accessible (a `<title>`, a `<desc>`, every card a text label with a hover `<title>`),
deterministic (same view, same bytes), small (a few KB). Built from a view only, so it
shows nothing that view does not: other seats' crowns and specials appear only as
counts, face-down specials in the display as a card back.

Layout, top to bottom: the headline and whose decision is open; the offer display (with
the card under auction marked); one row per seat with its name, crowns where visible,
special-card count, the First Buyer marker, and its items grouped by type (name and
count, coloured by type); the viewer's own specials by name; the price sheets of the
last income once revealed; a legend of item types with base values.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from engine.fantasy.components import components, kind_of
from engine.fantasy.describe import card_name, type_name
from engine.fantasy.summary import headline

Names = Sequence[str]
C = components()
#: One fill per item type (by canonical type order), readable with black text.
PALETTE = ("#a8d5a2", "#d3b8f0", "#e3c29b", "#c2c8d6", "#9fa6b8", "#c9a27e", "#ffe08a", "#9fd8f5")
FILL = {t: PALETTE[i % len(PALETTE)] for i, t in enumerate(C.types)}
W, CARD_W, CARD_H, LEFT = 1000, 122, 34, 290
#: When each special card is played, in words.
_WHEN = {"open": "played as the offer begins", "close": "played as the offer ends",
         "spy": "played once the price sheets are in", "reveal": "played before the price sheets are revealed",
         "instant": "played at any time"}


def _text(x: float, y: float, text: str, size: int = 13, weight: str = "normal", anchor: str = "start") -> str:
    return (f'<text x="{x}" y="{y}" font-size="{size}" font-weight="{weight}" '
            f'text-anchor="{anchor}">{escape(text)}</text>')


def _card(x: float, y: float, label: str, fill: str, tip: str, dashed: bool = False, dark: bool = False,
          width: int = CARD_W, ident: str | None = None) -> str:
    """A card; `ident` is its element id, where a prompt may offer it as a place."""
    dash = ' stroke-dasharray="4 3"' if dashed else ""
    colour = "#fff" if dark else "#111"
    size = 12 if len(label) * 7 < width else 10
    gid = f' id="{escape(ident)}"' if ident else ""
    return (f'<g{gid}><title>{escape(tip)}</title><rect x="{x}" y="{y}" width="{width}" height="{CARD_H}" rx="5" '
            f'fill="{fill}" stroke="#333"{dash}/><text x="{x + width / 2}" y="{y + 22}" font-size="{size}" '
            f'text-anchor="middle" fill="{colour}">{escape(label)}</text></g>')


def _display(view: dict[str, Any], names: Names, y: float) -> list[str]:
    out = [_text(16, y + 22, "Offer", 14, "bold")]
    auction = view.get("auction") or {}
    slots = view.get("display") or []
    width = min(CARD_W, (W - 90 - 8) // max(1, len(slots)) - 6)
    for i, slot in enumerate(slots):
        x = 90 + i * (width + 6)
        if slot is None:
            out.append(_card(x, y, "(empty)", "#f4f1ea", "an empty place", dashed=True, width=width))
            continue
        card, pos = slot.get("card"), slot.get("pos")
        if card is None:
            out.append(_card(x, y, f"{pos}: special", "#3b3550", f"position {pos}: a face-down special card",
                             dark=True, width=width, ident=f"offer-{pos}"))
        else:
            kind = kind_of(card)
            out.append(_card(x, y, f"{pos}: {type_name(kind)}", FILL.get(kind, "#ddd"),
                             f"position {pos}: {card_name(card)}, base value {C.base.get(kind, '?')}", width=width,
                             ident=f"offer-{pos}"))
        if auction.get("pos") == pos and pos is not None:
            out.append(f'<rect x="{x - 3}" y="{y - 3}" width="{width + 6}" height="{CARD_H + 6}" rx="7" '
                       f'fill="none" stroke="#c0392b" stroke-width="2.5"/>')
    if auction.get("high") is not None:
        bidder = f" ({_seat(view, auction.get('bidder'), names)})" if auction.get("bidder") is not None else ""
        out.append(_text(W - 16, 46, f"auction: high bid {auction['high']}{bidder}", 12, anchor="end"))
    return out


def _seat(view: dict[str, Any], seat: Any, names: Names | None = None) -> str:
    names = names if names is not None else view.get("_names", ())
    return str(names[seat]) if isinstance(seat, int) and 0 <= seat < len(names) else f"seat {seat}"


def _players(view: dict[str, Any], names: Names, y: float) -> tuple[list[str], float]:
    out: list[str] = []
    for i, p in enumerate(view.get("players") or []):
        tags = []
        if view.get("marker") == i:
            tags.append("First Buyer marker")
        if view.get("afb") == i and view.get("afb") != view.get("marker"):
            tags.append("acting First Buyer")
        crowns = f"{p['crowns']} crowns" if "crowns" in p else "crowns hidden"
        specials = len(p["hand"]) if isinstance(p.get("hand"), list) else p.get("hand_size", 0)
        out.append(f'<g id="seat-{i}">' + _text(16, y + 16, _seat(view, i, names), 14, "bold") + "</g>")
        out.append(_text(16, y + 32, f"{crowns}; {specials} special{'s' if specials != 1 else ''}", 11))
        if tags:
            out.append(_text(16, y + 46, ", ".join(tags), 11))
        groups: dict[str, list[str]] = {}
        for card in p.get("items") or []:
            groups.setdefault(kind_of(card), []).append(card)
        x, top = float(LEFT), y
        for kind in sorted(groups, key=lambda k: C.type_rank.get(k, 99)):
            if x + CARD_W > W - 8:  # wrap onto another line
                x, y = float(LEFT), y + CARD_H + 6
            cards = groups[kind]
            label = f"{len(cards)} × {type_name(kind)}"
            out.append(_card(x, y + 4, label, FILL.get(kind, "#ddd"), f"{_seat(view, i, names)}: {label}",
                             ident=f"items-{i}-{kind}"))
            x += CARD_W + 6
        if not groups:
            out.append(_text(LEFT, y + 26, "no items yet", 12))
        y = max(y + CARD_H + 18, top + 56 if tags else top)
    return out, y


def _hand(view: dict[str, Any], viewer_cards: list[tuple[int, list[str]]], names: Names,
          y: float) -> tuple[list[str], float]:
    out: list[str] = []
    for seat, hand in viewer_cards:
        out.append(_text(16, y + 22, f"{_seat(view, seat, names)}'s specials", 13, "bold"))
        if not hand:
            out.append(_text(LEFT, y + 22, "none", 12))
        per_row = (W - 8 - LEFT) // (CARD_W + 6)
        for j, card in enumerate(hand):
            kind = kind_of(card)
            if j and j % per_row == 0:
                y += CARD_H + 6
            out.append(_card(LEFT + (j % per_row) * (CARD_W + 6), y + 4, C.special_names.get(kind, kind), "#ece4ff",
                             f"{card_name(card)}: {_WHEN.get(C.window_of.get(kind, ''), '')}", ident=f"hand-{card}"))
        y += CARD_H + 14
    return out, y


def _prices(view: dict[str, Any], names: Names, y: float) -> tuple[list[str], float]:
    sheets = view.get("prices") or {}
    if not sheets:
        return [], y
    out = [_text(16, y + 16, "Price sheets of the last income", 13, "bold")]
    y += 24
    for key in sorted(sheets, key=lambda k: int(k)):
        sheet = sheets[key] or {}
        ordered = sorted(sheet.items(), key=lambda kv: C.type_rank.get(kv[0], 99))
        row = ", ".join(f"{type_name(t)} {v}" for t, v in ordered)
        out.append(_text(24, y + 12, f"{_seat(view, int(key), names)}: {row or 'no items'}", 12))
        y += 18
    return out, y + 6


def _legend(y: float) -> tuple[list[str], float]:
    out = [_text(16, y + 16, "Item types (base value)", 13, "bold")]
    for i, t in enumerate(C.types):
        x, yy = 16 + (i % 4) * 245, y + 26 + (i // 4) * 24
        out.append(f'<g id="type-{t}"><rect x="{x}" y="{yy}" width="16" height="16" rx="3" fill="{FILL[t]}" '
                   f'stroke="#333"/>' + _text(x + 22, yy + 13, f"{type_name(t)} ({C.base[t]})", 12) + "</g>")
    return out, y + 26 + ((len(C.types) + 3) // 4) * 24


def picture(view: dict[str, Any], names: Names) -> str:
    head = headline(view)
    pending = view.get("pending") or {}
    waiting = ", ".join(_seat(view, s, names) for s in pending.get("seats") or [])
    body: list[str] = [_text(16, 26, f"Fantasy Business — {head}", 17, "bold")]
    if waiting and not view.get("over"):
        body.append(_text(16, 46, f"Waiting for {waiting}", 12))
    body += _display(view, names, 60)
    rows, y = _players(view, names, 116)
    body += rows
    own = [(i, p["hand"]) for i, p in enumerate(view.get("players") or []) if isinstance(p.get("hand"), list)]
    hand, y = _hand(view, own, names, y + 4)
    body += hand
    prices, y = _prices(view, names, y + 4)
    body += prices
    legend, y = _legend(y + 4)
    body += legend
    height = int(y + 16)
    desc = (f"The table of a Fantasy Business game, {head}: the offer display, each player's crowns where "
            f"visible, special-card count and items by type, the specials you may see, and the revealed price sheets.")
    return "".join([
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" viewBox="0 0 {W} {height}" '
        f'role="img" aria-labelledby="t d" font-family="DejaVu Sans, Verdana, sans-serif">',
        f'<title id="t">Fantasy Business: {escape(head)}</title><desc id="d">{escape(desc)}</desc>',
        f'<rect width="{W}" height="{height}" fill="#fbf8f1"/>',
        *body, "</svg>",
    ])
