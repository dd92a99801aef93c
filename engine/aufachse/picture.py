"""An SVG picture of the table, built from a view only: the headline, the board (cities
with their names, road spaces with the event spaces marked, the markers and the trucks),
a legend, and below it the players, the viewer's hand and the public orders.
Accessible (title, desc, text labels), deterministic, and laid out to read on a screen
and a phone: every size and place comes from `engine.aufachse.layout` (its data files),
whose estimates keep every two texts apart."""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import escape
from typing import Any

from engine.aufachse.context import ctx_of
from engine.aufachse.describe import order_words
from engine.aufachse.layout import (
    BoardLayout,
    Box,
    Style,
    board_layout,
    place_tokens,
    style,
    token_box,
    token_offsets,
    token_width,
    wrap,
)
from engine.aufachse.summary import headline

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def place_id(space: str) -> str:
    """The id of a space's element in the picture ("space-Hamburg", "space-R3.1"): what a
    prompt's option names as its `place`, so a page can make the space clickable."""
    return "space-" + _UNSAFE.sub(lambda m: f"_{ord(m.group()):x}_", space)


def _f(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


class _Canvas:
    """The SVG's elements so far, and text drawing with the style's font."""

    def __init__(self, st: Style) -> None:
        self.st = st
        self.out: list[str] = []

    def text(self, x: float, y: float, words: str, size: str = "text", bold: bool = False, anchor: str = "start",
             fill: str = "", halo: bool = False, extra: str = "") -> None:
        st = self.st
        attrs = f'x="{_f(x)}" y="{_f(y)}" font-size="{_f(st.sizes[size])}"'
        if bold:
            attrs += ' font-weight="bold"'
        if anchor != "start":
            attrs += f' text-anchor="{anchor}"'
        if fill:
            attrs += f' fill="{fill}"'
        if halo:
            attrs += (f' stroke="{st.colours["background"]}" stroke-width="{_f(st.halo)}" paint-order="stroke"'
                      ' stroke-linejoin="round"')
        self.out.append(f"<text {attrs}{extra}>{escape(words)}</text>")

    def lines(self, x: float, top: float, words: str, width: float, size: str = "text", bold: bool = False) -> float:
        """`words` wrapped to `width`, the first line's box from `top` down; where the next
        line's box may begin (below the last one and the leading)."""
        st = self.st
        px = st.sizes[size]
        for line in wrap(words, width, px, bold):
            self.text(x, top + st.font.ascent * px, line, size, bold)
            top += st.font.height(px) + st.leading
        return top


def picture(view: dict[str, Any], names: Sequence[str]) -> str:
    ctx = ctx_of(view)
    st = style()
    lay = board_layout(ctx)
    cv = _Canvas(st)
    m, width = st.margin, st.width
    top = cv.lines(m, m, _headline_line(view, names), width - 2 * m, "headline", bold=True)
    shift = max(0.0, top + st.part_space - lay.box[1])
    cv.out.append(f'<g transform="translate(0 {_f(shift)})">' if shift else "<g>")
    _board(cv, view, names, lay)
    cv.out.append("</g>")
    top = _legend(cv, view, ctx, lay.box[3] + shift + st.part_space)
    top = _players(cv, view, names, ctx, top + st.part_space)
    top = _orders(cv, view, names, ctx, top + st.part_space)
    height = round(top - st.leading + m)
    head = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_f(width)}" height="{height}" '
            f'viewBox="0 0 {_f(width)} {height}" role="img" aria-labelledby="pic-title pic-desc" '
            f'font-family="{escape(st.font.family)}" fill="{st.colours["text"]}">',
            f"<title id=\"pic-title\">Auf Achse — {escape(headline(view))}</title>",
            f"<desc id=\"pic-desc\">{escape(_desc(view, names))}</desc>",
            f'<rect width="{_f(width)}" height="{height}" fill="{st.colours["background"]}"/>']
    return "".join(head + cv.out + ["</svg>"])


_ASKED = {
    "bid": "auction: {} to bid",
    "load_won": "{} to load the order won",
    "event_space": "{} to place the marker",
    "shortcut": "{} to choose a shortcut",
}


def _headline_line(view: dict[str, Any], names: Sequence[str]) -> str:
    text = f"Auf Achse — {headline(view)}"
    turn = view.get("turn")
    seats = len(view.get("players", []))
    pend = view.get("pending") or {}
    asked = pend.get("seat")
    if view.get("over"):
        pass
    elif view.get("phase") == "place" and isinstance(asked, int) and 0 <= asked < seats:
        text += f": {_n(names, asked)}'s turn"
    elif isinstance(turn, int) and 0 <= turn < seats:
        text += f": {_n(names, turn)}'s turn"
        if isinstance(asked, int) and 0 <= asked < seats and (asked != turn or pend.get("kind") == "bid"):
            text += "; " + _ASKED.get(str(pend.get("kind")), "{} is asked").format(_n(names, asked))
    dice = view.get("dice")
    if dice and not view.get("over"):
        text += f"; dice {dice[0]} and {dice[1]}"
    return text


