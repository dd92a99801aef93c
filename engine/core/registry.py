"""The registry of titles, keyed by their short id (`haendler`, ...).

Titles come from two places, both loaded lazily on first use:

* the built-in list `engine.titles.BUILTIN` (id -> module exposing `GAME`);
* the entry-point group `kontor.titles`: an installed package declares
  `[project.entry-points."kontor.titles"] mytitle = "mypkg.game:GAME"`, naming a `Game`
  instance (or a `Game` subclass, or a function returning an instance).

A title that fails to load is reported by name in `load_errors()` (and in the catalogue
the service builds from it) and is simply absent; it never takes the others down.
Every process that uses the registry (web, worker, sweeper, CLI) loads the same set.
"""

from __future__ import annotations

import importlib
import logging
from importlib import metadata
from typing import Any

from engine.core.errors import OptionsError
from engine.core.game import Game

ENTRY_POINT_GROUP = "kontor.titles"

log = logging.getLogger("kontor.titles")

_TITLES: dict[str, Game] = {}
_ERRORS: dict[str, str] = {}
_loaded = False


def register(game: Game) -> Game:
    """Register a title instance under its id; registering an id twice is an error."""
    if not isinstance(game, Game):
        raise TypeError(f"{game!r} is not a Game")
    if game.id in _TITLES and _TITLES[game.id] is not game:
        raise ValueError(f"title {game.id!r} is already registered")
    _TITLES[game.id] = game
    return game


def get(title: str) -> Game:
    """The title registered under `title`; raises `OptionsError` for an unknown id."""
    _load()
    try:
        return _TITLES[title]
    except KeyError:
        known = ", ".join(sorted(_TITLES)) or "none"
        broken = f"; {title!r} failed to load: {_ERRORS[title]}" if title in _ERRORS else ""
        raise OptionsError(f"unknown title {title!r} (known: {known}){broken}", field="title") from None


def titles() -> dict[str, Game]:
    """Every registered title by id."""
    _load()
    return dict(_TITLES)


def load_errors() -> dict[str, str]:
    """Titles (built-in or plugins) that failed to load: name -> what went wrong."""
    _load()
    return dict(_ERRORS)


def bots(title: str) -> dict[str, Any]:
    """The bot kinds of a title: kind -> factory(seed)."""
    return dict(get(title).bots())


def reload() -> None:
    """Forget what was loaded and load again (tests that install a plugin)."""
    global _loaded
    _TITLES.clear()
    _ERRORS.clear()
    _loaded = False
    _load()


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    from engine.titles import BUILTIN  # the one list of built-in titles

    for tid, module in BUILTIN.items():
        _try(tid, lambda module=module: importlib.import_module(module).GAME)
    try:
        points = list(metadata.entry_points(group=ENTRY_POINT_GROUP))
    except Exception as exc:  # a broken distribution's metadata
        _ERRORS["(entry points)"] = f"{type(exc).__name__}: {exc}"
        return
    for point in points:
        _try(point.name, point.load)


def _try(name: str, load: Any) -> None:
    try:
        obj = load()
        if isinstance(obj, type) and issubclass(obj, Game):
            obj = obj()
        elif callable(obj) and not isinstance(obj, Game):
            obj = obj()
        if not isinstance(obj, Game):
            raise TypeError(f"{obj!r} is not a Game")
        if obj.id != name:
            raise ValueError(f"it is registered as {name!r} but its id is {obj.id!r}")
        register(obj)
    except Exception as exc:  # a broken title must not take down the others
        _ERRORS[name] = f"{type(exc).__name__}: {exc}"
        _TITLES.pop(name, None)
        log.error("title %s failed to load: %s", name, _ERRORS[name])
