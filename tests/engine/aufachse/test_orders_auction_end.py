"""Orders (§11), trailers (§12), public orders and the auction (§13), the end (§15):
L1–L5, H1–H4, P1–P4, A1–A9, G1–G3, R8–R11, R13, R21, R27, R30, R32, AD2, AD9, AD11,
AD12, T6, T9, AA-7 … AA-10, AA-14."""

from __future__ import annotations

from typing import Any

from engine.aufachse.context import final_money
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


def auction_on(s: dict[str, Any], picker: int, slot: int) -> dict[str, Any]:
    """`picker` ends in Hamburg from Hannover with a 3 and picks `slot`."""
    put(s, picker, "Hannover")
    open_move(s, picker, [3, 3])
    s, _ = step(s, picker, {"die": "A", "path": ["R3.2", "R3.1", "Hamburg"], "arrive": {"pick": slot}})
    return s


def test_aa_8_r11_a1_a2_a3_a4_a6_the_seed_auction() -> None:
    s = table()
    s["display"][0] = "O02"
    s = auction_on(s, RED, 1)
    assert s["auction"]["card"] == "O02" and s["display"][0] == "O02"  # A1: the card stays in its slot
    script = [(YELLOW, {"pass": True}), (BLUE, {"bid": 2}), (GREEN, {"bid": 3}), (RED, {"bid": 3}),
              (BLUE, {"pass": True}), (GREEN, {"bid": 4}), (RED, {"pass": True})]
    for seat, order in script:
        assert s["pending"] == {"kind": "bid", "seat": seat, "card": "O02"}, (seat, s["pending"])
        if seat == BLUE and order == {"pass": True}:
            illegal(s, BLUE, {"bid": 3}, "bad_bid")  # others must bid above the current step
        s, ev = step(s, seat, order)
    assert s["players"][GREEN]["cash"] == 2200 and s["players"][GREEN]["open"] == ["O02"]
    assert "O02" not in s["display"] and s["auction"] is None
    assert [e for e in ev if e["type"] == "won"][0]["cost"] == 2800


def test_a4_ad9_the_picker_may_match_or_raise_and_is_asked_only_after_a_bid() -> None:
    s = auction_on(table(), RED, 2)
    s, _ = step(s, YELLOW, {"bid": 1})
    s, _ = step(s, BLUE, {"pass": True})
    s, _ = step(s, GREEN, {"pass": True})
    assert s["pending"]["seat"] == RED
    assert GAME.requests(s)[0].choices["allowed"][0] == 1
    legal(s, RED, {"bid": 1})
    s, _ = step(s, RED, {"bid": 3})
    assert s["auction"]["holder"] == RED and s["auction"]["step"] == 3


def test_aa_9_p3_p4_a7_decline_then_a_free_pick_and_the_slide() -> None:
    s = table()
    s["display"] = ["O14", "O24", "O12", "O48"]
    s["deck"] = ["O28", "O18", "O49"]
    put(s, RED, "R17.3")
    open_move(s, RED, [1, 1])
    s, ev = step(s, RED, {"die": "A", "path": ["Kassel"], "roadworks": "R5.1", "arrive": {"decline": True}})
    assert s["display"] == ["O24", "O12", "O48", "O28"] and s["deck"][0] == "O18" and "O14" in s["discard"]
    s = auction_on(s, BLUE, 2)
    for seat in (GREEN, RED, YELLOW):
        s, ev = step(s, seat, {"pass": True})
    assert s["players"][BLUE]["open"] == ["O12"] and s["players"][BLUE]["cash"] == 5000
    assert s["display"] == ["O24", "O48", "O28", "O18"]
    assert GAME.view(s, RED)["players"][BLUE]["open"] == ["O12"]  # A7: its identity stays public


def test_aa_10_a5_ad9_a_refused_bid_and_an_automatic_pass() -> None:
    s = table()
    s["display"][0] = "O01"
    s = auction_on(s, RED, 1)
    # YELLOW has 1400 cash; BLUE will hold step 2
    s["players"][YELLOW]["cash"] = 1400
    s, _ = step(s, YELLOW, {"bid": 1})
    s, _ = step(s, BLUE, {"bid": 2})
    s, _ = step(s, GREEN, {"pass": True})
    s, _ = step(s, RED, {"pass": True})
    assert s["pending"]["seat"] == YELLOW and s["auction"]["step"] == 2
    err = illegal(s, YELLOW, {"bid": 5}, "not_enough_money")
    assert "1400" in err.message
    s, _ = step(s, YELLOW, {"bid": 4})
    s, ev = step(s, BLUE, {"bid": 5})
    assert "auto_pass" in types(ev) and s["players"][BLUE]["open"] == ["O01"]
    assert s["players"][BLUE]["cash"] == 5000 - 1800


