"""The worked examples FB-1 ... FB-16 of the rules (§15), each as a test."""

from __future__ import annotations

import hashlib

from engine.core.events import visible_to
from engine.fantasy import income
from tests.engine.fantasy.helpers import (
    CHR,
    COU,
    GAME,
    HEL,
    HEN,
    JAC,
    MIR,
    act,
    crowns,
    finish_round,
    illegal,
    income_round,
    of,
    pass_all,
    run_to,
    table,
    window,
)

SEED = bytes(range(32)).hex()


def test_fb_1_random_generator_and_setup_vector() -> None:
    assert hashlib.sha256(bytes(range(32))).hexdigest() == \
        "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
    s = GAME.setup(6, {}, SEED)
    assert s["commitment"] == "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
    assert s["marker"] == JAC == s["afb"]
    first = ["SC6", "SW3", "BA6", "SW6", "AR3", "HO3", "SS6", "BA2", "SC3", "SC5", "AR2", "HH2", "OS2", "DS1"]
    # six displayed, the rest still on top of the deck in order
    assert [d["card"] for d in s["display"]] == first[:6]
    assert s["deck"][:8] == first[6:]
    assert s["pending"] == {"kind": "select", "seats": [JAC]}  # W-OPEN skipped: no specials


def fb2() -> dict:
    s = table(4, MIR, deck=["SW3", "HH2", "ST1", "HO3"])
    assert [d["card"] for d in s["display"]] == ["SW3", "HH2", None, "HO3"]
    s, _ = act(s, MIR, {"pos": 1, "bid": 4})
    s, _ = act(s, CHR, {"bid": 5})
    s, _ = act(s, HEN, {"bid": None})
    s, _ = act(s, JAC, {"bid": 7})
    s, _ = act(s, MIR, {"bid": 8})
    s, _ = act(s, CHR, {"bid": None})
    s, ev = act(s, JAC, {"bid": None})  # Henry is skipped
    return s, ev


def test_fb_2_auction_with_raises_and_passes() -> None:
    s, ev = fb2()
    assert of(ev, "sold")[0] | {"step": 0} == of(ev, "sold")[0] | {"step": 0}
    assert of(ev, "sold")[0]["seat"] == MIR and of(ev, "sold")[0]["price"] == 8
    assert "SW3" in s["players"][MIR]["items"] and s["players"][MIR]["crowns"] == 2
    assert MIR in s["offer"]["bought"]


def test_fb_3_opening_passes_a_discard_and_a_later_bid() -> None:
    s, _ = fb2()
    assert s["pending"] == {"kind": "select", "seats": [CHR]}  # O9
    s, _ = act(s, CHR, {"pos": 2, "bid": None})
    s, _ = act(s, HEN, {"bid": None})
    s, ev = act(s, JAC, {"bid": None})
    assert of(ev, "discarded")[0]["card"] == "HH2" and "HH2" in s["discard"]
    assert s["display"][1] is None and s["display"][3]["pos"] == 4  # R20: stable positions
    s, _ = act(s, CHR, {"pos": 4, "bid": None})
    s, _ = act(s, HEN, {"bid": 5})
    s, _ = act(s, JAC, {"bid": None})
    s, _ = act(s, CHR, {"bid": 6})  # FD2
    s, ev = act(s, HEN, {"bid": None})
    assert of(ev, "sold")[0]["seat"] == CHR and s["players"][CHR]["crowns"] == 4
    assert s["pending"] == {"kind": "select", "seats": [HEN]}
    s, _ = act(s, HEN, {"pos": 3, "bid": 1})
    s, _ = act(s, JAC, {"bid": 2})
    s, ev = act(s, HEN, {"bid": None})
    sold = of(ev, "sold")[0]
    assert sold["seat"] == JAC and sold["card"] is None and sold["price"] == 2 and sold["visible_to"] == "all"
    assert GAME.describe_event(sold, ["Miranda", "Christopher", "Henry", "Jack"]) == \
        "Jack bought the special at position 3 for 2."
    private = of(ev, "special_bought")[0]
    assert private["card"] == "ST1" and private["visible_to"] == [JAC]
    assert s["players"][JAC]["hand"] == ["ST1"] and s["players"][JAC]["crowns"] == 8
    assert HEN not in s["offer"]["bought"]
    assert s["pending"]["kind"] == "w_close"  # the display is empty: the phase ends


