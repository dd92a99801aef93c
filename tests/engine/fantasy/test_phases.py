"""Setup (S1–S4), the offer (O1–O23), prices (P1–P6), income (I1–I4), the end (E1–E3) and
the variants (V1–V4), one test each."""

from __future__ import annotations

import json

import pytest

from engine.core import OptionsError
from engine.fantasy.income import rates
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


# -- setup ---------------------------------------------------------------------------------
def test_s1_seats_variants_and_rounds_fixed_before_the_commitment() -> None:
    for n in (2, 9):
        with pytest.raises(OptionsError):
            GAME.setup(n, {}, 1)
    a = GAME.setup(3, {"below_base": True, "sole_bonus": True, "trading": True, "rounds": 4}, 1)
    assert a["options"] == {"below_base": True, "sole_bonus": True, "trading": True, "rounds": 4}
    assert a["commitment"] == GAME.setup(3, {}, 1)["commitment"]


def test_s2_ten_crowns_and_an_empty_hand() -> None:
    s = GAME.setup(8, {}, 2)
    assert crowns(s) == [10] * 8 and all(not p["hand"] for p in s["players"])


def test_s3_first_buyer_drawn() -> None:
    marks = {GAME.setup(5, {}, seed)["marker"] for seed in range(40)}
    assert marks == set(range(5))


def test_s4_the_72_cards_shuffled_into_one_deck() -> None:
    s = GAME.setup(4, {}, 9)
    cards = s["deck"] + [d["card"] for d in s["display"] if d["card"]] + list(s["facedown"].values())
    assert sorted(cards) == sorted(GAME.setup(4, {}, 10)["deck"] + [d["card"] for d in GAME.setup(4, {}, 10)
                                   ["display"] if d["card"]] + list(GAME.setup(4, {}, 10)["facedown"].values()))
    assert len(cards) == 72


# -- the offer -----------------------------------------------------------------------------
def test_o1_w_open_takes_mc_nd_fb_and_several_cards() -> None:
    s = table(4, MIR, hands={JAC: ["ND1", "ND2", "FB1"]})
    s, ev = window(s, {JAC: [{"card": "ND1", "target": MIR}, {"card": "ND2", "target": CHR}, {"card": "FB1"}]})
    assert len(of(ev, "window_closed")[0]["plays"]) == 3 and s["afb"] == JAC


def test_o2_market_closed() -> None:
    s = table(4, MIR, hands={JAC: ["MC1", "SU1"], HEN: ["FB1"]})
    s, ev = window(s, {JAC: [{"card": "MC1"}], HEN: [{"card": "FB1"}]})
    assert not [d for d in s["display"] if d] and s["pending"]["kind"] == "w_close"
    assert not of(ev, "offer_revealed") and s["players"][HEN]["hand"] == ["FB1"] and s["afb"] == MIR


def test_o3_first_of_two_first_buyers_from_the_afb() -> None:
    s = table(4, JAC, hands={MIR: ["FB1"], HEN: ["FB2"]})
    s, ev = window(s, {MIR: [{"card": "FB1"}], HEN: [{"card": "FB2"}]})
    assert s["afb"] == MIR and s["offer"]["preempt"] == MIR and s["players"][HEN]["hand"] == ["FB2"]


def test_o4_two_no_deliveries_on_one_target_both_count() -> None:
    s = table(4, MIR, hands={JAC: ["ND1"], HEN: ["ND2"]})
    s, _ = window(s, {JAC: [{"card": "ND1", "target": CHR}], HEN: [{"card": "ND2", "target": CHR}]})
    assert len([d for d in s["display"] if d]) == 2 and s["offer"]["nd"] == [CHR, CHR]


def test_o5_spent_cards_are_discarded_face_up() -> None:
    s = table(4, MIR, hands={JAC: ["ND1"]})
    s, _ = window(s, {JAC: [{"card": "ND1", "target": CHR}]})
    assert "ND1" in s["discard"] and GAME.view(s, "public")["discard"] == s["discard"]


def test_o6_reveal_count_and_faces() -> None:
    s = table(5, MIR, deck=["HH1", "ST1", "SW1", "DS1", "AR1"])
    assert [d["card"] for d in s["display"]] == ["HH1", None, "SW1", None, "AR1"]
    assert s["facedown"] == {"2": "ST1", "4": "DS1"}
    assert "ST1" not in str(GAME.view(s, MIR))