def test_a8_d_load_won_for_a_winner_standing_in_the_start_city() -> None:
    s = table()
    s["display"][0] = "O02"  # Berlin → Trieste, 3 goods
    put(s, GREEN, "Berlin")
    s = auction_on(s, RED, 1)
    s, _ = step(s, YELLOW, {"pass": True})
    s, _ = step(s, BLUE, {"pass": True})
    s, _ = step(s, GREEN, {"bid": 1})
    s, _ = step(s, RED, {"pass": True})
    assert s["pending"] == {"kind": "load_won", "seat": GREEN, "card": "O02", "active": False}
    illegal(s, GREEN, {"trailers": [{"buy": "small"}], "load": ["O02"]}, "no_trailers")
    assert "O02" not in s["display"] and len(s["display"]) == 3  # A9: the refill comes after D-LOAD-WON
    s, _ = step(s, GREEN, GAME.default_order(s, GREEN))
    assert s["players"][GREEN]["loaded"] == ["O02"] and len(s["display"]) == 4


def test_p1_p2_r10_eligibility_needs_the_full_value_in_any_city() -> None:
    s = table()
    put(s, RED, "Hannover", hand=["O14"])
    open_move(s, RED, [5, 5])
    path = ["R17.1", "R17.2", "R17.3", "Kassel"]
    illegal(s, RED, {"die": "A", "path": path, "arrive": {"pick": 1}}, "cannot_pick")
    s["display"], s["deck"] = [], []
    open_move(s, RED, [4, 4])
    illegal(s, RED, {"die": "A", "path": path, "arrive": {"decline": True}}, "cannot_pick")
    legal(s, RED, {"die": "A", "path": path})
    s2 = table()
    put(s2, RED, "Hannover")
    open_move(s2, RED, [4, 4])
    illegal(s2, RED, {"die": "A", "path": path, "arrive": {"pick": 9}}, "no_such_slot")
    illegal(s2, RED, {"die": "A", "path": path, "arrive": {"pick": 1, "decline": True}}, "pick_required")


def test_aa_7_r9_h1_h2_h3_h4_trailer_capacity_buy_and_sell() -> None:
    s = table()
    put(s, YELLOW, "R3.2", loaded=["O01"], hand=["O10"])  # O10 starts in Hannover: an own-order city
    open_move(s, YELLOW, [5, 5])
    path = ["Hannover"]
    illegal(s, YELLOW, {"die": "A", "path": path, "arrive": {"load": ["O10"]}}, "over_capacity")
    order = {"die": "A", "path": path, "arrive": {"trailers": [{"buy": "small"}], "load": ["O10"]}}
    legal(s, YELLOW, order)
    illegal(s, YELLOW, {"die": "A", "path": path, "arrive": {"trailers": [{"buy": "small"}], "load": ["O10"]},
                        "trailers": [{"sell": "small"}]}, "no_trailers")
    s, _ = step(s, YELLOW, order)
    y = s["players"][YELLOW]
    assert y["cash"] == 3000 and y["trailers"]["small"] == 1 and s["supply"]["small"] == 3
    # selling now would leave Load 9 over capacity 6
    put(s, YELLOW, "Berlin")
    y["loaded"] = ["O01", "O10"]
    open_move(s, YELLOW, [1, 1])
    illegal(s, YELLOW, {"trailers": [{"sell": "small"}], "die": "A", "path": ["R19.2"], "roadworks": "R5.1"},
            "over_capacity")
    y["loaded"] = ["O01"]
    y["cash"] = 4400
    s, ev = step(s, YELLOW, {"trailers": [{"sell": "small"}], "die": "A", "path": ["R19.2"],
                             "roadworks": "R5.1"})
    assert s["players"][YELLOW]["cash"] == 4900 and s["supply"]["small"] == 4
    # trailers only in one's own turn; and not in the kids variant
    kids = table(kids=True)
    put(kids, RED, "Hannover")
    open_move(kids, RED, [1, 1])
    illegal(kids, RED, {"trailers": [{"buy": "small"}], "die": "A", "path": ["R3.2"], "roadworks": "R5.1"},
            "no_trailers")


def test_l1_l2_l3_l5_ad2_ad11_loading_rules() -> None:
    s = table()
    put(s, RED, "Kassel", hand=["O14", "O20", "O53"])  # three orders from Kassel, 3 goods each
    open_move(s, RED, [1, 1])
    illegal(s, RED, {"load": ["O14", "O20", "O53"], "die": "A", "path": ["R17.3"], "roadworks": "R5.1"},
            "over_capacity")
    illegal(s, RED, {"load": ["O01"], "die": "A", "path": ["R17.3"], "roadworks": "R5.1"}, "no_such_order")
    s2, ev = step(s, RED, {"load": ["O14", "O20"], "die": "A", "path": ["R17.3"], "roadworks": "R5.1"})
    assert s2["players"][RED]["loaded"] == ["O14", "O20"] and s2["players"][RED]["hand"] == ["O53"]
    put(s, RED, "Hannover", hand=["O14"])
    open_move(s, RED, [1, 1])
    illegal(s, RED, {"load": ["O14"], "die": "A", "path": ["R17.1"], "roadworks": "R5.1"}, "wrong_city")


