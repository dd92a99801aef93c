"""The Fantasy Business picture reads at 780 CSS px (the column a 1280 px window gives it):
every text at least 11 px, no two texts overlapping, every text inside the picture, in
every state: 3, 5 and 8 seats, the start, each kind of decision (the windows for specials,
selecting, opening, bidding, a lone card, price sheets, the Spy, a trading proposal), the
middle and the end, every seat's view and the public one, with the variants, and with
long player names (80 characters, markup, letters outside Latin). At 390 px (a phone) it
is scaled down but still nothing overlaps. A long name is cut with an ellipsis only where
the whole name is in a `<title>`.

The states come from seeded bot games of the engine (no server): one page, one
`set_content` per picture.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from functools import cache
from typing import Any
from xml.etree import ElementTree

import pytest

from engine.core import titles
from engine.core.bots import play_game
from tests.service.browserkit import picture_problems, show_svg

GAME = titles()["fantasy"]
#: Long names: 80 wide letters, 80 characters in words, markup, and letters outside Latin.
NAMES = ["Ann " + "W" * 76, "Bob", "Maximiliane Wilhelmina von Hohenzollern-Sigmaringen und Württemberg-Hohenlohe Mm",
         '<b>"Tom" & Jerry</b>', "Zoë Ωμέγα Ελληνικά Москва 東京 🎲🎲", "Eve", "Wolfgang " + "M" * 71, "Hal"]
#: (seat count, variant options, every state or only start, middle and end): the smallest and
#: the largest table with the trading variant (proposals), a middle one with the other variants.
GAMES = [(3, {"trading": True}, True), (8, {"trading": True}, True),
         (5, {"below_base": True, "sole_bonus": True, "rounds": 3}, False)]
SVG = "{http://www.w3.org/2000/svg}"

#: Every text's box inside the SVG's box.
_OUTSIDE = """(root) => {
  const svg = root.querySelector("svg"), box = svg.getBoundingClientRect(), out = [];
  for (const t of svg.querySelectorAll("text")) {
    const r = t.getBoundingClientRect();
    if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
      out.push(t.textContent.slice(0, 40));
  }
  return out;
}"""


@cache
def states() -> list[tuple[int, dict[str, Any], str, dict[str, Any]]]:
    """(seats, options, what, state): for each game, the start, the middle and the end, and
    where it says so the first state of each kind of decision and the first with a trading
    proposal."""
    bots = GAME.bots()
    kinds = sorted(bots)
    out = []
    for n, (seats, options, every) in enumerate(GAMES):
        kept: list[dict[str, Any]] = []
        play_game(GAME, seats, {i: bots[kinds[(i + n) % len(kinds)]](f"pic{n}/{i}") for i in range(seats)},
                  seed=f"picture-{n}", options=options, on_step=lambda s, o, e, keep=kept: keep.append(s))
        chosen = {"start": kept[0], "middle": kept[len(kept) // 2], "end": kept[-1]}
        for state in kept if every else ():
            if state.get("pending"):
                chosen.setdefault(state["pending"]["kind"], state)
            if state.get("proposals"):
                chosen.setdefault("proposal", state)
        out += [(seats, options, what, state) for what, state in chosen.items()]
    return out


def pictures(every_seat: bool = False) -> Iterator[tuple[str, str]]:
    """(what, svg): each state of `states()` seen by the seat asked to decide (its hand, its
    sealed sheet, what a Spy sees; the first seat when none is) and, on the largest table
    by the public, on the others by the first seat (its long name in its hand's row); or
    with `every_seat` by every seat and the public. Each different picture once."""
    seen: set[str] = set()
    for seats, options, what, state in states():
        asked = (state.get("pending") or {}).get("seats") or [0]
        viewers: list[int | str] = [*range(seats), "public"] if every_seat else \
            [asked[-1], "public"] if seats == max(g[0] for g in GAMES) else [asked[-1], 0]
        for viewer in viewers:
            svg = GAME.picture(GAME.view(state, viewer), NAMES[:seats])
            if svg not in seen:
                seen.add(svg)
                yield f"{seats} seats {options} {what}, seen by {viewer}", svg


def test_the_states_cover_every_phase() -> None:
    seen = {what for _, _, what, _ in states()}
    assert seen == {"start", "middle", "end", "proposal", "w_open", "select", "open", "bid", "lone", "w_close",
                    "price", "w_spy", "spy", "w_reveal", "accept"}, seen
    assert {seats for seats, _, _, _ in states()} == {3, 5, 8}


def test_a_text_is_cut_only_with_the_whole_text_in_a_title() -> None:
    found = []
    cut = 0
    for what, svg in pictures(every_seat=True):
        root = ElementTree.fromstring(svg)
        for group in root.iter(f"{SVG}g"):
            title = group.find(f"{SVG}title")
            whole = " ".join((title.text or "").split()) if title is not None else ""
            for text in group.findall(f"{SVG}text"):
                words = text.text or ""
                if "…" in words and not all(part.strip() in whole for part in words.split("…")):
                    found.append(f"{what}: {words!r} is cut, not whole in a <title> ({whole!r})")
        loose = [t.text for t in root.findall(f"{SVG}text") if "…" in (t.text or "")]
        found += [f"{what}: {t!r} is cut, with no <title>" for t in loose]
        cut += svg.count("…")
    assert cut > 100, "the long names were not cut: the test tests nothing"
    assert not found, "\n".join(found[:20])


def test_the_picture_reads_at_780_and_at_390(browser: Any) -> None:
    page = browser.new_page()
    found: list[str] = []
    count = 0
    for what, svg in pictures():
        count += 1
        # At 390 (scaled down as a whole) the largest table, seen by the public.
        phone = what.startswith("8 ") and what.endswith("public")
        for width, least in ((780, 11.0), (390, None)) if phone else ((780, 11.0),):
            show_svg(page, svg, width)
            found += [f"{what} at {width}: {p}" for p in picture_problems(page, min_px=least)]
            found += [f"{what} at {width}: {t!r} runs outside the picture"
                      for t in page.eval_on_selector("figure.picture", _OUTSIDE)]
    page.close()
    assert count > 45, f"only {count} different pictures"
    assert not found, f"{len(found)} problem(s):\n" + "\n".join(found[:40])


@pytest.mark.parametrize("seats", [3, 8])
def test_every_name_is_given_whole_and_escaped(seats: int) -> None:
    state = GAME.setup(seats, {}, 3)
    svg = GAME.picture(GAME.view(state, "public"), NAMES[:seats])
    assert "<b>" not in svg
    for name in NAMES[:seats]:
        assert html.escape(name) in svg, f"{name!r} is not in the picture whole"