def _board(cv: _Canvas, view: dict[str, Any], names: Sequence[str], lay: BoardLayout) -> None:
    st, col = cv.st, cv.st.colours
    ctx = ctx_of(view)
    board = ctx.board
    where = lay.where
    out = cv.out
    for _eid, a, b, kind, _p, _ev in board.edges:
        (ax, ay), (bx, by) = where[a], where[b]
        dash = ' stroke-dasharray="6 4"' if kind == "ferry" else ""
        out.append(f'<line x1="{_f(ax)}" y1="{_f(ay)}" x2="{_f(bx)}" y2="{_f(by)}" stroke="{col["road"]}"'
                   f' stroke-width="{_f(st.stroke)}"{dash}/>')
    marks: list[Box] = [lay.squares[c] for c in board.cities]
    for kind, sp in (("roadworks", view.get("roadworks")), ("jam", (view.get("jam") or {}).get("at"))):
        if isinstance(sp, str) and sp in where:
            out.append(_marker(st, kind, where[sp], board.name(sp)))
            x, y = where[sp]
            marks.append((x - st.marker, y - st.marker, x + st.marker, y + st.marker))
    r = st.space
    for sid in board.roads:
        x, y = where[sid]
        event = sid in board.events
        out.append(f'<circle id="{place_id(sid)}" cx="{_f(x)}" cy="{_f(y)}" r="{_f(r)}" '
                   f'fill="{col["event"] if event else col["space"]}" stroke="{col["edge"]}">'
                   f"<title>{escape(board.name(sid))}{' (event space)' if event else ''}</title></circle>")
        marks.append((x - r, y - r, x + r, y + r))
    h = st.city
    for c in board.cities:
        x, y = where[c]
        lx, ly, anchor = lay.labels[c]
        name = board.city_names[c]
        out.append(f'<g id="{place_id(c)}"><title>{escape(name)}</title>'
                   f'<rect x="{_f(x - h)}" y="{_f(y - h)}" width="{_f(2 * h)}" height="{_f(2 * h)}" '
                   f'fill="{col["city"]}"/>')
        cv.text(lx, ly, name, "label", anchor=anchor, halo=True)
        out.append("</g>")
    _trucks(cv, view, names, lay, marks)


def _marker(st: Style, kind: str, at: tuple[float, float], where: str) -> str:
    words = "Roadworks" if kind == "roadworks" else "Traffic jam"
    return f"<g><title>{words} on {escape(where)}</title>{_marker_shape(st, kind, at)}</g>"


def _marker_shape(st: Style, kind: str, at: tuple[float, float]) -> str:
    """The roadworks (a triangle) or the traffic jam (a diamond) around point `at`."""
    x, y = at
    s = st.marker
    if kind == "roadworks":
        return (f'<polygon points="{_f(x)},{_f(y - s * 1.2)} {_f(x + s)},{_f(y + s * 0.7)} '
                f'{_f(x - s)},{_f(y + s * 0.7)}" '
                f'fill="{st.colours["roadworks"]}" stroke="{st.colours["edge"]}"/>')
    return (f'<rect x="{_f(x - s * 0.8)}" y="{_f(y - s * 0.8)}" width="{_f(s * 1.6)}" height="{_f(s * 1.6)}" '
            f'transform="rotate(45 {_f(x)} {_f(y)})" fill="{st.colours["jam"]}" stroke="{st.colours["edge"]}"/>')


