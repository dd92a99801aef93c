"""The shape every Fantasy Business decision point (§14) is written in.

One `Decision` per order kind: `choices` (what the request shows its seat, from public
facts and that seat's own; `shared`, if given, computes once per step the public part
every asked seat's choices use, and `choices` gets it), `check` (the one legality path, against the seat's `Wallet`
after its own instants), `apply` (changes a fresh copy of the state with every requested
seat's order) and `default` (the always-legal order of a missed deadline).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

from engine.core.events import Event
from engine.fantasy.state import S

Order = dict[str, Any]


class Wallet(NamedTuple):
    """A seat's crowns and hand as its main action may use them (after its instants)."""

    crowns: int
    hand: Sequence[str]  # never changed: the state's own list may be passed


#: `Wallet((crowns, hand))`: a wallet without the Python-level `__new__` of a NamedTuple
#: (one is made for every order checked).
wallet_of: Callable[[tuple[int, Sequence[str]]], Wallet] = partial(tuple.__new__, Wallet)


@dataclass(frozen=True)
class Decision:
    kind: str
    rule: str  # the decision point id, e.g. "D-BID"
    sealed: bool
    keys: tuple[str, ...]
    choices: Callable[[S, int, Any], dict[str, Any]]  # (state, seat, what `shared` computed)
    check: Callable[[S, int, Order, Wallet], None]
    apply: Callable[[S, dict[int, Order], list[Event]], None]
    default: Callable[[S, int], Order]
    shared: Callable[[S], Any] | None = None
