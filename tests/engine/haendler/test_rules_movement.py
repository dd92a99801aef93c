"""Phase 3 of Die Händler: the Achsbruch window and the movement turn (rules H-56 to H-77,
rulings R-8, R-9, R-22 to R-28, worked examples W-7 to W-11, W-18, W-19).

Every test sets up a real game, edits the plain state to the situation of the rule, opens
the decision under test and goes through the real validate/resolve path.
"""

from __future__ import annotations

import json
from typing import Any

from engine.core import visible_to
from tests.engine.haendler.helpers import (
    GAME,
    A,
    B,
    C,
    D,
    events_of,
    give_cards,
    illegal,
    new_game,
    open_move,
    run_from,
    set_cart,
    step,
)

FULL_DECK = {
    "achsbruch": 3,
    "kostenlose_zuladung": 3,
    "sonder_verkauf": 3,
    "sozialer_aufstieg": 3,
    "verkauf_mit_bonus": 3,
}


# -- builders -------------------------------------------------------------------------------
def scene(
    seats: int = 4,
    start: int = A,
    carts: dict[int, Any] | None = None,
    messenger: str | None = None,
    abilities: dict[int, list[str]] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """A game in which nobody holds a special ability unless `abilities` says so; carts
    map cart number -> node, or (node, arrived)."""
    s = new_game(seats, 1, start, **options)
    for player in s["players"]:
        player["abilities"] = []
    for seat, cards in (abilities or {}).items():
        s["players"][seat]["abilities"] = list(cards)
    for number, where in (carts or {}).items():
        at, arrived = (where, False) if isinstance(where, str) else where
        set_cart(s, number, at, arrived=arrived)
    if messenger is not None:
        s["messenger"] = messenger
    return s


def tile(v: int, cart: int, to: str, points: int = 0) -> dict[str, Any]:
    step_: dict[str, Any] = {"tile": v, "cart": cart, "to": to}
    if points:
        step_["points"] = points
    return step_


def forfeit(v: int) -> dict[str, Any]:
    return {"tile": v, "forfeit": True}


def wag(cart: int, points: int, to: str) -> dict[str, Any]:
    return {"cart": cart, "points": points, "to": to}


def msg(card: str, to: str) -> dict[str, Any]:
    return {"messenger": card, "to": to}


def turn(*steps: dict[str, Any], lift: list[int] | None = None, prefer: list[Any] | None = None) -> dict[str, Any]:
    order: dict[str, Any] = {"steps": list(steps)}
    if lift is not None:
        order["lift"] = lift
    if prefer is not None:
        order["prefer"] = prefer
    return order


def choices(s: dict[str, Any], seat: int) -> dict[str, Any]:
    (req,) = [r for r in GAME.requests(s) if r.seat == seat]
    assert req.kind == "move"
    return req.choices


def ends(s: dict[str, Any], seat: int, cart: int, value: int) -> list[str]:
    return choices(s, seat)["carts"][cart - 1]["ends"][str(value)]


def at(s: dict[str, Any]) -> list[str]:
    return [c["at"] for c in s["carts"]]


def hand(s: dict[str, Any], seat: int) -> dict[str, int]:
    return s["players"][seat]["hand"]


def play_defaults(s: dict[str, Any], kind: str = "move") -> tuple[dict[str, Any], list[int]]:
    """Resolve every open `kind` decision with default orders; returns the movers."""
    movers = []
    while s["pending"] and s["pending"]["kind"] == kind:
        seat = s["pending"]["seats"][0]
        movers.append(seat)
        s, _ = step(s, {seat: GAME.default_order(s, seat)})
    return s, movers


# -- H-56: the three steps of phase 3 and the Achsbruch window -------------------------------
def test_h_56_phase_runs_window_then_turns_in_turn_order_then_clean_up() -> None:
    s = scene(start=B)
    give_cards(s, C, "achsbruch")
    give_cards(s, A, "sonder_verkauf")
    run_from(s, "achsbruch")
    assert s["pending"]["kind"] == "achsbruch"
    assert s["pending"]["seats"] == [C, A]  # turn order B, C, D, A; holders only
    s, ev = step(s, {C: {"carts": [1]}, A: {"carts": []}})
    assert s["blocks"] == [{"cart": 1, "by": C}]
    assert s["pending"] == {"kind": "move", "seats": [B], "sealed": False}
    s, movers = play_defaults(s)
    assert movers == [B, C, D, A]
    assert s["pending"]["kind"] == "wheel"  # phase 4 follows
    assert s["blocks"] == []  # clean-up (H-77)
    assert s["carts"][0]["at"] == "PAR"  # C kept the block by default: cart 1 never moved
    assert all(len(p["tiles"]) == 3 for p in s["players"])


def test_h_56_window_skipped_when_nobody_holds_an_influence_card() -> None:
    s = scene(start=C)
    run_from(s, "achsbruch")
    assert s["pending"] == {"kind": "move", "seats": [C], "sealed": False}


def test_h_56_window_asked_of_every_influence_holder_not_only_achsbruch_r_9() -> None:
    s = scene()
    give_cards(s, A, "sozialer_aufstieg")
    give_cards(s, B, "verkauf_mit_bonus")
    give_cards(s, D, "achsbruch")
    run_from(s, "achsbruch")
    assert s["pending"]["kind"] == "achsbruch"
    assert s["pending"]["sealed"] is True
    assert s["pending"]["seats"] == [A, B, D]
    # a holder without Achsbruch can only play none
    illegal(s, A, {"carts": [1]}, "no_such_card")
    assert GAME.default_order(s, A) == {"carts": []}
    s, _ = step(s, {A: {"carts": []}, B: {"carts": []}, D: {"carts": []}})
    assert s["blocks"] == [] and hand(s, D) == {"achsbruch": 1}
    assert s["pending"]["kind"] == "move"


def test_h_56_window_skipped_when_all_achsbruch_cards_are_played() -> None:
    s = scene()
    s["deck"]["achsbruch"] = 0
    s["played"]["achsbruch"] = 3
    give_cards(s, A, "kostenlose_zuladung", 2)
    run_from(s, "achsbruch")
    assert s["pending"] == {"kind": "move", "seats": [A], "sealed": False}


def test_h_56_window_still_asked_while_an_achsbruch_is_unplayed() -> None:
    s = scene()
    s["deck"]["achsbruch"] = 0
    s["played"]["achsbruch"] = 2
    give_cards(s, B, "kostenlose_zuladung")  # nobody can tell where the third one is
    run_from(s, "achsbruch")
    assert s["pending"]["kind"] == "achsbruch" and s["pending"]["seats"] == [B]


def test_h_56_light_variant_never_opens_the_window() -> None:
    s = scene(light=True)
    assert "achsbruch" not in s["deck"] and sum(s["deck"].values()) == 12
    give_cards(s, A, "sonder_verkauf")
    give_cards(s, C, "sozialer_aufstieg")
    run_from(s, "achsbruch")
    assert s["pending"] == {"kind": "move", "seats": [A], "sealed": False}


def test_h_56_achsbruch_order_is_checked_against_the_hand() -> None:
    s = scene()
    give_cards(s, C, "achsbruch")
    give_cards(s, C, "sonder_verkauf")
    run_from(s, "achsbruch")
    illegal(s, C, {"carts": [2, 3]}, "no_such_card")
    illegal(s, C, {"carts": [4]}, "malformed_order")
    illegal(s, C, {"carts": [0]}, "malformed_order")
    GAME.validate(s, C, {"carts": [2]})


def test_h_56_reveal_makes_every_play_public() -> None:
    s = scene()
    give_cards(s, A, "sonder_verkauf")
    give_cards(s, C, "achsbruch", 2)
    run_from(s, "achsbruch")
    s, ev = step(s, {A: {"carts": []}, C: {"carts": [2, 2]}})
    (played,) = events_of(ev, "achsbruch_played")
    assert played["visible_to"] == "all"
    assert {"seat": C, "carts": [2, 2]} in played["plays"]
    assert {"seat": A, "carts": []} in played["plays"]
    # several cards may target the same cart; each card leaves the game (H-57)
    assert s["blocks"] == [{"cart": 2, "by": C}, {"cart": 2, "by": C}]
    assert hand(s, C) == {}
    assert s["played"]["achsbruch"] == 2


# -- H-57: Achsbruch blocks a cart -----------------------------------------------------------
def test_h_57_blocked_cart_moves_neither_by_tile_nor_by_wagnerei() -> None:
    s = scene(
        carts={1: "REI>BAS:1", 2: "KOE", 3: ("AUG", True)},
        messenger="REI",
        abilities={A: ["grosse_wagnerei", "express_kurier"]},
    )
    s["blocks"] = [{"cart": 1, "by": C}]
    open_move(s, A)
    assert choices(s, A)["carts"][0]["blocked"] is True
    illegal(s, A, turn(tile(1, 1, "REI>BAS:2")), "illegal_move")
    illegal(s, A, turn(tile(1, 2, "KOE>BRU:1"), wag(1, 2, "REI>BAS:3")), "illegal_move")
    # the messenger may still move onto the blocked cart's space, and it scores
    s2, ev = step(s, {A: turn(msg("express_kurier", "REI>BAS:1"), tile(1, 2, "KOE>BRU:1"))})
    assert s2["messenger"] == "REI>BAS:1"
    assert sum(hand(s2, A).values()) == 1
    assert at(s2) == ["REI>BAS:1", "KOE>BRU:1", "AUG"]


def test_h_57_cart_stays_blocked_while_any_card_on_it_is_active() -> None:
    s = scene(carts={1: "PAR", 2: "KOE", 3: "GEN"})
    s["blocks"] = [{"cart": 2, "by": B}, {"cart": 2, "by": A}]
    open_move(s, B)
    # B lifts its own card, but A's card still blocks cart 2
    illegal(s, B, turn(tile(1, 2, "KOE>BRU:1"), lift=[2]), "illegal_move")
    s2, _ = step(s, {B: turn(tile(1, 1, "PAR>REI:1"), lift=[2])})
    assert s2["blocks"] == [{"cart": 2, "by": A}]
    assert s2["carts"][1]["at"] == "KOE"


def test_h_57_blocks_are_removed_at_the_end_of_phase_3() -> None:
    s = scene(carts={1: "PAR", 2: "KOE", 3: "GEN"})
    s["blocks"] = [{"cart": 2, "by": A}, {"cart": 3, "by": D}]
    open_move(s, D)  # the last mover
    s2, _ = step(s, {D: GAME.default_order(s, D)})
    assert s2["blocks"] == []
    assert s2["pending"]["kind"] == "wheel"


# -- H-58: one order for the whole movement turn ---------------------------------------------
def test_h_58_movement_turn_is_one_order_with_lift_tile_wagnerei_and_messenger() -> None:
    s = scene(
        carts={1: "REI>BAS:1", 2: "KOE", 3: "GEN>CHU:1"},
        messenger="KOE>BRU:3",
        abilities={B: ["grosse_wagnerei", "kurier"]},
    )
    s["blocks"] = [{"cart": 1, "by": B}]
    open_move(s, B)
    order = turn(tile(2, 1, "REI>BAS:3", points=0), wag(3, 2, "GEN>CHU:3"), msg("kurier", "KOE>BRU:2"), lift=[1])
    s2, ev = step(s, {B: order})
    assert at(s2) == ["REI>BAS:3", "KOE", "GEN>CHU:3"]
    assert s2["messenger"] == "KOE>BRU:2"
    assert s2["blocks"] == []
    assert s2["players"][B]["tiles"] == [1, 3, 4]
    (moved,) = events_of(ev, "moved")
    assert moved["seat"] == B and moved["lifted"] == [1] and len(moved["steps"]) == 3
    assert s2["pending"] == {"kind": "move", "seats": [C], "sealed": False}


def test_h_58_a_turn_must_flip_exactly_one_tile() -> None:
    s = scene(carts={1: "PAR", 2: "KOE", 3: "GEN"}, abilities={A: ["wagnerei", "kurier"]})
    open_move(s, A)
    illegal(s, A, {}, "illegal_move")
    illegal(s, A, turn(msg("kurier", "KOE>BRU:4")), "illegal_move")
    illegal(s, A, turn(tile(1, 1, "PAR>REI:1"), tile(2, 2, "KOE>BRU:2")), "illegal_move")
    illegal(s, A, {"steps": [{"tile": 1, "cart": 1, "to": "PAR>REI:1"}], "extra": 1}, "malformed_order")
    illegal(s, A, {"steps": [{"walk": 1}]}, "malformed_order")


# -- H-59: keep or lift at the start of the own turn -----------------------------------------
def test_h_59_lift_comes_first_so_the_lifter_may_move_the_cart() -> None:
    s = scene(carts={1: "PAR", 2: "KOE", 3: "GEN"}, messenger="KOE>BRU:4")
    s["blocks"] = [{"cart": 2, "by": C}]
    open_move(s, C)
    illegal(s, C, turn(tile(1, 2, "KOE>BRU:1")), "illegal_move")  # kept: still blocked
    s2, _ = step(s, {C: turn(tile(1, 2, "KOE>BRU:1"), lift=[2])})
    assert s2["blocks"] == [] and s2["carts"][1]["at"] == "KOE>BRU:1"


def test_h_59_only_own_active_cards_can_be_lifted() -> None:
    s = scene(carts={1: "PAR", 2: "KOE", 3: "GEN"})
    s["blocks"] = [{"cart": 2, "by": A}]
    open_move(s, C)
    illegal(s, C, turn(tile(1, 1, "PAR>REI:1"), lift=[2]), "illegal_move")
    illegal(s, C, turn(tile(1, 1, "PAR>REI:1"), lift=[3]), "illegal_move")
    assert choices(s, C)["my_blocks"] == []
    open_move(s, A)
    assert choices(s, A)["my_blocks"] == [2]


def test_h_59_kept_card_stays_active_for_the_later_players() -> None:
    s = scene(carts={1: "PAR", 2: "KOE", 3: "GEN"})
    s["blocks"] = [{"cart": 2, "by": B}]
    open_move(s, B)
    s2, _ = step(s, {B: turn(tile(1, 1, "PAR>REI:1"))})  # no lift: keep
    assert s2["blocks"] == [{"cart": 2, "by": B}]
    assert s2["pending"]["seats"] == [C]
    illegal(s2, C, turn(tile(1, 2, "KOE>BRU:1")), "illegal_move")
    illegal(s2, C, turn(tile(1, 2, "KOE>BRU:1"), lift=[2]), "illegal_move")  # not C's card


# -- H-60: which carts are eligible ------------------------------------------------------------
def test_h_60_arrived_cart_is_not_eligible_but_a_cart_standing_in_a_city_is() -> None:
    s = scene(carts={1: ("PAR", True), 2: "KOE", 3: "GEN"}, abilities={A: ["wagnerei"]})
    open_move(s, A)
    assert ends(s, A, 1, 1) == []  # a route exists, but the cart arrived: no end is offered
    assert ends(s, A, 2, 1) == ["KOE>BRU:1", "KOE>AUG:1"]
    illegal(s, A, turn(tile(1, 1, "PAR>REI:1")), "illegal_move")
    illegal(s, A, turn(tile(1, 2, "KOE>BRU:1"), wag(1, 1, "PAR>REI:1")), "illegal_move")
    s2, _ = step(s, {A: turn(tile(1, 3, "GEN>CHU:1"))})  # stood in Genua at phase start
    assert s2["carts"][2]["at"] == "GEN>CHU:1" and s2["carts"][2]["arrived"] is False


# -- H-61: the sequence of steps ----------------------------------------------------------------
def test_h_61_wagnerei_moves_come_after_the_tile_move() -> None:
    s = scene(carts={1: "REI>BAS:2", 2: "REI>BAS:1", 3: ("AUG", True)}, abilities={A: ["wagnerei"]})
    open_move(s, A)
    illegal(s, A, turn(wag(2, 1, "REI>BAS:2"), tile(1, 1, "REI>BAS:3")), "illegal_move")
    # each step sees the state the earlier steps left: cart 1 frees REI>BAS:2 for cart 2
    assert ends(s, A, 2, 1) == []
    s2, _ = step(s, {A: turn(tile(1, 1, "REI>BAS:3"), wag(2, 1, "REI>BAS:2"))})
    assert at(s2) == ["REI>BAS:3", "REI>BAS:2", "AUG"]


def test_h_61_must_move_is_judged_after_the_lift() -> None:
    s = scene(carts={1: "REI>BAS:1", 2: ("BRU", True), 3: ("AUG", True)})
    s["blocks"] = [{"cart": 1, "by": A}]
    open_move(s, A)
    GAME.validate(s, A, turn(forfeit(1)))  # kept: nothing can move, the tile is forfeited
    illegal(s, A, turn(forfeit(1), lift=[1]), "must_move")
    s2, _ = step(s, {A: turn(tile(1, 1, "REI>BAS:2"), lift=[1])})
    assert s2["carts"][0]["at"] == "REI>BAS:2"


def test_h_61_messenger_may_move_before_between_or_after_cart_moves() -> None:
    s = scene(
        carts={1: "REI>BAS:1", 2: "KOE", 3: "GEN>CHU:1"},
        messenger="KOE>BRU:3",
        abilities={B: ["grosse_wagnerei", "kurier"]},
    )
    open_move(s, B)
    for order in (
        turn(msg("kurier", "KOE>BRU:4"), tile(1, 1, "REI>BAS:2"), wag(3, 1, "GEN>CHU:2")),
        turn(tile(1, 1, "REI>BAS:2"), msg("kurier", "KOE>BRU:4"), wag(3, 1, "GEN>CHU:2")),
        turn(tile(1, 1, "REI>BAS:2"), wag(3, 1, "GEN>CHU:2"), msg("kurier", "KOE>BRU:4")),
    ):
        s2, _ = step(s, {B: order})
        assert at(s2) == ["REI>BAS:2", "KOE", "GEN>CHU:2"] and s2["messenger"] == "KOE>BRU:4"


# -- H-62: routes --------------------------------------------------------------------------------
def test_h_62_fork_lets_the_player_choose_the_branch() -> None:
    s = scene(carts={1: "STR", 2: ("BRU", True), 3: ("AUG", True)})
    open_move(s, A)
    assert ends(s, A, 1, 2) == ["STR>KOE:2", "STR>LYO:2"]
    for end in ("STR>KOE:2", "STR>LYO:2"):
        s2, _ = step(s, {A: turn(tile(2, 1, end))})
        assert s2["carts"][0]["at"] == end


def test_h_62_city_with_several_exits_lets_the_player_choose_the_road() -> None:
    s = scene(carts={1: ("PAR", True), 2: "KOE", 3: ("AUG", True)}, messenger="KOE>BRU:4")
    open_move(s, A)
    assert ends(s, A, 2, 2) == ["KOE>BRU:2", "KOE>AUG:2"]
    s2, _ = step(s, {A: turn(tile(2, 2, "KOE>AUG:2"))})
    assert s2["carts"][1]["at"] == "KOE>AUG:2"


def test_h_62_carts_move_forward_only_and_never_through_a_city() -> None:
    s = scene(carts={1: "STR>KOE:1", 2: ("BRU", True), 3: ("AUG", True)})
    open_move(s, A)
    illegal(s, A, turn(tile(1, 1, "STR")), "illegal_move")  # backwards
    illegal(s, A, turn(tile(1, 1, "CHU>STR:3")), "illegal_move")
    assert ends(s, A, 1, 4) == ["KOE"]  # the route ends at Köln: the reach is 2 nodes
    illegal(s, A, turn(tile(4, 1, "KOE>BRU:2")), "illegal_move")
    s2, _ = step(s, {A: turn(tile(4, 1, "KOE"))})
    assert s2["carts"][0]["at"] == "KOE" and s2["carts"][0]["arrived"] is True


# -- H-63: the distance moved ----------------------------------------------------------------------
def test_h_63_cart_moves_its_full_value_and_a_nearer_end_is_refused() -> None:
    s = scene(carts={1: "REI", 2: ("BRU", True), 3: ("AUG", True)})
    open_move(s, A)
    assert ends(s, A, 1, 3) == ["REI>BAS:3"]
    illegal(s, A, turn(tile(3, 1, "REI>BAS:2")), "illegal_move")
    illegal(s, A, turn(tile(3, 1, "REI>BAS:1")), "illegal_move")
    s2, _ = step(s, {A: turn(tile(3, 1, "REI>BAS:3"))})
    assert s2["carts"][0]["at"] == "REI>BAS:3"


def test_h_63_cart_stops_before_an_occupied_space_and_may_pass_over_one() -> None:
    s = scene(carts={1: "REI", 2: "REI>BAS:3", 3: "REI>BAS:2"})
    s["blocks"] = [{"cart": 2, "by": D}, {"cart": 3, "by": D}]
    open_move(s, A)
    # reach :1 :2 :3, with :2 and :3 occupied: it stops on :1, 2 points lost
    assert ends(s, A, 1, 3) == ["REI>BAS:1"]
    illegal(s, A, turn(tile(3, 1, "REI>BAS:3")), "illegal_move")
    # with 4 it passes both carts and ends on the free junction BAS
    assert ends(s, A, 1, 4) == ["BAS"]


def test_h_63_occupied_city_stops_the_cart_before_it() -> None:
    s = scene(carts={1: "STR>LYO:1", 2: "LYO", 3: ("AUG", True)})
    s["blocks"] = [{"cart": 2, "by": D}]
    open_move(s, A)
    assert ends(s, A, 1, 4) == ["STR>LYO:2"]
    illegal(s, A, turn(tile(4, 1, "LYO")), "illegal_move")
    s["carts"][0]["at"] = "STR>LYO:2"
    assert ends(s, A, 1, 1) == []  # no free node in the reach: no move
    GAME.validate(s, A, turn(forfeit(1)))


def test_h_63_the_messenger_never_hinders_a_cart() -> None:
    s = scene(carts={1: "REI", 2: ("BRU", True), 3: ("AUG", True)}, messenger="REI>BAS:2")
    open_move(s, A)
    assert ends(s, A, 1, 2) == ["REI>BAS:2"]
    s2, _ = step(s, {A: turn(tile(2, 1, "REI>BAS:2"))})
    assert s2["carts"][0]["at"] == "REI>BAS:2" and s2["messenger"] == "REI>BAS:2"


# -- H-64: a move is given by its end node -----------------------------------------------------
def test_h_64_move_is_named_by_its_end_node_on_any_route() -> None:
    s = scene(carts={1: "BAS", 2: ("BRU", True), 3: ("LYO", True)})
    open_move(s, A)
    assert ends(s, A, 1, 3) == ["AUG", "BAS>GEN:3"]
    for end in ("AUG", "BAS>GEN:3"):
        s2, _ = step(s, {A: turn(tile(3, 1, end))})
        assert s2["carts"][0]["at"] == end
    for bad in ("BAS>GEN:2", "BAS>AUG:2", "GEN", "nowhere"):
        illegal(s, A, turn(tile(3, 1, bad)), "illegal_move")


# -- H-65: the tile move ---------------------------------------------------------------------------
def scene_h65() -> dict[str, Any]:
    """Tile 1 moves nothing, tile 2 moves cart 1 into Augsburg; A holds Große Wagnerei."""
    s = scene(
        carts={1: "BAS>AUG:1", 2: "BAS>AUG:2", 3: ("LYO", True)},
        abilities={A: ["grosse_wagnerei"]},
    )
    s["blocks"] = [{"cart": 2, "by": D}]
    open_move(s, A)
    return s


def test_h_65_forfeit_is_refused_when_the_tile_can_move_a_cart() -> None:
    s = scene_h65()
    illegal(s, A, turn(forfeit(2)), "must_move")
    s2, _ = step(s, {A: turn(tile(2, 1, "AUG"))})
    assert s2["carts"][0]["at"] == "AUG" and s2["players"][A]["tiles"] == [1, 3, 4]


def test_h_65_any_face_up_tile_may_be_picked_and_is_flipped_even_if_nothing_moves() -> None:
    s = scene_h65()
    s2, ev = step(s, {A: turn(forfeit(1))})
    assert s2["players"][A]["tiles"] == [2, 3, 4]
    assert at(s2) == at(s)
    (moved,) = events_of(ev, "moved")
    assert moved["steps"] == [{"tile": 1, "forfeit": True}]


def test_h_65_only_a_face_up_tile_can_be_flipped() -> None:
    s = scene_h65()
    s["players"][A]["tiles"] = [1, 2, 4]
    illegal(s, A, turn(tile(3, 1, "AUG")), "no_such_tile")
    illegal(s, A, turn(forfeit(3)), "no_such_tile")
    illegal(s, A, turn(tile(5, 1, "AUG")), "no_such_tile")


def test_h_65_the_tile_cart_must_be_movable_by_the_tile_alone() -> None:
    s = scene_h65()
    # tile 1 + 1 point would reach Augsburg, but tile 1 alone cannot move cart 1
    illegal(s, A, turn(tile(1, 1, "AUG", points=1)), "illegal_move")
    # after a forfeit the points go into a separate move
    s2, _ = step(s, {A: turn(forfeit(1), wag(1, 2, "AUG"))})
    assert s2["carts"][0]["at"] == "AUG" and s2["carts"][0]["arrived"] is True


def test_h_65_points_added_to_the_tile_make_one_combined_move() -> None:
    s = scene(carts={1: "REI", 2: ("BRU", True), 3: ("LYO", True)}, abilities={A: ["grosse_wagnerei"]})
    open_move(s, A)
    illegal(s, A, turn(tile(1, 1, "REI>BAS:1", points=2)), "illegal_move")  # must go the full 3
    illegal(s, A, turn(tile(1, 1, "REI>BAS:3", points=3)), "illegal_move")  # only 2 points
    s2, ev = step(s, {A: turn(tile(1, 1, "REI>BAS:3", points=2))})
    assert s2["carts"][0]["at"] == "REI>BAS:3"
    (moved,) = events_of(ev, "moved")
    assert [st["to"] for st in moved["steps"]] == ["REI>BAS:3"]


# -- H-66: any player may move any cart ----------------------------------------------------------------
def test_h_66_any_player_moves_any_cart_empty_or_with_others_goods() -> None:
    s = scene(carts={1: "PAR>REI:1", 2: "REI>BAS:1", 3: ("LYO", True)}, abilities={B: ["wagnerei"]})
    s["carts"][1]["rows"][A] = ["tuch", "tuch"]
    open_move(s, B)
    s2, _ = step(s, {B: turn(tile(1, 2, "REI>BAS:2"), wag(1, 1, "PAR>REI:2"))})
    assert at(s2)[:2] == ["PAR>REI:2", "REI>BAS:2"]
    assert s2["carts"][1]["rows"][A] == ["tuch", "tuch"] and s2["carts"][0]["rows"] == [[], [], [], []]


# -- H-67: one cart per space and per city ------------------------------------------------------------
def test_h_67_a_cart_never_ends_on_an_occupied_space_or_city() -> None:
    s = scene(carts={1: "PAR>REI:2", 2: "REI", 3: "PAR"}, abilities={A: ["wagnerei"]})
    s["blocks"] = [{"cart": 2, "by": D}]
    open_move(s, A)
    illegal(s, A, turn(tile(1, 1, "REI")), "illegal_move")
    assert ends(s, A, 1, 1) == []
    # cart 3 with 2 stops before cart 1 on PAR>REI:1
    assert ends(s, A, 3, 2) == ["PAR>REI:1"]
    illegal(s, A, turn(tile(2, 3, "PAR>REI:2")), "illegal_move")
    s["carts"][1].update(at="AUG")  # and a city holds one cart
    s["carts"][0].update(at="BAS>AUG:2")
    assert ends(s, A, 1, 1) == []
    illegal(s, A, turn(tile(1, 1, "AUG")), "illegal_move")


# -- H-68: arrival -------------------------------------------------------------------------------------
def test_h_68_cart_entering_a_city_has_arrived_and_cannot_move_again() -> None:
    s = scene(carts={1: "BAS>AUG:2", 2: "KOE", 3: "GEN"}, messenger="KOE>BRU:4")
    open_move(s, A)
    s2, _ = step(s, {A: turn(tile(4, 1, "AUG"))})  # 3 points are lost at the city
    assert s2["carts"][0] == {**s["carts"][0], "at": "AUG", "arrived": True}
    assert s2["pending"]["seats"] == [B]
    illegal(s2, B, turn(tile(1, 1, "AUG>CHU:1")), "illegal_move")
    assert choices(s2, B)["carts"][0]["arrived"] is True
    s3, _ = play_defaults(s2)
    assert s3["carts"][0]["at"] == "AUG" and s3["carts"][0]["arrived"] is True


# -- H-69: Wagnerei points ----------------------------------------------------------------------------------
def test_h_69_wagnerei_gives_one_point_and_grosse_wagnerei_two() -> None:
    s = scene(carts={1: "REI", 2: "GEN>CHU:1", 3: "CHU"}, abilities={A: ["wagnerei"], B: ["grosse_wagnerei"]})
    open_move(s, A)
    assert choices(s, A)["points"] == 1
    illegal(s, A, turn(tile(1, 1, "REI>BAS:1"), wag(2, 2, "GEN>CHU:3")), "illegal_move")
    open_move(s, B)
    assert choices(s, B)["points"] == 2
    illegal(s, B, turn(tile(1, 1, "REI>BAS:1"), wag(2, 1, "GEN>CHU:2"), wag(3, 2, "CHU>STR:2")), "illegal_move")
    s2, _ = step(s, {B: turn(tile(1, 1, "REI>BAS:1"), wag(2, 1, "GEN>CHU:2"), wag(3, 1, "CHU>STR:1"))})
    assert at(s2) == ["REI>BAS:1", "GEN>CHU:2", "CHU>STR:1"]


def test_h_69_holder_of_both_wagnerei_cards_has_three_points_r_23() -> None:
    s = scene(carts={1: "REI", 2: ("BRU", True), 3: ("LYO", True)}, abilities={C: ["wagnerei", "grosse_wagnerei"]})
    open_move(s, C)
    assert choices(s, C)["points"] == 3
    illegal(s, C, turn(tile(1, 1, "BAS>AUG:1", points=4)), "illegal_move")
    s2, _ = step(s, {C: turn(tile(1, 1, "BAS", points=3))})
    assert s2["carts"][0]["at"] == "BAS"


def test_h_69_points_are_optional_and_do_not_carry_over() -> None:
    s = scene(carts={1: "REI", 2: ("BRU", True), 3: ("LYO", True)}, abilities={A: ["grosse_wagnerei"]})
    open_move(s, A)
    s2, _ = step(s, {A: turn(tile(1, 1, "REI>BAS:1"))})  # no point used
    open_move(s2, A)
    assert choices(s2, A)["points"] == 2  # still 2, not 4
    illegal(s2, A, turn(tile(2, 1, "BAS>AUG:2", points=3)), "illegal_move")


# -- H-70: no cart moves twice in a turn ---------------------------------------------------------------
def test_h_70_a_cart_moved_by_the_tile_cannot_move_again_with_points() -> None:
    s = scene(
        carts={1: "REI", 2: ("BRU", True), 3: ("LYO", True)},
        messenger="KOE>BRU:3",
        abilities={A: ["wagnerei", "kurier"]},
    )
    open_move(s, A)
    illegal(s, A, turn(tile(1, 1, "REI>BAS:1"), wag(1, 1, "REI>BAS:2")), "illegal_move")
    illegal(s, A, turn(tile(1, 1, "REI>BAS:1"), msg("kurier", "KOE>BRU:4"), wag(1, 1, "REI>BAS:2")), "illegal_move")


def test_h_70_points_given_to_one_cart_are_spent_in_one_move() -> None:
    s = scene(carts={1: "REI", 2: "GEN>CHU:1", 3: ("LYO", True)}, abilities={A: ["grosse_wagnerei"]})
    open_move(s, A)
    illegal(s, A, turn(tile(1, 1, "REI>BAS:1"), wag(2, 1, "GEN>CHU:2"), wag(2, 1, "GEN>CHU:3")), "illegal_move")
    s2, _ = step(s, {A: turn(tile(1, 1, "REI>BAS:1"), wag(2, 2, "GEN>CHU:3"))})
    assert s2["carts"][1]["at"] == "GEN>CHU:3"


# -- H-71: messenger moves ------------------------------------------------------------------------------
def test_h_71_kurier_moves_exactly_one_space_either_way() -> None:
    s = scene(carts={1: "PAR", 2: "KOE", 3: "GEN"}, messenger="KOE>BRU:3", abilities={A: ["kurier"]})
    open_move(s, A)
    assert choices(s, A)["messenger_cards"] == {"kurier": ["KOE>BRU:4", "KOE>BRU:2"]}
    illegal(s, A, turn(msg("kurier", "KOE>BRU:1"), tile(1, 1, "PAR>REI:1")), "illegal_move")
    illegal(s, A, turn(msg("kurier", "KOE>BRU:3"), tile(1, 1, "PAR>REI:1")), "illegal_move")
    for end in ("KOE>BRU:4", "KOE>BRU:2"):
        s2, _ = step(s, {A: turn(msg("kurier", end), tile(1, 1, "PAR>REI:1"))})
        assert s2["messenger"] == end


def test_h_71_express_kurier_moves_one_or_two_spaces_never_into_a_city() -> None:
    s = scene(carts={1: "PAR", 2: "KOE", 3: "GEN"}, messenger="KOE>BRU:4", abilities={A: ["express_kurier"]})
    open_move(s, A)
    assert choices(s, A)["messenger_cards"] == {"express_kurier": ["KOE>BRU:3", "KOE>BRU:2"]}
    illegal(s, A, turn(msg("express_kurier", "BRU"), tile(1, 1, "PAR>REI:1")), "illegal_move")
    illegal(s, A, turn(msg("express_kurier", "BRU>REI:1"), tile(1, 1, "PAR>REI:1")), "illegal_move")
    s2, _ = step(s, {A: turn(msg("express_kurier", "KOE>BRU:2"), tile(1, 1, "PAR>REI:1"))})
    assert s2["messenger"] == "KOE>BRU:2"


def test_h_71_mover_chooses_the_branch_and_keeps_one_direction_r_27() -> None:
    s = scene(carts={1: "PAR", 2: "KOE", 3: "GEN"}, messenger="BRU>REI:2", abilities={A: ["express_kurier"]})
    open_move(s, A)
    assert choices(s, A)["messenger_cards"]["express_kurier"] == ["REI", "REI>BAS:1", "BRU>REI:1"]
    # forward to REI then backward onto the Paris road mixes directions
    illegal(s, A, turn(msg("express_kurier", "PAR>REI:2"), tile(1, 1, "PAR>REI:1")), "illegal_move")
    s["messenger"] = "REI>BAS:3"
    assert choices(s, A)["messenger_cards"]["express_kurier"] == [
        "BAS", "BAS>AUG:1", "BAS>GEN:1", "REI>BAS:2", "REI>BAS:1",
    ]  # fmt: skip
    s2, _ = step(s, {A: turn(msg("express_kurier", "BAS>GEN:1"), tile(1, 1, "PAR>REI:1"))})
    assert s2["messenger"] == "BAS>GEN:1"
    s["messenger"] = "REI"
    s2, _ = step(s, {A: turn(msg("express_kurier", "PAR>REI:1"), tile(1, 1, "PAR>REI:1"))})
    assert s2["messenger"] == "PAR>REI:1"  # backwards, against the road direction


def test_h_71_each_messenger_card_moves_once_and_only_for_its_holder() -> None:
    s = scene(carts={1: "PAR", 2: "KOE", 3: "GEN"}, messenger="KOE>BRU:2", abilities={A: ["kurier"]})
    open_move(s, A)
    illegal(s, A, turn(msg("kurier", "KOE>BRU:3"), tile(1, 1, "PAR>REI:1"), msg("kurier", "KOE>BRU:4")), "no_such_card")
    illegal(s, A, turn(msg("express_kurier", "KOE>BRU:3"), tile(1, 1, "PAR>REI:1")), "no_such_card")
    open_move(s, B)
    assert choices(s, B)["messenger_cards"] == {}
    illegal(s, B, turn(msg("kurier", "KOE>BRU:3"), tile(1, 1, "PAR>REI:1")), "no_such_card")


def test_h_71_holder_of_both_messenger_cards_makes_two_moves_r_23() -> None:
    s = scene(carts={1: "PAR", 2: "KOE", 3: "GEN"}, messenger="KOE>BRU:1", abilities={A: ["kurier", "express_kurier"]})
    open_move(s, A)
    s2, _ = step(s, {A: turn(msg("express_kurier", "KOE>BRU:3"), tile(1, 1, "PAR>REI:1"), msg("kurier", "KOE>BRU:4"))})
    assert s2["messenger"] == "KOE>BRU:4"


# -- H-72: gaining influence cards -----------------------------------------------------------------
def test_h_72_cart_ending_on_the_messenger_gains_a_card_without_a_messenger_card() -> None:
    s = scene(carts={1: "REI", 2: ("BRU", True), 3: ("LYO", True)}, messenger="REI>BAS:2")
    open_move(s, A)
    s2, ev = step(s, {A: turn(tile(2, 1, "REI>BAS:2"))})
    assert hand(s2, A) == {"sozialer_aufstieg": 1}
    assert sum(s2["deck"].values()) == 14
    assert events_of(ev, "moved")[0]["gains"] == 1


def test_h_72_passing_over_the_messenger_or_a_cart_gives_nothing() -> None:
    s = scene(
        carts={1: "REI", 2: "REI>BAS:2", 3: ("LYO", True)},
        messenger="REI>BAS:1",
        abilities={A: ["express_kurier"]},
    )
    s["blocks"] = [{"cart": 2, "by": D}]
    open_move(s, A)
    s2, ev = step(s, {A: turn(tile(3, 1, "REI>BAS:3"))})  # passes the messenger
    assert hand(s2, A) == {} and sum(s2["deck"].values()) == 15
    assert events_of(ev, "card_gained") == []
    s["messenger"] = "REI"
    s["carts"][0]["at"] = "REI>BAS:1"
    s["carts"][1]["at"] = "REI>BAS:3"
    # the messenger passes cart 1 and ends on the empty REI>BAS:2
    s2, ev = step(s, {A: turn(msg("express_kurier", "REI>BAS:2"), tile(4, 1, "BAS>AUG:1"))})
    assert hand(s2, A) == {} and events_of(ev, "moved")[0]["gains"] == 0


def test_h_72_messenger_ending_on_a_cart_gains_a_card() -> None:
    s = scene(carts={1: "PAR", 2: "KOE>BRU:4", 3: "GEN"}, messenger="KOE>BRU:3", abilities={B: ["kurier"]})
    open_move(s, B)
    s2, ev = step(s, {B: turn(msg("kurier", "KOE>BRU:4"), tile(1, 1, "PAR>REI:1"), prefer=["achsbruch"])})
    assert hand(s2, B) == {"achsbruch": 1}


def test_h_72_wagnerei_move_ending_on_the_messenger_gains_a_card() -> None:
    s = scene(carts={1: "PAR", 2: "KOE", 3: "GEN"}, messenger="KOE>BRU:1", abilities={A: ["wagnerei"]})
    open_move(s, A)
    s2, _ = step(s, {A: turn(tile(1, 1, "PAR>REI:1"), wag(2, 1, "KOE>BRU:1"), prefer=["sonder_verkauf"])})
    assert hand(s2, A) == {"sonder_verkauf": 1}


def test_h_72_two_different_carts_give_two_cards_in_one_turn() -> None:
    s = scene(carts={1: "KOE>BRU:1", 2: "KOE", 3: "GEN"}, messenger="KOE>BRU:3", abilities={A: ["express_kurier"]})
    open_move(s, A)
    order = turn(
        tile(2, 1, "KOE>BRU:3"),  # cart 1 onto the messenger: card 1
        msg("express_kurier", "KOE>BRU:1"),  # messenger back 2 spaces: no cart there
        prefer=[["achsbruch"], ["sonder_verkauf"]],
    )
    s2, _ = step(s, {A: order})
    assert hand(s2, A) == {"achsbruch": 1}
    s["carts"][1]["at"] = "KOE>BRU:2"  # now a second cart stands where the messenger goes
    s["blocks"] = [{"cart": 2, "by": D}]
    order = turn(
        tile(2, 1, "KOE>BRU:3"), msg("express_kurier", "KOE>BRU:2"), prefer=[["achsbruch"], ["sonder_verkauf"]]
    )
    s2, ev = step(s, {A: order})
    assert hand(s2, A) == {"achsbruch": 1, "sonder_verkauf": 1}
    assert events_of(ev, "moved")[0]["gains"] == 2
    assert sum(s2["deck"].values()) == 13


def test_h_72_at_most_one_card_per_cart_per_turn() -> None:
    s = scene(
        carts={1: "KOE>BRU:2", 2: ("BRU", True), 3: ("LYO", True)},
        messenger="KOE>BRU:1",
        abilities={A: ["kurier", "express_kurier"]},
    )
    open_move(s, A)
    # messenger onto cart 1 (card), cart 1 forward, messenger onto cart 1 again (no card)
    order = turn(msg("kurier", "KOE>BRU:2"), tile(1, 1, "KOE>BRU:3"), msg("express_kurier", "KOE>BRU:3"))
    s2, ev = step(s, {A: order})
    assert sum(hand(s2, A).values()) == 1
    (moved,) = events_of(ev, "moved")
    assert [st["card"] for st in moved["steps"]] == [True, False, False]


def test_h_72_empty_deck_gives_nothing() -> None:
    s = scene(carts={1: "REI", 2: ("BRU", True), 3: ("LYO", True)}, messenger="REI>BAS:2")
    for kind in list(s["deck"]):
        give_cards(s, C, kind, s["deck"][kind])
    open_move(s, A)
    s2, ev = step(s, {A: turn(tile(2, 1, "REI>BAS:2"))})
    assert hand(s2, A) == {}
    assert events_of(ev, "card_gained") == []
    (missed,) = events_of(ev, "card_gain_missed")
    assert missed["seat"] == A and missed["visible_to"] == "all"


def test_h_72_second_gain_misses_when_the_deck_runs_out() -> None:
    s = scene(
        carts={1: "KOE>BRU:1", 2: "KOE>BRU:2", 3: ("LYO", True)},
        messenger="KOE>BRU:3",
        abilities={A: ["express_kurier"]},
    )
    s["blocks"] = [{"cart": 2, "by": D}]
    for kind in list(s["deck"]):
        give_cards(s, C, kind, s["deck"][kind] - (kind == "achsbruch"))
    open_move(s, A)
    s2, ev = step(s, {A: turn(tile(2, 1, "KOE>BRU:3"), msg("express_kurier", "KOE>BRU:2"))})
    assert hand(s2, A) == {"achsbruch": 1}
    assert len(events_of(ev, "card_gain_missed")) == 1


# -- H-73: choosing the card --------------------------------------------------------------------------
def test_h_73_gainer_gets_the_highest_ranked_kind_left_in_the_deck() -> None:
    s = scene(carts={1: "REI", 2: ("BRU", True), 3: ("LYO", True)}, messenger="REI>BAS:2")
    give_cards(s, C, "achsbruch", 3)
    open_move(s, A)
    s2, _ = step(s, {A: turn(tile(2, 1, "REI>BAS:2"), prefer=["achsbruch", "kostenlose_zuladung"])})
    assert hand(s2, A) == {"kostenlose_zuladung": 1}


def test_h_73_default_ranking_when_the_list_is_missing_or_exhausted() -> None:
    s = scene(carts={1: "REI", 2: ("BRU", True), 3: ("LYO", True)}, messenger="REI>BAS:2")
    give_cards(s, C, "sozialer_aufstieg", 3)
    open_move(s, A)
    s2, _ = step(s, {A: turn(tile(2, 1, "REI>BAS:2"))})
    assert hand(s2, A) == {"verkauf_mit_bonus": 1}
    give_cards(s, C, "achsbruch", 3)
    s2, _ = step(s, {A: turn(tile(2, 1, "REI>BAS:2"), prefer=["achsbruch"])})
    assert hand(s2, A) == {"verkauf_mit_bonus": 1}


def test_h_73_kind_is_shown_only_to_the_gainer_with_the_deck_it_chose_from() -> None:
    s = scene(carts={1: "REI", 2: ("BRU", True), 3: ("LYO", True)}, messenger="REI>BAS:2")
    give_cards(s, D, "achsbruch")
    open_move(s, A)
    s2, ev = step(s, {A: turn(tile(2, 1, "REI>BAS:2"), prefer=["sonder_verkauf"])})
    private, public = events_of(ev, "card_gained")
    assert private["visible_to"] == [A]
    assert private["kind"] == "sonder_verkauf"
    assert private["deck"] == {**FULL_DECK, "achsbruch": 2}
    assert public["visible_to"] == "all" and "kind" not in public and "deck" not in public
    assert public["seat"] == A and public["deck_size"] == 13
    assert not visible_to(private, B) and not visible_to(private, "public") and visible_to(private, A)
    # neither the kind gained nor the preference list reaches another seat (D3-MOVE visibility)
    assert not any("sonder_verkauf" in json.dumps(e) for e in ev if visible_to(e, B))
    # the hand stays hidden from the others; the count is public (H-13, H-14)
    theirs = GAME.view(s2, B)["players"][A]
    assert "hand" not in theirs and theirs["hand_size"] == 1
    assert GAME.view(s2, A)["players"][A]["hand"] == {"sonder_verkauf": 1}
    assert "deck" not in GAME.view(s2, A)


def test_h_73_one_ranking_per_gain() -> None:
    s = scene(
        carts={1: "KOE>BRU:1", 2: "KOE>BRU:2", 3: ("LYO", True)},
        messenger="KOE>BRU:3",
        abilities={A: ["express_kurier"]},
    )
    s["blocks"] = [{"cart": 2, "by": D}]
    open_move(s, A)
    steps = (tile(2, 1, "KOE>BRU:3"), msg("express_kurier", "KOE>BRU:2"))
    s2, _ = step(s, {A: turn(*steps, prefer=[["achsbruch"], ["achsbruch", "sonder_verkauf"]])})
    assert hand(s2, A) == {"achsbruch": 2}
    s2, _ = step(s, {A: turn(*steps, prefer=[["kostenlose_zuladung"]])})  # 2nd gain: default ranking
    assert hand(s2, A) == {"kostenlose_zuladung": 1, "sozialer_aufstieg": 1}
    s2, _ = step(s, {A: turn(*steps, prefer=["verkauf_mit_bonus"])})  # one list for all gains
    assert hand(s2, A) == {"verkauf_mit_bonus": 2}


def test_h_73_ranking_must_name_influence_kinds() -> None:
    s = scene(carts={1: "REI", 2: ("BRU", True), 3: ("LYO", True)}, messenger="REI>BAS:2")
    open_move(s, A)
    steps = (tile(2, 1, "REI>BAS:2"),)
    illegal(s, A, turn(*steps, prefer=["wagnerei"]), "malformed_order")
    illegal(s, A, turn(*steps, prefer=[["achsbruch", "gold"]]), "malformed_order")
    illegal(s, A, turn(*steps, prefer=[{}]), "malformed_order")
    illegal(s, A, turn(*steps, prefer=["sonder_verkauf", ["achsbruch"]]), "malformed_order")
    illegal(s, A, turn(*steps, prefer=[["sonder_verkauf"], "achsbruch"]), "malformed_order")
    illegal(s, A, {"steps": list(steps), "prefer": "achsbruch"}, "malformed_order")


# -- H-74: leaving a city ends the master title -------------------------------------------------------
def test_h_74_cart_leaving_a_city_loses_its_master_and_keeps_its_goods() -> None:
    s = scene(carts={1: "PAR", 2: "KOE", 3: "GEN"}, messenger="KOE>BRU:4", abilities={A: ["wagnerei"]})
    s["carts"][0].update(master=B, rows=[["tuch"], ["wein", "wein", "wein"], [], []])
    s["carts"][1].update(master=C)
    s["carts"][2].update(master=D)
    open_move(s, A)
    s2, ev = step(s, {A: turn(tile(1, 1, "PAR>REI:1"), wag(3, 1, "GEN>CHU:1"))})
    assert [c["master"] for c in s2["carts"]] == [None, C, None]
    assert s2["carts"][0]["rows"] == [["tuch"], ["wein", "wein", "wein"], [], []]


# -- H-75: previews from public facts ------------------------------------------------------------------------
def test_h_75_move_choices_preview_every_end_but_never_the_deck() -> None:
    s = scene(carts={1: "REI", 2: "KOE", 3: ("LYO", True)}, messenger="KOE>BRU:2", abilities={B: ["wagnerei"]})
    give_cards(s, B, "achsbruch")
    open_move(s, B)
    ch = choices(s, B)
    assert ch["tiles"] == [1, 2, 3, 4] and ch["points"] == 1 and ch["deck_size"] == 14
    assert ch["carts"][0]["ends"] == {
        "1": ["REI>BAS:1"], "2": ["REI>BAS:2"], "3": ["REI>BAS:3"], "4": ["BAS"], "5": ["BAS>AUG:1", "BAS>GEN:1"],
    }  # fmt: skip
    assert ch["carts"][1]["ends"]["2"] == ["KOE>BRU:2", "KOE>AUG:2"]
    assert ch["carts"][2]["arrived"] is True
    text = json.dumps(ch)
    assert "deck" not in ch and not any(kind in text for kind in FULL_DECK)


# -- H-76 and the D3-MOVE default (R-28) ---------------------------------------------------------------------
def test_h_76_default_takes_the_first_route_in_board_order() -> None:
    s = scene(carts={1: ("PAR", True), 2: "KOE", 3: "STR"})
    open_move(s, A)
    assert GAME.default_order(s, A) == {"steps": [{"tile": 1, "cart": 2, "to": "KOE>BRU:1"}]}
    s["carts"][1].update(at="LYO", arrived=True)
    assert GAME.default_order(s, A) == {"steps": [{"tile": 1, "cart": 3, "to": "STR>KOE:1"}]}


def test_h_76_default_takes_the_first_route_that_yields_a_move() -> None:
    s = scene(carts={1: "KOE>BRU:1", 2: "KOE", 3: "KOE>BRU:2"}, messenger="KOE>BRU:4")
    s["blocks"] = [{"cart": 1, "by": D}, {"cart": 3, "by": D}]
    open_move(s, A)
    # KOE>BRU:1 and :2 are taken, so the Köln–Augsburg road (second in board order) is used
    assert GAME.default_order(s, A) == {"steps": [{"tile": 1, "cart": 2, "to": "KOE>AUG:1"}]}
    s["players"][A]["tiles"] = [3]
    assert GAME.default_order(s, A) == {"steps": [{"tile": 3, "cart": 2, "to": "KOE>BRU:3"}]}


def test_h_76_default_flips_the_lowest_tile_and_moves_the_lowest_numbered_cart() -> None:
    s = scene(carts={1: "PAR", 2: "KOE", 3: "GEN"}, messenger="KOE>BRU:4")
    s["players"][C]["tiles"] = [4, 3]
    open_move(s, C)
    order = GAME.default_order(s, C)
    assert order == {"steps": [{"tile": 3, "cart": 1, "to": "REI"}]}
    s2, _ = step(s, {C: order})
    assert s2["players"][C]["tiles"] == [4] and s2["carts"][0]["at"] == "REI"


def test_h_76_default_keeps_achsbruch_uses_no_points_or_messenger_r_28() -> None:
    s = scene(
        carts={1: ("PAR", True), 2: "KOE", 3: "GEN>CHU:2"},
        messenger="KOE>BRU:4",
        abilities={B: ["grosse_wagnerei", "kurier"]},
    )
    s["blocks"] = [{"cart": 2, "by": B}]
    open_move(s, B)
    order = GAME.default_order(s, B)
    assert order == {"steps": [{"tile": 1, "cart": 3, "to": "GEN>CHU:3"}]}
    s2, _ = step(s, {B: order})
    assert s2["blocks"] == [{"cart": 2, "by": B}]
    assert s2["messenger"] == "KOE>BRU:4" and at(s2) == ["PAR", "KOE", "GEN>CHU:3"]


def test_h_76_default_forfeits_when_nothing_can_move() -> None:
    s = scene(carts={1: "BAS>AUG:1", 2: "BAS>AUG:2", 3: ("AUG", True)})
    s["players"][B]["tiles"] = [2, 3]
    open_move(s, B)
    order = GAME.default_order(s, B)
    assert order == {"steps": [{"tile": 2, "forfeit": True}]}
    s2, _ = step(s, {B: order})
    assert s2["players"][B]["tiles"] == [3] and at(s2) == at(s)


# -- H-77: end of phase 3 ----------------------------------------------------------------------------------
def test_h_77_spent_tile_sets_turn_face_up_and_achsbruch_cards_are_removed() -> None:
    s = scene(seats=3, carts={1: "PAR", 2: "KOE", 3: "GEN"}, messenger="KOE>BRU:4")
    s["players"][A]["tiles"] = []  # flipped its last tile earlier this phase
    s["players"][B]["tiles"] = [2]
    s["players"][C]["tiles"] = [1, 4]
    s["blocks"] = [{"cart": 3, "by": A}]
    open_move(s, C)
    s2, ev = step(s, {C: turn(tile(1, 1, "PAR>REI:1"))})
    assert s2["players"][A]["tiles"] == [1, 2, 3, 4]
    assert s2["players"][B]["tiles"] == [2]
    assert s2["players"][C]["tiles"] == [4]
    assert s2["blocks"] == []
    assert [e["seat"] for e in events_of(ev, "tiles_reset")] == [A]
    assert s2["pending"]["kind"] == "wheel"


# -- worked examples ---------------------------------------------------------------------------------
def test_w_7_a_cart_stops_before_an_occupied_space() -> None:
    s = scene(carts={1: "REI", 2: "REI>BAS:3", 3: ("AUG", True)})
    open_move(s, A)
    illegal(s, A, turn(tile(3, 1, "REI>BAS:3")), "illegal_move")
    s2, _ = step(s, {A: turn(tile(3, 1, "REI>BAS:2"))})
    assert s2["carts"][0]["at"] == "REI>BAS:2" and s2["players"][A]["tiles"] == [1, 2, 4]


def test_w_7_b_cart_passes_the_occupied_space_with_tile_4() -> None:
    s = scene(carts={1: "REI", 2: "REI>BAS:3", 3: ("AUG", True)})
    open_move(s, A)
    illegal(s, A, turn(tile(4, 1, "REI>BAS:2")), "illegal_move")
    s2, _ = step(s, {A: turn(tile(4, 1, "BAS"))})
    assert s2["carts"][0]["at"] == "BAS" and s2["carts"][1]["at"] == "REI>BAS:3"


def test_w_7_c_no_cart_can_move_so_the_tile_is_forfeited() -> None:
    s = scene(carts={1: "BAS>AUG:1", 2: "BAS>AUG:2", 3: ("AUG", True)})
    open_move(s, B)
    for cart in (1, 2, 3):
        assert ends(s, B, cart, 2) == []  # cart 3 has a route, but it arrived this round
    illegal(s, B, turn(tile(2, 1, "BAS>AUG:2")), "illegal_move")
    illegal(s, B, turn(tile(2, 1, "AUG")), "illegal_move")
    illegal(s, B, turn(tile(2, 2, "AUG")), "illegal_move")
    illegal(s, B, turn(tile(2, 3, "AUG>CHU:2")), "illegal_move")
    s2, _ = step(s, {B: turn(forfeit(2))})
    assert s2["players"][B]["tiles"] == [1, 3, 4] and at(s2) == at(s)


def test_w_8_occupied_city_then_the_cart_enters_it() -> None:
    s = scene(seats=3, carts={1: "STR>LYO:1", 2: "KOE", 3: "LYO"}, messenger="KOE>BRU:4")
    s["carts"][2].update(master=B, rows=[["nahrung"], ["wein", "wein"], []])
    open_move(s, A)
    assert ends(s, A, 1, 4) == ["STR>LYO:2"]
    illegal(s, A, turn(tile(4, 1, "LYO")), "illegal_move")
    s, _ = step(s, {A: turn(tile(4, 1, "STR>LYO:2"))})
    assert s["carts"][0]["at"] == "STR>LYO:2"
    assert s["pending"]["seats"] == [B]
    s, _ = step(s, {B: turn(tile(3, 3, "LYO>GEN:3"))})
    assert s["carts"][2]["at"] == "LYO>GEN:3" and s["carts"][2]["master"] is None
    assert s["carts"][2]["rows"] == [["nahrung"], ["wein", "wein"], []]
    assert ends(s, C, 1, 2) == ["LYO"]
    s, _ = step(s, {C: turn(tile(2, 1, "LYO"))})
    assert s["carts"][0]["at"] == "LYO" and s["carts"][0]["arrived"] is True
    open_move(s, A)  # no one may move cart 1 again this round
    illegal(s, A, turn(tile(1, 1, "LYO>PAR:1")), "illegal_move")


def scene_w9() -> dict[str, Any]:
    s = scene(
        carts={1: "PAR>REI:2", 2: "KOE", 3: "GEN>CHU:3"},
        messenger="KOE>BRU:3",
        abilities={D: ["grosse_wagnerei", "kurier"]},
    )
    open_move(s, D)
    return s


def test_w_9_grosse_wagnerei_split_over_two_carts() -> None:
    s = scene_w9()
    s2, _ = step(s, {D: turn(tile(2, 1, "REI>BAS:2", points=1), wag(3, 1, "CHU"))})
    assert s2["carts"][0]["at"] == "REI>BAS:2"
    assert s2["carts"][2]["at"] == "CHU"
    assert s2["carts"][1]["at"] == "KOE"
    assert s2["players"][D]["tiles"] == [1, 3, 4]


def test_w_9_cart_1_cannot_move_again_with_a_point() -> None:
    s = scene_w9()
    illegal(s, D, turn(tile(2, 1, "REI>BAS:1"), wag(1, 1, "REI>BAS:2")), "illegal_move")


def test_w_9_tile_alone_then_one_point_each_to_two_other_carts() -> None:
    s = scene_w9()
    for end in ("KOE>BRU:1", "KOE>AUG:1"):
        s2, _ = step(s, {D: turn(tile(2, 1, "REI>BAS:1"), wag(2, 1, end), wag(3, 1, "CHU"))})
        assert at(s2) == ["REI>BAS:1", end, "CHU"]


def test_w_10_a_cart_on_the_messenger_gains_a_card_and_leaves_its_master() -> None:
    s = scene(start=A)
    assert s["round"] == 1 and s["messenger"] == "KOE>BRU:3" and s["carts"][1]["at"] == "KOE"
    s["carts"][1]["master"] = B
    open_move(s, B)
    s2, ev = step(s, {B: turn(tile(3, 2, "KOE>BRU:3"), prefer=["verkauf_mit_bonus"])})
    assert s2["carts"][1]["at"] == "KOE>BRU:3" and s2["carts"][1]["master"] is None
    assert hand(s2, B) == {"verkauf_mit_bonus": 1}
    private, public = events_of(ev, "card_gained")
    assert private["visible_to"] == [B] and private["deck"] == FULL_DECK
    assert sum(private["deck"].values()) == 15
    assert public == {"type": "card_gained", "visible_to": "all", "seat": B, "deck_size": 14, "step": s["step"]}
    assert sum(s2["deck"].values()) == 14 and s2["deck"]["verkauf_mit_bonus"] == 2


def test_w_10_b_express_kurier_passes_one_cart_and_ends_on_another() -> None:
    s = scene(
        carts={1: "REI>BAS:2", 2: ("GEN", True), 3: "REI>BAS:1"},
        messenger="REI",
        abilities={C: ["express_kurier"]},
    )
    open_move(s, C)
    m = msg("express_kurier", "REI>BAS:2")
    illegal(s, C, turn(m, tile(1, 3, "REI>BAS:2")), "illegal_move")
    illegal(s, C, turn(m, forfeit(1)), "must_move")
    s2, ev = step(s, {C: turn(m, tile(1, 1, "REI>BAS:3"))})
    assert s2["messenger"] == "REI>BAS:2"
    assert at(s2) == ["REI>BAS:3", "GEN", "REI>BAS:1"]
    assert sum(hand(s2, C).values()) == 1
    assert events_of(ev, "moved")[0]["gains"] == 1


def test_w_10_c_kurier_and_express_kurier_score_cart_1_only_once() -> None:
    s = scene(
        carts={1: "REI>BAS:3", 2: "KOE", 3: "GEN"},
        messenger="REI>BAS:1",
        abilities={A: ["kurier", "express_kurier"]},
    )
    open_move(s, A)
    order = turn(msg("express_kurier", "REI>BAS:3"), tile(1, 1, "BAS"), msg("kurier", "BAS"))
    s2, ev = step(s, {A: order})
    assert s2["carts"][0]["at"] == "BAS" and s2["messenger"] == "BAS"
    assert sum(hand(s2, A).values()) == 1
    (moved,) = events_of(ev, "moved")
    assert [st["card"] for st in moved["steps"]] == [True, False, False] and moved["gains"] == 1


def scene_w11(achsbruch_holder: int = C) -> dict[str, Any]:
    s = scene(carts={1: "PAR", 2: "KOE", 3: "GEN"}, messenger="KOE>BRU:4")
    if achsbruch_holder == C:
        give_cards(s, A, "sonder_verkauf")
        give_cards(s, C, "achsbruch")
        give_cards(s, C, "kostenlose_zuladung")
    else:
        give_cards(s, achsbruch_holder, "achsbruch")
    run_from(s, "achsbruch")
    return s


def test_w_11_only_influence_holders_are_asked_and_the_play_is_public() -> None:
    s = scene_w11()
    assert s["pending"]["kind"] == "achsbruch" and s["pending"]["seats"] == [A, C]
    s, ev = step(s, {A: {"carts": []}, C: {"carts": [2]}})
    (played,) = events_of(ev, "achsbruch_played")
    assert played["visible_to"] == "all" and {"seat": C, "carts": [2]} in played["plays"]
    assert s["blocks"] == [{"cart": 2, "by": C}]
    assert hand(s, C) == {"kostenlose_zuladung": 1}


def test_w_11_kept_card_blocks_cart_2_for_the_whole_phase() -> None:
    s, _ = step(scene_w11(), {A: {"carts": []}, C: {"carts": [2]}})
    for seat in (A, B):
        assert s["pending"]["seats"] == [seat]
        illegal(s, seat, turn(tile(1, 2, "KOE>BRU:1")), "illegal_move")
        s, _ = step(s, {seat: GAME.default_order(s, seat)})
    s, _ = step(s, {C: turn(tile(1, 3, "GEN>CHU:1"))})  # C keeps
    assert s["blocks"] == [{"cart": 2, "by": C}]
    illegal(s, D, turn(tile(1, 2, "KOE>BRU:1")), "illegal_move")
    s, _ = step(s, {D: GAME.default_order(s, D)})
    assert s["carts"][1]["at"] == "KOE"
    assert s["blocks"] == [] and s["pending"]["kind"] == "wheel"


def test_w_11_lifted_card_frees_cart_2_for_c_and_d() -> None:
    s, _ = step(scene_w11(), {A: {"carts": []}, C: {"carts": [2]}})
    s, _ = play_defaults_until(s, C)
    s, _ = step(s, {C: turn(tile(1, 2, "KOE>BRU:1"), lift=[2])})
    assert s["carts"][1]["at"] == "KOE>BRU:1" and s["blocks"] == []
    s2, _ = play_defaults_until(s, D)
    s2, _ = step(s2, {D: turn(tile(1, 2, "KOE>BRU:2"))})  # D may move it too
    assert s2["carts"][1]["at"] == "KOE>BRU:2"


def test_w_11_card_of_the_first_player_blocks_all_phase_or_not_at_all() -> None:
    s = scene_w11(achsbruch_holder=A)
    s, _ = step(s, {A: {"carts": [2]}})
    # A keeps: blocked for B, C and D as well
    kept, _ = step(s, {A: turn(tile(1, 1, "PAR>REI:1"))})
    for seat in (B, C, D):
        illegal(kept, seat, turn(tile(1, 2, "KOE>BRU:1")), "illegal_move")
        kept, _ = step(kept, {seat: GAME.default_order(kept, seat)})
    assert kept["carts"][1]["at"] == "KOE"
    # A lifts: nobody is ever blocked, A itself may move cart 2
    lifted, _ = step(s, {A: turn(tile(1, 2, "KOE>BRU:1"), lift=[2])})
    assert lifted["blocks"] == [] and lifted["carts"][1]["at"] == "KOE>BRU:1"


def play_defaults_until(s: dict[str, Any], seat: int) -> tuple[dict[str, Any], list[int]]:
    movers = []
    while s["pending"]["seats"] != [seat]:
        mover = s["pending"]["seats"][0]
        movers.append(mover)
        s, _ = step(s, {mover: GAME.default_order(s, mover)})
    return s, movers


def test_w_18_default_movement_order() -> None:
    s = scene(carts={1: ("PAR", True), 2: "KOE", 3: "CHU>STR:1"}, messenger="KOE>BRU:4")
    s["players"][D]["tiles"] = [2, 4]
    open_move(s, D)
    order = GAME.default_order(s, D)
    assert order == {"steps": [{"tile": 2, "cart": 2, "to": "KOE>BRU:2"}]}
    s2, _ = step(s, {D: order})
    assert s2["players"][D]["tiles"] == [4]
    assert at(s2) == ["PAR", "KOE>BRU:2", "CHU>STR:1"]
    assert hand(s2, D) == {}
    # with the messenger on KOE>BRU:2, D gains the first kind of the default ranking left
    s["messenger"] = "KOE>BRU:2"
    s2, _ = step(s, {D: GAME.default_order(s, D)})
    assert hand(s2, D) == {"sozialer_aufstieg": 1}
    give_cards(s, A, "sozialer_aufstieg", 3)
    s2, _ = step(s, {D: GAME.default_order(s, D)})
    assert hand(s2, D) == {"verkauf_mit_bonus": 1}


def test_w_19_tile_cycle_resets_after_round_4() -> None:
    s = scene(seats=2, start=A)
    face_up = []
    for rnd, v in enumerate((3, 1, 4, 2), start=1):
        s["round"], s["start"] = rnd, A
        for number, city in enumerate(("PAR", "KOE", "GEN"), start=1):
            set_cart(s, number, city)
        open_move(s, A)
        end = ends(s, A, 1, v)[0]
        s, _ = step(s, {A: turn(tile(v, 1, end))})
        s, _ = step(s, {B: GAME.default_order(s, B)})
        assert s["pending"]["kind"] == "wheel"
        face_up.append(list(s["players"][A]["tiles"]))
    assert face_up == [[1, 2, 4], [2, 4], [2], [1, 2, 3, 4]]
    assert s["players"][B]["tiles"] == [1, 2, 3, 4]  # B flipped its lowest tile each round
    s["round"] = 5
    open_move(s, A)
    assert choices(s, A)["tiles"] == [1, 2, 3, 4]