def test_o7_eligibility() -> None:
    from engine.fantasy.state import eligibles

    s = table(4, MIR)
    s["offer"]["bought"], s["offer"]["nd"] = [MIR], [HEN]
    assert eligibles(s) == [CHR, JAC]


def test_o8_checks_before_every_card() -> None:
    s = table(4, MIR, deck=["HH1", "HH2", "HH3", "HH4"])
    s["offer"]["bought"] = [MIR, CHR, HEN, JAC]
    s["auction"] = None
    ev = run_to(s, "offer")
    assert len(of(ev, "discarded")) == 4 and of(ev, "offer_ended") and s["round"] == 2


def test_o9_the_opener() -> None:
    s = table(4, HEN)
    s["offer"]["bought"] = [HEN, JAC]
    s["auction"] = None
    run_to(s, "offer")
    assert s["pending"] == {"kind": "select", "seats": [MIR]}


def test_o10_select_and_open() -> None:
    s = table(4, MIR, deck=["HH1", "ST1", "HH2", "HH3"])
    illegal(s, MIR, {"pos": 2, "bid": 0}, "bid_too_low")
    illegal(s, MIR, {"pos": 5, "bid": 1}, "no_such_position")
    s, ev = act(s, MIR, {"pos": 2, "bid": 1})
    assert of(ev, "opened")[0]["amount"] == 1 and s["auction"]["high"] == 1


def test_o11_pre_emption() -> None:
    s = table(4, MIR, hands={MIR: ["FB1"]}, crowns={MIR: 3}, deck=["SS1", "HH1", "HH2", "HH3"])
    s, _ = window(s, {MIR: [{"card": "FB1"}]})
    illegal(s, MIR, {"pos": 1, "preempt": True}, "not_enough_crowns")
    s, ev = act(s, MIR, {"pos": 2, "preempt": True})
    assert s["players"][MIR]["items"] == ["HH1"] and s["offer"]["preempt"] is None


def test_o12_the_opening_goes_around_once() -> None:
    s = table(4, CHR, deck=["HH1", "HH2", "HH3", "HH4"])
    s, _ = act(s, CHR, {"pos": 1, "bid": None})
    seen = []
    for _ in range(3):
        seen.append(s["pending"]["seats"][0])
        s, ev = act(s, seen[-1], {"bid": None})
    assert seen == [HEN, JAC, MIR] and of(ev, "discarded")


def test_o13_bidding_turn_from_the_opener_left() -> None:
    s = table(4, MIR, deck=["HH1", "HH2", "HH3", "HH4"])
    s, _ = act(s, MIR, {"pos": 1, "bid": None})
    s, _ = act(s, CHR, {"bid": None})
    s, _ = act(s, HEN, {"bid": 2})
    assert s["pending"]["seats"] == [JAC]


def test_o14_raise_or_final_pass() -> None:
    s = table(4, MIR, deck=["HH1", "HH2", "HH3", "HH4"])
    s, _ = act(s, MIR, {"pos": 1, "bid": 2})
    illegal(s, CHR, {"bid": 2}, "bid_too_low")
    s, _ = act(s, CHR, {"bid": None})
    s, _ = act(s, HEN, {"bid": 3})
    s, _ = act(s, JAC, {"bid": None})
    s, _ = act(s, MIR, {"bid": 4})
    assert s["pending"]["seats"] == [HEN]  # Christopher's pass was final


def test_o15_sold_when_the_turn_returns() -> None:
    s = table(4, MIR, deck=["HH1", "HH2", "HH3", "HH4"])
    s, _ = act(s, MIR, {"pos": 1, "bid": 3})
    for p in (CHR, HEN):
        s, _ = act(s, p, {"bid": None})
    s, ev = act(s, JAC, {"bid": None})
    assert of(ev, "sold")[0]["price"] == 3


def test_o16_a_bid_above_ones_crowns_is_refused_privately() -> None:
    s = table(4, MIR, deck=["HH1", "HH2", "HH3", "HH4"], crowns={CHR: 3})
    s, _ = act(s, MIR, {"pos": 1, "bid": 2})
    err = illegal(s, CHR, {"bid": 4}, "not_enough_crowns")
    assert "3" in err.message