def test_fb_4_the_last_card_rule() -> None:
    s = table(3, MIR, deck=["AR3", "HH1", "HH2"], crowns={HEN - 1: 4})
    # Miranda (0) and Jack (2 here) have bought; Henry (1) is alone with AR3
    s["offer"]["bought"] = [0, 2]
    s["display"] = [{"pos": 1, "card": "AR3"}, None, None]
    s["discard"] = ["HH1", "HH2"]
    s["deck"] = [c for c in s["deck"] if c not in ("HH1", "HH2")]
    run_to(s, "offer")
    assert s["pending"] == {"kind": "lone", "seats": [1]}
    illegal(s, 1, {"take": 1}, "not_enough_crowns")
    after, ev = act(s, 1, {"take": None})
    assert "AR3" in after["discard"] and of(ev, "lone_declined")
    s["players"][1]["crowns"] = 5
    after, _ = act(s, 1, {"take": 1})
    assert after["players"][1]["items"] == ["AR3"] and after["players"][1]["crowns"] == 0


def test_fb_5_the_seed_income_check() -> None:
    items = {MIR: ["HH1", "HH2"], CHR: ["HH3"], HEN: ["HH4"], JAC: ["HH5"]}
    sheets = {MIR: {"HH": 2}, CHR: {"HH": 2}, HEN: {"HH": 3}, JAC: {"HH": 4}}
    _, got, _ = income_round(6, items, sheets)
    assert got == [8, 4, 3, 0, 0, 0]
    _, got, _ = income_round(6, items, sheets, options={"sole_bonus": True})
    assert got == [4, 2, 3, 0, 0, 0]


def test_fb_6_ties_and_a_sole_seller() -> None:
    _, got, _ = income_round(6, {COU: ["SW1", "SW2"]}, {COU: {"SW": 8}})
    assert got[COU] == 20
    _, got, _ = income_round(6, {COU: ["SW1", "SW2"]}, {COU: {"SW": 8}}, options={"sole_bonus": True})
    assert got[COU] == 20
    items = {HEN: ["AR1"], JAC: ["AR2", "AR3"]}
    _, got, _ = income_round(6, items, {HEN: {"AR": 7}, JAC: {"AR": 7}})
    assert (got[HEN], got[JAC]) == (9, 18)
    _, got, _ = income_round(6, items, {HEN: {"AR": 7}, JAC: {"AR": 7}}, options={"sole_bonus": True})
    assert (got[HEN], got[JAC]) == (7, 14)
    _, got, _ = income_round(6, {MIR: ["BA1"], HEN: ["BA2"], JAC: ["BA3", "BA4"]},
                             {MIR: {"BA": 3}, HEN: {"BA": 6}, JAC: {"BA": 6}})
    assert (got[MIR], got[HEN], got[JAC]) == (5, 0, 0)
    _, got, _ = income_round(6, {HEL: ["MP1"], JAC: ["MP2"]}, {HEL: {"MP": 1}, JAC: {"MP": 12}},
                             options={"below_base": True})
    assert (got[HEL], got[JAC]) == (3, 0)
    s = table(6, MIR, items={HEL: ["MP1"], JAC: ["MP2"]})
    run_to(s, "prices")
    illegal(s, HEL, {"prices": {"MP": 1}}, "price_out_of_range")
    s = table(6, MIR, items={HEL: ["MP1"], JAC: ["MP2"]}, options={"below_base": True})
    run_to(s, "prices")
    GAME.validate(s, HEL, {"prices": {"MP": 1}})


def test_fb_7_market_closed_cancels_the_window() -> None:
    s = table(6, MIR, hands={HEL: ["MC1"], JAC: ["ND1"], COU: ["FB2"]}, rnd=5)
    assert s["pending"] == {"kind": "w_open", "seats": [JAC, COU, HEL]}
    deck = len(s["deck"])
    s, ev = window(s, {HEL: [{"card": "MC1"}], JAC: [{"card": "ND1", "target": HEN}], COU: [{"card": "FB2"}]})
    assert len(s["deck"]) == deck and not [d for d in s["display"] if d]
    returned = {(e["seat"], e["card"]) for e in of(ev, "returned")}
    assert returned == {(JAC, "ND1"), (COU, "FB2")}
    assert all(e["visible_to"] == "all" for e in of(ev, "returned"))
    assert s["players"][JAC]["hand"] == ["ND1"] and s["players"][COU]["hand"] == ["FB2"]
    assert "MC1" in s["discard"] and s["afb"] == MIR
    assert s["pending"]["kind"] == "w_close"


