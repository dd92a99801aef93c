"""The turn as one order (T3, R8, R17) and the decision kinds' shapes."""

from __future__ import annotations

from tests.engine.aufachse.helpers import GAME, RED, YELLOW, illegal, legal, open_move, put, step, table, types


def test_t3_r17_one_move_order_carries_every_step_in_order() -> None:
    s = table()
    put(s, RED, "Hannover", hand=["O10", "O14"], cash=5000)  # O10 Hannover → Berlin 6 goods, O14 from Kassel
    s["players"][RED]["loaded"] = ["O05"]  # Hannover → Flensburg, 2 goods: Load 2/6
    open_move(s, RED, [4, 4])
    order = {"trailers": [{"buy": "large"}], "load": ["O10"], "die": "A",
             "path": ["R17.1", "R17.2", "R17.3", "Kassel"],
             "arrive": {"trailers": [{"buy": "small"}], "load": ["O14"], "pick": 3}}
    s2, ev = step(s, RED, order)
    kinds = types(ev)
    assert kinds[:4] == ["trailer_bought", "loaded", "moved", "trailer_bought"]
    assert kinds[4:6] == ["loaded", "picked"]
    assert s2["players"][RED]["loaded"] == ["O05", "O10", "O14"] and s2["players"][RED]["cash"] == 0
    assert s2["pending"]["kind"] == "bid"
    # the load before the move needs the trailer bought before it: the other way round is refused whole
    bad = dict(order, trailers=[], arrive={"trailers": [{"buy": "large"}], "load": ["O14"], "pick": 3})
    illegal(s, RED, bad, "over_capacity")
    illegal(s, RED, {**order, "zzz": 1}, "malformed_order")
    illegal(s, RED, {**order, "kind": "bid"}, "wrong_kind")
    illegal(s, YELLOW, order, "not_your_turn")
    legal(s, RED, {**order, "kind": "move"})


def test_r8_hidden_hand_capacity_six_plus_trailers_several_orders_at_once() -> None:
    s = table()
    put(s, RED, "Kassel", hand=["O14", "O20", "O53"])
    s["players"][RED]["trailers"]["small"] = 1  # capacity 10
    open_move(s, RED, [1, 1])
    s2, _ = step(s, RED, {"load": ["O14", "O20", "O53"], "die": "A", "path": ["R17.3"], "roadworks": "R5.1"})
    assert s2["players"][RED]["loaded"] == ["O14", "O20", "O53"]
    s["players"][RED]["trailers"]["small"] = 0
    illegal(s, RED, {"load": ["O14", "O20", "O53"], "die": "A", "path": ["R17.3"], "roadworks": "R5.1"},
            "over_capacity")
    # L3: a loaded order cannot be loaded again or returned to the hand
    s3 = table()
    put(s3, RED, "Kassel", loaded=["O14"])
    open_move(s3, RED, [1, 1])
    illegal(s3, RED, {"load": ["O14"], "die": "A", "path": ["R17.3"], "roadworks": "R5.1"}, "no_such_order")
    s4, _ = step(s, RED, {"load": ["O14", "O20"], "die": "A", "path": ["R17.3"], "roadworks": "R5.1"})
    assert GAME.view(s4, YELLOW)["players"][RED]["hand_size"] == 1
    assert GAME.view(s4, YELLOW)["players"][RED].get("hand") is None
    assert GAME.view(s4, RED)["players"][RED]["hand"] == ["O53"]
