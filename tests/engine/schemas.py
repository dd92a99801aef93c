"""A title's order schemas checked against real play: shared by the titles' schema tests."""

from __future__ import annotations

from collections import Counter
from typing import Any

from jsonschema import Draft202012Validator

from engine.core.game import Game


def play_fitting_schemas(game: Game, state: Any, bots: dict[int, Any], seen: Counter[str], steps: int) -> Any:
    """Play from `state` with `bots` for at most `steps` steps, checking that every default
    order and every bot order fits the schema of its request's kind (counted in `seen`);
    the last state."""
    validators: dict[str, Draft202012Validator] = {}
    for _ in range(steps):
        requests = game.requests(state)
        if not requests:
            break
        orders = {}
        for r in requests:
            v = validators.get(r.kind) or validators.setdefault(
                r.kind, Draft202012Validator(game.order_schema_for(state, r.kind)))
            default = game.default_order(state, r.seat)
            errors = [e.message for e in v.iter_errors(default)]
            assert not errors, (r.kind, default, errors)
            orders[r.seat] = bots[r.seat].order(game, state, r)
            errors = [e.message for e in v.iter_errors(orders[r.seat])]
            assert not errors, (r.kind, orders[r.seat], errors)
            seen[r.kind] += 1
        state, _ = game.resolve(state, orders)
    return state
