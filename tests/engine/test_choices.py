"""Every registered title offers each decision in the player's terms (engine.core.choices).

Over seeded bot games of every title (every seat count, the variants on and off):

* every open request has a prompt, and every prompt's texts are words (no ids, JSON or
  `null`: tests/playertext.py);
* every option of a decision's first ask can be completed, and any legal sequence of
  picks (random options, numbers at their bounds and between, sheets) gives an order
  that `validate` accepts, with a sentence in words;
* a pick not offered is refused with `bad_pick` and a seat not asked with `not_your_turn`;
* the same for unprompted actions (`action_prompt`): every complete action is accepted by
  `act`, which keeps who is asked in the open step.

That a prompt shows a seat nothing it may not see is the redaction test's (prompts are
among the outputs it compares: tests/engine/test_redaction.py).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

from engine.core import Game, IllegalOrder, titles
from engine.core.bots import play_game
from engine.core.choices import Ask, Prompt, named
from tests.engine.test_contract import _variants
from tests.playertext import problems

TITLE_IDS = sorted(titles())
#: Titles whose rules let a seat act unprompted (Fantasy Business: FD12 instants, V4 trading).
ACTING: set[str] = {"fantasy"}
GAMES = 3
NAMES = ["Miranda", "Christopher", "Henry", "Jack", "Courtney", "Helen", "Ada", "Bob"]
MAX_PICKS = 60


def states(game: Game, options: dict[str, Any], games: int = GAMES, every: int = 3) -> Iterator[dict[str, Any]]:
    bots = game.bots()
    kinds = sorted(bots)
    for g in range(games):
        seats = game.min_seats + g % (game.max_seats - game.min_seats + 1)
        kept: list[dict[str, Any]] = []
        play_game(game, seats, {i: bots[kinds[(i + g) % len(kinds)]](f"c{g}/{i}") for i in range(seats)},
                  seed=f"choices-{g}", options=options, on_step=lambda s, o, e, keep=kept: keep.append(s))
        yield from kept[g % every::every]


def random_pick(ask: Ask, rng: random.Random) -> Any:
    if ask.options:
        return rng.choice(ask.options).value
    if ask.number is not None:
        return number_pick(ask.number, rng)
    return {n.key: number_pick(n, rng) for n in ask.sheet}


def number_pick(n: Any, rng: random.Random) -> Any:
    r = rng.random()
    if n.named and r < 0.25:
        return rng.choice(n.named).value
    span = (n.max - n.min) // n.step
    k = 0 if r < 0.4 else span if r < 0.55 else rng.randint(0, span)
    return n.min + k * n.step


def texts(p: Prompt) -> list[str]:
    out = [p.say, p.sentence, *p.chosen]
    if p.ask is not None:
        out.append(p.ask.question)
        for o in p.ask.options:
            out += [o.label, o.hint, *o.words]
        nums = [p.ask.number] if p.ask.number is not None else list(p.ask.sheet)
        for n in nums:
            out += [n.label, n.unit, *(o.label for o in n.named)]
    return [t for t in out if t]


def check_words(p: Prompt) -> None:
    for t in texts(p):
        assert not problems(t), problems(t)
        assert "\u2063" not in t, f"a seat left unnamed in {t!r}"


def complete(prompt: Any, picks: list[Any], rng: random.Random, stop_early: float = 0.2) -> Prompt:
    """Pick at random from `picks` on until the order is complete (stopping early, when
    the prompt already has an order, with chance `stop_early`)."""
    p: Prompt = prompt(picks)
    for _ in range(MAX_PICKS):
        check_words(p)
        if p.ask is None:
            assert p.order is not None, f"a prompt with nothing more to pick has no order: {p}"
            return p
        if p.order is not None and rng.random() < stop_early:
            return p
        picks = [*picks, random_pick(p.ask, rng)]
        p = prompt(picks)
    raise AssertionError(f"no order after {MAX_PICKS} picks: {p}")


def cases() -> list[Any]:
    out = []
    for tid in TITLE_IDS:
        for options in _variants(titles()[tid]):
            out.append(pytest.param(tid, options, id=f"{tid}-{json.dumps(options, sort_keys=True)}"))
    return out


@pytest.mark.parametrize(("tid", "options"), cases())
def test_every_request_has_a_prompt_whose_orders_validate(tid: str, options: dict[str, Any]) -> None:
    game = titles()[tid]
    rng = random.Random(f"{tid}{options}")
    seen_kinds: set[str] = set()
    for state in states(game, options):
        for req in game.requests(state):
            seen_kinds.add(req.kind)

            def prompt(picks: list[Any], seat: int = req.seat, state: dict[str, Any] = state,
                       kind: str = req.kind) -> Prompt:
                p = game.prompt(state, seat, picks)
                assert p is not None, f"{tid} offers no prompt for a {kind} request"
                return named(p, NAMES)

            first = prompt([])
            assert first.picks == ()
            assert all(f"Seat {n}" not in t for t in texts(first) for n in range(8)), "seats are named"
            check_words(first)
            assert first.ask is not None or first.order is not None
            # every option of the first ask can be completed into a legal order
            firsts = [[o.value] for o in first.ask.options] if first.ask and first.ask.options else [[]]
            for start in firsts[:40]:
                p = complete(prompt, start, rng)
                assert p.order is not None
                game.validate(state, req.seat, p.order)
                assert p.sentence, "a complete order has a sentence"
            # random walks
            for _ in range(3):
                p = complete(prompt, [], rng)
                game.validate(state, req.seat, p.order)
            # a pick that was not offered is refused
            if first.ask is not None:
                for bad in ("zzz-not-offered", 10**9, True, None, [1], {"x": 1}):
                    with pytest.raises(IllegalOrder) as exc:
                        game.prompt(state, req.seat, [bad])
                    assert exc.value.code == "bad_pick"
        asked = {r.seat for r in game.requests(state)}
        for seat in range(state.get("seats", 0)):
            if seat not in asked:
                with pytest.raises(IllegalOrder) as exc:
                    game.prompt(state, seat, [])
                assert exc.value.code == "not_your_turn"
    assert seen_kinds


@pytest.mark.parametrize(("tid", "options"), cases())
def test_every_offered_action_is_accepted_and_keeps_the_open_step(tid: str, options: dict[str, Any]) -> None:
    game = titles()[tid]
    rng = random.Random(f"act{tid}{options}")
    offered = 0
    for state in states(game, options, every=5):
        before = [r.as_dict() for r in game.requests(state)]
        for seat in range(state.get("seats", 0)):
            raw = game.action_prompt(state, seat, [])
            if raw is None:
                continue
            first = named(raw, NAMES)
            check_words(first)
            assert first.ask is not None and first.ask.options
            offered += 1
            for o in first.ask.options:
                def prompt(picks: list[Any], seat: int = seat, state: dict[str, Any] = state) -> Prompt:
                    p = game.action_prompt(state, seat, picks)
                    assert p is not None
                    return named(p, NAMES)

                p = complete(prompt, [o.value], rng, stop_early=0)
                after, events = game.act(state, seat, p.order, {})
                kept = [{k: v for k, v in r.as_dict().items() if k != "choices"} for r in game.requests(after)]
                assert kept == [{k: v for k, v in r.items() if k != "choices"} for r in before] or after.get("over")
                assert events, "an action is announced"
            with pytest.raises(IllegalOrder) as exc:
                game.action_prompt(state, seat, ["zzz-not-offered"])
            assert exc.value.code == "bad_pick"
    assert bool(offered) == (tid in ACTING), f"{tid} offered {offered} actions"


def test_a_bare_number_that_is_also_an_options_words_is_refused_as_ambiguous() -> None:
    """A mail lists "1. No level / 2. 1 level / 3. 2 levels": a reply "2" may mean option 2
    or "2 levels" (and "1" option 1 or "1 level"), so it is refused in words, naming both;
    the words are read, and a number no other option starts with is still an option's number."""
    from engine.core.choices import Ask, Option, Prompt, read_words
    from engine.core.errors import IllegalOrder

    ask = Ask("levels", "How many levels?",
              options=(Option(0, "No level"), Option(1, "1 level"), Option(2, "2 levels")))

    def prompt(picks: list[Any]) -> Prompt:
        return Prompt(say="Buy levels", picks=tuple(picks), ask=None if picks else ask,
                      order={"levels": picks[0]} if picks else None)

    with pytest.raises(IllegalOrder) as err:
        read_words("2", prompt)
    assert err.value.code == "bad_pick"
    assert "could be option 2 (1 level) or 2 levels" in str(err.value)
    assert read_words("2 levels", prompt).order == {"levels": 2}
    with pytest.raises(IllegalOrder, match="could be option 1 \\(No level\\) or 1 level"):
        read_words("1", prompt)
    assert read_words("3", prompt).order == {"levels": 2}
