"""Rules tests for Die Händler phases 4 to 6, the game end, cards and variants.

Covers rules H-78 to H-108 of shared/rules/die-haendler.md and the worked examples
W-1, W-2, W-12 to W-17. Every test sets up a real game, edits the plain-JSON state to
the situation of the rule, opens the decision under test and resolves orders through
the real validate/resolve path.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine.core.errors import OptionsError
from engine.core.game import clone
from engine.haendler import flow
from engine.haendler.context import ctx_of, turn_order
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
    open_at,
    put,
    set_cart,
    step,
)

ALL4 = [A, B, C, D]
NONE2: list[str | None] = [None, None]
SONDER = "sonder_verkauf"
VMB = "verkauf_mit_bonus"
AUFSTIEG = "sozialer_aufstieg"


# -- local builders -------------------------------------------------------------------------
def base(seats: int = 4, start: int = 0, **options: Any) -> dict[str, Any]:
    """A fresh game with no special ability cards dealt (tests hand them out)."""
    s = new_game(seats, 1, start, **options)
    for p in s["players"]:
        p["abilities"] = []
    return s


def run_from(s: dict[str, Any], station: str, i: int = 0, **extra: Any) -> tuple[dict[str, Any], list[dict]]:
    """Run the order of play from a flow station (automatic steps) until a decision opens."""
    s = clone(s)
    s["at"] = {"st": station, "i": i, **extra}
    ev: list[dict] = []
    flow.advance(ctx_of(s), s, ev)
    return s, ev


def pending(s: dict[str, Any]) -> tuple[str, list[int]] | None:
    p = s["pending"]
    return None if p is None else (p["kind"], p["seats"])


def wheel(s: dict[str, Any], arrows: dict[int, list[str | None]] | None = None) -> tuple[dict[str, Any], list[dict]]:
    """Open D4-WHEEL for every seat (cursor at D4-KONTOR next) and resolve it."""
    arrows = arrows or {}
    open_at(s, "wheel", turn_order(s), at={"st": "kontor", "i": 0})
    return step(s, {p: {"arrows": arrows.get(p, NONE2)} for p in turn_order(s)})


def open_sales(s: dict[str, Any], seats: list[int]) -> None:
    open_at(s, "sales", seats, at={"st": "bonus", "i": 0})


def open_advance(s: dict[str, Any], seat: int) -> None:
    """D6-ADVANCE for `seat`; the cursor goes on with the seat after it in turn order."""
    open_at(s, "advance", [seat], at={"st": "advance", "i": turn_order(s).index(seat) + 1})


def defaults(s: dict[str, Any], limit: int = 60) -> tuple[dict[str, Any], list[dict]]:
    """Resolve every open decision with its default order until the game is over."""
    evs: list[dict] = []
    for _ in range(limit):
        reqs = GAME.requests(s)
        if not reqs:
            break
        s, ev = step(s, {r.seat: GAME.default_order(s, r.seat) for r in reqs})
        evs += ev
    return s, evs


def finish(s: dict[str, Any]) -> tuple[dict[str, Any], list[dict]]:
    """End the game: last round, last seat's D6-ADVANCE answered with 0 levels."""
    s["last_round"] = True
    last = turn_order(s)[-1]
    open_advance(s, last)
    return step(s, {last: {"levels": 0}})


def load_cart(s: dict[str, Any], number: int, rows: dict[int, list[str]]) -> None:
    """Put goods (taken from the stock) on a cart's rows."""
    for seat, goods in rows.items():
        for g in goods:
            s["stock"][g] -= 1
        s["carts"][number - 1]["rows"][seat] = list(goods)


def money(s: dict[str, Any]) -> list[int]:
    return [p["money"] for p in s["players"]]


def set_money(s: dict[str, Any], *amounts: int) -> None:
    for p, m in zip(s["players"], amounts, strict=False):
        p["money"] = m


# ===========================================================================================
# Phase 4 — D4-WHEEL (H-78, H-79)
# ===========================================================================================
def test_w_1_price_wheel_seeds_example() -> None:
    s = base()
    s["prices"].update(eisen=3, seide=4)
    open_at(s, "wheel", ALL4, at={"st": "kontor", "i": 0})
    reqs = GAME.requests(s)
    assert [r.seat for r in reqs] == ALL4 and all(r.sealed for r in reqs)
    orders = {
        A: {"arrows": ["eisen", None]},
        B: {"arrows": ["eisen", "eisen"]},
        C: {"arrows": ["seide", "eisen"]},
        D: {"arrows": [None, None]},
    }
    s2, ev = step(s, orders)
    rows = ctx_of(s2).board.price_rows
    assert s2["prices"]["eisen"] == 2 and rows[1] == (200, 700)
    assert s2["prices"]["seide"] == 5 and rows[4] == (400, 1000)
    assert all(s2["prices"][g] == 1 for g in ("tuch", "wein", "salz", "nahrung"))
    (votes,) = events_of(ev, "price_votes")
    assert votes["visible_to"] == "all"
    assert votes["votes"] == {"eisen": 4, "seide": 1}
    assert votes["arrows"] == {"0": ["eisen", None], "1": ["eisen", "eisen"], "2": ["seide", "eisen"], "3": NONE2}


def test_h_78_votes_wrap_from_top_row() -> None:
    s = base()
    s["prices"].update(tuch=5, wein=4)
    s2, _ = wheel(s, {A: ["tuch", "wein"], B: [None, "wein"]})
    assert s2["prices"]["tuch"] == 1  # top + 1 -> bottom
    assert s2["prices"]["wein"] == 1  # 4 + 2 -> 6 -> wraps to 1


def test_h_78_eight_votes_wrap_past_top_and_keep_rising() -> None:
    s = base()
    s["prices"]["eisen"] = 3
    s2, _ = wheel(s, {p: ["eisen", "eisen"] for p in ALL4})
    assert s2["prices"]["eisen"] == ((3 - 1 + 8) % 5) + 1 == 1


def test_h_78_both_arrows_on_one_type_count_twice_and_shield_is_no_vote() -> None:
    s = base()
    s2, ev = wheel(s, {C: ["salz", "salz"]})
    assert s2["prices"]["salz"] == 3
    assert events_of(ev, "price_votes")[0]["votes"] == {"salz": 2}


def test_h_78_wheel_order_shape_is_checked() -> None:
    s = base()
    open_at(s, "wheel", ALL4, at={"st": "kontor", "i": 0})
    illegal(s, A, {"arrows": ["shield", None]}, "malformed_order")
    illegal(s, A, {"arrows": ["eisen", None, "wein"]}, "malformed_order")
    illegal(s, A, {"arrows": ["gold", "eisen"]}, "malformed_order")
    assert GAME.default_order(s, B) == {"arrows": NONE2}


def test_h_79_buy_and_sell_move_together() -> None:
    s = base()
    s["players"][A]["abilities"] = ["lagerverkauf"]
    s2, _ = wheel(s, {A: ["wein", "wein"], B: ["wein", None], C: ["nahrung", None]})
    rows = ctx_of(s2).board.price_rows
    assert s2["prices"]["wein"] == 4 and s2["prices"]["nahrung"] == 2
    # the sales window (asked next, A holds Lagerverkauf) quotes the buy price of the same row
    assert pending(s2) == ("sales", [A])
    (req,) = GAME.requests(s2)
    assert req.choices["buy_prices"]["wein"] == rows[3][0] == 300
    assert req.choices["buy_prices"]["nahrung"] == rows[1][0] == 200
    # ... and a delivered good would sell for the sell price of that same row
    assert rows[3][1] == 900 and rows[1][1] == 700


