"""What the service does, independent of HTTP: the one code path for the API, the
email gateway and the workers.

`Kontor` ties the engine, the store and the job queue together. Every write goes
through the store's Lua scripts (exactly-once flips and compare-and-set commits);
every read of game content goes through the engine's `view`, and everything a caller
sees is cut to what that caller may see.
"""

from __future__ import annotations

from service.core.actions import Actions
from service.core.base import Caller, extra_detail, receipt_of
from service.core.choices import Choices
from service.core.clock import iso
from service.core.lobby import Lobby
from service.core.orders import Orders
from service.core.policy import Policy
from service.core.reading import Reading
from service.core.rematch import Rematch

__all__ = ["Caller", "Kontor", "Policy", "extra_detail", "iso", "receipt_of"]


class Kontor(Lobby, Orders, Reading, Choices, Actions, Rematch):
    """The service's facade: one object per process, split by use case into `Lobby`
    (`service.core.lobby`), `Orders` (`service.core.orders`) and `Reading`
    (`service.core.reading`), `Choices` (`service.core.choices`) and `Actions`
    (`service.core.actions`) over `Base` (`service.core.base`); `Rematch`
    (`service.core.rematch`)."""
