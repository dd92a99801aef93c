"""What may never appear in a text a player reads: decision ids (W-CLOSE, D-PRICE), rule ids
outside links ((H-96), (T3), (FD12), S6), card ids (MP4), board ids (KOE>BRU:4, R35.1),
`null`/`None`, raw JSON. One checker for the generic choices test and the channel scans."""

from __future__ import annotations

import re

#: Patterns of identifiers and engine JSON, each with what it catches.
FORBIDDEN: list[tuple[str, re.Pattern[str]]] = [
    ("a decision id", re.compile(r"\b(?:D|W)-[A-Z]{2,}\b|\bD\d-[A-Z]+\b")),
    ("a rule id", re.compile(r"\(\s*[A-Z]{1,3}-?\d{1,3}[a-z]?\s*\)"
                             r"|\b(?:[A-Z]{1,2}-\d{1,3}|[A-Z]{1,3}\d{1,3})\b(?![A-Za-z])")),
    ("a board id", re.compile(r"\b[A-Z]{3}>[A-Z]{3}\b|\bR\d+\.\d+\b")),
    ("null", re.compile(r"\bnull\b|\bNone\b")),
    ("raw JSON", re.compile(r"[{}]|\[\s*\"|\"\s*:")),
    ("a snake_case identifier", re.compile(r"\b[a-z]+_[a-z_]+\b")),
]


def problems(text: str) -> list[str]:
    """What in `text` a player should not read, as "<what>: <match>" lines."""
    out = []
    for what, pat in FORBIDDEN:
        for m in pat.finditer(text):
            out.append(f"{what}: {m.group(0)!r} in {text[max(0, m.start() - 30):m.end() + 30]!r}")
    return out
