"""Committed seeds: every title's randomness can be checked after the game.

At setup the engine commits to the game's seed with `commitment(seed)`, a lowercase hex
SHA-256 that is public from the first moment (in every view, and in the service's first
event). The seed itself stays secret while the game runs; when the game ends it is
revealed, and anyone can check `commitment(seed)` against the published value and replay
every draw (`engine.core.verify`).

A seed is 32 bytes. A server-made seed is those bytes as 64 lowercase hex digits (drawn
from the operating system's cryptographic generator by the driver that creates the game;
the engine never draws outside randomness). Tests and bot games
may use any JSON int or string: such a seed stands for the 32 bytes
`SHA-256("kontor-seed/1\\0" + its JSON text)`, so an int and a string that look alike are
different seeds with different commitments. The commitment is `SHA-256(seed bytes)`,
exactly `SHA-256(seed)` for a 32-byte seed (Auf Achse RNG2).
"""

from __future__ import annotations

import hashlib
import json

_HEX = frozenset("0123456789abcdef")


def is_raw(seed: object) -> bool:
    """Whether `seed` is a server-style 32-byte seed written as 64 lowercase hex digits."""
    return isinstance(seed, str) and len(seed) == 64 and set(seed) <= _HEX


def seed_bytes(seed: int | str) -> bytes:
    """The 32 bytes a seed stands for."""
    if isinstance(seed, bool) or not isinstance(seed, int | str):
        raise TypeError(f"a seed is an int or a string, not {type(seed).__name__}")
    if is_raw(seed):
        return bytes.fromhex(seed)  # type: ignore[arg-type]  # is_raw checked it is a str
    text = json.dumps(seed, ensure_ascii=False)
    return hashlib.sha256(b"kontor-seed/1\0" + text.encode()).digest()


def commitment(seed: int | str) -> str:
    """The public commitment to `seed`: lowercase hex SHA-256 of its 32 bytes."""
    return hashlib.sha256(seed_bytes(seed)).hexdigest()


def state_digest(state: object) -> str:
    """A SHA-256 of a state's canonical JSON (sorted keys, no spaces): what a history
    records after each step, so a replay can say exactly where it differs."""
    text = json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()
