"""The Die Händler board picture reads on the page (issue 22, the layout contract): laid
out alone 780 CSS px wide with the pages' stylesheet, every text is at least 11 CSS px
and no two texts overlap; at 390 px (a phone, where it is scaled down and can be zoomed)
nothing overlaps either.

Over pictures of seeded bot games (engine only): every seat count with each of the
first state, the most crowded middle (most goods on the carts), a state with Achsbruch
blocks on the carts and the end, seen by the public and by a seat (a different seat each
state, so every seat's view is drawn); every other variant's fullest and last states;
names that are long (80 characters), hyphenated and laden with markup; a board crowded
on purpose (every cart full and blocked in one city, the messenger beside it); and a
board file that places no city (a computed layout). One browser page, `set_content` per
picture.
"""

from __future__ import annotations

import copy
import re
from typing import Any, Literal

import pytest

from engine.core import titles
from engine.core.bots import play_game
from engine.haendler.picture import style
from tests.engine.haendler.helpers import board_doc
from tests.service.browserkit import picture_problems, show_svg

GAME = titles()["haendler"]
#: Names as players type them: long (80 characters, the most a name may have), with
#: markup and ampersands, with a hyphenated word too long for a line, Chinese and emoji.
NAMES = [
    "Miranda Montgomery-Fairweather of the Old Salt Road and the Seven Bridges of Lübeck",
    "<Ann & Co>",
    "Christopher-Maximilian 李小龍 🐉🐉🐉",
    'Jo "Jack" Ng',
]
VARIANTS: list[dict[str, Any]] = [
    {},
    {"abilities": "auction"},
    {"light": True},
    {"negotiation": True},
    {"start_cities": ["BRU", "LYO", "AUG"], "messenger_start": "KOE>AUG:2"},
]


def _loaded(s: dict[str, Any]) -> int:
    return sum(len(row) for cart in s["carts"] for row in cart["rows"])


