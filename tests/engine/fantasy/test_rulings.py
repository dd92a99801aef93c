"""The project's rulings R1–R27 (§1), one test each."""

from __future__ import annotations

import pytest

from engine.core import IllegalOrder, OptionsError
from tests.engine.fantasy.helpers import (
    CHR,
    GAME,
    HEN,
    JAC,
    MIR,
    act,
    crowns,
    illegal,
    income_round,
    of,
    run_to,
    table,
    window,
)


def test_r1_number_of_rounds() -> None:
    for seats, rounds in ((3, 10), (4, 10), (5, 10), (6, 10), (7, 8), (8, 8)):
        assert GAME.setup(seats, {}, 1)["rounds"] == rounds
    assert GAME.setup(8, {"rounds": 3}, 1)["rounds"] == 3
    for bad in (0, 9, -1, True, "5"):
        with pytest.raises(OptionsError):
            GAME.setup(8, {"rounds": bad}, 1)


def test_r2_offer_with_the_opener_and_open_bidding() -> None:
    s = table(4, MIR, deck=["SW3", "HH2", "HH3", "HO3"])
    assert len([d for d in s["display"] if d]) == 4 and s["pending"]["seats"] == [MIR]
    illegal(s, MIR, {"pos": 1, "bid": 3}, "bid_too_low")  # below the minimum
    illegal(s, MIR, {"pos": 1, "bid": 11}, "not_enough_crowns")
    s, _ = act(s, MIR, {"pos": 1, "bid": 4})
    illegal(s, CHR, {"bid": 4}, "bid_too_low")
    s, _ = act(s, CHR, {"bid": None})
    s, _ = act(s, HEN, {"bid": None})
    s, ev = act(s, JAC, {"bid": None})
    assert of(ev, "sold")[0]["seat"] == MIR
    assert s["pending"]["seats"] == [CHR]  # Miranda cannot bid again this round
    s, _ = act(s, CHR, {"pos": 2, "bid": 2})
    assert s["pending"]["seats"] == [HEN]  # Miranda is skipped


def test_r3_every_holder_is_asked_in_every_window() -> None:
    s = table(4, MIR, hands={CHR: ["SU1"], JAC: ["OS1"]})
    assert s["pending"] == {"kind": "w_open", "seats": [CHR, JAC]}  # neither has a W-OPEN card
    assert GAME.default_order(s, CHR) == {"play": []}
    s = table(4, MIR)
    assert s["pending"]["kind"] == "select"  # nobody holds a special: skipped


def test_r4_antitrust_needs_a_monopoly_of_at_least_two() -> None:
    s = table(4, MIR, items={HEN: ["HO1"], JAC: ["SW1", "SW2"], CHR: ["AR1", "AR2"], MIR: ["AR3"]},
              hands={MIR: ["AL1"]})
    run_to(s, "w_close")
    illegal(s, MIR, {"play": [{"card": "AL1", "target": HEN, "type": "HO"}]}, "bad_target")  # only one
    illegal(s, MIR, {"play": [{"card": "AL1", "target": CHR, "type": "AR"}]}, "bad_target")  # not every card
    GAME.validate(s, MIR, {"play": [{"card": "AL1", "target": JAC, "type": "SW"}]})


def test_r5_price_range_and_default() -> None:
    s = table(4, MIR, items={MIR: ["SW1"]})
    run_to(s, "prices")
    illegal(s, MIR, {"prices": {"SW": 3}}, "price_out_of_range")
    illegal(s, MIR, {"prices": {"SW": 9}}, "price_out_of_range")
    GAME.validate(s, MIR, {"prices": {"SW": 8}})
    assert GAME.default_order(s, MIR) == {"prices": {"SW": 4}}


def test_r6_income_per_type() -> None:
    _, got, _ = income_round(4, {MIR: ["HH1", "HH2"], CHR: ["HH3"], HEN: ["HH4"], JAC: ["HH5"]},
                             {MIR: {"HH": 2}, CHR: {"HH": 2}, HEN: {"HH": 3}, JAC: {"HH": 4}})
    assert got == [8, 4, 3, 0]
    s, got, _ = income_round(4, {MIR: ["SW1"]}, {MIR: {"SW": 5}})
    assert got[MIR] == 7 and s["players"][MIR]["items"] == ["SW1"]  # items stay