def test_l4_r27_deliveries_in_listed_order_each_settling() -> None:
    s = table()
    put(s, RED, "R18.2", loaded=["O13", "O14"])  # both go to Magdeburg
    open_move(s, RED, [1, 1])
    illegal(s, RED, {"die": "A", "path": ["Magdeburg"], "roadworks": "R5.1",
                     "arrive": {"deliver": ["O13"], "decline": True}}, "bad_deliveries")
    s, ev = step(s, RED, {"die": "A", "path": ["Magdeburg"], "roadworks": "R5.1",
                          "arrive": {"deliver": ["O14", "O13"], "decline": True}})
    assert [e["card"] for e in ev if e["type"] == "delivered"] == ["O14", "O13"]
    assert s["players"][RED]["cash"] == 6800 and s["discard"][:2] == ["O14", "O13"]


def test_aa_14_g1_g3_r13_r21_t9_r32_end_game_trigger_and_final_money() -> None:
    s = table(3)
    s["display"], s["deck"] = [], []
    put(s, RED, "Trieste", loaded=["O05"], cash=9200)
    put(s, YELLOW, "Trieste", cash=900)
    s["players"][YELLOW]["hand"] = ["O30"]
    s["players"][YELLOW]["debts"] = [{"to": None, "amount": 1000, "card": "N02"}]
    put(s, BLUE, "R18.2", loaded=["O13"], cash=8700)
    open_move(s, BLUE, [1, 1])
    s, ev = step(s, BLUE, {"die": "A", "path": ["Magdeburg"], "roadworks": "R5.1"})
    assert s["over"] and GAME.requests(s) == []
    res = GAME.result(s)
    assert [(r["seat"], r["money"], r["place"]) for r in res] == [(2, 9500, 1), (0, 9200, 2), (1, -100, 3)]
    assert types(ev)[-1] == "game_over" and s["roadworks"] == "R5.1"
    # R21: a debt to a player counts for both sides
    s["players"][YELLOW]["cash"] = 300
    s["players"][YELLOW]["debts"].append({"to": RED, "amount": 400, "card": "E12"})
    assert (final_money(s, RED), final_money(s, YELLOW)) == (9600, -1100)
    # H4: trailers are worth nothing at the end
    s["players"][RED]["trailers"]["large"] = 1
    assert final_money(s, RED) == 9600


def test_r32_a_game_ending_delivery_cancels_the_rest_of_the_order() -> None:
    s = table(3)
    s["display"], s["deck"] = [], []
    s["players"][RED]["hand"] = ["O05"]
    s["players"][YELLOW]["hand"] = ["O06"]
    put(s, BLUE, "R18.2", loaded=["O13"], hand=["O46"])  # O46 starts in Magdeburg
    s["players"][BLUE]["hand"] = []
    s["players"][BLUE]["open"] = ["O46"]
    open_move(s, BLUE, [1, 1])
    order = {"die": "A", "path": ["Magdeburg"], "roadworks": "R5.1",
             "arrive": {"trailers": [{"buy": "small"}], "load": ["O46"]}}
    # validated as a whole: a part that would be cancelled must still be legal
    s["players"][BLUE]["cash"] = 1000
    illegal(s, BLUE, order, "not_enough_money")
    s["players"][BLUE]["cash"] = 5000
    s2, ev = step(s, BLUE, order)
    assert not s2["over"]  # O46 is still in BLUE's hand: nobody holds nothing yet
    # now without O46: the delivery empties BLUE's holdings and the rest is cancelled
    s["players"][BLUE]["open"] = []
    s3, ev = step(s, BLUE, {"die": "A", "path": ["Magdeburg"], "roadworks": "R5.1",
                            "arrive": {"trailers": [{"buy": "small"}]}})
    assert s3["over"] and types(ev)[-2:] == ["delivered", "game_over"]
    assert s3["players"][BLUE]["trailers"]["small"] == 0 and s3["players"][BLUE]["cash"] == 5800


def test_g2_g1_ad12_r30_the_other_order_and_shared_places() -> None:
    s = table(3)
    s["display"], s["deck"] = ["O14"], []
    s["players"][YELLOW].update({"hand": [], "loaded": []})
    s["players"][RED]["hand"] = ["O05"]
    s["players"][BLUE]["hand"] = ["O06"]
    put(s, RED, "R17.3")
    open_move(s, RED, [1, 1])
    s, ev = step(s, RED, {"die": "A", "path": ["Kassel"], "roadworks": "R5.1", "arrive": {"decline": True}})
    assert s["over"]
    for p in s["players"]:
        p["cash"], p["debts"] = 5000, []
    s["players"][BLUE]["cash"] = 4000
    assert [r["place"] for r in GAME.result(s)] == [1, 1, 3]


def test_a9_t6_g1_a_won_card_in_a_hand_keeps_the_game_going() -> None:
    s = table()
    s["display"], s["deck"] = ["O24"], []
    for seat, card in ((YELLOW, "O05"), (BLUE, "O06"), (GREEN, "O07")):
        s["players"][seat]["hand"] = [card]
    s = auction_on(s, RED, 1)
    for seat in (YELLOW, BLUE, GREEN):
        s, _ = step(s, seat, {"pass": True})
    assert not s["over"] and s["display"] == [] and s["players"][RED]["open"] == ["O24"]
