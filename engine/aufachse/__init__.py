"""Auf Achse (Wolfgang Kramer): rules, data loading, views and bots.

Listed in `engine.titles` as `aufachse`; the registry loads `GAME` on first use.
"""

from engine.aufachse.rules import AufAchse

GAME = AufAchse()

__all__ = ["GAME", "AufAchse"]
