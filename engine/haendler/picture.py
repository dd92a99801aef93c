"""An SVG picture of the Die Händler table, built from one view only.

The map (cities, junctions, one-way roads with their spaces, carts and the messenger)
fills the left; the price table, arrival track, status track and the players' legend
the right; the carts' loads are listed below the map. Every mark has a text label or a
`<title>`, colours are never the only clue, and the same view always gives the same
bytes. Cities and junctions stand where the board file places them (`x`, `y`), or on
a computed ellipse when it does not place them all.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from engine.haendler.board import Board
from engine.haendler.context import Ctx
from engine.haendler.describe import Names, Words, join, money, ordinal, plural
from engine.haendler.status import ranking
from engine.haendler.summary import COLOURS, KIND_WORDS, board_of, headline, viewer_of

Point = tuple[float, float]
W, H = 900, 650
MAP = (66.0, 104.0, 548.0, 448.0)  # x0, y0, x1, y1 of the node centres
PANEL = 612  # left edge of the right-hand panel
FONT = "DejaVu Sans, Verdana, Arial, sans-serif"
INK, ROAD, PAPER, LAND = "#2b2620", "#9a8660", "#fffdf6", "#f3ead4"
SEAT_FILL = ("#2f6fd0", "#e3b505", "#ee7d1e", "#d0312d")  # blue, yellow, orange, red (H-1)
#: The goods' piece colours and shapes (H-3): cylinders drawn round, cubes square.
GOOD_FILL = {"tuch": "#c62828", "wein": "#7b4a24", "salz": "#ffffff", "nahrung": "#2e8b3a",
             "eisen": "#262626", "seide": "#8e3bb8"}  # fmt: skip
ROUND_GOODS = ("tuch", "wein", "salz")


def picture(view: Mapping[str, Any], names: Names) -> str:
    """The table as `view` shows it, as an SVG document (see the module doc)."""
    ctx = board_of(view)
    w = Words(names, ctx.board)
    me = viewer_of(view)
    pos = layout(ctx.board)
    title = f"Die Händler — {headline(view)}"
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" '
        f'role="img" aria-labelledby="pic-title pic-desc" font-family={quoteattr(FONT)} fill="{INK}">',
        f'<title id="pic-title">{escape(title)}</title>',
        f'<desc id="pic-desc">{escape(_desc(ctx, w, view, me))}</desc>',
        f'<rect width="{W}" height="{H}" fill="{PAPER}"/>',
        f'<rect x="8" y="52" width="{PANEL - 16}" height="{486 - 52}" rx="10" fill="{LAND}" stroke="#d8c9a3"/>',
        _text(16, 24, title, 17, bold=True),
        _text(16, 43, _waiting(w, view, me), 12),
    ]
    out += _roads(ctx.board, w, pos)
    out += _nodes(ctx, w, view, pos)
    out += _carts_on_map(w, view, pos)
    out += _messenger(w, view, pos)
    out += _key()
    out += _cart_list(w, view)
    out += _prices(ctx, w, view, PANEL, 70)
    out += _arrivals(ctx, view, PANEL, 232)
    out += _status(ctx, w, view, PANEL, 308)
    out += _legend(w, view, me, PANEL, 528)
    out.append("</svg>")
    return "\n".join(out) + "\n"


# -- element ids -----------------------------------------------------------------------------
# A choice that names a place or thing on the table (a city, a road space, a cart, a good's
# price row, a player) carries the id of its element here (`engine.core.choices.Option.place`),
# so a page can make the element clickable; each such element has a `<title>` in words.
_UNSAFE = re.compile(r"[^A-Za-z0-9]")


def _safe(text: str) -> str:
    """`text` with every character but letters and digits spelled as `_<hex>_` (so ids of
    different nodes stay different, and an id is plain in HTML and CSS)."""
    return _UNSAFE.sub(lambda m: f"_{ord(m.group()):x}_", text)


def place_id(node: str) -> str:
    """The element id of a city, junction or road space ("space-KOE-BRU-4", "place-KOE")."""
    road, sep, i = node.rpartition(":")
    if sep and ">" in road:
        a, _, b = road.partition(">")
        return f"space-{_safe(a)}-{_safe(b)}-{_safe(i)}"
    return f"place-{_safe(node)}"


def cart_id(number: int) -> str:
    """The element id of cart `number` (1, 2, 3) on the map."""
    return f"cart-{number}"


def good_id(good: str) -> str:
    """The element id of a good's row in the price table."""
    return f"good-{_safe(good)}"


