"""Being told by e-mail, in the browser: the join form's optional address is given as the
new seat's contact (signed with the seat's own key in the browser), and a seat's own page
shows the address and sets, changes or removes it ("Tell me by e-mail"); a bad address is
refused in the server's words and changes nothing (on the join form: the join stands, and
the page says so). And an invitation link opened in the browser that holds its seat says
"This is your seat", before the start and after it.

One browser for the module; one game of Die Händler (3 seats: Otto joins from his seat's
invitation in this tab, Anna from the any-seat link in a second browser, a bot takes the last).
"""

from __future__ import annotations

import json
from typing import Any

import requests

from service.protocol.crypto import SigningKey
from tests.playertext import problems
from tests.service.browserkit import FOLLOW, assert_accessible, watch
from tests.service.conftest import Player
from tests.service.test_browser import _bots_and_start, _game, _import_keys, _key_file


def _seat_player(page: Any, gid: str, seat: int) -> Player:
    """The seat's key as this browser keeps it (keys.js), as a Python client."""
    doc = json.loads(page.evaluate("localStorage.getItem('kontor.keys')"))
    ident = next(i for i in doc["identities"].values() if (i.get("games") or {}).get(gid, {}).get("seat") == seat)
    return Player(SigningKey.from_jwk(ident["jwk"]), gid, seat)


def _contact(base: str, me: Player) -> dict[str, Any]:
    r = requests.get(f"{base}/games/{me.game}/seats/{me.seat}/contact", headers=me.bearer(), timeout=10)
    assert r.status_code == 200, r.text
    return dict(r.json())


def _join(page: Any, base: str, link: str, name: str, email: str) -> None:
    page.goto(base + link)
    page.wait_for_selector("#join-form[data-ready]")
    page.fill("#join-name", name)
    page.fill("#join-email", email)
    page.click("#join-send")


def _said(page: Any, selector: str) -> str:
    text = str(page.inner_text(selector))
    assert not problems(text), (text, problems(text))
    return text


def _yours(page: Any, base: str, link: str, gid: str, seat: int, name: str) -> None:
    """The invitation `link` tells this browser its own seat, with a link to its page."""
    page.goto(base + link)
    page.wait_for_selector("#join-closed[data-yours]")
    assert _said(page, "#join-closed") == f"This is your seat ({name}): open your page."
    assert page.get_attribute("#join-closed a", "href") == f"/play/{gid}/{seat}"


def _unexpected(errors: list[str]) -> list[str]:
    """The script errors of a page but the console's note of the refused address (422)."""
    return [e for e in errors if "status of 422" not in e]


def test_an_address_from_the_join_form_and_the_seat_page(browser: Any, live_server: str) -> None:
    base = live_server
    octx = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = octx.new_page()
    oerrors = watch(tab)
    try:
        _otto_and_anna(browser, base, tab)
        assert not _unexpected(oerrors), oerrors
    finally:
        octx.close()


