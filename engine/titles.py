"""The one list of Kontor's built-in titles.

Each entry is a title id and the module that defines it; the module exposes `GAME`, an
instance of its `engine.core.game.Game` subclass. The registry imports a module only
when its title is first asked for, so `engine.core` never names a title. Third-party
titles come from the `kontor.titles` entry-point group (see `engine.core.registry`).

Adding a built-in title touches this list, the title's package, its data folder, its
tests and its player's guide, and nothing else.
"""

from __future__ import annotations

#: title id -> module that defines `GAME`.
BUILTIN: dict[str, str] = {
    "haendler": "engine.haendler",
    "fantasy": "engine.fantasy",
    "aufachse": "engine.aufachse",
}
