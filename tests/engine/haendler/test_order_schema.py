"""Die Händler's order schemas: valid JSON Schema (Draft 2020-12), built from the board and
components, and every default order and every bot order of seeded games fits the schema of
its request's kind (the schema documents orders; `validate` stays the legality check)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from engine.core import get
from engine.core.bots import Dice
from engine.haendler.board import load_board
from engine.haendler.components import components
from engine.haendler.rules import DECISIONS
from tests.engine.haendler.test_properties import VARIANTS, deal_cards, make_bots
from tests.engine.schemas import play_fitting_schemas

GAME = get("haendler")


@pytest.mark.parametrize("kind", sorted(DECISIONS))
def test_every_decision_has_a_valid_precise_schema(kind: str) -> None:
    schema = GAME.order_schema(kind)
    Draft202012Validator.check_schema(schema)
    own = set(DECISIONS[kind].keys)
    assert own <= set(schema["properties"]) and schema["additionalProperties"] is False
    for key in own:  # no key is left as a bare "see the rules"
        prop = schema["properties"][key]
        assert ("type" in prop or "enum" in prop) and prop.get("title") and prop.get("description"), (kind, key)


def test_ids_come_from_the_board_and_components() -> None:
    board, comp = load_board("reconstructed-default"), components()
    row = GAME.order_schema("buy")["properties"]["goods"]["items"]
    assert row["required"] == ["good", "city"]
    assert row["properties"]["good"]["enum"] == list(board.goods)
    assert row["properties"]["city"]["enum"] == list(board.cities)
    assert row["properties"]["city"]["x-labels"] == {c: board.city_names[c] for c in board.cities}
    assert GAME.order_schema("buy")["properties"]["goods"]["maxItems"] == comp.max_buy
    assert GAME.order_schema("name_card")["properties"]["card"]["enum"] == list(comp.abilities)
    levels = GAME.order_schema("advance")["properties"]["levels"]
    assert (levels["minimum"], levels["maximum"]) == (0, comp.max_levels_per_round)


def test_a_games_own_board_names_its_own_cities() -> None:
    state = GAME.setup(3, {}, 7)
    cities = GAME.order_schema_for(state, "buy")["properties"]["goods"]["items"]["properties"]["city"]["enum"]
    assert cities == list(load_board(state["board"]).cities)


def _check_game(seed: int, seats: int, options: dict[str, Any], hands: int, seen: Counter[str]) -> None:
    state = GAME.setup(seats, options, seed)
    if hands:
        deal_cards(state, hands, Dice(f"deal:{seed}"))
    state = play_fitting_schemas(GAME, state, make_bots(seed, seats, options), seen, 5000)
    assert GAME.result(state) is not None


def test_default_and_bot_orders_of_seeded_games_fit_their_schema() -> None:
    seen: Counter[str] = Counter()
    for i, seed in enumerate((3, 11, 29, 47, 101, 202)):
        _check_game(seed, 2 + i % 3, VARIANTS[i % len(VARIANTS)], 3 if i % 2 else 0, seen)
    # the games reached most kinds (those rare by chance are checked by the schema test above)
    assert {"buy", "cart_bid", "master", "load", "move", "wheel", "advance"} <= set(seen), seen