def _trucks(cv: _Canvas, view: dict[str, Any], names: Sequence[str], lay: BoardLayout, marks: list[Box]) -> None:
    """Each truck as a disc (a pill when its letters need one) of its seat's colour with
    its driver's initials (`initials`), the trucks of a space together beside it
    (`place_tokens`), with a line to the space when far."""
    st = cv.st
    ctx = ctx_of(view)
    players = view.get("players", [])
    short = initials([_n(names, seat) for seat in range(len(players))])
    width = token_width(short)
    at: dict[str, list[int]] = {}
    for seat, p in enumerate(players):
        if isinstance(p.get("at"), str) and p["at"] in lay.where:
            at.setdefault(p["at"], []).append(seat)
    spaces = sorted(at, key=ctx.board.rank.__getitem__)
    groups = [(lay.where[sp], len(at[sp])) for sp in spaces]
    centres = place_tokens(groups, list(lay.label_boxes.values()), lay.box, marks, width)
    for sp, (cx, cy) in zip(spaces, centres, strict=True):
        px, py = lay.where[sp]
        if ((cx - px) ** 2 + (cy - py) ** 2) ** 0.5 > st.leader:
            cv.out.append(f'<line x1="{_f(px)}" y1="{_f(py)}" x2="{_f(cx)}" y2="{_f(cy)}" '
                          f'stroke="{st.colours["leader"]}" stroke-width="{_f(st.stroke)}"/>')
        for seat, (dx, dy) in zip(at[sp], token_offsets(len(at[sp]), width), strict=True):
            x, y = cx + dx, cy + dy
            cv.out.append(f"<g><title>{escape(_n(names, seat))}'s truck at {escape(ctx.board.name(sp))}</title>"
                          + _token(st, (x, y), width, seat))
            base = y + (st.font.ascent - st.font.descent) * st.sizes["token"] / 2
            cv.text(x, base, short[seat], "token", bold=True, anchor="middle", fill=st.seat_text[seat % len(st.seats)])
            cv.out.append("</g>")


def _token(st: Style, at: tuple[float, float], width: float, seat: int) -> str:
    x0, y0, x1, y1 = token_box(at[0], at[1], width)
    return (f'<rect x="{_f(x0)}" y="{_f(y0)}" width="{_f(x1 - x0)}" height="{_f(y1 - y0)}" rx="{_f(st.token_r)}" '
            f'fill="{st.seats[seat % len(st.seats)]}" stroke="{st.colours["text"]}"/>')


def initials(names: Sequence[str]) -> list[str]:
    """What each player's truck shows: the first letter of the name, or as many of its
    first letters (up to 3) as tell it from the others' ("Gr", "Gu"); the seat's number
    after the first letter when even those are the same."""
    def head(name: str, k: int) -> str:
        return "".join(ch for ch in name if ch.isalnum())[:k] or "?"

    out = []
    for i, name in enumerate(names):
        for k in (1, 2, 3):
            mine = head(name, k).casefold()
            if all(head(o, k).casefold() != mine for j, o in enumerate(names) if j != i):
                out.append(head(name, k))
                break
        else:
            out.append(f"{head(name, 1)}{i + 1}")
    return out


def _legend(cv: _Canvas, view: dict[str, Any], ctx: Any, top: float) -> float:
    """The symbols in words, one after another (on as many lines as they need), then
    where the markers stand; where the next part may begin."""
    st, col = cv.st, cv.st.colours
    size = st.sizes["text"]
    m, right = st.margin, st.width - st.margin
    s, r = st.marker, st.space
    row = max(st.font.height(size), 2 * st.token_r, 2 * s) + st.leading
    items = [
        ("city", "city", 2 * st.city), ("road space", "space", 2 * r), ("event space", "event", 2 * r),
        ("ferry", "ferry", st.legend[2]), ("roadworks", "roadworks", 2 * s), ("traffic jam", "jam", 2 * s),
        ("truck (its driver's initials)", "truck", 2 * st.token_r),
    ]
    x = m
    for words, shape, w in items:
        need = w + st.legend[0] + st.font.width(words, size)
        if x > m and x + need > right:
            top += row
            x = m
        mid = top + row / 2
        if shape == "city":
            cv.out.append(f'<rect x="{_f(x)}" y="{_f(mid - st.city)}" width="{_f(2 * st.city)}" '
                          f'height="{_f(2 * st.city)}" fill="{col["city"]}"/>')
        elif shape in ("space", "event"):
            cv.out.append(f'<circle cx="{_f(x + r)}" cy="{_f(mid)}" r="{_f(r)}" fill="{col[shape]}" '
                          f'stroke="{col["edge"]}"/>')
        elif shape == "ferry":
            cv.out.append(f'<line x1="{_f(x)}" y1="{_f(mid)}" x2="{_f(x + w)}" y2="{_f(mid)}" stroke="{col["road"]}" '
                          f'stroke-width="{_f(st.stroke)}" stroke-dasharray="6 4"/>')
        elif shape == "truck":
            cv.out.append(_token(st, (x + w / 2, mid), w, 0))
        else:
            cv.out.append(_marker_shape(st, shape, (x + s, mid)))
        cv.text(x + w + st.legend[0], mid + (st.font.ascent - st.font.descent) * size / 2, words)
        x += need + st.legend[1]
    top += row
    rw = view.get("roadworks")
    jam = (view.get("jam") or {}).get("at")
    markers = [f"Roadworks on {ctx.board.name(rw)}." if isinstance(rw, str) and ctx.board.is_space(rw)
               else "The roadworks are off the board.",
               f"Traffic jam on {ctx.board.name(jam)}." if isinstance(jam, str) and ctx.board.is_space(jam)
               else "No traffic jam on the board."]
    return cv.lines(m, top, " ".join(markers), st.width - 2 * m)


