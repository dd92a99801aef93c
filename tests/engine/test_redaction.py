"""Redaction, generically, over every registered title.

1. A state key nobody declared never leaves the engine: not in any view, request, event,
   refusal message, summary, picture or sentence.
2. Differential: for hundreds of states per title, change any declared hidden part (a
   seat's own value, or a secret), and nothing another viewer receives changes: its
   view, summary, picture, requests (with their choices), and the refusal messages of
   its orders.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from engine.core import Game, IllegalOrder, titles
from engine.core.bots import play_game
from engine.core.info import Fields, Hidden, Own, Seats, Secret, size

TITLE_IDS = sorted(titles())
MARK = "UNDECLARED-7f3a"
GARBAGE: list[Any] = [{}, {"kind": "nope"}, {"zzz": 1}, [], "x"]


def names_of(seats: int) -> list[str]:
    return [f"Player{i}" for i in range(seats)]


def sampled_states(game: Game, games: int, every: int) -> Iterator[dict[str, Any]]:
    """States from seeded bot games of every seat count, one every `every` steps."""
    bots = game.bots()
    kinds = sorted(bots)
    for g in range(games):
        seats = game.min_seats + g % (game.max_seats - game.min_seats + 1)
        states: list[dict[str, Any]] = []
        play_game(game, seats, {i: bots[kinds[(i + g) % len(kinds)]](f"r{g}/{i}") for i in range(seats)},
                  seed=f"redaction-{g}", on_step=lambda s, o, e, keep=states: keep.append(s))
        yield from states[g % every::every]
        yield states[-1]


def viewers(state: dict[str, Any]) -> list[Any]:
    return [*range(state["seats"]), "public"] if "seats" in state else ["public"]


def outputs(game: Game, state: dict[str, Any], viewer: Any, candidates: list[Any],
            picture: bool = True) -> dict[str, Any]:
    """Everything `viewer` receives about `state`."""
    names = names_of(state.get("seats", 0) or 8)
    view = game.view(state, viewer)
    out: dict[str, Any] = {"view": view, "summary": game.summary(view, names)}
    if picture:
        out["picture"] = game.picture(view, names)
    if isinstance(viewer, int):
        mine = [r for r in game.requests(state) if r.seat == viewer]
        out["requests"] = [r.as_dict() for r in mine]
        out["asked"] = [game.describe_request(r, view, names) for r in mine]
        refusals = []
        for order in candidates:
            try:
                game.validate(state, viewer, order)
                refusals.append(None)
            except IllegalOrder as exc:
                refusals.append((exc.code, exc.message))
        out["refusals"] = refusals
        out["prompts"] = prompts(game, state, viewer, bool(mine))
    return out


def prompts(game: Game, state: dict[str, Any], seat: int, asked: bool) -> list[Any]:
    """The seat's prompts (its open decision and its unprompted actions), with the next
    level after each of the first few options: what a page, mail or CLI shows it."""
    out: list[Any] = []
    for fn, on in ((game.prompt, asked), (game.action_prompt, True)):
        if not on:
            continue
        first = fn(state, seat, [])
        out.append(None if first is None else first.as_dict())
        if first is not None and first.ask is not None and first.ask.options:
            for o in first.ask.options[:4]:
                nxt = fn(state, seat, [o.value])
                out.append(None if nxt is None else nxt.as_dict())
    return out


def perturbed(value: Any, others: list[Any], vocabulary: set[str]) -> list[Any]:
    """Different values of the same shape: another seat's value, or small changes."""
    out: list[Any] = [o for o in others if o != value][:1]
    if isinstance(value, bool):
        out.append(not value)
    elif isinstance(value, int):
        out.append(value + 1300)
    elif isinstance(value, dict):
        counts = {k: v for k, v in value.items() if isinstance(v, int) and not isinstance(v, bool)}
        keys = sorted(counts)
        if len(keys) >= 2 and counts[keys[0]] > 0:
            out.append({**value, keys[0]: counts[keys[0]] - 1, keys[1]: counts[keys[1]] + 1})
        elif keys:
            out.append({**value, keys[0]: counts[keys[0]] + 1})
        for other in sorted(vocabulary - set(value))[:1]:  # the same count of another kind
            if keys:
                out.append({**{k: v for k, v in value.items() if k != keys[0]}, other: value[keys[0]]})
    elif isinstance(value, list) and len(value) > 1:
        out.append(list(reversed(value)) if list(reversed(value)) != value else value[1:])
    return out