def test_fb_8_no_delivery_first_buyer_pre_emption_and_rotation() -> None:
    deck = ["HH1", "SW1", "SS5", "AR1", "HO1"]
    s = table(6, HEN, hands={JAC: ["ND1"], COU: ["FB1"]}, deck=deck)
    s, ev = window(s, {JAC: [{"card": "ND1", "target": MIR}], COU: [{"card": "FB1"}]})
    assert s["afb"] == COU and s["offer"]["nd"] == [MIR] and s["offer"]["preempt"] == COU
    assert [d["card"] for d in s["display"]] == deck  # 6 - 1 cards
    assert s["pending"] == {"kind": "select", "seats": [COU]}
    s, ev = act(s, COU, {"pos": 3, "preempt": True})
    assert "SS5" in s["players"][COU]["items"] and s["players"][COU]["crowns"] == 4
    assert s["pending"] == {"kind": "select", "seats": [HEL]}
    illegal(s, HEL, {"pos": 1, "preempt": True}, "no_preemption")
    s, _ = finish_round(s)
    assert s["round"] == 2 and s["marker"] == JAC
    # both First Buyer cards: Henry's (first from the AFB, Henry himself) wins
    s = table(6, HEN, hands={JAC: ["ND1"], COU: ["FB1"], HEN: ["FB2"]}, deck=deck)
    s, ev = window(s, {JAC: [{"card": "ND1", "target": MIR}], COU: [{"card": "FB1"}], HEN: [{"card": "FB2"}]})
    assert s["afb"] == HEN and s["players"][COU]["hand"] == ["FB1"]
    assert [(e["seat"], e["card"]) for e in of(ev, "returned")] == [(COU, "FB1")]


def fb9(**kw: object) -> dict:
    s = table(4, JAC, items={MIR: ["HO1", "HO4"]}, hands={CHR: ["AL1"]})
    s["offer"]["bought"] = [HEN]
    run_to(s, "w_close")
    return s


def test_fb_9_antitrust() -> None:
    s = fb9()
    assert s["pending"] == {"kind": "w_close", "seats": [CHR]}
    s, ev = window(s, {CHR: [{"card": "AL1", "target": MIR, "type": "HO"}]})
    assert s["pending"] == {"kind": "open", "seats": [CHR]} and s["auction"]["card"] == "HO1"
    s, _ = act(s, CHR, {"bid": 5})
    s, _ = act(s, HEN, {"bid": 6})
    s, _ = act(s, JAC, {"bid": None})
    s, ev = act(s, CHR, {"bid": None})
    assert of(ev, "sold")[0]["to"] == MIR
    assert s["auction"]["card"] == "HO4"
    s, _ = act(s, CHR, {"bid": None})
    s, _ = act(s, HEN, {"bid": None})
    s, ev = act(s, JAC, {"bid": None})
    assert "HO4" in s["discard"] and s["players"][MIR]["items"] == [] and s["players"][HEN]["items"] == ["HO1"]
    assert crowns(s) == [16, 10, 4, 10] and "AL1" in s["discard"]


def fb10(henry: list[dict]) -> tuple[dict, list]:
    s = table(4, CHR, items={MIR: ["MP2", "HH1"], JAC: ["SW5"]},
              hands={JAC: ["ST2"], HEN: ["DI1", "ST3"], MIR: ["TR1"]})
    run_to(s, "w_close")
    plays = {JAC: [{"card": "ST2", "item": "MP2"}], MIR: [{"card": "TR1", "give": "HH1", "item": "SW5"}]}
    if henry:
        plays[HEN] = henry
    return window(s, plays)


def test_fb_10_resolution_order_and_a_returned_card() -> None:
    s, ev = fb10([{"card": "DI1", "item": "MP2"}])
    assert "MP2" in s["removed"] and [(e["seat"], e["card"]) for e in of(ev, "returned")] == [(JAC, "ST2")]
    assert s["players"][MIR]["items"] == ["SW5"] and s["players"][JAC]["items"] == ["HH1"]
    assert "ST2" in s["players"][JAC]["hand"]
    s, ev = fb10([])
    assert s["players"][JAC]["items"] == ["HH1", "MP2"] and s["players"][MIR]["items"] == ["SW5"]
    s, ev = fb10([{"card": "ST3", "item": "MP2"}])
    assert s["players"][HEN]["items"] == ["MP2"] and s["players"][JAC]["items"] == ["HH1"]
    assert s["players"][MIR]["items"] == ["SW5"] and "ST2" in s["players"][JAC]["hand"]


