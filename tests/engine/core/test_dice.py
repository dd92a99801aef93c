"""A bot's `Dice` draws exactly what `engine.core.rng` would from the same seed: `below(n)`
is `rng.below`, and `chance(p)` is `rng.below(1000) < int(p * 1000)`, value by value,
across refills of its lanes and through the rare rejected value of `below(1000)`."""

from __future__ import annotations

import random

from engine.core import rng
from engine.core.bots import _LANES, _SHORT_THOUSAND, Dice

_MASK = (1 << 64) - 1


def test_below_and_chance_follow_the_reference_generator() -> None:
    pick = random.Random(11)
    for seed in [*range(40), *(f"bench/{i}/3" for i in range(40))]:
        dice, state = Dice(seed), rng.seed_state(seed)
        for _ in range(3 * _LANES):  # across several refills
            if pick.random() < 0.5:
                p = pick.choice([0.0, 0.05, 0.3, 0.45, 0.6, 1.0, pick.random()])
                want, state = rng.below(state, 1000)
                assert dice.chance(p) == (want < int(p * 1000)), (seed, p)
            else:
                n = pick.choice([1, 2, 3, 7, 999, 1000, 12345, 2**40])
                want, state = rng.below(state, n)
                assert dice.below(n) == want, (seed, n)


def test_chance_draws_on_past_a_rejected_value() -> None:
    """A value whose product with 1000 has a low word under 2**64 % 1000 is rejected by
    `below(1000)`; `chance` then uses the next value, as `below` does."""
    dice = Dice(1)
    rejected = 0  # 0 * 1000 has the low word 0
    values = (rejected, 7 << 58, *((i * 0x9E3779B97F4A7C15) & _MASK for i in range(_LANES - 2)))
    assert (values[0] * 1000) & _MASK < _SHORT_THOUSAND <= (values[1] * 1000) & _MASK
    dice._values, dice._next = values, 0
    per_mille = (values[1] * 1000) >> 64  # below(1000) of the next value
    assert dice.chance(0.3) == (per_mille < 300)
    assert dice._next == 2  # both values used
