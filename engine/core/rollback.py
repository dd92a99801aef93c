"""Rolling a game back: replaying a line of play that holds rollbacks, and judging whether
the steps a rollback would undo revealed anything hidden. Pure and deterministic; names no
title.

A game's history (the `steps` of `kontor-history/1`, `engine.core.verify`) lists every
step in the order it was played. A rollback entry, `{"rollback": {"to_phase": k,
"at_phase": P, "new_phase": P + 1, "orders": {...}, "actions": [...]}}`, returns the game
to the state step k had when it opened (after step k - 1 was committed: before any
unprompted action of step k and before its orders) and opens it again as step P + 1. Step
numbers are never reused. The steps k .. P - 1 played before it are the abandoned line
(and so is the open step P, whose stored orders, `orders`, were discarded unresolved and
whose unprompted actions, `actions`, were undone with it). A state is never stored for a
rollback: the replay rebuilds it from the seed, which is what makes it trustworthy.

Whether a rollback needs every human seat's consent (`revealing`): the game goes back to
a state whose randomness (the RNG state, a deck's order) is the same, so whatever a step
after it dealt would be dealt again, and whatever a seat learnt privately or by a sealed
window stays known. A step to be undone counts as revealing when

* it was sealed: its orders were secret until it resolved (`sealed`);
* it, or an unprompted action in it, made an event not every seat saw (an event whose
  `visible_to` is a list of seats: `private_event`);
* it, or an action in it, changed a `Secret` or `NEVER` part of the state as the title's
  `Information` declares it: a draw, a shuffle, a roll (`hidden_change`);

and the open step counts when it is sealed and orders are stored for it (`sealed_orders`:
a seat that answered a sealed window has committed to something the others must not
learn by its being asked again), or when an action in it did one of the above.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.core.game import Game
from engine.core.info import NEVER, Fields, Information, Part, Seats, Secret
from engine.core.types import State

#: Why a step to be undone counts as revealing (see the module's docstring).
REASONS = ("sealed", "private_event", "hidden_change", "sealed_orders")


@dataclass(frozen=True)
class Revealed:
    """A step (its number) that revealed something hidden, and why (one of `REASONS`)."""

    phase: int
    why: str


@dataclass
class Line:
    """A replayed line of play: the state after the last entry, the state each step had
    when it opened (by step number, abandoned steps too), the steps of the game that
    stands in order, and per step whether it was sealed and what it revealed."""

    state: State
    openings: dict[int, State] = field(default_factory=dict)
    standing: list[int] = field(default_factory=list)
    abandoned: list[int] = field(default_factory=list)
    revealed: dict[int, list[str]] = field(default_factory=dict)
    #: The number of the step that is open after the last entry.
    open_phase: int = 1


def is_rollback(entry: Any) -> bool:
    """Whether a history entry is a rollback entry (else it is a step)."""
    return isinstance(entry, Mapping) and isinstance(entry.get("rollback"), Mapping)


def apply_action(game: Game, state: State, act: Mapping[str, Any]) -> tuple[State, list[dict[str, Any]]]:
    """Apply one recorded unprompted action (`seat`, `action`, `submitted`: the orders
    stored when it was taken) as the service applied it."""
    submitted = {int(k): v for k, v in (act.get("submitted") or {}).items()}
    return game.act(state, int(act["seat"]), act["action"], submitted)


def replay(game: Game, seats: int, options: Mapping[str, Any] | None, seed: int | str,
           entries: Iterable[Mapping[str, Any]], judge: bool = True) -> Line:
    """Replay `entries` (steps with `phase`, `orders` and optional `actions`; rollback
    entries) from a new setup from `seed`. Raises what the engine raises on an illegal
    record (the service's own history never holds one; `verify_history` reports them).
    `judge`: note what each step revealed (`Line.revealed`, for `revealing`); a caller
    that wants the states only spares that work."""
    state = game.setup(seats, options, seed)
    line = Line(state, {1: state})
    for entry in entries:
        if is_rollback(entry):
            rb = entry["rollback"]
            at, to, new = int(rb["at_phase"]), int(rb["to_phase"]), int(rb["new_phase"])
            for act in rb.get("actions") or []:
                after, made = apply_action(game, state, act)
                if judge:
                    _note(line, game, at, state, after, made)
                state = after
            line.abandoned += [p for p in line.standing if p >= to] + [at]
            line.standing = [p for p in line.standing if p < to]
            state = line.openings[to]
            line.openings[new] = state
            line.open_phase = new
            continue
        phase = int(entry.get("phase", line.open_phase))
        if judge and any(r.sealed for r in game.requests(state)):
            line.revealed.setdefault(phase, []).append("sealed")
        for act in entry.get("actions") or []:
            after, made = apply_action(game, state, act)
            if judge:
                _note(line, game, phase, state, after, made)
            state = after
        after, made = game.resolve_validated(state, {int(s): o for s, o in entry["orders"].items()})
        if judge:
            _note(line, game, phase, state, after, made)
        state = after
        line.standing.append(phase)
        line.open_phase = phase + 1
        line.openings[phase + 1] = state
    line.state = state
    return line


def revealing(game: Game, line: Line, to_phase: int, open_actions: Iterable[Mapping[str, Any]] = (),
              open_sealed_orders: bool = False) -> list[Revealed]:
    """What the steps a rollback to `to_phase` would undo revealed: the standing steps
    from `to_phase` on (as `line` replayed them), and the open step (`line.open_phase`):
    its unprompted actions so far (`open_actions`, replayed from `line.state`) and whether
    sealed orders are stored for it. Empty: nothing hidden was revealed, and the rollback
    may apply without anyone's consent."""
    out = [Revealed(p, why) for p in line.standing if p >= to_phase for why in dict.fromkeys(line.revealed.get(p, []))]
    state = line.state
    mine: list[str] = []
    for act in open_actions:
        after, made = apply_action(game, state, act)
        mine += _reasons(game, state, after, made)
        state = after
    if open_sealed_orders:
        mine.append("sealed_orders")
    out += [Revealed(line.open_phase, why) for why in dict.fromkeys(mine)]
    return out


def hidden_values(info: Information, state: State) -> list[tuple[tuple[Any, ...], Any]]:
    """Every `Secret` and `NEVER` value of `state` by its path (the parts a replay would
    deal again: a deck's order, the RNG state), in declaration order."""
    out: list[tuple[tuple[Any, ...], Any]] = []
    _walk(Fields(info.fields), state, (), out)
    return out


# -- internals ---------------------------------------------------------------------------
def _note(line: Line, game: Game, phase: int, before: State, after: State, made: list[dict[str, Any]]) -> None:
    for why in _reasons(game, before, after, made):
        found = line.revealed.setdefault(phase, [])
        if why not in found:
            found.append(why)


def _reasons(game: Game, before: State, after: State, made: list[dict[str, Any]]) -> list[str]:
    out = []
    if any(ev.get("visible_to", "all") != "all" for ev in made):
        out.append("private_event")
    if hidden_values(game.information, before) != hidden_values(game.information, after):
        out.append("hidden_change")
    return out


def _walk(part: Part, value: Any, path: tuple[Any, ...], out: list[tuple[tuple[Any, ...], Any]]) -> None:
    if part is NEVER or isinstance(part, Secret):
        out.append((path, value))
    elif isinstance(part, Fields) and isinstance(value, Mapping):
        for key, sub in part.fields.items():
            if key in value:
                _walk(sub, value[key], (*path, key), out)
    elif isinstance(part, Seats):
        if isinstance(value, list):
            for i, v in enumerate(value):
                _walk(part.each, v, (*path, i), out)
        elif isinstance(value, Mapping):
            for k, v in value.items():
                _walk(part.each, v, (*path, k), out)
