"""The verifiable random stream of Auf Achse RNG3–RNG5 (and Fantasy Business FD1).

Anyone can recompute it from the revealed seed with a few lines of any language:

* block i is SHA-256(seed ‖ i), i a 4-byte big-endian counter from 0; bytes are used in
  order (RNG3);
* `draw(n)`: read the next 4 bytes as a big-endian unsigned x; if
  x ≥ 2³² − (2³² mod n) discard it and read again; else return x mod n (RNG4);
* a die is draw(6) + 1; a shuffle is Fisher–Yates from the last index down, j = draw(i+1),
  and the first element of a shuffled deck is its top card (RNG5).

The stream's whole state is JSON: `{"seed": <64 hex>, "used": <bytes consumed>}`. The
seed is the game's 32 seed bytes (`engine.core.seed.seed_bytes`), so a title that keeps
this in its state must declare it `NEVER` in its information (the seed is revealed by the
service when the game ends, not by views). The functions return a new stream state and
never change the one they are given.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator
from typing import Any, TypeVar

from engine.core.seed import seed_bytes

T = TypeVar("T")
Stream = dict[str, Any]
_TWO32 = 1 << 32


def new_stream(seed: int | str) -> Stream:
    """A fresh stream for `seed` (any seed the engine accepts; see `engine.core.seed`)."""
    return {"seed": seed_bytes(seed).hex(), "used": 0}


def _bytes(stream: Stream, count: int) -> tuple[bytes, Stream]:
    seed = bytes.fromhex(stream["seed"])
    used = int(stream["used"])
    out = bytearray()
    while len(out) < count:
        block, offset = divmod(used, 32)
        data = hashlib.sha256(seed + block.to_bytes(4, "big")).digest()
        take = min(32 - offset, count - len(out))
        out += data[offset:offset + take]
        used += take
    return bytes(out), {"seed": stream["seed"], "used": used}


def _aligned_words(seed_hex: str, used: int) -> Iterator[int]:
    """The stream's 4-byte words from byte `used` on (a multiple of 4), endlessly.

    `_bytes` recomputes the SHA-256 of the current block for every 4 bytes it reads; a
    shuffle of the 72-card deck reads 71 words, so this unpacks each block into its eight
    words once and hands them out in order: exactly the words `_bytes` would give."""
    seed = bytes.fromhex(seed_hex)
    block, skip = used >> 5, (used & 31) >> 2
    while True:
        words = _EIGHT_WORDS.unpack(hashlib.sha256(seed + block.to_bytes(4, "big")).digest())
        yield from words[skip:] if skip else words
        block, skip = block + 1, 0


_EIGHT_WORDS = struct.Struct(">8I")


def words(stream: Stream, count: int) -> tuple[list[int], Stream]:
    """The next `count` 4-byte big-endian words (for checking against a test vector)."""
    raw, stream = _bytes(stream, 4 * count)
    return [int.from_bytes(raw[i:i + 4], "big") for i in range(0, len(raw), 4)], stream


def draw(stream: Stream, n: int) -> tuple[int, Stream]:
    """A uniform integer in 0..n-1, by rejection (RNG4), and the next stream state."""
    if not 1 <= n <= _TWO32:
        raise ValueError(f"draw(n) needs 1 <= n <= 2**32, not {n}")
    limit = _TWO32 - (_TWO32 % n)
    while True:
        raw, stream = _bytes(stream, 4)
        x = int.from_bytes(raw, "big")
        if x < limit:
            return x % n, stream


def die(stream: Stream) -> tuple[int, Stream]:
    """One six-sided die, 1..6 (RNG5)."""
    value, stream = draw(stream, 6)
    return value + 1, stream


def shuffle(stream: Stream, items: list[T]) -> tuple[list[T], Stream]:
    """A shuffled copy of `items`, first element on top (RNG5), and the next stream.

    Each j is `draw(stream, i + 1)`; the words are read through `_aligned_words` (one
    SHA-256 per block, not per draw) when the stream is at a word boundary, as every
    stream these functions make is."""
    out = list(items)
    used = int(stream["used"])
    if used & 3:
        for i in range(len(out) - 1, 0, -1):
            j, stream = draw(stream, i + 1)
            out[i], out[j] = out[j], out[i]
        return out, stream
    if len(out) < 2:
        return out, stream
    read = _aligned_words(stream["seed"], used).__next__
    for i in range(len(out) - 1, 0, -1):
        n = i + 1
        x = read()
        used += 4
        if x >= _TWO32 - _TWO32 % n:  # RNG4's rejection (rare for a deck's sizes)
            limit = _TWO32 - _TWO32 % n
            while x >= limit:
                x = read()
                used += 4
        j = x % n
        out[i], out[j] = out[j], out[i]
    return out, {"seed": stream["seed"], "used": used}
