"""Antitrust Law (AL, 2): W-CLOSE; an opponent X and a type t, where X owns every card of
t in play and at least two (O20, R4). X's cards of t are auctioned one at a time (O23)."""

from __future__ import annotations

from typing import Any

from engine.core.events import Event
from engine.fantasy.components import kind_of
from engine.fantasy.specials.base import Kind, Play, opponent, type_id
from engine.fantasy.state import CARD_KIND, C, S, need


def monopoly(s: S, x: int, t: str) -> bool:
    """O20: X owns every item card of t that any player owns, and at least two."""
    mine = sum(1 for c in s["players"][x]["items"] if kind_of(c) == t)
    others = sum(1 for i, p in enumerate(s["players"]) if i != x for c in p["items"] if kind_of(c) == t)
    return mine >= 2 and others == 0


def monopolies(s: S) -> list[list[Any]]:
    """Every [X, t] that O20 allows, in seat then type order."""
    owner: dict[str, int] = {}  # type -> its one owner so far, or -1 once a second seat owns one
    count: dict[str, int] = {}  # type -> cards of it
    for i, p in enumerate(s["players"]):
        for c in p["items"]:
            t = CARD_KIND.get(c)
            if t is None:  # a card outside the deck (a hand-made state)
                t = kind_of(c)
            if t in count:
                count[t] += 1
                if owner[t] != i:
                    owner[t] = -1
            else:
                count[t] = 1
                owner[t] = i
    return sorted([x, t] for t in C.types if count.get(t, 0) >= 2 and (x := owner[t]) >= 0)


def check(s: S, seat: int, play: Play) -> None:
    x, t = opponent(s, seat, play), type_id(play)
    need(monopoly(s, x, t), "bad_target", "Antitrust Law needs an opponent who owns every card of the type "
         "in play, and at least two (O20)")


def stored(s: S, seat: int, play: Play) -> None:
    """R21: a transfer may have broken X's monopoly since the play was stored; the play is
    kept and returns unspent when it resolves (`effect`)."""
    opponent(s, seat, play)
    type_id(play)


def effect(s: S, seat: int, play: Play, ev: list[Event]) -> bool:
    from engine.fantasy.auction import start_antitrust

    if not monopoly(s, play["target"], play["type"]):
        return False
    start_antitrust(s, play["target"], play["type"], ev)
    return True


KIND = Kind("AL", "close", ("target", "type"), check, effect, stored)
