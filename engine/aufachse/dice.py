"""The game's randomness (rules §5): every draw comes from the committed stream of
`engine.core.stream`, in the order RNG6 fixes, and every roll is logged in the state.

RNG6 order of use: first player = draw(n); the order cards shuffled in data-file order;
the event cards (each id repeated qty times) shuffled; then every roll, die A then die B.
Nothing else draws, and skipped turns draw nothing. The stream state lives under the
state's `rng` key, which no view ever shows (declared NEVER).
"""

from __future__ import annotations

import hashlib
import struct
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
    rng = s["rng"]
    x, y, used = _two_words(rng)  # both dice in one read (a turn rolls on every turn)
    if x < _SIX_LIMIT and y < _SIX_LIMIT:
        a, b = x % 6 + 1, y % 6 + 1  # what `die` returns for each word it does not reject
        rng = {"seed": rng["seed"], "used": used}
    else:  # a rejected word (p ≈ 1e-9): draw one at a time, as RNG4 says
        a, rng = die(rng)
        b, rng = die(rng)
    s["rng"] = rng
    s["dice"] = [a, b]
    rolls = s["rolls"]
    s["rolls"] = f"{rolls} {s['turn_no']}:{seat}:{a}:{b}" if rolls else f"{s['turn_no']}:{seat}:{a}:{b}"
    return [a, b]


#: The words of the last block of the stream read, per seed: (block index, its eight
#: 4-byte big-endian words). A game reads one block for every four rolls, so most rolls
#: need no hashing (a plain memo of pure values: it changes no result, and is bounded).
_LAST_BLOCK: dict[str, tuple[int, tuple[int, ...]]] = {}
_EIGHT_WORDS = struct.Struct(">8I")


def _block(seed: str, index: int) -> tuple[int, ...]:
    """The words of block `index` of the stream of `seed`: SHA-256(seed ‖ index) (RNG3)."""
    last = _LAST_BLOCK.get(seed)
    if last is not None and last[0] == index:
        return last[1]
    words = _EIGHT_WORDS.unpack(hashlib.sha256(bytes.fromhex(seed) + index.to_bytes(4, "big")).digest())
    if len(_LAST_BLOCK) >= 256:
        _LAST_BLOCK.clear()
    _LAST_BLOCK[seed] = (index, words)
    return words


def _two_words(stream: Stream) -> tuple[int, int, int]:
    """The next two 4-byte big-endian words of `stream` and the bytes used after them:
    exactly `engine.core.stream.words(stream, 2)`, with the current block remembered
    (every stream the engine makes is at a word boundary; any other is read bytewise)."""
    seed, used = stream["seed"], int(stream["used"])
    index, offset = divmod(used, 32)
    if offset & 3:
        (x, y), _rest = words(stream, 2)
        return x, y, used + 8
    i = offset >> 2
    data = _block(seed, index)
    if i < 7:
        return data[i], data[i + 1], used + 8
    x = data[7]  # the second word is the first of the next block
    return x, _block(seed, index + 1)[0], used + 8


def roll_log(s: dict[str, Any]) -> list[list[int]]:
    """The roll log as [turn, seat, die A, die B] entries, in the order of use (RNG6)."""
    return [[int(x) for x in e.split(":")] for e in str(s.get("rolls") or "").split()]
