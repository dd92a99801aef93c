"""Fantasy Business (Boelinger): rules, data loading, views and bots.

Listed in `engine.titles` as `fantasy`; the registry loads `GAME` on first use.
"""

from engine.fantasy.rules import FantasyBusiness

GAME = FantasyBusiness()

__all__ = ["FantasyBusiness", "GAME"]
