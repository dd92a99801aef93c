"""An SVG picture of the Die Händler table, built from one view only.

One column that reads on a 780 px page and scales down on a phone: the title and whom
the game waits for; the map (cities, junctions, one-way roads with their spaces, carts
and the messenger) with a key to its marks; the carts' loads in words; the price table
(each row's buy and sell price on lines of their own); the arrival track; the status
track; the players, two to a row. Every size, gap and font comes from the layout file
`engine/data/haendler/picture.toml` (validated on load: no font that would read below
11 px in the page's 780 px column). Text wraps rather than being cut; carts, the
messenger and junction names are placed where they cover no other mark, so no two texts
overlap. Every mark has a text label or a `<title>`, colours are never the only clue,
and the same view always gives the same bytes. Cities and junctions stand where the
board file places them (`x`, `y`), or on a computed layout when it does not place them
all.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NoReturn
from xml.sax.saxutils import escape, quoteattr

from engine.core.errors import DataError
from engine.core.textfit import Face, Font
from engine.haendler.board import DATA, Board
from engine.haendler.context import Ctx
from engine.haendler.describe import Names, Words, join, money, ordinal, plural
from engine.haendler.status import ranking
from engine.haendler.summary import COLOURS, KIND_WORDS, board_of, headline, viewer_of

Point = tuple[float, float]
Box = tuple[float, float, float, float]  # x0, y0, x1, y1
FONT = "DejaVu Sans, Verdana, Arial, sans-serif"
INK, ROAD, PAPER, LAND, MUTED = "#2b2620", "#9a8660", "#fffdf6", "#f3ead4", "#5e5034"
SEAT_FILL = ("#2f6fd0", "#e3b505", "#ee7d1e", "#d0312d")  # blue, yellow, orange, red (H-1)
#: The goods' piece colours and shapes (H-3): cylinders drawn round, cubes square.
GOOD_FILL = {"tuch": "#c62828", "wein": "#7b4a24", "salz": "#ffffff", "nahrung": "#2e8b3a",
             "eisen": "#262626", "seide": "#8e3bb8"}  # fmt: skip
ROUND_GOODS = ("tuch", "wein", "salz")
#: Font metrics, in font sizes (DejaVu Sans: ascent 0.93, descent 0.24): how far the
#: glyphs of a line reach above its baseline, and how tall the line's box is.
ASCENT, BOX = 0.93, 1.17
#: How far below a mark's middle the baseline of a line of text centred on it goes.
MIDDLE = 0.36


# -- the layout file -----------------------------------------------------------------------
FORMAT = "die-haendler-picture/1"
_TOP = ("width", "margin", "gap", "column_gap", "line", "pad")
_TABLES = {
    "readable": ("column", "min_px"),
    "fonts": ("title", "heading", "text", "small", "city", "junction", "bonus", "cart", "mark", "track"),
    "map": ("height", "inset_x", "inset_top", "inset_bottom", "city_width", "city_height", "city_pad",
            "good_radius", "good_step", "bonus_width", "bonus_height", "junction_radius",
            "junction_label_gap", "space_radius", "road_width", "pair_shift", "arrow", "cart_width",
            "cart_height", "cart_gap", "load_good", "load_height", "load_pad", "messenger", "keep_clear",
            "ring_step", "rings"),
    "table": ("row", "label", "swatch", "dot", "dot_step", "level_name", "upkeep", "arrival_box",
              "key_item_gap", "player_gap"),
    "glyphs": ("lower", "upper", "wide", "other", "bold", "spare"),
}  # fmt: skip


@dataclass(frozen=True)
class Style:
    """The validated layout file (see `engine/data/haendler/picture.toml`)."""

    width: float
    margin: float
    gap: float
    column_gap: float
    line: float
    pad: float
    readable: Mapping[str, float]
    fonts: Mapping[str, float]
    map: Mapping[str, float]
    table: Mapping[str, float]
    glyphs: Mapping[str, float]
    font: Font  # the glyph widths (see `[glyphs]` in the layout file)


@lru_cache(maxsize=1)
def style() -> Style:
    """The picture's layout file shipped with the engine, validated."""
    path = DATA / "picture.toml"
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise DataError("picture.toml", "(syntax)", str(exc)) from None
    return parse_style(doc, "picture.toml")


def parse_style(doc: Mapping[str, Any], file: str) -> Style:
    """A layout document as a `Style`, or a `DataError` naming the field that is wrong."""

    def fail(field: str, problem: str) -> NoReturn:
        raise DataError(file, field, problem)

    def number(v: Any, field: str) -> float:
        if isinstance(v, bool) or not isinstance(v, int | float) or not v > 0:
            fail(field, "must be a positive number")
        return float(v)

    if doc.get("format") != FORMAT:
        fail("format", f"must be {FORMAT!r}")
    top = {k: number(doc.get(k), k) for k in _TOP}
    tables: dict[str, dict[str, float]] = {}
    for name, keys in _TABLES.items():
        table = doc.get(name)
        if not isinstance(table, dict):
            fail(name, "must be a table")
        tables[name] = {k: number(table.get(k), f"{name}.{k}") for k in keys}
    classes: dict[str, float] = {}
    entries = doc["glyphs"].get("classes", [])
    if not isinstance(entries, list):
        fail("glyphs.classes", "must be a list of {chars, em}")
    for i, entry in enumerate(entries):
        chars = entry.get("chars") if isinstance(entry, dict) else None
        if not isinstance(chars, str) or not chars:
            fail(f"glyphs.classes[{i}].chars", "must be a non-empty string")
        em = number(entry.get("em"), f"glyphs.classes[{i}].em")
        classes.update(dict.fromkeys(chars, em))
    readable = tables["readable"]
    smallest = min(tables["fonts"].values())
    if smallest * readable["column"] / top["width"] < readable["min_px"]:
        fail("fonts", f"a font of {smallest:g} in a picture {top['width']:g} wide reads below "
                      f"{readable['min_px']:g} px in a {readable['column']:g} px column")  # fmt: skip
    if top["line"] < BOX:
        fail("line", f"must be at least {BOX} (or lines of a paragraph overlap)")
    return Style(width=top["width"], margin=top["margin"], gap=top["gap"], column_gap=top["column_gap"],
                 line=top["line"], pad=top["pad"], readable=readable, fonts=tables["fonts"], map=tables["map"],
                 table=tables["table"], glyphs=tables["glyphs"], font=_font(tables["glyphs"], classes))  # fmt: skip


