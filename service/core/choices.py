"""Choices and actions: a seat's open decision in words, and what it may do unprompted.

* `Choices.choices(gid, seat, picks, of, words)`: the title's prompt (`Game.prompt`, or
  `Game.action_prompt` for `of="action"`) after `picks`, and after a person's `words`
  read as more picks (`engine.core.choices.read_words`), so no channel needs the engine
  to read "cart 2 to Brügge". Safe: it changes nothing.
* `Choices.first_levels(game, state, seat)`: the first level of both, for the seat's
  `GET /games/{id}/phases/current`.

Refusals keep the engine's code: `not_your_turn`, `no_action`, `game_over` are 409 (the
game is not where the caller thought), `bad_pick` and a title's own codes are 422.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from engine.core.choices import Prompt, name_seats, named, read_words
from engine.core.errors import IllegalOrder
from engine.core.game import Game
from service.core.base import Base
from service.core.errors import CODES, Problem

log = logging.getLogger("kontor")

#: Engine codes that say the game is not where the caller thought (409), not a bad request.
CONFLICTS = ("not_your_turn", "no_action", "game_over")
#: The bounds of a choices request (the route's schema states them too).
MAX_PICKS = 64
MAX_WORDS = 2000
#: Kinds of prompt a caller may ask for.
OF = ("order", "action")


def refused(exc: IllegalOrder) -> Problem:
    """The problem for an engine refusal: its code and message, 409 or 422."""
    status = 409 if exc.code in CONFLICTS else CODES.get(exc.code, (422, ""))[0]
    return Problem(exc.code, exc.message, status=status, **exc.details)


def prompt_fn(game: Game, state: Any, seat: int, of: str,
              names: Sequence[str] | None = None) -> Callable[[Sequence[Any]], Prompt]:
    """The title's prompt after some picks, for `of` ("order" or "action"), with the
    players' `names` in its words (so a person may also write them); raises
    `no_choices` when the title offers the open decision in no words, `no_action` when
    there is nothing to do unprompted."""
    def order_prompt(picks: Sequence[Any]) -> Prompt:
        p = game.prompt(state, seat, list(picks))
        if p is None:
            raise Problem("no_choices", f"{game.name} offers this decision only as an order (see `order_schema`)")
        return named(p, names)

    def action_prompt(picks: Sequence[Any]) -> Prompt:
        p = game.action_prompt(state, seat, list(picks))
        if p is None:
            raise IllegalOrder("no_action", "there is nothing you may do unprompted now")
        return named(p, names)

    return order_prompt if of == "order" else action_prompt


def order_sentence(game: Game, state: Any, seat: int, order: Any, names: Sequence[str]) -> str | None:
    """`order` of `seat` in the title's words with the players' names, or None when the
    title has none for it (or it no longer describes: the order came before a change)."""
    try:
        text = game.describe_order(state, seat, order)
    except Exception:  # noqa: BLE001  (words never take a reading down; the fields remain)
        log.warning("%s: describe_order failed for seat %s", game.id, seat, exc_info=True)
        return None
    return name_seats(text, names) or None


class Choices(Base):
    """The seat's decisions in words (reading only; the actions are `service.core.actions`)."""

    def choices(self, gid: str, seat: int, picks: Sequence[Any] = (), of: str = "order",
                words: str | None = None) -> dict[str, Any]:
        """`seat`'s prompt after `picks` (and after `words`, read as further picks):
        `{"step", "kind", "prompt"}`. `kind` is the open request's kind for an order,
        None for an action."""
        if of not in OF:
            raise Problem("invalid_request", "`of` is `order` or `action`", errors={"of": ["order or action"]})
        if not isinstance(picks, list | tuple) or len(picks) > MAX_PICKS:
            raise Problem("invalid_request", f"picks are a list of at most {MAX_PICKS}")
        if words is not None and (not isinstance(words, str) or len(words) > MAX_WORDS):
            raise Problem("invalid_request", f"words are a text of at most {MAX_WORDS} characters")
        meta, ph, state, game = self._seat_in_play(gid, seat)
        fn = prompt_fn(game, state, seat, of, self.names(gid, meta))
        try:
            prompt = fn(list(picks)) if words is None else read_words(words, fn, picks=list(picks))
        except IllegalOrder as exc:
            raise refused(exc) from None
        kind = None
        if of == "order":
            kind = next((r.kind for r in game.requests(state) if r.seat == seat), None)
        return {"step": int(ph["id"]), "kind": kind, "prompt": prompt.as_dict()}

    @staticmethod
    def first_levels(game: Game, state: Any, seat: int, asked: bool,
                     names: Sequence[str] | None = None) -> dict[str, Any]:
        """`you.prompt` (the first level of the seat's open decision, None when it is not
        asked or the title offers it in no words) and `you.actions` (the first level of
        what it may do unprompted, None when nothing)."""
        out: dict[str, Any] = {"prompt": None, "actions": None}
        try:
            p = game.prompt(state, seat, []) if asked else None
            out["prompt"] = named(p, names).as_dict() if p is not None else None
        except IllegalOrder:
            pass
        try:
            a = game.action_prompt(state, seat, [])
            out["actions"] = named(a, names).as_dict() if a is not None else None
        except IllegalOrder:
            pass
        return out
