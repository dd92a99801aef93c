"""Pages that know you (issue 22, item 2), in a real browser: every game page says which
seats this browser's keys hold (a link to each seat's page) and that it hosts the game (a
link to the host controls), found by public key even when the key file does not remember
the game (a key from the `kontor` command); "My games and keys" lists what is asked of you
first, in the title's words with the time left, the games you host, and each key's public
key; the front page points to it with the count of games waiting for you.

One browser for the module; each test one game of Die Händler with a greedy bot.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import requests

from tests.playertext import problems
from tests.service.browserkit import FOLLOW, assert_accessible, axe_violations
from tests.service.conftest import Player
from tests.service.test_browser import _bots_and_start, _game, _import_keys, _post, _until_asked, ph_default


def _ident(player: Player, games: dict[str, Any]) -> dict[str, Any]:
    key = player.key
    return {"jwk": key.as_jwk(), "public": key.public, "kid": key.kid, "created_at": "2026-11-28T00:00:00+00:00",
            "games": games}


def _two_seats_and_a_bot(base: str, worker: Any) -> tuple[Player, Player, Player, dict[str, Any]]:
    """A game of three seats: Anna (seat 0) and Carla (seat 1) join, a bot takes seat 2, it
    starts and runs until Anna or Carla is asked: (host, anna, carla, that step)."""
    host = _game(base, "haendler", 3, options={"light": True})
    anna, carla = Player.new(), Player.new()
    for p, name in ((anna, "Anna"), (carla, "Carla")):
        p.game = host.game
        p.seat = _post(base, f"/games/{host.game}/seats", {"name": name, "public_key": p.key.public})["seat"]
    _bots_and_start(base, host, range(2, 3), "greedy")
    for _ in range(80):
        worker()
        ph = requests.get(f"{base}/games/{host.game}/phases/current", timeout=10).json()
        if ph["status"] == "collecting" and {0, 1} & set(ph["requested"]) - set(ph.get("answered") or []):
            return host, anna, carla, ph
    raise AssertionError("neither Anna nor Carla is ever asked")


def _load(tab: Any, doc: dict[str, Any]) -> None:
    """Put a key file into this browser's storage (of the page's origin) as keys.js keeps it."""
    tab.evaluate("(doc) => localStorage.setItem('kontor.keys', JSON.stringify(doc))", doc)


def _known(tab: Any) -> Any:
    tab.wait_for_selector("#known[data-done]", state="attached", timeout=FOLLOW)
    return tab.locator("#known")


def test_a_browser_holding_two_seats_and_the_host_key_is_told_on_every_page(tab: Any, browser: Any,
                                                                             live_server: str, worker: Any) -> None:
    base = live_server
    host, anna, carla, step = _two_seats_and_a_bot(base, worker)
    gid = host.game
    host_entry = {"jwk": host.key.as_jwk(), "public": host.key.public, "kid": host.key.kid}
    lobby = _game(base, "haendler", 3)  # hosted too, still in the lobby: it says when it closes
    lobby_entry = {"jwk": lobby.key.as_jwk(), "public": lobby.key.public, "kid": lobby.key.kid}
    closes = requests.get(f"{base}/games/{lobby.game}", timeout=10).json()["expires_at"]
    doc = {"version": 2, "identities": {
        "anna": {**_ident(anna, {gid: {"url": base, "seat": 0, "host": host_entry},
                                 lobby.game: {"url": base, "host": lobby_entry}}), "name": "anna"},
        "carla": {**_ident(carla, {gid: {"url": base, "seat": 1}}), "name": "carla"}}}
    tab.goto(f"{base}/")
    _load(tab, doc)

    # the public page: both seats with a link each, and the host controls
    tab.goto(f"{base}/play/{gid}")
    known = _known(tab)
    assert known.is_visible()
    assert tab.get_attribute("#known li[data-seat='0'] a", "href") == f"/play/{gid}/0"
    assert tab.get_attribute("#known li[data-seat='1'] a", "href") == f"/play/{gid}/1"
    assert tab.get_attribute("#known li[data-host] a", "href") == f"/play/{gid}#host"
    text = known.inner_text()
    asked = [s for s in (0, 1) if s in step["requested"] and s not in (step.get("answered") or [])]
    for seat, name in ((0, "Anna"), (1, "Carla")):
        turn = ", and it is your turn" if seat in asked else ""
        assert f"You play {name} (seat {seat}){turn}: open {name}’s page" in text, text
    assert "You host this game: host controls" in text
    assert not problems(text)
    found = axe_violations(tab)
    assert not found, "a game's public page with #known filled:\n" + "\n".join(found)

    # a seat's own page: "this is your page", and the other seat still offered
    tab.click("#known li[data-seat='1'] a")
    tab.wait_for_url(f"**/play/{gid}/1")
    known = _known(tab)
    turn = ", and it is your turn" if 1 in asked else ""
    assert f"This is your page: you play Carla (seat 1){turn}." in known.inner_text()
    assert tab.locator("#known li[data-seat='1'] a").count() == 0
    assert tab.get_attribute("#known li[data-seat='0'] a", "href") == f"/play/{gid}/0"
    tab.wait_for_selector("#keynote", state="detached", timeout=FOLLOW)  # the page found Carla's key

    # My games: what is asked first, in the title's words with the time left; the hosted
    # game with the host controls; each key's public key
    you = requests.get(f"{base}/games/{gid}/phases/current", headers=(anna if asked[0] == 0 else carla).bearer(),
                       timeout=10).json()["you"]
    tab.goto(f"{base}/mine")
    tab.wait_for_selector("#main[data-ready]", state="attached", timeout=FOLLOW)
    rows = tab.locator("#games > li")
    assert rows.count() == 2
    first = rows.first.inner_text()
    words = ((you.get("prompt") or {}).get("say") or you["asked"]).strip().rstrip(".")
    assert f"your turn: {words} — deadline in 23h" in first, first
    assert rows.first.get_attribute("data-seat") == str(asked[0])
    assert "waits for you" in tab.inner_text("#games-summary")
    hosted = tab.inner_text("#hosted")
    assert "Die Händler “Friday traders” being played, step" in hosted and "host controls" in hosted
    when = datetime.fromisoformat(closes).astimezone(UTC).strftime("%a %Y-%m-%d %H:%M UTC")
    assert f"waiting for players, 0 of 3 seats taken; closes on {when}, unless you start it" in hosted, hosted
    assert tab.get_attribute("#hosted a:has-text('host controls')", "href") == f"/play/{gid}#host"
    keys_text = tab.inner_text("#keys")
    assert anna.key.public in keys_text and carla.key.public in keys_text
    assert tab.locator("#keys button:has-text('Copy public key')").count() == 2
    assert not problems(tab.inner_text("#games") + hosted)
    assert_accessible(tab, "My games and keys")
    tab.set_viewport_size({"width": 390, "height": 844})
    assert tab.evaluate("document.documentElement.scrollWidth") <= 390
    tab.set_viewport_size({"width": 1280, "height": 900})

    # the front page points to it, counting the game (not the seats) that waits
    tab.goto(f"{base}/")
    tab.wait_for_selector("#yours:not([hidden])", timeout=FOLLOW)
    assert tab.inner_text("#yours") == "Your games: 1 of your games waits for you — My games and keys"
    assert tab.get_attribute("#yours a", "href") == "/mine"

    # another browser, holding no key: the public page says nothing of seats
    other = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = other.new_page()
        page.goto(f"{base}/play/{gid}")
        known = _known(page)
        assert known.is_hidden() and page.locator("#known li").count() == 0
        page.goto(f"{base}/")
        page.wait_for_load_state("networkidle")
        assert page.locator("#yours").is_hidden()
    finally:
        other.close()


def test_a_key_from_the_command_line_is_recognized_by_its_public_key(tab: Any, live_server: str, worker: Any,
                                                                     tmp_path: Any) -> None:
    base = live_server
    host = _game(base, "haendler", 2, options={"light": True})
    me = Player.new()
    me.game = host.game
    me.seat = _post(base, f"/games/{host.game}/seats", {"name": "Carla", "public_key": me.key.public})["seat"]
    _bots_and_start(base, host, range(1, 2), "greedy")
    ph = _until_asked(base, host.game, me.seat, worker)
    # the key file knows the key, not this game (made by `kontor keygen`, seated by a host)
    _import_keys(tab, base, json.dumps({"version": 2, "identities": {"carla": _ident(me, {})}}))

    tab.goto(f"{base}/play/{host.game}")
    known = _known(tab)
    assert "You play Carla (seat 0), and it is your turn: open Carla’s page" in known.inner_text()
    assert tab.locator("#known li[data-host]").count() == 0  # not the host
    # the seat is remembered now
    doc = json.loads(tab.evaluate("localStorage.getItem('kontor.keys')"))
    assert doc["identities"]["carla"]["games"][host.game] == {"url": base, "seat": 0}
    # Carla answers (from her command line): the line follows the game, no turn outlives it
    r = requests.put(f"{base}/games/{host.game}/phases/{ph['id']}/orders/{me.seat}",
                     json={"token": me.order_token(ph["id"], ph_default(base, me))}, timeout=10)
    assert r.status_code == 202, r.text
    tab.wait_for_selector("#known li[data-seat='0']:not(.yours)", timeout=FOLLOW)
    assert "your turn" not in tab.inner_text("#known")
    worker()
    asked = _until_asked(base, host.game, me.seat, worker)  # and asked again: the line says so again
    tab.wait_for_selector(f"#content[data-step='{asked['id']}']", state="attached", timeout=FOLLOW)
    tab.wait_for_selector("#known li.yours[data-seat='0']", timeout=FOLLOW)
    tab.click("#known li[data-seat='0'] a")
    tab.wait_for_selector("#decide", state="attached", timeout=FOLLOW)
    tab.goto(f"{base}/mine")
    tab.wait_for_selector("#games li.yours", timeout=FOLLOW)
    assert "your turn: " in tab.inner_text("#games li.yours")