def test_fb_11_spy() -> None:
    s = table(4, MIR, items={HEN: ["HO2"], JAC: ["HO6"]}, hands={HEN: ["SP1", "SP2"]}, crowns={HEN: 0, JAC: 0})
    run_to(s, "prices")
    s, _ = GAME.step(s, {HEN: {"prices": {"HO": 10}}, JAC: {"prices": {"HO": 8}}})
    assert s["pending"] == {"kind": "w_spy", "seats": [HEN]}
    illegal(s, HEN, {"play": [{"card": "SP1"}, {"card": "SP2"}]}, "one_spy")
    s, _ = window(s, {HEN: [{"card": "SP1"}]})
    assert s["pending"] == {"kind": "spy", "seats": [HEN]}
    assert GAME.view(s, HEN)["players"][JAC]["sheet"] == {"HO": 8}
    assert "sheet" not in GAME.view(s, MIR)["players"][JAC]
    assert GAME.requests(s)[0].choices["sheets"][str(JAC)] == {"HO": 8}
    s, _ = act(s, HEN, {"prices": {"HO": 7}})
    s, _ = window(s)  # W-REVEAL (Henry still holds SP2)
    assert s["round"] == 2 and crowns(s)[HEN] == 9 and crowns(s)[JAC] == 0
    # without the Spy
    s = table(4, MIR, items={HEN: ["HO2"], JAC: ["HO6"]}, crowns={HEN: 0, JAC: 0})
    run_to(s, "prices")
    s, _ = GAME.step(s, {HEN: {"prices": {"HO": 10}}, JAC: {"prices": {"HO": 8}}})
    assert s["round"] == 2 and crowns(s)[HEN] == 0 and crowns(s)[JAC] == 10


def test_fb_12_out_of_season_bad_check_and_racketeering() -> None:
    s = table(4, MIR, items={MIR: ["HH1", "BA1"], CHR: ["HH2"], HEN: ["HH3"], JAC: ["SW1", "SW2"]},
              hands={CHR: ["OS1"], HEN: ["BC1"], JAC: ["RA1"]}, crowns={MIR: 0})
    run_to(s, "prices")
    s, _ = GAME.step(s, {MIR: {"prices": {"HH": 2, "BA": 3}}, CHR: {"prices": {"HH": 3}},
                         HEN: {"prices": {"HH": 4}}, JAC: {"prices": {"SW": 5}}})
    s, _ = window(s)  # W-SPY
    assert s["pending"]["kind"] == "w_reveal"
    before = crowns(s)
    s, ev = window(s, {CHR: [{"card": "OS1", "type": "SW"}], HEN: [{"card": "BC1", "target": MIR, "type": "HH"}],
                       JAC: [{"card": "RA1", "target": MIR, "trigger": MIR}]})
    assert [a - b for a, b in zip(crowns(s), before, strict=True)] == [0, 3, 0, 5]
    paid = of(ev, "racketeering_paid")[0]
    assert paid["amount"] == 5 and paid["target"] == MIR and paid["seat"] == JAC
    # it fired right after Miranda's Bow & Arrows credit, before Swords
    types = [e.get("type") for e in ev]
    assert types.index("racketeering_paid") == types.index("out_of_season_applied") - 1


def test_fb_13_subsidies_and_divination() -> None:
    s = table(4, MIR, deck=["SW4", "HH1", "HH2", "HH3"], hands={JAC: ["SU1"], MIR: ["DS1"], HEN: ["SP2", "TR3"]},
              crowns={JAC: 3})
    s, _ = window(s)  # W-OPEN: everyone passes
    s, _ = act(s, MIR, {"pos": 1, "bid": None})
    s, _ = act(s, CHR, {"bid": None})
    s, _ = act(s, HEN, {"bid": 6})
    assert s["pending"] == {"kind": "bid", "seats": [JAC]}
    err = illegal(s, JAC, {"bid": 7}, "not_enough_crowns")
    assert "3" in err.message
    s, ev = act(s, JAC, {"bid": 7, "instants": [{"card": "SU1"}]})
    assert GAME.describe_event(of(ev, "played")[0], ["M", "C", "H", "Jack"]) == "Jack: Subsidies, +5."
    assert s["players"][JAC]["crowns"] == 8 and s["auction"]["high"] == 7
    # Divination: Miranda casts DS1 on Henry with her next order
    s, ev = act(s, MIR, {"bid": None, "instants": [{"card": "DS1", "target": HEN}]})
    cast = of(ev, "played")[0]
    assert cast["visible_to"] == "all" and cast["play"]["target"] == HEN
    seen = of(ev, "divination_seen")[0]
    assert seen["visible_to"] == [MIR] and seen["hand"] == ["SP2", "TR3"]
    assert GAME.view(s, MIR)["players"][HEN]["hand"] == ["SP2", "TR3"]
    assert "hand" not in GAME.view(s, CHR)["players"][HEN]
    assert "DS1" in s["discard"]