def test_o17_sale_pays_the_bank_and_the_special_goes_to_hand() -> None:
    s = table(4, MIR, deck=["ST1", "HH2", "HH3", "HH4"])
    s, _ = act(s, MIR, {"pos": 1, "bid": 1})
    for p in (CHR, HEN):
        s, _ = act(s, p, {"bid": None})
    s, ev = act(s, JAC, {"bid": None})
    assert s["players"][MIR]["hand"] == ["ST1"] and sum(crowns(s)) == 39


def test_o18_the_lone_eligible_player() -> None:
    s = table(3, MIR, deck=["HH1", "HH2", "HH3"], crowns={2: 0})
    s["offer"]["bought"] = [MIR, CHR]
    s["auction"] = None
    run_to(s, "offer")
    assert s["pending"]["kind"] == "lone" and GAME.default_order(s, 2) == {"take": None}
    s, ev = act(s, 2, {"take": None})
    assert len(of(ev, "discarded")) == 3


def test_o19_w_close_after_every_offer_phase() -> None:
    s = table(4, MIR, hands={JAC: ["MC1", "ST1"]})
    s, _ = window(s, {JAC: [{"card": "MC1"}]})
    assert s["pending"] == {"kind": "w_close", "seats": [JAC]}


def test_o20_antitrust_validity() -> None:
    from engine.fantasy.specials.antitrust import monopoly

    s = table(4, MIR, items={HEN: ["HO1", "HO2"], JAC: ["SW1"]})
    assert monopoly(s, HEN, "HO") and not monopoly(s, JAC, "SW") and not monopoly(s, MIR, "HO")


def test_o21_resolution_in_turn_order_from_the_afb_then_as_listed() -> None:
    s = table(4, HEN, items={MIR: ["HH1", "SW1"]}, hands={JAC: ["ST1", "DI1"], CHR: ["ST2"]})
    run_to(s, "w_close")
    s, ev = window(s, {JAC: [{"card": "DI1", "target": MIR, "item": "SW1"},
                             {"card": "ST1", "target": MIR, "item": "HH1"}],
                       CHR: [{"card": "ST2", "target": MIR, "item": "HH1"}]})
    assert [e["card"] for e in of(ev, "played")] == ["DI1", "ST1"]  # Jack before Christopher
    assert s["players"][JAC]["items"] == ["HH1"] and s["players"][CHR]["hand"] == ["ST2"]


def test_o22_effects_of_defective_steal_and_trading() -> None:
    s = table(4, MIR, items={MIR: ["HH1"], CHR: ["SW1", "AR1"], HEN: ["MP1"]},
              hands={MIR: ["DI1", "ST1", "TR1"]})
    run_to(s, "w_close")
    s, _ = window(s, {MIR: [{"card": "DI1", "target": CHR, "item": "SW1"},
                            {"card": "ST1", "target": CHR, "item": "AR1"},
                            {"card": "TR1", "give": "HH1", "target": HEN, "item": "MP1"}]})
    assert s["removed"] == ["SW1"] and s["players"][MIR]["items"] == ["AR1", "MP1"]
    assert s["players"][HEN]["items"] == ["HH1"] and s["players"][CHR]["items"] == []


def test_o23_antitrust_auction_runs_before_the_next_play() -> None:
    s = table(4, MIR, items={HEN: ["HO1", "HO2"]}, hands={MIR: ["AL1"], JAC: ["ST1"]})
    run_to(s, "w_close")
    s, ev = window(s, {MIR: [{"card": "AL1", "target": HEN, "type": "HO"}],
                       JAC: [{"card": "ST1", "target": HEN, "item": "HO2"}]})
    assert s["pending"]["kind"] == "open" and s["queue"][0]["card"] == "ST1"
    for _ in range(6):
        s, ev = act(s, s["pending"]["seats"][0], {"bid": None})
        if s["auction"] is None:
            break
    # both Horses discarded; Jack's steal now finds HO2 moved (discarded) and returns
    assert of(ev, "returned")[0]["card"] == "ST1"


