"""The game's randomness (rules §5): every draw comes from the committed stream of
`engine.core.stream`, in the order RNG6 fixes, and every roll is logged in the state.

RNG6 order of use: first player = draw(n); the order cards shuffled in data-file order;
the event cards (each id repeated qty times) shuffled; then every roll, die A then die B.
Nothing else draws, and skipped turns draw nothing. The stream state lives under the
state's `rng` key, which no view ever shows (declared NEVER).
"""

from __future__ import annotations

from typing import Any

from engine.aufachse.dataset import DataSet
from engine.core.stream import Stream, die, draw, new_stream, shuffle, words

#: `draw(6)` rejects a word at or above this (RNG4).
_SIX_LIMIT = (1 << 32) - (1 << 32) % 6


def setup_draws(ctx: DataSet, seats: int, seed: int | str) -> tuple[int, list[str], list[str], Stream]:
    """RNG6 steps 1–3: the first player, the shuffled orders and the shuffled events."""
    rng = new_stream(seed)
    first, rng = draw(rng, seats)
    orders, rng = shuffle(rng, list(ctx.order_ids))
    events, rng = shuffle(rng, list(ctx.event_ids))
    return first, orders, events, rng


def roll(s: dict[str, Any], seat: int) -> list[int]:
    """RNG6 step 4: die A then die B, appended to the public roll log `rolls`, a string
    of "turn:seat:A:B" entries separated by spaces (one string keeps views and copies
    cheap however long the game runs; `roll_log` reads it)."""
    (x, y), rng = words(s["rng"], 2)  # both dice in one read (a turn rolls on every turn)
    if x < _SIX_LIMIT and y < _SIX_LIMIT:
        a, b = x % 6 + 1, y % 6 + 1  # what `die` returns for each word it does not reject
    else:  # a rejected word (p ≈ 1e-9): draw one at a time, as RNG4 says
        a, rng = die(s["rng"])
        b, rng = die(rng)
    s["rng"] = rng
    s["dice"] = [a, b]
    entry = f"{s['turn_no']}:{seat}:{a}:{b}"
    s["rolls"] = f"{s['rolls']} {entry}" if s["rolls"] else entry
    return [a, b]


def roll_log(s: dict[str, Any]) -> list[list[int]]:
    """The roll log as [turn, seat, die A, die B] entries, in the order of use (RNG6)."""
    return [[int(x) for x in e.split(":")] for e in str(s.get("rolls") or "").split()]
