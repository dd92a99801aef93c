"""The kids variant (§16) and the data set (§19): Y1–Y4, R15, R20, R22, R29, AD15, T7,
B1–B5, AA-15."""

from __future__ import annotations

import copy
import json

import pytest

from engine.aufachse.dataset import DATA, DEFAULT, load_data
from engine.core.errors import DataError, OptionsError
from tests.engine.aufachse.helpers import GAME, RED, YELLOW, illegal, new_game, open_move, put, step, table, types


def test_y1_r15_kids_setup_five_cards_a_pile_of_ten_no_trailers() -> None:
    for n in range(2, 7):
        s = new_game(n, 4, kids=True)
        assert all(len(p["hand"]) == 5 for p in s["players"])
        assert len(s["display"]) == 4 and len(s["deck"]) == 6 and len(s["reserve"]) == 54 - 5 * n - 10
        assert s["supply"] == {"small": 0, "large": 0}


def test_aa_15_y3_ad15_r20_r29_automatic_taking_and_refills() -> None:
    s = table(kids=True)
    s["display"] = ["O24", "O20", "O12", "O48"]
    s["deck"] = ["O53", "O18"]
    put(s, RED, "R17.3", loaded=["O05", "O13"], hand=[])  # Load 2 + 2 = 4 of 6
    open_move(s, RED, [1, 1])
    s, ev = step(s, RED, {"die": "A", "path": ["Kassel"], "roadworks": "R5.1"})
    red = s["players"][RED]
    assert red["open"] == ["O20"] and "O20" not in s["display"]  # 4 + 3 > 6: into the hand
    assert s["display"] == ["O24", "O12", "O48", "O53"]  # R29: slide, and the refill in slot 4
    assert [RED, "O53"] in s["fresh"] and "O53" not in red["open"]  # R20: refilled while RED stands there
    # at the start of RED's next turn, still in Kassel: O53 is not taken
    while s["turn"] != RED or not s["pending"] or s["pending"]["kind"] != "move":
        seat = s["pending"]["seat"]
        s, _ = step(s, seat, GAME.default_order(s, seat))
    assert "O53" in s["display"] and s["players"][RED]["at"] == "Kassel"
    # another truck arriving there first takes it
    s2 = copy.deepcopy(s)
    s2["players"][YELLOW]["at"] = "R17.3"
    open_move(s2, YELLOW, [1, 1])
    s2, ev = step(s2, YELLOW, {"die": "A", "path": ["Kassel"], "roadworks": "R6.1"})
    assert "O53" in s2["players"][YELLOW]["loaded"]


def test_y2_y4_t7_kids_no_picks_and_taking_at_turn_start() -> None:
    s = table(kids=True)
    put(s, RED, "Hannover")
    open_move(s, RED, [3, 3])
    illegal(s, RED, {"die": "A", "path": ["R3.2", "R3.1", "Hamburg"], "arrive": {"decline": True}}, "cannot_pick")
    # T7: a truck standing in a start city at the start of its turn takes the order
    s["display"] = ["O24", "O01", "O12", "O48"]
    s["pending"], s["queue"], s["turn"] = None, [{"t": "turn", "seat": RED}], 3
    from engine.aufachse import flow
    from engine.aufachse.context import Run, ctx_of

    run = Run(ctx_of(s), s)
    flow.advance(run)
    assert s["players"][RED]["loaded"] == ["O01"] and "taken" in types(run.ev)
    # Y4: a displayed order's start city is not an own-order city: no forfeiting there
    s2 = table(kids=True)
    s2["display"] = ["O14", "O01", "O12", "O48"]  # O14 starts in Kassel
    put(s2, RED, "Hannover")
    open_move(s2, RED, [5, 5])
    illegal(s2, RED, {"die": "A", "path": ["R17.1", "R17.2", "R17.3", "Kassel"]}, "must_use_full_value")
    # E10 pays its fallback in the kids variant
    s3 = table(kids=True)
    put(s3, RED, "Hannover")
    s3["events"] = ["E10"] + s3["events"]
    open_move(s3, RED, [2, 2])
    s3, _ = step(s3, RED, {"die": "A", "path": ["R17.1", "R17.2"]})
    assert s3["players"][RED]["cash"] == 6000 and s3["players"][RED]["trailers"] == {"small": 0, "large": 0}


def _doc() -> dict:
    folder = DATA / DEFAULT
    doc = {p: json.loads((folder / f"{p}.json").read_text(encoding="utf-8"))
           for p in ("cities", "edges", "orders", "events", "components")}
    return {"id": "test-copy", "name": "a copy", **doc}


def test_b1_b2_b5_the_substitute_data_set_as_shipped() -> None:
    d = load_data(DEFAULT)
    assert len(d.board.cities) == 32 and len(d.board.edges) == 57 and len(d.orders) == 54
    assert sum(e.qty for e in d.events.values()) == 28 and len(d.event_ids) == 28
    o1, o2 = d.orders["O01"], d.orders["O02"]
    assert (o1.start, o1.dest, o1.goods, o1.pay, o1.costs) == ("Hannover", "Muenchen", 3, 2400,
                                                              (300, 600, 900, 1300, 1800))
    assert (o2.pay, o2.cost(4)) == (3900, 2800)
    goods = sorted(o.goods for o in d.orders.values())
    assert [goods.count(g) for g in range(2, 7)] == [8, 14, 14, 10, 8]
    assert d.board.city_names["Muenchen"] == "München" and d.board.city_names["Koeln"] == "Köln"
    fav = sum(e.qty for e in d.events.values() if e.id.startswith("E"))
    assert fav == 19 and d.events["E07"].type == "clear_markers" and d.events["N08"].effect["by"] == "left_neighbour"
    # a game may use an inline copy, with the same result
    a = GAME.setup(3, {"data": _doc()}, 5)
    b = GAME.setup(3, {}, 5)
    assert a["players"] == b["players"] and a["display"] == b["display"]


def test_b3_b4_r22_bad_data_names_the_file_and_field() -> None:
    cases = [
        (lambda d: d["orders"][4].update(goods=7), "O05.goods"),
        (lambda d: d["orders"][0].update(dest="Hannover"), "O01.dest"),
        (lambda d: d["orders"][1]["bids"][2].update(net=1), "O02.bids[2].net"),
        (lambda d: d["orders"][1]["bids"][2].update(cost=100), "O02.bids[2].cost"),
        (lambda d: d["orders"].__setitem__(1, dict(d["orders"][0])), "[1].id"),
        (lambda d: d["edges"][0].update(to="Atlantis"), "[0].to"),
        (lambda d: d["edges"][0].update(event_spaces=[4]), "[0].event_spaces"),
        (lambda d: d["events"][0]["effect"].update(type="teleport"), "E01.effect.type"),
        (lambda d: d.__setitem__("orders", d["orders"][:41]), "(document)"),
        (lambda d: d["cities"].append({"id": "Island", "name": "Island", "country": "XX", "x": 1, "y": 1,
                                       "status": "substitute"}), "(graph)"),
    ]
    for change, fld in cases:
        doc = _doc()
        change(doc)
        with pytest.raises(DataError) as info:
            load_data(doc)
        assert info.value.details["field"] == fld, (fld, info.value.message)
    with pytest.raises(DataError):
        load_data("no-such-set")
    with pytest.raises((DataError, OptionsError)):
        GAME.setup(2, {"data": "../etc"}, 1)
