"""Die Händler's decisions in the player's words and clicks (`Game.prompt`, engine.core.choices).

Each test sets up a real game (seed 3, three seats: seat 0 holds Günstiger Einkauf and
Kontor, seat 1 Großes Kontor and Wagnerei, seat 2 Große Wagnerei and Kurier; carts in
Paris, Köln and Genua; the messenger on space 3 of the road Köln→Brügge), opens the
decision under test and pins what the prompt offers, what the picks make, and that the
order passes the one legality path (`validate`). Tests are named after the rule they pin.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from engine.core import IllegalOrder
from engine.core.choices import Ask, Prompt, read_words
from engine.haendler.graph import messenger_ends
from engine.haendler.picture import cart_id, good_id, place_id
from tests.engine.haendler.helpers import GAME, A, B, C, ctx, give_cards, new_game, open_at, open_move, put, set_cart

SVG = "{http://www.w3.org/2000/svg}"


def game(**options: Any) -> dict[str, Any]:
    s = new_game(3, seed=3, **options)
    assert [p["abilities"] for p in s["players"]] == [
        ["guenstiger_einkauf", "kontor"], ["grosses_kontor", "wagnerei"], ["grosse_wagnerei", "kurier"]]
    assert [c["at"] for c in s["carts"]] == ["PAR", "KOE", "GEN"] and s["messenger"] == "KOE>BRU:3"
    return s


def prompt(s: dict[str, Any], seat: int, *picks: Any) -> Prompt:
    p = GAME.prompt(s, seat, list(picks))
    assert p is not None
    return p


def values(ask: Ask | None) -> list[Any]:
    assert ask is not None
    return [o.value for o in ask.options]


def labels(ask: Ask | None) -> list[str]:
    assert ask is not None
    return [o.label for o in ask.options]


def done(s: dict[str, Any], seat: int, *picks: Any) -> Prompt:
    """The prompt after `picks`, which must make an order `validate` accepts."""
    p = prompt(s, seat, *picks)
    assert p.order is not None, p
    GAME.validate(s, seat, p.order)
    return p


def words(s: dict[str, Any], seat: int, text: str) -> Prompt:
    return read_words(text, lambda picks: prompt(s, seat, *picks))


def refused(s: dict[str, Any], seat: int, *picks: Any) -> None:
    before = json.dumps(s, sort_keys=True)
    with pytest.raises(IllegalOrder) as exc:
        GAME.prompt(s, seat, list(picks))
    assert exc.value.code == "bad_pick"
    assert json.dumps(s, sort_keys=True) == before


# -- moving carts (H-58 to H-73) --------------------------------------------------------------
def test_h_63_the_move_prompt_offers_exactly_the_engines_legal_ends_of_a_cart() -> None:
    s = game()
    open_move(s, A)
    first = prompt(s, A)
    assert labels(first.ask) == ["cart 1 in Paris", "cart 2 in Köln", "cart 3 in Genua"]
    assert [o.place for o in first.ask.options] == ["cart-1", "cart-2", "cart-3"]  # type: ignore[union-attr]
    assert first.order is None  # a movement turn must flip a tile (H-58)
    ends = prompt(s, A, 2).ask
    assert values(ends) == ["KOE>BRU:1", "KOE>AUG:1", "KOE>BRU:2", "KOE>AUG:2",
                            "KOE>BRU:3", "KOE>AUG:3", "KOE>BRU:4", "KOE>AUG:4"]
    legal = GAME.requests(s)[0].choices["carts"][1]["ends"]  # the engine's ends by move value
    assert set(values(ends)) == {e for v in ("1", "2", "3", "4") for e in legal[v]}
    assert labels(ends)[4:6] == ["3 spaces toward Brügge", "3 spaces toward Augsburg"]
    assert [o.place for o in ends.options][:2] == ["space-KOE-BRU-1", "space-KOE-AUG-1"]  # type: ignore[union-attr]


def test_h_64_a_completed_move_prompt_makes_the_order_validate_accepts() -> None:
    s = game()
    open_move(s, A)
    p = done(s, A, 2, "KOE>BRU:3")
    assert p.order == {"steps": [{"tile": 3, "cart": 2, "to": "KOE>BRU:3"}]}
    assert p.sentence == "Flip tile 3 and move cart 2 from Köln 3 spaces toward Brügge"
    assert p.chosen == ("cart 2 in Köln", "3 spaces toward Brügge")


def test_h_63_a_pick_not_offered_is_refused_with_bad_pick_and_changes_nothing() -> None:
    s = game()
    open_move(s, A)
    refused(s, A, 2, "KOE>BRU:5")  # no such space
    refused(s, A, 2, "BRU")  # four spaces do not reach Brügge
    refused(s, A, "2")  # a cart is picked by its number, not by text
    refused(s, A, "forfeit:3")  # tile 3 moves a cart, so it cannot be forfeited (H-65)
    refused(s, A, 2, "KOE>BRU:3", "zzz")
    with pytest.raises(IllegalOrder) as exc:
        GAME.prompt(s, B, [])
    assert exc.value.code == "not_your_turn"


def test_h_72_h_73_a_move_onto_the_messenger_offers_the_choice_of_the_card_gained() -> None:
    s = game()
    open_move(s, A)
    assert prompt(s, A, 2, "KOE>BRU:4").ask is None  # no card gained, nothing more to do
    after = prompt(s, A, 2, "KOE>BRU:3")  # ends on the messenger: one card gained
    assert "prefer" in values(after.ask)
    kinds = prompt(s, A, 2, "KOE>BRU:3", "prefer").ask
    assert labels(kinds) == ["Sozialer Aufstieg", "Verkauf mit Bonus", "Sonder-Verkauf", "Kostenlose Zuladung",
                             "Achsbruch"]
    p = done(s, A, 2, "KOE>BRU:3", "prefer", "achsbruch", "sonder_verkauf", "done")
    assert p.order == {"steps": [{"tile": 3, "cart": 2, "to": "KOE>BRU:3"}], "prefer": ["achsbruch", "sonder_verkauf"]}
    assert p.sentence.endswith("if you gain a card, take Achsbruch and Sonder-Verkauf first, in that order")


def test_h_65_a_tile_that_moves_no_cart_is_offered_only_as_a_forfeit() -> None:
    s = game()
    for n, at in ((1, "PAR"), (2, "KOE"), (3, "GEN")):
        set_cart(s, n, at, arrived=True)  # arrived carts cannot move (H-68)
    open_move(s, A)
    first = prompt(s, A)
    assert values(first.ask) == ["forfeit:1", "forfeit:2", "forfeit:3", "forfeit:4"]
    assert labels(first.ask)[1] == "Flip tile 2 without moving (it can move no cart)"
    p = done(s, A, "forfeit:2")
    assert p.order == {"steps": [{"tile": 2, "forfeit": True}]}
    assert p.sentence == "Flip tile 2 without moving a cart"


def test_h_59_own_achsbruch_is_lifted_before_any_move() -> None:
    s = game()
    s["blocks"] = [{"cart": 2, "by": A}]
    open_move(s, A)
    first = values(prompt(s, A).ask)
    assert first == ["lift:2", 1, 3]  # cart 2 is blocked until lifted
    assert values(prompt(s, A, "lift:2").ask) == [1, 2, 3]
    p = done(s, A, "lift:2", 2, "KOE>AUG:2")
    assert p.order == {"steps": [{"tile": 2, "cart": 2, "to": "KOE>AUG:2"}], "lift": [2]}
    assert p.sentence == ("Lift your Achsbruch from cart 2; flip tile 2 and move cart 2 from Köln 2 spaces toward "
                          "Augsburg")
    refused(s, A, 1, "PAR>REI:1", "lift:2")  # lifting comes first (H-59)


def test_h_69_wagnerei_points_join_the_tile_move_or_move_another_cart() -> None:
    s = game()
    set_cart(s, 2, "KOE>BRU:2")
    open_move(s, B)  # Wagnerei: 1 point
    ends = prompt(s, B, 2).ask
    assert values(ends) == ["KOE>BRU:3", "KOE>BRU:4", "BRU"]
    assert ends.options[2].hint == "Brügge: tile 3, tile 4 or tile 2 and 1 Wagnerei point"  # type: ignore[union-attr]
    # into Brügge three ways: the order is complete with the first (no points, lowest tile)
    p = done(s, B, 2, "BRU")
    assert p.order == {"steps": [{"tile": 3, "cart": 2, "to": "BRU"}]}
    assert values(p.ask)[:3] == ["3+0", "4+0", "2+1"]
    p = done(s, B, 2, "BRU", "2+1")
    assert p.order == {"steps": [{"tile": 2, "cart": 2, "to": "BRU", "points": 1}]}
    assert p.sentence == ("Flip tile 2 and move cart 2 from space 2 of 4 on the road Köln→Brügge into Brügge "
                          "with 1 Wagnerei point")
    # the point left after a plain tile move goes into a separate move of another cart
    after = prompt(s, B, 2, "BRU", "3+0")
    assert labels(after.ask)[:2] == ["Move cart 1 in Paris with Wagnerei points",
                                     "Move cart 3 in Genua with Wagnerei points"]
    p = done(s, B, 2, "BRU", "3+0", 3, "GEN>CHU:1")
    assert p.order == {"steps": [{"tile": 3, "cart": 2, "to": "BRU"}, {"cart": 3, "points": 1, "to": "GEN>CHU:1"}]}
    refused(s, B, 2, "BRU", "3+0", 2)  # no cart moves twice in a turn (H-70)


def test_h_71_the_messenger_moves_to_the_spaces_its_card_allows() -> None:
    s = game()
    open_move(s, C)  # Kurier: exactly 1 space, either way along the road
    first = prompt(s, C)
    assert "messenger:kurier" in values(first.ask)
    spots = prompt(s, C, "messenger:kurier").ask
    assert values(spots) == messenger_ends(ctx(s).board, "KOE>BRU:3", (1,)) == ["KOE>BRU:4", "KOE>BRU:2"]
    assert labels(spots) == ["road Köln→Brügge, space 4 of 4", "road Köln→Brügge, space 2 of 4"]
    p = done(s, C, "messenger:kurier", "KOE>BRU:2", 1, "PAR>REI:1")
    assert p.order == {"steps": [{"messenger": "kurier", "to": "KOE>BRU:2"}, {"tile": 1, "cart": 1, "to": "PAR>REI:1"}]}


def test_move_words_cart_2_to_bruegge() -> None:
    s = game()
    set_cart(s, 2, "KOE>BRU:2")
    open_move(s, A)
    for text in ("cart 2 to Brügge", "Cart 2 to Bruegge", "2\nbrugge"):
        p = words(s, A, text)
        assert p.order == {"steps": [{"tile": 3, "cart": 2, "to": "BRU"}]}, text
    assert words(s, A, "cart 2 to Brügge with tile 4").order == {"steps": [{"tile": 4, "cart": 2, "to": "BRU"}]}
    assert words(s, A, "cart 1 to Reims").order == {"steps": [{"tile": 3, "cart": 1, "to": "REI"}]}
    stuck = words(s, A, "cart 2 to Lyon")  # Lyon is no end of cart 2: the end is still to be picked
    assert stuck.picks == (2,) and stuck.order is None and stuck.ask is not None and stuck.ask.key == "to"
    with pytest.raises(IllegalOrder) as exc:
        words(s, A, "cart 5 to Brügge")
    assert exc.value.code == "bad_pick"


def test_every_place_a_move_prompt_names_is_a_titled_element_of_the_picture() -> None:
    s = game()
    s["blocks"] = [{"cart": 2, "by": C}]
    open_move(s, C)
    svg = GAME.picture(GAME.view(s, C), ["Ann", "Bob", "Cy"])
    root = ET.fromstring(svg)
    titled = {el.get("id"): "".join(el.find(f"{SVG}title").itertext())  # type: ignore[union-attr]
              for el in root.iter() if el.get("id") and el.find(f"{SVG}title") is not None}
    places = set()
    for picks in ([], [1], [3], ["messenger:kurier"], [1, "PAR>REI:2"]):
        p = prompt(s, C, *picks)
        places |= {o.place for o in p.ask.options if o.place}  # type: ignore[union-attr]
    assert {"cart-1", "cart-3", "messenger", "space-PAR-REI-1", "place-REI", "space-KOE-BRU-2"} <= places
    assert places <= set(titled)
    assert titled["space-KOE-BRU-2"] == "road Köln→Brügge, space 2 of 4"
    assert titled["place-REI"] == "Reims (junction)"
    assert titled[cart_id(1)].startswith("Cart 1 at Paris")
    assert re.fullmatch(r"[A-Za-z0-9-]+", place_id("KOE>BRU:2")) and place_id("KOE>BRU:2") == "space-KOE-BRU-2"


# -- buying (H-41 to H-43) ------------------------------------------------------------------------
def test_h_41_buy_1_wein_in_lyon() -> None:
    s = game()
    assert s["pending"] == {"kind": "buy", "seats": [A], "sealed": False}
    first = prompt(s, A)
    assert first.order == {"goods": []}  # buying nothing is an order
    assert values(first.ask) == ["tuch", "wein", "salz", "nahrung", "eisen", "seide", "done"]
    assert first.ask.options[1].place == good_id("wein") == "good-wein"  # type: ignore[union-attr]
    assert labels(prompt(s, A, "wein", 1).ask) == ["Paris", "Köln", "Lyon"]  # the cities making Wein
    p = words(s, A, "Buy 1 Wein in Lyon")
    assert p.order == {"goods": [{"good": "wein", "city": "LYO"}]}
    assert p.sentence == "Buy 1 Wein in Lyon for 100"  # Günstiger Einkauf: 100 for the step (H-42)
    p = words(s, A, "buy 1 Tuch in Brugge\nBuy 2 salz in koeln")
    assert p.order == {"goods": [{"good": "tuch", "city": "BRU"}, {"good": "salz", "city": "KOE"},
                                 {"good": "salz", "city": "KOE"}]}
    assert words(s, A, "nothing").order == {"goods": []}
    refused(s, A, "wein", 1, "BRU")  # Brügge does not make Wein
    refused(s, A, "wein", 4)  # at most 3 goods a step


def test_h_43_the_count_is_bounded_by_stock_money_and_the_three_goods_of_a_step() -> None:
    s = game()
    open_at(s, "buy", [B])
    s["players"][B]["money"] = 200
    s["stock"] = {**s["stock"], "salz": 1}
    ask = prompt(s, B, "wein").ask
    assert ask is not None and ask.number is not None and (ask.number.min, ask.number.max) == (1, 2)
    assert prompt(s, B, "salz").ask.key == "city"  # type: ignore[union-attr]  # one in stock: no count asked
    assert "salz" not in values(prompt(s, B, "salz", "BRU").ask)
    assert prompt(s, B, "wein", 2, "LYO").ask is None  # the money is spent


# -- phase 2 (H-46 to H-55) ---------------------------------------------------------------------
def phase2(kind: str, seats: list[int], **options: Any) -> dict[str, Any]:
    s = game(**options)
    put(s, A, "PAR", "nahrung", 2)
    put(s, B, "PAR", "wein", 2)
    open_at(s, kind, seats, cart=1)
    return s


def test_h_47_the_cart_bid_is_a_number_from_0_to_your_money_in_steps_of_100() -> None:
    s = phase2("cart_bid", [A, B, C])
    ask = prompt(s, B).ask
    assert ask is not None and ask.number is not None
    n = ask.number
    assert (n.min, n.max, n.step, [o.label for o in n.named]) == (0, 4000, 100, ["no bid"])
    assert done(s, B, 300).order == {"bid": 300}
    assert words(s, B, "no bid").order == {"bid": 0}
    assert words(s, B, "bid 700").sentence == "Bid 700 for cart 1 in Paris"
    refused(s, B, 250)
    refused(s, B, 4100)


def test_h_52_the_tariff_is_two_numbers_with_the_rules_bounds() -> None:
    s = phase2("master", [A])
    s["carts"][0]["master"] = A
    first = prompt(s, A)
    assert labels(first.ask) == ["Nahrung (up to 2)", "Load nothing"]
    after = prompt(s, A, "nahrung", 2)
    assert after.order == {"load": 2, "good": "nahrung", "tariffs": {"1": None, "2": None}}  # left out: refused
    assert labels(after.ask) == ["Offer the yellow player a tariff", "Refuse the yellow player"]
    sheet = prompt(s, A, "nahrung", 2, "offer").ask
    assert sheet is not None and sheet.kind == "sheet"
    assert [(n.label, n.min, n.max, n.step) for n in sheet.sheet] == [
        ("1 good", 0, 1500, 100), ("2 goods", 0, 3000, 100)]  # the most the goods could fetch: 1,000 + 500 each
    p = done(s, A, "nahrung", 2, "offer", {"one": 300, "two": 500}, "refuse")
    assert p.order == {"load": 2, "good": "nahrung", "tariffs": {"1": [300, 500], "2": None}}
    assert p.sentence == ("Load 2 Nahrung onto cart 1 in Paris; offer the yellow player 300 for 1, 500 for 2; "
                          "refuse the orange player")
    assert words(s, A, "Nahrung\n2\noffer yellow\n1 good 300, 2 goods 500\nrefuse").order == p.order
    refused(s, A, "nahrung", 2, "offer", {"one": 350, "two": 500})
    refused(s, A, "nahrung", 2, "offer", {"one": 300})


def test_h_104_in_the_light_variant_the_master_sets_no_tariff() -> None:
    s = phase2("master", [A], light=True)
    s["carts"][0]["master"] = A
    p = done(s, A, "done")
    assert p.order == {"load": 0} and p.ask is None
    assert p.sentence == "Load nothing onto cart 1 in Paris (tariffs are fixed at 200 / 400)"


def test_h_54_a_loader_with_a_tariff_and_kostenlose_zuladung_chooses_how_to_pay() -> None:
    s = phase2("load", [B])
    s["carts"][0]["master"] = A
    s["tariffs"] = {"1": [300, 500], "2": None}
    assert labels(prompt(s, B).ask) == ["Wein (2 in your warehouse)", "Load nothing"]
    assert done(s, B, "wein", 2).order == {"goods": ["wein", "wein"]}  # only the tariff: no question
    give_cards(s, B, "kostenlose_zuladung")
    p = prompt(s, B, "wein", 2)
    assert p.order == {"goods": ["wein", "wein"]} and values(p.ask) == ["tariff", "card"]
    assert labels(p.ask)[0] == "Pay the tariff, 500"
    p = done(s, B, "wein", 2, "card")
    assert p.order == {"goods": ["wein", "wein"], "card": True}
    assert p.sentence == "Load 2 Wein onto cart 1 in Paris, playing Kostenlose Zuladung"
    s["tariffs"] = {"1": None, "2": None}  # refused: only the card loads
    assert done(s, B, "wein", 1).order == {"goods": ["wein"], "card": True}


# -- phases 3 to 6 --------------------------------------------------------------------------------
def test_h_57_achsbruch_cards_go_on_carts_one_per_card() -> None:
    s = game()
    give_cards(s, B, "achsbruch", 2)
    open_at(s, "achsbruch", [B])
    first = prompt(s, B)
    assert first.order == {"carts": []} and values(first.ask) == [1, 2, 3, "done"]
    p = done(s, B, 2, 2)
    assert p.order == {"carts": [2, 2]} and p.ask is None
    refused(s, B, 2, 2, 1)  # two cards only


def test_h_78_the_wheel_is_two_arrows_at_goods_or_the_shield() -> None:
    s = game()
    open_at(s, "wheel", [A, B, C])
    assert prompt(s, A).order is None
    assert words(s, A, "Eisen\nshield").order == {"arrows": ["eisen", None]}
    p = done(s, A, "seide", "seide")
    assert p.order == {"arrows": ["seide", "seide"]} and p.sentence == "Vote twice for Seide"
    assert words(s, A, "Eisen").order == {"arrows": ["eisen", None]}


def test_h_80_kontor_cannot_push_a_price_past_the_top_row() -> None:
    s = game()
    s["prices"] = {**s["prices"], "seide": 5}
    open_at(s, "kontor", [A])
    assert values(prompt(s, A, "seide").ask) == ["down"]
    open_at(s, "kontor", [B])  # Großes Kontor wraps
    assert values(prompt(s, B, "seide").ask) == ["up", "down"]
    p = done(s, B, "seide", "up")
    assert p.order == {"moves": [{"card": "grosses_kontor", "good": "seide", "dir": "up"}]}
    assert p.sentence == "With Großes Kontor move Seide one row up, from row 5 to row 1"


def test_h_81_h_82_warehouse_sales() -> None:
    s = game()
    put(s, A, "KOE", "wein", 2)
    put(s, A, "PAR", "tuch", 1)
    s["players"][A]["abilities"] = ["lagerverkauf"]
    give_cards(s, A, "sonder_verkauf")
    open_at(s, "sales", [A])
    assert values(prompt(s, A).ask) == ["lager", "sonder", "done"]
    p = words(s, A, "Lagerverkauf Köln 2 Wein\nSonder-Verkauf Tuch in Paris")
    assert p.order == {"lager": {"city": "KOE", "goods": ["wein", "wein"]}, "sonder": [{"city": "PAR", "good": "tuch"}]}
    GAME.validate(s, A, p.order)
    assert p.sentence == ("Sell 2 Wein from your warehouse in Köln with Lagerverkauf; sell Tuch from Paris with "
                          "Sonder-Verkauf for 800 each")


def test_h_86_verkauf_mit_bonus_on_arrived_carts_with_your_goods() -> None:
    s = game()
    give_cards(s, B, "verkauf_mit_bonus", 2)
    set_cart(s, 2, "BRU", arrived=True)
    s["carts"][1]["rows"] = [[], ["wein"], []]
    open_at(s, "bonus", [B])
    assert values(prompt(s, B).ask) == [2, "done"]
    assert done(s, B, 2).order == {"carts": [2]}


def test_h_95_a_credit_is_taken_or_not() -> None:
    s = game()
    open_at(s, "credit", [A])
    assert labels(prompt(s, A).ask) == ["Take a credit (+2,000)", "No credit"]
    assert done(s, A, "take").order == {"take": True}
    assert words(s, A, "no").order == {"take": False}


def test_h_94_a_seat_holding_a_credit_advances_only_by_repaying_it_in_the_same_order() -> None:
    s = game()
    s["players"][A].update(credits=1, money=4000)
    open_at(s, "advance", [A])
    assert labels(prompt(s, A).ask) == ["No level", "1 level, to level 2 Händler (1,000), repaying your 1 credit first"]
    p = done(s, A, 1)
    assert p.order == {"levels": 1, "repay": 1}
    assert p.sentence == "Buy 1 level, to level 2 Händler, for 1,000, after repaying 1 credit (2,500)"
    s["players"][A].update(money=3400)  # not enough to repay and buy a level
    assert labels(prompt(s, A).ask) == ["No level"]


def test_h_93_sozialer_aufstieg_makes_a_level_cost_1200() -> None:
    s = game()  # W-13: arrival track 4 (a level costs 1,800), level 3, 3,500 and one card
    s["arrivals"] = 4
    s["players"][A].update(level=3, money=3500)
    give_cards(s, A, "sozialer_aufstieg")
    open_at(s, "advance", [A])
    assert values(prompt(s, A).ask) == [0, 1, 2]
    assert labels(prompt(s, A, 2).ask) == ["1 Sozialer Aufstieg card, 3,000 in all"]  # 3,600 without: too much
    assert labels(prompt(s, A, 1).ask) == ["None, 1,800 in all", "1 Sozialer Aufstieg card, 1,200 in all"]
    p = done(s, A, 2, 1)
    assert p.order == {"levels": 2, "cards": 1}
    assert p.sentence == "Buy 2 levels, to level 5 Fernhändler, for 3,000, playing 1 Sozialer Aufstieg card"


def test_h_34_the_ability_auction_names_a_card_then_raises_or_passes() -> None:
    s = new_game(3, seed=3, abilities="auction")
    seat = s["pending"]["seats"][0]
    assert s["pending"]["kind"] == "name_card"
    first = prompt(s, seat)
    assert labels(first.ask)[:2] == ["Günstiger Einkauf (opens at 600)", "Wagnerei (opens at 200)"]
    p = done(s, seat, "wagnerei")
    assert p.order == {"card": "wagnerei"} and p.sentence == "Put Wagnerei up for auction at 200"
    s2, _ = GAME.step(s, {seat: p.order})
    bidder = s2["pending"]["seats"][0]
    n = prompt(s2, bidder).ask.number  # type: ignore[union-attr]
    assert n is not None and (n.min, n.step, [o.value for o in n.named]) == (300, 100, ["pass"])
    assert words(s2, bidder, "pass").order == {"pass": True}
    assert done(s2, bidder, 500).order == {"bid": 500}


# -- free actions (H-22, H-96, H-106) -----------------------------------------------------------------
def extras(p: Prompt) -> list[Any]:
    return [v for v in values(p.ask) if isinstance(v, str) and v.startswith("+")] if p.ask and p.ask.options else []


def test_h_96_repay_credits_is_offered_only_to_a_seat_holding_credits() -> None:
    s = game()
    open_at(s, "wheel", [A, B, C])
    assert extras(prompt(s, A, "eisen")) == []
    s["players"][A].update(credits=2, money=6000)
    assert extras(prompt(s, A, "eisen")) == ["+repay"]
    n = prompt(s, A, "eisen", "shield", "+repay").ask.number  # type: ignore[union-attr]
    assert n is not None and (n.min, n.max) == (1, 2)
    p = done(s, A, "eisen", "shield", "+repay", 2)
    assert p.order == {"arrows": ["eisen", None], "repay": 2}
    assert p.sentence == "Vote for Eisen and point the other arrow at your shield; repay 2 credits (5,000)"
    s["players"][A]["money"] = 3000  # one repayment only
    assert prompt(s, A, "eisen", "shield", "+repay").ask.number.max == 1  # type: ignore[union-attr]
    s["players"][A]["money"] = 2400  # none
    assert extras(prompt(s, A, "eisen")) == []


def test_h_22_a_free_action_keeps_the_whole_order_legal() -> None:
    s = game()
    open_at(s, "buy", [B])
    s["players"][B].update(credits=1, money=2600)
    assert extras(prompt(s, B)) == ["+repay"]
    assert extras(prompt(s, B, "wein", 1, "LYO")) == ["+repay"]  # 2,500 left after 100
    assert extras(prompt(s, B, "wein", 2, "LYO")) == []  # 200 spent: 2,500 are no longer there
    refused(s, B, "+repay", 1, "wein")  # after a free action the goods are chosen
    p = done(s, B, "+repay", 1)
    assert p.order == {"goods": [], "repay": 1} and p.sentence == "Buy nothing; repay 1 credit (2,500)"


def test_h_106_gifts_are_offered_only_in_the_negotiation_variant() -> None:
    s = game()
    open_at(s, "wheel", [A, B, C])
    assert extras(prompt(s, A, "eisen")) == []
    s = game(negotiation=True)
    give_cards(s, A, "sonder_verkauf", 2)
    open_at(s, "wheel", [A, B, C])
    assert extras(prompt(s, A, "eisen")) == ["+gift"]
    to = prompt(s, A, "eisen", "+gift").ask
    assert labels(to) == ["The yellow player", "The orange player"] and [o.place for o in to.options] == [  # type: ignore[union-attr]
        "seat-1", "seat-2"]
    n = prompt(s, A, "eisen", "+gift", C).ask.number  # type: ignore[union-attr]
    assert n is not None and (n.min, n.max, n.step) == (0, 4000, 100)
    sheet = prompt(s, A, "eisen", "+gift", C, 300).ask.sheet  # type: ignore[union-attr]
    assert [(x.label, x.key, x.max) for x in sheet] == [("Sonder-Verkauf", "sonder_verkauf", 2)]
    p = done(s, A, "eisen", "+gift", C, 300, {"sonder_verkauf": 1})
    assert p.order == {"arrows": ["eisen", None],
                       "transfers": [{"to": 2, "money": 300, "cards": {"sonder_verkauf": 1}}]}
    assert p.sentence.endswith("give the orange player 300 and 1 Sonder-Verkauf")
    assert values(p.ask) == ["+gift"]  # one gift per player
    assert values(prompt(s, A, "eisen", "+gift", C, 300, {"sonder_verkauf": 1}, "+gift").ask) == [B]
