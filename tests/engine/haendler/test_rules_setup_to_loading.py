"""Rules tests for Die Händler H-1 to H-55: components, hidden information, orders and
defaults, setup (pairs and auction), round structure, phase 1 (buying) and phase 2 (cart
auctions and loading), with the worked examples W-3, W-4, W-5, W-6 and W-20.

Each test sets up a real game, edits the plain-JSON state to the rule's situation and
drives the real validate/resolve path (see helpers.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.core import IllegalOrder, OptionsError, visible_to
from engine.core.errors import DataError
from engine.haendler.context import ctx_of, sell_price
from tests.engine.haendler.helpers import (
    GAME,
    A,
    B,
    C,
    D,
    board_doc,
    events_of,
    give_cards,
    illegal,
    new_game,
    open_at,
    put,
    set_cart,
    step,
)

PAIRS = [
    {"express_kurier", "lagerverkauf"},
    {"grosses_kontor", "wagnerei"},
    {"grosse_wagnerei", "kurier"},
    {"guenstiger_einkauf", "kontor"},
]
COSTS = {
    "guenstiger_einkauf": 600, "wagnerei": 200, "grosse_wagnerei": 600, "kurier": 400,
    "express_kurier": 800, "kontor": 400, "grosses_kontor": 800, "lagerverkauf": 200,
}  # fmt: skip
ZUL = "kostenlose_zuladung"


# -- local builders ------------------------------------------------------------------------
def defaults(s: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {r.seat: GAME.default_order(s, r.seat) for r in GAME.requests(s)}


def pending(s: dict[str, Any]) -> tuple[str, list[int]]:
    rs = GAME.requests(s)
    return rs[0].kind, [r.seat for r in rs]


def buy_at(s: dict[str, Any], seat: int, nth: int = 1, buy_pass: int = 1) -> None:
    """Open D1-BUY for `seat`, the nth buyer (1-based) of this buy step."""
    open_at(s, "buy", [seat], at={"st": "buy", "i": nth, "buy_pass": buy_pass})


def into_phase2(s: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Play the last buy of round `s['round']` (buying nothing), so the flow enters phase 2."""
    order = [(s["start"] + k) % s["seats"] for k in range(s["seats"])]
    buy_at(s, order[-1], nth=s["seats"], buy_pass=2 if s["round"] == 1 else 1)
    return step(s, {order[-1]: {"goods": []}})


def all_roads(s: dict[str, Any]) -> None:
    """Put every cart on a road space (so no phase-2 decision is asked for it)."""
    for n, space in ((1, "PAR>REI:1"), (2, "KOE>BRU:1"), (3, "GEN>CHU:1")):
        set_cart(s, n, space)


def auction_game(seats: int = 3, start: int = 0) -> dict[str, Any]:
    return new_game(seats, 1, start, abilities="auction")


def money(s: dict[str, Any]) -> list[int]:
    return [p["money"] for p in s["players"]]


# == 1. Components and constants ===============================================================
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_h_1_two_to_four_players_accepted(seats: int) -> None:
    s = new_game(seats)
    assert s["seats"] == seats and len(s["players"]) == seats


@pytest.mark.parametrize("seats", [0, 1, 5])
def test_h_1_fewer_than_two_or_more_than_four_players_refused(seats: int) -> None:
    with pytest.raises(OptionsError) as info:
        GAME.setup(seats, {}, 1)
    assert info.value.details["field"] == "seats"


def test_h_2_board_has_six_cities_each_producing_three_types() -> None:
    s = new_game()
    board = GAME.requests(s)[0].choices["cities"]
    producers: dict[str, set[str]] = {}
    for good, cities in board.items():
        for city in cities:
            producers.setdefault(city, set()).add(good)
    assert sorted(producers) == ["AUG", "BRU", "GEN", "KOE", "LYO", "PAR"]
    assert all(len(goods) == 3 for goods in producers.values())
    assert producers["PAR"] == {"tuch", "wein", "nahrung"}
    assert set(s["bonus"]) == set(producers)


def test_h_2_production_and_prices_are_read_from_the_board_file() -> None:
    doc = board_doc()
    doc["cities"][1]["produces"] = ["tuch", "wein", "seide"]  # Paris: seide instead of nahrung
    doc["price_rows"][0] = [150, 650]
    s = new_game(4, 1, 0, board=doc)
    choices = GAME.requests(s)[0].choices
    assert choices["prices"]["tuch"] == 150
    assert "PAR" in choices["cities"]["seide"] and "PAR" not in choices["cities"]["nahrung"]
    illegal(s, A, {"goods": [{"good": "nahrung", "city": "PAR"}]}, "wrong_city")
    s2, _ = step(s, {A: {"goods": [{"good": "seide", "city": "PAR"}]}})
    assert s2["players"][A]["money"] == 4000 - 150
    assert s2["stores"][A] == {"PAR": {"seide": 1}}


def test_h_3_six_types_nine_pieces_each() -> None:
    s = new_game()
    assert s["stock"] == {g: 9 for g in ("tuch", "wein", "salz", "nahrung", "eisen", "seide")}
    assert sum(s["stock"].values()) == 54


def test_h_4_three_carts_with_one_row_per_player() -> None:
    for seats in (2, 4):
        s = new_game(seats)
        assert len(s["carts"]) == 3
        assert all(len(cart["rows"]) == seats for cart in s["carts"])


def test_h_4_a_row_has_three_slots_for_the_master() -> None:
    s = new_game()
    set_cart(s, 1, "PAR", master=A)
    put(s, A, "PAR", "wein", 4)
    open_at(s, "master", [A], cart=1)
    illegal(s, A, {"load": 4, "good": "wein"}, "too_many_goods")
    s2, _ = step(s, {A: {"load": 3, "good": "wein"}})
    assert s2["carts"][0]["rows"][A] == ["wein"] * 3


def test_h_5_messenger_stands_on_a_road_space_never_in_a_city() -> None:
    s = new_game()
    assert s["messenger"] == "KOE>BRU:3"
    with pytest.raises(OptionsError):
        new_game(4, 1, 0, messenger_start="BRU")
    with pytest.raises(OptionsError):
        new_game(4, 1, 0, messenger_start="NOWHERE:1")


def test_h_6_four_face_up_tiles_valued_one_to_four() -> None:
    s = new_game(3)
    assert all(sorted(p["tiles"]) == [1, 2, 3, 4] for p in s["players"])


def test_h_7_price_wheel_has_two_arrows_each_a_type_or_the_shield() -> None:
    s = new_game()
    open_at(s, "wheel", [A, B, C, D])
    illegal(s, A, {"arrows": ["tuch", None, "wein"]}, "malformed_order")
    illegal(s, A, {"arrows": ["gold", None]}, "malformed_order")
    GAME.validate(s, A, {"arrows": ["tuch", "tuch"]})
    GAME.validate(s, A, {"arrows": [None, None]})


def test_h_8_eight_special_cards_with_printed_costs() -> None:
    s = auction_game(4)
    kind, seats = pending(s)
    assert (kind, seats) == ("name_card", [A])
    assert GAME.requests(s)[0].choices["cards"] == COSTS


def test_h_9_fifteen_influence_cards_three_of_each_kind() -> None:
    s = new_game()
    assert s["deck"] == {
        "achsbruch": 3, "kostenlose_zuladung": 3, "sonder_verkauf": 3, "sozialer_aufstieg": 3, "verkauf_mit_bonus": 3,
    }  # fmt: skip


def test_h_10_ten_credit_cards() -> None:
    assert new_game()["credit_supply"] == 10


def test_h_11_chosen_amounts_go_in_steps_of_100() -> None:
    s = new_game()
    open_at(s, "cart_bid", [A, B, C, D], cart=1)
    illegal(s, A, {"bid": 150}, "bad_amount")
    illegal(s, A, {"bid": -100}, "bad_amount")
    GAME.validate(s, A, {"bid": 200})


def test_h_11_money_can_never_go_negative() -> None:
    s = new_game()
    s["players"][B]["money"] = 300
    open_at(s, "cart_bid", [A, B, C, D], cart=1)
    illegal(s, B, {"bid": 400}, "not_enough_money")
    GAME.validate(s, B, {"bid": 300})


