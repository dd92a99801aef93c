"""What every special-card module provides (§12): its kind, window, the fields of a play,
the check at submission (FD6: refused privately), the re-check at resolution (R12, R16)
and its effect."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.core.errors import IllegalOrder
from engine.core.events import Event
from engine.fantasy.state import S, owner_of, seat_no

Play = dict[str, Any]


@dataclass(frozen=True)
class Kind:
    id: str
    window: str  # open | close | spy | reveal | instant
    fields: tuple[str, ...]  # the play's fields besides "card"
    check: Callable[[S, int, Play], None]
    effect: Callable[[S, int, Play, list[Event]], bool] | None = None  # False: returns unspent
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
    card = play.get(key)
    owner = owner_of(s, card) if isinstance(card, str) else None
    if owner is None or owner == seat:
        raise IllegalOrder("bad_target", f"{key} must be an item card an opponent owns, not {card!r}")
    return owner


def type_id(play: Play, key: str = "type") -> str:
    from engine.fantasy.state import C

    t = play.get(key)
    if not (isinstance(t, str) and t in C.base):  # `need(...)`, written out: the message only for a refusal
        raise IllegalOrder("bad_target", f"{key} must be an item type id ({', '.join(C.types)})")
    return str(t)
