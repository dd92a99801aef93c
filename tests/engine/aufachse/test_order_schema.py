"""Auf Achse's order schemas: valid JSON Schema (Draft 2020-12) with a title and a
description per field, and every default and bot order of seeded games fits the schema
of its request's kind."""

from __future__ import annotations

from collections import Counter

import pytest
from jsonschema import Draft202012Validator

from engine.core import get
from tests.engine.schemas import play_fitting_schemas

GAME = get("aufachse")
KINDS = ("place", "move", "arrive", "bid", "load_won", "event_space", "shortcut")


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_has_a_valid_described_schema(kind: str) -> None:
    schema = GAME.order_schema(kind)
    Draft202012Validator.check_schema(schema)
    for key, prop in schema["properties"].items():
        if key != "kind":
            assert prop.get("title") and prop.get("description") and "type" in prop, (kind, key)


@pytest.mark.parametrize("seed", [5, 17, 40])
def test_default_and_bot_orders_of_seeded_games_fit_their_schema(seed: int) -> None:
    bots_of = GAME.bots()
    names = sorted(bots_of)
    seats = 2 + seed % 3
    bots = {i: bots_of[names[i % len(names)]](f"{seed}/{i}") for i in range(seats)}
    seen: Counter[str] = Counter()
    play_fitting_schemas(GAME, GAME.setup(seats, {}, seed), bots, seen, 3000)
    assert {"place", "move"} <= set(seen), seen