def seat_id(seat: int) -> str:
    """The element id of a player's line in the legend."""
    return f"seat-{seat}"


# -- layout --------------------------------------------------------------------------------
def layout(board: Board) -> dict[str, Point]:
    """Pixel centres of the cities and junctions: the board file's positions scaled into
    the map, or (when it does not place every one) the cities on an ellipse in board
    order with the junctions on a smaller one inside."""
    ends = [*board.cities, *board.junction_names]
    given = board.positions if all(n in board.positions for n in ends) else _computed(board, ends)
    xs, ys = [given[n][0] for n in ends], [given[n][1] for n in ends]
    x0, y0, x1, y1 = MAP
    sx = (x1 - x0) / ((max(xs) - min(xs)) or 1)
    sy = (y1 - y0) / ((max(ys) - min(ys)) or 1)
    return {n: (x0 + (given[n][0] - min(xs)) * sx, y0 + (given[n][1] - min(ys)) * sy) for n in ends}


_LAYOUTS: dict[str, dict[str, Point]] = {}


def _computed(board: Board, ends: list[str]) -> dict[str, Point]:
    """A layout for a board file without positions: of the spring layouts started from
    each city or junction (see `_springs`), the one whose roads cross least. Computed
    once per process and board."""
    found = _LAYOUTS.get(board.key)
    if found is None:
        tries = [_springs(board, ends, root) for root in ends]
        found = min(tries, key=lambda pos: _crossings(board, pos))  # the first of the best
        _LAYOUTS[board.key] = found
    return found


def _crossings(board: Board, pos: Mapping[str, Point]) -> int:
    def side(p: Point, q: Point, r: Point) -> float:
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])

    roads = [(a, b) for a, b, _ in board.roads]
    n = 0
    for i, (a, b) in enumerate(roads):
        for c, d in roads[i + 1 :]:
            if len({a, b, c, d}) == 4:
                p, q, r, s = pos[a], pos[b], pos[c], pos[d]
                n += side(p, q, r) * side(p, q, s) < 0 and side(r, s, p) * side(r, s, q) < 0
    return n


def _springs(board: Board, ends: list[str], root: str) -> dict[str, Point]:
    """The cities and junctions start on a circle in the order a walk along the roads
    from `root` meets them; then a fixed number of spring steps pull the ends of each
    road to a length that grows with its spaces and push every pair apart. Pure
    arithmetic in a fixed order, so always the same result."""
    near: dict[str, list[str]] = {n: [] for n in ends}
    for a, b, _ in board.roads:
        near[a].append(b)
        near[b].append(a)
    order: list[str] = []
    todo = [root]
    while todo:
        n = todo.pop()
        if n not in order:
            order.append(n)
            todo.extend(reversed(near[n]))
    order += [n for n in ends if n not in order]
    pos = {n: [math.cos(2 * math.pi * k / len(order)), math.sin(2 * math.pi * k / len(order))]
           for k, n in enumerate(order)}  # fmt: skip
    rounds = 400
    for r in range(rounds):
        step = 0.08 * (1 - r / rounds) + 0.002
        move = {n: [0.0, 0.0] for n in order}
        for i, a in enumerate(order):
            for b in order[i + 1 :]:
                dx, dy = pos[a][0] - pos[b][0], pos[a][1] - pos[b][1]
                d2 = max(dx * dx + dy * dy, 1e-4)
                f = 0.02 / d2
                move[a][0] += dx * f
                move[a][1] += dy * f
                move[b][0] -= dx * f
                move[b][1] -= dy * f
        for a, b, k in board.roads:
            dx, dy = pos[b][0] - pos[a][0], pos[b][1] - pos[a][1]
            d = math.hypot(dx, dy) or 1e-3
            f = (d - 0.12 * (k + 1)) / d * 0.5
            move[a][0] += dx * f
            move[a][1] += dy * f
            move[b][0] -= dx * f
            move[b][1] -= dy * f
        for n in order:
            mx, my = move[n]
            m = math.hypot(mx, my)
            if m > step:
                mx, my = mx / m * step, my / m * step
            pos[n][0] += mx
            pos[n][1] += my
    return {n: (pos[n][0], pos[n][1]) for n in ends}


