"""The picture's layout file is validated on load (a bad file names the file and the
field, and a font size that would read under 11 CSS px in a 780 px column is refused);
texts are measured, cut and wrapped to the room they have. (How the picture reads in a
browser: tests/service/test_picture_fantasy.py.)"""

from __future__ import annotations

import copy
import html
import json
import re
from typing import Any

import pytest

from engine.core.errors import DataError
from engine.core.textfit import ELLIPSIS
from engine.fantasy.look import DATA, FILE, look, parse_look
from tests.engine.fantasy.helpers import GAME, names, table

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
    (lambda d: d["card"].update(dash="4;3"), "card.dash"),
    (lambda d: d.update(middle_to_baseline=0.7), "middle_to_baseline"),
    (lambda d: d["swatch"].pop("radius"), "swatch"),
    (lambda d: d["highlight"].update(width=0), "highlight.width"),
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


def test_the_picture_says_the_auction_proposals_sheets_and_scores_with_its_places() -> None:
    s = table(4, 2, hands={0: ["SP1", "DS1"]}, items={1: ["SW1", "SW2"], 2: ["HH1"]}, crowns={0: 1})
    view = GAME.view(s, 0)
    view["auction"] = {"mode": "offer", "stage": "bid", "pos": 2, "card": None, "min": 1, "high": 5, "bidder": 3}
    view["proposals"] = [{"from": 1, "to": 3, "give": {"items": ["SW1"], "crowns": 2, "specials": 1},
                          "get": {"items": ["HH1"], "crowns": 0, "specials": 0}}]
    view["players"][0]["sheet"] = {"SW": 7}
    view["prices"] = {"1": {"SW": 8, "HH": 3}, "2": {}}
    svg = GAME.picture(view, names(4))
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", svg)).split())
    who = names(4)
    assert f"Up for auction: the face-down special at position 2; high bid 5 by {who[3]}." in text
    assert f"{who[1]} offers {who[3]}: {who[1]} gives Swords, 1 special card, 2 crowns; {who[3]} gives Healing Herbs." \
        in text
    assert f"Sealed price sheets you may see {who[0]} Swords 7" in text
    assert f"Price sheets of the last income {who[1]} Healing Herbs 3, Swords 8 {who[2]} no items" in text
    assert f"{who[0]} 1 crown; 2 specials" in text and "First Buyer marker" in text
    assert "2 × Swords" in text and f"{who[0]} specials in hand Divination Spell: played at any time" in text
    for place in ("seat-0", "seat-3", "items-1-SW", "items-2-HH", "hand-SP1", "hand-DS1", "type-MP"):
        assert re.search(rf'<g id="{place}"><title>[^<]+</title>', svg), place
    view["over"], view["scores"], view["pending"] = True, {"0": 12, "1": 30, "2": 5, "3": 9}, None
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", GAME.picture(view, who))).split())
    assert "game over" in text and "final score 30" in text and "Waiting" not in text


def test_a_sealed_step_says_who_is_asked_not_who_is_waited_for() -> None:
    """Price sheets are sealed: the engine cannot know who has handed one in, so the
    picture and summary say who is asked; a step of one seat still says "Waiting for"."""
    s = table(3, 2)
    who = names(3)
    view = GAME.view(s, "public")
    view["pending"] = {"kind": "price", "seats": [0, 1, 2]}
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", GAME.picture(view, who))).split())
    assert f"Asked of {who[0]}, {who[1]}, {who[2]}" in text and "Waiting for" not in text
    assert f"Asked of {who[0]}, {who[1]}, {who[2]}: submit your sealed price sheet." in GAME.summary(view, who)
    view["pending"] = {"kind": "accept", "seats": [1]}
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", GAME.picture(view, who))).split())
    assert f"Waiting for {who[1]}" in text and "Asked of" not in text
    assert f"Waiting for {who[1]}: accept or reject a trading proposal." in GAME.summary(view, who)
