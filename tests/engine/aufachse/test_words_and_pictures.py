"""Words and pictures: every event of many bot games reads as a sentence with names, the
picture is accessible and small, and the order schemas name their fields."""

from __future__ import annotations

from typing import Any

from engine.aufachse.flow import KEYS
from engine.core.bots import play_game
from tests.engine.aufachse.helpers import GAME

NAMES = ["Anna", "Bernd", "Clara", "Dieter", "Eva", "Fritz"]


def test_sentences_summaries_and_pictures() -> None:
    bots = GAME.bots()
    seen: set[str] = set()
    for g, (seats, kids) in enumerate(((6, False), (3, True), (4, False), (2, False))):
        events: list[dict[str, Any]] = []
        out = play_game(GAME, seats, {i: bots[("planner", "random")[(i + g) % 2]](f"w{g}/{i}") for i in range(seats)},
                        f"words-{g}", {"kids": kids}, on_step=lambda s, o, e, keep=events: keep.extend(e))
        for e in events:
            text = GAME.describe_event(e, NAMES[:seats])
            assert text.endswith(".") and "_" not in text.split(" (")[0], text
            if "seat" in e and e["type"] not in ("refilled",):
                assert NAMES[e["seat"]] in text, text
            seen.add(e["type"])
        for viewer in (0, "public"):
            view = GAME.view(out.state, viewer)
            svg = GAME.picture(view, NAMES[:seats])
            assert svg.startswith("<svg") and "<title" in svg and "<desc" in svg and len(svg) < 100_000
            assert GAME.picture(view, NAMES[:seats]) == svg
            text = GAME.summary(view, NAMES[:seats])
            assert "Final money" in text and NAMES[0] in text
        assert GAME.headline(GAME.view(out.state, "public")) == "game over"
    assert {"placed", "rolled", "moved", "loaded", "delivered", "event_card", "declined", "picked",
            "won", "taken", "game_over"} <= seen


def test_order_schemas_name_every_field() -> None:
    for kind, keys in KEYS.items():
        schema = GAME.order_schema(kind)
        assert set(schema["properties"]) == set(keys) | {"kind"}, kind
        assert schema["additionalProperties"] is False
