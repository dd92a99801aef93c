"""The 13 special-card kinds (§12), one module each, and their windows (`windows`)."""

from __future__ import annotations

from engine.fantasy.specials import (
    antitrust,
    bad_check,
    defective_item,
    divination,
    first_buyer,
    market_closed,
    no_delivery,
    out_of_season,
    racketeering,
    spy,
    steal,
    subsidies,
    trading,
)
from engine.fantasy.specials.base import Kind

KINDS: dict[str, Kind] = {
    m.KIND.id: m.KIND
    for m in (antitrust, bad_check, defective_item, divination, market_closed, no_delivery, first_buyer,
              out_of_season, racketeering, spy, steal, subsidies, trading)
}  # fmt: skip

__all__ = ["KINDS", "Kind"]
