"""The Auf Achse picture as a browser lays it out (issue 22, item 3; the layout contract):
780 CSS px wide, every text at least 11 px and no two texts overlapping; 390 px wide, no
two texts overlapping. Over pictures of seeded bot games (the title's own bots, engine
only, no server): every seat count, the variants on and off, at the start, just after
the trucks are placed (from every seat and the public's view), in the middle (from every
seat of the smallest and the largest game) and at the end; and a crowded table (every
truck on one city of the densest corner, both markers beside it, long names with markup
in them). One page for the module, one `set_content` a picture (`show_svg`,
tests/service/browserkit.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from typing import Any

import pytest

from engine.aufachse.context import ctx_of
from engine.aufachse.picture import place_id
from engine.core import get
from engine.core.bots import play_game
from tests.service.browserkit import picture_problems, show_svg

GAME = get("aufachse")
#: Players' names: short, long and with markup in them (the picture must escape it).
NAMES = ["Anna", "Bartholomew Fitzgerald-Smythe", "Clara <b>&amp;", "Dieter", "Eva-Maria Müller", "Fritz"]
#: Each seat count with its variant (the kids' game: no trailers, longer hands).
GAMES = [(2, False), (3, True), (4, False), (5, False), (6, True)]
#: The trucks of the crowded table: all on Köln (the board's densest corner), the
#: markers on the next road spaces.
CROWD = "Koeln"


def _games() -> Iterator[tuple[str, dict[str, Any], list[Any], list[str]]]:
    """(what, state, viewers, names) for the pictures to check."""
    bots = GAME.bots()
    kinds = sorted(bots)
    for g, (seats, kids) in enumerate(GAMES):
        names = NAMES[:seats]
        kept: list[dict[str, Any]] = []
        play_game(GAME, seats, {i: bots[kinds[(i + g) % len(kinds)]](f"pic{g}/{i}") for i in range(seats)},
                  seed=f"picture-{g}", options={"kids": kids}, on_step=lambda s, o, e, keep=kept: keep.append(s))
        placed = next(s for s in kept if s["phase"] != "place")
        every = [*range(seats), "public"]
        what = f"{seats} seats{' (kids)' if kids else ''}"
        yield f"{what}, start", kept[0], ["public"], names
        yield f"{what}, trucks placed", placed, every, names
        middle = every if g in (0, len(GAMES) - 1) else [seats - 1, "public"]
        yield f"{what}, middle", kept[len(kept) // 2], middle, names
        yield f"{what}, end", kept[-1], [0, "public"], names


def _crowded() -> tuple[dict[str, Any], list[str]]:
    """A 6-seat table with every truck on one city of the densest corner, a roadworks
    and a traffic jam on the roads beside it, long hands and loads."""
    seats = 6
    kept: list[dict[str, Any]] = []
    bots = GAME.bots()
    play_game(GAME, seats, {i: bots["planner"](f"crowd/{i}") for i in range(seats)}, seed="crowd",
              on_step=lambda s, o, e, keep=kept: keep.append(s))
    s = dict(kept[len(kept) // 2])
    board = ctx_of(s).board
    near = [sp for sp in board.adj[CROWD] if not board.is_city(sp)]
    s["players"] = [dict(p, at=CROWD) for p in s["players"]]
    s["players"][5] = dict(s["players"][5], at=near[0])
    s["roadworks"], s["jam"] = near[1], {"at": near[2]}
    return s, NAMES[:seats]


@pytest.fixture(scope="module")
def pictures() -> list[tuple[str, str]]:
    """(what, svg) for every picture to check, each once."""
    out: dict[str, str] = {}
    for what, state, viewers, names in _games():
        for viewer in viewers:
            out.setdefault(GAME.picture(GAME.view(state, viewer), names), f"{what}, seen by {viewer}")
    state, names = _crowded()
    for viewer in (1, "public"):
        out.setdefault(GAME.picture(GAME.view(state, viewer), names), f"crowded table, seen by {viewer}")
    return [(what, svg) for svg, what in out.items()]


@pytest.fixture(scope="module")
def page(browser: Any) -> Iterator[Any]:
    ctx = browser.new_context(viewport={"width": 820, "height": 900})
    yield ctx.new_page()
    ctx.close()


def test_every_picture_reads_at_780_px(page: Any, pictures: list[tuple[str, str]]) -> None:
    """At the column a screen gives the picture: no text under 11 px, none overlapping."""
    assert len(pictures) >= 50
    found = []
    for what, svg in pictures:
        show_svg(page, svg, 780)
        found += [f"{what}: {p}" for p in picture_problems(page)]
    assert not found, "\n".join(found[:40])


def test_no_text_overlaps_at_390_px(page: Any, pictures: list[tuple[str, str]]) -> None:
    """On a phone (the picture scaled down, to be zoomed): still no two texts overlapping."""
    found = []
    for what, svg in pictures[::3] + [p for p in pictures if p[0].startswith("crowded")]:
        show_svg(page, svg, 390)
        found += [f"{what}: {p}" for p in picture_problems(page, min_px=None)]
    assert not found, "\n".join(found[:40])


def test_names_are_escaped_and_every_place_is_named(pictures: list[tuple[str, str]]) -> None:
    """Markup in a name is text in the picture, and every clickable place (a city or a
    road space, `place_id`) is an element with a `<title>` child saying what it is."""
    board = ctx_of(GAME.setup(2, {}, 1)).board
    for what, svg in pictures:
        assert "<b>" not in svg and "Clara &lt;b&gt;&amp;amp;" in svg or "Clara" not in svg, what
        for space in board.spaces:
            m = re.search(rf'id="{re.escape(place_id(space))}"[^>]*>(<[^>]+>)*?<title>([^<]+)</title>', svg)
            assert m, f"{what}: no element with a title for {space}"
            assert unescape(m.group(2)).startswith(board.name(space)), (what, space, m.group(2))