def test_h_12_a_type_with_no_piece_in_stock_cannot_be_bought() -> None:
    s = new_game()
    s["stock"]["eisen"] = 0
    illegal(s, A, {"goods": [{"good": "eisen", "city": "KOE"}]}, "out_of_stock")
    GAME.validate(s, A, {"goods": [{"good": "salz", "city": "KOE"}]})


# == 2. Public and hidden information =========================================================
def test_h_13_public_facts_are_in_every_view() -> None:
    s = new_game()
    put(s, A, "PAR", "tuch", 2)
    give_cards(s, A, "achsbruch", 2)
    s["players"][A]["credits"] = 1
    set_cart(s, 1, "PAR", master=A)
    v = GAME.view(s, B)
    pa = v["players"][A]
    assert v["stores"][A] == {"PAR": {"tuch": 2}}
    assert v["carts"][0]["master"] == A and v["carts"][0]["at"] == "PAR"
    assert v["stock"]["tuch"] == 7 and v["messenger"] == "KOE>BRU:3"
    assert v["prices"] == s["prices"] and v["bonus"] == s["bonus"] and v["arrivals"] == 0
    assert pa["abilities"] == s["players"][A]["abilities"] and pa["tiles"] == [1, 2, 3, 4]
    assert pa["level"] == 1 and pa["credits"] == 1
    assert pa["hand_size"] == 2
    assert v["deck_size"] == 13
    pub = GAME.view(s, "public")
    assert pub["players"][A]["hand_size"] == 2 and pub["stores"][A] == {"PAR": {"tuch": 2}}


def test_h_14_money_hands_and_deck_hidden_from_others() -> None:
    s = new_game()
    give_cards(s, A, "achsbruch")
    v = GAME.view(s, B)
    assert "money" not in v["players"][A] and "hand" not in v["players"][A]
    assert "deck" not in v
    assert "rng" not in v
    assert "achsbruch" not in json.dumps(v["players"])
    own = GAME.view(s, A)
    assert own["players"][A]["money"] == 4000 and own["players"][A]["hand"] == {"achsbruch": 1}
    assert "money" not in own["players"][B]
    pub = GAME.view(s, "public")
    assert all("money" not in p and "hand" not in p for p in pub["players"])


def test_h_14_sealed_windows_are_marked_sealed_sequential_steps_not() -> None:
    s = new_game()
    assert GAME.requests(s)[0].sealed is False  # D1-BUY
    open_at(s, "cart_bid", [A, B, C, D], cart=1)
    assert all(r.sealed for r in GAME.requests(s))
    open_at(s, "master", [A], cart=1)
    assert GAME.requests(s)[0].sealed is False
    open_at(s, "load", [B, C], cart=1)
    assert all(r.sealed for r in GAME.requests(s))


def test_h_15_window_reveal_makes_every_bid_public() -> None:
    s = new_game()
    open_at(s, "cart_bid", [A, B, C, D], at={"st": "carts", "i": 0, "sub": "master"}, cart=1)
    _, ev = step(s, {A: {"bid": 100}, B: {"bid": 0}, C: {"bid": 300}, D: {"bid": 200}})
    (auction,) = events_of(ev, "cart_auction")
    assert visible_to(auction, "public")
    assert auction["bids"] == {"0": 100, "1": 0, "2": 300, "3": 200}


def test_h_15_all_money_and_hands_public_at_game_end() -> None:
    s = new_game()
    give_cards(s, C, "sonder_verkauf")
    s["over"] = True
    pub = GAME.view(s, "public")
    assert [p["money"] for p in pub["players"]] == [4000] * 4
    assert pub["players"][C]["hand"] == {"sonder_verkauf": 1}


def test_h_16_refused_seat_with_any_influence_card_is_still_asked_to_load() -> None:
    # Whether C is asked may depend on the (public) hand size only, never on its kinds.
    s = new_game()
    all_roads(s)
    set_cart(s, 1, "PAR", master=B)
    put(s, C, "PAR", "tuch")
    put(s, D, "PAR", "tuch")
    give_cards(s, C, "achsbruch")  # not a Kostenlose Zuladung
    open_at(s, "master", [B], at={"st": "carts", "i": 0, "sub": "load"}, cart=1)
    s, _ = step(s, {B: {"load": 0, "tariffs": {}}})  # everyone refused
    assert pending(s) == ("load", [C])  # D is refused and holds no card: not asked
    illegal(s, C, {"goods": ["tuch"]}, "refused")
    illegal(s, C, {"goods": ["tuch"], "card": True}, "no_such_card")
    s2, _ = step(s, {C: GAME.default_order(s, C)})
    assert s2["stores"][C] == {"PAR": {"tuch": 1}} and s2["players"][C]["hand"] == {"achsbruch": 1}


def test_h_16_a_rejection_leaves_the_state_untouched_and_names_the_reason() -> None:
    s = new_game()
    err = illegal(s, A, {"goods": [{"good": "wein", "city": "BRU"}]}, "wrong_city")
    assert "Brügge" in err.message


# == 3. Orders, windows, deadlines and defaults ================================================
def test_h_17_load_window_with_no_eligible_player_is_skipped() -> None:
    s = new_game()
    set_cart(s, 1, "PAR", master=A)
    open_at(s, "master", [A], at={"st": "carts", "i": 0, "sub": "load"}, cart=1)
    s2, _ = step(s, {A: {"load": 0}})  # nobody has goods in Paris
    assert pending(s2) == ("cart_bid", [A, B, C, D])
    assert s2["pending"]["cart"] == 2


def test_h_18_sequential_decisions_ask_one_seat_at_a_time_in_turn_order() -> None:
    s = new_game(4, 1, 2)
    assert pending(s) == ("buy", [C])
    illegal(s, D, {"goods": []}, "not_your_turn")
    s, _ = step(s, {C: {"goods": [{"good": "tuch", "city": "PAR"}]}})
    assert pending(s) == ("buy", [D])
    # D sees the result of C's earlier decision.
    assert GAME.requests(s)[0].choices["stock"]["tuch"] == 8


def test_h_19_window_asks_every_eligible_seat_at_once_and_needs_all_orders() -> None:
    s = new_game(4, 1, 1)
    s, _ = into_phase2(s)
    assert pending(s) == ("cart_bid", [B, C, D, A])
    with pytest.raises(IllegalOrder) as info:
        step(s, {B: {"bid": 0}, C: {"bid": 0}})
    assert info.value.code == "not_your_turn"
    s2, _ = step(s, {A: {"bid": 0}, B: {"bid": 0}, C: {"bid": 0}, D: {"bid": 0}})
    assert s2["carts"][0]["master"] == B


def test_h_20_orders_only_for_the_open_decision_of_their_sender() -> None:
    s = new_game()
    illegal(s, B, {"goods": []}, "not_your_turn")  # B's buy comes later (R-30)
    illegal(s, A, {"kind": "cart_bid", "bid": 0}, "wrong_kind")
    illegal(s, A, {"goods": [], "bid": 100}, "malformed_order")
    illegal(s, A, {"goods": "tuch"}, "malformed_order")
    GAME.validate(s, A, {"kind": "buy", "goods": []})


def test_h_20_malformed_load_entries_are_refused_not_crashed_on() -> None:
    s = new_game()
    set_cart(s, 1, "PAR", master=A)
    put(s, B, "PAR", "tuch")
    s["tariffs"] = {"1": [100, 200], "2": None, "3": None}
    open_at(s, "load", [B], cart=1)
    illegal(s, B, {"goods": [["tuch"]]}, "malformed_order")
    illegal(s, B, {"goods": [{"good": "tuch"}]}, "malformed_order")


@pytest.mark.parametrize("options", [{}, {"abilities": "auction"}, {"light": True}])
def test_h_20_every_default_of_setup_to_loading_is_legal(options: dict[str, Any]) -> None:
    s = GAME.setup(4, options, 7)
    kinds = set()
    while s["round"] == 1 and pending(s)[0] not in ("move", "achsbruch"):
        for r in GAME.requests(s):
            GAME.validate(s, r.seat, GAME.default_order(s, r.seat))
            kinds.add(r.kind)
        s, _ = step(s, defaults(s))
    assert {"buy", "cart_bid", "master"} <= kinds