# -- prices ----------------------------------------------------------------------------------
def test_p1_only_owners_submit_sheets() -> None:
    s = table(4, MIR, items={CHR: ["HH1"], JAC: ["SW1"]})
    run_to(s, "prices")
    assert s["pending"] == {"kind": "price", "seats": [CHR, JAC]}
    assert GAME.requests(s)[0].sealed and "sheet" not in GAME.view(s, JAC)["players"][CHR]


def test_p2_transfers_frozen_during_prices() -> None:
    s = table(4, MIR, items={CHR: ["HH1"]}, options={"trading": True})
    run_to(s, "prices")
    illegal(s, CHR, {"prices": {"HH": 2}, "propose": {"to": MIR, "give": {"items": ["HH1"]}}}, "transfers_frozen")


def test_p3_default_is_base() -> None:
    s = table(4, MIR, items={CHR: ["HH1", "MP1"]}, options={"below_base": True})
    run_to(s, "prices")
    assert GAME.default_order(s, CHR) == {"prices": {"HH": 2, "MP": 6}}


def test_p4_w_spy_asks_holders_after_the_sheets() -> None:
    s = table(4, MIR, items={CHR: ["HH1"]}, hands={JAC: ["SU1"]})
    run_to(s, "prices")
    s, _ = GAME.step(s, {CHR: {"prices": {"HH": 2}}})
    assert s["pending"] == {"kind": "w_spy", "seats": [JAC]}


def test_p5_the_spy_revises_only_its_own_sheet() -> None:
    s = table(4, MIR, items={CHR: ["HH1"], JAC: ["HH2"]}, hands={JAC: ["SP1"]})
    run_to(s, "prices")
    s, _ = GAME.step(s, {CHR: {"prices": {"HH": 3}}, JAC: {"prices": {"HH": 4}}})
    s, _ = window(s, {JAC: [{"card": "SP1"}]})
    illegal(s, JAC, {"prices": {"HH": 9}}, "price_out_of_range")
    s, ev = act(s, JAC, {"prices": {"HH": 2}})
    assert of(ev, "spy_saw")[0]["visible_to"] == [JAC]
    assert s["prices"] == {"1": {"HH": 3}, "3": {"HH": 2}}


def test_p6_w_reveal_plays_and_two_out_of_seasons() -> None:
    s = table(4, MIR, items={CHR: ["HH1"]}, hands={JAC: ["OS1", "OS2", "RA1"]})
    run_to(s, "prices")
    s, _ = GAME.step(s, {CHR: {"prices": {"HH": 2}}})
    s, _ = window(s)
    illegal(s, JAC, {"play": [{"card": "RA1", "target": JAC, "trigger": MIR}]}, "bad_target")
    illegal(s, JAC, {"play": [{"card": "BC1", "target": CHR, "type": "HH"}]}, "no_such_card")
    s, ev = window(s, {JAC: [{"card": "OS1", "type": "HH"}, {"card": "OS2", "type": "HH"}]})
    assert {"OS1", "OS2"} <= set(s["discard"]) and not of(ev, "income")


# -- income and the end ---------------------------------------------------------------------
def test_i1_sheets_revealed_publicly() -> None:
    s, _, ev = income_round(4, {MIR: ["HH1"]}, {MIR: {"HH": 3}})
    assert of(ev, "sheets_revealed")[0]["sheets"] == {"0": {"HH": 3}}
    assert GAME.view(s, CHR)["prices"] == {"0": {"HH": 3}}


def test_i2_classes_and_rates() -> None:
    assert rates({0: 2, 1: 3, 2: 4}, False) == {0: 4, 1: 3, 2: 0}
    assert rates({0: 5, 1: 5}, False) == {0: 7, 1: 7}
    assert rates({0: 5, 1: 5}, True) == {0: 5, 1: 5}
    assert rates({0: 5}, True) == {0: 7}


def test_i3_unfired_racketeering_resolves_at_the_end() -> None:
    _, got, _ = income_round(4, {}, {}, start={p: 3 for p in range(4)},
                             reveal={"ra": [{"by": MIR, "x": HEN, "y": JAC, "fired": False}]})
    assert got == [3, 0, -3, 0]


def test_i4_items_stay_after_income() -> None:
    s, _, _ = income_round(4, {MIR: ["HH1", "SW1"]}, {MIR: {"HH": 2, "SW": 4}})
    assert s["players"][MIR]["items"] == ["HH1", "SW1"]