def test_r7_rotation_and_shared_victory() -> None:
    s = table(4, JAC)
    s["rounds"] = 1
    s2 = s
    while not s2["over"]:
        s2, _ = GAME.step(s2, {p: GAME.default_order(s2, p) for p in s2["pending"]["seats"]})
    assert s2["marker"] == MIR  # passed left from Jack
    ranking = GAME.result(s2)
    assert all(r["place"] == 1 for r in ranking)  # everyone 10 crowns: all share the victory


def test_r8_crowns_and_hands_hidden_sizes_public() -> None:
    s = table(4, MIR, hands={CHR: ["ST1", "SU1"]}, items={JAC: ["SW1"]})
    v = GAME.view(s, MIR)
    assert "crowns" not in v["players"][CHR] and "hand" not in v["players"][CHR]
    assert v["players"][CHR]["hand_size"] == 2 and v["players"][JAC]["items"] == ["SW1"]
    assert GAME.view(s, CHR)["players"][CHR]["hand"] == ["ST1", "SU1"]


def test_r9_trading_is_a_host_variant() -> None:
    s = table(4, MIR, items={HEN: ["HO6"]})
    illegal(s, MIR, {"pos": 1, "bid": None, "propose": {"to": HEN, "give": {"crowns": 1}}}, "trading_off")
    s = table(4, MIR, items={HEN: ["HO6"]}, options={"trading": True})
    GAME.validate(s, MIR, {"pos": 1, "bid": None, "propose": {"to": HEN, "give": {"crowns": 1}}})


def test_r10_starting_position_and_data() -> None:
    s = GAME.setup(5, {}, 3)
    assert crowns(s) == [10] * 5 and all(p["hand"] == [] and p["items"] == [] for p in s["players"])
    from engine.fantasy.components import components

    c = components()
    assert [(t.id, t.base, t.count) for t in c.item_types] == [
        ("HH", 2, 6), ("SC", 3, 6), ("BA", 3, 6), ("SW", 4, 6), ("AR", 5, 6), ("HO", 5, 6), ("SS", 6, 6), ("MP", 6, 6)]
    assert sum(sp.count for sp in c.specials) == 24 and len(c.deck) == 72


def test_r11_antitrust_bidders_include_buyers_and_no_delivery() -> None:
    s = table(4, JAC, items={MIR: ["HO1", "HO4"]}, hands={CHR: ["AL1"]})
    s["offer"]["bought"] = [HEN]
    s["offer"]["nd"] = [JAC]
    run_to(s, "w_close")
    s, _ = window(s, {CHR: [{"card": "AL1", "target": MIR, "type": "HO"}]})
    s, _ = act(s, CHR, {"bid": None})
    s, _ = act(s, HEN, {"bid": 5})  # bought this round: may bid
    s, _ = act(s, JAC, {"bid": 6})  # under No Delivery: may bid
    assert s["pending"]["seats"] == [CHR]  # Miranda (the target) is skipped


def test_r12_moved_target_returns_the_card() -> None:
    s = table(4, MIR, items={JAC: ["MP2"]}, hands={CHR: ["ST1"], HEN: ["ST2"]})
    run_to(s, "w_close")
    s, ev = window(s, {CHR: [{"card": "ST1", "target": JAC, "item": "MP2"}],
                       HEN: [{"card": "ST2", "target": JAC, "item": "MP2"}]})
    assert s["players"][CHR]["items"] == ["MP2"] and s["players"][HEN]["hand"] == ["ST2"]
    assert of(ev, "returned")[0]["why"] == "target_moved"


def test_r13_one_spy_per_window() -> None:
    s = table(4, MIR, hands={HEN: ["SP1", "SP2"]})
    run_to(s, "prices")
    assert s["pending"]["kind"] == "w_spy"
    illegal(s, HEN, {"play": [{"card": "SP1"}, {"card": "SP2"}]}, "one_spy")
    GAME.validate(s, HEN, {"play": [{"card": "SP2"}]})


