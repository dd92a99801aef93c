"""A full game on default orders runs to a result for every seat count and variant."""

import json

import pytest

from tests.engine.haendler.helpers import GAME


@pytest.mark.parametrize("seats", [2, 3, 4])
@pytest.mark.parametrize(
    "options",
    [{}, {"abilities": "auction"}, {"light": True}, {"negotiation": True},
     {"start_cities": ["BRU", "LYO", "AUG"], "messenger_start": "REI>BAS:1"}],
)
def test_default_orders_finish_a_game(seats: int, options: dict) -> None:
    s = GAME.setup(seats, options, 3)
    for _ in range(5000):
        if GAME.result(s) is not None:
            break
        orders = {r.seat: GAME.default_order(s, r.seat) for r in GAME.requests(s)}
        s, _ = GAME.step(s, orders)
    assert GAME.result(s) is not None
    assert json.loads(json.dumps(s)) == s
