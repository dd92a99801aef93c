"""A seeded random generator whose whole state is one JSON integer.

SplitMix64: tiny, fast, and good enough for shuffles and deals. The state lives inside
the game state (never in a view), so replaying the accepted orders from the seed
reproduces every draw.
"""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")
_MASK = (1 << 64) - 1


def seed_state(seed: int | str) -> int:
    """Turn any seed (int or text) into a 64-bit generator state."""
    if isinstance(seed, str):
        acc = 1469598103934665603  # FNV-1a over the UTF-8 bytes
        for byte in seed.encode():
            acc = ((acc ^ byte) * 1099511628211) & _MASK
        return acc
    return seed & _MASK


def next64(state: int) -> tuple[int, int]:
    """One draw: (64-bit value, next state)."""
    state = (state + 0x9E3779B97F4A7C15) & _MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31), state


def below(state: int, n: int) -> tuple[int, int]:
    """A uniform integer in [0, n) without modulo bias, and the next state."""
    if n <= 0:
        raise ValueError("n must be positive")
    while True:  # Lemire's multiply-shift, rejecting the few biased low products
        value, state = next64(state)
        product = value * n
        if (product & _MASK) >= (1 << 64) % n:
            return product >> 64, state


def shuffled(state: int, items: list[T]) -> tuple[list[T], int]:
    """A Fisher-Yates shuffled copy of `items`, and the next state."""
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j, state = below(state, i + 1)
        out[i], out[j] = out[j], out[i]
    return out, state