def test_h_21_seat_with_no_money_is_still_asked_for_a_bid() -> None:
    s = new_game(4, 1, 0)
    s["players"][C]["money"] = 0
    s, _ = into_phase2(s)
    assert pending(s) == ("cart_bid", [A, B, C, D])
    assert GAME.requests(s)[2].choices["max"] == 0
    illegal(s, C, {"bid": 100}, "not_enough_money")


def test_h_21_seat_with_no_money_is_still_asked_to_load() -> None:
    s = new_game()
    all_roads(s)
    set_cart(s, 1, "PAR", master=A)
    put(s, B, "PAR", "tuch")
    s["players"][B]["money"] = 0
    open_at(s, "master", [A], at={"st": "carts", "i": 0, "sub": "load"}, cart=1)
    s, _ = step(s, {A: {"tariffs": {"1": [100, 200]}}})
    assert pending(s) == ("load", [B])
    illegal(s, B, {"goods": ["tuch"]}, "not_enough_money")


def test_h_22_repay_is_applied_before_the_main_action_is_checked() -> None:
    s = new_game()
    s["players"][A].update(money=2800, credits=1)
    s["credit_supply"] = 9
    s["prices"]["wein"] = 5  # buy 400
    GAME.validate(s, A, {"goods": [{"good": "wein", "city": "PAR"}]})
    illegal(s, A, {"repay": 1, "goods": [{"good": "wein", "city": "PAR"}]}, "not_enough_money")
    illegal(s, A, {"repay": 2, "goods": []}, "nothing_to_repay")
    s2, ev = step(s, {A: {"repay": 1, "goods": [{"good": "tuch", "city": "PAR"}, {"good": "salz", "city": "BRU"}]}})
    assert s2["players"][A]["money"] == 2800 - 2500 - 200
    assert s2["players"][A]["credits"] == 0 and s2["credit_supply"] == 10
    assert [e["type"] for e in ev][:2] == ["credit_repaid", "bought"]


def test_h_22_money_received_by_transfer_in_a_window_cannot_be_used_in_it() -> None:
    s = new_game(4, 1, 0, negotiation=True)
    s["players"][B]["money"] = 500
    open_at(s, "cart_bid", [A, B, C, D], at={"st": "carts", "i": 0, "sub": "master"}, cart=1)
    give = {"transfers": [{"to": B, "money": 1000}]}
    illegal(s, A, {**give, "bid": 3500}, "not_enough_money")  # 4000 - 1000 < 3500
    illegal(s, B, {"bid": 1000}, "not_enough_money")  # A's 1000 is not yet B's
    s2, ev = step(s, {A: {**give, "bid": 3000}, B: {"bid": 500}, C: {"bid": 0}, D: {"bid": 0}})
    assert money(s2) == [0, 1500, 4000, 4000]
    assert s2["carts"][0]["master"] == A
    types = [e["type"] for e in ev]
    assert types.index("transfer") < types.index("cart_auction")


def test_h_22_transfers_only_in_the_negotiation_variant() -> None:
    s = new_game()
    illegal(s, A, {"goods": [], "transfers": [{"to": B, "money": 100}]}, "bad_transfer")


def test_h_23_missed_deadline_defaults_of_phases_1_and_2() -> None:
    s = new_game()
    assert GAME.default_order(s, A) == {"goods": []}
    open_at(s, "cart_bid", [A, B, C, D], cart=1)
    assert GAME.default_order(s, C) == {"bid": 0}
    open_at(s, "load", [B], cart=1)
    assert GAME.default_order(s, B) == {"goods": []}


def test_h_23_default_master_order_loads_nothing_and_refuses_everyone() -> None:
    s = new_game()
    set_cart(s, 1, "PAR", master=A)
    put(s, A, "PAR", "wein", 2)
    open_at(s, "master", [A], at={"st": "carts", "i": 0, "sub": "load"}, cart=1)
    s2, _ = step(s, {A: GAME.default_order(s, A)})
    assert s2["carts"][0]["rows"][A] == []
    assert s2["stores"][A] == {"PAR": {"wein": 2}}
    assert s2["tariffs"] == {"1": None, "2": None, "3": None}


def test_h_24_a_seat_that_stops_playing_is_played_by_defaults() -> None:
    s = new_game(4, 1, 0)
    while s["round"] == 1:
        orders = defaults(s)
        if s["pending"]["kind"] == "buy" and A in orders:
            orders[A] = {"goods": [{"good": "tuch", "city": "PAR"}]}
        s, _ = step(s, orders)
    # B only ever had defaults: it bought nothing, paid nothing and holds nothing.
    assert s["stores"][B] == {} and s["players"][B]["money"] == 4000
    assert s["stores"][A] == {"PAR": {"tuch": 2}} and s["round"] == 2


# == 4. Setup =================================================================================
def test_h_25_host_chooses_the_first_start_player() -> None:
    for start in range(4):
        s = new_game(4, 1, start)
        assert s["start"] == start and pending(s) == ("buy", [start])


def test_h_25_random_first_start_player_when_not_chosen() -> None:
    starts = {GAME.setup(4, {}, seed)["start"] for seed in range(40)}
    assert starts == {0, 1, 2, 3}
    assert GAME.setup(4, {}, 11)["start"] == GAME.setup(4, {}, 11)["start"]


@pytest.mark.parametrize("bad", [4, -1, "A", True, 1.0])
def test_h_25_start_player_must_be_a_seat(bad: Any) -> None:
    with pytest.raises(OptionsError):
        GAME.setup(4, {"start_player": bad}, 1)


def test_h_26_default_board_is_the_reconstructed_board() -> None:
    s = new_game()
    assert s["options"]["board"] == "reconstructed-default"
    assert GAME.view(s, A)["board"] == {
        "id": "reconstructed-default", "name": "Reconstructed default board", "provenance": "reconstructed",
    }  # fmt: skip


def test_h_26_unknown_board_is_refused() -> None:
    with pytest.raises(DataError) as info:
        new_game(4, 1, 0, board="no-such-board")
    assert "no-such-board" in info.value.message


def test_h_27_carts_start_empty_in_paris_koeln_genua() -> None:
    s = new_game()
    assert [c["at"] for c in s["carts"]] == ["PAR", "KOE", "GEN"]
    for cart in s["carts"]:
        assert cart["master"] is None and cart["rows"] == [[], [], [], []] and not cart["arrived"]


def test_h_27_start_cities_from_the_board_file_and_the_variant() -> None:
    doc = board_doc()
    doc["start_cities"] = ["BRU", "AUG", "LYO"]
    assert [c["at"] for c in new_game(4, 1, 0, board=doc)["carts"]] == ["BRU", "AUG", "LYO"]
    s = new_game(4, 1, 0, start_cities=["LYO", "BRU", "KOE"])
    assert [c["at"] for c in s["carts"]] == ["LYO", "BRU", "KOE"]
    for bad in (["PAR", "PAR", "KOE"], ["PAR", "KOE"], ["PAR", "KOE", "REI"]):
        with pytest.raises(OptionsError):
            new_game(4, 1, 0, start_cities=bad)


def test_h_28_bonus_markers_start_0_with_a_cart_and_200_without() -> None:
    s = new_game()
    assert s["bonus"] == {"BRU": 200, "PAR": 0, "KOE": 0, "AUG": 200, "LYO": 200, "GEN": 0}
    s = new_game(4, 1, 0, start_cities=["BRU", "LYO", "AUG"])
    assert s["bonus"] == {"BRU": 0, "PAR": 200, "KOE": 200, "AUG": 0, "LYO": 0, "GEN": 200}


def test_h_28_bonus_start_values_come_from_the_board_file() -> None:
    doc = board_doc()
    doc["bonus_track"].update(start_with_cart=100, start_without_cart=300)
    s = new_game(4, 1, 0, board=doc)
    assert s["bonus"] == {"BRU": 300, "PAR": 100, "KOE": 100, "AUG": 300, "LYO": 300, "GEN": 100}


def test_h_29_messenger_starts_two_spaces_before_bruegge() -> None:
    s = new_game()
    assert s["messenger"] == "KOE>BRU:3"  # road KOE>BRU has 4 spaces: :3 is 2 before BRU
    doc = board_doc()
    doc["messenger_start"] = "BAS"
    assert new_game(4, 1, 0, board=doc)["messenger"] == "BAS"