# ===========================================================================================
# D4-KONTOR (H-80)
# ===========================================================================================
def test_w_2_kontor_and_grosses_kontor_after_w_1() -> None:
    s = base()
    s["prices"].update(eisen=3, seide=4)
    s["players"][A]["abilities"] = ["kontor"]
    s["players"][B]["abilities"] = ["grosses_kontor"]
    s, _ = wheel(s, {A: ["eisen", None], B: ["eisen", "eisen"], C: ["seide", "eisen"]})
    assert (s["prices"]["eisen"], s["prices"]["seide"]) == (2, 5)
    assert pending(s) == ("kontor", [A])
    illegal(s, A, {"moves": [{"card": "kontor", "good": "seide", "dir": "up"}]}, "price_limit")
    s, ev = step(s, {A: {"moves": [{"card": "kontor", "good": "eisen", "dir": "down"}]}})
    assert s["prices"]["eisen"] == 1
    assert events_of(ev, "price_adjusted")[0]["visible_to"] == "all"
    assert pending(s) == ("kontor", [B])
    variant = clone(s)
    s, _ = step(s, {B: {"moves": [{"card": "grosses_kontor", "good": "seide", "dir": "up"}]}})
    assert s["prices"]["seide"] == 1
    rows = ctx_of(s).board.price_rows
    assert rows[s["prices"]["eisen"] - 1] == (100, 600) and rows[s["prices"]["seide"] - 1] == (100, 600)
    variant, _ = step(variant, {B: {"moves": [{"card": "grosses_kontor", "good": "eisen", "dir": "down"}]}})
    assert variant["prices"]["eisen"] == 5 and rows[4] == (400, 1000)


def test_h_80_kontor_cannot_move_bottom_row_down_but_moves_one_row() -> None:
    s = base()
    s["players"][C]["abilities"] = ["kontor"]
    s["prices"]["wein"] = 2
    open_at(s, "kontor", [C], at={"st": "kontor", "i": 3})
    illegal(s, C, {"moves": [{"card": "kontor", "good": "tuch", "dir": "down"}]}, "price_limit")
    illegal(s, C, {"moves": [{"card": "grosses_kontor", "good": "tuch", "dir": "up"}]}, "no_such_card")
    illegal(s, C, {"moves": [{"card": "kontor", "good": "wein", "dir": "sideways"}]}, "malformed_order")
    s2, _ = step(s, {C: {"moves": [{"card": "kontor", "good": "wein", "dir": "up"}]}})
    assert s2["prices"]["wein"] == 3
    s3, _ = step(s, {C: {"moves": [{"card": "kontor", "good": "wein", "dir": "down"}]}})
    assert s3["prices"]["wein"] == 1


def test_h_80_holders_asked_in_turn_order_after_the_votes() -> None:
    s = base(start=2)  # turn order C, D, A, B
    s["players"][A]["abilities"] = ["kontor"]
    s["players"][C]["abilities"] = ["grosses_kontor"]
    s, _ = wheel(s, {D: ["tuch", None]})
    assert s["prices"]["tuch"] == 2  # the votes are applied before any adjustment
    assert pending(s) == ("kontor", [C])
    s, _ = step(s, {C: {"moves": [{"card": "grosses_kontor", "good": "tuch", "dir": "up"}]}})
    assert pending(s) == ("kontor", [A])  # D (no card) is skipped; B comes after A
    s, _ = step(s, {A: GAME.default_order(s, A)})  # default: nothing
    assert s["prices"]["tuch"] == 3
    assert pending(s) is None or pending(s)[0] != "kontor"


def test_h_80_holder_of_both_cards_adjusts_once_per_card_in_listed_order() -> None:
    s = base()
    s["players"][A]["abilities"] = ["kontor", "grosses_kontor"]
    s["prices"]["seide"] = 5
    open_at(s, "kontor", [A], at={"st": "kontor", "i": 1})
    # Großes Kontor wraps seide to row 1, then Kontor cannot move it down from the bottom
    wrapped_then_down = [
        {"card": "grosses_kontor", "good": "seide", "dir": "up"},
        {"card": "kontor", "good": "seide", "dir": "down"},
    ]
    illegal(s, A, {"moves": wrapped_then_down}, "price_limit")
    twice = [{"card": "kontor", "good": "wein", "dir": "up"}, {"card": "kontor", "good": "wein", "dir": "up"}]
    illegal(s, A, {"moves": twice}, "no_such_card")
    down_then_up = [
        {"card": "kontor", "good": "seide", "dir": "down"},
        {"card": "grosses_kontor", "good": "wein", "dir": "down"},
    ]
    s2, _ = step(s, {A: {"moves": down_then_up}})
    assert s2["prices"]["seide"] == 4 and s2["prices"]["wein"] == 5


# ===========================================================================================
# D4-SALES (H-81 to H-83)
# ===========================================================================================
def test_h_81_lagerverkauf_sells_up_to_three_at_buy_price() -> None:
    s = base()
    s["players"][A]["abilities"] = ["lagerverkauf"]
    s["prices"].update(wein=4, salz=2, eisen=1)
    put(s, A, "KOE", "wein")
    put(s, A, "KOE", "salz")
    put(s, A, "KOE", "eisen", 2)
    set_money(s, 1000, 1000, 1000, 1000)
    open_sales(s, [A])
    s2, ev = step(s, {A: {"lager": {"city": "KOE", "goods": ["wein", "salz", "eisen"]}}})
    assert money(s2) == [1000 + 300 + 200 + 100, 1000, 1000, 1000]
    assert s2["stores"][A] == {"KOE": {"eisen": 1}}
    assert s2["stock"]["wein"] == s2["stock"]["salz"] == 9 and s2["stock"]["eisen"] == 8
    (sale,) = events_of(ev, "warehouse_sales")
    assert sale["lagerverkauf"] == [{"seat": A, "city": "KOE", "goods": ["wein", "salz", "eisen"], "received": 600}]
    assert s2["players"][A]["abilities"] == ["lagerverkauf"]  # permanent


def test_h_81_lagerverkauf_limits() -> None:
    s = base()
    s["players"][A]["abilities"] = ["lagerverkauf"]
    put(s, A, "KOE", "eisen", 4)
    put(s, A, "GEN", "salz", 1)
    put(s, B, "KOE", "eisen", 1)
    give_cards(s, B, SONDER)
    open_sales(s, [A, B])
    illegal(s, A, {"lager": {"city": "KOE", "goods": ["eisen"] * 4}}, "too_many_goods")
    illegal(s, A, {"lager": {"city": "KOE", "goods": ["eisen", "salz"]}}, "not_in_warehouse")  # one warehouse only
    illegal(s, A, {"lager": {"city": "GEN", "goods": ["salz", "salz"]}}, "not_in_warehouse")
    illegal(s, B, {"lager": {"city": "KOE", "goods": ["eisen"]}}, "no_such_card")  # not the holder
    s2, _ = step(s, {A: {"lager": {"city": "KOE", "goods": ["eisen"] * 3}}, B: {}})
    assert s2["players"][A]["money"] == 4000 + 300 and s2["stores"][A]["KOE"] == {"eisen": 1}


