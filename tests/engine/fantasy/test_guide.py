"""Every order example of the player's guide docs/rules/fantasy.md is legal in a matching
situation (seat 0 asked, holding every special it names)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.engine.fantasy.helpers import GAME, act, run_to, table

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "rules" / "fantasy.md"
HAND = ["AL1", "BC1", "DI1", "DS1", "FB1", "MC1", "ND1", "OS1", "RA1", "SP1", "ST1", "SU1", "TR1"]
ITEMS = {0: ["HH1", "SW1"], 3: ["MP2", "HO1", "HO2"], 2: ["HH2"]}


def examples() -> list[dict[str, Any]]:
    text = GUIDE.read_text(encoding="utf-8")
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)```", text, re.S)]


def situation(kind: str, options: dict[str, Any], order: dict[str, Any]) -> dict[str, Any]:
    deck = ["SW3", "HH3", "SS1", "AR1"]
    if kind == "w_open":
        return table(4, 0, hands={0: HAND}, items=ITEMS, deck=deck, options=options)
    s = table(4, 0, items=ITEMS, deck=deck, options=options)
    s["players"][0]["hand"] = list(HAND)
    if kind == "select":
        s["offer"] = {**s["offer"], "preempt": 0}
        return s
    if kind in ("open", "bid", "accept"):
        s = table(4, 3, items=ITEMS, deck=deck, options=options)
        s["players"][0]["hand"] = list(HAND)
        s, _ = act(s, 3, {"pos": 1, "bid": None if kind == "open" else 5})
        if kind == "accept":
            s, _ = act(s, 0, {"bid": None, "propose": {"to": 2, "give": {"crowns": 1}}})
            s["pending"] = {"kind": "accept", "seats": [0]}
            s["proposals"] = [{**s["proposals"][0], "to": 0, "from": 2}]
            if order.get("specials"):
                s["proposals"][0]["get"] = {**s["proposals"][0]["get"], "specials": len(order["specials"])}
        return s
    if kind == "lone":
        s["offer"] = {**s["offer"], "bought": [1, 2, 3]}
        run_to(s, "offer")
        return s
    if kind in ("w_close", "price"):
        run_to(s, "w_close" if kind == "w_close" else "prices")
        return s
    if kind in ("w_spy", "spy", "w_reveal"):
        run_to(s, "prices")
        s, _ = GAME.step(s, {p: GAME.default_order(s, p) for p in s["pending"]["seats"]})
        if kind == "w_spy":
            return s
        if kind == "spy":
            s, _ = GAME.step(s, {p: ({"play": [{"card": "SP1"}]} if p == 0 else {"play": []})
                                 for p in s["pending"]["seats"]})
            return s
        s, _ = GAME.step(s, {p: {"play": []} for p in s["pending"]["seats"]})
        return s
    raise AssertionError(kind)


@pytest.mark.skipif(not GUIDE.is_file(), reason="no player's guide")
def test_every_order_example_in_the_guide_is_legal() -> None:
    found = examples()
    assert len(found) >= 14
    kinds = set()
    for order in found:
        kind = order["kind"]
        kinds.add(kind)
        s = situation(kind, {"trading": True} if "propose" in order or kind == "accept" else {}, order)
        assert s["pending"]["kind"] == kind and 0 in s["pending"]["seats"], (kind, s["pending"])
        GAME.validate(s, 0, order)
    assert kinds == {"w_open", "select", "open", "bid", "lone", "w_close", "price", "w_spy", "spy", "w_reveal",
                     "accept"}