def test_e1_the_marker_passes_left_of_its_holder() -> None:
    s, _, _ = income_round(4, {}, {}, afb=JAC)
    assert s["marker"] == MIR


def test_e2_score_is_crowns_plus_base_values() -> None:
    from engine.fantasy.income import score

    s = table(4, MIR, items={MIR: ["MP1", "HH1"]}, hands={MIR: ["ST1"]}, crowns={MIR: 3})
    assert score(s, MIR) == 3 + 6 + 2


def test_e3_game_ends_and_everything_opens() -> None:
    s = table(4, MIR, hands={JAC: ["ST1"]})
    s["rounds"] = 1
    while not s["over"]:
        s, ev = GAME.step(s, {p: GAME.default_order(s, p) for p in s["pending"]["seats"]})
    v = GAME.view(s, "public")
    assert v["players"][JAC]["hand"] == ["ST1"] and "crowns" in v["players"][0] and "deck" in v
    assert of(ev, "game_over") and GAME.requests(s) == []


# -- variants -------------------------------------------------------------------------------
def test_v1_below_base() -> None:
    _, got, _ = income_round(4, {MIR: ["SW1"], CHR: ["SW2"]}, {MIR: {"SW": 1}, CHR: {"SW": 8}},
                             options={"below_base": True})
    assert got[:2] == [3, 0]


def test_v2_sole_bonus() -> None:
    _, got, _ = income_round(4, {MIR: ["SW1"], CHR: ["SW2"], HEN: ["SW3"]},
                             {MIR: {"SW": 4}, CHR: {"SW": 5}, HEN: {"SW": 6}}, options={"sole_bonus": True})
    assert got[:3] == [6, 5, 0]


def test_v3_short_game() -> None:
    s = GAME.setup(4, {"rounds": 2}, 4)
    while not s["over"]:
        s, _ = GAME.step(s, {p: GAME.default_order(s, p) for p in s["pending"]["seats"]})
    assert s["round"] == 2


def test_v4_trading_proposal_reject_and_lapse() -> None:
    s = table(4, MIR, items={HEN: ["HO6"]}, options={"trading": True}, deck=["HH1", "HH2", "HH3", "HH4"])
    s, ev = act(s, MIR, {"pos": 1, "bid": None, "propose": {"to": HEN, "give": {"crowns": 3},
                                                             "get": {"items": ["HO6"]}}})
    assert s["pending"] == {"kind": "accept", "seats": [HEN]}
    assert GAME.default_order(s, HEN) == {"accept": False}
    s2, ev = act(s, HEN, {"accept": False})
    assert of(ev, "proposal_rejected") and s2["pending"] == {"kind": "open", "seats": [CHR]}
    # the proposer can no longer deliver: the acceptance lapses publicly
    s["players"][MIR]["crowns"] = 1
    s3, ev = act(s, HEN, {"accept": True})
    assert of(ev, "proposal_lapsed") and s3["players"][HEN]["items"] == ["HO6"]


def test_v4_trading_asks_for_the_recipients_special_cards_by_number() -> None:
    s = table(4, MIR, hands={HEN: ["ST1", "TR2"]}, options={"trading": True}, deck=["HH1", "HH2", "HH3", "HH4"])
    s, _ = window(s)  # W-OPEN (Henry holds specials)
    s, ev = act(s, MIR, {"pos": 1, "bid": None, "propose": {"to": HEN, "give": {"crowns": 4},
                                                             "get": {"specials": 1}}})
    assert s["pending"] == {"kind": "accept", "seats": [HEN]}
    illegal(s, HEN, {"accept": True}, "bad_transfer")
    illegal(s, HEN, {"accept": True, "specials": ["SU1"]}, "bad_transfer")
    s, ev = act(s, HEN, {"accept": True, "specials": ["TR2"]})
    public = of(ev, "transferred")[0]
    assert public["get"]["specials"] == 1 and "TR2" not in json.dumps(public)
    private = of(ev, "transferred_specials")[0]
    assert private["visible_to"] == [MIR, HEN] and private["returned"] == ["TR2"]
    assert s["players"][MIR]["hand"] == ["TR2"] and crowns(s)[:3] == [6, 10, 14]
