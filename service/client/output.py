"""What `kontor` prints for people: colour and tables (rich) on a terminal, plain text else.

Plain text (no escape codes, no box drawing, no line cut or wrapped to a width) when
standard output is not a terminal or `NO_COLOR` is set to anything but the empty text
(https://no-color.org); `FORCE_COLOR` asks for colour on a pipe too. Scripts read `--json`,
which never comes through here.

A line's colour says what kind of line it is (`style_of`): the headline, your turn,
waiting for others, the end of the game; the words stay the same either way.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

import click
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

#: A style per kind of line (rich style names).
STYLES = {
    "title": "bold",
    "head": "bold blue",
    "turn": "bold green",
    "wait": "yellow",
    "over": "bold magenta",
    "dim": "dim",
    "bad": "bold red",
}

#: How a line of `kontor status` begins -> its style.
_LEADS = (
    ("Your turn", "turn"),
    ("Step ", "head"),
    ("Waiting for", "wait"),
    ("Not your turn", "wait"),
    ("Nothing is asked of you", "wait"),
    ("You answered", "turn"),
    ("The game is over", "over"),
    ("Rules:", "dim"),
)


def use_rich(stream: TextIO | None = None) -> bool:
    """Colour and tables? Not with NO_COLOR, yes with FORCE_COLOR, else when `stream`
    (standard output) is a terminal."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    stream = stream if stream is not None else sys.stdout
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or odd stream
        return False


def style_of(line: str) -> str | None:
    """The kind of a `kontor status` line, by how it begins."""
    stripped = line.lstrip()
    for lead, style in _LEADS:
        if stripped.startswith(lead):
            return style
    return None


class Out:
    """Lines and tables for people on standard output."""

    def __init__(self, rich: bool | None = None) -> None:
        self.rich = use_rich() if rich is None else rich
        self._console: Console | None = None

    @property
    def console(self) -> Console:
        if self._console is None:
            # file=None: rich writes to whatever sys.stdout is when it prints
            self._console = Console(highlight=False, emoji=False, soft_wrap=True, force_terminal=True,
                                    no_color=bool(os.environ.get("NO_COLOR")))
        return self._console

    def line(self, text: str = "", style: str | None = None) -> None:
        if not self.rich:
            click.echo(text)
            return
        self.console.print(Text(text, style=STYLES.get(style or "", style or "")))

    def lines(self, texts: Sequence[str], styled: bool = True) -> None:
        """Lines, each coloured by what it says (`style_of`) when `styled`."""
        for i, text in enumerate(texts):
            style = ("title" if i == 0 else style_of(text)) if styled else None
            self.line(text, style)

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[Any]],
              styles: Sequence[str | None] | None = None) -> None:
        """A table: a header and a row per item; `styles` colours whole rows. Plain: the
        columns aligned with two spaces between them, the header in capitals."""
        cells = [["" if c is None else str(c) for c in row] for row in rows]
        if not self.rich:
            for line in plain_table(headers, cells):
                click.echo(line)
            return
        table = Table(box=box.SIMPLE_HEAD, header_style="bold", pad_edge=False, show_edge=False)
        for h in headers:
            table.add_column(h, overflow="fold")
        for i, row in enumerate(cells):
            style = (styles[i] if styles and i < len(styles) else None) or ""
            table.add_row(*row, style=STYLES.get(style, style))
        self.console.print(table, soft_wrap=False)


def plain_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Aligned columns (two spaces apart), the header in capitals, no trailing spaces."""
    head = [h.upper() for h in headers]
    widths = [max([len(head[i]), *(len(r[i]) for r in rows if i < len(r))]) for i in range(len(head))]
    out = []
    for row in [head, *rows]:
        out.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
    return out