def test_h_30_every_type_starts_on_the_bottom_row_and_arrivals_at_0() -> None:
    s = new_game()
    assert s["prices"] == {g: 1 for g in s["stock"]} and s["arrivals"] == 0
    choices = GAME.requests(s)[0].choices
    assert set(choices["prices"].values()) == {100}
    assert {sell_price(ctx_of(s), s, g) for g in s["stock"]} == {600}


def test_h_31_starting_player_state_and_supplies() -> None:
    s = auction_game(4)
    for p in s["players"]:
        assert p == {"money": 5000, "level": 1, "tiles": [1, 2, 3, 4], "abilities": [], "hand": {}, "credits": 0}
    assert s["stores"] == [{}, {}, {}, {}]
    assert sum(s["deck"].values()) == 15 and s["credit_supply"] == 10
    assert s["stock"] == {g: 9 for g in s["stock"]}


def test_h_31_light_variant_deck_has_twelve_cards_without_achsbruch() -> None:
    s = new_game(4, 1, 0, light=True)
    assert sum(s["deck"].values()) == 12 and "achsbruch" not in s["deck"]
    assert GAME.view(s, A)["deck_size"] == 12


@pytest.mark.parametrize("seats", [2, 3, 4])
@pytest.mark.parametrize("procedure", ["pairs", "auction"])
def test_h_32_each_player_ends_setup_with_exactly_two_cards(seats: int, procedure: str) -> None:
    s = GAME.setup(seats, {"abilities": procedure, "start_player": 0}, 5)
    while s["round"] == 1 and s["pending"]["kind"] in ("name_card", "card_bid"):
        s, _ = step(s, defaults(s))
    held = [c for p in s["players"] for c in p["abilities"]]
    assert all(len(p["abilities"]) == 2 for p in s["players"])
    assert len(set(held)) == 2 * seats
    assert s["pool"] == []  # undealt cards are out of the game
    assert pending(s)[0] == "buy"


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_h_33_pairs_are_dealt_and_each_player_pays_1000(seats: int) -> None:
    s = new_game(seats, 3)
    dealt = [set(p["abilities"]) for p in s["players"]]
    assert all(pair in PAIRS for pair in dealt)
    assert len({frozenset(p) for p in dealt}) == seats
    assert money(s) == [4000] * seats


def test_h_33_pairs_are_dealt_at_random_and_publicly() -> None:
    firsts = {frozenset(GAME.setup(4, {"start_player": 0}, seed)["players"][A]["abilities"]) for seed in range(30)}
    assert len(firsts) >= 3
    s = new_game()
    v = GAME.view(s, "public")
    assert [set(p["abilities"]) for p in v["players"]] == [set(p["abilities"]) for p in s["players"]]


def test_h_34_auction_keeps_5000_and_first_chooser_is_the_start_player() -> None:
    s = auction_game(4, start=2)
    assert money(s) == [5000] * 4
    assert pending(s) == ("name_card", [C])


def test_h_34_bidding_goes_clockwise_from_the_choosers_left() -> None:
    s = auction_game(4, start=2)
    s, ev = step(s, {C: {"card": "kurier"}})
    assert events_of(ev, "ability_named")[0]["bid"] == 400
    order = []
    for _ in range(3):
        kind, (seat,) = pending(s)
        assert kind == "card_bid"
        order.append(seat)
        s, _ = step(s, {seat: {"pass": True}})
    assert order == [D, A, B]
    assert s["players"][C]["abilities"] == ["kurier"] and s["players"][C]["money"] == 4600


def test_h_34_outbid_chooser_stays_chooser_and_a_pass_is_final() -> None:
    s = auction_game(3)
    s, _ = step(s, {A: {"card": "wagnerei"}})  # opens at 200
    s, _ = step(s, {B: {"pass": True}})
    s, _ = step(s, {C: {"bid": 300}})
    assert pending(s) == ("card_bid", [A])  # B passed for good; A was outbid and bids again
    s, _ = step(s, {A: {"bid": 500}})
    assert pending(s) == ("card_bid", [C])  # B is skipped
    s, ev = step(s, {C: {"bid": 700}})
    s, ev = step(s, {A: {"pass": True}})
    assert s["players"][C]["abilities"] == ["wagnerei"] and money(s) == [5000, 5000, 4300]
    assert pending(s) == ("name_card", [A])  # A still has fewer than 2 cards: still chooser


def test_h_34_bids_must_raise_in_steps_of_100_within_money() -> None:
    s = auction_game(3)
    s, _ = step(s, {A: {"card": "kontor"}})
    s["players"][B]["money"] = 900
    illegal(s, B, {"bid": 400}, "bid_too_low")
    illegal(s, B, {"bid": 450}, "bad_amount")
    illegal(s, B, {"bid": 1000}, "not_enough_money")
    illegal(s, B, {"bid": 500, "pass": True}, "malformed_order")
    GAME.validate(s, B, {"bid": 900})  # a jump raise is allowed (R-15)
    choices = GAME.requests(s)[0].choices
    assert (choices["min"], choices["max"], choices["high"]) == (500, 900, 400)


def test_h_34_player_with_two_cards_may_not_bid() -> None:
    s = auction_game(3)
    s["players"][B]["abilities"] = ["kurier", "kontor"]
    s["pool"] = [c for c in s["pool"] if c not in ("kurier", "kontor")]
    s, _ = step(s, {A: {"card": "wagnerei"}})
    assert pending(s) == ("card_bid", [C])


def test_h_34_no_other_eligible_player_means_the_chooser_pays_the_printed_cost() -> None:
    s = auction_game(2)
    s["players"][B]["abilities"] = ["kurier", "kontor"]
    s["pool"] = [c for c in s["pool"] if c not in ("kurier", "kontor")]
    s, ev = step(s, {A: {"card": "grosses_kontor"}})
    assert events_of(ev, "ability_bought")[0]["paid"] == 800
    assert s["players"][A]["money"] == 4200
    assert pending(s) == ("name_card", [A])


def test_h_34_chooser_who_can_pay_no_card_takes_the_cheapest_for_all_money() -> None:
    s = auction_game(2)
    s, _ = step(s, {A: {"card": "kurier"}})
    s["players"][A]["money"] = 500  # after paying 400 for Kurier, A has 100 left
    s, ev = step(s, {B: {"pass": True}})
    # Wagnerei and Lagerverkauf both cost 200; Wagnerei is listed first in H-8.
    assert [e["card"] for e in events_of(ev, "ability_bought")] == ["kurier", "wagnerei"]
    assert s["players"][A]["abilities"] == ["kurier", "wagnerei"] and s["players"][A]["money"] == 0
    assert pending(s) == ("name_card", [B])
    assert "wagnerei" not in GAME.requests(s)[0].choices["cards"]


def test_h_34_d0_name_offers_only_affordable_remaining_cards() -> None:
    s = auction_game(3)
    s["players"][A]["money"] = 500
    s["pool"].remove("wagnerei")
    assert GAME.requests(s)[0].choices["cards"] == {"kurier": 400, "kontor": 400, "lagerverkauf": 200}
    illegal(s, A, {"card": "express_kurier"}, "card_not_affordable")
    illegal(s, A, {"card": "wagnerei"}, "no_such_card")
    illegal(s, A, {"card": "joker"}, "no_such_card")


def test_h_34_d0_name_default_is_the_cheapest_card_first_in_h_8() -> None:
    s = auction_game(3)
    assert GAME.default_order(s, A) == {"card": "wagnerei"}  # 200, listed before Lagerverkauf
    s["pool"].remove("wagnerei")
    assert GAME.default_order(s, A) == {"card": "lagerverkauf"}


def test_h_34_d0_bid_default_is_pass() -> None:
    s = auction_game(3)
    s, _ = step(s, {A: {"card": "kontor"}})
    assert GAME.default_order(s, B) == {"pass": True}
    s, ev = step(s, {B: GAME.default_order(s, B)})
    assert events_of(ev, "ability_pass")[0]["seat"] == B
    assert pending(s) == ("card_bid", [C])


def test_h_35_setup_ends_with_round_1_buying_and_no_goods_bought() -> None:
    s = new_game(4, 1, 3)
    assert s["round"] == 1 and pending(s) == ("buy", [D])
    assert s["stores"] == [{}, {}, {}, {}] and sum(s["stock"].values()) == 54