def _columns(st: Style) -> tuple[float, list[float]]:
    w = (st.width - 2 * st.margin - (st.columns - 1) * st.gutter) / st.columns
    return w, [st.margin + i * (w + st.gutter) for i in range(st.columns)]


def _players(cv: _Canvas, view: dict[str, Any], names: Sequence[str], ctx: Any, y: float) -> float:
    """Each player in a block (`columns` blocks a row): money, where the truck is,
    trailers, cards in hand, the loaded orders and the won ones still to load."""
    st = cv.st
    w, xs = _columns(st)
    players = view.get("players", [])
    space_name = ctx.board.name
    top = y
    for row in range(0, len(players), st.columns):
        ends = []
        for i, seat in enumerate(range(row, min(row + st.columns, len(players)))):
            p = players[seat]
            x = xs[i]
            sw = st.swatch
            mid = top + st.font.height(st.sizes["heading"]) / 2
            cv.out.append(f'<rect x="{_f(x)}" y="{_f(mid - sw / 2)}" width="{_f(sw)}" height="{_f(sw)}" '
                          f'fill="{st.seats[seat % len(st.seats)]}" stroke="{st.colours["text"]}"/>')
            debts = sum(d.get("amount", 0) for d in p.get("debts") or [] if isinstance(d, dict))
            head = f"{_n(names, seat)}: {p.get('cash', 0):,} cash" + (f", {debts:,} in debts" if debts else "")
            yy = cv.lines(x + st.indent, top, head, w - st.indent, "heading", bold=True)
            trailers = p.get("trailers") or {}
            trailer_text = " and ".join(f"{n} {k} trailer{'s' if n != 1 else ''}"
                                        for k, n in sorted(trailers.items()) if n) or "no trailer"
            hand = p.get("hand_size", 0)
            at = p.get("at")
            where = ("truck not placed yet" if not isinstance(at, str) or not ctx.board.is_space(at)
                     else f"truck in {space_name(at)}" if ctx.board.is_city(at) else f"truck on {space_name(at)}")
            lines = [where, f"{trailer_text}; {hand or 'no'} order{'s' if hand != 1 else ''} in hand"]
            if p.get("skips"):
                lines.append("misses a turn")
            lines += [f"loaded: {order_words(ctx, c, '')}" for c in p.get("loaded") or []]
            lines += [f"won, to load: {order_words(ctx, c, '')}" for c in p.get("open") or []]
            for line in lines:
                yy = cv.lines(x + st.indent, yy, line, w - st.indent)
            ends.append(yy)
        top = max(ends) + st.part_space
    return top - st.part_space


def _orders(cv: _Canvas, view: dict[str, Any], names: Sequence[str], ctx: Any, y: float) -> float:
    """The viewer's hand (a seat's view only) and the public orders, side by side."""
    st = cv.st
    w, xs = _columns(st)
    parts: list[tuple[str, list[str]]] = []
    for seat, p in enumerate(view.get("players", [])):
        if isinstance(p.get("hand"), list):
            parts.append((f"{_n(names, seat)}'s hand",
                          [order_words(ctx, c, "") for c in p["hand"]] or ["no orders in hand"]))
    auction = view.get("auction") or {}
    shown = [f"{i}. {order_words(ctx, c, '')}" + (" (up for auction)" if auction.get("card") == c else "")
             for i, c in enumerate(view.get("display", []), 1)] or ["none"]
    shown.append(f"{view.get('deck_size', 0)} left in the public deck, {view.get('event_deck_size', 0)} event cards")
    parts.append(("Public orders", shown))
    top = y
    for row in range(0, len(parts), st.columns):
        ends = []
        for i, (title, lines) in enumerate(parts[row:row + st.columns]):
            yy = cv.lines(xs[i], top, title, w, "heading", bold=True)
            for line in lines:
                yy = cv.lines(xs[i] + st.indent, yy, line, w - st.indent)
            ends.append(yy)
        top = max(ends) + st.part_space
    return top - st.part_space


def _n(names: Sequence[str], seat: int) -> str:
    return names[seat] if seat < len(names) else f"seat {seat}"


def _desc(view: dict[str, Any], names: Sequence[str]) -> str:
    ctx = ctx_of(view)
    parts = [f"{_n(names, i)}: truck {'at ' + ctx.board.name(p['at']) if p.get('at') else 'not placed'}, "
             f"cash {p['cash']}" for i, p in enumerate(view.get("players", []))]
    shown = "; ".join(order_words(ctx, c, "") for c in view.get("display", [])) or "none"
    return "; ".join(parts) + f". Public orders: {shown}."