def test_h_81_lagerverkauf_pays_the_price_after_all_changes() -> None:
    s = base()
    s["players"][A]["abilities"] = ["lagerverkauf"]
    s["players"][B]["abilities"] = ["kontor"]
    put(s, A, "AUG", "seide", 1)
    s, _ = wheel(s, {C: ["seide", "seide"], D: ["seide", None]})  # seide row 4 (buy 300)
    s, _ = step(s, {B: {"moves": [{"card": "kontor", "good": "seide", "dir": "up"}]}})  # row 5 (buy 400)
    assert pending(s) == ("sales", [A])
    s, _ = step(s, {A: {"lager": {"city": "AUG", "goods": ["seide"]}}})
    assert s["players"][A]["money"] == 4000 + 400


def test_h_82_sonder_verkauf_sells_for_800_from_any_warehouses_without_bonus() -> None:
    s = base()
    give_cards(s, B, SONDER, 2)
    s["prices"]["tuch"] = 5
    s["bonus"]["KOE"] = 500
    put(s, B, "KOE", "tuch")  # Köln does not produce Tuch: still no bonus
    put(s, B, "GEN", "seide")
    deck = sum(s["deck"].values())
    open_sales(s, [B])
    illegal(s, B, {"sonder": [{"city": "KOE", "good": "tuch"}] * 3}, "no_such_card")
    s2, ev = step(s, {B: {"sonder": [{"city": "KOE", "good": "tuch"}, {"city": "GEN", "good": "seide"}]}})
    assert s2["players"][B]["money"] == 4000 + 1600
    assert s2["players"][B]["hand"] == {} and s2["played"][SONDER] == 2
    assert sum(s2["deck"].values()) == deck  # played cards leave the game
    assert s2["stores"][B] == {} and s2["stock"]["tuch"] == 9 and s2["stock"]["seide"] == 9
    received = [x["received"] for x in events_of(ev, "warehouse_sales")[0]["sonder_verkauf"]]
    assert received == [800, 800]


def test_h_82_goods_named_by_lagerverkauf_and_sonder_verkauf_count_together() -> None:
    s = base()
    s["players"][A]["abilities"] = ["lagerverkauf"]
    give_cards(s, A, SONDER)
    put(s, A, "KOE", "eisen", 2)
    open_sales(s, [A])
    order = {"lager": {"city": "KOE", "goods": ["eisen", "eisen"]}, "sonder": [{"city": "KOE", "good": "eisen"}]}
    illegal(s, A, order, "not_in_warehouse")
    s2, _ = step(s, {A: {"lager": {"city": "KOE", "goods": ["eisen"]}, "sonder": [{"city": "KOE", "good": "eisen"}]}})
    assert s2["players"][A]["money"] == 4000 + 100 + 800 and s2["stores"][A] == {}


def test_h_82_sales_window_asks_lagerverkauf_holder_and_influence_holders() -> None:
    s = base()
    s["players"][A]["abilities"] = ["lagerverkauf"]
    give_cards(s, B, AUFSTIEG)  # not a Sonder-Verkauf, but kinds are hidden: B is asked
    give_cards(s, D, SONDER)
    s2, _ = wheel(s)
    assert pending(s2) == ("sales", [A, B, D])
    assert all(r.sealed for r in GAME.requests(s2))
    assert GAME.default_order(s2, B) == {}
    illegal(s2, B, {"sonder": [{"city": "KOE", "good": "eisen"}]}, "no_such_card")


def test_h_82_sales_window_without_sonder_cards_left_asks_only_lagerverkauf_holder() -> None:
    s = base()
    s["players"][C]["abilities"] = ["lagerverkauf"]
    s["deck"][SONDER] = 0
    s["played"][SONDER] = 3
    give_cards(s, B, VMB)
    s2, _ = wheel(s)
    assert pending(s2) == ("sales", [C])


def test_h_82_sales_window_skipped_when_nobody_is_eligible() -> None:
    s = base()
    s["deck"][SONDER] = 0
    s["played"][SONDER] = 3
    give_cards(s, B, VMB)
    s2, ev = wheel(s)
    assert not events_of(ev, "warehouse_sales")
    assert pending(s2) == ("advance", [A])  # phase 5 and upkeep ran automatically


def test_h_83_lagerverkauf_before_sonder_verkauf_in_turn_order() -> None:
    s = base(start=1)  # turn order B, C, D, A
    s["players"][A]["abilities"] = ["lagerverkauf"]
    give_cards(s, A, SONDER)
    give_cards(s, B, SONDER)
    put(s, A, "BRU", "tuch", 2)
    put(s, B, "PAR", "wein")
    open_sales(s, [B, A])
    s2, ev = step(s, {
        A: {"lager": {"city": "BRU", "goods": ["tuch"]}, "sonder": [{"city": "BRU", "good": "tuch"}]},
        B: {"sonder": [{"city": "PAR", "good": "wein"}]},
    })  # fmt: skip
    (sale,) = events_of(ev, "warehouse_sales")
    assert [x["seat"] for x in sale["lagerverkauf"]] == [A]
    assert [x["seat"] for x in sale["sonder_verkauf"]] == [B, A]
    assert s2["players"][A]["money"] == 4000 + 100 + 800 and s2["players"][B]["money"] == 4800


# ===========================================================================================
# Phase 5 (H-84 to H-90), D5-BONUS, W-16, W-17
# ===========================================================================================
def w16_state() -> dict[str, Any]:
    s = base()
    s["bonus"].update(BRU=200, PAR=0, KOE=400, AUG=300, LYO=500, GEN=100)
    s["prices"].update(eisen=3, wein=2, salz=1)
    set_cart(s, 1, "PAR")
    set_cart(s, 2, "AUG", arrived=True)
    set_cart(s, 3, "KOE", arrived=True)
    load_cart(s, 2, {A: ["eisen"] * 3, B: ["wein", "wein"], C: ["salz", "wein"]})
    load_cart(s, 3, {D: ["seide"]})
    give_cards(s, A, VMB)
    set_money(s, 1000, 1000, 1000, 1000)
    return s


def test_w_16_sale_with_city_bonus_and_verkauf_mit_bonus() -> None:
    s, _ = run_from(w16_state(), "bonus")
    assert pending(s) == ("bonus", [A])  # B, C, D hold no influence card
    assert s["arrivals"] == 2 and money(s) == [1000] * 4  # track first, no sale paid yet
    s2, ev = step(s, {A: {"carts": [2]}})
    assert money(s2) == [1000 + 3300, 1000 + 2000, 1000 + 1900, 1000 + 600 + 400]
    assert all(n == 9 for n in s2["stock"].values())  # the seven goods (and D's) are back
    cart = s2["carts"][1]
    assert cart["at"] == "AUG" and cart["master"] is None and cart["rows"] == [[], [], [], []]
    assert s2["players"][A]["hand"] == {} and s2["played"][VMB] == 1
    assert events_of(ev, "bonus_cards_played")[0]["plays"] == {"0": [2]}
    # without the card A receives 2400
    s3, _ = step(s, {A: {"carts": []}})
    assert s3["players"][A]["money"] == 1000 + 2400 and s3["players"][A]["hand"] == {VMB: 1}


def test_w_17_bonus_update_with_two_arrivals() -> None:
    s, _ = run_from(w16_state(), "bonus")
    s2, ev = step(s, {A: {"carts": []}})
    assert s2["arrivals"] == 2
    sold = events_of(ev, "cart_sold")
    assert [(e["cart"], e["bonus"]) for e in sold] == [(2, 300), (3, 400)]
    assert s2["bonus"] == {"BRU": 400, "PAR": 0, "KOE": 0, "AUG": 0, "LYO": 500, "GEN": 300}


