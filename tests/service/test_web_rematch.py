"""The Rematch on a finished game's page (issue 25, item 5), in headless Chromium: the host's
browser (holding the game's host key in its key file) shows a Rematch button; one click
starts the rematch with a fresh host key of its own, the key file learns it (the host's
entry, and the seat its identity holds), and opening the rematch finds the seat. Everyone
else sees "Rematch: <link>" once it exists. Screenshots at 1280 and 390 px."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from service.core.kontor import Kontor
from tests.playertext import problems
from tests.service.browserkit import FOLLOW, SHOTS, assert_accessible, watch
from tests.service.conftest import Player, default_step
from tests.service.stall import registered


@pytest.fixture(autouse=True)
def stall() -> Iterator[Any]:
    with registered() as game:
        yield game


def _finished(base: str, kontor: Kontor, worker: Any) -> tuple[Player, dict[int, Player]]:
    host = Player.new()
    r = requests.post(f"{base}/games", json={"title": "stall", "seats": 3, "host_key": host.key.public,
                                             "name": "Market day"},
                      headers={"Idempotency-Key": uuid.uuid4().hex}, timeout=10)
    gid = host.game = r.json()["id"]
    players = {}
    for seat, name in ((0, "Anna"), (1, "Bert")):
        p = Player.new()
        requests.post(f"{base}/games/{gid}/seats", json={"name": name, "public_key": p.key.public, "seat": seat},
                      headers={"Idempotency-Key": uuid.uuid4().hex}, timeout=10)
        p.game, p.seat = gid, seat
        players[seat] = p
    requests.patch(f"{base}/games/{gid}/seats/2", json={"bot": "passer"}, headers=host.bearer(), timeout=10)
    requests.patch(f"{base}/games/{gid}", json={"status": "running"}, headers=host.bearer(), timeout=10)
    for _ in range(20):
        if kontor.store.meta(gid)["status"] == "finished":
            break
        default_step(kontor, gid)
        worker()
    assert kontor.store.meta(gid)["status"] == "finished"
    return host, players


def _key_file(me: Player, host: Player) -> str:
    """Anna's key file: her identity holds seat 0 and hosts the game (its own host key)."""
    return json.dumps({"version": 2, "identities": {"anna": {
        "jwk": me.key.as_jwk(), "public": me.key.public, "kid": me.key.kid, "created_at": "2026-12-01T00:00:00+00:00",
        "games": {me.game: {"url": "http://elsewhere.example", "seat": 0,
                            "host": {"jwk": host.key.as_jwk(), "public": host.key.public, "kid": host.key.kid}}}}}})


