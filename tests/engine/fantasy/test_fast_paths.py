"""The fast paths of the Fantasy Business bot loop against their plain versions.

Each fast path skips or writes out work of a plain path (a `validate` call, a helper); a
game played with it must be the same game, order for order, event for event and state for
state, as one played with the plain path, and each order it gives must be legal.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from engine.core.bots import play_game
from engine.fantasy import bots as fantasy_bots
from tests.engine.fantasy.helpers import GAME

VARIANTS: list[dict[str, Any]] = [{}, {"trading": True}, {"below_base": True, "sole_bonus": True}]


def games(kind: str = "random") -> str:
    """Every state, order and event of seeded games of each seat count, as one text."""
    out = []
    for seats in range(3, 9):
        for vi, options in enumerate(VARIANTS):
            seed = f"fast/{seats}/{vi}"
            bots = {i: GAME.bots()[kind](f"{seed}/{i}") for i in range(seats)}
            states: list[Any] = []
            played = play_game(GAME, seats, bots, seed, options, on_step=lambda s, o, e, kept=states: kept.append(s))
            out.append(json.dumps([states, played.steps, played.events], sort_keys=True, default=str))
    return "\n".join(out)


def steps(tag: str, seat_counts: tuple[int, ...]) -> Iterator[tuple[Any, list[Any], dict[int, Any]]]:
    """Each open step of random-bot games of each seat count and variant: the state, its
    requests and the bots' orders, with which the game then goes on (validated `resolve`)."""
    bot = GAME.bots()["random"]
    for seats in seat_counts:
        for vi, options in enumerate(VARIANTS):
            seed = f"{tag}/{seats}/{vi}"
            bots = {i: bot(f"{seed}/{i}") for i in range(seats)}
            state = GAME.setup(seats, options, seed)
            while requests := GAME.requests(state):
                orders = {r.seat: bots[r.seat].order(GAME, state, r) for r in requests}
                yield state, requests, orders
                state, _ = GAME.resolve(state, orders)


def test_random_bot_orders_legal_as_built_pass_validate() -> None:
    """Every order of the kinds the random bot may return without `validate` is one
    `validate` accepts (so the plain path, which validates, returns the same order)."""
    checked = 0
    kinds: set[str] = set()
    for state, requests, orders in steps("legal", (3, 5, 8)):
        for r in requests:
            if r.kind in fantasy_bots._LEGAL_AS_BUILT:  # the fast path's and the others'
                GAME.validate(state, r.seat, orders[r.seat])
                kinds.add(r.kind)
                checked += 1
    assert checked > 1000 and kinds == fantasy_bots._LEGAL_AS_BUILT, kinds


def test_random_bot_games_are_the_same_with_every_order_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = games()
    monkeypatch.setattr(fantasy_bots, "_LEGAL_AS_BUILT", frozenset())
    assert games() == fast


def test_requests_written_out_match_the_decisions_choices() -> None:
    """`requests` builds the bids' and openings' choices (and every single-seat request)
    written out; the plain path, `_requests_of_seats`, asks each kind's `Decision`."""
    kinds: set[str] = set()
    for state, requests, _ in steps("requests", (3, 6, 8)):
        pending = state["pending"]
        plain = GAME._requests_of_seats(state, pending["kind"], pending["seats"])  # type: ignore[attr-defined]
        assert [r.as_dict() for r in requests] == [r.as_dict() for r in plain]
        kinds.add(pending["kind"])
    assert {"bid", "open", "select", "lone", "price", "w_open", "w_close", "w_reveal", "accept"} <= kinds, kinds
