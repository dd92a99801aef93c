"""Every Auf Achse decision in the player's words and clicks (`Game.prompt`, issue 21):
exact asks, options and orders in forced situations, named after the rule each pins.

The options are the engine's own legal choices (the move's ends are `Mover`'s, the
roadworks' spaces `effects`'), every pick not offered is refused with `bad_pick`, and a
completed prompt's order is exactly the JSON `validate` accepts (and the guide shows).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from engine.aufachse import effects
from engine.aufachse.context import ctx_of
from engine.aufachse.movement import Mover
from engine.aufachse.picture import place_id
from engine.core import IllegalOrder
from engine.core.choices import Prompt, read_words
from tests.engine.aufachse.helpers import (
    BLUE,
    GAME,
    GREEN,
    RED,
    YELLOW,
    legal,
    new_game,
    open_move,
    put,
    step,
    table,
    types,
)
from tests.playertext import problems

NAMES = ["Anna", "Bernd", "Clara", "Dieter"]


def ask(s: dict[str, Any], seat: int, picks: list[Any]) -> Prompt:
    return GAME.prompt(s, seat, picks)


def values(p: Prompt) -> list[Any]:
    assert p.ask is not None
    return [o.value for o in p.ask.options]


def labels(p: Prompt) -> list[str]:
    assert p.ask is not None
    return [o.label for o in p.ask.options]


def refused(s: dict[str, Any], seat: int, picks: list[Any]) -> None:
    before = json.dumps(s, sort_keys=True)
    with pytest.raises(IllegalOrder) as info:
        GAME.prompt(s, seat, picks)
    assert info.value.code == "bad_pick", info.value.message
    assert json.dumps(s, sort_keys=True) == before


def words_only(p: Prompt) -> None:
    texts = [p.say, p.sentence, *p.chosen]
    if p.ask is not None:
        texts += [p.ask.question, *(t for o in p.ask.options for t in (o.label, o.hint, *o.words))]
    for text in texts:
        assert not problems(text), problems(text)


def hannover_3_3() -> dict[str, Any]:
    """RED in Hannover, the dice 3 and 3, the display as dealt."""
    s = table()
    put(s, RED, "Hannover")
    open_move(s, RED, [3, 3])
    return s


# -- the move (T3) ----------------------------------------------------------------------------------
def test_T3_the_move_offers_exactly_the_engines_legal_ends_as_places_on_the_board() -> None:
    s = hannover_3_3()
    p = ask(s, RED, [])
    assert p.ask is not None and p.ask.key == "to" and p.order is None
    assert values(p) == ["buy:small", "buy:large", "Bremen", "Hamburg", "Magdeburg", "R15.2", "R17.3"]
    assert labels(p) == [
        "buy a small trailer (room for 4 more goods) for 2000",
        "buy a large trailer (room for 6 more goods) for 3000",
        "to Bremen, 3 spaces", "to Hamburg, 3 spaces", "to Magdeburg, 3 spaces",
        "stop 2 spaces before Dortmund on the road from Hannover, 3 spaces (event space)",
        "stop 1 space before Kassel on the road from Hannover, 3 spaces",
    ]
    ends = {o.value for o in p.ask.options if o.place is not None}
    assert ends == {path[-1] for path in Mover(ctx_of(s), s, RED).moves(3)}
    svg = GAME.picture(GAME.view(s, RED), NAMES)
    for o in p.ask.options:
        if o.place is not None:
            assert o.place == place_id(str(o.value))
            assert f'id="{o.place}"' in svg
    words_only(p)


def test_M7_with_a_6_the_ends_are_those_of_every_value_and_waiting() -> None:
    s = table()
    put(s, RED, "Hannover")
    s["roadworks"] = "R3.2"  # next to Hannover: the truck may wait (M9)
    open_move(s, RED, [6, 2])
    p = ask(s, RED, [])
    m = Mover(ctx_of(s), s, RED)
    expected = {path[-1] if path else "wait" for n in range(1, 7) for path in m.paths(n)}
    assert {o.value for o in p.ask.options if o.place is not None} == expected
    assert "R3.1" not in expected and "wait" in expected
    wait = next(o for o in p.ask.options if o.value == "wait")
    assert (wait.label, wait.place) == ("wait where you are", place_id("Hannover"))


def test_T3_a_pick_that_is_not_offered_is_refused_and_changes_nothing() -> None:
    s = hannover_3_3()
    for picks in (["Trieste"], ["R3.1"], ["wait"], ["load:O14"], ["sell:small"], [0], ["Hamburg", "pick:5"],
                  ["Hamburg", "load:O14"], ["Hamburg", "pick:2", "decline"], ["Bremen", "A3"]):
        refused(s, RED, picks)
    with pytest.raises(IllegalOrder) as info:
        GAME.prompt(s, YELLOW, [])
    assert info.value.code == "not_your_turn"


def test_P2_a_move_into_a_city_with_the_full_value_picks_or_declines() -> None:
    s = hannover_3_3()
    p = ask(s, RED, ["Hamburg"])
    assert p.order is None and p.ask is not None and p.ask.key == "arrival"
    assert values(p) == ["buy:small", "buy:large", "pick:1", "pick:2", "pick:3", "pick:4", "decline"]
    assert labels(p)[2:] == [
        "pick Brüssel → Kassel (2 goods, pays 1400) for auction",
        "pick Zürich → Linz (2 goods, pays 1600) for auction",
        "pick Rostock → Kassel (5 goods, pays 2200) for auction",
        "pick Frankfurt → Hamburg (3 goods, pays 1600) for auction",
        "decline: Brüssel → Kassel (2 goods, pays 1400) is discarded",
    ]
    done = ask(s, RED, ["Hamburg", "pick:2"])
    assert done.ask is None
    assert done.order == {"die": "A", "path": ["R3.2", "R3.1", "Hamburg"], "arrive": {"pick": 2}}
    assert done.sentence == ("Drive with the die showing 3 from Hannover to Hamburg, 3 spaces; on arrival pick "
                             "Zürich → Linz (2 goods, pays 1600) for auction.")
    assert done.chosen == ("to Hamburg, 3 spaces", "pick Zürich → Linz (2 goods, pays 1600) for auction")
    words_only(done)
    after, events = step(s, RED, done.order)
    assert "picked" in types(events) and after["auction"]["card"] == s["display"][1]
    moved = next(e for e in events if e["type"] == "moved")
    assert GAME.describe_event(moved, ["Hanna", "Otto", "Clara", "Dieter"]) == \
        "Hanna uses a 3 and drives 3 spaces from Hannover to Hamburg."  # the page never names die A or B


def test_M4_several_ways_to_one_end_are_told_apart_by_the_cities_they_pass() -> None:
    s = table()
    put(s, RED, "Hannover")
    open_move(s, RED, [6, 2])
    p = ask(s, RED, ["Bremen"])
    assert p.ask is not None and p.ask.key == "way" and p.ask.question == "Which way to Bremen?"
    assert values(p) == [0, 1]
    assert labels(p) == ["straight there, 3 spaces", "via Hamburg, 6 spaces"]
    done = ask(s, RED, ["Bremen", 1, "decline"])
    assert done.order == {"die": "A", "n": 6, "path": ["R3.2", "R3.1", "Hamburg", "R2.1", "R2.2", "Bremen"],
                          "arrive": {"decline": True}}
    assert done.sentence == ("Drive with the die showing 6 from Hannover via Hamburg to Bremen, 6 spaces; on arrival "
                             "decline, discarding Brüssel → Kassel (2 goods, pays 1400).")
    legal(s, RED, done.order)
    refused(s, RED, ["Bremen", 2])


def test_M8_stopping_early_in_an_own_city_gives_up_pips_and_picks_nothing() -> None:
    # AA-3: YELLOW stands in Hannover with O14 (Kassel → Magdeburg) in hand, rolls 5 and 2.
    s = table()
    put(s, YELLOW, "Hannover", hand=["O14"])
    open_move(s, YELLOW, [5, 2])
    p = ask(s, YELLOW, [])
    kassel = next(o for o in p.ask.options if o.value == "Kassel")
    assert kassel.label == "to Kassel, 4 spaces"
    p = ask(s, YELLOW, ["Kassel"])
    # complete already (no pick after giving up a pip, P1), and more may be done on arrival
    assert p.order == {"die": "A", "path": ["R17.1", "R17.2", "R17.3", "Kassel"]}
    assert values(p) == ["buy:small", "buy:large", "load:O14"]
    assert p.sentence == "Drive with the die showing 5 from Hannover to Kassel, 4 spaces, giving up 1 pip."
    done = ask(s, YELLOW, ["Kassel", "load:O14"])
    assert done.ask is None
    assert done.order == {"die": "A", "path": ["R17.1", "R17.2", "R17.3", "Kassel"], "arrive": {"load": ["O14"]}}
    legal(s, YELLOW, done.order)


def test_M7_a_6_is_offered_as_each_value_that_fits_the_way_and_n_goes_into_the_order() -> None:
    s = table()
    put(s, YELLOW, "Hannover", hand=["O14"])
    open_move(s, YELLOW, [6, 4])
    p = ask(s, YELLOW, ["Kassel"])
    assert p.ask is not None and p.ask.key == "die"
    assert values(p) == ["B4", "A5", "A6"]
    assert labels(p) == ["the die showing 4", "the 6 as 5, giving up 1 pip", "the die showing 6, giving up 2 pips"]
    assert p.ask.options[0].hint == "the full value in a city: you pick a public order for auction or decline"
    done = ask(s, YELLOW, ["Kassel", "A5"])
    assert done.order == {"die": "A", "n": 5, "path": ["R17.1", "R17.2", "R17.3", "Kassel"]}
    legal(s, YELLOW, done.order)
    full = ask(s, YELLOW, ["Kassel", "B4"])
    assert full.order is None and "decline" in values(full)


def test_K1_a_move_with_a_1_asks_where_the_roadworks_goes() -> None:
    # AA-4: BLUE in Magdeburg rolls 1 and 4.
    s = table()
    put(s, BLUE, "Magdeburg")
    s["roadworks"] = "R30.1"
    open_move(s, BLUE, [1, 4])
    p = ask(s, BLUE, ["R20.1"])
    assert p.ask is not None and p.ask.key == "roadworks" and p.order is None
    spots = values(p)
    assert spots == effects.roadworks_targets_at(ctx_of(s), s, "R20.1")
    assert "R20.1" not in spots and "R30.1" not in spots and "R19.1" in spots
    assert all(o.place == place_id(o.value) for o in p.ask.options)
    done = ask(s, BLUE, ["R20.1", "R19.1"])
    assert done.order == {"die": "A", "path": ["R20.1"], "roadworks": "R19.1"}
    assert done.sentence == ("Drive with the die showing 1 from Magdeburg to the road Magdeburg–Leipzig (1 space from "
                             "Magdeburg), 1 space; put the roadworks on the road Magdeburg–Berlin (1 space from "
                             "Magdeburg).")
    refused(s, BLUE, ["R20.1", "R30.1"])


def test_M9_waiting_next_to_a_marker_still_takes_a_die() -> None:
    s = table()
    put(s, RED, "Hannover")
    s["roadworks"] = "R3.2"
    open_move(s, RED, [2, 5])
    p = ask(s, RED, ["wait"])
    assert p.ask is not None and p.ask.key == "die"
    assert values(p) == ["A2", "B5"] and labels(p) == ["the die showing 2", "the die showing 5"]
    done = ask(s, RED, ["wait", "B5"])
    assert done.ask is None and done.order == {"die": "B", "path": []}
    assert done.sentence == "Wait at Hannover with the die showing 5."
    legal(s, RED, done.order)


def test_H1_L2_trailers_and_loads_before_the_move_come_first_and_change_the_ends() -> None:
    # AA-7: YELLOW on the road next to Hannover with O01 loaded and O10 (6 goods) in hand.
    s = table()
    put(s, YELLOW, "R3.2", loaded=["O01"], hand=["O10"])
    open_move(s, YELLOW, [5, 5])
    p = ask(s, YELLOW, ["Hannover"])
    assert values(p) == ["buy:small", "buy:large"]  # O10 does not fit yet
    p = ask(s, YELLOW, ["Hannover", "buy:small"])
    assert values(p) == ["buy:small", "buy:large", "sell:small", "load:O10"]
    done = ask(s, YELLOW, ["Hannover", "buy:small", "load:O10"])
    assert done.ask is None
    assert done.order == {"die": "A", "path": ["Hannover"], "arrive": {"trailers": [{"buy": "small"}],
                                                                        "load": ["O10"]}}
    # before the move: a trailer bought first leaves the ends to pick next, and only loads after a load
    s2 = table()
    put(s2, RED, "Kassel", hand=["O14"], cash=2500)
    open_move(s2, RED, [3, 3])
    first = ask(s2, RED, [])
    assert values(first)[:2] == ["buy:small", "load:O14"]
    after = ask(s2, RED, ["buy:small"])
    assert "buy:small" not in values(after) and "load:O14" in values(after)
    loaded = ask(s2, RED, ["load:O14"])
    assert not any(str(v).startswith(("buy", "sell", "load")) for v in values(loaded))
    assert loaded.order is None and loaded.sentence == "Load Kassel → Magdeburg (3 goods, pays 1000)."


# -- the other decisions ------------------------------------------------------------------------------
def test_S6_placing_offers_every_space_with_room() -> None:
    s = new_game(4, 1)
    seat = s["pending"]["seat"]
    others = [q for q in range(4) if q != seat]
    for q in others[:2]:
        s["players"][q]["at"] = "R3.1"
    p = ask(s, seat, [])
    board = ctx_of(s).board
    assert values(p) == [x for x in board.spaces if x != "R3.1"]
    assert labels(p)[:3] == ["Amsterdam", "Basel", "Berlin"]
    assert p.ask.options[board.spaces.index("R3.2") - 1].label == "the road Hamburg–Hannover, 1 space from Hannover"
    refused(s, seat, ["R3.1"])
    done = ask(s, seat, ["Hannover"])
    assert done.order == {"space": "Hannover"} and done.sentence == "Place your truck in Hannover."


def _auction() -> dict[str, Any]:
    """RED picked O02 (Berlin → Trieste, costs 1800/2100/2400/2800/3300) in Hamburg."""
    s = hannover_3_3()
    s["display"][0] = "O02"
    s, _ = step(s, RED, {"die": "A", "path": ["R3.2", "R3.1", "Hamburg"], "arrive": {"pick": 1}})
    return s


def test_A3_A5_a_bid_is_a_number_of_steps_bounded_by_the_auction_and_the_cash() -> None:
    s = _auction()
    assert s["pending"] == {"kind": "bid", "seat": YELLOW, "card": "O02"}
    p = ask(s, YELLOW, [])
    assert p.ask is not None and p.ask.key == "bid" and p.ask.number is not None
    n = p.ask.number
    assert (n.min, n.max, n.step) == (1, 5, 1) and [o.value for o in n.named] == ["pass"]
    assert n.label == "your bid"  # not "step": the page calls its own turns steps
    assert p.ask.question == ("Your bid for Berlin → Trieste (3 goods, pays 3900): nobody has bid yet; a bid of 1 "
                              "costs 1800, 2 costs 2100, 3 costs 2400, 4 costs 2800, 5 costs 3300; "
                              "you have 5000. Passing is final.")
    assert ask(s, YELLOW, [2]).order == {"bid": 2}
    assert ask(s, YELLOW, ["pass"]).order == {"pass": True}
    assert ask(s, YELLOW, ["pass"]).sentence == "Pass on Berlin → Trieste (3 goods, pays 3900)."
    assert ask(s, YELLOW, [2]).sentence == "Bid 2 (costs 2100) for Berlin → Trieste (3 goods, pays 3900)."
    s["players"][YELLOW]["cash"] = 2200  # A5: step 3 costs 2400
    n = ask(s, YELLOW, []).ask.number
    assert (n.min, n.max) == (1, 2)
    for bad in ([3], [0], ["3"], [True], ["no"]):
        refused(s, YELLOW, bad)


def test_A4_the_picker_may_match_the_step_others_must_raise() -> None:
    s = _auction()
    for seat, order in ((YELLOW, {"pass": True}), (BLUE, {"bid": 2}), (GREEN, {"bid": 3})):
        s, _ = step(s, seat, order)
    assert s["pending"]["seat"] == RED
    n = ask(s, RED, []).ask.number
    assert (n.min, n.max) == (3, 5)
    s, _ = step(s, RED, {"bid": 3})
    assert s["pending"]["seat"] == BLUE
    n = ask(s, BLUE, []).ask.number
    assert (n.min, n.max) == (4, 5)
    assert ask(s, BLUE, []).ask.question.startswith("Your bid for Berlin → Trieste (3 goods, pays 3900): the "
                                                    "bid stands at 3; a bid of 4 costs 2800")


def test_A8_the_winner_loads_the_won_order_or_keeps_it() -> None:
    s = _auction()
    s["players"][GREEN]["at"] = "Berlin"
    for seat, order in ((YELLOW, {"pass": True}), (BLUE, {"pass": True}), (GREEN, {"bid": 1}), (RED, {"pass": True})):
        s, _ = step(s, seat, order)
    assert s["pending"] == {"kind": "load_won", "seat": GREEN, "card": "O02", "active": False}
    p = ask(s, GREEN, [])
    assert p.order == {} and p.sentence == "Keep Berlin → Trieste (3 goods, pays 3900) in hand, unloaded."
    assert values(p) == ["load:O02"] and labels(p) == ["load Berlin → Trieste (3 goods, pays 3900) here"]
    done = ask(s, GREEN, ["load:O02"])
    assert done.ask is None and done.order == {"load": ["O02"]}
    assert done.sentence == "Load Berlin → Trieste (3 goods, pays 3900)."
    legal(s, GREEN, {})


def test_K3_the_jam_goes_on_a_free_road_space_next_to_the_drawers_truck() -> None:
    s = table()
    put(s, BLUE, "Berlin")
    s["events"] = ["N08", *s["events"]]
    open_move(s, BLUE, [2, 2])
    s, _ = step(s, BLUE, {"die": "A", "path": ["R21.1", "R21.2"]})
    p = ask(s, GREEN, [])
    assert p.say == "Choose the space for the traffic jam." and p.ask.question == "Where does the traffic jam go?"
    assert values(p) == ["R21.1", "R21.3"]
    assert labels(p) == ["the road Berlin–Leipzig, 1 space from Berlin",
                         "the road Berlin–Leipzig, 1 space from Leipzig"]
    assert [o.place for o in p.ask.options] == [place_id("R21.1"), place_id("R21.3")]
    done = ask(s, GREEN, ["R21.3"])
    assert done.order == {"space": "R21.3"}
    assert done.sentence == "Put the traffic jam on the road Berlin–Leipzig, 1 space from Leipzig."
    refused(s, GREEN, ["R21.2"])


def _shortcut() -> dict[str, Any]:
    s = table()
    put(s, GREEN, "Hannover", hand=["O14"])
    s["events"] = ["E13", *s["events"]]
    open_move(s, GREEN, [2, 2])
    s, _ = step(s, GREEN, {"die": "A", "path": ["R17.1", "R17.2"]})
    return s


def test_E13_the_shortcut_offers_the_cities_in_range_or_staying() -> None:
    s = _shortcut()
    p = ask(s, GREEN, [])
    cities = effects.shortcut_cities(ctx_of(s), s, GREEN, 6)
    assert values(p) == [*cities, "decline"]
    assert labels(p)[-1] == "stay where you are"
    assert ask(s, GREEN, ["Kassel"]).order == {"city": "Kassel"}
    assert ask(s, GREEN, ["decline"]).order == {"decline": True}
    assert ask(s, GREEN, ["decline"]).sentence == "Do not take the shortcut."
    refused(s, GREEN, ["Trieste"])


def test_R17_an_arrival_by_an_event_asks_for_trailers_and_loads_but_no_pick() -> None:
    s, _ = step(_shortcut(), GREEN, {"city": "Kassel"})
    p = ask(s, GREEN, [])
    assert p.order == {} and p.sentence == "Nothing more to do in Kassel."
    assert values(p) == ["buy:small", "buy:large", "load:O14"]
    done = ask(s, GREEN, ["load:O14"])
    assert done.ask is None and done.order == {"load": ["O14"]}
    assert done.sentence == "In Kassel: load Kassel → Magdeburg (3 goods, pays 1000)."
    legal(s, GREEN, done.order)


# -- a person's words ------------------------------------------------------------------------------------
def test_read_words_reads_a_move_as_a_player_writes_it() -> None:
    s = hannover_3_3()

    def prompt(picks: list[Any]) -> Prompt:
        return GAME.prompt(s, RED, picks)

    assert read_words("to Hamburg\ndecline", prompt).order == {
        "die": "A", "path": ["R3.2", "R3.1", "Hamburg"], "arrive": {"decline": True}}
    assert read_words("to hamburg; pick Zuerich → Linz", prompt).order == {
        "die": "A", "path": ["R3.2", "R3.1", "Hamburg"], "arrive": {"pick": 2}}
    assert read_words("4", prompt).chosen == ("to Hamburg, 3 spaces",)
    with pytest.raises(IllegalOrder) as info:
        read_words("to Trieste", prompt)
    assert info.value.code == "bad_pick"
    s2 = table()
    put(s2, RED, "Hannover")
    open_move(s2, RED, [6, 2])
    got = read_words("to Bremen via Hamburg\ndecline", lambda picks: GAME.prompt(s2, RED, picks))
    assert got.order is not None and got.order["path"][-1] == "Bremen" and len(got.order["path"]) == 6


def test_no_prompt_text_shows_an_id() -> None:
    scenes = [hannover_3_3(), _auction(), _shortcut()]
    for s in scenes:
        seat = s["pending"]["seat"]
        p = ask(s, seat, [])
        words_only(p)
        for o in (p.ask.options if p.ask is not None else ())[:12]:
            nxt = ask(s, seat, [o.value])
            words_only(nxt)
            assert not re.search(r"\bO\d\d\b|\bR\d+\.\d+\b", nxt.sentence + " ".join(nxt.chosen))
