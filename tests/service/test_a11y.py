"""Every page passes axe-core's WCAG 2.2 A and AA rules (issue 22, item 5): the front
page (with open games, and with games being played), "My games and keys" (empty and
with keys), each title's rules, the join page of an open game, a seat page while not
asked, the public page of a running game, a finished game's page and an error page; each
at a phone's width (390 CSS px, light scheme) and a desktop's (1280 px, dark scheme): the
layout changes with the width, the colours with the scheme. The pages of each title's
game (its public page, my games with the seat asked, the seat's page while asked, with a
decision half picked and with "For programmers" open, and the game over) are checked on
the way of the keyboard-only games of tests/service/test_keyboard.py, with `check`.

axe-core 4.11 runs through `axe_violations` (tests/service/browserkit.py, as
`assert_accessible` does) with the tags wcag2a, wcag2aa, wcag21a, wcag21aa, wcag22a and
wcag22aa; every violation fails the test, named with its page, rule and first elements.
"""

from __future__ import annotations

from typing import Any

import requests

from tests.service.browserkit import FOLLOW, axe_violations
from tests.service.conftest import Player
from tests.service.test_browser import WHOLE, _game, _import_keys, _key_file, _post, _until_asked


def _check(tab: Any, what: str, found: list[str]) -> None:
    """axe-core on the page as it is now, at a phone's width in the light scheme and at a
    desktop's in the dark one (the layout changes with the width, the colours with the
    scheme: each is seen both ways); what it finds goes to `found` (one test names every
    violation of its pages at once). The page is left at 1280 px, light."""
    for width, scheme in ((390, "light"), (1280, "dark")):
        tab.set_viewport_size({"width": width, "height": 900 if width > 800 else 844})
        tab.emulate_media(color_scheme=scheme)
        found += [f"{what} at {width} px, {scheme}: {v}" for v in axe_violations(tab)]
    tab.emulate_media(color_scheme="light")
    tab.set_viewport_size({"width": 1280, "height": 900})


def check(tab: Any, what: str) -> None:
    """Fail unless the page as it is now passes axe-core at 390 px (light) and 1280 px (dark)."""
    found: list[str] = []
    _check(tab, what, found)
    assert not found, f"axe-core finds {len(found)} violation(s):\n" + "\n".join(found)


def here(key_file: str, base: str) -> str:
    """The key file with its games on this server (so that my games lists them)."""
    return key_file.replace("http://elsewhere.example", base)


def test_the_pages_without_a_game_of_yours(tab: Any, live_server: str) -> None:
    """The front page, my games (empty, then with a key), each title's rules, the join
    page of an open game, an error page."""
    base = live_server
    found: list[str] = []
    host = _game(base, "haendler", 3, options={"light": True})
    tab.goto(f"{base}/")
    _check(tab, "the front page", found)
    tab.goto(f"{base}/mine")
    tab.wait_for_selector("#games-empty", state="attached")
    _check(tab, "my games (no key)", found)
    for title in sorted(WHOLE):
        tab.goto(f"{base}/titles/{title}/rules")
        _check(tab, f"the rules of {title}", found)
    tab.goto(f"{base}/play/{host.game}")
    tab.wait_for_selector("#join-form")
    _check(tab, "the join page of an open game", found)
    me = Player.new()
    me.game = host.game
    me.seat = _post(base, f"/games/{host.game}/seats", {"name": "Ines", "public_key": me.key.public})["seat"]
    _import_keys(tab, base, here(_key_file(me, "ines"), base))
    tab.wait_for_selector("#games li strong:has-text('waiting for players')")
    _check(tab, "my games (a key, a game in the lobby)", found)
    tab.goto(f"{base}/play/no-such-game")
    _check(tab, "an error page (no such game)", found)
    assert not found, f"axe-core finds {len(found)} violation(s):\n" + "\n".join(found)


def test_a_seat_page_while_not_asked_and_a_finished_game(tab: Any, live_server: str, worker: Any) -> None:
    """On the test title Stall (one seat asked a step): the page of the seat that waits
    (its key in this browser), and a game played to its end by bots."""
    from tests.service.stall import registered

    with registered():
        base = live_server
        found: list[str] = []
        host = _game(base, "stall", 2)
        players = []
        for name in ("Rosa", "Ugo"):
            p = Player.new()
            p.game = host.game
            p.seat = _post(base, f"/games/{host.game}/seats", {"name": name, "public_key": p.key.public})["seat"]
            players.append(p)
        r = requests.patch(f"{base}/games/{host.game}", json={"status": "running"}, headers=host.bearer(), timeout=10)
        assert r.status_code == 200, r.text
        _until_asked(base, host.game, 0, worker)
        waiting = players[1]
        _import_keys(tab, base, here(_key_file(waiting, "ugo"), base))
        tab.goto(f"{base}/play/{host.game}/{waiting.seat}")
        tab.wait_for_selector("#wait-h:has-text('Not your turn')", timeout=FOLLOW)
        _check(tab, "a seat's page while not asked", found)
        tab.goto(f"{base}/play/{host.game}")
        _check(tab, "the public page of a running game", found)
        tab.goto(f"{base}/")
        tab.wait_for_selector("#run-h")
        _check(tab, "the front page with games being played", found)

        over = _game(base, "stall", 2)
        r = requests.patch(f"{base}/games/{over.game}/seats/0", json={"bot": "passer"}, headers=over.bearer(),
                           timeout=10)
        assert r.status_code == 200, r.text
        r = requests.patch(f"{base}/games/{over.game}/seats/1", json={"bot": "passer"}, headers=over.bearer(),
                           timeout=10)
        assert r.status_code == 200, r.text
        r = requests.patch(f"{base}/games/{over.game}", json={"status": "running"}, headers=over.bearer(), timeout=10)
        assert r.status_code == 200, r.text
        for _ in range(40):
            worker()
            if requests.get(f"{base}/games/{over.game}", timeout=10).json()["status"] == "finished":
                break
        tab.goto(f"{base}/play/{over.game}")
        tab.wait_for_selector("#over-h")
        _check(tab, "a finished game's page", found)
        assert not found, f"axe-core finds {len(found)} violation(s):\n" + "\n".join(found)