# == 5. Round structure =======================================================================
PHASE_OF = {
    "buy": 1, "cart_bid": 2, "master": 2, "load": 2, "achsbruch": 3, "move": 3,
    "wheel": 4, "kontor": 4, "sales": 4, "bonus": 5, "credit": 6, "advance": 6,
}  # fmt: skip


def play_round(s: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, list[int]]]]:
    seq = []
    r = s["round"]
    while s["round"] == r:
        seq.append(pending(s))
        s, _ = step(s, defaults(s))
    return s, seq


def test_h_36_phases_are_played_in_order() -> None:
    s = new_game(4, 2, 0)
    s, _ = play_round(s)
    s, seq = play_round(s)
    phases = [PHASE_OF[k] for k, _ in seq]
    assert phases == sorted(phases)
    assert {1, 2, 3, 4, 6} <= set(phases)


def test_h_37_round_1_plays_phase_1_twice_in_turn_order() -> None:
    s = new_game(4, 1, 1)
    s, seq = play_round(s)
    buys = [seats[0] for k, seats in seq if k == "buy"]
    assert buys == [B, C, D, A, B, C, D, A]
    assert seq[8][0] == "cart_bid"
    _, seq2 = play_round(s)
    assert [seats[0] for k, seats in seq2 if k == "buy"] == [C, D, A, B]


def test_h_37_second_buy_step_is_a_full_buy_step() -> None:
    s = new_game(4, 1, 0)
    buy_at(s, A, nth=1, buy_pass=2)
    s, _ = step(s, {A: {"goods": [{"good": "tuch", "city": "PAR"}] * 3}})
    assert s["stores"][A] == {"PAR": {"tuch": 3}} and pending(s) == ("buy", [B])


def test_h_38_start_player_moves_left_each_round() -> None:
    s = new_game(3, 1, 2)
    starts = [s["start"]]
    for _ in range(3):
        s, _ = play_round(s)
        starts.append(s["start"])
    assert starts == [C, A, B, C]


def test_h_39_each_cart_in_a_city_bid_then_master_then_load_in_cart_order() -> None:
    s = new_game(4, 1, 0)
    put(s, B, "KOE", "salz")
    s, _ = into_phase2(s)
    seq = []
    while pending(s)[0] in ("cart_bid", "master", "load"):
        seq.append((pending(s)[0], s["pending"]["cart"]))
        orders = defaults(s)
        if pending(s)[0] == "master":
            orders = {A: {"tariffs": {"1": [0, 0]}}}
        s, _ = step(s, orders)
    assert seq == [
        ("cart_bid", 1), ("master", 1), ("cart_bid", 2), ("master", 2), ("load", 2), ("cart_bid", 3), ("master", 3),
    ]  # fmt: skip


def test_h_40_whole_round_decision_order() -> None:
    s = new_game(4, 1, 0)
    s, seq = play_round(s)
    kinds = [k for k, _ in seq]
    first = {k: kinds.index(k) for k in set(kinds)}
    assert kinds[:8] == ["buy"] * 8
    assert first["cart_bid"] < first["master"] < first["move"] < first["wheel"] < first["advance"]
    assert [seats for k, seats in seq if k == "move"] == [[A], [B], [C], [D]]
    assert [seats for k, seats in seq if k == "advance"] == [[A], [B], [C], [D]]
    assert s["round"] == 2 and s["start"] == B


# == 6. Phase 1: buying =======================================================================
def test_h_41_buy_up_to_three_goods_at_their_buy_prices() -> None:
    s = new_game(4, 1, 1)
    s["round"] = 2
    s["prices"].update(tuch=3, wein=5)  # buy 200 and 400
    buy_at(s, B)
    order = {
        "goods": [{"good": "tuch", "city": "BRU"}, {"good": "wein", "city": "PAR"}, {"good": "wein", "city": "KOE"}]
    }
    s2, ev = step(s, {B: order})
    assert s2["players"][B]["money"] == 4000 - 200 - 400 - 400
    assert s2["stores"][B] == {"BRU": {"tuch": 1}, "PAR": {"wein": 1}, "KOE": {"wein": 1}}
    assert s2["stock"]["tuch"] == 8 and s2["stock"]["wein"] == 7
    assert events_of(ev, "bought")[0]["paid"] == 1000
    assert pending(s2) == ("buy", [C])


def test_h_41_refusals_too_many_wrong_city_and_money() -> None:
    s = new_game()
    four = {"goods": [{"good": "tuch", "city": "PAR"}] * 4}
    illegal(s, A, four, "too_many_goods")
    illegal(s, A, {"goods": [{"good": "tuch", "city": "KOE"}]}, "wrong_city")
    illegal(s, A, {"goods": [{"good": "tuch", "city": "REI"}]}, "wrong_city")
    illegal(s, A, {"goods": [{"good": "gold", "city": "PAR"}]}, "malformed_order")
    illegal(s, A, {"goods": [{"good": "tuch"}]}, "malformed_order")
    s["players"][A]["money"] = 200
    illegal(s, A, {"goods": [{"good": "tuch", "city": "PAR"}] * 3}, "not_enough_money")
    s2, _ = step(s, {A: {"goods": [{"good": "tuch", "city": "PAR"}] * 2}})
    assert s2["players"][A]["money"] == 0


def test_h_41_buying_nothing_is_legal_and_free() -> None:
    s = new_game()
    s2, ev = step(s, {A: {"goods": []}})
    assert s2["players"][A]["money"] == 4000 and s2["stores"][A] == {}
    assert events_of(ev, "bought")[0]["paid"] == 0


def test_h_42_guenstiger_einkauf_whole_step_costs_100() -> None:
    s = new_game()
    s["players"][A]["abilities"] = ["guenstiger_einkauf", "kontor"]
    s["players"][A]["money"] = 100
    s["prices"].update(eisen=5, seide=5)
    order = {
        "goods": [{"good": "eisen", "city": "KOE"}, {"good": "seide", "city": "GEN"}, {"good": "eisen", "city": "AUG"}]
    }
    assert GAME.requests(s)[0].choices["whole_step_price"] == 100
    s2, _ = step(s, {A: order})
    assert s2["players"][A]["money"] == 0
    assert s2["stores"][A] == {"KOE": {"eisen": 1}, "GEN": {"seide": 1}, "AUG": {"eisen": 1}}


def test_h_42_guenstiger_einkauf_buying_nothing_costs_nothing() -> None:
    s = new_game()
    s["players"][A]["abilities"] = ["guenstiger_einkauf", "kontor"]
    s2, _ = step(s, {A: {"goods": []}})
    assert s2["players"][A]["money"] == 4000


def test_h_42_without_the_card_each_good_is_paid() -> None:
    s = new_game()
    s["players"][A]["abilities"] = ["grosse_wagnerei", "kurier"]
    s["prices"]["eisen"] = 4
    s2, _ = step(s, {A: {"goods": [{"good": "eisen", "city": "KOE"}] * 2}})
    assert s2["players"][A]["money"] == 4000 - 600


def test_h_43_stock_is_taken_one_piece_at_a_time() -> None:
    s = new_game()
    s["stock"]["seide"] = 2
    illegal(s, A, {"goods": [{"good": "seide", "city": "GEN"}] * 3}, "out_of_stock")
    s, _ = step(s, {A: {"goods": [{"good": "seide", "city": "GEN"}, {"good": "seide", "city": "LYO"}]}})
    assert s["stock"]["seide"] == 0
    illegal(s, B, {"goods": [{"good": "seide", "city": "AUG"}]}, "out_of_stock")


def test_h_44_warehouses_are_unlimited_and_buying_never_changes_prices() -> None:
    s = new_game()
    put(s, A, "PAR", "tuch", 7)
    prices = dict(s["prices"])
    s, _ = step(s, {A: {"goods": [{"good": "tuch", "city": "PAR"}] * 2}})
    assert s["stores"][A]["PAR"]["tuch"] == 9 and s["stock"]["tuch"] == 0
    assert s["prices"] == prices
    assert s["stores"][B] == {} and all(not st for st in s["stores"][1:])


# == 7. Phase 2: cart auctions and loading ====================================================
def test_h_45_carts_in_number_order_road_cart_skipped_kept_master_loads_at_once() -> None:
    s = new_game(4, 1, 0)
    s["round"] = 2
    set_cart(s, 1, "PAR>REI:1")
    set_cart(s, 2, "KOE", master=C)
    s["carts"][1]["rows"][C] = ["salz"]
    s, _ = into_phase2(s)
    assert pending(s) == ("master", [C]) and s["pending"]["cart"] == 2
    s, _ = step(s, {C: {"load": 0}})
    assert pending(s) == ("cart_bid", [A, B, C, D]) and s["pending"]["cart"] == 3