def _road_points(board: Board, pos: Mapping[str, Point]) -> dict[str, Point]:
    """Pixel centres of every road space, evenly along its road (shifted sideways when
    the opposite road also exists, so the two do not overlap)."""
    out: dict[str, Point] = {}
    for a, b, k in board.roads:
        (ax, ay), (bx, by) = _visible(board, pos, a, b)
        for i in range(1, k + 1):
            t = i / (k + 1)
            out[f"{a}>{b}:{i}"] = (ax + (bx - ax) * t, ay + (by - ay) * t)
    return out


def _shifted(p: Point, q: Point, shift: bool) -> tuple[Point, Point]:
    if not shift:
        return p, q
    dx, dy = q[0] - p[0], q[1] - p[1]
    n = math.hypot(dx, dy) or 1
    ox, oy = -dy / n * 7, dx / n * 7
    return (p[0] + ox, p[1] + oy), (q[0] + ox, q[1] + oy)


def _visible(board: Board, pos: Mapping[str, Point], a: str, b: str) -> tuple[Point, Point]:
    """The part of the road a→b between the city boxes or junction marks at its ends
    (where its spaces go), shifted like `_shifted`."""
    p, q = _shifted(pos[a], pos[b], any((x, y) == (b, a) for x, y, _ in board.roads))
    dx, dy = q[0] - p[0], q[1] - p[1]

    def cut(node: str) -> float:  # the fraction of the road the end's mark covers
        if board.is_city(node):
            return min(50 / abs(dx) if dx else 1.0, 26 / abs(dy) if dy else 1.0)
        return 12 / (math.hypot(dx, dy) or 1)

    s, e = min(cut(a), 0.45), 1 - min(cut(b), 0.45)
    return (p[0] + dx * s, p[1] + dy * s), (p[0] + dx * e, p[1] + dy * e)


def _where(board: Board, pos: Mapping[str, Point], node: str) -> Point:
    if node in pos:
        return pos[node]
    return _road_points(board, pos).get(node, (MAP[0], MAP[1]))


