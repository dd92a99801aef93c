"""Events (§10), money and debts (§14): V1–V4, R5, R7, R17–R19, R24, R25, R33, AD6–AD8,
AD13, E07, E11, E12, E08, N08, $1–$5, T1, T4, T5, T8, AA-6, AA-11, AA-12."""

from __future__ import annotations

from typing import Any

from engine.aufachse.context import Run, ctx_of, event_payment, settle
from engine.aufachse.dice import roll_log
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


def draw_at_r17_2(s: dict[str, Any], seat: int, card: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """`seat` moves Hannover → R17.1 → R17.2 with a 2 and draws `card`."""
    put(s, seat, "Hannover")
    rest = list(s["events"])
    if card in rest:
        rest.remove(card)
    s["events"] = [card] + rest
    open_move(s, seat, [2, 4])
    return step(s, seat, {"die": "A", "path": ["R17.1", "R17.2"]})


def test_aa_6_r5_money2_debt_of_twice_the_amount_settled_on_delivery() -> None:
    s = table()
    put(s, GREEN, "Hannover", cash=300)
    s, ev = draw_at_r17_2(s, GREEN, "N02")
    g = s["players"][GREEN]
    assert g["cash"] == 300 and g["debts"] == [{"to": None, "amount": 2000, "card": "N02"}]
    assert "debt" in types(ev)
    from engine.aufachse.context import final_money

    assert final_money(s, GREEN) == -1700
    # later GREEN delivers O01 (2400): the debt is paid at once
    put(s, GREEN, "R41.4", loaded=["O01"])
    open_move(s, GREEN, [1, 3])
    s, ev = step(s, GREEN, {"die": "A", "path": ["Muenchen"], "roadworks": "R5.1",
                            "arrive": {"decline": True}})
    assert s["players"][GREEN]["cash"] == 700 and s["players"][GREEN]["debts"] == []
    assert types(ev).index("delivered") < types(ev).index("debt_paid")


def test_v1_v2_r33_exact_stop_draws_once_and_the_card_leaves_the_game() -> None:
    s = table()
    before = len(s["events"])
    s, ev = draw_at_r17_2(s, RED, "E01")
    assert s["players"][RED]["cash"] == 6000 and len(s["events"]) == before - 1 and s["used_events"] == ["E01"]
    assert "E01" not in s["discard"]
    # forfeiting onto an event space draws nothing (needs a marker in front)
    s2 = table()
    put(s2, RED, "Hannover")
    s2["roadworks"] = "R17.3"
    open_move(s2, RED, [4, 4])
    s3, ev = step(s2, RED, {"die": "A", "path": ["R17.1", "R17.2"]})
    assert "event_card" not in types(ev)
    # an empty event deck: nothing happens
    s4 = table()
    s4["events"] = []
    put(s4, RED, "Hannover")
    open_move(s4, RED, [2, 2])
    _, ev = step(s4, RED, {"die": "A", "path": ["R17.1", "R17.2"]})
    assert "event_deck_empty" in types(ev)


def test_v3_v4_gain_pay_per_goods_trailer_skip() -> None:
    s = table()
    put(s, RED, "Hannover", loaded=["O14", "O13"])  # 5 goods
    s2, _ = draw_at_r17_2(s, RED, "E05")
    assert s2["players"][RED]["cash"] == 5500
    s2, _ = draw_at_r17_2(table(), RED, "E05")
    assert s2["players"][RED]["cash"] == 5300  # minimum 300
    s3 = table()
    put(s3, RED, "Hannover", loaded=["O14"])
    s3, _ = draw_at_r17_2(s3, RED, "N05")
    assert s3["players"][RED]["cash"] == 4700
    s4, _ = draw_at_r17_2(table(), RED, "E10")
    assert s4["players"][RED]["trailers"]["small"] == 1 and s4["supply"]["small"] == 3
    s5 = table()
    s5["supply"]["small"] = 0
    s5, _ = draw_at_r17_2(s5, RED, "E10")
    assert s5["players"][RED]["cash"] == 6000
    s6, ev = draw_at_r17_2(table(), RED, "N06")
    assert s6["players"][RED]["skips"] == 1


def test_t1_a_skipped_turn_rolls_nothing_and_skips_add_up() -> None:
    s = table()
    s["players"][YELLOW]["skips"] = 2
    s, ev = draw_at_r17_2(s, RED, "E02")  # RED's turn ends; YELLOW skips
    assert "skipped" in types(ev) and s["players"][YELLOW]["skips"] == 1
    assert all(r[1] != YELLOW for r in roll_log(s))
    assert s["turn"] == BLUE


def test_e11_ad7_draw_from_the_reserve_is_hidden() -> None:
    s = table()
    top = s["reserve"][0]
    s, ev = draw_at_r17_2(s, RED, "E11")
    assert s["players"][RED]["hand"] == [top]
    private = [e for e in ev if e["type"] == "reserve_card"]
    assert private[0]["visible_to"] == [RED]
    assert all(top not in str(e) for e in ev if e["visible_to"] == "all")
    assert GAME.view(s, YELLOW)["players"][RED]["hand_size"] == 1


def test_e12_ad8_r19_money5_collect_from_each_with_debts_to_the_drawer() -> None:
    s = table()
    put(s, YELLOW, "Trieste", cash=100)
    s, ev = draw_at_r17_2(s, RED, "E12")
    assert s["players"][RED]["cash"] == 5400
    assert s["players"][YELLOW]["debts"] == [{"to": RED, "amount": 400, "card": "E12"}]
    assert [e["seat"] for e in ev if e["type"] in ("paid", "debt")] == [YELLOW, BLUE, GREEN]


def test_money3_r24_settlement_skips_a_debt_too_large_and_pays_younger_ones() -> None:
    s = table()
    p = s["players"][RED]
    p["cash"] = 0
    p["debts"] = [{"to": None, "amount": 3000, "card": "N03"}, {"to": None, "amount": 600, "card": "N04"}]
    run = Run(ctx_of(s), s)
    p["cash"] = 1000
    settle(run, RED)
    assert p["debts"] == [{"to": None, "amount": 3000, "card": "N03"}] and p["cash"] == 400


def test_money5_r19_chained_settlement_in_seat_order() -> None:
    s = table()
    ps = s["players"]
    for q in ps:
        q["cash"] = 0
    ps[RED]["debts"] = [{"to": BLUE, "amount": 400, "card": "E12"}]
    ps[BLUE]["debts"] = [{"to": YELLOW, "amount": 300, "card": "E12"}]
    ps[YELLOW]["debts"] = [{"to": GREEN, "amount": 200, "card": "E12"}]
    run = Run(ctx_of(s), s)
    ps[RED]["cash"] = 400
    settle(run, RED)
    assert [q["cash"] for q in ps] == [0, 100, 100, 200]
    assert all(not q["debts"] for q in ps)
    assert [e["seat"] for e in run.ev if e["type"] == "debt_paid"] == [RED, BLUE, YELLOW]


def test_money1_money4_cash_never_negative_debtors_may_still_buy() -> None:
    s = table()
    put(s, RED, "Hannover", cash=2100)
    s["players"][RED]["debts"] = [{"to": None, "amount": 5000, "card": "N03"}]
    open_move(s, RED, [3, 3])
    s2, _ = step(s, RED, {"trailers": [{"buy": "small"}], "die": "A", "path": ["R3.2", "R3.1", "Hamburg"],
                          "arrive": {"decline": True}})
    assert s2["players"][RED]["cash"] == 100 and s2["players"][RED]["trailers"]["small"] == 1
    s["players"][RED]["cash"] = 1900
    illegal(s, RED, {"trailers": [{"buy": "small"}], "die": "A", "path": ["R3.2", "R3.1", "Hamburg"],
                     "arrive": {"decline": True}}, "not_enough_money")
    run = Run(ctx_of(s), s)
    event_payment(run, RED, 2000, None, "N04")
    assert s["players"][RED]["cash"] == 1900


def test_aa_11_e08_r7_ad6_k3_t8_jam_lifetime() -> None:
    s = table()
    s, ev = draw_at_r17_2(s, RED, "E08")
    assert s["pending"]["kind"] == "event_space" and s["pending"]["seat"] == RED
    illegal(s, RED, {"space": "Hannover"}, "bad_space")
    illegal(s, RED, {"space": "R17.2"}, "bad_space")  # RED's truck stands there
    s, _ = step(s, RED, {"space": "R18.1"})
    assert s["jam"]["owner"] == RED and s["turn"] == YELLOW
    put(s, YELLOW, "Magdeburg")
    open_move(s, YELLOW, [5, 5])
    illegal(s, YELLOW, {"die": "A", "path": ["R18.2", "R18.1", "Hannover"]}, "blocked_path")
    s, _ = step(s, YELLOW, {"die": "A", "path": ["R18.2"]})
    for seat in (BLUE, GREEN):
        assert s["jam"] is not None and s["turn"] == seat
        s, _ = step(s, seat, GAME.default_order(s, seat)) if s["pending"] else (s, [])
        while s["pending"] and s["turn"] == seat:
            s, _ = step(s, s["pending"]["seat"], GAME.default_order(s, s["pending"]["seat"]))
    assert s["turn"] == RED and s["jam"] is not None
    while s["pending"] and s["turn"] == RED:
        s, ev = step(s, s["pending"]["seat"], GAME.default_order(s, s["pending"]["seat"]))
    assert s["jam"] is None


def test_aa_11_n08_the_left_neighbour_places_the_jam_next_to_the_drawer() -> None:
    s = table()
    put(s, BLUE, "Berlin")
    s["events"] = ["N08"] + s["events"]
    open_move(s, BLUE, [2, 2])
    s, _ = step(s, BLUE, {"die": "A", "path": ["R21.1", "R21.2"]})
    assert s["pending"] == {"kind": "event_space", "seat": GREEN, "mode": "jam", "owner": BLUE,
                            "by": "left_neighbour", "card": "N08"}
    assert GAME.requests(s)[0].choices["spaces"] == ["R21.1", "R21.3"]
    assert GAME.default_order(s, GREEN) == {"space": "R21.1"}
    illegal(s, GREEN, {"space": "R18.1"}, "bad_space")
    s, _ = step(s, GREEN, {"space": "R21.3"})
    assert s["jam"]["owner"] == BLUE


def test_r25_a_jam_placed_on_its_own_space_takes_the_new_owner() -> None:
    s = table()
    s["jam"] = {"at": "R18.1", "owner": BLUE, "turn": 0}
    s, _ = draw_at_r17_2(s, RED, "E08")
    s, _ = step(s, RED, {"space": "R18.1"})
    assert s["jam"]["owner"] == RED and s["jam"]["at"] == "R18.1"


def test_e07_ad7_clear_both_markers_and_e09_moves_the_roadworks() -> None:
    s = table()
    s["roadworks"] = "R5.1"
    s["jam"] = {"at": "R5.3", "owner": BLUE, "turn": 0}
    s2, ev = draw_at_r17_2(s, RED, "E07")
    assert s2["roadworks"] is None and s2["jam"] is None
    s3, _ = draw_at_r17_2(s, RED, "E09")
    assert s3["pending"]["mode"] == "roadworks"
    illegal(s3, RED, {"space": "R5.1"}, "bad_space")
    illegal(s3, RED, {"space": "R5.3"}, "bad_space")
    s3, _ = step(s3, RED, {"space": "R6.1"})
    assert s3["roadworks"] == "R6.1"


def test_aa_12_r17_ad13_shortcut_then_arrive_without_pick() -> None:
    s = table()
    put(s, GREEN, "Hannover", hand=["O14"])
    s, _ = draw_at_r17_2(s, GREEN, "E13")
    cities = GAME.requests(s)[0].choices["cities"]
    assert sorted(cities) == sorted(["Hannover", "Kassel", "Bremen", "Hamburg", "Magdeburg", "Dortmund",
                                     "Frankfurt"])
    illegal(s, GREEN, {"city": "Berlin"}, "out_of_range")
    s, ev = step(s, GREEN, {"city": "Kassel"})
    assert s["pending"] == {"kind": "arrive", "seat": GREEN, "eligible": False}
    illegal(s, GREEN, {"load": ["O14"], "decline": True}, "cannot_pick")
    s, ev = step(s, GREEN, {"load": ["O14"]})
    assert s["players"][GREEN]["loaded"] == ["O14"]


def test_r18_e06_extra_move_is_move_only_and_may_pick() -> None:
    s = table()
    s, ev = draw_at_r17_2(s, RED, "E06")
    assert s["pending"] == {"kind": "move", "seat": RED, "extra": True} and len(roll_log(s)) == 1
    s["dice"] = [2, 2]
    illegal(s, RED, {"die": "A", "path": ["R17.3", "Kassel"], "arrive": {"decline": True}}, "not_allowed_here")
    s, ev = step(s, RED, {"die": "A", "path": ["R17.3", "Kassel"]})
    assert s["pending"] == {"kind": "arrive", "seat": RED, "eligible": True}
    illegal(s, RED, {}, "pick_required")
    legal(s, RED, {"pick": 1})
    s, ev = step(s, RED, {"decline": True})
    assert "declined" in types(ev)


def test_t4_t5_ad3_delivery_before_loading_in_the_same_city() -> None:
    s = table()
    put(s, RED, "R18.2", loaded=["O13", "O43"], hand=["O46"])  # Load 6/6; O13 ends in Magdeburg
    open_move(s, RED, [1, 1])
    s2, ev = step(s, RED, {"die": "A", "path": ["Magdeburg"], "roadworks": "R5.1",
                           "arrive": {"load": ["O46"], "decline": True}})
    assert s2["players"][RED]["loaded"] == ["O43", "O46"]
    assert types(ev).index("delivered") < types(ev).index("loaded") < types(ev).index("declined")
    assert s2["players"][RED]["cash"] == 5800
