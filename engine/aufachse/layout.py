"""The geometry of the Auf Achse picture, from data files checked on load.

`engine/data/aufachse/picture.json` says how the picture is drawn (its width, margins,
font sizes, the font's widths, where a city's label may sit, how trucks gather, the
colours); `engine/data/aufachse/<data set>/picture.json` says where each city's label
sits on that board. Neither is part of the data set's commitment (`DataSet.hashes`):
they change how the table looks, never the game.

The picture is `width` user units wide, so at that many CSS px a user unit is a CSS px:
every font size is checked to read at least `min_px` there. A text's box is estimated
from the font's widths (on the generous side), and the layout keeps every two texts'
boxes apart: the city labels once per board (an error on load when a board's labels
collide), the trucks on every drawing (`place_tokens` looks for room beside their space).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, NoReturn

from engine.aufachse.dataset import DATA, DataSet
from engine.core import textfit
from engine.core.errors import DataError

STYLE = DATA / "picture.json"
#: A box on the picture: left, top, right, bottom.
Box = tuple[float, float, float, float]
ANCHORS = ("start", "middle", "end")


def overlap(a: Box, b: Box, gap: float = 0.0) -> bool:
    """Whether boxes `a` and `b` come closer than `gap` to each other."""
    return a[0] < b[2] + gap and b[0] < a[2] + gap and a[1] < b[3] + gap and b[1] < a[3] + gap


def inside(a: Box, outer: Box) -> bool:
    return a[0] >= outer[0] and a[1] >= outer[1] and a[2] <= outer[2] and a[3] <= outer[3]


def crosses(box: Box, a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether the segment a–b passes through `box` (Liang–Barsky clipping)."""
    (x0, y0), (x1, y1) = a, b
    dx, dy = x1 - x0, y1 - y0
    lo, hi = 0.0, 1.0
    for p, q in ((-dx, x0 - box[0]), (dx, box[2] - x0), (-dy, y0 - box[1]), (dy, box[3] - y0)):
        if p == 0:
            if q < 0:
                return False
            continue
        t = q / p
        if p < 0:
            lo = max(lo, t)
        else:
            hi = min(hi, t)
        if lo > hi:
            return False
    return True


