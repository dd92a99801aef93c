"""Every text a title gives a player is words: over 3 seeded games per title, no decision
id, rule id, card or board id, `null` or raw JSON in any sentence, request line, summary,
headline or picture text (tests/playertext.py), and every place a prompt offers is an
element of the picture that seat sees (so a page can make it clickable).

Refusal messages may cite a rule ("(H-41)"): channels turn a citation into a link to that
rule in the player's guide (service.words), so they are not scanned here.
"""

from __future__ import annotations

import html
import re
from typing import Any

import pytest

from engine.core import titles
from engine.core.bots import play_game
from tests.playertext import problems

TITLE_IDS = sorted(titles())
NAMES = ["Miranda", "Christopher", "Henry", "Jack", "Courtney", "Helen", "Ada", "Bob"]
_TAG = re.compile(r"<[^>]+>")
_ID = re.compile(r'\bid="([^"]+)"')


def picture_text(svg: str) -> str:
    return html.unescape(_TAG.sub(" ", svg))


def scan(where: str, text: str, found: list[str]) -> None:
    for p in problems(text):
        found.append(f"{where}: {p}")


@pytest.mark.parametrize("tid", TITLE_IDS)
def test_every_text_a_player_reads_is_words(tid: str) -> None:
    game = titles()[tid]
    bots = game.bots()
    kinds = sorted(bots)
    found: list[str] = []
    for g in range(3):
        seats = min(game.max_seats, game.min_seats + g + 1)
        names = NAMES[:seats]
        kept: list[tuple[dict[str, Any], list[Any]]] = []
        play_game(game, seats, {i: bots[kinds[(i + g) % len(kinds)]](f"w{g}/{i}") for i in range(seats)},
                  seed=f"words-{g}", on_step=lambda s, o, e, keep=kept: keep.append((s, e)))
        for n, (state, events) in enumerate(kept):
            for ev in events:
                scan(f"{tid} event {ev.get('type')}", game.describe_event(ev, names), found)
            if n % 4:
                continue
            for viewer in [*range(seats), "public"]:
                view = game.view(state, viewer)
                scan(f"{tid} summary", game.summary(view, names), found)
                scan(f"{tid} headline", game.headline(view), found)
                svg = game.picture(view, names)
                scan(f"{tid} picture", picture_text(svg), found)
                if not isinstance(viewer, int):
                    continue
                ids = set(_ID.findall(svg))
                for req in game.requests(state):
                    if req.seat != viewer:
                        continue
                    scan(f"{tid} request {req.kind}", game.describe_request(req, view, names), found)
                    p = game.prompt(state, viewer, [])
                    if p is not None and p.ask is not None:
                        for o in p.ask.options:
                            if o.place is not None and o.place not in ids:
                                found.append(f"{tid} {req.kind}: option {o.label!r} names place {o.place!r}, "
                                             "not in the picture")
        final = kept[-1][0] if kept else None
        if final is not None:
            scan(f"{tid} final summary", game.summary(game.view(final, "public"), names), found)
    assert not found, "\n".join(sorted(set(found))[:60])
