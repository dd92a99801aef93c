"""Every order example of the player's guide (docs/rules/aufachse.md) is legal in the
situation the guide describes."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
)

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "rules" / "aufachse.md"


def _place() -> tuple[dict[str, Any], int]:
    s = new_game(4, 1)
    return s, s["pending"]["seat"]


def _aa2() -> tuple[dict[str, Any], int]:
    s = table()
    put(s, RED, "Hannover")
    open_move(s, RED, [6, 2])
    return s, RED


def _aa4() -> tuple[dict[str, Any], int]:
    s = table()
    put(s, BLUE, "Magdeburg")
    open_move(s, BLUE, [1, 4])
    return s, BLUE


def _aa3() -> tuple[dict[str, Any], int]:
    s = table()
    put(s, YELLOW, "Hannover", hand=["O14"])
    open_move(s, YELLOW, [5, 2])
    return s, YELLOW


def _aa7() -> tuple[dict[str, Any], int]:
    s = table()
    put(s, YELLOW, "R3.2", loaded=["O01"], hand=["O10"])
    open_move(s, YELLOW, [5, 5])
    return s, YELLOW


def _pick() -> tuple[dict[str, Any], int]:
    s = table()
    put(s, RED, "Hannover")
    open_move(s, RED, [3, 3])
    return s, RED


def _auction() -> tuple[dict[str, Any], int]:
    s, seat = _pick()
    s["display"][0] = "O02"
    put(s, GREEN, "Berlin")
    s, _ = step(s, RED, {"die": "A", "path": ["R3.2", "R3.1", "Hamburg"], "arrive": {"pick": 1}})
    return s, YELLOW


def _load_won() -> tuple[dict[str, Any], int]:
    s, _ = _auction()
    for seat, order in ((YELLOW, {"pass": True}), (BLUE, {"pass": True}), (GREEN, {"bid": 1}),
                        (RED, {"pass": True})):
        s, _ = step(s, seat, order)
    return s, GREEN


def _n08() -> tuple[dict[str, Any], int]:
    s = table()
    put(s, BLUE, "Berlin")
    s["events"] = ["N08"] + s["events"]
    open_move(s, BLUE, [2, 2])
    s, _ = step(s, BLUE, {"die": "A", "path": ["R21.1", "R21.2"]})
    return s, GREEN


def _e13() -> tuple[dict[str, Any], int]:
    s = table()
    put(s, GREEN, "Hannover", hand=["O14"])
    s["events"] = ["E13"] + s["events"]
    open_move(s, GREEN, [2, 2])
    s, _ = step(s, GREEN, {"die": "A", "path": ["R17.1", "R17.2"]})
    return s, GREEN


def _arrive() -> tuple[dict[str, Any], int]:
    s, seat = _e13()
    s, _ = step(s, seat, {"city": "Kassel"})
    return s, seat


SCENES: list[Callable[[], tuple[dict[str, Any], int]]] = [
    _place, _aa2, _aa4, _aa3, _aa7, _pick, _auction, _auction, _load_won, _n08, _e13, _arrive,
]


def test_guide_order_examples_are_legal() -> None:
    blocks = re.findall(r"```json\n(.*?)\n```", GUIDE.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == len(SCENES)
    for text, scene in zip(blocks, SCENES, strict=True):
        s, seat = scene()
        order = json.loads(text)
        legal(s, seat, order)
        assert GAME.requests(s)[0].seat == seat