def _font(glyphs: Mapping[str, float], classes: Mapping[str, float]) -> Font:
    """The estimated widths of `[glyphs]`: every character `spare` wider than its class says,
    bold text `bold` times as wide."""
    spare = glyphs["spare"]
    table = {c: em + spare for c, em in classes.items()}

    def face(scale: float) -> Face:
        return Face(table, default=glyphs["other"] + spare, scale=scale, wide=glyphs["wide"] + spare,
                    upper=glyphs["upper"] + spare, lower=glyphs["lower"] + spare)

    return Font(face(1.0), face(glyphs["bold"]))


# -- text: widths and wrapping ---------------------------------------------------------------
def text_width(s: str, size: float, bold: bool = False) -> float:
    """The estimated width of `s` at font size `size` (errs wide; see the layout file)."""
    return style().font.width(s, size, bold)


def wrap(s: str, size: float, width: float, bold: bool = False) -> list[str]:
    """`s` in lines no wider than `width`, broken between words (a word wider than a
    line is broken after a hyphen, or else where the line is full)."""
    return style().font.wrap(s, size, width, bold, hyphens=True)


def _para(x: float, top: float, s: str, size: float, width: float, bold: bool = False, fill: str = INK,
          extra: str = "") -> tuple[list[str], float]:
    """`s` wrapped into `width` from `top` down; the elements and the bottom."""
    step = size * style().line
    lines = wrap(s, size, width, bold)
    out = [_text(x, top + size * ASCENT + k * step, line, size, bold, fill=fill, extra=extra)
           for k, line in enumerate(lines)]  # fmt: skip
    return out, top + step * len(lines)


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


# -- the whole picture ----------------------------------------------------------------------
def picture(view: Mapping[str, Any], names: Names) -> str:
    """The table as `view` shows it, as an SVG document (see the module doc)."""
    st = style()
    ctx = board_of(view)
    w = Words(names, ctx.board)
    me = viewer_of(view)
    wide, m = st.width, st.margin
    title = f"Die Händler — {headline(view)}"
    body, y = _para(m, m, title, st.fonts["title"], wide - 2 * m, bold=True)
    waiting = _waiting(w, view, me)
    if waiting:
        out, y = _para(m, y + st.pad / 2, waiting, st.fonts["text"], wide - 2 * m)
        body += out
    y += st.gap / 2
    out, y = _map(ctx, w, view, y)
    body += out
    out, y = _key(y + 2 * st.pad)
    body += out
    out, y = _cart_list(w, view, y + st.gap)
    body += out
    out, y = _prices(ctx, w, view, y + st.gap)
    body += out
    out, y = _arrivals(ctx, view, y + st.gap)
    body += out
    out, y = _status(ctx, w, view, m, y + st.gap, wide - 2 * m)
    body += out
    out, y = _legend(w, view, me, y + st.gap)
    body += out
    high = math.ceil(y + m)
    head = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_f(wide)} {high}" width="{_f(wide)}" '
        f'height="{high}" role="img" aria-labelledby="pic-title pic-desc" font-family={quoteattr(FONT)} '
        f'fill="{INK}">',
        f'<title id="pic-title">{escape(title)}</title>',
        f'<desc id="pic-desc">{escape(_desc(ctx, w, view, me))}</desc>',
        f'<rect width="{_f(wide)}" height="{high}" fill="{PAPER}"/>',
    ]
    return "\n".join([*head, *body, "</svg>"]) + "\n"


# -- layout of the map -----------------------------------------------------------------------
def layout(board: Board, top: float = 0.0) -> dict[str, Point]:
    """Centres of the cities and junctions in the picture (the map panel starting at `top`):
    the board file's positions scaled into the map, or (when it does not place every one)
    a computed spring layout."""
    st = style()
    mp = st.map
    ends = [*board.cities, *board.junction_names]
    given = board.positions if all(n in board.positions for n in ends) else _computed(board, ends)
    xs, ys = [given[n][0] for n in ends], [given[n][1] for n in ends]
    x0, x1 = mp["inset_x"], st.width - mp["inset_x"]
    y0, y1 = top + mp["inset_top"], top + mp["height"] - mp["inset_bottom"]
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
    roads = [(a, b) for a, b, _ in board.roads]
    n = 0
    for i, (a, b) in enumerate(roads):
        for c, d in roads[i + 1 :]:
            if len({a, b, c, d}) == 4:
                n += _cross(pos[a], pos[b], pos[c], pos[d])
    return n


def _side(p: Point, q: Point, r: Point) -> float:
    return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])


def _cross(p: Point, q: Point, r: Point, s: Point) -> bool:
    return _side(p, q, r) * _side(p, q, s) < 0 and _side(r, s, p) * _side(r, s, q) < 0


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


