"""The Die Händler board file (rules §18, checks §18.9; H-2, H-26).

Every check of §18.9 is exercised on a one-field edit of the shipped default board: the
edit must raise `DataError` naming the file and the field. Valid edited copies must load,
from a board file and inline as the game option `board`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engine.core.errors import DataError, OptionsError
from engine.haendler import board as board_mod
from engine.haendler.board import load_board, parse_board
from tests.engine.haendler.helpers import GAME, A, board_doc, new_game, step

DEFAULT_FILE = board_mod.BOARDS / "reconstructed-default.toml"
Doc = dict[str, Any]


def default_doc() -> Doc:
    """A fresh, editable copy of the shipped default board document."""
    return board_doc()


def city(doc: Doc, cid: str) -> dict[str, Any]:
    return next(c for c in doc["cities"] if c["id"] == cid)


def road_index(doc: Doc, a: str, b: str) -> int:
    return next(i for i, r in enumerate(doc["roads"]) if r["from"] == a and r["to"] == b)


def drop_road(doc: Doc, a: str, b: str) -> None:
    del doc["roads"][road_index(doc, a, b)]


def add_city(doc: Doc, cid: str, produces: list[str]) -> None:
    doc["cities"].append({"id": cid, "name": cid, "produces": produces})


# -- the default board itself -------------------------------------------------------------------
def test_h_2_default_board_file_matches_section_18() -> None:
    b = load_board("reconstructed-default")
    assert b.cities == ("BRU", "PAR", "KOE", "AUG", "LYO", "GEN")
    assert {c: set(g) for c, g in b.produces.items()} == {
        "BRU": {"tuch", "salz", "nahrung"}, "PAR": {"tuch", "wein", "nahrung"}, "KOE": {"wein", "salz", "eisen"},
        "AUG": {"tuch", "eisen", "seide"}, "LYO": {"wein", "nahrung", "seide"}, "GEN": {"salz", "eisen", "seide"},
    }  # fmt: skip
    road_spaces = [n for n in b.nodes if b.is_space(n)]
    assert len(road_spaces) == 48  # 44 plain spaces + 4 junctions
    assert sum(1 for n in road_spaces if ">" in n) == 44
    assert b.succ["KOE"] == ("KOE>BRU:1", "KOE>AUG:1")  # board order (H-76)
    assert b.succ["KOE>BRU:4"] == ("BRU",) and b.pred["REI"] == ("BRU>REI:2", "PAR>REI:2")
    assert b.messenger_start == "KOE>BRU:3" and b.start_cities == ("PAR", "KOE", "GEN")
    assert b.price_rows == ((100, 600), (200, 700), (200, 800), (300, 900), (400, 1000))
    assert b.upkeep == (0, 100, 200, 300, 400, 600, 800, 1000, 1300, 1600)
    assert b.arrival_level_price == (1000, 1200, 1400, 1600, 1800, 2000, 2300, 2600, 3000)
    assert (b.bonus_values, b.bonus_with_cart, b.bonus_without_cart) == ((0, 100, 200, 300, 400, 500), 0, 200)


def test_h_2_default_board_every_type_made_in_exactly_three_cities() -> None:
    b = load_board("reconstructed-default")
    for good in b.goods:
        assert sum(good in made for made in b.produces.values()) == 3


# -- every check of §18.9 ------------------------------------------------------------------------
def _seide_nowhere(d: Doc) -> None:
    for c in d["cities"]:
        c["produces"] = [g for g in c["produces"] if g != "seide"]


def _two_cities(d: Doc) -> None:
    d["cities"] = d["cities"][:2]


def _junction_dead_end(d: Doc) -> None:
    d["junctions"].append({"id": "XXX", "name": "Nowhere"})
    d["roads"].append({"from": "BRU", "to": "XXX", "spaces": 1})


def _city_no_exit(d: Doc) -> None:
    drop_road(d, "LYO", "PAR")
    drop_road(d, "LYO", "GEN")


def _island(d: Doc) -> None:
    add_city(d, "XA", ["tuch"])
    add_city(d, "XB", ["wein"])
    d["roads"] += [{"from": "XA", "to": "XB", "spaces": 1}, {"from": "XB", "to": "XA", "spaces": 1}]


def _one_way_dead_region(d: Doc) -> None:
    # XA can be reached from the network but cannot get back to it.
    add_city(d, "XA", ["tuch"])
    add_city(d, "XB", ["wein"])
    d["roads"] += [
        {"from": "BRU", "to": "XA", "spaces": 1},
        {"from": "XA", "to": "XB", "spaces": 0},
        {"from": "XB", "to": "XA", "spaces": 0},
    ]


def _set(path: str, value: Any) -> Callable[[Doc], None]:
    def edit(d: Doc) -> None:
        *head, last = path.split(".")
        target: Any = d
        for key in head:
            target = target[int(key)] if key.isdigit() else target[key]
        if value is _DELETE:
            del target[last]
        else:
            target[int(last) if last.isdigit() else last] = value

    return edit


_DELETE = object()

# (rule check, edit, field the error must name)
BAD: list[tuple[str, Callable[[Doc], None], str]] = [
    # Goods: exactly the six types of H-3, each produced somewhere.
    ("goods_renamed", _set("goods", ["cloth", "wein", "salz", "nahrung", "eisen", "seide"]), "goods"),
    ("goods_missing_one", _set("goods", ["tuch", "wein", "salz", "nahrung", "eisen"]), "goods"),
    ("goods_duplicated", _set("goods", ["tuch", "tuch", "salz", "nahrung", "eisen", "seide"]), "goods"),
    ("goods_seventh", _set("goods", ["tuch", "wein", "salz", "nahrung", "eisen", "seide", "gold"]), "goods"),
    ("goods_absent", _set("goods", _DELETE), "goods"),
    ("type_produced_nowhere", _seide_nowhere, "cities"),
    ("city_produces_unknown_good", _set("cities.0.produces", ["tuch", "gold"]), "cities[0].produces"),
    # Cities: at least 3; start_cities names 3 distinct cities.
    ("two_cities", _two_cities, "cities"),
    ("duplicate_city_id", _set("cities.1.id", "BRU"), "cities[1].id"),
    ("start_cities_duplicate", _set("start_cities", ["PAR", "PAR", "GEN"]), "start_cities"),
    ("start_cities_two", _set("start_cities", ["PAR", "KOE"]), "start_cities"),
    ("start_cities_four", _set("start_cities", ["PAR", "KOE", "GEN", "BRU"]), "start_cities"),
    ("start_cities_unknown", _set("start_cities", ["PAR", "KOE", "ROM"]), "start_cities"),
    ("start_cities_junction", _set("start_cities", ["PAR", "KOE", "REI"]), "start_cities"),
    # Roads: two different existing nodes, spaces >= 0.
    ("road_unknown_node", _set("roads.0.to", "ROM"), "roads[0]"),
    ("road_to_itself", _set("roads.0.to", "BRU"), "roads[0]"),
    ("road_from_a_road_space", lambda d: d["roads"].append({"from": "KOE>BRU:1", "to": "PAR", "spaces": 0}),
     "roads[14]"),
    ("road_from_not_a_string", _set("roads.0.from", ["BRU"]), "roads[0]"),
    ("road_negative_spaces", _set("roads.2.spaces", -1), "roads[2].spaces"),
    ("road_spaces_not_integer", _set("roads.2.spaces", "3"), "roads[2].spaces"),
    ("road_spaces_bool", _set("roads.2.spaces", True), "roads[2].spaces"),
    # No two roads with the same from and to.
    ("road_duplicated", lambda d: d["roads"].append({"from": "KOE", "to": "BRU", "spaces": 2}), "roads[14]"),
    # Every node has a successor; every city has an entry; strongly connected.
    ("junction_dead_end", _junction_dead_end, "roads"),
    ("city_without_exit", _city_no_exit, "roads"),
    ("city_without_entry", lambda d: drop_road(d, "LYO", "PAR"), "roads"),
    ("not_strongly_connected_island", _island, "roads"),
    ("not_strongly_connected_one_way", _one_way_dead_region, "roads"),
    ("junction_is_a_city", lambda d: d["junctions"].append({"id": "BRU"}), "junctions[4].id"),
    # Messenger: a road space.
    ("messenger_in_a_city", _set("messenger_start", "BRU"), "messenger_start"),
    ("messenger_unknown_space", _set("messenger_start", "KOE>BRU:5"), "messenger_start"),
    ("messenger_absent", _set("messenger_start", _DELETE), "messenger_start"),
    # Prices: >= 2 rows; buy never falls; sell rises.
    ("one_price_row", _set("price_rows", [[100, 600]]), "price_rows"),
    ("price_row_not_a_pair", _set("price_rows.1", [200]), "price_rows"),
    ("price_negative", _set("price_rows.1", [-200, 700]), "price_rows"),
    ("buy_price_falls", _set("price_rows.3", [100, 900]), "price_rows[3]"),
    ("sell_price_flat", _set("price_rows.2", [200, 700]), "price_rows[2]"),
    ("sell_price_falls", _set("price_rows.4", [400, 800]), "price_rows[4]"),
    # Status: >= 2 levels; level 1 upkeep 0; upkeeps never decrease.
    ("one_status_level", _set("status_levels", [{"name": "Krämer", "upkeep": 0}]), "status_levels"),
    ("first_level_upkeep", _set("status_levels.0.upkeep", 100), "status_levels[0].upkeep"),
    ("upkeep_decreases", _set("status_levels.5.upkeep", 300), "status_levels[5].upkeep"),
    ("upkeep_not_integer", _set("status_levels.3.upkeep", "300"), "status_levels"),
    # Arrival track: exactly 9 entries.
    ("arrival_eight", _set("arrival_level_price", [1000, 1200, 1400, 1600, 1800, 2000, 2300, 2600]),
     "arrival_level_price"),
    ("arrival_ten", _set("arrival_level_price", [1000, 1200, 1400, 1600, 1800, 2000, 2300, 2600, 3000, 3500]),
     "arrival_level_price"),
    # Bonus track: values rise; both start values are in it.
    ("bonus_values_flat", _set("bonus_track.values", [0, 100, 100, 300, 400, 500]), "bonus_track.values"),
    ("bonus_values_fall", _set("bonus_track.values", [0, 200, 100, 300, 400, 500]), "bonus_track.values"),
    ("bonus_start_with_not_on_track", _set("bonus_track.start_with_cart", 50), "bonus_track.start_with_cart"),
    ("bonus_start_without_not_on_track", _set("bonus_track.start_without_cart", 600),
     "bonus_track.start_without_cart"),
    ("bonus_track_absent", _set("bonus_track", _DELETE), "bonus_track"),
    # The document's own header.
    ("wrong_format", _set("format", "die-haendler-board/2"), "format"),
]  # fmt: skip


@pytest.mark.parametrize(("check", "edit", "field"), BAD, ids=[b[0] for b in BAD])
def test_h_26_malformed_board_file_names_file_and_field(check: str, edit: Callable[[Doc], None], field: str) -> None:
    doc = default_doc()
    edit(doc)
    with pytest.raises(DataError) as info:
        parse_board(doc, "boards/edited.toml")
    err = info.value
    assert (err.details["file"], err.details["field"]) == ("boards/edited.toml", field), err.message
    assert err.message.startswith(f"boards/edited.toml: {field}: ")
    assert err.code == "bad_data_file"


@pytest.mark.parametrize(("check", "edit", "field"), BAD[::5], ids=[b[0] for b in BAD[::5]])
def test_h_26_malformed_inline_board_option_is_refused_at_setup(
    check: str, edit: Callable[[Doc], None], field: str
) -> None:
    doc = default_doc()
    doc["id"] = "my-board"
    edit(doc)
    with pytest.raises(DataError) as info:
        new_game(4, 1, 0, board=doc)
    assert info.value.details["field"] == field
    assert info.value.details["file"] == "board 'my-board'"
    assert "my-board" in info.value.message and field in info.value.message


# -- loading from files --------------------------------------------------------------------------
@pytest.fixture
def boards_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(board_mod, "BOARDS", tmp_path)
    board_mod._load_named.cache_clear()
    yield tmp_path
    board_mod._load_named.cache_clear()


def test_h_26_valid_edited_copy_of_the_default_board_file_loads(boards_dir: Path) -> None:
    text = DEFAULT_FILE.read_text(encoding="utf-8")
    text = text.replace('id = "reconstructed-default"', 'id = "edited-copy"')
    text = text.replace("[[100, 600], [200, 700]", "[[100, 500], [200, 700]")
    text = text.replace('messenger_start = "KOE>BRU:3"', 'messenger_start = "KOE>BRU:1"')
    (boards_dir / "edited-copy.toml").write_text(text, encoding="utf-8")
    b = load_board("edited-copy")
    assert b.id == "edited-copy" and b.price_rows[0] == (100, 500) and b.messenger_start == "KOE>BRU:1"
    assert "edited-copy" in board_mod.board_names()
    s = new_game(4, 1, 0, board="edited-copy")
    assert s["messenger"] == "KOE>BRU:1" and s["board"] == "edited-copy"


def test_h_26_malformed_board_file_names_its_path_and_field(boards_dir: Path) -> None:
    text = DEFAULT_FILE.read_text(encoding="utf-8").replace("stock_per_type = 9", "stock_per_type = 0")
    (boards_dir / "broken-stock.toml").write_text(text, encoding="utf-8")
    with pytest.raises(DataError) as info:
        load_board("broken-stock")
    assert info.value.message.startswith("boards/broken-stock.toml: stock_per_type: ")
    (boards_dir / "broken-syntax.toml").write_text("format = \n", encoding="utf-8")
    with pytest.raises(DataError) as info:
        new_game(4, 1, 0, board="broken-syntax")
    assert info.value.details == {"file": "boards/broken-syntax.toml", "field": "(syntax)"}


def test_h_26_unknown_or_unsafe_board_names_are_refused() -> None:
    with pytest.raises(DataError) as info:
        load_board("nope")
    assert info.value.details == {"file": "boards/nope.toml", "field": "(file)"}
    assert "reconstructed-default" in info.value.message  # lists the known boards
    with pytest.raises(DataError) as info:
        load_board("../components")
    assert info.value.details["field"] == "id"
    with pytest.raises(DataError) as info:
        new_game(4, 1, 0, board=5)
    assert info.value.details["file"] == "board"


# -- valid edits ---------------------------------------------------------------------------------
def test_h_26_valid_edited_copy_loads_inline_and_its_data_is_used() -> None:
    doc = default_doc()
    doc["id"] = "bigger"
    doc["junctions"].append({"id": "HUB", "name": "Hub"})
    doc["roads"] += [{"from": "STR", "to": "HUB", "spaces": 0}, {"from": "HUB", "to": "BRU", "spaces": 1}]
    doc["price_rows"] = [[100, 600], [100, 650], [200, 700], [200, 800], [300, 900], [400, 1000]]  # flat buy is fine
    doc["status_levels"] = [{"name": "Krämer", "upkeep": 0}, {"name": "Händler", "upkeep": 0}]  # flat upkeep is fine
    doc["stock_per_type"] = 5
    doc["start_cities"] = ["GEN", "BRU", "LYO"]
    doc["messenger_start"] = "HUB"  # a junction is a road space
    b = load_board(doc)
    assert b.succ["STR"] == ("STR>KOE:1", "STR>LYO:1", "HUB") and b.succ["HUB"] == ("HUB>BRU:1",)
    assert b.top_row == 6 and b.top_level == 2
    s = new_game(4, 1, 0, board=doc)
    assert s["board"] == doc and s["stock"] == {g: 5 for g in b.goods}
    assert [c["at"] for c in s["carts"]] == ["GEN", "BRU", "LYO"] and s["messenger"] == "HUB"
    # The state carries its inline board and still plays after a JSON round trip.
    s = json.loads(json.dumps(s))
    s2, ev = step(s, {A: {"goods": [{"good": "tuch", "city": "BRU"}]}})
    assert s2["players"][A]["money"] == 3900 and s2["stock"]["tuch"] == 4
    assert GAME.view(s2, A)["board"]["id"] == "bigger"


def test_h_26_two_inline_boards_with_the_same_id_do_not_share_data() -> None:
    cheap, dear = default_doc(), default_doc()
    dear["price_rows"][0] = [200, 600]
    s_cheap, s_dear = new_game(4, 1, 0, board=cheap), new_game(4, 1, 0, board=dear)
    assert GAME.requests(s_cheap)[0].choices["prices"]["tuch"] == 100
    assert GAME.requests(s_dear)[0].choices["prices"]["tuch"] == 200


def test_h_26_start_cities_option_is_checked_against_the_loaded_board() -> None:
    doc = default_doc()
    doc["cities"][0]["id"] = "BRG"
    for r in doc["roads"]:
        r["from"] = "BRG" if r["from"] == "BRU" else r["from"]
        r["to"] = "BRG" if r["to"] == "BRU" else r["to"]
    doc["messenger_start"] = "KOE>BRG:3"
    s = new_game(4, 1, 0, board=doc, start_cities=["BRG", "PAR", "KOE"])
    assert [c["at"] for c in s["carts"]] == ["BRG", "PAR", "KOE"]
    with pytest.raises(OptionsError):
        new_game(4, 1, 0, board=doc, start_cities=["BRU", "PAR", "KOE"])