# -- drawing helpers -----------------------------------------------------------------------
def _f(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _text(x: float, y: float, s: str, size: float = 11, bold: bool = False, anchor: str = "start",
          fill: str = INK, extra: str = "") -> str:
    weight = ' font-weight="bold"' if bold else ""
    return (f'<text x="{_f(x)}" y="{_f(y)}" font-size="{_f(size)}"{weight} text-anchor="{anchor}" '
            f'fill="{fill}"{extra}>{escape(s)}</text>')  # fmt: skip


def _tip(s: str) -> str:
    return f"<title>{escape(s)}</title>"


def _seat_fill(p: int) -> str:
    return SEAT_FILL[p] if 0 <= p < len(SEAT_FILL) else "#888888"


def _good_icon(x: float, y: float, good: str, r: float = 4.5, stroke: str = INK, tip: str = "") -> str:
    fill = GOOD_FILL.get(good, "#bbbbbb")
    inner = _tip(tip) if tip else ""
    if good in ROUND_GOODS:
        return f'<circle cx="{_f(x)}" cy="{_f(y)}" r="{_f(r)}" fill="{fill}" stroke="{stroke}">{inner}</circle>'
    return (f'<rect x="{_f(x - r)}" y="{_f(y - r)}" width="{_f(2 * r)}" height="{_f(2 * r)}" fill="{fill}" '
            f'stroke="{stroke}">{inner}</rect>')  # fmt: skip


# -- the map -------------------------------------------------------------------------------
def _roads(board: Board, w: Words, pos: Mapping[str, Point]) -> list[str]:
    out = ['<g id="roads">']
    both = {(a, b) for a, b, _ in board.roads}
    spaces = _road_points(board, pos)
    for a, b, k in board.roads:
        p, q = _shifted(pos[a], pos[b], (b, a) in both)
        road = f"Road {w.node(a)} → {w.node(b)}: {plural(k, 'space')}, one way"
        out.append(f"<g>{_tip(road)}")
        out.append(f'<line x1="{_f(p[0])}" y1="{_f(p[1])}" x2="{_f(q[0])}" y2="{_f(q[1])}" '
                   f'stroke="{ROAD}" stroke-width="3"/>')  # fmt: skip
        t = (k // 2 + 0.5) / (k + 1) if k != 1 else 0.72  # in the middle gap between two spaces
        s, e = _visible(board, pos, a, b)
        out.append(_arrow(s, e, t))
        out.append("</g>")
        for i in range(1, k + 1):
            x, y = spaces[f"{a}>{b}:{i}"]
            node = f"{a}>{b}:{i}"
            out.append(f'<circle id="{place_id(node)}" cx="{_f(x)}" cy="{_f(y)}" r="4.5" fill="{PAPER}" '
                       f'stroke="{ROAD}" stroke-width="1.5">{_tip(w.place(node))}</circle>')  # fmt: skip
    out.append("</g>")
    return out


def _arrow(p: Point, q: Point, t: float) -> str:
    """A filled arrowhead on the road p→q at fraction t, pointing along the road."""
    dx, dy = q[0] - p[0], q[1] - p[1]
    n = math.hypot(dx, dy) or 1
    ux, uy = dx / n, dy / n
    cx, cy = p[0] + dx * t, p[1] + dy * t
    tip = (cx + ux * 6, cy + uy * 6)
    left = (cx - ux * 5 - uy * 5, cy - uy * 5 + ux * 5)
    right = (cx - ux * 5 + uy * 5, cy - uy * 5 - ux * 5)
    pts = " ".join(f"{_f(x)},{_f(y)}" for x, y in (tip, left, right))
    return f'<polygon points="{pts}" fill="#6b5a3a"/>'


def _nodes(ctx: Ctx, w: Words, view: Mapping[str, Any], pos: Mapping[str, Point]) -> list[str]:
    board = ctx.board
    out = ['<g id="places">']
    for j in board.junction_names:
        x, y = pos[j]
        out.append(f'<g id="{place_id(j)}">{_tip(f"{w.node(j)} (junction)")}'
                   f'<circle cx="{_f(x)}" cy="{_f(y)}" r="8" fill="#e6d7b0" stroke="{INK}" stroke-width="1.5"/>'
                   + _text(x + 11 if x < 480 else x - 11, y + 15, w.node(j), 10.5, anchor="start" if x < 480 else "end",
                           extra=' font-style="italic"') + "</g>")  # fmt: skip
    for c in board.cities:
        x, y = pos[c]
        made = [g for g in board.goods if g in board.produces[c]]
        bonus = view["bonus"].get(c, 0)
        tip = f"{w.node(c)}: produces {join(w.good(g) for g in made)}; bonus marker {money(bonus)}"
        out.append(f'<g id="{place_id(c)}">{_tip(tip)}')
        out.append(f'<rect x="{_f(x - 44)}" y="{_f(y - 20)}" width="88" height="40" rx="7" fill="#ffffff" '
                   f'stroke="{INK}" stroke-width="2"/>')  # fmt: skip
        out.append(_text(x, y - 4, w.node(c), 13, bold=True, anchor="middle"))
        for k, g in enumerate(made):
            out.append(_good_icon(x - 36 + k * 12, y + 10, g, 4.2, tip=w.good(g)))
        out.append(f'<rect x="{_f(x - 2)}" y="{_f(y + 3)}" width="44" height="14" rx="7" fill="#f2c14e" '
                   f'stroke="#8a6d1d"/>')  # fmt: skip
        out.append(_text(x + 20, y + 14, f"+{money(bonus)}", 10, bold=True, anchor="middle"))
        out.append("</g>")
    out.append("</g>")
    return out


def _carts_on_map(w: Words, view: Mapping[str, Any], pos: Mapping[str, Point]) -> list[str]:
    board = board_of(view).board
    out = ['<g id="carts">']
    blocked = {b["cart"] for b in view.get("blocks", [])}
    placed: list[Point] = []
    for i, cart in enumerate(view["carts"]):
        x, y = _where(board, pos, cart["at"])
        y -= 35 if board.is_city(cart["at"]) else 17
        for _ in range(len(placed)):  # lift a badge off an earlier one (a cart next to a city)
            if all(abs(x - px) >= 30 or abs(y - py) >= 22 for px, py in placed):
                break
            y -= 22
        placed.append((x, y))
        master = cart["master"]
        fill = _seat_fill(master) if master is not None else "#ffffff"
        dark = master is not None and master in (0, 3)
        out.append(f'<g id="{cart_id(i + 1)}">{_tip(_cart_words(w, view, i))}')
        out.append(f'<rect x="{_f(x - 13)}" y="{_f(y - 10)}" width="26" height="20" rx="4" fill="{fill}" '
                   f'stroke="{INK}" stroke-width="2"' + (' stroke-dasharray="4 2"' if cart.get("arrived") else "")
                   + "/>")  # fmt: skip
        out.append(_text(x, y + 5, str(i + 1), 13, bold=True, anchor="middle", fill="#ffffff" if dark else INK))
        gx = x + 17
        for p, row in enumerate(cart["rows"]):
            if not row:
                continue
            wide = 6 + 10 * len(row)
            out.append(f'<rect x="{_f(gx)}" y="{_f(y - 7)}" width="{wide}" height="14" rx="7" '
                       f'fill="{_seat_fill(p)}" stroke="{INK}" stroke-width="0.8"/>')  # fmt: skip
            for k, g in enumerate(row):
                out.append(_good_icon(gx + 8 + k * 10, y, g, 3.6, stroke="#ffffff" if g == "eisen" else INK))
            gx += wide + 3
        if i + 1 in blocked:
            out.append(_text(x, y - 13, "Achsbruch", 9, bold=True, anchor="middle", fill="#b00020"))
        out.append("</g>")
    out.append("</g>")
    return out


def _cart_words(w: Words, view: Mapping[str, Any], i: int) -> str:
    cart = view["carts"][i]
    loads = "; ".join(f"{w.seat(p)}: {w.goods(row)}" for p, row in enumerate(cart["rows"]) if row) or "empty"
    master = w.seat(cart["master"]) if cart["master"] is not None else "none"
    facts = [f"Cart {i + 1} at {w.place(cart['at'])}", f"master {master}", f"loads {loads}"]
    if cart.get("arrived"):
        facts.append("arrived this round")
    facts += [f"blocked by {w.seat(b['by'])}'s Achsbruch" for b in view.get("blocks", []) if b["cart"] == i + 1]
    return "; ".join(facts)


def _messenger(w: Words, view: Mapping[str, Any], pos: Mapping[str, Point]) -> list[str]:
    board = board_of(view).board
    x, y = _where(board, pos, view["messenger"])
    y += 17
    pts = " ".join(f"{_f(px)},{_f(py)}" for px, py in ((x, y - 9), (x + 9, y), (x, y + 9), (x - 9, y)))
    where = w.place(view["messenger"])
    return [f'<g id="messenger">{_tip(f"Messenger: {where}")}'
            f'<polygon points="{pts}" fill="#5b2a86" stroke="{INK}"/>'
            + _text(x, y + 4, "M", 10, bold=True, anchor="middle", fill="#ffffff")
            + _text(x + 12, y + 4, "messenger", 9, fill="#5b2a86") + "</g>"]  # fmt: skip


def _key() -> list[str]:
    """What the map's marks mean, in words."""
    y = 500
    return [
        '<g id="key">',
        f'<circle cx="20" cy="{y - 4}" r="4.5" fill="{PAPER}" stroke="{ROAD}" stroke-width="1.5"/>',
        _text(28, y, "road space", 9.5),
        _arrow((88, y - 4), (104, y - 4), 0.5), _text(106, y, "one-way direction", 9.5),
        f'<rect x="200" y="{y - 11}" width="16" height="13" rx="3" fill="#ffffff" stroke="{INK}" stroke-width="1.5"/>',
        _text(220, y, "cart (colour: loading master; dashed: arrived)", 9.5),
        f'<rect x="444" y="{y - 10}" width="24" height="11" rx="5" fill="#f2c14e" stroke="#8a6d1d"/>',
        _text(472, y, "city bonus", 9.5),
        "</g>",
    ]


def _cart_list(w: Words, view: Mapping[str, Any]) -> list[str]:
    out = ['<g id="cart-list">', _text(16, 520, "Carts and loads", 12, bold=True)]
    y = 538
    for i, cart in enumerate(view["carts"]):
        master = f"master {w.seat(cart['master'])}" if cart["master"] is not None else "no master"
        state = " (arrived)" if cart.get("arrived") else ""
        loads = "; ".join(f"{w.seat(p)}: {w.goods(row)}" for p, row in enumerate(cart["rows"]) if row) or "empty"
        out.append(f'<rect x="16" y="{y - 11}" width="18" height="15" rx="3" fill="#ffffff" stroke="{INK}"/>')
        out.append(_text(25, y, str(i + 1), 11, bold=True, anchor="middle"))
        line = f"{w.place(cart['at'])}{state} · {master} · {loads}"
        out.append(_text(40, y, _clip(line, 96), 11) if len(line) <= 96 else
                   f"<g>{_tip(line)}{_text(40, y, _clip(line, 96), 11)}</g>")  # fmt: skip
        y += 19
    out.append(_text(16, y + 2, f"Messenger: {w.place(view['messenger'])}", 11))
    deck = view.get("deck_size", sum((view.get("deck") or {}).values()))
    out.append(_text(16, y + 21, f"Influence deck: {plural(deck, 'card')} · played: {w.cards(view.get('played') or {})}"
                     f" · credits left: {view.get('credit_supply', 0)}", 11))  # fmt: skip
    out.append("</g>")
    return out


def _clip(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


# -- the right-hand panel ------------------------------------------------------------------
def _prices(ctx: Ctx, w: Words, view: Mapping[str, Any], x0: float, y0: float) -> list[str]:
    rows = ctx.board.price_rows
    label, col = 62.0, (W - 10 - x0 - 62.0) / len(rows)
    out = ['<g id="prices">', _text(x0, y0, "Prices: buy / sell by row", 12, bold=True)]
    top = y0 + 8
    for r, (buy, sell) in enumerate(rows):
        cx = x0 + label + col * r + col / 2
        out.append(_text(cx, top + 11, f"row {r + 1}", 9, anchor="middle", fill="#6b5a3a"))
        out.append(_text(cx, top + 23, f"{money(buy)} / {money(sell)}", 8, anchor="middle"))
    rh = 17.0
    y = top + 30
    for g in ctx.board.goods:
        row = int(view["prices"][g])
        buy, sell = rows[row - 1]
        out.append(f'<g id="{good_id(g)}">{_tip(f"{w.good(g)}: row {row}, buy {money(buy)}, sell {money(sell)}")}')
        out.append(_good_icon(x0 + 6, y + rh / 2, g, 4.5))
        out.append(_text(x0 + 15, y + rh / 2 + 4, w.good(g), 10))
        for r in range(len(rows)):
            cx = x0 + label + col * r
            here = r + 1 == row
            fill, edge = ("#fbe3a4", "#8a6d1d") if here else ("#f1ece0", "none")
            out.append(f'<rect x="{_f(cx + 1)}" y="{_f(y + 1)}" width="{_f(col - 2)}" height="{_f(rh - 2)}" rx="3" '
                       f'fill="{fill}" stroke="{edge}"/>')  # fmt: skip
        cx = x0 + label + col * (row - 1) + col / 2
        out.append(_good_icon(cx - 14, y + rh / 2, g, 3.8))
        out.append(_text(cx + 5, y + rh / 2 + 3.5, money(sell), 8.5, bold=True, anchor="middle"))
        out.append("</g>")
        y += rh
    out.append("</g>")
    return out


def _arrivals(ctx: Ctx, view: Mapping[str, Any], x0: float, y0: float) -> list[str]:
    prices = ctx.board.arrival_level_price
    end = ctx.comp.end_threshold.get(view["seats"], ctx.comp.arrival_cap)
    now = view["arrivals"]
    out = ['<g id="arrivals">',
           _text(x0, y0, f"Arrival track: {now}; the game ends at {end}", 12, bold=True)]
    box = (W - 10 - x0) / len(prices)
    for k, price in enumerate(prices):
        x = x0 + box * k
        here = k == now
        out.append(f"<g>{_tip(f'Arrivals {k}: a status level costs {money(price)}' + (' (now)' if here else ''))}")
        fill, edge = (INK if here else "#ffffff"), ("#b00020" if k == end else INK)
        out.append(f'<rect x="{_f(x + 1)}" y="{_f(y0 + 8)}" width="{_f(box - 2)}" height="20" rx="3" '
                   f'fill="{fill}" stroke="{edge}" stroke-width="{2 if k == end else 1}"/>')  # fmt: skip
        out.append(_text(x + box / 2, y0 + 22, str(k), 11, bold=True, anchor="middle",
                         fill="#ffffff" if here else INK))  # fmt: skip
        out.append(_text(x + box / 2, y0 + 40, money(price), 8, anchor="middle"))
        out.append("</g>")
    out.append(_text(x0, y0 + 52, "(the price of one status level at each position)", 8.5, fill="#6b5a3a"))
    out.append("</g>")
    return out


def _status(ctx: Ctx, w: Words, view: Mapping[str, Any], x0: float, y0: float) -> list[str]:
    levels = ctx.board.level_names
    out = ['<g id="status">', _text(x0, y0, "Status track (upkeep)", 12, bold=True)]
    rh = min(19.0, 190.0 / len(levels))
    for k in range(len(levels), 0, -1):
        y = y0 + 6 + (len(levels) - k) * rh
        here = [p for p, pl in enumerate(view["players"]) if pl["level"] == k]
        band = "#f1ece0" if k % 2 else "#fbf7ec"
        out.append(f'<rect x="{x0}" y="{_f(y)}" width="{W - 10 - x0}" height="{_f(rh - 1)}" fill="{band}"/>')
        out.append(_text(x0 + 4, y + rh - 5, f"{k} {levels[k - 1]}", 10))
        out.append(_text(x0 + 126, y + rh - 5, money(ctx.board.upkeep[k - 1]), 9, anchor="end", fill="#6b5a3a"))
        for n, p in enumerate(here):
            cx = x0 + 138 + n * 14
            out.append(f'<circle cx="{_f(cx)}" cy="{_f(y + rh / 2 - 0.5)}" r="6" fill="{_seat_fill(p)}" '
                       f'stroke="{INK}">{_tip(f"{w.seat(p)}: level {k}, {levels[k - 1]}")}</circle>')  # fmt: skip
        if here:
            left = x0 + 138 + len(here) * 14
            text = _clip(", ".join(w.seat(p) for p in here), int((W - 8 - left) / 6))
            out.append(_text(left, y + rh - 5, text, 10))
    out.append("</g>")
    return out


def _legend(w: Words, view: Mapping[str, Any], me: int | None, x0: float, y0: float) -> list[str]:
    out = ['<g id="players">', _text(x0, y0, "Players", 12, bold=True)]
    for p, pl in enumerate(view["players"]):
        y = y0 + 8 + p * 27
        colour = COLOURS[p] if p < len(COLOURS) else f"seat {p}"
        cash = money(pl["money"]) if "money" in pl else "hidden"
        hand = pl.get("hand_size", sum((pl.get("hand") or {}).values()))
        you = " (you)" if p == me else ""
        start = " · start" if p == view.get("start") and not view.get("over") else ""
        facts = (f"money {cash} · {plural(pl['credits'], 'credit')} · {plural(hand, 'card')} · "
                 f"tiles {''.join(map(str, pl['tiles'])) or '—'}")
        out.append(f'<g id="{seat_id(p)}">{_tip(f"{w.seat(p)}{you}, {colour}: {facts}")}')
        out.append(f'<rect x="{x0}" y="{_f(y)}" width="14" height="14" rx="2" fill="{_seat_fill(p)}" stroke="{INK}"/>')
        out.append(_text(x0 + 20, y + 11, _clip(f"{w.seat(p)}{you} — {colour}{start}", 40), 11, bold=True))
        out.append(_text(x0 + 20, y + 24, facts, 9.5))
        out.append("</g>")
    out.append("</g>")
    return out


# -- words ---------------------------------------------------------------------------------
def _waiting(w: Words, view: Mapping[str, Any], me: int | None) -> str:
    if view.get("over"):
        rows = ranking(dict(view))
        return "Game over. " + ", ".join(f"{ordinal(r['place'])} {w.seat(r['seat'])}" for r in rows)
    pending = view.get("pending")
    if pending is None:
        return ""
    who = join(w.seat(p) + (" (you)" if p == me else "") for p in pending["seats"])
    return f"Waiting for {who}: {KIND_WORDS.get(pending['kind'], pending['kind'])}"


def _desc(ctx: Ctx, w: Words, view: Mapping[str, Any], me: int | None) -> str:
    seen = f"as {w.seat(me)} sees it" if me is not None else "as the view shows it"
    carts = "; ".join(_cart_words(w, view, i) for i in range(len(view["carts"])))
    prices = ", ".join(
        f"{w.good(g)} row {view['prices'][g]}" for g in ctx.board.goods
    )
    levels = ", ".join(f"{w.seat(p)} level {pl['level']}" for p, pl in enumerate(view["players"]))
    return (f"Board of Die Händler {seen}. Cities {join(w.node(c) for c in ctx.board.cities)} on one-way roads. "
            f"{carts}. Messenger: {w.place(view['messenger'])}. Prices: {prices}. Arrival track "
            f"{view['arrivals']}. Status: {levels}.")  # fmt: skip


__all__: Sequence[str] = ("cart_id", "good_id", "layout", "picture", "place_id", "seat_id")
