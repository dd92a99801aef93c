"""The picture's layout data (engine/aufachse/layout.py): the style and each board's
label places are checked on load, a collision or a size that would not read is refused
naming the file and the field, and a board without label places (an inline data set)
gets them placed. How the pictures read in a browser: tests/service/test_picture_aufachse.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from engine.aufachse import layout
from engine.aufachse.dataset import DATA, DEFAULT, load_data
from engine.aufachse.picture import initials
from engine.core.errors import DataError


def _doc(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def test_every_size_reads_at_the_column_and_the_shipped_labels_collide_nowhere() -> None:
    st = layout.style()
    doc = _doc("picture.json")
    for size in st.sizes.values():
        assert size * doc["column"] / st.width >= doc["min_px"]
    ctx = load_data(DEFAULT)
    lay = layout.board_layout(ctx)
    assert set(lay.labels) == set(ctx.board.cities)
    assert not list(layout.label_problems(ctx, lay.where, lay.label_boxes, lay.box, lay.squares))
    assert set(lay.where) == set(ctx.board.spaces)
    assert all(layout.inside((x, y, x, y), lay.box) for x, y in lay.where.values())


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the data folder the layout reads from (its caches emptied)."""
    shutil.copytree(DATA, tmp_path, dirs_exist_ok=True)
    monkeypatch.setattr(layout, "DATA", tmp_path)
    monkeypatch.setattr(layout, "_LAYOUTS", {})
    return tmp_path


@pytest.mark.parametrize("city,spec,problem", [
    ("Hamburg", [0, 4, "middle"], "covers the city 'Hamburg'"),
    ("Koeln", "e", "collide"),
    ("Wien", "e", "leaves the board"),
    ("Kassel", [9, 4, "start"], "covers the road space"),
    ("Berlin", "up", "is none of"),
    ("Berlin", [1, 2], "must name a place"),
])
def test_a_label_that_would_not_read_is_refused_on_load(folder: Path, city: str, spec: Any, problem: str) -> None:
    path = folder / DEFAULT / "picture.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    if city == "Koeln":  # Köln's label onto Dortmund's: put Dortmund's beside Köln's east
        doc["labels"]["Dortmund"] = [-20, 43, "start"]
    doc["labels"][city] = spec
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(DataError) as info:
        layout.board_layout(load_data(DEFAULT))
    assert info.value.details["field"].startswith("labels."), info.value
    assert problem in str(info.value) and f"{DEFAULT}/picture.json" in str(info.value)


@pytest.mark.parametrize("change,fld", [
    (lambda d: d["sizes"].update(text=10), "sizes.text"),
    (lambda d: d.update(width=1000), "sizes."),
    (lambda d: d["labels"].update(e=[9, 4, "left"]), "labels.e"),
    (lambda d: d["tokens"].update(r=3), "tokens."),
    (lambda d: d["colours"].update(text="black"), "colours.text"),
    (lambda d: d["font"]["normal"].update({"0.5": "a"}), "font.normal.0.5"),
])
def test_a_style_that_would_not_read_is_refused(change: Any, fld: str) -> None:
    doc = _doc("picture.json")
    change(doc)
    with pytest.raises(DataError) as info:
        layout.parse_style(doc)
    assert info.value.details["field"].startswith(fld), info.value


def test_a_board_without_label_places_gets_them_placed(folder: Path) -> None:
    """An inline data set (no picture.json of its own), and a shipped id whose file is for
    other cities: the labels are placed where they collide with nothing."""
    parts = {p: _doc(f"{DEFAULT}/{p}.json") for p in ("cities", "edges", "orders", "events", "components")}
    inline = load_data({"id": "my-board", "name": "My board", **parts})
    path = folder / DEFAULT / "picture.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    del doc["labels"]["Wien"]
    path.write_text(json.dumps(doc), encoding="utf-8")
    for ctx in (inline, load_data(DEFAULT)):
        lay = layout.board_layout(ctx)
        assert set(lay.labels) == set(ctx.board.cities)
        assert not list(layout.label_problems(ctx, lay.where, lay.label_boxes, lay.box, lay.squares))


def test_text_wraps_to_its_width_and_trucks_keep_off_texts() -> None:
    st = layout.style()
    text = "won, to load: Bremen → Salzburg (2 goods, pays 2800)"
    lines = layout.wrap(text, 200, 12)
    assert " ".join(lines) == text and len(lines) > 1
    assert all(st.font.width(line, 12) <= 200 for line in lines)
    assert layout.wrap("Donaudampfschifffahrtsgesellschaft", 60, 12)[0] != "Donaudampfschifffahrtsgesellschaft"
    ctx = load_data(DEFAULT)
    lay = layout.board_layout(ctx)
    texts = list(lay.label_boxes.values())
    groups = [(lay.where["Koeln"], 6), (lay.where["Dortmund"], 2), (lay.where["R16.1"], 2)]
    width = layout.token_width(["Gr", "Gu", "A"])
    assert width > 2 * st.token_r
    centres = layout.place_tokens(groups, texts, lay.box, list(lay.squares.values()), width)
    boxes = [layout.token_box(cx + dx, cy + dy, width)
             for ((_p, n), (cx, cy)) in zip(groups, centres, strict=True) for dx, dy in layout.token_offsets(n, width)]
    assert len(boxes) == 10
    for i, b in enumerate(boxes):
        assert layout.inside(b, lay.box)
        assert not any(layout.overlap(b, t, st.gap) for t in lay.label_boxes.values())
        assert not any(layout.overlap(b, o) for o in boxes[i + 1:])


def test_a_truck_shows_as_many_letters_as_tell_its_driver_from_the_others() -> None:
    assert initials(["Anna", "Bernd"]) == ["A", "B"]
    assert initials(["Greta (greedy bot)", "Gustav (greedy bot)", "Anna"]) == ["Gr", "Gu", "A"]
    assert initials(["Anna", "Anna", "<b>"]) == ["A1", "A2", "b"]
    assert initials(["Hanna", "Hannah", "Hans"]) == ["H1", "H2", "H3"]