def test_h_84_without_arrivals_only_bonus_update_and_end_check() -> None:
    s = base()
    give_cards(s, A, VMB)
    load_cart(s, 1, {A: ["tuch"]})  # cart 1 stood in Paris all round
    s["arrivals"] = 3
    before = clone(s["bonus"])
    s2, ev = run_from(s, "bonus")
    assert pending(s2) == ("advance", [A])  # no D5-BONUS although A holds a card
    assert not events_of(ev, "arrival_track") and not events_of(ev, "cart_sold")
    assert events_of(ev, "bonus_markers") and s2["bonus"] == before
    assert s2["arrivals"] == 3 and s2["carts"][0]["rows"][A] == ["tuch"] and not s2["last_round"]


def test_h_84_bonus_window_comes_after_the_track_and_before_any_sale() -> None:
    s = base()
    set_cart(s, 1, "AUG", arrived=True)
    load_cart(s, 1, {B: ["wein"]})
    give_cards(s, B, SONDER)  # hand size is public, kinds are not: B is asked
    s2, ev = run_from(s, "bonus")
    assert pending(s2) == ("bonus", [B]) and GAME.requests(s2)[0].sealed
    assert s2["arrivals"] == 1 and events_of(ev, "arrival_track")[0]["position"] == 1
    assert s2["players"][B]["money"] == 4000 and s2["carts"][0]["rows"][B] == ["wein"]
    illegal(s2, B, {"carts": [1]}, "no_such_card")
    s3, _ = step(s2, {B: GAME.default_order(s2, B)})
    assert s3["players"][B]["money"] == 4000 + 600 + 200


def test_h_85_track_moves_per_arrival_and_stops_at_8_for_any_player_count() -> None:
    s = base(seats=2)
    s["arrivals"] = 5
    for n, city in ((1, "BRU"), (2, "AUG"), (3, "LYO")):
        set_cart(s, n, city, arrived=True)
    s2, ev = run_from(s, "bonus")
    assert s2["arrivals"] == 8  # 5 + 3, not capped at the 2-player threshold of 6
    s["arrivals"] = 7
    s3, _ = run_from(s, "bonus")
    assert s3["arrivals"] == 8


def test_h_86_verkauf_mit_bonus_also_covers_types_the_city_produces() -> None:
    s = base()
    s["bonus"]["KOE"] = 300
    set_cart(s, 1, "KOE", arrived=True)
    load_cart(s, 1, {A: ["wein", "wein", "tuch"], B: ["wein"]})
    give_cards(s, A, VMB)
    give_cards(s, B, AUFSTIEG)
    s, _ = run_from(s, "bonus")
    assert pending(s) == ("bonus", [A, B])
    s2, _ = step(s, {A: {"carts": [1]}, B: {"carts": []}})
    assert s2["players"][A]["money"] == 4000 + 3 * (600 + 300)  # bonus once per good
    assert s2["players"][B]["money"] == 4000 + 600  # Köln produces Wein: no bonus for B


def test_h_86_card_must_name_a_different_arrived_cart_with_own_goods() -> None:
    s = base()
    set_cart(s, 1, "KOE", arrived=True)
    set_cart(s, 2, "AUG", arrived=True)
    set_cart(s, 3, "BAS>GEN:1")
    load_cart(s, 1, {A: ["wein"]})
    load_cart(s, 2, {B: ["tuch"]})
    load_cart(s, 3, {A: ["salz"]})
    give_cards(s, A, VMB, 2)
    s, _ = run_from(s, "bonus")
    assert pending(s) == ("bonus", [A])
    illegal(s, A, {"carts": [2]}, "illegal_move")  # arrived, but no goods of A
    illegal(s, A, {"carts": [3]}, "illegal_move")  # A's goods, but not arrived
    illegal(s, A, {"carts": [1, 1]}, "malformed_order")  # R-26: one card per cart


def test_h_86_bonus_window_skipped_when_nobody_qualifies() -> None:
    s = base()
    set_cart(s, 1, "AUG", arrived=True)
    load_cart(s, 1, {A: ["wein"]})  # A has goods but no card
    give_cards(s, B, VMB)  # B has a card but no goods on an arrived cart
    s2, ev = run_from(s, "bonus")
    assert pending(s2) == ("advance", [A]) and not events_of(ev, "bonus_cards_played")
    assert s2["players"][A]["money"] == 4000 + 600 + 200


def test_h_86_bonus_window_skipped_when_all_three_cards_played() -> None:
    s = base()
    set_cart(s, 1, "AUG", arrived=True)
    load_cart(s, 1, {A: ["wein"]})
    give_cards(s, A, SONDER)
    s["deck"][VMB] = 0
    s["played"][VMB] = 3
    s2, _ = run_from(s, "bonus")
    assert pending(s2) == ("advance", [A])


def test_h_87_carts_sold_in_number_order_price_plus_bonus_on_foreign_types() -> None:
    s = base()
    s["prices"].update(tuch=4, salz=5)
    s["bonus"].update(LYO=200, GEN=500)
    set_cart(s, 3, "LYO", arrived=True)
    set_cart(s, 1, "GEN", arrived=True)
    load_cart(s, 3, {C: ["tuch", "wein"]})  # Lyon produces Wein, not Tuch
    load_cart(s, 1, {C: ["salz"], D: ["tuch"]})  # Genua produces Salz, not Tuch
    s2, ev = run_from(s, "bonus")
    assert [e["cart"] for e in events_of(ev, "cart_sold")] == [1, 3]
    assert s2["players"][C]["money"] == 4000 + 1000 + (900 + 200) + 600
    assert s2["players"][D]["money"] == 4000 + 900 + 500
    assert s2["stock"]["tuch"] == 9 and s2["stock"]["salz"] == 9 and s2["stock"]["wein"] == 9


def test_h_88_sold_cart_is_empty_without_master_and_stays_in_its_city() -> None:
    s = base()
    set_cart(s, 2, "BRU", master=D, arrived=True)
    load_cart(s, 2, {D: ["eisen"] * 3})
    s2, _ = run_from(s, "bonus")
    cart = s2["carts"][1]
    assert cart == {"at": "BRU", "master": None, "rows": [[], [], [], []], "arrived": False}
    assert s2["players"][D]["money"] == 4000 + 3 * (600 + 200)


def test_h_89_bonus_markers_reset_where_carts_stand_and_rise_per_arrival_up_to_500() -> None:
    s = base()
    s["bonus"].update(BRU=400, LYO=300, AUG=0)
    set_cart(s, 1, "PAR")  # never left
    set_cart(s, 2, "GEN", arrived=True)
    set_cart(s, 3, "AUG>CHU:1")  # left Augsburg
    s2, _ = run_from(s, "bonus")
    assert s2["bonus"] == {"BRU": 500, "PAR": 0, "KOE": 100, "AUG": 100, "LYO": 400, "GEN": 0}


