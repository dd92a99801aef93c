"""Measuring, wrapping and cutting text for a title's picture, without a browser.

A picture is drawn on the server, so the width a text will take must be estimated from
a table of the font's advance widths (in ems, per character). A title loads and checks its
own table (a data file) and hands it in as a `Font`: one `Face` for normal and one for
bold text, each with the widths of the characters it lists and the width of a character
it does not list (optionally wider for East Asian wide characters and emoji, or by case
for letters), and a factor every width is multiplied by (a safety margin, so that the
estimate errs wide, or the weight's widening).

`Font.width` measures, `Font.wrap` breaks a text into lines no wider than a width (between
words; a word wider than a line where it must, after a hyphen if asked), at most a given
number of lines (the last one cut with an ellipsis: the caller keeps the full text, e.g. in
a `<title>`), and `Font.cut` shortens one line with an ellipsis.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass

ELLIPSIS = "…"


def _em(value: float | None, what: str, least: float = 0.0) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < least:
        raise ValueError(f"{what} must be a finite number of at least {least:g}, not {value!r}")


@dataclass(frozen=True)
class Face:
    """The advance widths of one weight of a font, in ems.

    `widths` maps a character to its width; a character it lacks is `wide` wide when
    that is given and the character is East Asian wide or full-width (most emoji are),
    else `upper` or `lower` by its case when those are given and it is a letter, else
    `default`. Every width is multiplied by `scale`.
    """

    widths: Mapping[str, float]
    default: float
    scale: float = 1.0
    wide: float | None = None
    upper: float | None = None
    lower: float | None = None

    def __post_init__(self) -> None:
        for ch, em in self.widths.items():
            if not isinstance(ch, str) or len(ch) != 1:
                raise ValueError(f"a width table's key must be one character, not {ch!r}")
            _em(em, f"the width of {ch!r}")
        _em(self.default, "the default width", 1e-9)
        _em(self.scale, "the scale", 1e-9)
        for name in ("wide", "upper", "lower"):
            _em(getattr(self, name), f"the {name} width", 1e-9)

    def em(self, ch: str) -> float:
        """The width of the character `ch`, in ems (before `scale`)."""
        em = self.widths.get(ch)
        if em is not None:
            return em
        if self.wide is not None and unicodedata.east_asian_width(ch) in ("W", "F"):
            return self.wide
        if ch.isalpha():
            if ch.isupper() and self.upper is not None:
                return self.upper
            if not ch.isupper() and self.lower is not None:
                return self.lower
        return self.default


@dataclass(frozen=True)
class Font:
    """A font's two weights; every size is in user units (the font size)."""

    normal: Face
    bold: Face

    def face(self, bold: bool) -> Face:
        return self.bold if bold else self.normal

    def width(self, text: str, size: float, bold: bool = False) -> float:
        """The estimated width of `text` at font size `size`."""
        face = self.face(bold)
        return sum(face.em(ch) for ch in text) * size * face.scale

    def fits(self, text: str, size: float, width: float, bold: bool = False) -> int:
        """How many characters from the start of `text` fit in `width` (possibly none)."""
        face = self.face(bold)
        em, n = 0.0, 0
        for ch in text:
            em += face.em(ch)
            if em * size * face.scale > width:
                break
            n += 1
        return n

    def cut(self, text: str, size: float, width: float, bold: bool = False) -> str:
        """`text` if it fits in `width`, else its longest start that fits with an ellipsis
        after it (spaces before the ellipsis dropped)."""
        if self.width(text, size, bold) <= width:
            return text
        room = width - self.width(ELLIPSIS, size, bold)
        return text[: self.fits(text, size, room, bold)].rstrip() + ELLIPSIS

    def wrap(self, text: str, size: float, width: float, bold: bool = False, *, hyphens: bool = False,
             lines: int | None = None) -> list[str]:
        """`text` in lines no wider than `width`, broken between words (runs of white space
        count as one space). A word wider than a line is broken where the line is full, or
        with `hyphens` after its last hyphen that fits when it has one. With `lines`, at most
        that many lines: the last one is cut with an ellipsis when the rest does not fit in
        it (the caller then shows the whole text elsewhere). Never an empty list."""
        if lines is not None and lines < 1:
            raise ValueError(f"lines must be at least 1, not {lines}")
        rest = " ".join(text.split())
        out: list[str] = []
        while rest:
            if self.width(rest, size, bold) <= width:
                out.append(rest)
                break
            if lines is not None and len(out) == lines - 1:
                out.append(self.cut(rest, size, width, bold))
                break
            k = max(1, self.fits(rest, size, width, bold))
            space = rest.rfind(" ", 0, k + 1)
            if space > 0:
                k = space
            elif hyphens:
                k = rest.rfind("-", 0, k) + 1 or k
            out.append(rest[:k].rstrip())
            rest = rest[k:].lstrip()
        return out or [""]
