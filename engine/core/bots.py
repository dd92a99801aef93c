"""Bot plumbing shared by all titles, and the loop that plays a whole game.

A bot sees only what its seat sees: the open `Request` (with its choices) and the seat's
`view`. It proposes an order and keeps it only if `validate` accepts it; otherwise it
falls back to the title's default order, so a bot can never submit an illegal order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine.core.errors import IllegalOrder
from engine.core.events import Event
from engine.core.game import Game, Order, Request, State
from engine.core.rng import _MASK, seed_state


class Bot(Protocol):
    """Answers a request with an order that has passed `game.validate` on `state`."""

    def order(self, game: Game, state: State, request: Request) -> Order: ...


class Dice:
    """A bot's own seeded generator (the engine never uses global randomness)."""

    def __init__(self, seed: int | str) -> None:
        self.state = seed_state(seed)

    def below(self, n: int) -> int:
        # `engine.core.rng.below`, inlined: bots draw on every order.
        while True:
            self.state = state = (self.state + 0x9E3779B97F4A7C15) & _MASK
            z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
            product = (z ^ (z >> 31)) * n
            if (product & _MASK) >= (1 << 64) % n:
                return product >> 64

    def chance(self, p: float) -> bool:
        return self.below(1000) < int(p * 1000)

    def pick(self, items: list[Any]) -> Any:
        return items[self.below(len(items))]


def first_legal(game: Game, state: State, seat: int, candidates: Iterable[Order]) -> Order:
    """The first candidate `validate` accepts (candidates may be a lazy generator), else
    the default order."""
    for order in candidates:
        try:
            game.validate(state, seat, order)
        except IllegalOrder:
            continue
        return order
    return game.default_order(state, seat)


@dataclass
class Playout:
    """The record of a played game: final state, every accepted step and its events."""

    state: State
    steps: list[dict[int, Order]] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)

    @property
    def decisions(self) -> int:
        return sum(len(s) for s in self.steps)


def play_game(
    game: Game,
    seats: int,
    bots: Mapping[int, Bot],
    seed: int | str,
    options: Mapping[str, Any] | None = None,
    max_steps: int = 20000,
    on_step: Callable[[State, dict[int, Order], list[Event]], None] | None = None,
) -> Playout:
    """Play a game to its end with one bot per seat."""
    state = game.setup(seats, options, seed)
    out = Playout(state)
    for _ in range(max_steps):
        requests = game.requests(state)
        if not requests:
            break
        # Bots return only orders that passed `validate` on this state (`first_legal`).
        orders = {r.seat: bots[r.seat].order(game, state, r) for r in requests}
        state, events = game.resolve_validated(state, orders)
        out.steps.append(orders)
        out.events.extend(events)
        if on_step is not None:
            on_step(state, orders, events)
    else:
        raise RuntimeError(f"game did not end within {max_steps} steps")
    out.state = state
    return out


def replay(game: Game, seats: int, seed: int | str, options: Mapping[str, Any] | None,
           steps: list[dict[int, Order]]) -> State:
    """Rebuild a state from its seed and accepted orders (replay determinism)."""
    state = game.setup(seats, options, seed)
    for orders in steps:
        state, _ = game.resolve(state, orders)
    return state