def _states(seats: int, options: dict[str, Any], seed: str) -> list[tuple[str, dict[str, Any]]]:
    """The first state, the fullest carts, one with blocks (made when the bots made
    none: every cart blocked by a seat), and the end of one seeded bot game."""
    bots = GAME.bots()
    kinds = sorted(bots)
    kept: list[dict[str, Any]] = []
    play_game(GAME, seats, {i: bots[kinds[(i + seats) % len(kinds)]](f"{seed}/{i}") for i in range(seats)},
              seed=seed, options=options, on_step=lambda s, o, e: kept.append(s))  # fmt: skip
    running = [s for s in kept if not s["over"]]
    fullest = max(running, key=_loaded)
    blocked = next((s for s in running if s["blocks"]), None)
    if blocked is None:
        blocked = copy.deepcopy(running[len(running) // 2])
        blocked["blocks"] = [{"cart": c + 1, "by": c % seats} for c in range(len(blocked["carts"]))]
    assert kept[-1]["over"]
    return [("start", GAME.setup(seats, options, seed)), ("fullest", fullest), ("blocked", blocked),
            ("end", kept[-1])]  # fmt: skip


def _crowded(seats: int) -> dict[str, Any]:
    """Every cart in Köln with every slot loaded and blocked, the messenger on the next
    space: the most the map ever has to fit around one city."""
    s = copy.deepcopy(_states(seats, {}, "crowded")[1][1])
    goods = ["tuch", "wein", "salz", "nahrung", "eisen", "seide"]
    for c, cart in enumerate(s["carts"]):
        cart.update(at="KOE", master=c % seats, arrived=c == 1,
                    rows=[[goods[(c + p + k) % 6] for k in range(3 if p == c % seats else 2)] for p in range(seats)])
    s["blocks"] = [{"cart": c + 1, "by": c % seats} for c in range(len(s["carts"]))]
    s["messenger"] = "KOE>BRU:1"
    return s


def _pictures() -> list[tuple[str, str]]:
    """(what, svg): every seat count with the default options, each of its states seen
    by the public and by one seat (a different seat each state, so every seat's view is
    drawn); each other variant's fullest and last states from one seat; the crowded
    board from a seat and the public."""
    out = []
    games: list[tuple[int, dict[str, Any], tuple[str, ...]]] = [
        (n, {}, ("start", "fullest", "blocked", "end")) for n in range(GAME.min_seats, GAME.max_seats + 1)]
    games += [(GAME.min_seats + k % (GAME.max_seats - GAME.min_seats + 1), v, ("fullest", "end"))
              for k, v in enumerate(VARIANTS[1:])]  # fmt: skip
    for g, (seats, options, wanted) in enumerate(games):
        states = [(when, s) for when, s in _states(seats, options, f"pic-{seats}-{sorted(options)}") if when in wanted]
        for k, (when, state) in enumerate(states):
            viewers: list[Literal["public"] | int] = [(g + k) % seats]
            if not options:
                viewers.append("public")
            for viewer in viewers:
                out.append((f"{seats} seats {options} {when} as {viewer}",
                            GAME.picture(GAME.view(state, viewer), NAMES[:seats])))  # fmt: skip
    crowded = _crowded(GAME.max_seats)
    out += [(f"crowded as {v}", GAME.picture(GAME.view(crowded, v), NAMES)) for v in (0, "public")]
    unplaced = board_doc()  # a board file that places no city: the picture computes a layout
    unplaced["id"] = "no-positions"
    for node in [*unplaced["cities"], *unplaced["junctions"]]:
        node.pop("x", None)
        node.pop("y", None)
    for when, state in _states(GAME.max_seats, {"board": unplaced}, "pic-unplaced")[1::2]:
        out.append((f"a board without positions, {when}", GAME.picture(GAME.view(state, 2), NAMES)))
    return out


@pytest.fixture(scope="module")
def pictures() -> list[tuple[str, str]]:
    return _pictures()


_VIEWBOX = re.compile(r'viewBox="0 0 ([\d.]+) ([\d.]+)"')
_SIZE = re.compile(r'font-size="([\d.]+)"')


def test_every_font_reads_at_780_by_the_numbers(pictures: list[tuple[str, str]]) -> None:
    """Without a browser: font size × 765 / viewBox width ≥ 11 for every text (765 CSS px:
    the 780 px column less the frame), and the layout file says the same."""
    st = style()
    assert min(st.fonts.values()) * st.readable["column"] / st.width >= st.readable["min_px"] == 11
    for what, svg in pictures:
        width = float(_VIEWBOX.search(svg).group(1))  # type: ignore[union-attr]
        smallest = min(float(x) for x in _SIZE.findall(svg))
        assert smallest * 765 / width >= 11, f"{what}: a font of {smallest} in {width} reads below 11 px"


#: The SVG's box and every text that leaves it (left, right or below).
_SPILL = """s => {
  const b = s.getBoundingClientRect();
  const out = [...s.querySelectorAll("text")].filter(t => { const r = t.getBoundingClientRect();
    return r.left < b.left - 0.5 || r.right > b.right + 0.5 || r.bottom > b.bottom + 0.5; });
  return {width: b.width, spill: out.map(t => t.textContent)};
}"""


def test_every_picture_reads_at_780_and_nothing_overlaps_at_390(browser: Any,
                                                                 pictures: list[tuple[str, str]]) -> None:
    """At 780 px: no text under 11 px, none overlapping, the SVG filling its column (less
    the frame) with no text outside it. At 390 px (every third picture: the SVG scales
    as a whole, so what overlaps there overlaps at 780 too, but for rounding): no overlap,
    no text outside."""
    page = browser.new_page()
    found: list[str] = []
    for n, (what, svg) in enumerate(pictures):
        for width in (780, 390) if n % 3 == 0 else (780,):
            show_svg(page, svg, width)
            found += [f"{what} at {width}: {p}" for p in picture_problems(page, min_px=11.0 if width == 780 else None)]
            box = page.eval_on_selector("figure.picture svg", _SPILL)
            if not width - 20 <= box["width"] <= width:
                found.append(f"{what} at {width}: the picture is {box['width']:.0f} px wide")
            found += [f"{what} at {width}: {t!r} leaves the picture" for t in box["spill"]]
    page.close()
    assert len(pictures) > 30
    assert not found, f"{len(found)} problem(s):\n" + "\n".join(found[:40])