def test_h_90_threshold_makes_the_last_round_and_phase_6_is_played_in_full() -> None:
    s = base()
    s["arrivals"] = 7
    s["players"][C]["level"] = 3
    set_cart(s, 2, "BRU", arrived=True)
    s, ev = run_from(s, "bonus")
    assert s["last_round"] and events_of(ev, "last_round")[0]["arrivals"] == 8
    assert s["players"][C]["money"] == 4000 - 200  # upkeep still paid
    asked = []
    while not s["over"]:
        (req,) = GAME.requests(s)
        asked.append(req.seat)
        s, ev = step(s, {req.seat: {"levels": 0}})
    assert asked == ALL4 and GAME.result(s) is not None and events_of(ev, "game_over")


# ===========================================================================================
# Phase 6: upkeep, credits, advancement (H-91 to H-97), W-12, W-13
# ===========================================================================================
def test_w_12_upkeep_failure_drop_and_credit() -> None:
    s = base()
    s["players"][B].update(level=7, money=700)
    s["players"][C].update(level=2, money=500)
    s, ev = run_from(s, "upkeep")
    (short,) = events_of(ev, "upkeep_shortfall")
    assert short["visible_to"] == "all" and short["seat"] == B and short["money"] == 700
    assert (short["level"], short["paid"]) == (6, 600)
    assert s["players"][B]["level"] == 6 and s["players"][B]["money"] == 100
    assert pending(s) == ("credit", [B])
    assert s["players"][C]["money"] == 500  # C's upkeep comes after B's credit decision
    s, ev = step(s, {B: {"take": True}})
    assert s["players"][B]["money"] == 2100 and s["players"][B]["credits"] == 1 and s["credit_supply"] == 9
    assert events_of(ev, "credit")[0]["visible_to"] == "all"
    assert s["players"][C]["money"] == 400
    s, _ = step(s, {A: {"levels": 0}})
    assert pending(s) == ("advance", [B])
    illegal(s, B, {"levels": 1}, "has_credit")
    illegal(s, B, {"levels": 1, "repay": 1}, "not_enough_money")
    illegal(s, B, {"levels": 0, "repay": 1}, "not_enough_money")
    s, _ = step(s, {B: {"levels": 0}})
    assert s["players"][B]["level"] == 6 and s["players"][B]["credits"] == 1


def test_w_12_variant_no_money_drops_to_level_1() -> None:
    s = base()
    s["players"][B].update(level=7, money=0)
    s, ev = run_from(s, "upkeep")
    (short,) = events_of(ev, "upkeep_shortfall")
    assert (short["money"], short["level"], short["paid"]) == (0, 1, 0)
    assert s["players"][B]["level"] == 1 and s["players"][B]["money"] == 0
    s, _ = step(s, {B: GAME.default_order(s, B)})  # default: take none
    assert s["players"][B]["credits"] == 0 and s["credit_supply"] == 10 and s["players"][B]["money"] == 0


def test_h_91_drop_to_highest_lower_level_affordable() -> None:
    s = base()
    s["players"][D].update(level=10, money=950)
    s, _ = run_from(s, "upkeep")
    assert s["players"][D]["level"] == 7 and s["players"][D]["money"] == 150  # 800 <= 950 < 1000


def test_h_91_upkeep_paid_in_full_keeps_level_and_reveals_nothing() -> None:
    s = base(start=1)
    s["players"][A].update(level=5, money=400)
    s["players"][C].update(level=9, money=1300)
    s, ev = run_from(s, "upkeep")
    assert not events_of(ev, "upkeep_shortfall")
    assert [e["paid"] for e in events_of(ev, "upkeep")] == [1300, 400]  # turn order B, C, D, A
    assert s["players"][A]["level"] == 5 and s["players"][A]["money"] == 0
    assert s["players"][C]["level"] == 9 and s["players"][C]["money"] == 0
    assert pending(s) == ("advance", [B])  # no D6-CREDIT: nobody dropped


def test_w_13_two_levels_with_one_sozialer_aufstieg() -> None:
    s = base()
    s["arrivals"] = 4
    s["players"][A].update(level=3, money=3500)
    give_cards(s, A, AUFSTIEG)
    deck = sum(s["deck"].values())
    open_advance(s, A)
    assert GAME.requests(s)[0].choices["level_price"] == 1800
    illegal(s, A, {"levels": 2}, "not_enough_money")  # 3600 > 3500
    illegal(s, A, {"levels": 3, "cards": 1}, "too_many_levels")
    s1, _ = step(s, {A: {"levels": 1}})
    assert s1["players"][A]["level"] == 4 and s1["players"][A]["money"] == 1700
    s2, ev = step(s, {A: {"levels": 2, "cards": 1}})
    assert s2["players"][A]["level"] == 5 and s2["players"][A]["money"] == 500
    assert s2["players"][A]["hand"] == {} and s2["played"][AUFSTIEG] == 1 and sum(s2["deck"].values()) == deck
    assert events_of(ev, "advance")[0]["paid"] == 3000
    give_cards(s, A, AUFSTIEG)
    s3, _ = step(s, {A: {"levels": 2, "cards": 2}})
    assert s3["players"][A]["money"] == 3500 - 2400


def test_h_92_level_price_follows_the_arrival_track() -> None:
    for arrivals, price in ((0, 1000), (6, 2300), (8, 3000)):
        s = base()
        s["arrivals"] = arrivals
        s["players"][B]["money"] = 6000
        open_advance(s, B)
        s2, _ = step(s, {B: {"levels": 2}})
        assert s2["players"][B]["money"] == 6000 - 2 * price and s2["players"][B]["level"] == 3


def test_h_92_at_most_two_levels_and_never_above_the_top() -> None:
    s = base()
    s["players"][A].update(level=9, money=9000)
    open_advance(s, A)
    illegal(s, A, {"levels": 2}, "too_many_levels")
    illegal(s, A, {"levels": -1}, "malformed_order")
    s2, _ = step(s, {A: {"levels": 1}})
    assert s2["players"][A]["level"] == 10
    s3 = base()
    s3["players"][B]["money"] = 9000
    open_advance(s3, B)
    illegal(s3, B, {"levels": 3}, "too_many_levels")
    # a seat on the top level is not asked
    s4 = base()
    s4["players"][A]["level"] = 10
    s4, _ = run_from(s4, "advance")
    assert pending(s4) == ("advance", [B])


def test_h_93_card_may_be_used_even_when_the_level_price_is_lower() -> None:
    s = base()
    give_cards(s, C, AUFSTIEG, 1)
    open_advance(s, C)
    illegal(s, C, {"levels": 1, "cards": 2}, "malformed_order")  # one card per level
    illegal(s, C, {"levels": 2, "cards": 2}, "no_such_card")
    s2, _ = step(s, {C: {"levels": 1, "cards": 1}})
    assert s2["players"][C]["money"] == 4000 - 1200 and s2["players"][C]["level"] == 2


def test_h_94_credit_holder_cannot_advance_but_may_repay_first() -> None:
    s = base()
    s["players"][A].update(money=5000, credits=1)
    s["credit_supply"] = 9
    open_advance(s, A)
    illegal(s, A, {"levels": 1}, "has_credit")
    step(s, {A: {"levels": 0}})  # 0 levels is always legal
    s2, ev = step(s, {A: {"levels": 1, "repay": 1}})
    assert s2["players"][A]["credits"] == 0 and s2["credit_supply"] == 10
    assert s2["players"][A]["money"] == 5000 - 2500 - 1000 and s2["players"][A]["level"] == 2
    assert [e["type"] for e in ev][:2] == ["credit_repaid", "advance"]


