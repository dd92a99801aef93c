"""Order cards, event cards and components of an Auf Achse data set (rules §3, §19).

Only plain, already validated values live here; `dataset` reads and checks the files.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: The event effect types of V3, with the parameters each one needs.
EFFECTS: dict[str, tuple[str, ...]] = {
    "gain": ("amount",),
    "gain_per_goods": ("per", "min"),
    "pay": ("amount",),
    "pay_per_goods": ("per", "min"),
    "collect_from_each": ("amount",),
    "extra_move": (),
    "clear_markers": (),
    "move_roadworks": (),
    "place_jam": ("by", "where"),
    "free_trailer": ("size", "fallback"),
    "draw_reserve_order": (),
    "shortcut": ("max_pips",),
    "skip_turn": (),
}
JAM_BY = ("drawer", "left_neighbour")
SIZES = ("small", "large")


@dataclass(frozen=True)
class OrderCard:
    """One transport order: start, destination, goods, payment and the five bid costs."""

    id: str
    start: str
    dest: str
    goods: int
    pay: int
    costs: tuple[int, ...]
    status: str = "substitute"

    def cost(self, step: int) -> int:
        """What a bid of `step` (1–5) costs; step 0 costs nothing."""
        return 0 if step == 0 else self.costs[step - 1]


@dataclass(frozen=True)
class EventCard:
    id: str
    qty: int
    title: str
    effect: dict[str, Any]

    @property
    def type(self) -> str:
        return str(self.effect["type"])


@dataclass(frozen=True)
class Trailer:
    count: int
    capacity: int
    price: int


@dataclass(frozen=True)
class Components:
    start_cash: int
    truck_capacity: int
    hand_size: int
    display_slots: int
    public_pile: dict[int, int]
    trailers: dict[str, Trailer]
    trailer_refund: int
    road_space_limit: int
    kids_hand_size: int
    kids_public_pile: int
    kids_trailers: bool
