"""The shape every Die Händler decision point (D0-NAME ... D6-ADVANCE) is written in.

One `Decision` per order kind: `choices` (what the request shows the seat), `check`
(the one legality path, against the seat's wallet after its own free actions), `apply`
(mutates a fresh copy of the state with every requested seat's order) and `default`
(the always-legal order of a missed deadline, R-28).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.core.events import Event
from engine.haendler.context import Ctx, S
from engine.haendler.free import Wallet

Order = dict[str, Any]


@dataclass(frozen=True)
class Decision:
    kind: str
    rule: str  # the decision point id in the rules, e.g. "D1-BUY" (for programs; never shown to players)
    sealed: bool
    keys: tuple[str, ...]  # the order's own keys (besides the free actions)
    choices: Callable[[Ctx, S, int], dict[str, Any]]
    check: Callable[[Ctx, S, int, Order, Wallet], None]
    apply: Callable[[Ctx, S, dict[int, Order], list[Event]], None]
    default: Callable[[Ctx, S, int], Order]
