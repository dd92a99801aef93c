"""Builders for Die Händler rules tests: a game, a forced decision point, one step.

Rules tests set up a real game, then edit the plain-JSON state to the situation a rule
or worked example describes, open the decision under test with `open_at`, and resolve
orders through the real `validate`/`resolve` path.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine.core import IllegalOrder, get
from engine.haendler.context import ctx_of, store_add

GAME = get("haendler")
A, B, C, D = 0, 1, 2, 3


def new_game(seats: int = 4, seed: int = 1, start: int = 0, **options: Any) -> dict[str, Any]:
    """A fresh game (pairs dealt unless options say otherwise), start player `start`."""
    return GAME.setup(seats, {"start_player": start, **options}, seed)


def open_at(s: dict[str, Any], kind: str, seats: list[int], at: dict[str, Any] | None = None, **extra: Any) -> None:
    """Force the open decision to `kind` for `seats` (with e.g. cart=2), and optionally
    the flow cursor `at` that comes after it."""
    d = __import__("engine.haendler.rules", fromlist=["DECISIONS"]).DECISIONS[kind]
    s["pending"] = {"kind": kind, "seats": seats, "sealed": d.sealed, **extra}
    if at is not None:
        s["at"] = at


def step(s: dict[str, Any], orders: dict[int, dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Validate and resolve one step; returns (new state, events)."""
    return GAME.step(s, orders)


def illegal(s: dict[str, Any], seat: int, order: dict[str, Any], code: str) -> IllegalOrder:
    """Assert `order` is refused with `code` and the state is untouched."""
    import json

    before = json.dumps(s, sort_keys=True)
    with pytest.raises(IllegalOrder) as info:
        GAME.validate(s, seat, order)
    assert info.value.code == code, info.value.message
    assert json.dumps(s, sort_keys=True) == before
    return info.value


def ctx(s: dict[str, Any]) -> Any:
    return ctx_of(s)


def set_cart(s: dict[str, Any], number: int, at: str, master: int | None = None, arrived: bool = False) -> None:
    cart = s["carts"][number - 1]
    cart.update({"at": at, "master": master, "arrived": arrived})


def put(s: dict[str, Any], seat: int, city: str, good: str, k: int = 1) -> None:
    """Put k goods (taken from the stock) into seat's warehouse in city."""
    s["stock"] = {**s["stock"], good: s["stock"][good] - k}  # shared between states: replace
    store_add(s, seat, city, good, k)  # copy-on-write, like the engine


def give_cards(s: dict[str, Any], seat: int, kind: str, k: int = 1) -> None:
    """Move k influence cards of `kind` from the deck into seat's hand."""
    s["deck"] = {**s["deck"], kind: s["deck"][kind] - k}  # shared between states: replace
    hand = s["players"][seat]["hand"]
    hand[kind] = hand.get(kind, 0) + k


def events_of(events: list[dict[str, Any]], type_: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == type_]


def run_from(s: dict[str, Any], station: str, i: int = 0, **extra: Any) -> list[dict[str, Any]]:
    """Put the flow cursor on `station` (e.g. "achsbruch", "move") and let the real flow
    run until the next open decision; returns the events of that advance."""
    from engine.haendler import flow

    ev: list[dict[str, Any]] = []
    s["at"] = {"st": station, "i": i, **extra}
    flow.advance(ctx_of(s), s, ev)
    return ev


def open_move(s: dict[str, Any], seat: int) -> None:
    """Open D3-MOVE for `seat`, the flow cursor pointing at the next mover in turn order."""
    from engine.haendler.context import turn_order

    open_at(s, "move", [seat], at={"st": "move", "i": turn_order(s).index(seat) + 1})


def board_doc() -> dict[str, Any]:
    """A fresh, editable copy of the shipped default board document (for the `board`
    option as an inline document, or for `engine.haendler.board.parse_board`)."""
    import copy
    import tomllib

    from engine.haendler.board import BOARDS

    text = (BOARDS / "reconstructed-default.toml").read_text(encoding="utf-8")
    return copy.deepcopy(tomllib.loads(text))
