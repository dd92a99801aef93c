"""The verifiable stream (engine.core.stream) against Auf Achse's test vector AA-1."""

from __future__ import annotations

import pytest

from engine.core.seed import commitment, seed_bytes
from engine.core.stream import die, draw, new_stream, shuffle, words

AA1_SEED = bytes(range(32)).hex()


def test_rng2_commitment_of_the_aa1_seed() -> None:
    assert commitment(AA1_SEED) == "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"


def test_rng3_the_first_four_words_of_the_aa1_stream() -> None:
    got, _ = words(new_stream(AA1_SEED), 4)
    assert got == [0x70F4003D, 0x52B6EB03, 0xDA852E93, 0x256B5986]


def test_rng5_ten_dice_from_a_fresh_aa1_stream() -> None:
    s, rolls = new_stream(AA1_SEED), []
    for _ in range(10):
        value, s = die(s)
        rolls.append(value)
    assert rolls == [4, 2, 2, 5, 5, 6, 5, 3, 3, 1]


def test_rng3_blocks_continue_across_the_32_byte_boundary() -> None:
    s = new_stream(AA1_SEED)
    first, s = words(s, 9)  # 36 bytes: into block 1
    again, _ = words(new_stream(AA1_SEED), 9)
    assert first == again and s["used"] == 36


def test_rng4_draw_is_in_range_and_rejects_the_biased_tail() -> None:
    s = new_stream("any")
    for n in (1, 2, 3, 6, 7, 54, 2**31 + 1):
        for _ in range(20):
            v, s = draw(s, n)
            assert 0 <= v < n
    # n = 2**31 + 1 rejects about half of all words; the draws above still terminated
    with pytest.raises(ValueError):
        draw(s, 0)


def test_rng5_shuffle_is_a_permutation_and_never_changes_its_input() -> None:
    s = new_stream(AA1_SEED)
    items = list(range(54))
    out, s2 = shuffle(s, items)
    assert sorted(out) == items and out != items and items == list(range(54))
    assert s == {"seed": seed_bytes(AA1_SEED).hex(), "used": 0} and s2["used"] > 0
