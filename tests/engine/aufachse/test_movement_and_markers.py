"""Movement (§8) and markers (§9): M1–M12, K1–K4, R2–R4, R6, R23, R26, AD1, AD4, AD5,
and the worked examples AA-2 … AA-5, AA-13, AA-16."""

from __future__ import annotations

from engine.aufachse.context import ctx_of
from engine.aufachse.movement import Mover, blocked, values
from tests.engine.aufachse.helpers import (
    BLUE,
    GAME,
    GREEN,
    RED,
    YELLOW,
    illegal,
    legal,
    open_move,
    put,
    step,
    table,
    types,
)


def test_m1_m2_m3_r4_space_graph_ferries_and_canonical_order() -> None:
    s = table()
    b = ctx_of(s).board
    assert len(b.spaces) == 32 + 189 and len(b.events) == 40
    assert b.adj["Hannover"] == ("R3.2", "R7.2", "R15.4", "R17.1", "R18.1")
    assert b.adj["R17.1"] == ("Hannover", "R17.2") and "R17.2" in b.events and "R17.1" not in b.events
    # ferries are ordinary spaces: Rotterdam–Flensburg 3 pips (2 spaces), Flensburg–Rostock 2 (1 space)
    assert b.adj["R56.1"] == ("Rotterdam", "R56.2") and b.adj["R57.1"] == ("Flensburg", "Rostock")
    assert b.distances(["Rotterdam"])["Flensburg"] == 3 and b.distances(["Flensburg"])["Rostock"] == 2
    assert list(b.spaces[:32]) == sorted(b.spaces[:32]) and b.spaces[32] == "R1.1" and b.spaces[35] == "R2.1"


def test_aa_2_r2_m7_m8_m10_a_six_used_as_three_then_pick_or_decline() -> None:
    s = table()
    put(s, RED, "Hannover")
    open_move(s, RED, [6, 2])
    path = ["R18.1", "R18.2", "Magdeburg"]
    illegal(s, RED, {"die": "A", "n": 3, "path": path}, "pick_required")
    legal(s, RED, {"die": "A", "n": 3, "path": path, "arrive": {"decline": True}})
    illegal(s, RED, {"die": "A", "n": 6, "path": path, "arrive": {"decline": True}}, "must_use_full_value")
    illegal(s, RED, {"die": "B", "n": 3, "path": path}, "bad_die")
    # with N = 3 Hamburg and Bremen are equally reachable
    for p in (["R3.2", "R3.1", "Hamburg"], ["R7.2", "R7.1", "Bremen"]):
        legal(s, RED, {"die": "A", "n": 3, "path": p, "arrive": {"pick": 1}})
    # Magdeburg in OC: the 6 may stop there, forfeiting, and may not pick
    put(s, RED, "Hannover", hand=["O14"])  # O14 … → Magdeburg is a hand order starting in Kassel: not OC
    illegal(s, RED, {"die": "A", "n": 6, "path": path}, "must_use_full_value")
    put(s, RED, "Hannover", loaded=["O13"])  # O13 Bremen → Magdeburg loaded: Magdeburg is in OC
    legal(s, RED, {"die": "A", "n": 6, "path": path})
    illegal(s, RED, {"die": "A", "n": 6, "path": path, "arrive": {"decline": True}}, "cannot_pick")
    assert list(values([6, 2])) == [("A", 1), ("A", 2), ("A", 3), ("A", 4), ("A", 5), ("A", 6), ("B", 2)]


