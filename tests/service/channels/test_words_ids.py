"""Words without identifiers (issue 21, Deliver 6): rule citations become links to the
rule's anchor in the player's guide or are dropped, bots have distinct names stable for
the game, and rankings show scores."""

from __future__ import annotations

from pathlib import Path

from service import words
from service.core.kontor import Kontor
from service.core.lobby import bot_given_names, bot_name
from tests.playertext import problems
from tests.service.conftest import domain_game

GUIDE = "https://kontor.example/titles/haendler/rules"
ANCHORS = frozenset({"H-96", "H-41", "H-60"})


def test_rule_anchors_are_the_rule_ids_the_guides_headings_name() -> None:
    guide = Path("docs/rules/haendler.md").read_text(encoding="utf-8")
    anchors = words.rule_anchors(guide)
    assert {"H-41", "H-44", "H-36", "H-60", "H-70"} <= anchors
    assert "T3" not in anchors and "H-41 to H-44" not in anchors


def test_citations_become_links_in_text_and_html_or_are_dropped() -> None:
    cite = words.cite_rules
    assert cite("You may not buy more (H-41).", GUIDE, ANCHORS) == \
        f"You may not buy more (rule H-41 {GUIDE}#H-41)."
    assert cite("You may not buy more (H-41).", GUIDE, ANCHORS, html=True) == \
        f'You may not buy more (<a href="{GUIDE}#H-41">rule H-41</a>).'
    # No anchor: the citation goes, with the space before it.
    assert cite("choose a die, its value and your path (T3)", GUIDE, ANCHORS) == "choose a die, its value and your path"
    assert cite("act on arrival (T5, R17); then (FD12) or (S6)", GUIDE, ANCHORS) == "act on arrival; then or"
    # A list keeps the anchored rules; a range links to its first.
    assert cite("carts (H-60 to H-70, T3)", GUIDE, ANCHORS) == f"carts (rule H-60 to H-70 {GUIDE}#H-60)"
    assert cite("(see H-96)", GUIDE, ANCHORS) == f"(rule H-96 {GUIDE}#H-96)"
    # No guide: every citation goes.
    assert cite("Pay (H-96) now", None, ANCHORS) == "Pay now"
    # HTML escapes the rest of the text.
    assert cite("a < b (H-96)", GUIDE, ANCHORS, html=True) == f'a &lt; b (<a href="{GUIDE}#H-96">rule H-96</a>)'
    for text in ("x (H-41)", "(T3) and (H-60 to H-70)", "Anything (MP4, H-96)"):
        assert not problems(words.without_rule_links(cite(text, GUIDE, ANCHORS))), text


def test_rankings_show_scores_and_names() -> None:
    ranking = [{"place": 1, "seat": 2, "score": 34}, {"place": 2, "seat": 0, "score": 1},
               {"place": 3, "seat": 1, "score": 0}]
    assert words.ranking_lines(ranking, ["Ada", "Greta (greedy bot)", "Carla"], you=0) == [
        "1. Carla: 34 points", "2. Ada (you): 1 point", "3. Greta (greedy bot): 0 points"]


def test_bot_names_are_distinct_given_names_stable_for_the_game(kontor: Kontor) -> None:
    gid, _ = domain_game(kontor, 4, bots={1: "greedy", 2: "greedy", 3: "random"})
    seats = kontor.store.seats(gid)
    names = [seats[s]["name"] for s in range(4)]
    assert names[0] == "P0"
    assert [n.rsplit(" (", 1)[1] for n in names[1:]] == ["greedy bot)", "greedy bot)", "random bot)"]
    given = [n.split(" (")[0] for n in names[1:]]
    assert len(set(given)) == 3 and set(given) <= set(bot_given_names())
    # Stable: the same game and seat give the same name.
    others = [names[s] for s in (0, 2, 3)]
    assert bot_name(gid, 1, "greedy", None, others) == names[1]
    # The game's first sentence names every seat apart.
    started = kontor.store.events(gid, 0, 1)[0][1]
    assert words.service_sentence(started, names) == f"The game begins with {words.listing(names)}."


def test_a_players_seat_handed_to_a_bot_keeps_its_given_name(kontor: Kontor) -> None:
    gid, _ = domain_game(kontor, 3)
    seat = kontor.update_seat(gid, 1, None, None, "greedy")
    assert seat["name"] == "P1 (greedy bot)"
    seat = kontor.update_seat(gid, 1, None, None, "random")
    assert seat["name"] == "P1 (random bot)"
    assert bot_name("g", 0, "greedy", None, [n + " (greedy bot)" for n in bot_given_names()]) == "Seat 0 (greedy bot)"
