"""The game contract every title implements, with its errors, events and seeded RNG."""

from engine.core.errors import DataError, IllegalOrder, OptionsError
from engine.core.events import ALL, Event, event, visible_to
from engine.core.game import Game, Request, Viewer
from engine.core.registry import get, register, titles

__all__ = [
    "ALL",
    "DataError",
    "Event",
    "Game",
    "IllegalOrder",
    "OptionsError",
    "Request",
    "Viewer",
    "event",
    "get",
    "register",
    "titles",
    "visible_to",
]
