"""Every order and action a title accepts can be said in words (`Game.describe_order`,
`Game.describe_action`), the way its prompt says it.

Over seeded bot games of every title (every seat count, the variants on and off):

* for every open request, the default order (what a missed deadline submits) is said in
  words: not empty, no ids, JSON or `null` (tests/playertext.py), every seat named once
  the channel names it (`engine.core.choices.named`);
* every order a prompt completes (every option of the first ask, and random walks that
  may stop as soon as the picks make an order) is said exactly as the prompt's
  `sentence` says it: the same picks give the same words;
* every order the bots gave is said in words;
* the same for unprompted actions (`describe_action` of every action an action prompt
  completes equals its sentence).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from engine.core import Game, titles
from engine.core.bots import play_game
from engine.core.choices import Prompt, named
from engine.core.types import Order, State
from tests.engine.test_choices import ACTING, NAMES, cases, complete
from tests.playertext import problems

GAMES = 3


def said(text: str) -> str:
    """`text` as a channel shows it: every seat named (`named`)."""
    return named(Prompt(say=text), NAMES).say


def check_words(text: str, what: str) -> str:
    """`text` (a title's words for an order, unnamed) named; fails unless it is words."""
    shown = said(text)
    assert shown.strip(), f"no words for {what}"
    assert not problems(shown), (what, problems(shown))
    assert "\u2063" not in shown, f"a seat left unnamed in {shown!r}"
    assert all(f"Seat {n}" not in shown for n in range(8)), f"a seat without its name in {shown!r}"
    return shown


def steps(game: Game, options: dict[str, Any], games: int = GAMES) -> Iterator[tuple[State, dict[int, Order]]]:
    """Each step of seeded bot games: the state before it and the bots' orders for it."""
    bots = game.bots()
    kinds = sorted(bots)
    for g in range(games):
        seats = game.min_seats + g % (game.max_seats - game.min_seats + 1)
        seed = f"words-{g}"
        kept: list[tuple[State, dict[int, Order]]] = []
        before = [game.setup(seats, options, seed)]

        def keep(s: State, o: dict[int, Order], e: Any, kept: list[Any] = kept, before: list[State] = before) -> None:
            kept.append((before[0], o))
            before[0] = s

        play_game(game, seats, {i: bots[kinds[(i + g) % len(kinds)]](f"w{g}/{i}") for i in range(seats)},
                  seed=seed, options=options, on_step=keep)
        yield from kept


@pytest.mark.parametrize(("tid", "options"), cases())
def test_every_order_is_said_as_its_prompt_says_it(tid: str, options: dict[str, Any]) -> None:
    game = titles()[tid]
    rng = random.Random(f"words{tid}{options}")
    described = 0
    for n, (state, orders) in enumerate(steps(game, options)):
        for seat, order in orders.items():
            check_words(game.describe_order(state, seat, order), f"{tid}: the bot's order {order}")
            described += 1
        if n % 3:
            continue
        for req in game.requests(state):
            seat = req.seat
            default = game.default_order(state, seat)
            game.validate(state, seat, default)
            check_words(game.describe_order(state, seat, default), f"{tid}: the default order {default}")

            def prompt(picks: list[Any], seat: int = seat, state: State = state) -> Prompt:
                p = game.prompt(state, seat, picks)
                assert p is not None
                return named(p, NAMES)

            first = prompt([])
            firsts = [[o.value] for o in first.ask.options] if first.ask and first.ask.options else [[]]
            walks = [(start, 0.0) for start in firsts[:40]] + [([], 0.3)] * 3
            for start, stop in walks:
                p = complete(prompt, start, rng, stop_early=stop)
                assert p.order is not None
                words = check_words(game.describe_order(state, seat, p.order), f"{tid}: the order {p.order}")
                assert words == p.sentence, f"{tid}: {p.order} after picks {p.picks}"
    assert described


@pytest.mark.parametrize(("tid", "options"), [c for c in cases() if c.values[0] in ACTING])
def test_every_action_is_said_as_its_prompt_says_it(tid: str, options: dict[str, Any]) -> None:
    game = titles()[tid]
    rng = random.Random(f"act-words{tid}{options}")
    offered = 0
    for n, (state, _) in enumerate(steps(game, options)):
        if n % 5:
            continue
        for seat in range(state.get("seats", 0)):
            first = game.action_prompt(state, seat, [])
            if first is None:
                continue
            assert first.ask is not None
            for o in first.ask.options:
                def prompt(picks: list[Any], seat: int = seat, state: State = state) -> Prompt:
                    p = game.action_prompt(state, seat, picks)
                    assert p is not None
                    return named(p, NAMES)

                p = complete(prompt, [o.value], rng, stop_early=0)
                assert p.order is not None
                game.act(state, seat, p.order, {})
                words = check_words(game.describe_action(state, seat, p.order), f"{tid}: the action {p.order}")
                assert words == p.sentence, f"{tid}: {p.order} after picks {p.picks}"
                offered += 1
    assert offered
