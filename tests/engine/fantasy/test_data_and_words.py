"""The data file is validated on load (a bad file names the file and the field); the words
and pictures for people read well and come from views only."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.core.errors import DataError
from engine.fantasy.components import DATA, FILE, components, parse_components
from tests.engine.fantasy.helpers import GAME, names

DOC = json.loads((DATA / FILE).read_text(encoding="utf-8"))


def test_data_file_loads_with_display_names() -> None:
    c = components()
    assert c.type_names["BA"] == "Bow & Arrows" and c.special_names["AL"] == "Antitrust Law"
    assert c.deck[:2] == ("HH1", "HH2") and c.deck[-1] == "TR3"


@pytest.mark.parametrize(("edit", "field"), [
    (lambda d: d.update(format="x"), "format"),
    (lambda d: d["item_types"][2].update(base=0), "item_types[2].base"),
    (lambda d: d["item_types"][0].pop("name"), "item_types[0].name"),
    (lambda d: d["specials"][1].update(window="later"), "specials[1].window"),
    (lambda d: d["specials"].pop(), "specials"),
    (lambda d: d.update(start_crowns=-1), "start_crowns"),
    (lambda d: d["rounds"].update({"x": 3}), "rounds.x"),
    (lambda d: d["item_types"].append(dict(d["item_types"][0])), "item_types/specials"),
])
def test_a_bad_data_file_names_the_file_and_the_field(edit, field) -> None:  # type: ignore[no-untyped-def]
    doc = copy.deepcopy(DOC)
    edit(doc)
    with pytest.raises(DataError) as info:
        parse_components(doc, "bad.json")
    assert info.value.details == {"file": "bad.json", "field": field}
    assert info.value.message.startswith(f"bad.json: {field}: ")


def test_summary_picture_and_sentences() -> None:
    s = GAME.setup(4, {}, 5)
    v = GAME.view(s, 1)
    text = GAME.summary(v, names(4))
    assert "Fantasy Business, round 1 of 10" in text and "10 crowns" in text
    svg = GAME.picture(v, names(4))
    assert svg.startswith("<svg") and "<title" in svg and "<desc" in svg and len(svg) < 100_000
    assert GAME.headline(v) == "round 1 of 10, phase 1: offer"
    req = GAME.requests(s)[0]
    assert GAME.describe_request(req, GAME.view(s, req.seat), names(4)).startswith(names(4)[req.seat])
    for kind in ("select", "open", "bid", "lone", "price", "spy", "w_open", "w_close", "w_spy", "w_reveal", "accept"):
        assert GAME.order_schema(kind)["properties"]


def test_cli_prints_a_readable_log() -> None:
    out = subprocess.run([sys.executable, "-m", "engine", "play", "fantasy", "--seats", "8", "--bots", "trader",
                          "--seed", "7"], capture_output=True, text=True, cwd=Path(__file__).resolve().parents[3],
                         timeout=120, check=True).stdout
    assert "Round 2 begins" in out and "Game over. Scores:" in out and " bought " in out
    assert "{" not in "\n".join(out.splitlines()[12:])  # sentences, not JSON