class Map:
    """Where the map's marks are: node centres, city boxes, road spaces and the boxes
    already taken by marks and labels (so a cart, the messenger or a junction's name is
    placed where it covers no other)."""

    def __init__(self, board: Board, top: float) -> None:
        st = style()
        self.board, self.top = board, top
        self.mp = st.map
        self.bounds: Box = (st.margin, top, st.width - st.margin, top + self.mp["height"])
        self.pos = layout(board, top)
        self.city_box: dict[str, Box] = {}
        for c in board.cities:
            x, y = self.pos[c]
            half = max(self.mp["city_width"], text_width(board.node_name(c), st.fonts["city"], True)
                       + 2 * self.mp["city_pad"]) / 2  # fmt: skip
            self.city_box[c] = (x - half, y - self.mp["city_height"] / 2, x + half, y + self.mp["city_height"] / 2)
        both = {(a, b) for a, b, _ in board.roads}
        self.lines: dict[tuple[str, str], tuple[Point, Point]] = {}
        self.spaces: dict[str, Point] = {}
        for a, b, k in board.roads:
            self.lines[(a, b)] = _shifted(self.pos[a], self.pos[b], (b, a) in both, self.mp["pair_shift"])
            (ax, ay), (bx, by) = self.visible(a, b)
            for i in range(1, k + 1):
                t = i / (k + 1)
                self.spaces[f"{a}>{b}:{i}"] = (ax + (bx - ax) * t, ay + (by - ay) * t)
        r = self.mp["junction_radius"]
        self.taken: list[Box] = [*self.city_box.values()]
        self.taken += [(x - r, y - r, x + r, y + r) for j in board.junction_names for x, y in [self.pos[j]]]
        s = self.mp["space_radius"]
        self.marks: list[Box] = [(x - s, y - s, x + s, y + s) for x, y in self.spaces.values()]

    def visible(self, a: str, b: str) -> tuple[Point, Point]:
        """The part of the road a→b between the city boxes or junction marks at its ends
        (where its spaces go)."""
        p, q = self.lines[(a, b)]
        dx, dy = q[0] - p[0], q[1] - p[1]

        def cut(node: str) -> float:  # the fraction of the road the end's mark covers
            if node in self.city_box:
                x0, y0, x1, y1 = self.city_box[node]
                gap = self.mp["space_radius"] + 2
                return min((x1 - x0) / 2 / abs(dx) if dx else 1.0, (y1 - y0) / 2 / abs(dy) if dy else 1.0) + \
                    gap / (math.hypot(dx, dy) or 1)  # fmt: skip
            return (self.mp["junction_radius"] + self.mp["space_radius"] + 2) / (math.hypot(dx, dy) or 1)

        s, e = min(cut(a), 0.45), 1 - min(cut(b), 0.45)
        return (p[0] + dx * s, p[1] + dy * s), (p[0] + dx * e, p[1] + dy * e)

    def where(self, node: str) -> Point:
        if node in self.pos:
            return self.pos[node]
        return self.spaces.get(node, (self.bounds[0] + self.mp["inset_x"], self.top + self.mp["inset_top"]))

    def around(self, node: str) -> Box:
        """The mark of `node` (a city's box, a junction's or a space's circle)."""
        if node in self.city_box:
            return self.city_box[node]
        x, y = self.where(node)
        r = self.mp["junction_radius"] if node in self.pos else self.mp["space_radius"]
        return (x - r, y - r, x + r, y + r)

    def score(self, box: Box) -> float:
        """How bad a place `box` is: off the map or on a taken box (never chosen while a
        better one exists), on a road space, across a road."""
        x0, y0, x1, y1 = self.bounds
        if box[0] < x0 + 2 or box[1] < y0 + 2 or box[2] > x1 - 2 or box[3] > y1 - 2:
            return 1e6
        pad = self.mp["keep_clear"]
        grown = (box[0] - pad, box[1] - pad, box[2] + pad, box[3] + pad)
        bad = 1000.0 * sum(_meets(grown, t) for t in self.taken)
        bad += 10.0 * sum(_meets(box, s) for s in self.marks)
        bad += sum(_on_line(box, p, q) for p, q in self.lines.values())
        return bad

    def place(self, node: str, size: tuple[float, float], first: Sequence[Point] = ()) -> Box:
        """A free box of `size` next to `node`'s mark: the first of the preferred spots
        (above, below, right, left, or `first` as offsets of the box's centre from the
        node) that is free, or else the best one on rings around the node; then taken."""
        w, h = size
        x, y = self.where(node)
        ax0, ay0, ax1, ay1 = self.around(node)
        g = self.mp["cart_gap"]
        spots = [*first,
                 (0, ay0 - y - g - h / 2), (0, ay1 - y + g + h / 2),
                 (ax1 - x + g + w / 2, 0), (ax0 - x - g - w / 2, 0)]  # fmt: skip
        best: tuple[float, Box] | None = None
        for ring in range(0, int(self.mp["rings"]) + 1):
            if ring:
                reach = max(ax1 - ax0, ay1 - ay0) / 2 + g + ring * self.mp["ring_step"]
                spots = [(math.cos(a) * (reach + w / 2), math.sin(a) * (reach + h / 2))
                         for a in (2 * math.pi * k / 16 - math.pi / 2 for k in range(16))]  # fmt: skip
            for dx, dy in spots:
                box = (x + dx - w / 2, y + dy - h / 2, x + dx + w / 2, y + dy + h / 2)
                bad = self.score(box)
                if best is None or bad < best[0]:
                    best = (bad, box)
            if best is not None and best[0] < 10:
                break
        assert best is not None
        self.taken.append(best[1])
        return best[1]


