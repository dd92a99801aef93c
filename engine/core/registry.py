"""The registry of titles, keyed by their short id (`haendler`, ...)."""

from __future__ import annotations

import importlib
from typing import Any

from engine.core.errors import OptionsError
from engine.core.game import Game

_TITLES: dict[str, Game] = {}


def register(game: Game) -> Game:
    """Register a title instance under its id; registering an id twice is an error."""
    if game.id in _TITLES and _TITLES[game.id] is not game:
        raise ValueError(f"title {game.id!r} is already registered")
    _TITLES[game.id] = game
    return game


def get(title: str) -> Game:
    """The title registered under `title`; raises `OptionsError` for an unknown id."""
    _load_builtin()
    try:
        return _TITLES[title]
    except KeyError:
        known = ", ".join(sorted(_TITLES)) or "none"
        raise OptionsError(f"unknown title {title!r} (known: {known})", field="title") from None


def titles() -> dict[str, Game]:
    """Every registered title by id."""
    _load_builtin()
    return dict(_TITLES)


def bots(title: str) -> dict[str, Any]:
    """The bot kinds of a title (`engine.<title>.bots.BOTS`): kind -> factory(seed)."""
    get(title)
    module = importlib.import_module(f"engine.{title}.bots")
    return dict(module.BOTS)


def _load_builtin() -> None:
    # Imported lazily so that `engine.core` has no import cycle with the titles.
    import engine.haendler  # noqa: F401
