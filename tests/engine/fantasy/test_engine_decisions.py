"""The engine decisions FD1–FD15 (§2), one test each."""

from __future__ import annotations

import hashlib

from engine.core.bots import play_game
from engine.core.seed import state_digest
from engine.core.stream import draw, new_stream, shuffle, words
from engine.core.verify import record, verify_history
from engine.fantasy.components import components
from tests.engine.fantasy.helpers import (
    CHR,
    COU,
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


def test_fd1_randomness_is_the_committed_stream() -> None:
    seed = bytes(range(32)).hex()
    stream = new_stream(seed)
    first, after = draw(stream, 6)
    deck, _ = shuffle(after, list(components().deck))
    s = GAME.setup(6, {}, seed)
    assert s["marker"] == first == 3
    assert [d["card"] for d in s["display"]] + s["deck"][:66] == deck
    # block 0 is SHA-256(seed ‖ 0x00000000)
    w, _ = words(new_stream(seed), 1)
    assert w[0] == int.from_bytes(hashlib.sha256(bytes(range(32)) + bytes(4)).digest()[:4], "big")


def test_fd1_finished_games_verify() -> None:
    bots = GAME.bots()
    for seed, seats in (("verify-1", 3), ("verify-2", 8)):
        steps: list[dict] = []
        out = play_game(GAME, seats, {i: bots["random" if i % 2 else "trader"](f"{seed}/{i}") for i in range(seats)},
                        seed, {"trading": True},
                        on_step=lambda s, o, e, steps=steps: steps.append(
                            {"orders": o, "state_sha256": state_digest(s), "events": e}))
        doc = record("fantasy", seats, {"trading": True}, seed, steps, GAME.result(out.state))
        report = verify_history(doc)
        assert report.ok, report.problems
        doc["steps"][3]["state_sha256"] = "0" * 64
        assert not verify_history(doc).ok


def test_fd2_opening_passes_are_not_final() -> None:
    s = table(4, MIR, deck=["HO3", "HH1", "HH2", "HH3"])
    s, _ = act(s, MIR, {"pos": 1, "bid": None})
    s, _ = act(s, CHR, {"bid": None})
    s, _ = act(s, HEN, {"bid": 5})
    s, _ = act(s, JAC, {"bid": None})
    assert s["pending"] == {"kind": "bid", "seats": [MIR]}  # passed the opening, still in


def test_fd3_lone_player_takes_one_card_and_the_rest_go() -> None:
    s = table(3, MIR, deck=["HH1", "SW1", "AR1"])
    s["offer"]["bought"] = [MIR, CHR]
    s["auction"] = None
    run_to(s, "offer")
    s, ev = act(s, 2, {"take": 2})
    assert s["players"][2]["items"] == ["SW1"] and s["players"][2]["crowns"] == 6
    assert {"HH1", "AR1"} <= set(s["discard"]) and len(of(ev, "discarded")) == 2


def test_fd4_no_delivery_makes_the_target_ineligible() -> None:
    s = table(4, MIR, hands={JAC: ["ND1"]})
    s, _ = window(s, {JAC: [{"card": "ND1", "target": MIR}]})
    assert s["pending"] == {"kind": "select", "seats": [CHR]}  # not Miranda (AFB, ineligible)
    s, _ = act(s, CHR, {"pos": 1, "bid": None})
    assert s["pending"]["seats"] == [HEN]
    s, _ = act(s, HEN, {"bid": None})
    s, _ = act(s, JAC, {"bid": None})  # Miranda is never asked
    assert of([], "x") == []


def test_fd5_first_buyer_card_for_this_round_only() -> None:
    s = table(4, MIR, hands={HEN: ["FB1"], JAC: ["FB2"]})
    s, ev = window(s, {HEN: [{"card": "FB1"}], JAC: [{"card": "FB2"}]})
    assert s["afb"] == HEN and s["players"][JAC]["hand"] == ["FB2"]
    s2 = s
    while s2["round"] == 1:
        s2, _ = GAME.step(s2, {p: GAME.default_order(s2, p) for p in s2["pending"]["seats"]})
    assert s2["marker"] == CHR and s2["afb"] == CHR  # the marker moved from Miranda, not Henry


def test_fd6_invalid_targets_refused_at_submission() -> None:
    s = table(4, MIR, items={JAC: ["SW1"], MIR: ["HH1"]}, hands={MIR: ["ST1", "ND1", "DI1"]})
    illegal(s, MIR, {"play": [{"card": "ND1", "target": MIR}]}, "bad_target")
    illegal(s, MIR, {"play": [{"card": "ND1", "target": 9}]}, "bad_target")
    illegal(s, MIR, {"play": [{"card": "ST1"}]}, "no_such_card")  # not a W-OPEN card
    run_to(s, "w_close")
    illegal(s, MIR, {"play": [{"card": "ST1", "target": MIR, "item": "HH1"}]}, "bad_target")  # her own
    illegal(s, MIR, {"play": [{"card": "ST1", "target": JAC, "item": "HH1"}]}, "bad_target")  # not Jack's
    illegal(s, MIR, {"play": [{"card": "ST1", "item": "SW1"}]}, "bad_target")  # whose? (R12, R21)
    illegal(s, MIR, {"play": [{"card": "DI1", "target": JAC, "item": "SW2"}]}, "bad_target")  # nobody owns it
    illegal(s, MIR, {"play": [{"card": "ST2", "target": JAC, "item": "SW1"}]}, "no_such_card")
    GAME.validate(s, MIR, {"play": [{"card": "ST1", "target": JAC, "item": "SW1"}]})


def test_fd7_antitrust_auction_order_and_payment() -> None:
    s = table(4, MIR, items={HEN: ["SW4", "SW1", "SW6"]}, hands={MIR: ["AL2"]})
    run_to(s, "w_close")
    s, ev = window(s, {MIR: [{"card": "AL2", "target": HEN, "type": "SW"}]})
    assert of(ev, "antitrust_auction")[0]["cards"] == ["SW1", "SW4", "SW6"]
    assert s["auction"]["card"] == "SW1" and s["pending"]["seats"] == [JAC]  # Henry's left
    s, _ = act(s, JAC, {"bid": 4})
    s, _ = act(s, MIR, {"bid": None})
    s, ev = act(s, CHR, {"bid": None})
    assert of(ev, "sold")[0]["seat"] == JAC and crowns(s) == [10, 10, 14, 6]
    s, _ = act(s, JAC, {"bid": 4})  # may win several
    s, _ = act(s, MIR, {"bid": None})
    s, _ = act(s, CHR, {"bid": None})
    assert s["players"][JAC]["items"] == ["SW1", "SW4"]


def test_fd8_several_spies_in_turn_order() -> None:
    s = table(4, CHR, items={MIR: ["HO1"], HEN: ["HO2"]}, hands={MIR: ["SP1"], HEN: ["SP2"]})
    run_to(s, "prices")
    s, _ = GAME.step(s, {MIR: {"prices": {"HO": 9}}, HEN: {"prices": {"HO": 9}}})
    s, _ = window(s, {MIR: [{"card": "SP1"}], HEN: [{"card": "SP2"}]})
    assert s["spies"] == [HEN, MIR] and s["pending"]["seats"] == [HEN]  # from the AFB, Christopher
    s, _ = act(s, HEN, {"prices": {"HO": 8}})
    assert GAME.requests(s)[0].choices["sheets"][str(HEN)] == {"HO": 8}  # Miranda sees Henry's change


def test_fd9_racketeering_at_the_end_without_a_positive_credit() -> None:
    _, got, ev = income_round(4, {MIR: ["HH1"]}, {MIR: {"HH": 2}}, start={p: 10 for p in range(4)},
                              reveal={"ra": [{"by": JAC, "x": CHR, "y": HEN, "fired": False}]})
    assert got == [4, -6, 0, 6]
    assert of(ev, "racketeering_paid")[0]["amount"] == 6


def test_fd10_bad_check_price_still_counts() -> None:
    _, got, _ = income_round(4, {MIR: ["HH1"], CHR: ["HH2"]}, {MIR: {"HH": 2}, CHR: {"HH": 4}},
                             reveal={"bc": [[MIR, "HH"]]})
    assert got[:2] == [0, 0]  # Christopher is still highest


def test_fd11_income_order_types_then_turn_order_from_the_afb() -> None:
    _, _, ev = income_round(4, {MIR: ["SW1"], CHR: ["HH1"], HEN: ["HH2"]},
                            {MIR: {"SW": 4}, CHR: {"HH": 2}, HEN: {"HH": 2}}, afb=HEN)
    assert [(e["seat"], e["item_type"]) for e in of(ev, "income")] == [(HEN, "HH"), (CHR, "HH"), (MIR, "SW")]


def test_fd12_instants_at_any_decision_point() -> None:
    s = table(4, MIR, items={MIR: ["HH1"]}, hands={MIR: ["SU1"]})
    run_to(s, "prices")
    s, ev = GAME.step(s, {MIR: {"prices": {"HH": 2}, "instants": [{"card": "SU1"}]}})
    assert of(ev, "played")[0]["visible_to"] == "all" and crowns(s)[MIR] >= 15
    # an order that carries only instants (a window pass) plays them too
    s = table(4, MIR, hands={CHR: ["SU1", "ST1"]})
    s, ev = GAME.step(s, {CHR: {"instants": [{"card": "SU1"}]}})
    assert crowns(s)[CHR] == 15 and s["players"][CHR]["hand"] == ["ST1"]


def test_fd13_cards_left_over() -> None:
    s = table(4, MIR, deck=["HH1", "ST1", "HH2", "HH3"])
    s, _ = act(s, MIR, {"pos": 2, "bid": None})
    for p in (CHR, HEN, JAC):
        s, ev = act(s, p, {"bid": None})
    assert "ST1" in s["buried"] and "ST1" not in s["discard"]
    assert of(ev, "discarded")[0]["card"] is None and "ST1" not in str(GAME.view(s, MIR))


def test_fd14_no_automatic_passes_for_the_broke() -> None:
    s = table(4, MIR, crowns={CHR: 0}, deck=["HH1", "HH2", "HH3", "HH4"])
    s, _ = act(s, MIR, {"pos": 1, "bid": 2})
    assert s["pending"] == {"kind": "bid", "seats": [CHR]}  # asked though he cannot raise


def test_fd15_deck_exhaustion_reveals_what_is_left() -> None:
    s = table(4, MIR)
    s["deck"] = s["deck"][:2]
    s["auction"] = None
    run_to(s, "round")
    assert len([d for d in s["display"] if d]) == 2 and s["deck"] == []
    assert COU == 4