def test_h_46_only_a_cart_in_a_city_without_master_is_auctioned() -> None:
    s = new_game(4, 1, 0)
    s["round"] = 2
    set_cart(s, 1, "PAR", master=B)
    set_cart(s, 2, "KOE>AUG:2")
    set_cart(s, 3, "LYO")
    s, _ = into_phase2(s)
    assert pending(s) == ("master", [B])
    s, _ = step(s, {B: {}})
    assert pending(s) == ("cart_bid", [A, B, C, D]) and s["pending"]["cart"] == 3
    assert GAME.requests(s)[0].choices["city"] == "LYO"


def test_h_47_highest_bid_wins_and_only_the_winner_pays() -> None:
    s = new_game(4, 1, 0)
    open_at(s, "cart_bid", [A, B, C, D], at={"st": "carts", "i": 0, "sub": "master"}, cart=1)
    s2, ev = step(s, {A: {"bid": 300}, B: {"bid": 700}, C: {"bid": 600}, D: {"bid": 0}})
    assert s2["carts"][0]["master"] == B
    assert money(s2) == [4000, 3300, 4000, 4000]
    assert events_of(ev, "cart_auction")[0]["paid"] == 700
    assert pending(s2) == ("master", [B])


def test_h_47_tie_goes_to_earliest_in_turn_order() -> None:
    s = new_game(4, 1, 3)  # turn order D, A, B, C
    open_at(s, "cart_bid", [D, A, B, C], at={"st": "carts", "i": 0, "sub": "master"}, cart=1)
    s2, _ = step(s, {A: {"bid": 400}, B: {"bid": 0}, C: {"bid": 400}, D: {"bid": 200}})
    assert s2["carts"][0]["master"] == A and money(s2) == [3600, 4000, 4000, 4000]


def test_h_47_all_bids_zero_start_player_is_master_for_free() -> None:
    s = new_game(4, 1, 2)
    open_at(s, "cart_bid", [C, D, A, B], at={"st": "carts", "i": 2, "sub": "master"}, cart=3)
    s2, _ = step(s, {A: {"bid": 0}, B: {"bid": 0}, C: {"bid": 0}, D: {"bid": 0}})
    assert s2["carts"][2]["master"] == C and money(s2) == [4000] * 4


def test_h_48_one_player_may_be_master_of_several_carts() -> None:
    s = new_game(4, 1, 0)
    s, _ = into_phase2(s)
    s, _ = step(s, {A: {"bid": 0}, B: {"bid": 100}, C: {"bid": 0}, D: {"bid": 0}})
    s, _ = step(s, {B: {}})
    assert pending(s) == ("cart_bid", [A, B, C, D]) and s["pending"]["cart"] == 2
    s, _ = step(s, {A: {"bid": 0}, B: {"bid": 200}, C: {"bid": 100}, D: {"bid": 0}})
    assert [c["master"] for c in s["carts"][:2]] == [B, B]
    assert pending(s) == ("master", [B]) and s["players"][B]["money"] == 3700


def test_h_49_master_keeps_the_title_loads_again_and_publishes_new_tariffs() -> None:
    s = new_game(4, 1, 0)
    s["round"] = 3
    all_roads(s)
    set_cart(s, 1, "PAR", master=D)
    s["carts"][0]["rows"][D] = ["wein"]
    put(s, D, "PAR", "wein", 2)
    put(s, A, "PAR", "tuch")
    s, _ = into_phase2(s)
    assert pending(s) == ("master", [D])  # no new auction
    s, ev = step(s, {D: {"load": 2, "good": "wein", "tariffs": {"0": [100, 100]}}})
    assert s["carts"][0]["rows"][D] == ["wein"] * 3 and s["carts"][0]["master"] == D
    assert events_of(ev, "cart_master")[0]["tariffs"] == {"0": [100, 100], "1": None, "2": None}
    assert pending(s) == ("load", [A])


def test_h_50_master_holds_at_most_three_goods_across_rounds() -> None:
    s = new_game()
    set_cart(s, 1, "PAR", master=A)
    s["carts"][0]["rows"][A] = ["wein", "wein"]
    put(s, A, "PAR", "wein", 2)
    open_at(s, "master", [A], cart=1)
    illegal(s, A, {"load": 2, "good": "wein"}, "too_many_goods")
    assert GAME.requests(s)[0].choices["goods"] == {"wein": 1}
    s2, _ = step(s, {A: {"load": 1, "good": "wein"}})
    assert s2["carts"][0]["rows"][A] == ["wein"] * 3 and s2["stores"][A] == {"PAR": {"wein": 1}}


def test_h_50_master_goods_are_all_of_one_type() -> None:
    s = new_game()
    set_cart(s, 1, "PAR", master=A)
    s["carts"][0]["rows"][A] = ["wein"]
    put(s, A, "PAR", "tuch", 2)
    put(s, A, "PAR", "wein", 1)
    open_at(s, "master", [A], cart=1)
    illegal(s, A, {"load": 1, "good": "tuch"}, "master_type")
    illegal(s, A, {"load": 2, "good": "wein"}, "not_in_warehouse")  # only 1 Wein in the warehouse
    illegal(s, A, {"load": 1, "good": "wein", "extra": 1}, "malformed_order")
    GAME.validate(s, A, {"load": 1, "good": "wein"})


def test_h_50_master_loads_only_from_own_warehouse_in_the_carts_city() -> None:
    s = new_game()
    set_cart(s, 1, "PAR", master=A)
    put(s, A, "KOE", "wein", 3)  # wrong city
    put(s, B, "PAR", "wein", 3)  # another player's warehouse
    open_at(s, "master", [A], cart=1)
    illegal(s, A, {"load": 1, "good": "wein"}, "not_in_warehouse")
    illegal(s, A, {"load": 1}, "malformed_order")
    assert GAME.requests(s)[0].choices["goods"] == {}


def test_h_50_others_hold_at_most_two_goods_in_any_mix_except_the_master_type() -> None:
    s = new_game()
    set_cart(s, 1, "PAR", master=A)
    s["carts"][0]["rows"][A] = ["wein"]
    s["carts"][0]["rows"][B] = ["tuch"]
    put(s, B, "PAR", "nahrung", 2)
    put(s, B, "PAR", "wein", 1)
    put(s, C, "PAR", "tuch", 1)
    put(s, C, "PAR", "nahrung", 1)
    s["tariffs"] = {"1": [0, 0], "2": [100, 200], "3": [0, 0]}
    open_at(s, "load", [B, C], cart=1)
    illegal(s, B, {"goods": ["nahrung", "nahrung"]}, "too_many_goods")  # B already has 1 on it
    illegal(s, B, {"goods": ["wein"]}, "master_type")
    illegal(s, C, {"goods": ["tuch", "tuch"]}, "not_in_warehouse")  # C holds only 1 Tuch in Paris
    illegal(s, C, {"goods": ["salz"]}, "not_in_warehouse")  # not in C's warehouse in Paris
    s2, _ = step(s, {B: {"goods": ["nahrung"]}, C: {"goods": ["tuch", "nahrung"]}})
    rows = s2["carts"][0]["rows"]
    assert rows[B] == ["tuch", "nahrung"] and rows[C] == ["tuch", "nahrung"]
    assert money(s2) == [4200, 4000, 3800, 4000]


def test_h_50_a_seat_with_two_goods_on_the_cart_is_not_asked() -> None:
    s = new_game()
    all_roads(s)
    set_cart(s, 1, "PAR", master=A)
    s["carts"][0]["rows"][B] = ["tuch", "tuch"]
    put(s, B, "PAR", "nahrung")
    put(s, C, "PAR", "nahrung")
    open_at(s, "master", [A], at={"st": "carts", "i": 0, "sub": "load"}, cart=1)
    s, _ = step(s, {A: {"tariffs": {"1": [0, 0], "2": [0, 0]}}})
    assert pending(s) == ("load", [C])