def get_path(state: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        state = state[key]
    return state


def with_value(state: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    s = copy.deepcopy(state)
    get_path(s, path[:-1])[path[-1]] = value
    return s


def analogous(game: Game, state: dict[str, Any], hidden: Hidden) -> list[Any]:
    """The same field of the other seats (realistic values to swap in)."""
    out = []
    for h in game.information.hidden_paths(state):
        if h.owner is not None and h.owner != hidden.owner and len(h.path) == len(hidden.path) \
                and h.path[0] == hidden.path[0] and h.path[2:] == hidden.path[2:]:
            out.append(get_path(state, h.path))
    return out


@pytest.mark.parametrize("tid", TITLE_IDS)
def test_changing_a_hidden_part_changes_nothing_others_receive(tid: str) -> None:
    check_differential(titles()[tid], games=12, every=6, least=1000)


def test_the_differential_check_catches_a_leak() -> None:
    """A title whose requests show every seat's money must fail the check."""
    base = titles()["haendler"]

    class Leaky(type(base)):  # type: ignore[misc]
        def requests(self, state: dict[str, Any]) -> list[Any]:
            out = super().requests(state)
            for r in out:
                r.choices = {**r.choices, "spy": [p["money"] for p in state["players"]]}
            return out

    with pytest.raises(AssertionError, match="changed requests"):
        check_differential(Leaky(), games=1, every=20, least=1)


def check_differential(game: Game, games: int, every: int, least: int) -> None:
    tid = game.id
    info = game.information
    checked = 0
    for n, state in enumerate(sampled_states(game, games=games, every=every)):
        if info.is_over(state):
            continue
        requests = game.requests(state)
        candidates: list[Any] = [*GARBAGE, *(game.default_order(state, r.seat) for r in requests)]
        paths = info.hidden_paths(state)
        vocabulary = {k for h in paths if isinstance(v := get_path(state, h.path), dict) for k in v}
        for hidden in paths:
            value = get_path(state, hidden.path)
            for new in perturbed(value, analogous(game, state, hidden), vocabulary):
                part = hidden.part
                if isinstance(part, Own | Secret) and part.count_as \
                        and size(new, part.count) != size(value, part.count):
                    continue  # its size is public
                changed = with_value(state, hidden.path, new)
                for viewer in viewers(state):
                    if info.may_see(hidden, state, viewer):
                        continue
                    picture = n % 5 == 0  # the picture is the slowest output; a sample suffices
                    before = outputs(game, state, viewer, candidates, picture)
                    after = outputs(game, changed, viewer, candidates, picture)
                    for key in before:
                        assert before[key] == after[key], (
                            f"{tid}: changing {hidden.path} (owner {hidden.owner}) changed {key} for {viewer!r}")
                    checked += 1
    assert checked >= least, f"only {checked} comparisons: the sample is too thin"


def plant(game: Game, state: dict[str, Any]) -> dict[str, Any]:
    """`state` with an undeclared key at the top, in every seat entry and in every
    declared object, all holding MARK."""
    s = copy.deepcopy(state)
    s["zz_undeclared"] = MARK

    def walk(part: Any, value: Any) -> None:
        if isinstance(part, Fields) and isinstance(value, dict):
            value["zz_undeclared"] = MARK
            for key, sub in part.fields.items():
                if key in value:
                    walk(sub, value[key])
        elif isinstance(part, Seats):
            entries = value if isinstance(value, list) else list(value.values()) if isinstance(value, dict) else []
            for entry in entries:
                walk(part.each, entry)

    walk(Fields(game.information.fields), s)
    return s


@pytest.mark.parametrize("tid", TITLE_IDS)
def test_an_undeclared_key_never_leaves_the_engine(tid: str) -> None:
    game = titles()[tid]
    for state in sampled_states(game, games=3, every=25):
        s = plant(game, state)
        requests = game.requests(s)
        names = names_of(s.get("seats", 8))
        shown: list[Any] = []
        for viewer in [*viewers(s), "admin"]:
            view = game.view(s, viewer)
            shown += [view, game.summary(view, names), game.picture(view, names)]
        for r in requests:
            shown += [r.as_dict(), game.describe_request(r, game.view(s, r.seat), names)]
            for junk in [*GARBAGE, game.default_order(s, r.seat)]:
                try:
                    game.validate(s, r.seat, junk)
                except IllegalOrder as exc:
                    shown.append(exc.as_dict())
        if requests:
            _, events = game.resolve(s, {r.seat: game.default_order(s, r.seat) for r in requests})
            shown += [events, [game.describe_event(e, names) for e in events]]
        text = json.dumps(shown, ensure_ascii=False, default=str)
        assert MARK not in text and "zz_undeclared" not in text, f"{tid}: an undeclared key leaked"