def test_h_95_credit_only_after_a_drop_and_only_from_the_supply() -> None:
    s = base()
    s, _ = run_from(s, "upkeep")
    assert pending(s) == ("advance", [A])  # nobody dropped: no D6-CREDIT
    illegal(s, A, {"levels": 0, "take": True}, "malformed_order")
    s = base()
    s["credit_supply"] = 0
    s["players"][A].update(level=3, money=100)
    s2, ev = run_from(s, "upkeep")
    assert events_of(ev, "upkeep_shortfall") and pending(s2) == ("advance", [A])  # supply empty: not asked
    open_at(s2, "credit", [A], at={"st": "upkeep", "i": 1})
    illegal(s2, A, {"take": True}, "no_credit_left")


def test_h_95_several_credits_taken_in_different_rounds() -> None:
    s = base(start=3)
    s["players"][B].update(level=4, money=200, credits=1)
    s["credit_supply"] = 9
    s, _ = run_from(s, "upkeep")
    assert pending(s) == ("credit", [B])
    s, _ = step(s, {B: {"take": True}})
    assert s["players"][B]["credits"] == 2 and s["players"][B]["money"] == 200 - 200 + 2000 and s["credit_supply"] == 8
    assert s["players"][B]["level"] == 3


def test_h_96_repay_as_a_free_action_on_any_order() -> None:
    s = base()
    s["players"][A].update(money=6000, credits=2)
    s["credit_supply"] = 8
    open_at(s, "wheel", ALL4, at={"st": "kontor", "i": 0})
    illegal(s, A, {"arrows": NONE2, "repay": 3}, "nothing_to_repay")
    illegal(s, B, {"arrows": NONE2, "repay": 1}, "nothing_to_repay")
    illegal(s, A, {"arrows": NONE2, "repay": -1}, "malformed_order")
    s2, ev = step(s, {A: {"arrows": ["wein", None], "repay": 2}, B: {}, C: {}, D: {}})
    assert s2["players"][A]["money"] == 1000 and s2["players"][A]["credits"] == 0 and s2["credit_supply"] == 10
    (rep,) = events_of(ev, "credit_repaid")
    assert rep["count"] == 2 and rep["visible_to"] == "all"
    s["players"][A]["money"] = 2400
    illegal(s, A, {"arrows": NONE2, "repay": 1}, "not_enough_money")


def test_h_97_credit_holder_ranks_below_every_player_without_credit() -> None:
    s = base(seats=2)
    s["players"][A].update(level=10, money=9000, credits=1)
    s["players"][B].update(level=1, money=0)
    s, _ = finish(s)
    assert [(r["seat"], r["place"]) for r in GAME.result(s)] == [(B, 1), (A, 2)]


# ===========================================================================================
# Game end and ranking (H-98 to H-100), W-14, W-15
# ===========================================================================================
def all_arrive(s: dict[str, Any]) -> None:
    for n, city in ((1, "AUG"), (2, "LYO"), (3, "BRU")):
        set_cart(s, n, city, arrived=True)


def test_w_14_end_trigger_with_overflow_arrivals() -> None:
    s = base()
    s["round"], s["arrivals"] = 9, 6
    all_arrive(s)
    load_cart(s, 1, {A: ["wein"]})
    load_cart(s, 2, {B: ["tuch"]})
    load_cart(s, 3, {C: ["seide"]})
    s, ev = run_from(s, "bonus")
    assert s["arrivals"] == 8 and s["last_round"]
    assert [e["cart"] for e in events_of(ev, "cart_sold")] == [1, 2, 3]
    assert money(s)[:3] == [4000 + 800, 4000 + 800, 4000 + 800]
    assert pending(s) == ("advance", [A]) and GAME.requests(s)[0].choices["level_price"] == 3000
    s, _ = step(s, {A: {"levels": 1}})
    assert s["players"][A]["money"] == 4800 - 3000
    s, ev = defaults(s)
    assert s["over"] and s["round"] == 9 and GAME.requests(s) == []
    assert GAME.result(s)[0]["seat"] == A and events_of(ev, "game_over")


def test_w_14_variant_two_players() -> None:
    s = base(seats=2)
    s["arrivals"] = 5
    set_cart(s, 1, "AUG", arrived=True)
    set_cart(s, 2, "LYO", arrived=True)
    s, _ = run_from(s, "bonus")
    assert s["arrivals"] == 7 and s["last_round"]
    assert GAME.requests(s)[0].choices["level_price"] == 2600


def test_w_14_variant_three_players() -> None:
    s = base(seats=3)
    s["arrivals"] = 6
    set_cart(s, 1, "AUG", arrived=True)
    s, _ = run_from(s, "bonus")
    assert s["arrivals"] == 7 and s["last_round"]
    s, _ = defaults(s)
    assert s["over"]


@pytest.mark.parametrize(
    ("seats", "track", "last"),
    [(2, 4, False), (2, 5, True), (3, 5, False), (3, 6, True), (4, 6, False), (4, 7, True)],
)
def test_h_98_end_threshold_by_player_count(seats: int, track: int, last: bool) -> None:
    s = base(seats=seats)
    s["arrivals"] = track
    set_cart(s, 1, "AUG", arrived=True)
    s, _ = run_from(s, "bonus")
    assert s["last_round"] is last
    s, ev = defaults(s, limit=seats)
    if last:
        assert s["over"] and GAME.result(s) is not None
    else:
        assert not s["over"] and s["round"] == 2 and events_of(ev, "round_started")


def test_w_15_ranking_with_a_credit_holder() -> None:
    s = base()
    for p, (level, cash, credits) in enumerate([(8, 300, 1), (6, 2500, 0), (6, 1800, 0), (5, 4000, 0)]):
        s["players"][p].update(level=level, money=cash, credits=credits)
    end, _ = finish(s)
    assert [(r["seat"], r["place"]) for r in GAME.result(end)] == [(B, 1), (C, 2), (D, 3), (A, 4)]
    assert GAME.result(end)[3] == {"seat": A, "place": 4, "level": 8, "money": 300, "credits": 1, "tiebreak": "credits"}
    assert [r["tiebreak"] for r in GAME.result(end)] == [None, "money", "level", "credits"]


def test_w_15_variant_tie_shares_first_place() -> None:
    s = base()
    for p, (level, cash, credits) in enumerate([(8, 300, 1), (6, 2500, 0), (6, 2500, 0), (5, 4000, 0)]):
        s["players"][p].update(level=level, money=cash, credits=credits)
    end, ev = finish(s)
    places = {r["seat"]: r["place"] for r in GAME.result(end)}
    assert places == {B: 1, C: 1, D: 3, A: 4}
    assert events_of(ev, "game_over")[0]["ranking"] == GAME.result(end)


def test_h_100_credit_holders_ordered_alike_and_credit_count_ignored() -> None:
    s = base()
    for p, (level, cash, credits) in enumerate([(4, 100, 3), (4, 100, 1), (9, 0, 1), (2, 50_000, 0)]):
        s["players"][p].update(level=level, money=cash, credits=credits)
    end, _ = finish(s)
    places = {r["seat"]: r["place"] for r in GAME.result(end)}
    assert places == {D: 1, C: 2, A: 3, B: 3}
    assert GAME.result(s) is None  # no result while the game runs


