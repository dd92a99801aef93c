"""No event shows a hidden value to a viewer the view would not show it to, unless the
title declares that event a ruled reveal (`Game.reveals`).

For every registered title, random bot games at every seat count: before and after each
step, every hidden value of the state (`Information.hidden_paths`: each seat's own
values and the secrets) is looked for in the step's events, by its field name at any
depth of the event with an equal value. An event carrying it to a viewer (a seat it is
visible to, or the public for an event visible to all) who may not see it in either
state is a leak, unless `Game.reveals` names that event type and field.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from engine.core import Game, titles
from engine.core.bots import play_game
from engine.core.events import visible_to

SEEDS = range(6)


def _fields(obj: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[str, Any]]:
    """(field name, value) of every object member of an event, at any depth."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k not in ("type", "visible_to"):
                yield str(k), v
                yield from _fields(v, (*path, k))
    elif isinstance(obj, list):
        for v in obj:
            yield from _fields(v, path)


def _leaks(game: Game, before: Any, after: Any, events: list[dict[str, Any]]) -> list[str]:
    info = game.information
    seats = len(after.get("players") or []) or None
    out: list[str] = []
    for state in (before, after):
        for hidden in info.hidden_paths(state):
            name = next((str(k) for k in reversed(hidden.path) if isinstance(k, str)), None)
            if name is None:
                continue
            value = state
            for k in hidden.path:
                value = value[k]
            if value in (None, 0, [], {}, "") or isinstance(value, bool):
                continue  # nothing to give away in an empty or zero value that a count shows
            for ev in events:
                if name in game.reveals.get(ev["type"], ()):
                    continue
                viewers: list[Any] = list(range(seats or 8))
                if ev["visible_to"] == "all":
                    viewers.append("public")
                for viewer in viewers:
                    if not visible_to(ev, viewer):
                        continue
                    if info.may_see(hidden, before, viewer) or info.may_see(hidden, after, viewer):
                        continue
                    if any(k == name and v == value for k, v in _fields(ev)):
                        out.append(f"{ev['type']} shows {name}={value!r} of {hidden.owner} to {viewer}")
    return out


@pytest.mark.parametrize("tid", sorted(titles()))
def test_no_event_carries_a_hidden_value_unless_a_rule_reveals_it(tid: str) -> None:
    game = titles()[tid]
    leaks: list[str] = []
    for seats in range(game.min_seats, game.max_seats + 1):
        for seed in SEEDS:
            kinds = game.bots()
            bots = {i: kinds["random"](f"reveal/{seed}/{i}") for i in range(seats)}
            prev: dict[str, Any] = {}

            def on_step(state: Any, orders: Any, events: list[dict[str, Any]], prev: dict[str, Any] = prev) -> None:
                leaks.extend(_leaks(game, prev["state"], state, events))
                prev["state"] = state

            prev["state"] = game.setup(seats, None, f"reveal/{seed}")
            play_game(game, seats, bots, f"reveal/{seed}", on_step=on_step)
    assert not leaks, "\n".join(sorted(set(leaks))[:40])


def test_declared_reveals_name_real_events() -> None:
    """A title's `reveals` names event types it emits (a typo would hide a leak)."""
    for tid, game in titles().items():
        seen: set[str] = set()
        for seats in range(game.min_seats, game.max_seats + 1):
            for seed in SEEDS:
                kinds = game.bots()
                bots = {i: kinds["random"](f"reveal/{seed}/{i}") for i in range(seats)}
                seen |= {e["type"] for e in play_game(game, seats, bots, f"reveal/{seed}").events}
        assert set(game.reveals) <= seen, (tid, set(game.reveals) - seen)