def test_h_51_master_without_goods_has_no_master_type() -> None:
    s = new_game()
    set_cart(s, 1, "PAR", master=A)
    put(s, B, "PAR", "wein")
    put(s, B, "PAR", "tuch")
    s["tariffs"] = {"1": [100, 200], "2": None, "3": None}
    open_at(s, "load", [B], cart=1)
    s2, _ = step(s, {B: {"goods": ["wein", "tuch"]}})
    assert s2["carts"][0]["rows"][B] == ["wein", "tuch"] and s2["players"][A]["money"] == 4200


def test_h_51_master_without_goods_may_load_only_a_type_nobody_else_has() -> None:
    s = new_game()
    set_cart(s, 1, "PAR", master=A)
    s["carts"][0]["rows"][B] = ["tuch"]
    s["carts"][0]["rows"][C] = ["nahrung"]
    put(s, A, "PAR", "tuch", 3)
    put(s, A, "PAR", "nahrung", 3)
    put(s, A, "PAR", "wein", 3)
    open_at(s, "master", [A], cart=1)
    assert GAME.requests(s)[0].choices["goods"] == {"wein": 3}
    illegal(s, A, {"load": 1, "good": "tuch"}, "master_type")
    illegal(s, A, {"load": 1, "good": "nahrung"}, "master_type")
    s2, _ = step(s, {A: {"load": 3, "good": "wein"}})
    assert s2["carts"][0]["rows"][A] == ["wein"] * 3


def test_h_52_step_a_tariffs_then_step_b_loading() -> None:
    s = new_game()
    all_roads(s)
    set_cart(s, 1, "PAR", master=A)
    put(s, B, "PAR", "tuch")
    open_at(s, "master", [A], at={"st": "carts", "i": 0, "sub": "load"}, cart=1)
    assert GAME.requests(s)[0].choices["tariff_for"] == [B, C, D]
    illegal(s, A, {"tariffs": {"1": [150, 300]}}, "bad_amount")
    illegal(s, A, {"tariffs": {"1": [-100, 300]}}, "bad_amount")
    illegal(s, A, {"tariffs": {"0": [100, 200]}}, "malformed_order")  # not for the master itself
    illegal(s, A, {"tariffs": {"7": [100, 200]}}, "malformed_order")
    illegal(s, A, {"tariffs": {"1": [100]}}, "malformed_order")
    illegal(s, A, {"tariffs": [100, 200]}, "malformed_order")
    s, ev = step(s, {A: {"tariffs": {"1": [300, 500], "3": [0, 0]}}})
    assert s["tariffs"] == {"1": [300, 500], "2": None, "3": [0, 0]}
    assert visible_to(events_of(ev, "cart_master")[0], "public")
    assert pending(s) == ("load", [B]) and GAME.requests(s)[0].choices["tariff"] == [300, 500]


def test_h_52_light_variant_tariffs_are_fixed_at_200_400() -> None:
    s = new_game(4, 1, 0, light=True)
    all_roads(s)
    set_cart(s, 1, "PAR", master=A)
    put(s, B, "PAR", "tuch", 2)
    put(s, C, "PAR", "tuch", 1)
    open_at(s, "master", [A], at={"st": "carts", "i": 0, "sub": "load"}, cart=1)
    illegal(s, A, {"tariffs": {"1": None}}, "tariffs_fixed")
    illegal(s, A, {"tariffs": {"1": [0, 0]}}, "tariffs_fixed")
    s, _ = step(s, {A: GAME.default_order(s, A)})
    assert s["tariffs"] == {"1": [200, 400], "2": [200, 400], "3": [200, 400]}
    assert pending(s) == ("load", [B, C])
    s, _ = step(s, {B: {"goods": ["tuch", "tuch"]}, C: {"goods": ["tuch"]}})
    assert money(s) == [4600, 3600, 3800, 4000]


def test_h_53_step_b_moves_goods_and_pays_the_master() -> None:
    s = new_game(4, 1, 1)  # turn order B, C, D, A
    all_roads(s)
    set_cart(s, 1, "PAR", master=C)
    put(s, A, "PAR", "tuch", 2)
    put(s, B, "PAR", "nahrung", 1)
    put(s, D, "PAR", "wein", 3)
    s["tariffs"] = {"0": [100, 300], "1": [200, 200], "3": [500, 900]}
    open_at(s, "load", [B, D, A], at={"st": "carts", "i": 1, "sub": "bid"}, cart=1)
    s2, ev = step(s, {A: {"goods": ["tuch", "tuch"]}, B: {"goods": ["nahrung"]}, D: {"goods": []}})
    rows = s2["carts"][0]["rows"]
    assert rows == [["tuch", "tuch"], ["nahrung"], [], []]
    assert money(s2) == [3700, 3800, 4000 + 300 + 200, 4000]
    assert s2["stores"][A] == {} and s2["stores"][B] == {} and s2["stores"][D] == {"PAR": {"wein": 3}}
    (loaded,) = events_of(ev, "cart_loaded")
    assert [x["seat"] for x in loaded["loads"]] == [B, A]  # applied in turn order
    assert [x["paid"] for x in loaded["loads"]] == [200, 300]


def test_h_54_kostenlose_zuladung_loads_free_even_when_refused() -> None:
    s = new_game()
    set_cart(s, 1, "PAR", master=A)
    s["carts"][0]["rows"][A] = ["wein"]
    put(s, B, "PAR", "tuch")
    put(s, B, "PAR", "nahrung")
    give_cards(s, B, ZUL)
    s["tariffs"] = {"1": None, "2": None, "3": None}
    open_at(s, "load", [B], cart=1)
    illegal(s, B, {"goods": ["tuch"]}, "refused")
    illegal(s, B, {"card": True}, "malformed_order")  # a card needs goods
    assert GAME.requests(s)[0].choices["can_play_card"] is True
    s2, ev = step(s, {B: {"goods": ["tuch", "nahrung"], "card": True}})
    assert s2["carts"][0]["rows"][B] == ["tuch", "nahrung"]
    assert money(s2) == [4000] * 4
    assert s2["players"][B]["hand"] == {} and s2["played"] == {ZUL: 1}
    assert s2["deck"][ZUL] == 2  # the played card leaves the game, it does not return
    assert events_of(ev, "cart_loaded")[0]["loads"][0]["card"] is True


def test_h_54_kostenlose_zuladung_stays_within_the_two_goods_limit() -> None:
    s = new_game()
    set_cart(s, 1, "PAR", master=A)
    s["carts"][0]["rows"][B] = ["tuch"]
    put(s, B, "PAR", "nahrung", 2)
    give_cards(s, B, ZUL)
    s["tariffs"] = {"1": [500, 900], "2": None, "3": None}
    open_at(s, "load", [B], cart=1)
    illegal(s, B, {"goods": ["nahrung", "nahrung"], "card": True}, "too_many_goods")
    s2, _ = step(s, {B: {"goods": ["nahrung"], "card": True}})
    assert s2["players"][B]["money"] == 4000 and s2["players"][A]["money"] == 4000


def test_h_55_goods_are_never_loaded_on_a_cart_on_a_road() -> None:
    s = new_game(4, 1, 0)
    s["round"] = 2
    all_roads(s)
    s["carts"][0]["rows"][B] = ["tuch"]
    put(s, B, "PAR", "tuch", 2)
    s, _ = into_phase2(s)
    # no phase-2 decision at all: straight on to phase 3
    assert pending(s)[0] == "move"
    assert s["carts"][0]["rows"][B] == ["tuch"] and s["stores"][B] == {"PAR": {"tuch": 2}}


def test_h_55_goods_never_go_back_from_a_cart_to_a_warehouse() -> None:
    s = new_game()
    set_cart(s, 1, "PAR", master=A)
    s["carts"][0]["rows"][A] = ["wein", "wein"]
    open_at(s, "master", [A], cart=1)
    illegal(s, A, {"load": -1, "good": "wein"}, "malformed_order")
    s2, _ = step(s, {A: {"load": 0}})
    assert s2["carts"][0]["rows"][A] == ["wein", "wein"] and s2["stores"][A] == {}


