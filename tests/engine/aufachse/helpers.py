"""Builders for Auf Achse rules tests: a game, a forced situation, one step.

Rules tests set up a real game, then edit the plain-JSON state to the situation a rule
or worked example describes (positions, hands, dice, the event deck), open the decision
under test, and resolve orders through the real `validate`/`resolve` path.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.core import IllegalOrder, get

GAME = get("aufachse")
RED, YELLOW, BLUE, GREEN = 0, 1, 2, 3
AA1_SEED = bytes(range(32)).hex()
FAR = "Trieste"


def new_game(seats: int = 4, seed: Any = 1, **options: Any) -> dict[str, Any]:
    return GAME.setup(seats, options, seed)


def table(seats: int = 4, kids: bool = False, seed: Any = 1) -> dict[str, Any]:
    """A game in play: every truck parked in a far city, empty hands, nothing loaded,
    markers off the board, 5000 cash each, the display and decks as dealt."""
    s = new_game(seats, seed, kids=kids)
    for p in s["players"]:
        p.update({"at": FAR, "hand": [], "open": [], "loaded": [], "debts": [], "cash": 5000, "skips": 0,
                  "trailers": {"small": 0, "large": 0}})
    s.update({"phase": "play", "turn_no": 1, "round": 1, "pending": None, "queue": [], "roadworks": None,
              "jam": None, "fresh": []})
    return s


def put(s: dict[str, Any], seat: int, at: str, hand: list[str] | None = None, loaded: list[str] | None = None,
        cash: int | None = None) -> None:
    p = s["players"][seat]
    p["at"] = at
    if hand is not None:
        p["hand"] = list(hand)
    if loaded is not None:
        p["loaded"] = list(loaded)
    if cash is not None:
        p["cash"] = cash


def open_move(s: dict[str, Any], seat: int, dice: list[int], extra: bool = False) -> None:
    """Force D-MOVE for `seat` with the given dice, the rest of the turn queued."""
    s["turn"] = seat
    s["dice"] = list(dice)
    s["pending"] = {"kind": "move", "seat": seat, "extra": extra}
    s["queue"] = [{"t": "end_turn", "seat": seat}]


def open_decision(s: dict[str, Any], pending: dict[str, Any], turn: int | None = None) -> None:
    if turn is not None:
        s["turn"] = turn
    s["pending"] = dict(pending)
    s["queue"] = [{"t": "end_turn", "seat": s["turn"]}]


def step(s: dict[str, Any], seat: int, order: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return GAME.step(s, {seat: order})


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def illegal(s: dict[str, Any], seat: int, order: Any, code: str) -> IllegalOrder:
    before = json.dumps(s, sort_keys=True)
    with pytest.raises(IllegalOrder) as info:
        GAME.validate(s, seat, order)
    assert info.value.code == code, (info.value.code, info.value.message)
    assert json.dumps(s, sort_keys=True) == before
    return info.value


def legal(s: dict[str, Any], seat: int, order: dict[str, Any]) -> None:
    GAME.validate(s, seat, order)


def finish_turn(s: dict[str, Any]) -> dict[str, Any]:
    """Answer every decision with its default until the turn of `s["turn"]` is over."""
    turn = s["turn_no"]
    while s["pending"] and s["turn_no"] == turn and not s["over"]:
        seat = s["pending"]["seat"]
        s, _ = step(s, seat, GAME.default_order(s, seat))
    return s
