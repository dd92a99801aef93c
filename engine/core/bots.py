"""Bot plumbing shared by all titles, and the loop that plays a whole game.

A bot sees only what its seat sees: the open `Request` (with its choices) and the seat's
`view`. It proposes an order and keeps it only if `validate` accepts it; otherwise it
falls back to the title's default order, so a bot can never submit an illegal order. A
bot may skip the `validate` call for an order that is legal as it is built: the default
order, and orders a title's bot builds straight from the request's choices (each such
title's tests check those orders against `validate`, game after game).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine.core.errors import IllegalOrder
from engine.core.events import Event
from engine.core.game import Game, Order, Request, State
from engine.core.rng import _MASK, seed_state


class Bot(Protocol):
    """Answers a request with an order `game.validate` accepts on `state` (checked, or
    legal as built: see the module docstring)."""

    def order(self, game: Game, state: State, request: Request) -> Order: ...


#: Dice make their SplitMix64 values `_LANES` at a time (see `Dice`).
_LANES = 32
_GAMMA = 0x9E3779B97F4A7C15
_ONES = sum(1 << (128 * i) for i in range(_LANES))  # 1 in every 128-bit lane
_LOW64 = _ONES * _MASK  # the low 64 bits of every lane
_STEPS = sum(((i + 1) * _GAMMA) << (128 * i) for i in range(_LANES))  # (i + 1)·γ in lane i
_LANE_WORDS = struct.Struct(f"<{2 * _LANES}Q")  # a lane's low then high 64 bits
_SHORT_THOUSAND = (1 << 64) % 1000  # below(1000) rejects a low product under this


def _splitmix_lanes(state: int) -> tuple[tuple[int, ...], int]:
    """The next `_LANES` values of `engine.core.rng.next64` from `state`, computed on all
    lanes at once, and the next state.

    The values sit in 128-bit lanes of one big int, each in its lane's low 64 bits, so
    one big-int operation does a step of SplitMix64 for every lane: a shift right moves
    a neighbour's low bits into this lane's high half, and the mask clears them (before
    any product); a product of a 64-bit lane and a 64-bit constant fits its lane. The
    results are exactly `next64`'s, value for value (every title's golden games check it).
    """
    x = (state * _ONES + _STEPS) & _LOW64  # lane i: state + (i + 1)·γ mod 2**64
    z = (((x ^ (x >> 30)) & _LOW64) * 0xBF58476D1CE4E5B9) & _LOW64
    z = (((z ^ (z >> 27)) & _LOW64) * 0x94D049BB133111EB) & _LOW64
    z = (z ^ (z >> 31)) & _LOW64
    values = _LANE_WORDS.unpack(z.to_bytes(16 * _LANES, "little"))[::2]
    return values, (state + _LANES * _GAMMA) & _MASK


class Dice:
    """A bot's own seeded generator (the engine never uses global randomness).

    It draws exactly what `engine.core.rng.below` would from `seed_state(seed)`, value by
    value; it only makes the values ahead, `_LANES` at a time (`_splitmix_lanes`), since
    a bot draws on nearly every order. `state` is the generator state after the values
    made so far (some of which may not be used yet)."""

    __slots__ = ("state", "_values", "_next")

    def __init__(self, seed: int | str) -> None:
        self.state = seed_state(seed)
        self._values: tuple[int, ...] = ()
        self._next = _LANES  # nothing made yet

    def _refill(self) -> None:
        self._values, self.state = _splitmix_lanes(self.state)
        self._next = 0

    def below(self, n: int) -> int:
        """`engine.core.rng.below(n)` on this generator's next values."""
        while True:
            i = self._next
            if i == _LANES:
                self._refill()
                i = 0
            self._next = i + 1
            product = self._values[i] * n
            low = product & _MASK
            # Lemire: keep unless low < 2**64 % n (which is < n; n = 0 raises as in `rng`).
            if low >= n > 0 or low >= 18446744073709551616 % n:
                return product >> 64

    def chance(self, p: float) -> bool:
        """`below(1000) < int(p * 1000)`. It is written `value + 1 <= p * 1000`, the same
        test for a whole `value` and any `p` from 0 up (`int` truncates; `value + 1` is
        whole), without the cost of `int(...)` on every draw."""
        i = self._next
        if i == _LANES:
            self._refill()
            i = 0
        product = self._values[i] * 1000  # Lemire's below(1000): the high word of the product,
        if product & _MASK < _SHORT_THOUSAND:  # unless its low word is rejected (then it draws on)
            return self.below(1000) < int(p * 1000)
        self._next = i + 1
        return (product >> 64) + 1 <= p * 1000

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
    steps, all_events = out.steps, out.events
    requests_of, resolve = game.requests, game.resolve_validated  # looked up once, not per step
    for _ in range(max_steps):
        requests = requests_of(state)
        if not requests:
            break
        # Bots return only orders `validate` accepts on this state (`first_legal`, or legal as built).
        if len(requests) == 1:  # most steps ask one seat
            r = requests[0]
            orders = {r.seat: bots[r.seat].order(game, state, r)}
        else:
            orders = {r.seat: bots[r.seat].order(game, state, r) for r in requests}
        state, events = resolve(state, orders)
        steps.append(orders)
        all_events += events
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