def test_r14_committed_cards_stay_in_hand_until_the_window_resolves() -> None:
    s = table(4, MIR, items={HEN: ["HH1"], JAC: ["SW1"]}, hands={MIR: ["DS1"], HEN: ["SP2", "TR3"]})
    run_to(s, "w_close")
    s, ev = window(s, {HEN: [{"card": "TR3", "give": "HH1", "target": JAC, "item": "SW1"}]},
                   extra={MIR: {"play": [], "instants": [{"card": "DS1", "target": HEN}]}})
    assert of(ev, "divination_seen")[0]["hand"] == ["SP2", "TR3"]
    assert "TR3" in s["discard"]


def test_r15_lone_eligible_ignores_no_delivery_seats() -> None:
    s = table(3, MIR, deck=["HH1", "HH2", "HH3"])
    s["offer"] = {"bought": [MIR], "nd": [CHR], "preempt": None, "closed": False}
    s["auction"] = None
    run_to(s, "offer")
    assert s["pending"] == {"kind": "lone", "seats": [2]}


def test_r16_trading_whose_own_card_moved_fails() -> None:
    s = table(4, MIR, items={MIR: ["HH1"], JAC: ["SW5"]}, hands={MIR: ["TR1"], CHR: ["ST1"]})
    run_to(s, "w_close")
    s, ev = window(s, {CHR: [{"card": "ST1", "target": MIR, "item": "HH1"}],
                       MIR: [{"card": "TR1", "give": "HH1", "target": JAC, "item": "SW5"}]})
    # resolution from the AFB (Miranda) first: the trade happens, then Christopher's steal finds HH1 moved to Jack
    assert s["players"][JAC]["items"] == ["HH1"] and s["players"][CHR]["hand"] == ["ST1"]
    s = table(4, CHR, items={MIR: ["HH1"], JAC: ["SW5"]}, hands={MIR: ["TR1"], CHR: ["ST1"]})
    run_to(s, "w_close")
    s, ev = window(s, {CHR: [{"card": "ST1", "target": MIR, "item": "HH1"}],
                       MIR: [{"card": "TR1", "give": "HH1", "target": JAC, "item": "SW5"}]})
    # Christopher (AFB) steals first; Miranda's Trading no longer has HH1 and returns unspent
    assert s["players"][CHR]["items"] == ["HH1"] and s["players"][MIR]["hand"] == ["TR1"]
    assert of(ev, "returned")[0]["card"] == "TR1"


def test_r17_bad_check_seller_still_counts_for_sole_bonus() -> None:
    _, got, _ = income_round(4, {MIR: ["HH1"], CHR: ["HH2"], HEN: ["HH3"]},
                             {MIR: {"HH": 2}, CHR: {"HH": 2}, HEN: {"HH": 4}}, options={"sole_bonus": True},
                             reveal={"bc": [[MIR, "HH"]]})
    assert got[:3] == [0, 2, 0]


def test_r18_out_of_season_on_an_unowned_type_is_spent() -> None:
    s = table(4, MIR, items={MIR: ["HH1"]}, hands={CHR: ["OS1"]})
    run_to(s, "prices")
    s, _ = GAME.step(s, {MIR: {"prices": {"HH": 2}}})
    s, _ = window(s)
    s, ev = window(s, {CHR: [{"card": "OS1", "type": "MP"}]})
    assert "OS1" in s["discard"] and s["players"][CHR]["hand"] == []
    assert of(ev, "income")[0]["amount"] == 4


def test_r19_price_sheets_are_exact() -> None:
    s = table(4, MIR, items={MIR: ["HH1", "SW1"]})
    run_to(s, "prices")
    illegal(s, MIR, {"prices": {"HH": 2}}, "bad_sheet")
    illegal(s, MIR, {"prices": {"HH": 2, "SW": 4, "MP": 6}}, "bad_sheet")
    GAME.validate(s, MIR, {"prices": {"HH": 2, "SW": 4}})


def test_r20_display_positions_are_stable() -> None:
    s = table(4, MIR, deck=["SW3", "HH2", "HH3", "HO3"])
    s, _ = act(s, MIR, {"pos": 2, "bid": 2})
    for p in (CHR, HEN, JAC):
        s, _ = act(s, p, {"bid": None})
    assert s["display"][1] is None and [d["pos"] for d in s["display"] if d] == [1, 3, 4]
    illegal(s, CHR, {"pos": 2, "bid": None}, "no_such_position")