def test_fb_13_divination_shows_committed_cards_as_in_hand() -> None:
    # R14: Henry commits TR3 in an open W-CLOSE; Miranda's Divination in the same window sees it in hand
    s = table(4, MIR, items={HEN: ["HH1"], JAC: ["SW1"]}, hands={MIR: ["DS1"], HEN: ["SP2", "TR3"]})
    run_to(s, "w_close")
    s, ev = window(s, {HEN: [{"card": "TR3", "give": "HH1", "item": "SW1"}]},
                   extra={MIR: {"play": [], "instants": [{"card": "DS1", "target": HEN}]}})
    assert of(ev, "divination_seen")[0]["hand"] == ["SP2", "TR3"]


def test_fb_14_final_scoring_with_a_tie() -> None:
    s = table(4, MIR, items={MIR: ["SW3", "HH1", "HH2"], HEN: ["AR1", "HO2", "HH4"], JAC: ["SC1"]},
              hands={JAC: ["ST1", "TR1"]}, crowns={MIR: 31, HEN: 27, CHR: 35, JAC: 30})
    r = income.ranking(s)
    assert [(x["seat"], x["score"], x["place"]) for x in r] == [(MIR, 39, 1), (HEN, 39, 1), (CHR, 35, 3),
                                                                 (JAC, 33, 4)]


def test_fb_15_trading_variant() -> None:
    s = table(4, MIR, items={HEN: ["HO6"]}, options={"trading": True}, rnd=3, deck=["HH1", "HH2", "HH3", "HH4"])
    assert s["pending"] == {"kind": "select", "seats": [MIR]}
    s, _ = act(s, MIR, {"pos": 1, "bid": None})
    s, ev = act(s, CHR, {"bid": None})
    assert s["pending"] == {"kind": "open", "seats": [HEN]}
    s, ev = act(s, HEN, {"bid": None})
    assert s["pending"] == {"kind": "open", "seats": [JAC]}
    s, ev = act(s, JAC, {"bid": None, "propose": {"to": HEN, "give": {"crowns": 6}, "get": {"items": ["HO6"]}}})
    assert s["pending"] == {"kind": "accept", "seats": [HEN]}
    s, ev = act(s, HEN, {"accept": True})
    line = GAME.describe_event(of(ev, "transferred")[0], ["Miranda", "Christopher", "Henry", "Jack"])
    assert line == "Jack → Henry: 6 crowns; Henry → Jack: Horses."  # the card by its name, never its id
    assert s["players"][JAC]["items"] == ["HO6"] and crowns(s)[HEN] == 16 and crowns(s)[JAC] == 4
    # frozen during D-PRICE
    run_to(s, "prices")
    illegal(s, JAC, {"prices": {"HO": 5}, "propose": {"to": HEN, "give": {"crowns": 1}}}, "transfers_frozen")
    # a special shows only as a count
    s = table(4, MIR, hands={JAC: ["ST1"]}, options={"trading": True})
    s, ev = window(s, extra={JAC: {"play": [], "propose": {"to": HEN, "give": {"specials": ["ST1"]}}}})
    assert of(ev, "proposed")[0]["give"]["specials"] == 1
    assert "ST1" not in str(GAME.view(s, CHR)) and "ST1" in str(GAME.view(s, HEN)["players"][JAC])
    s, ev = act(s, HEN, {"accept": True})
    assert of(ev, "transferred")[0]["give"]["specials"] == 1
    private = of(ev, "transferred_specials")[0]
    assert private["visible_to"] == [HEN, JAC] and not visible_to(private, CHR)
    assert s["players"][HEN]["hand"] == ["ST1"]


def test_fb_16_round_counts() -> None:
    assert GAME.setup(7, {}, 1)["rounds"] == 8
    assert GAME.setup(6, {}, 1)["rounds"] == 10
    assert GAME.setup(6, {"rounds": 5}, 1)["rounds"] == 5
    s = GAME.setup(3, {}, 1)
    s, _ = pass_all(s, limit=2000)
    assert s["over"] and len(s["deck"]) >= 72 - 30
