"""The layout of the Fantasy Business picture, read from `engine/data/fantasy/picture.json`,
and the measuring of its texts.

The file holds every number the picture is drawn with (its width, margins, font sizes,
card sizes, colours) and the advance widths of the picture's font, so that a text can be
measured here, without a browser (by `engine.core.textfit`, at the size of its role): a
long name is cut with an ellipsis (the full text then goes in a `<title>`) or wrapped
onto more lines before it could run into its neighbour. The file is validated on load
(a bad file names the file and the field), including the reading contract: every font
size, drawn `width` user units wide in a column `read_at.column_px` CSS px wide, is at
least `read_at.min_text_px` CSS px.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, NoReturn

from engine.core.errors import DataError
from engine.core.textfit import Face, Font

DATA = Path(__file__).resolve().parent.parent / "data" / "fantasy"
FILE = "picture.json"
FORMAT = "fantasy-picture/1"
FONT_ROLES = ("title", "heading", "name", "text", "note", "card")
LINE_ROLES = ("headline", "heading", "waiting", "auction", "proposal")
COLOUR_ROLES = ("background", "ink", "ink_on_dark", "line", "rule", "empty", "facedown", "special", "auction",
                "unknown")
_HEX = re.compile(r"^#[0-9a-fA-F]{6}$")
_DASH = re.compile(r"^\d+(\.\d+)?( \d+(\.\d+)?)+$")


@dataclass(frozen=True)
class Look:
    width: int
    margin: int
    gap: int
    section_gap: int
    items_gap: int
    row_gap: int
    line_height: float
    middle_to_baseline: float
    name_column: int
    sizes: dict[str, int]
    card_height: int
    card_padding: int
    card_radius: int
    card_dash: str
    highlight_outset: float
    highlight_width: float
    place_margin: int
    swatch: int
    swatch_radius: int
    max_lines: dict[str, int]
    colours: dict[str, str]
    palette: tuple[str, ...]
    family: str
    font: Font  # the advance widths of the font's two weights

    def line(self, role: str) -> float:
        """The distance between two baselines of texts of `role`."""
        return round(self.sizes[role] * self.line_height, 1)

    def measure(self, text: str, role: str, bold: bool = False) -> float:
        """The width of `text` in user units when drawn at the size of `role` (never under
        the width the font draws it at: unknown characters count wide)."""
        return self.font.width(text, self.sizes[role], bold)

    def fit(self, text: str, role: str, width: float, bold: bool = False) -> str:
        """`text` if it fits in `width`, else its longest start that fits with an ellipsis."""
        return self.font.cut(text, self.sizes[role], width, bold)

    def wrap(self, text: str, role: str, width: float, lines: int, bold: bool = False) -> list[str]:
        """`text` broken into at most `lines` lines of at most `width` (at spaces where it can,
        inside a word too long for a line); the last line ends with an ellipsis when the
        text does not fit (the caller then gives the whole text in a `<title>`)."""
        return self.font.wrap(text, self.sizes[role], width, bold, lines=lines)


@lru_cache(maxsize=1)
def look() -> Look:
    """The validated layout file shipped with the engine."""
    path = DATA / FILE
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(FILE, "(syntax)", str(exc)) from None
    return parse_look(doc, FILE)


def parse_look(doc: Any, file: str) -> Look:  # noqa: C901 - one check per field
    def fail(field: str, problem: str) -> NoReturn:
        raise DataError(file, field, problem)

    def number(value: Any, field: str, least: float = 0, whole: bool = True) -> Any:
        kinds = (int,) if whole else (int, float)
        if not isinstance(value, kinds) or isinstance(value, bool) or value < least:
            fail(field, f"must be a {'whole ' if whole else ''}number of at least {least}, not {value!r}")
        return value

    def table(value: Any, field: str, keys: tuple[str, ...]) -> dict[str, Any]:
        if not isinstance(value, dict) or sorted(value) != sorted(keys):
            fail(field, f"must be an object with exactly the keys {', '.join(keys)}")
        return value

    def colour(value: Any, field: str) -> str:
        if not isinstance(value, str) or not _HEX.match(value):
            fail(field, f"must be a colour #rrggbb, not {value!r}")
        return value

    def face(value: Any, field: str, safety: float) -> Face:
        value = table(value, field, ("default", "widths"))
        default = number(value["default"], f"{field}.default", 1)
        widths: dict[str, float] = {}
        groups = value["widths"]
        if not isinstance(groups, dict) or not groups:
            fail(f"{field}.widths", "must map widths to the characters of that width")
        for w, chars in groups.items():
            if not w.isdigit() or not 0 <= int(w) <= 3000:
                fail(f"{field}.widths.{w}", "keys are widths from 0 to 3000 thousandths of an em")
            if not isinstance(chars, str) or not chars:
                fail(f"{field}.widths.{w}", "must be a non-empty string of characters")
            for ch in chars:
                if ch in widths:
                    fail(f"{field}.widths.{w}", f"{ch!r} has two widths")
                widths[ch] = int(w) / 1000
        return Face(widths, default / 1000, safety)

    if not isinstance(doc, dict):
        fail("(document)", "must be a JSON object")
    if doc.get("format") != FORMAT:
        fail("format", f"must be {FORMAT!r}")
    width = number(doc.get("width"), "width", 200)
    margin = number(doc.get("margin"), "margin", 0)
    read = table(doc.get("read_at"), "read_at", ("column_px", "min_text_px"))
    column = number(read["column_px"], "read_at.column_px", 1)
    least = number(read["min_text_px"], "read_at.min_text_px", 1, whole=False)
    sizes = table(doc.get("font_sizes"), "font_sizes", FONT_ROLES)
    for role in FONT_ROLES:
        number(sizes[role], f"font_sizes.{role}", 1)
        if sizes[role] * column / width < least:
            fail(f"font_sizes.{role}", f"{sizes[role]} reads at {sizes[role] * column / width:.1f} CSS px in a "
                                       f"{column} px column, under {least}")
    name_column = number(doc.get("name_column"), "name_column", 40)
    if name_column > (width - 2 * margin) / 2:
        fail("name_column", "must leave at least half the width for the cards")
    card = table(doc.get("card"), "card", ("height", "padding", "radius", "dash"))
    if not isinstance(card["dash"], str) or not _DASH.match(card["dash"]):
        fail("card.dash", "must be dash and gap lengths, as \"4 3\"")
    highlight = table(doc.get("highlight"), "highlight", ("outset", "width"))
    swatch = table(doc.get("swatch"), "swatch", ("size", "radius"))
    middle = number(doc.get("middle_to_baseline"), "middle_to_baseline", 0, whole=False)
    if middle >= 0.5:
        fail("middle_to_baseline", "must be under half an em")
    line_height = number(doc.get("line_height"), "line_height", 1.2, whole=False)
    card_height = number(card["height"], "card.height", 1)
    if card_height < sizes["card"] * line_height:
        fail("card.height", f"must hold one line of card text ({sizes['card'] * line_height:.0f})")
    lines = table(doc.get("max_lines"), "max_lines", LINE_ROLES)
    colours = table(doc.get("colours"), "colours", COLOUR_ROLES)
    palette = doc.get("palette")
    if not isinstance(palette, list) or not palette:
        fail("palette", "must be a non-empty list of colours")
    font = table(doc.get("font"), "font", ("family", "safety", "normal", "bold"))
    if not isinstance(font["family"], str) or not font["family"].strip() or any(c in font["family"] for c in "\"<>&"):
        fail("font.family", "must be a list of font names")
    safety = number(font["safety"], "font.safety", 1, whole=False)
    return Look(
        width=width, margin=margin,
        gap=number(doc.get("gap"), "gap", 2),
        section_gap=number(doc.get("section_gap"), "section_gap", 0),
        items_gap=number(doc.get("items_gap"), "items_gap", 2),
        row_gap=number(doc.get("row_gap"), "row_gap", 2),
        line_height=line_height, name_column=name_column,
        sizes=dict(sizes), card_height=card_height,
        card_padding=number(card["padding"], "card.padding", 0),
        card_radius=number(card["radius"], "card.radius", 0),
        card_dash=card["dash"],
        highlight_outset=number(highlight["outset"], "highlight.outset", 0, whole=False),
        highlight_width=number(highlight["width"], "highlight.width", 0.5, whole=False),
        place_margin=number(doc.get("place_margin"), "place_margin", 0),
        swatch=number(swatch["size"], "swatch.size", 4),
        swatch_radius=number(swatch["radius"], "swatch.radius", 0),
        middle_to_baseline=middle,
        max_lines={k: number(v, f"max_lines.{k}", 1) for k, v in lines.items()},
        colours={k: colour(v, f"colours.{k}") for k, v in colours.items()},
        palette=tuple(colour(c, f"palette[{i}]") for i, c in enumerate(palette)),
        family=font["family"],
        font=Font(face(font["normal"], "font.normal", safety), face(font["bold"], "font.bold", safety)),
    )  # fmt: skip
