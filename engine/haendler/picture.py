"""An SVG picture of the Die Händler board, built from a view only (first cut)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from xml.sax.saxutils import escape


def picture(view: dict[str, Any], names: Sequence[str]) -> str:
    title = escape(f"Die Händler, round {view['round']}")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="100" height="20">'
            f"<title>{title}</title><text x='0' y='15'>{title}</text></svg>")
