"""Die Händler (Kramer & Ulrich): rules, board data loading, views and bots.

Listed in `engine.titles` as `haendler`; the registry loads `GAME` on first use.
"""

from engine.haendler.rules import Haendler

GAME = Haendler()

__all__ = ["GAME", "Haendler"]