# == Worked examples ==========================================================================
def test_w_3_cart_auction_tie_goes_to_d_before_b() -> None:
    s = new_game(4, 1, 2)  # start player C: turn order C, D, A, B
    s["round"] = 3
    set_cart(s, 1, "PAR>REI:2")
    open_at(s, "cart_bid", [C, D, A, B], at={"st": "carts", "i": 1, "sub": "master"}, cart=2)
    s2, ev = step(s, {A: {"bid": 300}, B: {"bid": 500}, C: {"bid": 200}, D: {"bid": 500}})
    assert s2["carts"][1]["master"] == D
    assert money(s2) == [4000, 4000, 4000, 3500]
    (auction,) = events_of(ev, "cart_auction")
    assert auction["bids"] == {"0": 300, "1": 500, "2": 200, "3": 500} and auction["visible_to"] == "all"
    assert pending(s2) == ("master", [D]) and s2["pending"]["cart"] == 2


def test_w_4_all_bids_zero_start_player_b_is_master_for_free() -> None:
    s = new_game(4, 1, 1)  # turn order B, C, D, A
    s["round"] = 2
    s, _ = into_phase2(s)
    assert pending(s) == ("cart_bid", [B, C, D, A]) and s["pending"]["cart"] == 1
    c_default = GAME.default_order(s, C)  # C misses the deadline
    s2, _ = step(s, {B: {"bid": 0}, D: {"bid": 0}, A: {"bid": 0}, C: c_default})
    assert s2["carts"][0]["master"] == B and money(s2) == [4000] * 4
    assert pending(s2) == ("master", [B]) and s2["pending"]["cart"] == 1


def test_w_5_guenstiger_einkauf_and_the_stock() -> None:
    s = new_game(4, 1, 0)
    s["round"] = 2
    s["players"][A].update(abilities=["guenstiger_einkauf", "kontor"], money=2000)
    s["players"][B].update(abilities=["grosses_kontor", "wagnerei"], money=3000)
    s["prices"].update(wein=4, seide=5, tuch=2)
    s["stock"]["seide"] = 1
    buy_at(s, A)
    s, _ = step(s, {A: {"goods": [
        {"good": "wein", "city": "LYO"}, {"good": "seide", "city": "GEN"}, {"good": "tuch", "city": "BRU"},
    ]}})  # fmt: skip
    assert s["players"][A]["money"] == 1900 and s["stock"]["seide"] == 0
    assert pending(s) == ("buy", [B])
    illegal(s, B, {"goods": [{"good": "seide", "city": "AUG"}]}, "out_of_stock")
    illegal(s, B, {"goods": [{"good": "wein", "city": "BRU"}]}, "wrong_city")
    s, _ = step(s, {B: {"goods": [{"good": "wein", "city": "KOE"}, {"good": "tuch", "city": "PAR"}]}})
    assert s["players"][B]["money"] == 2500


def test_w_5_round_1_guenstiger_einkauf_pays_100_in_each_buy_step() -> None:
    s = new_game(2, 1, 0)
    s["players"][A]["abilities"] = ["guenstiger_einkauf", "kontor"]
    s["players"][B]["abilities"] = ["grosses_kontor", "wagnerei"]
    paid = []
    while s["pending"]["kind"] == "buy":
        seat = s["pending"]["seats"][0]
        s, ev = step(s, {seat: {"goods": [{"good": "wein", "city": "PAR"}] * 2}})
        paid.append((seat, events_of(ev, "bought")[0]["paid"]))
    assert paid == [(A, 100), (B, 200), (A, 100), (B, 200)]
    assert money(s) == [3800, 3600] and pending(s)[0] == "cart_bid"


def test_w_6_loading_with_tariffs_and_kostenlose_zuladung() -> None:
    s = new_game(4, 1, 0)
    set_cart(s, 1, "PAR", master=B)
    put(s, B, "PAR", "wein", 3)
    put(s, A, "PAR", "tuch", 2)
    put(s, A, "PAR", "wein", 1)
    put(s, C, "PAR", "nahrung")
    put(s, C, "PAR", "tuch")
    put(s, D, "PAR", "nahrung", 2)
    give_cards(s, C, ZUL)
    open_at(s, "master", [B], at={"st": "carts", "i": 0, "sub": "load"}, cart=1)
    s, _ = step(s, {B: {"load": 3, "good": "wein", "tariffs": {"0": [300, 500], "2": None, "3": [200, 400]}}})
    assert pending(s) == ("load", [A, C, D])
    illegal(s, A, {"goods": ["wein"]}, "master_type")
    illegal(s, C, {"goods": ["nahrung", "tuch"]}, "refused")
    s, ev = step(s, {
        A: {"goods": ["tuch", "tuch"]},
        C: {"goods": ["nahrung", "tuch"], "card": True},
        D: {"goods": ["nahrung"]},
    })  # fmt: skip
    assert s["carts"][0]["rows"] == [["tuch", "tuch"], ["wein"] * 3, ["nahrung", "tuch"], ["nahrung"]]
    assert money(s) == [3500, 4700, 4000, 3800]
    assert s["players"][C]["hand"] == {} and s["played"] == {ZUL: 1}
    assert s["stores"][A] == {"PAR": {"wein": 1}} and s["stores"][D] == {"PAR": {"nahrung": 1}}
    assert s["tariffs"]["2"] is None  # tariffs stay public until the phase ends
    assert visible_to(events_of(ev, "cart_loaded")[0], "public")


def test_w_6_light_variant_a_pays_400_d_200_c_loads_for_400() -> None:
    s = new_game(4, 1, 0, light=True)
    set_cart(s, 1, "PAR", master=B)
    put(s, B, "PAR", "wein", 3)
    put(s, A, "PAR", "tuch", 2)
    put(s, C, "PAR", "nahrung")
    put(s, C, "PAR", "tuch")
    put(s, D, "PAR", "nahrung", 2)
    open_at(s, "master", [B], at={"st": "carts", "i": 0, "sub": "load"}, cart=1)
    s, _ = step(s, {B: {"load": 3, "good": "wein"}})
    assert pending(s) == ("load", [A, C, D])
    s, _ = step(s, {A: {"goods": ["tuch", "tuch"]}, C: {"goods": ["nahrung", "tuch"]}, D: {"goods": ["nahrung"]}})
    assert money(s) == [3600, 4000 + 400 + 400 + 200, 3600, 3800]


def test_w_20_special_card_auction_with_three_players() -> None:
    s = auction_game(3, start=0)
    script: list[tuple[int, dict[str, Any]]] = [
        # 1. A names Kontor; B 500; C passes; A 600; B passes.
        (A, {"card": "kontor"}), (B, {"bid": 500}), (C, {"pass": True}), (A, {"bid": 600}), (B, {"pass": True}),
        # 2. A names Günstiger Einkauf; B and C pass.
        (A, {"card": "guenstiger_einkauf"}), (B, {"pass": True}), (C, {"pass": True}),
        # 3. B names Wagnerei; C 300; (A may not bid); B 400; C passes.
        (B, {"card": "wagnerei"}), (C, {"bid": 300}), (B, {"bid": 400}), (C, {"pass": True}),
        # 4. B names Kurier; C passes.
        (B, {"card": "kurier"}), (C, {"pass": True}),
        # 5. C names Große Wagnerei: nobody else is eligible.
        (C, {"card": "grosse_wagnerei"}),
        # 6. C names Lagerverkauf.
        (C, {"card": "lagerverkauf"}),
    ]  # fmt: skip
    events: list[dict[str, Any]] = []
    for seat, order in script:
        kind, seats = pending(s)
        assert seats == [seat], (seat, order, kind, seats)
        assert kind == ("name_card" if "card" in order else "card_bid")
        s, ev = step(s, {seat: order})
        events += ev
    assert s["players"][A]["abilities"] == ["kontor", "guenstiger_einkauf"]
    assert s["players"][B]["abilities"] == ["wagnerei", "kurier"]
    assert s["players"][C]["abilities"] == ["grosse_wagnerei", "lagerverkauf"]
    assert money(s) == [3800, 4200, 4200]
    assert events_of(events, "abilities_removed")[0]["cards"] == ["express_kurier", "grosses_kontor"]
    assert [(e["seat"], e["card"], e["paid"]) for e in events_of(events, "ability_bought")] == [
        (A, "kontor", 600), (A, "guenstiger_einkauf", 600), (B, "wagnerei", 400), (B, "kurier", 400),
        (C, "grosse_wagnerei", 600), (C, "lagerverkauf", 200),
    ]  # fmt: skip
    assert s["pool"] == [] and pending(s) == ("buy", [A])
