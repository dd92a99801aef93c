"""The picture's layout file is validated on load (a bad file names the file and the
field, and a font size that would read under 11 CSS px in a 780 px column is refused);
texts are measured, cut and wrapped to the room they have. (How the picture reads in a
browser: tests/service/test_picture_fantasy.py.)"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from engine.core.errors import DataError
from engine.fantasy.look import DATA, ELLIPSIS, FILE, look, parse_look

DOC = json.loads((DATA / FILE).read_text(encoding="utf-8"))


def test_the_file_loads_and_reads_at_780() -> None:
    lk = look()
    assert lk.width == DOC["width"] and lk.sizes == DOC["font_sizes"]
    assert all(size * 780 / lk.width >= 11 for size in lk.sizes.values())
    assert lk.measure("W" * 10, "text") > lk.measure("i" * 10, "text") > 0
    assert lk.measure("Ann", "name", bold=True) > lk.measure("Ann", "name")


@pytest.mark.parametrize(("edit", "field"), [
    (lambda d: d.update(format="x"), "format"),
    (lambda d: d["font_sizes"].update(note=10), "font_sizes.note"),
    (lambda d: d.update(width=1200), "font_sizes.heading"),
    (lambda d: d["font_sizes"].pop("card"), "font_sizes"),
    (lambda d: d.update(name_column=500), "name_column"),
    (lambda d: d["card"].update(height=10), "card.height"),
    (lambda d: d["colours"].update(ink="black"), "colours.ink"),
    (lambda d: d["palette"].append("#12345"), "palette[8]"),
    (lambda d: d["max_lines"].update(waiting=0), "max_lines.waiting"),
    (lambda d: d["font"]["normal"]["widths"].update({"3001": "Q"}), "font.normal.widths.3001"),
    (lambda d: d["font"]["bold"]["widths"].update({"999": "W"}), "font.bold.widths.999"),
    (lambda d: d["font"].update(family='x"><script>'), "font.family"),
    (lambda d: d.update(line_height=1), "line_height"),
])
def test_a_bad_layout_file_names_the_file_and_the_field(edit: Any, field: str) -> None:
    doc = copy.deepcopy(DOC)
    edit(doc)
    with pytest.raises(DataError) as info:
        parse_look(doc, "bad.json")
    assert info.value.details == {"file": "bad.json", "field": field}
    assert info.value.message.startswith(f"bad.json: {field}: ")


def test_a_text_is_cut_to_its_room_with_an_ellipsis() -> None:
    lk = look()
    assert lk.fit("Bob", "name", 200, bold=True) == "Bob"
    long = "Ann " + "W" * 76
    cut = lk.fit(long, "name", 200, bold=True)
    assert cut.endswith(ELLIPSIS) and long.startswith(cut[:-1]) and len(cut) > 8
    assert lk.measure(cut, "name", bold=True) <= 200 < lk.measure(cut[:-1] + "W" + ELLIPSIS, "name", bold=True)


def test_a_text_is_wrapped_at_spaces_and_inside_a_word_too_long() -> None:
    lk = look()
    text = "Waiting for Maximiliane Wilhelmina von Hohenzollern-Sigmaringen, Bob and " + "M" * 60
    lines = lk.wrap(text, "text", 300, 99)
    assert len(lines) > 3 and all(lk.measure(ln, "text") <= 300 for ln in lines)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert text.startswith(lines[0] + " ") and lines[1][0] != " "  # broken at a space
    short = lk.wrap(text, "text", 300, 2)
    assert len(short) == 2 and short[0] == lines[0] and short[1].endswith(ELLIPSIS)
    assert lk.wrap("", "text", 300, 2) == [""] and lk.wrap("Bob", "text", 300, 2) == ["Bob"]
