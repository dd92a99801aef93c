"""An SVG picture of the Fantasy Business table as a view shows it.

Accessible (a `<title>`, a `<desc>`, every card a text label with a hover `<title>`),
deterministic (same view, same bytes), small (a few KB). Built from a view only, so it
shows nothing that view does not: other seats' crowns and specials appear only as
counts, face-down specials in the display as a card back.

Layout, top to bottom: the headline and whose decision is open; the offer display (the
card under auction marked) and the auction; one row per seat with its name, crowns where
visible, special-card count, the First Buyer marker, the score at the end, and its items
grouped by type (name and count, coloured by type); the specials the view shows by name;
the open trading proposals; the price sheets of the last income once revealed; a legend
of item types with base values.

Every number of the layout is data (`engine/data/fantasy/picture.json`, engine.fantasy.look):
the picture is drawn to read in a column 780 CSS px wide (no text under 11 px there) and
each text is measured before it is placed, so a long name is cut with an ellipsis (the
whole name in a `<title>`) or wrapped, never run into its neighbour.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from engine.fantasy.components import components, kind_of
from engine.fantasy.describe import card_name, side_words, type_name
from engine.fantasy.look import Look, look
from engine.fantasy.summary import headline

Names = Sequence[str]
Point = tuple[float, float]
C = components()
#: When each special card is played, in words.
_WHEN = {"open": "played as the offer begins", "close": "played as the offer ends",
         "spy": "played once the price sheets are in", "reveal": "played before the price sheets are revealed",
         "instant": "played at any time"}


class Sheet:
    """The SVG being drawn, with the layout file's numbers and measures."""

    def __init__(self, lk: Look) -> None:
        self.lk = lk
        self.out: list[str] = []
        self.fill = {t: lk.palette[i % len(lk.palette)] for i, t in enumerate(C.types)}
        w, m = lk.width, lk.margin
        self.inner = w - 2 * m
        self.items_x = m + lk.name_column + lk.items_gap
        self.items_w = w - m - self.items_x
        pad = 2 * lk.card_padding
        most = max(t.count for t in C.item_types)
        self.item_w = min(self.items_w, pad + max(lk.measure(f"{most} × {t.name}", "card") for t in C.item_types))
        self.special_w = min(self.items_w, pad + max(lk.measure(s.name, "card") for s in C.specials))

    # -- texts --------------------------------------------------------------------------
    def text(self, x: float, y: float, text: str, role: str, bold: bool = False, anchor: str = "start",
             fill: str | None = None) -> str:
        weight = ' font-weight="bold"' if bold else ""
        colour = f' fill="{fill}"' if fill else ""
        return (f'<text x="{x:g}" y="{y:g}" font-size="{self.lk.sizes[role]}"{weight}{colour} '
                f'text-anchor="{anchor}">{escape(text)}</text>')

    def block(self, x: float, top: float, lines: list[str], role: str, bold: bool = False,
              full: str | None = None) -> float:
        """Lines of text from `top` down; returns the y under them. When the lines cut
        `full` short, the whole text is their `<title>`."""
        step = self.lk.line(role)
        texts = "".join(self.text(x, round(top + self.lk.sizes[role] + i * step, 1), line, role, bold)
                        for i, line in enumerate(lines))
        cut = full is not None and "".join(lines).replace(" ", "") != full.replace(" ", "")
        self.out.append(f"<g><title>{escape(full or '')}</title>{texts}</g>" if cut else texts)
        return top + len(lines) * step

    def para(self, x: float, top: float, text: str, role: str, width: float, lines: int = 99,
             bold: bool = False, full: str | None = None) -> float:
        """`text` wrapped to `width` (at most `lines` lines, cut with an ellipsis); the whole
        text (or `full`, where `text` names seats by shortened names) is then a `<title>`."""
        full = full if full is not None and full != text else None
        wrapped = self.lk.wrap(text, role, width, lines, bold)
        return self.block(x, top, wrapped, role, bold, full=full or text)

    # -- cards --------------------------------------------------------------------------
    def card(self, x: float, y: float, width: float, label: str, fill: str, tip: str, dashed: bool = False,
             dark: bool = False, ident: str | None = None) -> None:
        """A card; `ident` is its element id, where a prompt may offer it as a place."""
        lk = self.lk
        dash = f' stroke-dasharray="{lk.card_dash}"' if dashed else ""
        colour = lk.colours["ink_on_dark" if dark else "ink"]
        gid = f' id="{escape(ident)}"' if ident else ""
        shown = lk.fit(label, "card", width - 2 * lk.card_padding)
        base = round(y + lk.card_height / 2 + lk.sizes["card"] * lk.middle_to_baseline, 1)
        self.out.append(
            f'<g{gid}><title>{escape(tip)}</title><rect x="{x:g}" y="{y:g}" width="{width:g}" '
            f'height="{lk.card_height}" rx="{lk.card_radius}" fill="{fill}" stroke="{lk.colours["line"]}"{dash}/>'
            + self.text(round(x + width / 2, 1), base, shown, "card", anchor="middle", fill=colour) + "</g>")

    def cards(self, x: float, y: float, width: float, card_w: float, count: int) -> tuple[float, list[Point]]:
        """The width and places of `count` cards at least `card_w` wide in rows from (x, y)
        `width` wide (as many a row as fit, stretched to fill it)."""
        gap = self.lk.gap
        per_row = max(1, int((width + gap) // (card_w + gap)))
        card_w = max(card_w, round((width + gap) / per_row - gap, 1))
        return card_w, [(round(x + (i % per_row) * (card_w + gap), 1), y + (i // per_row) * (self.lk.card_height + gap))
                        for i in range(count)]

    def heading(self, top: float, text: str) -> float:
        return self.para(self.lk.margin, top, text, "heading", self.inner, self.lk.max_lines["heading"], bold=True)

    def rule(self, y: float) -> None:
        lk = self.lk
        self.out.append(f'<line x1="{lk.margin}" y1="{y:g}" x2="{lk.width - lk.margin}" y2="{y:g}" '
                        f'stroke="{lk.colours["rule"]}"/>')


def _seat(seat: Any, names: Names, short: bool = False) -> str:
    """A seat's name (`short`: cut to the name column, for a name inside a sentence)."""
    name = str(names[seat]) if isinstance(seat, int) and 0 <= seat < len(names) else f"seat {seat}"
    return look().fit(name, "text", look().name_column) if short else name


def _display(sh: Sheet, view: dict[str, Any], names: Names, top: float) -> float:
    lk = sh.lk
    deck = f" (deck: {view['deck_size']} card{'s' if view['deck_size'] != 1 else ''})" if "deck_size" in view else ""
    y = sh.heading(top, f"Offer{deck}") + lk.gap
    slots = view.get("display") or []
    auction = view.get("auction") or {}
    if not any(slots):
        y = sh.para(lk.margin, y, "no cards on display", "text", sh.inner) + lk.gap
    else:
        last = max([len(slots), *(s.get("pos") or 0 for s in slots if s)])
        labels = [*(t.name for t in C.item_types), "special", "(empty)"]
        width = min(sh.inner, 2 * lk.card_padding + max(lk.measure(f"{last}: {x}", "card") for x in labels))
        width, places = sh.cards(lk.margin, y, sh.inner, width, len(slots))
        for (x, yy), slot in zip(places, slots, strict=True):
            if slot is None:
                sh.card(x, yy, width, "(empty)", lk.colours["empty"], "an empty place", dashed=True)
                continue
            card, pos = slot.get("card"), slot.get("pos")
            if card is None:
                sh.card(x, yy, width, f"{pos}: special", lk.colours["facedown"],
                        f"position {pos}: a face-down special card", dark=True, ident=f"offer-{pos}")
            else:
                kind = kind_of(card)
                sh.card(x, yy, width, f"{pos}: {type_name(kind)}", sh.fill.get(kind, lk.colours["unknown"]),
                        f"position {pos}: {card_name(card)}, base value {C.base.get(kind, '?')}",
                        ident=f"offer-{pos}")
            if auction.get("pos") == pos and pos is not None:
                out = lk.highlight_outset
                sh.out.append(f'<rect x="{x - out:g}" y="{yy - out:g}" width="{width + 2 * out:g}" '
                              f'height="{lk.card_height + 2 * out:g}" rx="{lk.card_radius + out:g}" fill="none" '
                              f'stroke="{lk.colours["auction"]}" stroke-width="{lk.highlight_width:g}"/>')
        y = places[-1][1] + lk.card_height + lk.gap
    words = _auction_words(auction, names, True)
    if words:
        y = sh.para(lk.margin, y, words, "text", sh.inner, lk.max_lines["auction"],
                    full=_auction_words(auction, names, False))
    return y


def _auction_words(auction: dict[str, Any], names: Names, short: bool) -> str:
    if auction.get("stage") not in ("open", "bid") or (auction.get("card") is None and auction.get("pos") is None):
        return ""
    card = "the face-down special" if auction.get("card") is None else card_name(auction["card"])
    what = f"Antitrust auction of {card}" if auction.get("mode") == "antitrust" else \
        f"Up for auction: {card} at position {auction.get('pos')}"
    if auction.get("stage") == "bid" and auction.get("high") is not None:
        return f"{what}; high bid {auction['high']} by {_seat(auction.get('bidder'), names, short)}."
    return f"{what}; the opening bid is at least {auction.get('min')}."


def _name(sh: Sheet, x: float, top: float, name: str, ident: str | None = None, height: float = 0) -> float:
    """A seat's name in the name column (cut to fit, the whole name its `<title>`); with
    `ident`, a place covering the column `height` high."""
    lk = sh.lk
    shown = lk.fit(name, "name", lk.name_column, bold=True)
    text = sh.text(x, round(top + lk.sizes["name"], 1), shown, "name", bold=True)
    if ident is None:
        sh.out.append(f"<g><title>{escape(name)}</title>{text}</g>" if shown != name else text)
    else:
        pad = lk.place_margin
        area = (f'<rect x="{x - pad:g}" y="{top - pad:g}" width="{lk.name_column + 2 * pad}" '
                f'height="{height + 2 * pad:g}" fill="none"/>')
        sh.out.append(f'<g id="{escape(ident)}"><title>{escape(name)}</title>{area}{text}</g>')
    return top + lk.line("name")


def _players(sh: Sheet, view: dict[str, Any], names: Names, top: float) -> float:
    lk = sh.lk
    y = top
    scores = view.get("scores") or {}
    for i, p in enumerate(view.get("players") or []):
        notes = []
        specials = len(p["hand"]) if isinstance(p.get("hand"), list) else p.get("hand_size", 0)
        crowns = f"{p['crowns']} crown{'s' if p['crowns'] != 1 else ''}" if "crowns" in p else "crowns hidden"
        notes.append(f"{crowns}; {specials} special{'s' if specials != 1 else ''}")
        if view.get("marker") == i:
            notes.append("First Buyer marker")
        if view.get("afb") == i and view.get("afb") != view.get("marker"):
            notes.append("acting First Buyer")
        if str(i) in scores:
            notes.append(f"final score {scores[str(i)]}")
        lines = [ln for note in notes for ln in lk.wrap(note, "note", lk.name_column, 3)]
        left = lk.line("name") + len(lines) * lk.line("note")
        groups: dict[str, list[str]] = {}
        for card in p.get("items") or []:
            groups.setdefault(kind_of(card), []).append(card)
        kinds = sorted(groups, key=lambda k: C.type_rank.get(k, 99))
        card_w, places = sh.cards(sh.items_x, y, sh.items_w, sh.item_w, len(kinds))
        right = (places[-1][1] + lk.card_height - y) if places else lk.line("text")
        height = max(left, right)
        name = _seat(i, names)
        sh.block(lk.margin, _name(sh, lk.margin, y, name, f"seat-{i}", left), lines, "note")
        for (x, yy), kind in zip(places, kinds, strict=True):
            label = f"{len(groups[kind])} × {type_name(kind)}"
            sh.card(x, yy, card_w, label, sh.fill.get(kind, lk.colours["unknown"]), f"{name}: {label}",
                    ident=f"items-{i}-{kind}")
        if not kinds:
            sh.para(sh.items_x, y + lk.gap, "no items yet", "text", sh.items_w)
        y += height + lk.row_gap
        sh.rule(y - lk.row_gap / 2)
    return y


def _hands(sh: Sheet, view: dict[str, Any], names: Names, top: float) -> float:
    lk = sh.lk
    y = top
    for seat, p in enumerate(view.get("players") or []):
        hand = p.get("hand")
        if not isinstance(hand, list):
            continue
        card_w, places = sh.cards(sh.items_x, y, sh.items_w, sh.special_w, len(hand))
        sh.block(lk.margin, _name(sh, lk.margin, y, _seat(seat, names)), ["specials in hand"], "note")
        left = lk.line("name") + lk.line("note")
        for (x, yy), card in zip(places, hand, strict=True):
            kind = kind_of(card)
            sh.card(x, yy, card_w, C.special_names.get(kind, kind), lk.colours["special"],
                    f"{card_name(card)}: {_WHEN.get(C.window_of.get(kind, ''), '')}", ident=f"hand-{card}")
        if not hand:
            sh.para(sh.items_x, y + lk.gap, "none", "text", sh.items_w)
        right = (places[-1][1] + lk.card_height - y) if places else lk.line("text")
        y += max(left, right) + lk.row_gap
    return y + lk.section_gap - lk.row_gap if y > top else top


def _proposals(sh: Sheet, view: dict[str, Any], names: Names, top: float) -> float:
    props = view.get("proposals") or []
    if not props:
        return top
    lk = sh.lk
    y = sh.heading(top, "Open trading proposals")
    for p in props:
        def words(short: bool, p: dict[str, Any] = p) -> str:
            frm, to = _seat(p.get("from"), names, short), _seat(p.get("to"), names, short)
            return (f"{frm} offers {to}: {frm} gives {side_words(p.get('give') or {})}; "
                    f"{to} gives {side_words(p.get('get') or {})}.")
        y = sh.para(lk.margin, y, words(True), "text", sh.inner, lk.max_lines["proposal"], full=words(False)) + lk.gap
    return y + lk.section_gap


def _prices(sh: Sheet, view: dict[str, Any], names: Names, top: float) -> float:
    """The sealed price sheets the view shows (a seat's own, every one to a Spy), then the
    revealed sheets of the last income."""
    sealed = {str(i): p["sheet"] for i, p in enumerate(view.get("players") or []) if isinstance(p.get("sheet"), dict)}
    if sealed:
        top = _sheets(sh, "Sealed price sheets you may see", sealed, names, top)
    return _sheets(sh, "Price sheets of the last income", view.get("prices") or {}, names, top)


def _sheets(sh: Sheet, title: str, sheets: dict[str, Any], names: Names, top: float) -> float:
    if not sheets:
        return top
    lk = sh.lk
    y = sh.heading(top, title) + lk.gap
    for key in sorted(sheets, key=int):
        ordered = sorted((sheets[key] or {}).items(), key=lambda kv: C.type_rank.get(kv[0], 99))
        row = ", ".join(f"{type_name(t)} {v}" for t, v in ordered) or "no items"
        name = _seat(int(key), names)
        shown = lk.fit(name, "text", lk.name_column)
        text = sh.text(lk.margin, round(y + lk.sizes["text"], 1), shown, "text")
        sh.out.append(f"<g><title>{escape(name)}</title>{text}</g>" if shown != name else text)
        y = max(y + lk.line("text"), sh.para(sh.items_x, y, row, "text", sh.items_w)) + lk.gap
    return y + lk.section_gap


def _legend(sh: Sheet, top: float) -> float:
    lk = sh.lk
    y = sh.heading(top, "Item types (base value)") + lk.gap
    labels = [f"{t.name} ({t.base})" for t in C.item_types]
    col = lk.swatch + lk.gap + max(lk.measure(x, "text") for x in labels) + 2 * lk.items_gap
    per_row = max(1, min(len(labels), int((sh.inner + 2 * lk.items_gap) // col)))
    col = (sh.inner + 2 * lk.items_gap) / per_row
    row_h = max(lk.swatch, lk.line("text")) + lk.gap
    for i, (t, label) in enumerate(zip(C.item_types, labels, strict=True)):
        x, yy = round(lk.margin + (i % per_row) * col, 1), y + (i // per_row) * row_h
        shown = lk.fit(label, "text", col - lk.swatch - lk.gap - 2 * lk.items_gap)
        base = round(yy + lk.swatch / 2 + lk.sizes["text"] * lk.middle_to_baseline, 1)
        sh.out.append(
            f'<g id="type-{t.id}"><title>{escape(t.name)}: base value {t.base}</title>'
            f'<rect x="{x:g}" y="{yy:g}" width="{lk.swatch}" height="{lk.swatch}" rx="{lk.swatch_radius}" '
            f'fill="{sh.fill[t.id]}" stroke="{lk.colours["line"]}"/>'
            + sh.text(x + lk.swatch + lk.gap, base, shown, "text") + "</g>")
    return y + ((len(labels) + per_row - 1) // per_row) * row_h


def picture(view: dict[str, Any], names: Names) -> str:
    lk = look()
    sh = Sheet(lk)
    head = headline(view)
    pending = view.get("pending") or {}
    y = sh.para(lk.margin, lk.margin, f"Fantasy Business — {head}", "title", sh.inner, lk.max_lines["headline"],
                bold=True)
    waiting = [s for s in pending.get("seats") or [] if not view.get("over")]
    if waiting:
        short, full = (", ".join(_seat(s, names, cut) for s in waiting) for cut in (True, False))
        lead = "Waiting for" if len(waiting) == 1 else "Asked of"  # a sealed step: answers are not shown
        y = sh.para(lk.margin, y, f"{lead} {short}", "text", sh.inner, lk.max_lines["waiting"],
                    full=f"{lead} {full}")
    y = _display(sh, view, names, y + lk.section_gap) + lk.section_gap
    sh.rule(y - lk.row_gap / 2)
    y = _players(sh, view, names, y) + lk.section_gap
    y = _hands(sh, view, names, y)
    y = _proposals(sh, view, names, y)
    y = _prices(sh, view, names, y)
    y = _legend(sh, y)
    height = int(y + lk.margin)
    w = lk.width
    desc = (f"The table of a Fantasy Business game, {head}: the offer display, each player's crowns where "
            f"visible, special-card count and items by type, the specials you may see, the open trading "
            f"proposals and the revealed price sheets.")
    return "".join([
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{height}" viewBox="0 0 {w} {height}" '
        f'role="img" aria-labelledby="pic-title pic-desc" font-family="{lk.family}">',
        f'<title id="pic-title">Fantasy Business: {escape(head)}</title><desc id="pic-desc">{escape(desc)}</desc>',
        f'<rect width="{w}" height="{height}" fill="{lk.colours["background"]}"/>',
        *sh.out, "</svg>",
    ])
