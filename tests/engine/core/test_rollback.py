"""`engine.core.rollback` (issue 25): the replay of a line of play with rollbacks, what the
steps a rollback would undo revealed (a sealed step, a private event, a Secret or NEVER
change: a draw, a shuffle, a roll), and `verify_history` on a history with a rollback
entry, the abandoned line replayed and checked. Pure: no service."""

from __future__ import annotations

import copy
from typing import Any

from engine.core import registry
from engine.core.rollback import hidden_values, replay, revealing
from engine.core.seed import state_digest
from engine.core.verify import record, verify_history


def play(title: str, seats: int, options: dict[str, Any], seed: int, n: int, start: Any = None,
         first: int = 1) -> tuple[Any, list[dict[str, Any]]]:
    """`n` steps of default orders from `start` (a new setup from `seed` when None),
    numbered from `first`: the state after them and the history records."""
    game = registry.get(title)
    state = start if start is not None else game.setup(seats, options, seed)
    steps = []
    for i in range(n):
        reqs = game.requests(state)
        if not reqs:
            break
        orders = {r.seat: game.default_order(state, r.seat) for r in reqs}
        state, events = game.step(state, orders)
        steps.append({"phase": first + i, "orders": {str(s): o for s, o in orders.items()},
                      "state_sha256": state_digest(state), "events": events})
    return state, steps


def test_rollback_judges_die_haendler_steps() -> None:
    """Die Händler, light, 2 seats: four buys reveal nothing; the fifth step is a sealed bid."""
    game = registry.get("haendler")
    _, steps = play("haendler", 2, {"light": True}, 7, 6)
    line = replay(game, 2, {"light": True}, 7, steps)
    assert line.standing == [1, 2, 3, 4, 5, 6] and line.open_phase == 7
    assert [(r.phase, r.why) for r in revealing(game, line, 2)] == [(5, "sealed")]  # the master's step: open
    assert [(r.phase, r.why) for r in revealing(game, line, 5)] == [(5, "sealed")]
    _, four = play("haendler", 2, {"light": True}, 7, 4)
    short = replay(game, 2, {"light": True}, 7, four)
    assert revealing(game, short, 1) == []
    assert [(r.phase, r.why) for r in revealing(game, short, 1, open_sealed_orders=True)] == [(5, "sealed_orders")]


def test_rollback_judges_a_roll_of_the_dice_as_hidden() -> None:
    """Auf Achse keeps its RNG in a NEVER part: a step that rolls changes it."""
    game = registry.get("aufachse")
    state, steps = play("aufachse", 2, {"kids": True}, 7, 6)
    line = replay(game, 2, {"kids": True}, 7, steps)
    changed = [p for p in line.standing if "hidden_change" in line.revealed.get(p, [])]
    assert changed, line.revealed
    assert hidden_values(game.information, state) != hidden_values(game.information, game.setup(2, {"kids": True}, 7))


def test_rollback_history_verifies_and_a_tampered_abandoned_step_does_not() -> None:
    title, options, seed = "haendler", {"light": True}, 7
    game = registry.get(title)
    _, played = play(title, 2, options, seed, 6)  # steps 1..6; step 7 open
    line = replay(game, 2, options, seed, played)
    # roll back at step 7 to step 5: step 8 opens with step 5's state
    rb = {"rollback": {"to_phase": 5, "at_phase": 7, "new_phase": 8, "orders": {}, "actions": []}}
    final, rest = play(title, 2, options, seed, 400, start=line.openings[5], first=8)
    assert not game.requests(final)
    doc = record(title, 2, options, seed, [], game.result(final))
    doc["steps"] = ([{**s, "abandoned": True} if s["phase"] >= 5 else s for s in played] + [rb] + rest)
    report = verify_history(doc)
    assert report.ok, report.problems
    assert report.steps == 4 + len(rest) and report.abandoned == 2
    assert report.lines[-1].startswith(f"Verified: {4 + len(rest)} steps of the game that stands; 2 steps rolled "
                                       "back at step 7 to step 5 replayed as well")
    # the replay with rollbacks rebuilds the final state the same way
    assert replay(game, 2, options, seed, doc["steps"]).state == final
    # an abandoned step's orders changed: found, as in the game that stands
    bad = copy.deepcopy(doc)
    bid = bad["steps"][4]
    assert bid["phase"] == 5 and bid["abandoned"]
    seat = next(iter(bid["orders"]))
    bid["orders"][seat] = {**bid["orders"][seat], "bid": 1}
    assert not verify_history(bad).ok
    # marks that do not match what the rollbacks undid, and a rollback that cannot be
    for change in (lambda d: d["steps"][3].update(abandoned=True),
                   lambda d: d["steps"][5].pop("abandoned"),
                   lambda d: d["steps"][6]["rollback"].update(to_phase=9),
                   lambda d: d["steps"][6]["rollback"].update(at_phase=6),
                   lambda d: d["steps"][6]["rollback"].update(new_phase=9)):
        bad = copy.deepcopy(doc)
        change(bad)
        assert not verify_history(bad).ok
