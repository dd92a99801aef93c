"""A seat's open decision as a mail offers it, and a reply read back (issue 21, Deliver 4).

The title describes the decision (`Game.prompt`, `engine.core.choices`); this module only
packs it for a notice and reads a person's reply against it, so no title is named here:

* `offer`: the first level of the decision (what to do, the question, the options in
  words or the number's bounds or the sheet), and, for a decision of several parts, an
  example reply of one plain line per part that reads back to a whole order, with that
  order in words; and the default order in words where one of the first options makes it.
* `actions`: what the seat may do unprompted now (`Game.action_prompt`), first level.
* `read`: a reply's lines as picks (`engine.core.choices.read_words`: option numbers,
  an option's words, the order in plain words with display names, sheets "Tuch 5, Wein
  6"), after the picks an earlier incomplete reply made.

A title's failure never takes a mail down: `offer` and `actions` answer None (logged).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from engine.core.choices import Ask, Number, Option, Prompt, name_seats, named, read_words
from engine.core.errors import IllegalOrder

if TYPE_CHECKING:
    from engine.core.game import Game

log = logging.getLogger("kontor.offer")

#: How many parts an example reply walks at most.
MAX_PARTS = 12
#: How many first options are tried for the one the default order is.
DEFAULT_TRIES = 40


def prompt_of(game: Game, state: Any, seat: int, action: bool = False,
              names: Sequence[str] | None = None) -> Callable[[list[Any]], Prompt]:
    """`picks -> Prompt` of `seat`'s open decision (or, with `action`, its actions), with
    the players' `names` in its words (so a reply may name them)."""
    def fn(picks: list[Any]) -> Prompt:
        got = (game.action_prompt if action else game.prompt)(state, seat, picks)
        if got is None:
            raise IllegalOrder("no_action" if action else "bad_pick", "nothing to choose here")
        return named(got, names)
    return fn


def offer(game: Game, state: Any, seat: int, default: Any = None,
          names: Sequence[str] | None = None) -> dict[str, Any] | None:
    """The first level of `seat`'s open decision for a notice (`Prompt.as_dict` less the
    order JSON), with `example` ({"lines", "sentence"}: a reply of one line per part, for
    a decision of several parts) and `default` (the default order in words, where a
    first option makes it); None when the title offers no choices in words."""
    try:
        raw = game.prompt(state, seat, [])
        if raw is None:
            return None
        first = named(raw, names)
        out = {**first.as_dict(), "order": None}
        fn = prompt_of(game, state, seat, names=names)
        out["example"] = example(fn, first)
        out["default"] = None
        if default is not None:
            out["default"] = (name_seats(game.describe_order(state, seat, default), names)
                              or default_words(fn, first, default))
        return out
    except Exception:  # a title's words must never stop a mail
        log.exception("the title's prompt for seat %s failed", seat)
        return None


def actions(game: Game, state: Any, seat: int, names: Sequence[str] | None = None) -> dict[str, Any] | None:
    """What `seat` may do unprompted now, first level (None: nothing)."""
    try:
        got = game.action_prompt(state, seat, [])
    except Exception:
        log.exception("the title's action prompt for seat %s failed", seat)
        return None
    if got is None or got.ask is None:
        return None
    return {**named(got, names).as_dict(), "order": None}


def first_pick(ask: Ask) -> tuple[Any, str]:
    """A pick that answers `ask` and the line a person writes for it."""
    if ask.options:
        o = _first(ask)
        return o.value, o.label
    if ask.number is not None:
        value = number_value(ask.number)
        return value, number_line(ask.number, value)
    values = {n.key: number_value(n) for n in ask.sheet}
    return values, ", ".join(f"{n.label} {number_line(n, values[n.key])}" for n in ask.sheet)


def _first(ask: Ask) -> Option:
    """The option an example picks: the first that is a place on the board (a city, a
    card on offer: what the decision is about), else the first."""
    return next((o for o in ask.options if o.place is not None), ask.options[0])


def number_value(n: Number) -> Any:
    return n.default if n.default is not None and n.allows(n.default) else n.min


def number_line(n: Number, value: Any) -> str:
    for o in n.named:
        if o.value == value and type(o.value) is type(value):
            return o.label
    return str(value)


def example(fn: Callable[[list[Any]], Prompt], first: Prompt) -> dict[str, Any] | None:
    """A reply of one line per part that reads back to a whole order (the first option
    of each part, a number's default or least value), and that order in words; None for
    a decision of one part, or when no such reply reads back."""
    picks: list[Any] = []
    lines: list[str] = []
    numbers: list[str] = []
    current = first
    while not current.complete or not picks:  # (a decision complete at once may still ask: take one pick)
        if current.ask is None or len(picks) >= MAX_PARTS:
            return None
        pick, line = first_pick(current.ask)
        if line in lines:  # walking in a circle (buy a trailer, sell it again): no example
            return None
        picks.append(pick)
        lines.append(line)
        numbers.append(str(current.ask.options.index(_first(current.ask)) + 1) if current.ask.options else line)
        current = fn(list(picks))
    if len(lines) < 2:
        return None
    for written in (lines, numbers):
        try:
            back = read_words("\n".join(written), fn)
        except IllegalOrder:
            continue
        if back.order == current.order:
            return {"lines": written, "sentence": current.sentence}
    return None


def default_words(fn: Callable[[list[Any]], Prompt], first: Prompt, default: Any) -> str | None:
    """The default order in words, where one of the first options (or a named value)
    completes it at once; else None."""
    if first.order == default:
        return first.sentence or None
    ask = first.ask
    if ask is None:
        return None
    values: list[Any] = [o.value for o in ask.options[:DEFAULT_TRIES]]
    if ask.number is not None:
        values += [o.value for o in ask.number.named]
    for value in values:
        try:
            got = fn([value])
        except IllegalOrder:
            continue
        if got.order == default:
            return got.sentence or None
    return None


def read(game: Game, state: Any, seat: int, text: str, picks: Sequence[Any] = (), action: bool = False,
         names: Sequence[str] | None = None) -> Prompt:
    """`text` (a reply's lines) read as picks of `seat`'s open decision (or its actions)
    after `picks`, the players known by `names`; raises `IllegalOrder` (`bad_pick`,
    `not_your_turn`, `no_action`)."""
    return read_words(text, prompt_of(game, state, seat, action, names), picks=list(picks))