def test_aa_3_ad1_m8_l2_forfeiting_at_an_own_start_city_and_loading_on_arrival() -> None:
    s = table()
    put(s, YELLOW, "Hannover", hand=["O14"])
    open_move(s, YELLOW, [5, 2])
    path = ["R17.1", "R17.2", "R17.3", "Kassel"]
    illegal(s, YELLOW, {"die": "A", "path": path, "arrive": {"load": ["O14"], "decline": True}}, "cannot_pick")
    s2, ev = step(s, YELLOW, {"die": "A", "path": path, "arrive": {"load": ["O14"]}})
    assert s2["players"][YELLOW]["loaded"] == ["O14"] and "event_card" not in types(ev)
    assert len(s2["events"]) == len(s["events"])
    # with the 2 exactly onto R17.2 the top event card is drawn
    s["events"] = ["E02"] + s["events"]
    s3, ev = step(s, YELLOW, {"die": "B", "path": ["R17.1", "R17.2"]})
    assert "event_card" in types(ev) and s3["players"][YELLOW]["cash"] == 5500


def test_aa_4_r6_r23_k1_k4_m8_roadworks_blocking_and_stopping_in_front() -> None:
    s = table()
    put(s, BLUE, "Magdeburg")
    open_move(s, BLUE, [1, 4])
    illegal(s, BLUE, {"die": "A", "path": ["R20.1"]}, "bad_roadworks")
    illegal(s, BLUE, {"die": "A", "path": ["R20.1"], "roadworks": "R20.1"}, "bad_roadworks")
    illegal(s, BLUE, {"die": "A", "path": ["R20.1"], "roadworks": "Magdeburg"}, "bad_roadworks")
    s, ev = step(s, BLUE, {"die": "A", "path": ["R20.1"], "roadworks": "R19.1"})
    assert s["roadworks"] == "R19.1" and "roadworks" in types(ev)
    put(s, YELLOW, "Berlin")
    open_move(s, YELLOW, [5, 3])
    illegal(s, YELLOW, {"die": "B", "path": ["R19.2", "R19.1", "Magdeburg"]}, "blocked_path")
    legal(s, YELLOW, {"die": "A", "path": ["R19.2"]})
    s2, ev = step(s, YELLOW, {"die": "B", "path": ["R19.2"]})
    assert [e["forfeited"] for e in ev if e["type"] == "moved"] == [2]  # M10: N − k pips forfeited
    assert "event_card" not in types(ev) and s2["players"][YELLOW]["at"] == "R19.2"
    # from Hannover along R18 with a 5, Magdeburg is not "in front of" R19.1
    put(s, RED, "Hannover")
    open_move(s, RED, [5, 5])
    illegal(s, RED, {"die": "A", "path": ["R18.1", "R18.2", "Magdeburg"]}, "must_use_full_value")
    put(s, RED, "Hannover", loaded=["O13"])
    legal(s, RED, {"die": "A", "path": ["R18.1", "R18.2", "Magdeburg"]})
    # a 6 declared as 1 carries the same duty
    s3 = table()
    put(s3, BLUE, "Magdeburg")
    open_move(s3, BLUE, [6, 6])
    illegal(s3, BLUE, {"die": "A", "n": 1, "path": ["R20.1"]}, "bad_roadworks")
    legal(s3, BLUE, {"die": "B", "n": 1, "path": ["R20.1"], "roadworks": "R19.1"})


def test_aa_5_r3_m6_full_space_may_be_passed_not_ended_on() -> None:
    s = table()
    put(s, YELLOW, "R3.2")
    put(s, GREEN, "R3.2")
    put(s, RED, "Hannover")
    open_move(s, RED, [1, 3])
    illegal(s, RED, {"die": "A", "path": ["R3.2"], "roadworks": "R5.1"}, "space_full")
    for sp in ("R7.2", "R15.4", "R17.1", "R18.1"):
        legal(s, RED, {"die": "A", "path": [sp], "roadworks": "R5.1"})
        illegal(s, RED, {"die": "A", "path": [sp]}, "bad_roadworks")
    legal(s, RED, {"die": "B", "path": ["R3.2", "R3.1", "Hamburg"], "arrive": {"pick": 2}})


