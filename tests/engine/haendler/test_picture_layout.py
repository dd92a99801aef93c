"""The board picture's layout file (engine/data/haendler/picture.toml) and its text
measure: the file is validated on load (a field that is missing, not a positive number,
or a font that would read below 11 px in the page's 780 px column is refused, naming
the field), and wrapping keeps every word, in order, within the width.

That the pictures read in a browser is tests/service/test_picture_haendler.py's.
"""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Callable
from typing import Any

import pytest

from engine.core.errors import DataError
from engine.haendler.board import DATA
from engine.haendler.picture import parse_style, style, text_width, wrap

DOC: dict[str, Any] = tomllib.loads((DATA / "picture.toml").read_text(encoding="utf-8"))


def test_the_shipped_layout_reads_at_780() -> None:
    st = style()
    assert st.width == 760 and st.readable == {"column": 765, "min_px": 11}
    assert min(st.fonts.values()) * 765 / st.width >= 11
    assert parse_style(DOC, "picture.toml") == st


BAD: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("format", lambda d: d.update(format="die-haendler-picture/0"), "format"),
    ("width_missing", lambda d: d.pop("width"), "width"),
    ("width_zero", lambda d: d.update(width=0), "width"),
    ("line_text", lambda d: d.update(line="1.3"), "line"),
    ("line_tight", lambda d: d.update(line=1.0), "line"),
    ("fonts_missing", lambda d: d.pop("fonts"), "fonts"),
    ("font_missing", lambda d: d["fonts"].pop("city"), "fonts.city"),
    ("font_bool", lambda d: d["fonts"].update(small=True), "fonts.small"),
    ("font_too_small", lambda d: d["fonts"].update(small=10.5), "fonts"),
    ("too_wide_for_fonts", lambda d: d.update(width=900), "fonts"),
    ("map_negative", lambda d: d["map"].update(height=-470), "map.height"),
    ("table_missing", lambda d: d["table"].pop("row"), "table.row"),
    ("glyph_zero", lambda d: d["glyphs"].update(lower=0), "glyphs.lower"),
    ("classes_not_list", lambda d: d["glyphs"].update(classes="ijl"), "glyphs.classes"),
    ("class_no_chars", lambda d: d["glyphs"]["classes"][0].update(chars=""), "glyphs.classes[0].chars"),
    ("class_no_em", lambda d: d["glyphs"]["classes"][1].pop("em"), "glyphs.classes[1].em"),
]


@pytest.mark.parametrize(("check", "edit", "field"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_layout_file_is_refused_naming_the_field(check: str, edit: Callable[[dict[str, Any]], None],
                                                       field: str) -> None:  # fmt: skip
    doc = copy.deepcopy(DOC)
    edit(doc)
    with pytest.raises(DataError) as info:
        parse_style(doc, "edited.toml")
    assert (info.value.details["file"], info.value.details["field"]) == ("edited.toml", field)


def test_text_width_grows_with_size_letters_and_bold() -> None:
    assert text_width("", 13) == 0
    assert text_width("Köln", 26) == pytest.approx(2 * text_width("Köln", 13))
    assert text_width("Köln", 13, bold=True) > text_width("Köln", 13)
    assert text_width("WM", 13) > text_width("il", 13) * 2
    assert text_width("商人", 13) > text_width("ab", 13)  # wide characters (and emoji) take more than an em


@pytest.mark.parametrize("width", [60, 140, 300])
def test_wrap_keeps_every_word_in_order_within_the_width(width: float) -> None:
    text = ('Miranda Montgomery-Fairweather of the Old Salt Road, <Ann & Co>, Jo "Jack" Ng '
            "and Christopher-Maximilian-Alexander-Wolfgang-Amadeus")
    lines = wrap(text, 13, width)
    assert len(lines) > 1
    assert all(text_width(line, 13) <= width for line in lines), lines
    assert "".join("".join(lines).split()) == "".join(text.split())  # nothing dropped or cut off
    assert wrap("short", 13, width) == ["short"] and wrap("", 13, width) == [""]


def test_a_long_word_breaks_after_a_hyphen_when_one_fits() -> None:
    lines = wrap("Christopher-Maximilian", 13, text_width("Christopher-Maxi", 13))
    assert lines == ["Christopher-", "Maximilian"]