def test_h_99_money_and_hands_become_public_at_the_end() -> None:
    s = base()
    give_cards(s, A, VMB)
    s["players"][A]["money"] = 1234
    running = GAME.view(s, B)
    assert "money" not in running["players"][A] and "hand" not in running["players"][A]
    assert running["players"][A]["hand_size"] == 1 and "money" in running["players"][B]
    end, ev = finish(s)
    for viewer in (B, "public"):
        v = GAME.view(end, viewer)
        assert v["players"][A]["money"] == 1234 and v["players"][A]["hand"] == {VMB: 1}
    (over,) = events_of(ev, "game_over")
    assert over["visible_to"] == "all" and over["money"]["0"] == 1234 and over["hands"]["0"] == {VMB: 1}
    illegal(end, A, {"levels": 0}, "game_over")


# ===========================================================================================
# Cards (H-101 to H-103)
# ===========================================================================================
def test_h_101_influence_cards_played_only_at_their_times() -> None:
    s = base()
    give_cards(s, A, SONDER)
    give_cards(s, A, VMB)
    put(s, A, "KOE", "eisen")
    open_at(s, "wheel", ALL4, at={"st": "kontor", "i": 0})
    illegal(s, A, {"arrows": NONE2, "sonder": [{"city": "KOE", "good": "eisen"}]}, "malformed_order")
    open_sales(s, [A])
    illegal(s, A, {"carts": [1]}, "malformed_order")  # Verkauf mit Bonus belongs to phase 5
    open_advance(s, A)
    illegal(s, A, {"levels": 1, "cards": 1}, "no_such_card")  # no Sozialer Aufstieg in hand
    illegal(s, A, {"levels": 0, "sonder": []}, "malformed_order")


def test_h_102_any_number_of_cards_in_one_phase_and_no_hand_limit() -> None:
    s = base()
    give_cards(s, D, SONDER, 3)
    give_cards(s, D, VMB, 3)
    give_cards(s, D, AUFSTIEG, 3)
    put(s, D, "LYO", "seide", 3)
    open_sales(s, [D])
    s2, _ = step(s, {D: {"sonder": [{"city": "LYO", "good": "seide"}] * 3}})
    assert s2["players"][D]["money"] == 4000 + 3 * 800
    assert s2["players"][D]["hand"] == {VMB: 3, AUFSTIEG: 3} and GAME.view(s2, A)["players"][D]["hand_size"] == 6


def test_h_102_two_verkauf_mit_bonus_on_two_carts() -> None:
    s = base()
    s["bonus"].update(KOE=200, AUG=400)
    set_cart(s, 1, "KOE", arrived=True)
    set_cart(s, 2, "AUG", arrived=True)
    load_cart(s, 1, {B: ["wein"]})
    load_cart(s, 2, {B: ["eisen"]})
    give_cards(s, B, VMB, 2)
    s, _ = run_from(s, "bonus")
    s2, _ = step(s, {B: {"carts": [1, 2]}})
    assert s2["players"][B]["money"] == 4000 + (600 + 200) + (600 + 400) and s2["played"][VMB] == 2


def test_h_103_ability_cards_are_permanent_used_once_per_step_and_optional() -> None:
    s = base()
    s["players"][A]["abilities"] = ["kontor", "lagerverkauf"]
    open_at(s, "kontor", [A], at={"st": "kontor", "i": 1})
    twice = [{"card": "kontor", "good": "tuch", "dir": "up"}, {"card": "kontor", "good": "wein", "dir": "up"}]
    illegal(s, A, {"moves": twice}, "no_such_card")
    s2, _ = step(s, {A: {"moves": [{"card": "kontor", "good": "tuch", "dir": "up"}]}})
    assert s2["players"][A]["abilities"] == ["kontor", "lagerverkauf"]
    # the next phase 4 it works again; making no adjustment is always legal
    open_at(s2, "kontor", [A], at={"st": "kontor", "i": 1})
    s3, _ = step(s2, {A: {"moves": [{"card": "kontor", "good": "tuch", "dir": "up"}]}})
    assert s3["prices"]["tuch"] == 3
    open_at(s3, "kontor", [A], at={"st": "kontor", "i": 1})
    s4, _ = step(s3, {A: {"moves": []}})
    assert s4["prices"] == s3["prices"]
    # Lagerverkauf: one warehouse, once per phase 4
    put(s4, A, "BRU", "tuch")
    put(s4, A, "PAR", "tuch")
    open_sales(s4, [A])
    illegal(s4, A, {"lager": [{"city": "BRU", "goods": ["tuch"]}, {"city": "PAR", "goods": ["tuch"]}]},
            "malformed_order")  # fmt: skip


# ===========================================================================================
# Variants (H-104 to H-108)
# ===========================================================================================
def test_h_104_light_variant_has_12_influence_cards_and_no_achsbruch() -> None:
    s = base(light=True)
    assert sum(s["deck"].values()) == 12 and "achsbruch" not in s["deck"]
    assert GAME.view(s, A)["deck_size"] == 12
    give_cards(s, B, SONDER)
    s2, _ = run_from(s, "achsbruch")
    assert pending(s2) == ("move", [A])  # D3-ACHSBRUCH never opens
    plain = base()
    give_cards(plain, B, SONDER)
    plain, _ = run_from(plain, "achsbruch")
    assert pending(plain) == ("achsbruch", [B])


def test_h_104_light_variant_tariff_fixed_at_200_and_400() -> None:
    s = base(light=True)
    set_cart(s, 1, "PAR", master=B)
    put(s, B, "PAR", "wein", 3)
    put(s, A, "PAR", "tuch", 2)
    put(s, C, "PAR", "nahrung")
    put(s, C, "PAR", "tuch")
    put(s, D, "PAR", "nahrung", 2)
    give_cards(s, C, "kostenlose_zuladung")
    open_at(s, "master", [B], at={"st": "carts", "i": 0, "sub": "load"}, cart=1)
    assert GAME.requests(s)[0].choices["fixed_tariff"] == [200, 400]
    illegal(s, B, {"load": 3, "good": "wein", "tariffs": {"2": None}}, "tariffs_fixed")
    illegal(s, B, {"load": 3, "good": "wein", "tariffs": {"0": [300, 500]}}, "tariffs_fixed")
    s, _ = step(s, {B: {"load": 3, "good": "wein"}})
    assert s["tariffs"] == {"0": [200, 400], "2": [200, 400], "3": [200, 400]}
    assert pending(s) == ("load", [A, C, D])
    s, _ = step(s, {A: {"goods": ["tuch", "tuch"]}, C: {"goods": ["nahrung", "tuch"], "card": True},
                    D: {"goods": ["nahrung"]}})  # fmt: skip
    assert money(s) == [4000 - 400, 4000 + 600, 4000, 4000 - 200]
    assert s["carts"][0]["rows"] == [["tuch", "tuch"], ["wein"] * 3, ["nahrung", "tuch"], ["nahrung"]]


def test_h_105_transfers_refused_without_the_negotiation_variant() -> None:
    s = base()
    open_at(s, "wheel", ALL4, at={"st": "kontor", "i": 0})
    illegal(s, A, {"arrows": NONE2, "transfers": [{"to": B, "money": 100}]}, "bad_transfer")
    give_cards(s, A, SONDER)
    illegal(s, A, {"arrows": NONE2, "transfers": [{"to": B, "cards": {SONDER: 1}}]}, "bad_transfer")