def test_m4_r2_paths_are_simple_and_adjacent() -> None:
    s = table()
    put(s, RED, "Hannover")
    open_move(s, RED, [3, 3])
    illegal(s, RED, {"die": "A", "path": ["R18.1", "Hannover", "R17.1"]}, "bad_path")
    illegal(s, RED, {"die": "A", "path": ["R18.1", "R18.2", "R18.1"]}, "bad_path")
    illegal(s, RED, {"die": "A", "path": ["R18.2", "R18.1", "Magdeburg"]}, "bad_path")
    illegal(s, RED, {"die": "A", "path": ["R18.1", "R18.2", "Magdeburg", "R19.1"]}, "bad_path")
    illegal(s, RED, {"die": "A", "path": "R18.1"}, "malformed_order")


def test_m5_k2_a_truck_may_leave_a_marker_space_and_markers_stay() -> None:
    s = table()
    put(s, RED, "R18.1")
    s["roadworks"] = "R18.1"
    open_move(s, RED, [2, 2])
    s2, _ = step(s, RED, {"die": "A", "path": ["R18.2", "Magdeburg"], "arrive": {"decline": True}})
    assert s2["roadworks"] == "R18.1"


def test_m6_m8_a_road_space_end_needs_room_for_the_mover() -> None:
    s = table()
    put(s, YELLOW, "R18.1")
    put(s, RED, "Hannover")
    open_move(s, RED, [1, 2])
    legal(s, RED, {"die": "A", "path": ["R18.1"], "roadworks": "R5.1"})  # one other truck there


def test_m9_ad4_aa_16_waiting_next_to_a_marker_and_blocked_truck() -> None:
    s = table()
    put(s, BLUE, "R18.2")
    s["roadworks"] = "R18.1"
    open_move(s, BLUE, [1, 4])
    legal(s, BLUE, {"die": "B", "path": ["Magdeburg", "R19.1", "R19.2", "Berlin"], "arrive": {"decline": True}})
    illegal(s, BLUE, {"die": "A", "path": []}, "bad_roadworks")
    s2, ev = step(s, BLUE, {"die": "A", "path": [], "roadworks": "R5.1"})
    assert s2["players"][BLUE]["at"] == "R18.2" and s2["roadworks"] == "R5.1"
    # no marker next to the truck: waiting is refused
    s3 = table()
    put(s3, BLUE, "R18.2")
    open_move(s3, BLUE, [2, 2])
    illegal(s3, BLUE, {"die": "A", "path": []}, "cannot_wait")
    # AA-16 blocked: five players, RED on R8.3 with (1, 1), R8.2 and R8.4 full
    s4 = table(5)
    put(s4, RED, "R8.3")
    for seat, sp in ((1, "R8.2"), (2, "R8.2"), (3, "R8.4"), (4, "R8.4")):
        put(s4, seat, sp)
    assert blocked(ctx_of(s4), s4, RED, [1, 1])
    assert not blocked(ctx_of(s4), s4, RED, [1, 2])


def test_m11_r26_t2_a_blocked_truck_is_not_asked_and_the_dice_are_still_rolled() -> None:
    s = table(5)
    put(s, RED, "R8.3")
    for seat, sp in ((1, "R8.2"), (2, "R8.2"), (3, "R8.4"), (4, "R8.4")):
        put(s, seat, sp)
    s["first"] = RED
    s["turn"] = 4
    s["queue"] = [{"t": "turn", "seat": RED}]
    # find a stream position that rolls (1, 1): force the roll by patching the dice module input
    from engine.aufachse import dice as dice_mod
    from engine.aufachse import flow
    from engine.aufachse.context import Run

    original = dice_mod.roll

    def fake(state, seat):  # type: ignore[no-untyped-def]
        state["dice"] = [1, 1]
        state["rolls"] += f" {state['turn_no']}:{seat}:1:1"
        return [1, 1]

    flow.roll = fake  # type: ignore[assignment]
    try:
        run = Run(ctx_of(s), s)
        flow.advance(run)
    finally:
        flow.roll = original  # type: ignore[assignment]
    kinds = [e["type"] for e in run.ev]
    assert "blocked" in kinds and s["players"][RED]["at"] == "R8.3"
    assert s["pending"]["seat"] == 1  # the turn passed without asking RED


