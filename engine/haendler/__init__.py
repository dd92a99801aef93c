"""Die Händler (Kramer & Ulrich): rules, board data loading, views and bots.

Implements shared/rules/die-haendler.md. The title registers itself as `haendler`.
"""

from engine.core.registry import register
from engine.haendler.rules import Haendler

GAME = register(Haendler())

__all__ = ["GAME", "Haendler"]