class _Check:
    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, fld: str, problem: str) -> NoReturn:
        raise DataError(self.file, fld, problem)

    def obj(self, value: Any, fld: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(fld, "must be an object")
        return value

    def num(self, value: Any, fld: str, least: float | None = None, most: float | None = None) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            self.fail(fld, "must be a number")
        if least is not None and value < least or most is not None and value > most:
            self.fail(fld, f"must be between {least} and {most}" if most is not None else f"must be at least {least}")
        return float(value)

    def nums(self, value: Any, fld: str, n: int | None = None, least: float | None = None) -> tuple[float, ...]:
        if not isinstance(value, list) or not value or n is not None and len(value) != n:
            self.fail(fld, f"must be a list of {n or 'some'} numbers")
        return tuple(self.num(v, f"{fld}[{i}]", least) for i, v in enumerate(value))

    def colour(self, value: Any, fld: str) -> str:
        if not (isinstance(value, str) and len(value) in (4, 7) and value[0] == "#"
                and all(c in "0123456789abcdefABCDEF" for c in value[1:])):
            self.fail(fld, "must be a colour like #1d1d1f")
        return value


@dataclass(frozen=True)
class Font:
    """The font: its advance widths (em, measured by `engine.core.textfit`) and how tall a
    line of it is."""

    family: str
    ascent: float
    descent: float
    fit: textfit.Font

    def width(self, text: str, size: float, bold: bool = False) -> float:
        return self.fit.width(text, size, bold)

    def height(self, size: float) -> float:
        """How tall a line of `size` is (its box, from `ascent` to `descent`)."""
        return (self.ascent + self.descent) * size

    def box(self, x: float, y: float, text: str, size: float, anchor: str = "start", bold: bool = False) -> Box:
        """The box of `text` drawn at (x, baseline y)."""
        w = self.width(text, size, bold)
        left = x if anchor == "start" else x - w / 2 if anchor == "middle" else x - w
        return left, y - self.ascent * size, left + w, y + self.descent * size


@dataclass(frozen=True)
class Style:
    """engine/data/aufachse/picture.json, checked."""

    width: float
    margin: float
    font: Font
    sizes: dict[str, float]
    leading: float
    gap: float
    board_top: float
    board_height: float
    inset: tuple[float, float, float, float]
    city: float
    space: float
    halo: float
    labels: dict[str, tuple[float, float, str]]
    search: tuple[float, float]
    token_r: float
    pad: float
    token_step: float
    per_row: int
    rings: tuple[float, ...]
    directions: int
    leader: float
    cover: float
    marker: float
    columns: int
    gutter: float
    swatch: float
    indent: float
    part_space: float
    legend: tuple[float, float, float]
    stroke: float
    seats: tuple[str, ...]
    seat_text: tuple[str, ...]
    colours: dict[str, str]


COLOURS = ("background", "text", "road", "space", "event", "city", "edge", "roadworks", "jam", "leader")
SIZES = ("headline", "heading", "text", "label", "token")


def parse_style(doc: Any, file: str = "picture.json") -> Style:
    """Check the picture's style document (every field) and build it."""
    c = _Check(file)
    doc = c.obj(doc, "(document)")
    width = c.num(doc.get("width"), "width", 100)
    min_px = c.num(doc.get("min_px"), "min_px", 1)
    column = c.num(doc.get("column"), "column", 100)
    f = c.obj(doc.get("font"), "font")
    if not isinstance(f.get("family"), str) or not f["family"]:
        c.fail("font.family", "must name a font")
    widths: dict[bool, dict[str, float]] = {}
    for bold, key in ((False, "normal"), (True, "bold")):
        groups = c.obj(f.get(key), f"font.{key}")
        table: dict[str, float] = {}
        for em, chars in groups.items():
            try:
                value = float(em)
            except ValueError:
                c.fail(f"font.{key}", f"{em!r} is not a width in em")
            if not isinstance(chars, str) or not 0 < value <= 2:
                c.fail(f"font.{key}.{em}", "must list characters of a width between 0 and 2 em")
            for ch in chars:
                if ch in table:
                    c.fail(f"font.{key}.{em}", f"{ch!r} has two widths")
                table[ch] = value
        widths[bold] = table
    safety, unknown = c.num(f.get("safety"), "font.safety", 1, 2), c.num(f.get("unknown"), "font.unknown", 0.5, 2)
    font = Font(f["family"], c.num(f.get("ascent"), "font.ascent", 0.1, 2),
                c.num(f.get("descent"), "font.descent", 0, 1),
                textfit.Font(*(textfit.Face(widths[bold], unknown, safety) for bold in (False, True))))
    s = c.obj(doc.get("sizes"), "sizes")
    sizes = {k: c.num(s.get(k), f"sizes.{k}", 1) for k in SIZES}
    for k, size in sizes.items():
        if size * column / width < min_px - 1e-9:
            c.fail(f"sizes.{k}", f"{size:g} reads {size * column / width:.1f} px at {column:g} px, under {min_px:g}")
    b = c.obj(doc.get("board"), "board")
    inset = c.nums(b.get("inset"), "board.inset", 4, 0)
    labels: dict[str, tuple[float, float, str]] = {}
    for code, spec in c.obj(doc.get("labels"), "labels").items():
        if not isinstance(spec, list) or len(spec) != 3 or spec[2] not in ANCHORS:
            c.fail(f"labels.{code}", "must be [dx, dy, start|middle|end]")
        labels[code] = (c.num(spec[0], f"labels.{code}[0]"), c.num(spec[1], f"labels.{code}[1]"), spec[2])
    if not labels:
        c.fail("labels", "needs at least one place for a label")
    search = c.nums(doc.get("search"), "search", 2, 1)
    t = c.obj(doc.get("tokens"), "tokens")
    r = c.num(t.get("r"), "tokens.r", 2)
    step = c.num(t.get("step"), "tokens.step", 2 * r)
    if step < font.ascent * sizes["token"] + font.descent * sizes["token"]:
        c.fail("tokens.step", "must leave room for a token's letter")
    if 2 * r < font.width("W", sizes["token"], True):
        c.fail("tokens.r", "a token must hold its letter")
    p = c.obj(doc.get("panel"), "panel")
    legend = c.nums(p.get("legend"), "panel.legend", 3, 0)
    col = c.obj(doc.get("colours"), "colours")
    seats, seat_text = col.get("seats"), col.get("seat_text")
    if not isinstance(seats, list) or len(seats) < 6:
        c.fail("colours.seats", "needs a colour for each of 6 seats")
    if not isinstance(seat_text, list) or len(seat_text) != len(seats):
        c.fail("colours.seat_text", "needs a colour for the letter on each seat's colour")
    return Style(
        width=width, margin=c.num(doc.get("margin"), "margin", 0, width / 4), font=font, sizes=sizes,
        leading=c.num(doc.get("leading"), "leading", 0),
        gap=c.num(doc.get("gap"), "gap", 0), board_top=c.num(b.get("top"), "board.top", 0),
        board_height=c.num(b.get("height"), "board.height", 100), inset=(inset[0], inset[1], inset[2], inset[3]),
        city=c.num(doc.get("city"), "city", 1), space=c.num(doc.get("space"), "space", 1),
        halo=c.num(doc.get("halo"), "halo", 0), labels=labels,
        search=(search[0], search[1]), token_r=r, token_step=step, pad=c.num(t.get("pad"), "tokens.pad", 0, 10),
        per_row=int(c.num(t.get("per_row"), "tokens.per_row", 1, 6)), rings=c.nums(t.get("rings"), "tokens.rings",
                                                                                  least=1),
        directions=int(c.num(t.get("directions"), "tokens.directions", 4, 64)),
        leader=c.num(t.get("leader"), "tokens.leader", 0), cover=c.num(t.get("cover"), "tokens.cover", 0),
        marker=c.num(doc.get("marker"), "marker", 2),
        columns=int(c.num(p.get("columns"), "panel.columns", 1, 4)), gutter=c.num(p.get("gutter"), "panel.gutter", 0),
        swatch=c.num(p.get("swatch"), "panel.swatch", 4), indent=c.num(p.get("indent"), "panel.indent", 0),
        part_space=c.num(p.get("space"), "panel.space", 0),
        legend=(legend[0], legend[1], legend[2]), stroke=c.num(doc.get("stroke"), "stroke", 0.1, 10),
        seats=tuple(c.colour(v, f"colours.seats[{i}]") for i, v in enumerate(seats)),
        seat_text=tuple(c.colour(v, f"colours.seat_text[{i}]") for i, v in enumerate(seat_text)),
        colours={k: c.colour(col.get(k), f"colours.{k}") for k in COLOURS},
    )


@lru_cache(maxsize=1)
def style() -> Style:
    return parse_style(_read(STYLE, "aufachse/picture.json"), "aufachse/picture.json")


def _read(path: Path, file: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(file, "(syntax)", str(exc)) from None


@dataclass(frozen=True)
class BoardLayout:
    """Where everything of a board goes: each space's point, each city's label (x, y,
    anchor) and its box, the board's box."""

    where: dict[str, tuple[float, float]]
    labels: dict[str, tuple[float, float, str]]
    label_boxes: dict[str, Box]
    box: Box
    #: The boxes nothing else may cover: the cities' squares.
    squares: dict[str, Box]


def board_layout(ctx: DataSet) -> BoardLayout:
    """The layout of `ctx`'s board: its labels from `<data set>/picture.json` (checked: an
    error when a city lacks one or two collide), or placed here when the data set has
    no such file (an inline data set) or one for other cities."""
    found = _LAYOUTS.get(ctx.key)
    if found is None:
        if len(_LAYOUTS) > 16:
            _LAYOUTS.clear()
        found = _LAYOUTS[ctx.key] = _board_layout(ctx)
    return found


_LAYOUTS: dict[str, BoardLayout] = {}


#: How a label sits beside its city: (dx, dy, anchor) from the city's point to the text's.
Spec = tuple[float, float, str]


def _board_layout(ctx: DataSet) -> BoardLayout:
    st = style()
    board = ctx.board
    path = DATA / ctx.id / "picture.json"
    file = f"aufachse/{ctx.id}/picture.json"
    doc = _read(path, file) if path.is_file() else None
    c = _Check(file)
    height, inset = st.board_height, st.inset
    given: dict[str, Any] = {}
    if doc is not None:
        doc = c.obj(doc, "(document)")
        given = c.obj(doc.get("labels"), "labels")
        if set(given) != set(board.cities):
            doc, given = None, {}  # the file is for another board of this id (an inline data set): place here
        else:
            height = c.num(doc.get("board_height", height), "board_height", 100)
            if "inset" in doc:
                found = c.nums(doc["inset"], "inset", 4, 0)
                inset = (found[0], found[1], found[2], found[3])
    m = st.margin
    box = (m, st.board_top, st.width - m, st.board_top + height)
    where = project(ctx, box, inset)
    squares = {city: _square(where[city], st.city) for city in board.cities}
    if doc is None:
        chosen = auto_labels(ctx, where, box, squares)
    else:
        chosen = {city: label_spec(given[city], c, f"labels.{city}") for city in board.cities}
    labels, boxes = {}, {}
    for city, spec in chosen.items():
        labels[city], boxes[city] = label_at(ctx, where, city, spec)
    if doc is not None:
        for problem in label_problems(ctx, where, boxes, box, squares):
            c.fail(f"labels.{problem[0]}", problem[1])
    return BoardLayout(where, labels, boxes, box, squares)


def label_spec(value: Any, c: _Check, fld: str) -> Spec:
    """A label's place: the name of one of the style's places ("e", "nw", ...) or
    [dx, dy, anchor]."""
    st = style()
    if isinstance(value, str):
        if value not in st.labels:
            c.fail(fld, f"{value!r} is none of {', '.join(st.labels)}")
        return st.labels[value]
    if not isinstance(value, list) or len(value) != 3 or value[2] not in ANCHORS:
        c.fail(fld, f"must name a place ({', '.join(st.labels)}) or be [dx, dy, start|middle|end]")
    return c.num(value[0], f"{fld}[0]", -60, 60), c.num(value[1], f"{fld}[1]", -60, 60), value[2]


def project(ctx: DataSet, box: Box, inset: Sequence[float]) -> dict[str, tuple[float, float]]:
    """Every space's point: the cities by their coordinates (x east, y north) fitted into
    `box` less `inset` (left, top, right, bottom); road spaces evenly along their road."""
    board = ctx.board
    xs = [p[0] for p in board.positions.values()]
    ys = [p[1] for p in board.positions.values()]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    left, top = box[0] + inset[0], box[1] + inset[1]
    w, h = box[2] - inset[2] - left, box[3] - inset[3] - top
    where: dict[str, tuple[float, float]] = {}
    for c in board.cities:
        x, y = board.positions[c]
        where[c] = (round(left + (x - x0) / (x1 - x0 or 1) * w, 1), round(top + (y1 - y) / (y1 - y0 or 1) * h, 1))
    for eid, a, b, _kind, pips, _ev in board.edges:
        (ax, ay), (bx, by) = where[a], where[b]
        for k in range(1, pips):
            where[f"R{eid}.{k}"] = (round(ax + (bx - ax) * k / pips, 1), round(ay + (by - ay) * k / pips, 1))
    return where


def _square(p: tuple[float, float], half: float) -> Box:
    return p[0] - half, p[1] - half, p[0] + half, p[1] + half


def label_at(ctx: DataSet, where: dict[str, tuple[float, float]], city: str, spec: Spec) -> tuple[Spec, Box]:
    """A city's label drawn by `spec`: where its text goes (x, y, anchor) and its box."""
    st = style()
    dx, dy, anchor = spec
    x, y = where[city][0] + dx, where[city][1] + dy
    return (round(x, 1), round(y, 1), anchor), st.font.box(x, y, ctx.board.city_names[city], st.sizes["label"], anchor)


def label_problems(ctx: DataSet, where: dict[str, tuple[float, float]], boxes: dict[str, Box], area: Box,
                   squares: dict[str, Box]) -> Iterable[tuple[str, str]]:
    """What keeps the labels `boxes` from reading: one that leaves the board, covers a
    city or a road space, or comes too close to another label."""
    st = style()
    names = ctx.board.city_names
    cities = list(boxes)
    for i, city in enumerate(cities):
        b = boxes[city]
        if not inside(b, area):
            yield city, f"the label {names[city]!r} leaves the board"
        for other, sq in squares.items():
            if overlap(b, sq, st.gap):
                yield city, f"the label {names[city]!r} covers the city {names[other]!r}"
        for sid in ctx.board.roads:
            if overlap(b, _square(where[sid], st.space), 0):
                yield city, f"the label {names[city]!r} covers the road space {ctx.board.name(sid)!r}"
        for other in cities[i + 1:]:
            if overlap(b, boxes[other], st.gap):
                yield city, f"the labels {names[city]!r} and {names[other]!r} collide"


def auto_labels(ctx: DataSet, where: dict[str, tuple[float, float]], area: Box,
                squares: dict[str, Box]) -> dict[str, Spec]:
    """A place for each city's label where it collides with nothing, found greedily (the
    most crowded cities first): on the board, off every city and road space, apart from
    the labels placed before, crossing as few roads as can be and near its city. The
    style's named places are tried first, then every place within `search` of the city."""
    st = style()
    board = ctx.board
    segments = [(where[a], where[b]) for _e, a, b, _k, _p, _ev in board.edges]
    spaces = [_square(where[s], st.space) for s in board.roads]
    reach, step = int(st.search[0]), int(st.search[1])
    grid = [(float(dx), float(dy), anchor) for anchor in ANCHORS
            for dx in range(-reach, reach + 1, step) for dy in range(-reach, reach + 1, step)]
    font, size = st.font, st.sizes["label"]
    widest = max(font.width(name, size) for name in board.city_names.values())

    def crowd(city: str) -> float:
        x, y = where[city]
        return -sum(1 / (1 + math.hypot(x - where[o][0], y - where[o][1])) for o in board.cities if o != city)

    placed: dict[str, Box] = {}
    chosen: dict[str, Spec] = {}
    for city in sorted(board.cities, key=crowd):
        x, y = where[city]
        near = (x - widest - reach - 10, y - reach - 30, x + widest + reach + 10, y + reach + 30)
        room = _Room(area, where[city], font.width(board.city_names[city], size),
                     [o for o in placed.values() if overlap(near, o)],
                     [o for o in squares.values() if overlap(near, o)],
                     [o for o in spaces if overlap(near, o)], [(p, q) for p, q in segments if crosses(near, p, q)])
        best = min((room.cost(spec, rank / 100) for rank, spec in enumerate(st.labels.values())), key=lambda t: t[0])
        if best[0] >= 100:
            best = min([best, *(room.cost(spec, 0.5) for spec in grid)], key=lambda t: t[0])
        chosen[city] = best[2]
        placed[city] = best[1]
    return chosen


@dataclass(frozen=True)
class _Room:
    """What a city's label must keep clear of (`auto_labels`): the board, the labels
    placed, the cities and road spaces near, the roads that pass near."""

    area: Box
    at: tuple[float, float]
    width: float
    labels: list[Box]
    cities: list[Box]
    spaces: list[Box]
    roads: list[tuple[tuple[float, float], tuple[float, float]]]

    def cost(self, spec: Spec, rank: float) -> tuple[float, Box, Spec]:
        """How bad a label by `spec` is (infinite when it collides), its box, `spec`."""
        st = style()
        size = st.sizes["label"]
        (x, y), (dx, dy, anchor), w = self.at, spec, self.width
        left = x + dx - (0 if anchor == "start" else w / 2 if anchor == "middle" else w)
        b = (left, y + dy - st.font.ascent * size, left + w, y + dy + st.font.descent * size)
        if not inside(b, self.area) or any(overlap(b, o, st.gap) for o in self.labels) \
                or any(overlap(b, sq, st.gap) for sq in self.cities):
            return math.inf, b, spec
        far = math.hypot(max(b[0] - x, 0, x - b[2]), max(b[1] - y, 0, y - b[3]))
        return (100 * sum(overlap(b, sp) for sp in self.spaces) + sum(crosses(b, p, q) for p, q in self.roads)
                + far / 4 + rank), b, spec


def wrap(text: str, width: float, size: float, bold: bool = False) -> list[str]:
    """`text` in lines no wider than `width` (broken between words; a word too long for a
    line is broken between its letters)."""
    return style().font.fit.wrap(text, size, width, bold)


def token_width(marks: Sequence[str]) -> float:
    """How wide a truck is when the widest of `marks` (its driver's initials) must fit in
    it: at least a disc, or a pill round the letters with `pad` either side."""
    st = style()
    size = st.sizes["token"]
    return max([2 * st.token_r, *(st.font.width(m, size, True) + 2 * st.pad for m in marks)])


def token_offsets(n: int, width: float) -> list[tuple[float, float]]:
    """Where `n` trucks `width` wide on one space sit, around their group's centre: rows
    of `per_row`, as far apart as `step` keeps two discs."""
    st = style()
    across = width + st.token_step - 2 * st.token_r
    rows = [min(st.per_row, n - k) for k in range(0, n, st.per_row)]
    out = []
    for r, count in enumerate(rows):
        for i in range(count):
            out.append(((i - (count - 1) / 2) * across, (r - (len(rows) - 1) / 2) * st.token_step))
    return out


def token_box(x: float, y: float, width: float) -> Box:
    r = style().token_r
    return x - width / 2, y - r, x + width / 2, y + r


def place_tokens(groups: Sequence[tuple[tuple[float, float], int]], texts: list[Box], area: Box,
                 marks: Sequence[Box], width: float) -> list[tuple[float, float]]:
    """A centre for each group of trucks `width` wide (a space's point and how many stand
    there): the first candidate (rings of `rings` around the point, `directions` to a
    ring) where their boxes leave the board and every text in `texts` alone (the placed
    groups' boxes are added to `texts`), covering as few of `marks` (spaces, cities,
    markers) as can be. Deterministic."""
    st = style()
    out = []
    for (px, py), n in groups:
        offsets = token_offsets(n, width)
        reach = max(st.rings) + max(max(abs(dx), abs(dy)) for dx, dy in offsets) + width + st.gap
        near = (px - reach, py - reach, px + reach, py + reach)
        close = [t for t in texts if overlap(near, t)]
        covered = [m for m in marks if overlap(near, m)]
        best: tuple[float, float, float] | None = None
        for ring in st.rings:
            for k in range(st.directions):
                a = math.pi / 2 + 2 * math.pi * k / st.directions  # below first, then around
                cx, cy = px + ring * math.cos(a), py + ring * math.sin(a)
                boxes = [token_box(cx + dx, cy + dy, width) for dx, dy in offsets]
                if not all(inside(b, area) for b in boxes):
                    continue
                if any(overlap(b, t, st.gap) for b in boxes for t in close):
                    continue
                cost = ring + st.cover * sum(overlap(b, m) for b in boxes for m in covered)
                if best is None or cost < best[0]:
                    best = (cost, cx, cy)
            if best is not None and best[0] <= ring:
                break
        if best is None:  # nowhere free: beside the point (never seen on the shipped board)
            best = (0.0, px, py + st.rings[0])
        cx, cy = best[1], best[2]
        out.append((round(cx, 1), round(cy, 1)))
        texts.extend(token_box(cx + dx, cy + dy, width) for dx, dy in offsets)
    return out