def test_h_105_no_deal_changes_a_rule() -> None:
    s = base(negotiation=True)
    s["players"][A]["money"] = 500
    open_at(s, "wheel", ALL4, at={"st": "kontor", "i": 0})
    illegal(s, A, {"arrows": NONE2, "transfers": [{"to": B, "money": 600}]}, "not_enough_money")
    illegal(s, A, {"arrows": NONE2, "transfers": [{"to": B, "money": 300}, {"to": C, "money": 300}]},
            "not_enough_money")  # fmt: skip
    s2, _ = step(s, {A: {"arrows": NONE2, "transfers": [{"to": B, "money": 500}]}, B: {}, C: {}, D: {}})
    assert money(s2) == [0, 4500, 4000, 4000]


def test_h_106_transfer_public_amounts_private_card_kinds() -> None:
    s = base(negotiation=True)
    give_cards(s, A, SONDER, 2)
    open_at(s, "wheel", ALL4, at={"st": "kontor", "i": 0})
    s2, ev = step(s, {A: {"arrows": NONE2, "transfers": [{"to": C, "money": 500, "cards": {SONDER: 1}}]},
                      B: {}, C: {}, D: {}})  # fmt: skip
    assert money(s2) == [3500, 4000, 4500, 4000]
    assert s2["players"][A]["hand"] == {SONDER: 1} and s2["players"][C]["hand"] == {SONDER: 1}
    (pub,) = events_of(ev, "transfer")
    assert pub["visible_to"] == "all" and (pub["seat"], pub["to"], pub["money"], pub["cards"]) == (A, C, 500, 1)
    assert SONDER not in str(pub)
    (kinds,) = events_of(ev, "transfer_cards")
    assert kinds["visible_to"] == [A, C] and kinds["cards"] == {SONDER: 1}


def test_h_106_transfer_limits() -> None:
    s = base(negotiation=True)
    s["players"][A]["abilities"] = ["kontor"]
    put(s, A, "KOE", "eisen")
    open_at(s, "wheel", ALL4, at={"st": "kontor", "i": 0})

    def bad(t: dict[str, Any], code: str) -> None:
        illegal(s, A, {"arrows": NONE2, "transfers": [t]}, code)

    bad({"to": B, "money": 150}, "bad_amount")  # steps of 100
    bad({"to": B, "money": -100}, "bad_amount")
    bad({"to": B, "money": 4100}, "not_enough_money")  # up to own money
    bad({"to": A, "money": 100}, "bad_transfer")  # to another seat
    bad({"to": 4, "money": 100}, "bad_transfer")
    bad({"to": B, "cards": {SONDER: 1}}, "no_such_card")  # not in hand
    bad({"to": B, "cards": {"kontor": 1}}, "no_such_card")  # special ability cards stay
    bad({"to": B, "goods": {"KOE": {"eisen": 1}}}, "bad_transfer")  # goods cannot be transferred
    bad({"to": B, "credits": 1}, "bad_transfer")
    bad({"to": B, "tiles": [4]}, "bad_transfer")


def test_h_106_money_received_in_a_window_is_not_usable_in_it() -> None:
    s = base(negotiation=True)
    s["players"][B]["money"] = 300
    open_at(s, "cart_bid", ALL4, at={"st": "carts", "i": 0, "sub": "master"}, cart=1)
    illegal(s, B, {"bid": 400}, "not_enough_money")
    s2, _ = step(s, {A: {"bid": 0, "transfers": [{"to": B, "money": 1000}]}, B: {"bid": 300}, C: {}, D: {}})
    assert s2["carts"][0]["master"] == B and money(s2)[:2] == [3000, 300 + 1000 - 300]
    assert pending(s2) == ("master", [B])
    # in the next (sequential) decision the money is B's to use
    assert GAME.requests(s2)[0].seat == B


def test_h_106_cards_received_in_a_window_are_not_usable_in_it() -> None:
    s = base(negotiation=True)
    give_cards(s, A, SONDER)
    give_cards(s, C, AUFSTIEG)
    put(s, C, "GEN", "salz")
    open_sales(s, [A, C])
    illegal(s, C, {"sonder": [{"city": "GEN", "good": "salz"}]}, "no_such_card")
    # a card given away cannot be played by the giver either
    put(s, A, "GEN", "salz")
    illegal(s, A, {"sonder": [{"city": "GEN", "good": "salz"}], "transfers": [{"to": C, "cards": {SONDER: 1}}]},
            "no_such_card")  # fmt: skip
    s2, _ = step(s, {A: {"transfers": [{"to": C, "cards": {SONDER: 1}}]}, C: {}})
    assert s2["players"][C]["hand"] == {AUFSTIEG: 1, SONDER: 1} and s2["players"][C]["money"] == 4000


def test_h_107_tariffs_stay_binding_side_payments_by_transfer() -> None:
    s = base(negotiation=True)
    set_cart(s, 1, "PAR", master=B)
    load_cart(s, 1, {B: ["wein"]})
    s["tariffs"] = {"0": None, "2": None, "3": [200, 400]}
    put(s, A, "PAR", "tuch")
    put(s, D, "PAR", "nahrung")
    give_cards(s, A, SONDER)  # A holds a card, so A is asked although refused
    open_at(s, "load", [A, D], at={"st": "carts", "i": 1, "sub": "bid"}, cart=1)
    illegal(s, A, {"goods": ["tuch"], "transfers": [{"to": B, "money": 1000}]}, "refused")
    s2, ev = step(s, {A: {"goods": []}, D: {"goods": ["nahrung"], "transfers": [{"to": B, "money": 100}]}})
    assert money(s2) == [4000, 4000 + 200 + 100, 4000, 4000 - 300]
    assert s2["carts"][0]["rows"][D] == ["nahrung"] and s2["carts"][0]["rows"][A] == []


def test_h_108_start_cities_place_carts_and_bonus_markers() -> None:
    s = base(start_cities=["BRU", "LYO", "AUG"], messenger_start="REI>BAS:1")
    assert [c["at"] for c in s["carts"]] == ["BRU", "LYO", "AUG"]
    assert all(c["master"] is None and c["rows"] == [[], [], [], []] for c in s["carts"])
    assert s["bonus"] == {"BRU": 0, "PAR": 200, "KOE": 200, "AUG": 0, "LYO": 0, "GEN": 200}
    assert s["messenger"] == "REI>BAS:1"
    s2 = base(start_cities=["GEN", "KOE", "PAR"])
    assert [c["at"] for c in s2["carts"]] == ["GEN", "KOE", "PAR"]
    assert s2["messenger"] == "KOE>BRU:3"  # the board file's start space
    plain = base()
    assert [c["at"] for c in plain["carts"]] == ["PAR", "KOE", "GEN"]
    assert plain["bonus"] == {"BRU": 200, "PAR": 0, "KOE": 0, "AUG": 200, "LYO": 200, "GEN": 0}


@pytest.mark.parametrize(
    "options",
    [
        {"start_cities": ["BRU", "BRU", "AUG"]},
        {"start_cities": ["BRU", "LYO"]},
        {"start_cities": ["BRU", "LYO", "AUG", "PAR"]},
        {"start_cities": ["BRU", "LYO", "ROM"]},
        {"start_cities": ["BRU", "LYO", "REI"]},
        {"start_cities": ["BRU", "LYO", "KOE>BRU:1"]},
        {"start_cities": "BRU"},
        {"messenger_start": "BRU"},
        {"messenger_start": "NOWHERE"},
    ],
)
def test_h_108_bad_start_options_refused(options: dict[str, Any]) -> None:
    with pytest.raises(OptionsError):
        new_game(4, 1, 0, **options)
