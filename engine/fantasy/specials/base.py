"""What every special-card module provides (§12): its kind, window, the fields of a play,
the check at submission (FD6: refused privately), the check of a play stored before an
action moved its targets (R21), the re-check at resolution (R12, R16) and its effect."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.core.errors import IllegalOrder
from engine.core.events import Event
from engine.fantasy.state import ITEM_CARDS, S, owner_of, seat_no

Play = dict[str, Any]


@dataclass(frozen=True)
class Kind:
    id: str
    window: str  # open | close | spy | reveal | instant
    fields: tuple[str, ...]  # the play's fields besides "card"
    check: Callable[[S, int, Play], None]
    effect: Callable[[S, int, Play, list[Event]], bool] | None = None  # False: returns unspent
    #: R21: the check of a play stored before an unprompted action (a V4 transfer) moved
    #: the item cards it targets. It checks everything `check` does except where those
    #: cards are now: such a play is kept and fails when it resolves (R12, R16). None:
    #: the play targets no item card, and `check` applies.
    stored: Callable[[S, int, Play], None] | None = None
    #: The keys a play of this kind may have: "card" and `fields`.
    keys: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "keys", frozenset(("card", *self.fields)))


def opponent(s: S, seat: int, play: Play, key: str = "target") -> int:
    x: Any = play.get(key)
    if not (seat_no(x, s) and x != seat):  # `need(...)`, written out: the message only for a refusal
        raise IllegalOrder("bad_target", f"{key} must be an opponent's seat, not {x!r}")
    return int(x)


def opponent_item(s: S, seat: int, play: Play, key: str = "item") -> int:
    """The opponent a play names ("target") and, under `key`, an item card that opponent
    owns now (O19). The opponent is named so that the play stays aimed at them: it fails
    if the card has moved by the time it resolves (R12, R16)."""
    x = opponent(s, seat, play)
    card = play.get(key)
    if not (isinstance(card, str) and owner_of(s, card) == x):
        raise IllegalOrder("bad_target", f"{key} must be an item card the target (seat {x}) owns, not {card!r}")
    return x


def item_card(play: Play, key: str = "item") -> str:
    """R21: `key` names one of the game's item cards, wherever it is now."""
    card = play.get(key)
    if not (isinstance(card, str) and card in ITEM_CARDS):
        raise IllegalOrder("bad_target", f"{key} must be an item card, not {card!r}")
    return card


def type_id(play: Play, key: str = "type") -> str:
    from engine.fantasy.state import C

    t = play.get(key)
    if not (isinstance(t, str) and t in C.base):  # `need(...)`, written out: the message only for a refusal
        raise IllegalOrder("bad_target", f"{key} must be an item type id ({', '.join(C.types)})")
    return str(t)
