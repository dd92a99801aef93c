"""Shared helpers of the Fantasy Business rules: seats, cards, eligibility and checks.

Every phase module uses these, so each rule is written once. `S` is a state (plain JSON).
"""

from __future__ import annotations

from typing import Any, NoReturn

from engine.core.errors import IllegalOrder
from engine.fantasy.components import Components, components, kind_of

S = dict[str, Any]
C: Components = components()
_RANK = {card: i for i, card in enumerate(C.deck)}
#: (seats, start) -> the seats from `start` clockwise (`order_from`).
TURN_ORDERS = {(n, start): tuple((start + k) % n for k in range(n)) for n in range(1, 9) for start in range(n)}
#: AFTER[n][seat]: the seats clockwise from `seat`'s left, `seat` last (`order_from` its left).
AFTER = [[TURN_ORDERS[n, (seat + 1) % n] for seat in range(n)] for n in range(9)]


def fail(code: str, message: str) -> NoReturn:
    raise IllegalOrder(code, message)


def need(ok: bool, code: str, message: str) -> None:
    if not ok:
        raise IllegalOrder(code, message)


def rank(card: str) -> int:
    """A card's index in the canonical deck order (§3)."""
    return _RANK[card]


def sort_cards(cards: list[str]) -> list[str]:
    return sorted(cards, key=_RANK.__getitem__)


def is_card(x: Any) -> bool:
    return isinstance(x, str) and x in _RANK


def is_item(card: str) -> bool:
    if card in ITEM_CARDS:
        return True
    return card not in _RANK and kind_of(card) in C.base  # a deck card not listed is a special


#: The item cards of the deck (`is_item`).
ITEM_CARDS = frozenset(card for card in C.deck if kind_of(card) in C.base)


def _minimum(card: str | None) -> int:
    if card is not None and is_item(card):
        return int(C.base[kind_of(card)])
    return int(C.special_min_bid)


class _Minimums(dict[str | None, int]):
    """min(c) by card: filled for every card of the deck and a face-down special (None);
    any other card is worked out by the rule (`_minimum`) when asked."""

    def __missing__(self, card: str | None) -> int:
        return _minimum(card)


MINIMUMS = _Minimums({card: _minimum(card) for card in (*C.deck, None)})


def minimum(card: str | None) -> int:
    """min(c): the item's base value, or 1 for a special (O10)."""
    return MINIMUMS[card]


def order_from(s: S, start: int) -> tuple[int, ...]:
    """`start`, then clockwise ("in turn order from X")."""
    return TURN_ORDERS[s["seats"], start]


def left(s: S, seat: int) -> int:
    return int((seat + 1) % s["seats"])


def seat_no(x: Any, s: S) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x < s["seats"]


def whole(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def eligible(s: S, seat: int) -> bool:
    """O7/R15: has not acquired a card this offer phase and is not under No Delivery."""
    off = s["offer"]
    return seat not in off["bought"] and seat not in off["nd"]


def eligibles(s: S) -> list[int]:
    off = s["offer"]
    out = off["bought"] + off["nd"]
    if not out:
        return list(range(s["seats"]))
    return sorted(set(range(s["seats"])).difference(out))  # the seats not in `out`, in order


def owner_of(s: S, card: str) -> int | None:
    """The seat owning item `card` face up, or None."""
    for i, p in enumerate(s["players"]):
        if card in p["items"]:
            return i
    return None


#: Every card of the deck -> its type or special id (`kind_of`, as one dict).
CARD_KIND = _CARD_KIND = {card: kind_of(card) for card in C.deck}
TYPES = _TYPES = frozenset(C.types)


def holds_types(s: S, seat: int) -> list[str]:
    """The item types `seat` owns, in canonical order."""
    items = s["players"][seat]["items"]
    try:
        have = _TYPES.intersection(map(_CARD_KIND.__getitem__, items))
    except KeyError:  # a card outside the deck (a hand-made state): the general rule
        have = _TYPES.intersection(map(kind_of, items))
    return sorted(have, key=C.type_rank.__getitem__)


def type_count(s: S, seat: int, t: str) -> int:
    return sum(1 for c in s["players"][seat]["items"] if kind_of(c) == t)


def holders(s: S) -> list[int]:
    """Seats holding at least one special card (hand sizes are public, §4)."""
    return [i for i, p in enumerate(s["players"]) if p["hand"]]


def seat_entry(s: S, seat: int) -> dict[str, Any]:
    """`seat`'s entry of the players list, copied for writing: `copy_state` shares the
    players list and every seat's entry with the state resolve was given, so each writer
    of a seat's fields goes through here (copy on write, of the list and the entry; a
    second write in one resolve copies again, which is cheap and keeps the rule simple)."""
    players = s["players"] = s["players"].copy()
    p: dict[str, Any] = players[seat].copy()
    players[seat] = p
    return p


def add_items(s: S, seat: int, cards: list[str]) -> None:
    p = seat_entry(s, seat)
    p["items"] = sort_cards([*p["items"], *cards])


def drop_item(s: S, seat: int, card: str) -> None:
    p = seat_entry(s, seat)
    p["items"] = [c for c in p["items"] if c != card]


def add_hand(s: S, seat: int, cards: list[str]) -> None:
    p = seat_entry(s, seat)
    p["hand"] = sort_cards([*p["hand"], *cards])


def drop_hand(s: S, seat: int, cards: list[str]) -> None:
    p = seat_entry(s, seat)
    gone = set(cards)
    p["hand"] = [c for c in p["hand"] if c not in gone]


def copy_state(state: S) -> S:
    """A copy of a state for resolve to work on, written for its layout: only the top level
    is copied; every list or object in the state, the players list and each seat's entry
    included, is never changed in place (its writers replace it: a seat's entry through
    `seat_entry`), so it may be shared with the input. A field added to the state must
    follow that rule; the contract tests check that nothing a resolve was given ever
    changes."""
    return state.copy()


def credit(s: S, seat: int, amount: int) -> None:
    seat_entry(s, seat)["crowns"] += amount


def high_bid_held(s: S, seat: int) -> int:
    """R27: crowns `seat` must keep because of a high bid it holds now."""
    a = s["auction"]
    if a is not None and a.get("bidder") == seat and a.get("high") is not None:
        return int(a["high"])
    return 0
