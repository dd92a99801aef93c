"""The shape every Fantasy Business decision point (§14) is written in.

One `Decision` per order kind: `choices` (what the request shows its seat, from public
facts and that seat's own; `shared`, if given, computes once per step the public part
every asked seat's choices use, and `choices` gets it), `check` (the one legality path, against the seat's `Wallet`
after its own instants), `apply` (changes a fresh copy of the state with every requested
seat's order) and `default` (the always-legal order of a missed deadline).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.core.events import Event
from engine.fantasy.state import S

Order = dict[str, Any]


#: A seat's crowns and hand as its main action may use them (after its instants): a
#: mapping with "crowns" (int) and "hand" (a sequence of card ids, never changed). With no
#: instants it is the seat's own entry of the state's players (no copy is made for the
#: check of an order); `windows.check_instants` makes one otherwise.
Wallet = Mapping[str, Any]


@dataclass(frozen=True)
class Decision:
    kind: str
    rule: str  # the decision point id, e.g. "D-BID"
    sealed: bool
    keys: tuple[str, ...]
    choices: Callable[[S, int, Any], dict[str, Any]]  # (state, seat, what `shared` computed)
    check: Callable[[S, int, Order, Wallet], None]
    #: True when it asked the next seat itself (an auction going on), so `flow.advance` need not.
    apply: Callable[[S, dict[int, Order], list[Event]], bool | None]
    default: Callable[[S, int], Order]
    shared: Callable[[S], Any] | None = None