def test_m12_loading_before_the_move_makes_the_destination_an_own_city() -> None:
    s = table()
    put(s, RED, "Bremen", hand=["O13"])  # Bremen → Magdeburg
    open_move(s, RED, [5, 5])
    path = ["R7.1", "R7.2", "Hannover", "R18.1", "R18.2"]
    legal(s, RED, {"die": "A", "path": path})
    short = ["R7.1", "R7.2", "Hannover"]
    illegal(s, RED, {"die": "A", "path": short}, "must_use_full_value")
    s2 = table()
    put(s2, RED, "Hannover", hand=["O10"])  # Hannover → Berlin: loading first makes Berlin OC
    open_move(s2, RED, [6, 1])
    p = ["R18.1", "R18.2", "Magdeburg", "R19.1", "R19.2", "Berlin"]
    legal(s2, RED, {"die": "A", "n": 6, "path": p, "arrive": {"decline": True}})
    s2["players"][RED]["hand"] = ["O13"]
    open_move(s2, RED, [6, 6])
    illegal(s2, RED, {"die": "A", "n": 6, "path": p[:3]}, "must_use_full_value")


def test_k1_ad5_roadworks_target_rules() -> None:
    s = table()
    put(s, RED, "Hannover")
    put(s, YELLOW, "R7.1")
    s["jam"] = {"at": "R3.1", "owner": YELLOW, "turn": 1}
    s["roadworks"] = "R5.1"
    open_move(s, RED, [1, 2])
    illegal(s, RED, {"die": "A", "path": ["R18.1"], "roadworks": "R3.1"}, "bad_roadworks")
    illegal(s, RED, {"die": "A", "path": ["R18.1"], "roadworks": "R5.1"}, "bad_roadworks")
    legal(s, RED, {"die": "A", "path": ["R18.1"], "roadworks": "R7.1"})  # another truck's space is allowed
    illegal(s, RED, {"die": "B", "path": ["R18.1", "R18.2"], "roadworks": "R7.1"}, "bad_roadworks")


def test_k3_k4_the_jam_blocks_like_the_roadworks() -> None:
    s = table()
    put(s, YELLOW, "Magdeburg")
    s["jam"] = {"at": "R18.1", "owner": RED, "turn": 1}
    open_move(s, YELLOW, [5, 5])
    illegal(s, YELLOW, {"die": "A", "path": ["R18.2", "R18.1", "Hannover"]}, "blocked_path")
    legal(s, YELLOW, {"die": "A", "path": ["R18.2"]})


def test_aa_13_r16_r31_default_move_heads_for_the_nearest_own_city() -> None:
    s = table()
    put(s, GREEN, "Hannover", hand=["O14"])
    open_move(s, GREEN, [2, 5])
    d = GAME.default_order(s, GREEN)
    assert d["die"] == "B" and d["n"] == 5 and d["path"] == ["R17.1", "R17.2", "R17.3", "Kassel"]
    assert d["arrive"] == {"load": ["O14"]}
    s2, ev = step(s, GREEN, d)
    assert s2["players"][GREEN]["loaded"] == ["O14"] and s2["display"] == s["display"]


def test_r31_default_never_calls_a_movable_truck_blocked() -> None:
    s = table()
    put(s, RED, "R18.2")
    put(s, YELLOW, "Magdeburg")
    s["roadworks"] = "R19.1"
    s["jam"] = {"at": "R20.1", "owner": YELLOW, "turn": 1}
    open_move(s, RED, [6, 6])
    d = GAME.default_order(s, RED)
    legal(s, RED, d)
    m = Mover(ctx_of(s), s, RED)
    assert m.any_path(d["n"])