def _otto_and_anna(browser: Any, base: str, tab: Any) -> None:
    host = _game(base, "haendler", 3, options={"light": True})
    gid = host.game

    # Otto joins from his seat's invitation with an address: it is his seat's contact
    _join(tab, base, f"/play/{gid}/join/1", "Otto", "Otto@Example.org")
    tab.wait_for_url(f"{base}/play/{gid}/1", timeout=FOLLOW)
    otto = _seat_player(tab, gid, 1)
    assert _contact(base, otto)["email"] == "Otto@example.org"  # normalized (the domain's case)

    # his page shows it under "Tell me by e-mail"
    tab.wait_for_selector("#contact[data-ready]")
    assert "Mails go to Otto@example.org when it is your turn" in _said(tab, "#contact-now")
    assert tab.input_value("#contact-email") == "Otto@example.org"
    assert_accessible(tab, "a seat's page with its e-mail address")
    tab.set_viewport_size({"width": 390, "height": 844})
    tab.wait_for_timeout(100)
    assert tab.evaluate("document.documentElement.scrollWidth") <= 390
    assert tab.locator("#contact").bounding_box()["width"] <= 390
    tab.set_viewport_size({"width": 1280, "height": 900})

    # a bad address is refused in words, and nothing changes
    tab.fill("#contact-email", "otto@@example.org")
    tab.click("#contact-save")
    tab.wait_for_selector("#contact-status.bad")
    said = _said(tab, "#contact-status")
    assert said.startswith("Not saved: ") and said.endswith("Nothing was changed."), said
    assert "@" in _said(tab, "#contact-email-e")  # the validator's reason (the @-sign)
    assert _contact(base, otto)["email"] == "Otto@example.org"
    assert_accessible(tab, "a seat's page with a refused address")

    # a new address: the API has it
    tab.fill("#contact-email", "otto.berg@example.org")
    tab.click("#contact-save")
    tab.wait_for_selector("#contact-status:has-text('Saved:')")
    assert _said(tab, "#contact-status") == "Saved: your mails go to otto.berg@example.org."
    assert _contact(base, otto)["email"] == "otto.berg@example.org"
    assert "otto.berg@example.org" in _said(tab, "#contact-now")

    # removed: no address, and the page says so
    tab.click("#contact-remove")
    tab.wait_for_selector("#contact-status:has-text('Removed:')")
    assert _contact(base, otto)["email"] is None
    assert _said(tab, "#contact-now").startswith("No e-mail address is set")
    assert tab.locator("#contact-remove").is_hidden()

    # his own invitation again, before the start: it knows him
    _yours(tab, base, f"/play/{gid}/join/1", gid, 1, "Otto")

    # Anna (another browser) gives a bad address with the any-seat link: joined, and told
    # that her address was not saved
    actx = browser.new_context(viewport={"width": 1280, "height": 900})
    anna = actx.new_page()
    errors = watch(anna)
    try:
        _join(anna, base, f"/play/{gid}/join", "Anna", "anna@@example.org")
        anna.wait_for_selector("#join-status.bad")
        said = _said(anna, "#join-status")
        assert said.startswith("You have joined (seat 0), but your e-mail address was not saved: "), said
        assert said.endswith("under “Tell me by e-mail”: open your seat’s page."), said
        assert anna.get_attribute("#join-status a", "href") == f"/play/{gid}/0"
        assert anna.is_disabled("#join-send")
        players = requests.get(f"{base}/games/{gid}", timeout=10).json()["players"]
        assert [(p["seat"], p["name"]) for p in players if p["taken"]] == [(0, "Anna"), (1, "Otto")]
        assert _contact(base, _seat_player(anna, gid, 0))["email"] is None
        assert_accessible(anna, "the join page with a refused address")

        # the game starts: both invitation links still know their seat
        _bots_and_start(base, host, range(2, 3), "greedy")
        _yours(tab, base, f"/play/{gid}/join/1", gid, 1, "Otto")
        _yours(tab, base, f"/play/{gid}/join", gid, 1, "Otto")
        _yours(anna, base, f"/play/{gid}/join", gid, 0, "Anna")
        # someone else's seat is still taken, in words
        anna.goto(f"{base}/play/{gid}/join/1")
        anna.wait_for_selector("#join-closed")
        assert "This game has started" in _said(anna, "#join-closed")
        assert anna.get_attribute("#join-closed", "data-yours") is None
        assert not _unexpected(errors), errors
    finally:
        actx.close()

    # The host gives Otto's seat to Nora's new key: her page shows no address (Otto's
    # left with him), and the address she sets is hers.
    r = requests.put(f"{base}/games/{gid}/seats/1/contact", json={"email": "otto@example.org"},
                     headers=otto.bearer(), timeout=10)
    assert r.status_code == 200, r.text
    nora = Player(SigningKey.generate(), gid, 1)
    r = requests.patch(f"{base}/games/{gid}/seats/1", json={"public_key": nora.key.public, "name": "Nora"},
                       headers=host.bearer(), timeout=10)
    assert r.status_code == 200, r.text
    assert _contact(base, nora)["email"] is None
    nctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = nctx.new_page()
    errors = watch(page)
    try:
        _import_keys(page, base, _key_file(nora, "Nora"))
        page.goto(f"{base}/play/{gid}/1")
        page.wait_for_selector("#contact[data-ready]")
        assert _said(page, "#contact-now").startswith("No e-mail address is set")
        assert page.input_value("#contact-email") == ""
        assert "otto" not in _said(page, "#contact")
        page.fill("#contact-email", "nora@example.org")
        page.click("#contact-save")
        page.wait_for_selector("#contact-status:has-text('Saved:')")
        assert _said(page, "#contact-status") == "Saved: your mails go to nora@example.org."
        assert _contact(base, nora)["email"] == "nora@example.org"
        assert not _unexpected(errors), errors
    finally:
        nctx.close()