def _meets(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _on_line(box: Box, p: Point, q: Point) -> bool:
    """Whether the segment p–q crosses `box`."""
    x0, y0, x1, y1 = box
    if max(p[0], q[0]) < x0 or min(p[0], q[0]) > x1 or max(p[1], q[1]) < y0 or min(p[1], q[1]) > y1:
        return False
    if x0 <= p[0] <= x1 and y0 <= p[1] <= y1:
        return True
    corners = ((x0, y0), (x1, y0), (x1, y1), (x0, y1))
    return any(_cross(p, q, corners[k], corners[(k + 1) % 4]) for k in range(4))


def _shifted(p: Point, q: Point, shift: bool, by: float) -> tuple[Point, Point]:
    if not shift:
        return p, q
    dx, dy = q[0] - p[0], q[1] - p[1]
    n = math.hypot(dx, dy) or 1
    ox, oy = -dy / n * by, dx / n * by
    return (p[0] + ox, p[1] + oy), (q[0] + ox, q[1] + oy)


# -- drawing helpers -----------------------------------------------------------------------
def _f(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _text(x: float, y: float, s: str, size: float, bold: bool = False, anchor: str = "start",
          fill: str = INK, extra: str = "") -> str:
    weight = ' font-weight="bold"' if bold else ""
    middle = "" if anchor == "start" else f' text-anchor="{anchor}"'
    return (f'<text x="{_f(x)}" y="{_f(y)}" font-size="{_f(size)}"{weight}{middle} '
            f'fill="{fill}"{extra}>{escape(s)}</text>')  # fmt: skip


def _tip(s: str) -> str:
    return f"<title>{escape(s)}</title>"


def _seat_fill(p: int) -> str:
    return SEAT_FILL[p] if 0 <= p < len(SEAT_FILL) else "#888888"


def _good_icon(x: float, y: float, good: str, r: float, stroke: str = INK, tip: str = "") -> str:
    fill = GOOD_FILL.get(good, "#bbbbbb")
    inner = _tip(tip) if tip else ""
    if good in ROUND_GOODS:
        return f'<circle cx="{_f(x)}" cy="{_f(y)}" r="{_f(r)}" fill="{fill}" stroke="{stroke}">{inner}</circle>'
    return (f'<rect x="{_f(x - r)}" y="{_f(y - r)}" width="{_f(2 * r)}" height="{_f(2 * r)}" fill="{fill}" '
            f'stroke="{stroke}">{inner}</rect>')  # fmt: skip


def _heading(x: float, top: float, s: str, width: float) -> tuple[list[str], float]:
    out, y = _para(x, top, s, style().fonts["heading"], width, bold=True)
    return out, y + style().pad


# -- the map -------------------------------------------------------------------------------
def _map(ctx: Ctx, w: Words, view: Mapping[str, Any], top: float) -> tuple[list[str], float]:
    st = style()
    mp = st.map
    where = Map(ctx.board, top)
    x0, y0, x1, y1 = where.bounds
    out = [f'<rect x="{_f(x0)}" y="{_f(y0)}" width="{_f(x1 - x0)}" height="{_f(y1 - y0)}" rx="10" '
           f'fill="{LAND}" stroke="#d8c9a3"/>']  # fmt: skip
    # Junction names first (beside their marks, clear of the city boxes and each other),
    # then the carts and the messenger, each where it covers no mark placed before.
    size = st.fonts["junction"]
    names: dict[str, str] = {}
    for j in ctx.board.junction_names:
        name = w.node(j)
        tw, th = text_width(name, size), size * BOX
        r = mp["junction_radius"] + mp["junction_label_gap"]
        box = where.place(j, (tw, th), first=[(r + tw / 2, r), (-r - tw / 2, r), (r + tw / 2, -r), (-r - tw / 2, -r)])
        names[j] = _text(box[0], box[1] + size * ASCENT, name, size, extra=' font-style="italic"')
    leaders, carts = _carts_on_map(w, view, where)
    lead, messenger = _messenger(w, view, where)
    out += ['<g id="leaders">', *leaders, lead, "</g>"]  # under the marks: from a place to what stands there
    out += _roads(ctx.board, w, where)
    out += _nodes(ctx, w, view, where, names)
    out += carts + messenger
    return out, y1


def _roads(board: Board, w: Words, where: Map) -> list[str]:
    mp = style().map
    out = ['<g id="roads">']
    for a, b, k in board.roads:
        p, q = where.lines[(a, b)]
        road = f"Road {w.node(a)} → {w.node(b)}: {plural(k, 'space')}, one way"
        out.append(f"<g>{_tip(road)}")
        out.append(f'<line x1="{_f(p[0])}" y1="{_f(p[1])}" x2="{_f(q[0])}" y2="{_f(q[1])}" '
                   f'stroke="{ROAD}" stroke-width="{_f(mp["road_width"])}"/>')  # fmt: skip
        t = (k // 2 + 0.5) / (k + 1) if k != 1 else 0.72  # in the middle gap between two spaces
        s, e = where.visible(a, b)
        out.append(_arrow(s, e, t, mp["arrow"]))
        out.append("</g>")
        for i in range(1, k + 1):
            node = f"{a}>{b}:{i}"
            x, y = where.spaces[node]
            out.append(f'<circle id="{place_id(node)}" cx="{_f(x)}" cy="{_f(y)}" r="{_f(mp["space_radius"])}" '
                       f'fill="{PAPER}" stroke="{ROAD}" stroke-width="1.5">{_tip(w.place(node))}</circle>')  # fmt: skip
    out.append("</g>")
    return out


def _arrow(p: Point, q: Point, t: float, size: float) -> str:
    """A filled arrowhead on the road p→q at fraction t, pointing along the road."""
    dx, dy = q[0] - p[0], q[1] - p[1]
    n = math.hypot(dx, dy) or 1
    ux, uy = dx / n, dy / n
    cx, cy = p[0] + dx * t, p[1] + dy * t
    back = size * 5 / 6
    tip = (cx + ux * size, cy + uy * size)
    left = (cx - ux * back - uy * back, cy - uy * back + ux * back)
    right = (cx - ux * back + uy * back, cy - uy * back - ux * back)
    pts = " ".join(f"{_f(x)},{_f(y)}" for x, y in (tip, left, right))
    return f'<polygon points="{pts}" fill="#6b5a3a"/>'


def _nodes(ctx: Ctx, w: Words, view: Mapping[str, Any], where: Map, names: Mapping[str, str]) -> list[str]:
    """The cities (name, goods made there, bonus marker) and the junctions (a mark and
    its name, `names[j]`, placed by the caller)."""
    st = style()
    mp, fonts = st.map, st.fonts
    board = ctx.board
    out = ['<g id="places">']
    r = mp["junction_radius"]
    for j in board.junction_names:
        x, y = where.pos[j]
        out.append(f'<g id="{place_id(j)}">{_tip(f"{w.node(j)} (junction)")}'
                   f'<circle cx="{_f(x)}" cy="{_f(y)}" r="{_f(r)}" fill="#e6d7b0" stroke="{INK}" '
                   f'stroke-width="1.5"/>{names[j]}</g>')  # fmt: skip
    for c in board.cities:
        x, y = where.pos[c]
        bx0, by0, bx1, by1 = where.city_box[c]
        made = [g for g in board.goods if g in board.produces[c]]
        bonus = view["bonus"].get(c, 0)
        tip = f"{w.node(c)}: produces {join(w.good(g) for g in made)}; bonus marker {money(bonus)}"
        out.append(f'<g id="{place_id(c)}">{_tip(tip)}')
        out.append(f'<rect x="{_f(bx0)}" y="{_f(by0)}" width="{_f(bx1 - bx0)}" height="{_f(by1 - by0)}" rx="7" '
                   f'fill="#ffffff" stroke="{INK}" stroke-width="2"/>')  # fmt: skip
        size = fonts["city"]
        out.append(_text(x, by0 + st.pad + size * ASCENT, w.node(c), size, bold=True, anchor="middle"))
        low = by1 - st.pad - mp["bonus_height"] / 2
        gr = mp["good_radius"]
        for k, g in enumerate(made):
            out.append(_good_icon(bx0 + 1.5 * st.pad + gr + k * mp["good_step"], low, g, gr, tip=w.good(g)))
        bw, bh = mp["bonus_width"], mp["bonus_height"]
        out.append(f'<rect x="{_f(bx1 - st.pad - bw)}" y="{_f(low - bh / 2)}" width="{_f(bw)}" height="{_f(bh)}" '
                   f'rx="{_f(bh / 2)}" fill="#f2c14e" stroke="#8a6d1d"/>')  # fmt: skip
        size = fonts["bonus"]
        out.append(_text(bx1 - st.pad - bw / 2, low + size * MIDDLE, f"+{money(bonus)}", size, bold=True,
                         anchor="middle"))  # fmt: skip
        out.append("</g>")
    out.append("</g>")
    return out


def _carts_on_map(w: Words, view: Mapping[str, Any], where: Map) -> tuple[list[str], list[str]]:
    """The carts' badges with their loads (and "Achsbruch" over a blocked one), and the
    lines from each cart's place to its badge."""
    st = style()
    mp, fonts = st.map, st.fonts
    out, leaders = ['<g id="carts">'], []
    blocked = {b["cart"] for b in view.get("blocks", [])}
    cw, ch, lg, lh = mp["cart_width"], mp["cart_height"], mp["load_good"], mp["load_height"]
    mark = fonts["mark"]
    for i, cart in enumerate(view["carts"]):
        rows = [(p, row) for p, row in enumerate(cart["rows"]) if row]
        lp = mp["load_pad"]
        pills = sum(2 * lp + lg * len(row) + lp for _, row in rows)
        width = cw + pills
        label = text_width("Achsbruch", mark, True) if i + 1 in blocked else 0.0
        wide = max(width, label)
        high = ch + (mark * BOX + 2 if label else 0)
        nx, ny = where.where(cart["at"])
        box = where.place(cart["at"], (wide, high))
        left = box[0] + (wide - width) / 2
        x, y = left + cw / 2, box[3] - ch / 2  # the badge's centre
        master = cart["master"]
        fill = _seat_fill(master) if master is not None else "#ffffff"
        dark = master is not None and master in (0, 3)
        out.append(f'<g id="{cart_id(i + 1)}">{_tip(_cart_words(w, view, i))}')
        leaders.append(f'<line x1="{_f(nx)}" y1="{_f(ny)}" x2="{_f(x)}" y2="{_f(y)}" stroke="{INK}" '
                       f'stroke-width="1.2" stroke-dasharray="3 2"/>')  # fmt: skip
        out.append(f'<rect x="{_f(x - cw / 2)}" y="{_f(y - ch / 2)}" width="{_f(cw)}" height="{_f(ch)}" rx="4" '
                   f'fill="{fill}" stroke="{INK}" stroke-width="2"'
                   + (' stroke-dasharray="4 2"' if cart.get("arrived") else "") + "/>")  # fmt: skip
        size = fonts["cart"]
        out.append(_text(x, y + size * MIDDLE, str(i + 1), size, bold=True, anchor="middle",
                         fill="#ffffff" if dark else INK))  # fmt: skip
        gx = x + cw / 2 + lp
        for p, row in rows:
            pw = 2 * lp + lg * len(row)
            out.append(f'<rect x="{_f(gx)}" y="{_f(y - lh / 2)}" width="{_f(pw)}" height="{_f(lh)}" '
                       f'rx="{_f(lh / 2)}" fill="{_seat_fill(p)}" stroke="{INK}" stroke-width="0.8"/>')  # fmt: skip
            for k, g in enumerate(row):
                out.append(_good_icon(gx + lp + lg / 2 + k * lg, y, g, lg * 0.36,
                                      stroke="#ffffff" if g == "eisen" else INK))  # fmt: skip
            gx += pw + lp
        if label:
            out.append(_text(box[0] + wide / 2, box[1] + mark * ASCENT, "Achsbruch", mark, bold=True,
                             anchor="middle", fill="#b00020"))  # fmt: skip
        out.append("</g>")
    out.append("</g>")
    return leaders, out


def _cart_words(w: Words, view: Mapping[str, Any], i: int) -> str:
    cart = view["carts"][i]
    loads = "; ".join(f"{w.seat(p)}: {w.goods(row)}" for p, row in enumerate(cart["rows"]) if row) or "empty"
    master = w.seat(cart["master"]) if cart["master"] is not None else "none"
    facts = [f"Cart {i + 1} at {w.place(cart['at'])}", f"master {master}", f"loads {loads}"]
    if cart.get("arrived"):
        facts.append("arrived this round")
    facts += [f"blocked by {w.seat(b['by'])}'s Achsbruch" for b in view.get("blocks", []) if b["cart"] == i + 1]
    return "; ".join(facts)


def _messenger(w: Words, view: Mapping[str, Any], where: Map) -> tuple[str, list[str]]:
    """The line from the messenger's space to its mark, and the mark."""
    st = style()
    r, size = st.map["messenger"], st.fonts["mark"]
    node = view["messenger"]
    nx, ny = where.where(node)
    box = where.place(node, (2 * r, 2 * r), first=[(0, st.map["space_radius"] + st.map["cart_gap"] / 2 + r)])
    x, y = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    pts = " ".join(f"{_f(px)},{_f(py)}" for px, py in ((x, y - r), (x + r, y), (x, y + r), (x - r, y)))
    lead = f'<line x1="{_f(nx)}" y1="{_f(ny)}" x2="{_f(x)}" y2="{_f(y)}" stroke="#5b2a86" stroke-width="1.5"/>'
    return lead, [f'<g id="messenger">{_tip("Messenger: " + w.place(node))}'
            f'<polygon points="{pts}" fill="#5b2a86" stroke="{INK}"/>'
            + _text(x, y + size * MIDDLE, "M", size, bold=True, anchor="middle", fill="#ffffff") + "</g>"]  # fmt: skip


def _key(top: float) -> tuple[list[str], float]:
    """What the map's marks mean, in words: items in a row, wrapped to the width."""
    st = style()
    mp, size = st.map, st.fonts["small"]
    m, gap = st.margin, st.table["key_item_gap"]
    mid = size * 0.6  # the icons' middle, from a line's top
    s, r = mp["space_radius"], mp["messenger"] * 0.75

    def icon(kind: str, x: float, y: float) -> tuple[str, float]:
        if kind == "space":
            return (f'<circle cx="{_f(x + s)}" cy="{_f(y)}" r="{_f(s)}" fill="{PAPER}" stroke="{ROAD}" '
                    f'stroke-width="1.5"/>', 2 * s)  # fmt: skip
        if kind == "arrow":
            return _arrow((x, y), (x + 14, y), 0.5, mp["arrow"]), 16
        if kind == "junction":
            return (f'<circle cx="{_f(x + 7)}" cy="{_f(y)}" r="7" fill="#e6d7b0" stroke="{INK}" '
                    f'stroke-width="1.5"/>', 14)  # fmt: skip
        if kind == "cart":
            return (f'<rect x="{_f(x)}" y="{_f(y - 7)}" width="18" height="14" rx="3" fill="#ffffff" stroke="{INK}" '
                    f'stroke-width="1.5"/>', 18)  # fmt: skip
        if kind == "load":
            return (f'<rect x="{_f(x)}" y="{_f(y - 6)}" width="26" height="12" rx="6" fill="{SEAT_FILL[0]}" '
                    f'stroke="{INK}" stroke-width="0.8"/>' + _good_icon(x + 8, y, "tuch", 3.6)
                    + _good_icon(x + 18, y, "nahrung", 3.6), 26)  # fmt: skip
        if kind == "bonus":
            return (f'<rect x="{_f(x)}" y="{_f(y - 6)}" width="24" height="12" rx="6" fill="#f2c14e" '
                    f'stroke="#8a6d1d"/>', 24)  # fmt: skip
        pts = " ".join(f"{_f(px)},{_f(py)}" for px, py in ((x + r, y - r), (x + 2 * r, y), (x + r, y + r), (x, y)))
        return f'<polygon points="{pts}" fill="#5b2a86" stroke="{INK}"/>', 2 * r

    items = [("space", "road space"), ("arrow", "one-way road"), ("junction", "junction"),
             ("cart", "cart, in its loading master's colour (dashed: arrived this round)"),
             ("load", "goods on a cart, in their owner's colour"), ("bonus", "city bonus"),
             ("messenger", "messenger")]  # fmt: skip
    out = ['<g id="key">']
    x, y = m, top
    step = size * st.line
    for kind, words in items:
        mark, iw = icon(kind, 0, 0)
        need = iw + 5 + text_width(words, size)
        if x > m and x + need > st.width - m:
            x, y = m, y + step
        mark, iw = icon(kind, x, y + mid)
        out.append(mark)
        out.append(_text(x + iw + 5, y + size * ASCENT, words, size))
        x += need + gap
    out.append("</g>")
    return out, y + step


def _cart_list(w: Words, view: Mapping[str, Any], top: float) -> tuple[list[str], float]:
    st = style()
    m, size = st.margin, st.fonts["text"]
    inner = st.width - 2 * m
    out, y = _heading(m, top, "Carts and loads", inner)
    out.insert(0, '<g id="cart-list">')
    for i, cart in enumerate(view["carts"]):
        master = f"master {w.seat(cart['master'])}" if cart["master"] is not None else "no master"
        state = " (arrived)" if cart.get("arrived") else ""
        loads = "; ".join(f"{w.seat(p)}: {w.goods(row)}" for p, row in enumerate(cart["rows"]) if row) or "empty"
        out.append(f'<rect x="{_f(m)}" y="{_f(y)}" width="20" height="{_f(size * BOX)}" rx="3" fill="#ffffff" '
                   f'stroke="{INK}"/>')  # fmt: skip
        out.append(_text(m + 10, y + size * ASCENT, str(i + 1), size, bold=True, anchor="middle"))
        lines, y = _para(m + 28, y, f"Cart {i + 1}: {w.place(cart['at'])}{state} · {master} · {loads}", size,
                         inner - 28)  # fmt: skip
        out += lines
        y += st.pad
    lines, y = _para(m, y, f"Messenger: {w.place(view['messenger'])}", size, inner)
    out += lines
    deck = view.get("deck_size", sum((view.get("deck") or {}).values()))
    played = w.cards(view.get("played") or {})
    lines, y = _para(m, y + st.pad, f"Influence deck: {plural(deck, 'card')} · played: {played}"
                                    f" · credits left: {view.get('credit_supply', 0)}", size, inner)  # fmt: skip
    out += [*lines, "</g>"]
    return out, y


# -- the tables ----------------------------------------------------------------------------
def _prices(ctx: Ctx, w: Words, view: Mapping[str, Any], top: float) -> tuple[list[str], float]:
    st = style()
    m, small, text = st.margin, st.fonts["small"], st.fonts["text"]
    rows = ctx.board.price_rows
    label, rh = st.table["label"], st.table["row"]
    col = (st.width - 2 * m - label) / len(rows)
    out, y = _heading(m, top, "Prices: what a good costs to buy and pays when sold, by its row", st.width - 2 * m)
    out.insert(0, '<g id="prices">')
    step = small * st.line
    for r, (buy, sell) in enumerate(rows):
        cx = m + label + col * r + col / 2
        for k, words in enumerate((f"row {r + 1}", f"buy {money(buy)}", f"sell {money(sell)}")):
            out.append(_text(cx, y + small * ASCENT + k * step, words, small, bold=k == 0, anchor="middle",
                             fill=MUTED if k == 0 else INK))  # fmt: skip
    y += 3 * step + 2
    gr = st.map["good_radius"]
    for g in ctx.board.goods:
        row = int(view["prices"][g])
        buy, sell = rows[row - 1]
        out.append(f'<g id="{good_id(g)}">{_tip(f"{w.good(g)}: row {row}, buy {money(buy)}, sell {money(sell)}")}')
        mid = y + rh / 2
        out.append(_good_icon(m + gr + 1, mid, g, gr))
        out.append(_text(m + 2 * gr + 8, mid + text * MIDDLE, w.good(g), text))
        for r in range(len(rows)):
            cx = m + label + col * r
            here = r + 1 == row
            fill, edge = ("#fbe3a4", "#8a6d1d") if here else ("#f1ece0", "none")
            out.append(f'<rect x="{_f(cx + 2)}" y="{_f(y + 1)}" width="{_f(col - 4)}" height="{_f(rh - 2)}" rx="3" '
                       f'fill="{fill}" stroke="{edge}"/>')  # fmt: skip
        cx = m + label + col * (row - 1) + col / 2
        words = f"sells {money(sell)}"
        half = (2 * gr + 6 + text_width(words, small, True)) / 2
        out.append(_good_icon(cx - half + gr, mid, g, gr))
        out.append(_text(cx - half + 2 * gr + 6, mid + small * MIDDLE, words, small, bold=True))
        out.append("</g>")
        y += rh
    out.append("</g>")
    return out, y


def _arrivals(ctx: Ctx, view: Mapping[str, Any], top: float) -> tuple[list[str], float]:
    st = style()
    m, small, big = st.margin, st.fonts["small"], st.fonts["track"]
    prices = ctx.board.arrival_level_price
    end = ctx.comp.end_threshold.get(view["seats"], ctx.comp.arrival_cap)
    now = view["arrivals"]
    inner = st.width - 2 * m
    out, y = _heading(m, top, f"Arrival track: {now}; the game ends at {end}", inner)
    out.insert(0, '<g id="arrivals">')
    box, bh = inner / len(prices), st.table["arrival_box"]
    for k, price in enumerate(prices):
        x = m + box * k
        here = k == now
        out.append(f"<g>{_tip(f'Arrivals {k}: a status level costs {money(price)}' + (' (now)' if here else ''))}")
        fill, edge = (INK if here else "#ffffff"), ("#b00020" if k == end else INK)
        out.append(f'<rect x="{_f(x + 2)}" y="{_f(y)}" width="{_f(box - 4)}" height="{_f(bh)}" rx="3" '
                   f'fill="{fill}" stroke="{edge}" stroke-width="{3 if k == end else 1}"/>')  # fmt: skip
        out.append(_text(x + box / 2, y + bh / 2 + big * MIDDLE, str(k), big, bold=True, anchor="middle",
                         fill="#ffffff" if here else INK))  # fmt: skip
        out.append(_text(x + box / 2, y + bh + 4 + small * ASCENT, money(price), small, anchor="middle"))
        out.append("</g>")
    caption = ("Under each position: the price of one status level while the track stands there. "
               "The red frame: the game ends there.")
    lines, y = _para(m, y + bh + 6 + small * st.line, caption, small, inner, fill=MUTED)
    out += [*lines, "</g>"]
    return out, y


def _status(ctx: Ctx, w: Words, view: Mapping[str, Any], x0: float, top: float,
            width: float) -> tuple[list[str], float]:  # fmt: skip
    st = style()
    t, text, small = st.table, st.fonts["text"], st.fonts["small"]
    levels = ctx.board.level_names
    out, y = _heading(x0, top, "Status track (level, upkeep)", width)
    out.insert(0, '<g id="status">')
    name_w = max(t["level_name"], *(text_width(f"{k + 1} {n}", text) + 8 for k, n in enumerate(levels)))
    dots = x0 + name_w + t["upkeep"] + 10
    step = text * st.line
    for k in range(len(levels), 0, -1):
        here = [p for p, pl in enumerate(view["players"]) if pl["level"] == k]
        who = x0 + name_w + t["upkeep"] + 10 + len(here) * t["dot_step"] + 2
        lines = wrap(", ".join(w.seat(p) for p in here), text, x0 + width - who - 4) if here else []
        rh = max(t["row"], len(lines) * step + (t["row"] - step))
        band = "#f1ece0" if k % 2 else "#fbf7ec"
        out.append(f'<rect x="{_f(x0)}" y="{_f(y)}" width="{_f(width)}" height="{_f(rh - 1)}" fill="{band}"/>')
        base = y + t["row"] / 2 + text * MIDDLE
        out.append(_text(x0 + 4, base, f"{k} {levels[k - 1]}", text))
        out.append(_text(x0 + name_w + t["upkeep"], base, money(ctx.board.upkeep[k - 1]), small, anchor="end",
                         fill=MUTED))  # fmt: skip
        for n, p in enumerate(here):
            cx = dots + t["dot"] + n * t["dot_step"]
            out.append(f'<circle cx="{_f(cx)}" cy="{_f(y + t["row"] / 2)}" r="{_f(t["dot"])}" fill="{_seat_fill(p)}" '
                       f'stroke="{INK}">{_tip(f"{w.seat(p)}: level {k}, {levels[k - 1]}")}</circle>')  # fmt: skip
        for n, line in enumerate(lines):
            out.append(_text(who, base + n * step, line, text))
        y += rh
    out.append("</g>")
    return out, y


def _legend(w: Words, view: Mapping[str, Any], me: int | None, top: float) -> tuple[list[str], float]:
    """The players, two to a row: colour, name, money (when the view shows it), credits,
    cards and movement tiles."""
    st = style()
    t, text, small = st.table, st.fonts["text"], st.fonts["small"]
    m = st.margin
    half = (st.width - 2 * m - st.column_gap) / 2
    out, y = _heading(m, top, "Players", st.width - 2 * m)
    out.insert(0, '<g id="players">')
    sw = t["swatch"]
    row_end = y
    for p, pl in enumerate(view["players"]):
        x0 = m + (p % 2) * (half + st.column_gap)
        if p % 2 == 0:
            y = row_end
        colour = COLOURS[p] if p < len(COLOURS) else f"seat {p}"
        cash = money(pl["money"]) if "money" in pl else "hidden"
        hand = pl.get("hand_size", sum((pl.get("hand") or {}).values()))
        you = " (you)" if p == me else ""
        start = " · start player" if p == view.get("start") and not view.get("over") else ""
        tiles = " ".join(map(str, pl["tiles"])) or "none"
        facts = (f"money {cash} · {plural(pl['credits'], 'credit')} · {plural(hand, 'card')} · "
                 f"movement tiles {tiles}")  # fmt: skip
        out.append(f'<g id="{seat_id(p)}">{_tip(f"{w.seat(p)}{you}, {colour}: {facts}")}')
        out.append(f'<rect x="{_f(x0)}" y="{_f(y + 1)}" width="{_f(sw)}" height="{_f(sw)}" rx="2" '
                   f'fill="{_seat_fill(p)}" stroke="{INK}"/>')  # fmt: skip
        lines, bottom = _para(x0 + sw + 6, y, f"{w.seat(p)}{you} — {colour}{start}", text, half - sw - 6, bold=True)
        out += lines
        lines, bottom = _para(x0 + sw + 6, bottom, facts, small, half - sw - 6)
        out += [*lines, "</g>"]
        row_end = max(row_end, bottom + t["player_gap"])
    out.append("</g>")
    return out, row_end


# -- words ---------------------------------------------------------------------------------
def _waiting(w: Words, view: Mapping[str, Any], me: int | None) -> str:
    if view.get("over"):
        rows = ranking(dict(view))
        return "Game over. " + ", ".join(f"{ordinal(r['place'])} {w.seat(r['seat'])}" for r in rows)
    pending = view.get("pending")
    if pending is None:
        return ""
    who = join(w.seat(p) + (" (you)" if p == me else "") for p in pending["seats"])
    lead = "Waiting for" if len(pending["seats"]) == 1 else "Asked of"  # a sealed step: answers are not shown
    return f"{lead} {who}: {KIND_WORDS.get(pending['kind'], pending['kind'])}"


def _desc(ctx: Ctx, w: Words, view: Mapping[str, Any], me: int | None) -> str:
    seen = f"as {w.seat(me)} sees it" if me is not None else "as the view shows it"
    carts = "; ".join(_cart_words(w, view, i) for i in range(len(view["carts"])))
    prices = ", ".join(f"{w.good(g)} row {view['prices'][g]}" for g in ctx.board.goods)
    levels = ", ".join(f"{w.seat(p)} level {pl['level']}" for p, pl in enumerate(view["players"]))
    return (f"Board of Die Händler {seen}. Cities {join(w.node(c) for c in ctx.board.cities)} on one-way roads. "
            f"{carts}. Messenger: {w.place(view['messenger'])}. Prices: {prices}. Arrival track "
            f"{view['arrivals']}. Status: {levels}.")  # fmt: skip


__all__: Sequence[str] = ("cart_id", "good_id", "layout", "parse_style", "picture", "place_id", "seat_id",
                          "style", "text_width", "wrap")  # fmt: skip
