"""engine.core.textfit: measuring, wrapping and cutting with a given width table.

The table here is made for round numbers: at size 10 a listed letter is 5 units wide, a
space or a hyphen 2.5, the ellipsis 10; bold text is 1.5 times as wide.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from engine.core.textfit import ELLIPSIS, Face, Font

TABLE = {**dict.fromkeys("abcdefghijklmnopqrstuvwxyz", 0.5), " ": 0.25, "-": 0.25, ELLIPSIS: 1.0}
FONT = Font(Face(TABLE, default=1.0, wide=2.0), Face(TABLE, default=1.0, scale=1.5))


def test_width_sums_the_table_times_size_and_scale() -> None:
    assert FONT.width("", 10) == 0
    assert FONT.width("ab", 10) == 10.0
    assert FONT.width("ab", 20) == 20.0
    assert FONT.width("a b-", 10) == 15.0
    assert FONT.width("ab", 10, bold=True) == 15.0


def test_unknown_characters_take_the_default_or_the_wide_width() -> None:
    assert FONT.width("#", 10) == 10.0  # not in the table: the default
    assert FONT.width("A", 10) == 10.0  # an unlisted capital too, when no case widths are given
    assert FONT.width("🦊", 10) == 20.0  # East Asian wide (most emoji): `wide`
    assert FONT.width("商人", 10) == 40.0
    assert FONT.width("🦊", 10, bold=True) == 15.0  # the bold face has no `wide`: its default
    by_case = Face({}, default=0.75, upper=0.5, lower=0.25)
    assert [by_case.em(c) for c in "Qq7Ä"] == [0.5, 0.25, 0.75, 0.5]


def test_fits_counts_the_characters_that_fit() -> None:
    assert FONT.fits("aaaa", 10, 15) == 3
    assert FONT.fits("aaaa", 10, 14.9) == 2
    assert FONT.fits("aaaa", 10, 4) == 0
    assert FONT.fits("aaaa", 10, 100) == 4


def test_wrap_breaks_between_words_at_the_width() -> None:
    # "aa" is 10 wide, a space 2.5: "aa bb" is 22.5, "aa bb cc" 35
    assert FONT.wrap("aa bb cc", 10, 25) == ["aa bb", "cc"]
    assert FONT.wrap("aa bb cc", 10, 22.5) == ["aa bb", "cc"]
    assert FONT.wrap("aa bb cc", 10, 22.4) == ["aa", "bb", "cc"]
    assert FONT.wrap("aa bb cc", 10, 35) == ["aa bb cc"]
    assert FONT.wrap("aa bb cc", 10, 25, bold=True) == ["aa", "bb", "cc"]  # bold: 15 + 3.75 + 15


def test_wrap_collapses_white_space_and_never_returns_no_line() -> None:
    assert FONT.wrap("  aa \n\t bb  ", 10, 100) == ["aa bb"]
    assert FONT.wrap("", 10, 100) == [""]
    assert FONT.wrap("   ", 10, 100) == [""]


def test_a_word_wider_than_a_line_breaks_where_the_line_is_full() -> None:
    # "aaa-bbbb" is 37.5 wide, one more "b" 42.5
    assert FONT.wrap("aaa-bbbbbb", 10, 40) == ["aaa-bbbb", "bb"]
    assert FONT.wrap("cc aaaaaaaaaa dd", 10, 40) == ["cc", "aaaaaaaa", "aa dd"]  # the rest goes on
    assert FONT.wrap("aa", 10, 2) == ["a", "a"]  # a character wider than the line: one a line


def test_with_hyphens_a_long_word_breaks_after_its_last_hyphen_that_fits() -> None:
    assert FONT.wrap("aaa-bbbbbb", 10, 40, hyphens=True) == ["aaa-", "bbbbbb"]
    assert FONT.wrap("a-b-cccccccc", 10, 40, hyphens=True) == ["a-b-", "cccccccc"]
    assert FONT.wrap("aaaaaaaa-bb", 10, 40, hyphens=True) == ["aaaaaaaa", "-bb"]  # no hyphen fits: full line
    assert FONT.wrap("xx aaa-bb", 10, 30, hyphens=True) == ["xx", "aaa-bb"]  # a word that fits is not broken


def test_cut_keeps_the_longest_start_that_fits_with_an_ellipsis() -> None:
    assert FONT.cut("aaaa bbbb", 10, 42.5) == "aaaa bbbb"  # fits: unchanged
    assert FONT.cut("aaaa bbbb", 10, 30) == "aaaa…"  # 20 for the letters, 10 for the ellipsis
    assert FONT.cut("aaa bbbb", 10, 30) == "aaa…"  # the space before the ellipsis goes
    assert FONT.cut("aaa bbbb", 10, 32.5) == "aaa b…"
    assert FONT.cut("aaaa", 10, 5) == ELLIPSIS  # not even one letter fits


def test_wrap_to_at_most_some_lines_cuts_the_last_with_an_ellipsis() -> None:
    assert FONT.wrap("aa bb cc dd", 10, 25, lines=2) == ["aa bb", "cc dd"]  # fits in two: unchanged
    assert FONT.wrap("aa bb cc dd ee", 10, 25, lines=2) == ["aa bb", "cc…"]
    assert FONT.wrap("aa bb cc dd ee", 10, 25, lines=1) == ["aa…"]
    assert FONT.wrap("aa bb cc dd ee", 10, 25, lines=9) == ["aa bb", "cc dd", "ee"]
    with pytest.raises(ValueError, match="lines"):
        FONT.wrap("aa", 10, 25, lines=0)


@pytest.mark.parametrize("face", [
    lambda: Face({"ab": 0.5}, default=1.0),
    lambda: Face({"a": -0.5}, default=1.0),
    lambda: Face({"a": math.nan}, default=1.0),
    lambda: Face({"a": True}, default=1.0),
    lambda: Face({}, default=0),
    lambda: Face({}, default=1.0, scale=0),
    lambda: Face({}, default=1.0, wide=math.inf),
    lambda: Face({}, default=1.0, upper=-1),
])  # fmt: skip
def test_a_bad_width_table_is_refused(face: Callable[[], Face]) -> None:
    with pytest.raises(ValueError):
        face()