def test_r21_a_transfer_during_the_window_makes_the_play_fail() -> None:
    s = table(4, MIR, items={MIR: ["MP2"]}, hands={JAC: ["ST2"], MIR: ["SU1"]}, options={"trading": True})
    run_to(s, "w_close")
    s, ev = window(s, {JAC: [{"card": "ST2", "target": MIR, "item": "MP2"}]},
                   extra={MIR: {"play": [], "propose": {"to": CHR, "give": {"items": ["MP2"]}}}})
    assert s["pending"] == {"kind": "accept", "seats": [CHR]}
    s, ev = act(s, CHR, {"accept": True})
    assert s["players"][CHR]["items"] == ["MP2"] and s["players"][JAC]["hand"] == ["ST2"]
    assert of(ev, "returned")[0]["why"] == "target_moved"


def test_r22_passing_the_antitrust_opening_is_not_final() -> None:
    s = table(4, JAC, items={MIR: ["HO1", "HO4"]}, hands={CHR: ["AL1"]})
    run_to(s, "w_close")
    s, _ = window(s, {CHR: [{"card": "AL1", "target": MIR, "type": "HO"}]})
    s, _ = act(s, CHR, {"bid": None})  # passes the opening
    s, _ = act(s, HEN, {"bid": 5})
    s, _ = act(s, JAC, {"bid": None})
    assert s["pending"] == {"kind": "bid", "seats": [CHR]}
    s, _ = act(s, CHR, {"bid": 6})
    s, ev = act(s, HEN, {"bid": None})
    assert of(ev, "sold")[0]["seat"] == CHR


def test_r23_marker_holders_own_first_buyer_card() -> None:
    s = table(4, HEN, hands={HEN: ["FB1"]})
    s, _ = window(s, {HEN: [{"card": "FB1"}]})
    assert s["afb"] == HEN and s["offer"]["preempt"] == HEN and s["marker"] == HEN


def test_r24_no_instants_after_the_game_ends() -> None:
    s = table(4, MIR, hands={MIR: ["SU1"]})
    s["rounds"] = 1
    while not s["over"]:
        s, _ = GAME.step(s, {p: GAME.default_order(s, p) for p in s["pending"]["seats"]})
    with pytest.raises(IllegalOrder) as info:
        GAME.validate(s, MIR, {"instants": [{"card": "SU1"}]})
    assert info.value.code == "game_over"


def test_r25_asked_seats_are_fixed_when_the_window_opens() -> None:
    s = table(4, MIR, hands={CHR: ["SU1"], JAC: ["FB1"]})
    assert s["pending"]["seats"] == [CHR, JAC]
    # Christopher spends his last special with his window order; he was asked and only passes
    s, ev = window(s, extra={CHR: {"play": [], "instants": [{"card": "SU1"}]}})
    assert s["players"][CHR]["hand"] == [] and s["players"][CHR]["crowns"] == 15


def test_r26_spy_with_no_items() -> None:
    s = table(4, MIR, items={JAC: ["SW1"]}, hands={HEN: ["SP1"]})
    run_to(s, "prices")
    s, _ = GAME.step(s, {JAC: {"prices": {"SW": 6}}})
    s, _ = window(s, {HEN: [{"card": "SP1"}]})
    assert s["pending"] == {"kind": "spy", "seats": [HEN]}
    assert GAME.view(s, HEN)["players"][JAC]["sheet"] == {"SW": 6}
    GAME.validate(s, HEN, {"prices": {}})
    GAME.validate(s, HEN, {"prices": None})


def test_r27_keeping_a_high_bid() -> None:
    s = table(4, MIR, items={HEN: ["HO6"]}, options={"trading": True}, deck=["SW1", "HH1", "HH2", "HH3"])
    s, _ = act(s, MIR, {"pos": 1, "bid": 8})
    # Miranda holds the high bid of 8 with 10 crowns: she may not give away 3
    s["pending"] = {"kind": "bid", "seats": [MIR]}
    illegal(s, MIR, {"bid": None, "propose": {"to": HEN, "give": {"crowns": 3}}}, "not_enough_crowns")
    GAME.validate(s, MIR, {"bid": None, "propose": {"to": HEN, "give": {"crowns": 2}}})