def test_rematch_page_button_starts_it_and_the_key_file_learns_it(
        tab: Any, browser: Any, live_server: str, kontor: Kontor, worker: Any) -> None:
    host, players = _finished(live_server, kontor, worker)
    gid = host.game
    tab.goto(f"{live_server}/mine")
    tab.evaluate("(text) => localStorage.setItem('kontor.keys', text)", _key_file(players[0], host))

    # a visitor without keys sees no button, and that there is no rematch yet
    other = browser.new_context(viewport={"width": 390, "height": 844})
    visitor = other.new_page()
    errors = watch(visitor)
    visitor.goto(f"{live_server}/play/{gid}")
    visitor.wait_for_selector("#rematch:not([hidden])")
    assert visitor.locator("#rematch-button").is_hidden()
    assert "No rematch yet" in visitor.inner_text("#rematch")

    # the host: the button, one click
    tab.goto(f"{live_server}/play/{gid}")
    tab.wait_for_selector("#rematch-button:not([hidden])")
    assert_accessible(tab, "a finished game's page with the Rematch button")
    for width in (1280, 390):
        tab.set_viewport_size({"width": width, "height": 900 if width > 800 else 844})
        tab.locator("#rematch").scroll_into_view_if_needed()
        tab.screenshot(path=str(SHOTS / f"rematch-button{'' if width > 800 else '-phone'}.png"), full_page=True)
    tab.set_viewport_size({"width": 1280, "height": 900})
    tab.click("#rematch-button")
    tab.wait_for_selector("#rematch-link", timeout=FOLLOW)
    assert "The rematch has started" in tab.inner_text("#rematch-status")
    new = kontor.store.meta(gid)["rematch"]
    assert tab.get_attribute("#rematch-link", "href") == f"/play/{new}"
    assert tab.inner_text("#rematch-link") == "Market day (rematch)"
    text = tab.inner_text("#rematch")
    assert problems(text) == [], text
    assert_accessible(tab, "a finished game's page with its rematch")
    for width in (1280, 390):
        tab.set_viewport_size({"width": width, "height": 900 if width > 800 else 844})
        tab.screenshot(path=str(SHOTS / f"rematch-started{'' if width > 800 else '-phone'}.png"), full_page=True)
    tab.set_viewport_size({"width": 1280, "height": 900})

    # the key file learned it: a fresh host key for the rematch, and Anna's seat
    doc = json.loads(tab.evaluate("() => localStorage.getItem('kontor.keys')"))
    entry = doc["identities"]["anna"]["games"][new]
    assert entry["seat"] == 0 and entry["url"] == live_server
    assert entry["host"]["kid"] == kontor.game(new)["host_kid"] != host.key.kid
    # the rematch game's page: its host controls (the fresh key) and, on the seat page, her turn
    tab.goto(f"{live_server}/play/{new}")
    tab.wait_for_selector("#host[data-ready]", timeout=FOLLOW)
    tab.goto(f"{live_server}/play/{new}/0")
    tab.wait_for_selector("#turn-h", timeout=FOLLOW)
    assert tab.inner_text("#turn-h").startswith("Your turn")

    # the visitor's page follows: "Rematch: <link>"
    visitor.wait_for_selector("#rematch-link", timeout=30_000)
    assert visitor.inner_text("#rematch-now").startswith("Rematch: Market day (rematch)")
    # a seat's page of the finished game links the seat's page of the rematch
    visitor.goto(f"{live_server}/play/{gid}/1")
    visitor.wait_for_selector("#rematch-link")
    assert visitor.get_attribute("#rematch-link", "href") == f"/play/{new}/1"
    # Bert's browser (his key holds seat 1) learns the rematch when it opens the finished
    # game's page, and the rematch's page then finds his seat
    bert = players[1]
    visitor.goto(f"{live_server}/mine")
    visitor.evaluate("(text) => localStorage.setItem('kontor.keys', text)", json.dumps({"version": 2, "identities": {
        "bert": {"jwk": bert.key.as_jwk(), "public": bert.key.public, "kid": bert.key.kid, "created_at": "",
                 "games": {gid: {"url": live_server, "seat": 1}}}}}))
    visitor.goto(f"{live_server}/play/{gid}")
    # (the page's own link is in the HTML the server sent: the script learns the rematch
    # after it has asked for it, so wait for the key file, not for the link)
    visitor.wait_for_function("(id) => (localStorage.getItem('kontor.keys') || '').includes(id)", arg=new,
                              timeout=FOLLOW)
    visitor.wait_for_selector("#rematch-link")
    learned = json.loads(visitor.evaluate("() => localStorage.getItem('kontor.keys')"))
    assert learned["identities"]["bert"]["games"][new] == {"url": live_server, "seat": 1}
    visitor.goto(f"{live_server}/play/{new}")
    visitor.wait_for_selector("#known:not([hidden])", timeout=FOLLOW)
    assert "You play Bert (seat 1)" in visitor.inner_text("#known")
    other.close()
    assert not errors, errors


def test_rematch_box_appears_when_the_game_ends_while_its_page_is_open(
        tab: Any, live_server: str, kontor: Kontor, worker: Any) -> None:
    host = Player.new()
    r = requests.post(f"{live_server}/games", json={"title": "stall", "seats": 2, "host_key": host.key.public},
                      headers={"Idempotency-Key": uuid.uuid4().hex}, timeout=10)
    gid = host.game = r.json()["id"]
    for seat in range(2):
        requests.patch(f"{live_server}/games/{gid}/seats/{seat}", json={"bot": "passer"}, headers=host.bearer(),
                       timeout=10)
    requests.patch(f"{live_server}/games/{gid}", json={"status": "running"}, headers=host.bearer(), timeout=10)
    me = Player.new().key  # the host's identity (its own key plays nothing here)
    tab.goto(f"{live_server}/mine")
    tab.evaluate("(text) => localStorage.setItem('kontor.keys', text)", json.dumps({"version": 2, "identities": {
        "hal": {"jwk": me.as_jwk(), "public": me.public, "kid": me.kid, "created_at": "",
                "games": {gid: {"url": live_server, "host": {"jwk": host.key.as_jwk(), "public": host.key.public,
                                                             "kid": host.key.kid}}}}}}))
    tab.goto(f"{live_server}/play/{gid}")
    tab.wait_for_selector("#content[data-status=running]")
    assert tab.locator("#rematch").is_hidden()
    for _ in range(20):  # the bots play it to its end while the page is open
        if kontor.store.meta(gid)["status"] == "finished":
            break
        worker()
    tab.wait_for_selector("#over-h", timeout=FOLLOW)
    tab.wait_for_selector("#rematch-slot #rematch-button:not([hidden])", timeout=FOLLOW)
    tab.click("#rematch-button")
    tab.wait_for_selector("#rematch-link", timeout=FOLLOW)
    assert kontor.store.meta(gid).get("rematch_told")
