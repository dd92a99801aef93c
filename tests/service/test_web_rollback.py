"""Rollback on the pages (issue 25), in headless Chromium: on the game's public page the
host picks an earlier step from a list of the steps in words and rolls the game back; when
the steps undone revealed something hidden, each seat's page says "The host proposes to go
back to step 1" with Agree and Refuse, and the last agreement takes the game back. Both
pages at 1280 and 390 px (screenshots `rollback-host`, `rollback-seat`), readable (no ids,
null or JSON) and accessible (axe). With the test title Stall (tests/service/stall.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from service.core.kontor import Kontor
from tests.service.browserkit import FOLLOW, assert_accessible
from tests.service.conftest import Player
from tests.service.stall import registered
from tests.service.test_browser import _game, _post, _readable_problems, _shoot


@pytest.fixture(autouse=True)
def stall() -> Iterator[Any]:
    with registered() as game:
        yield game


def _key_file(host: Player, seats: list[Player]) -> str:
    """One `kontor` key file holding the game's host key and both seats' keys."""
    def ident(p: Player, games: dict[str, Any]) -> dict[str, Any]:
        return {"jwk": p.key.as_jwk(), "public": p.key.public, "kid": p.key.kid,
                "created_at": "2026-12-01T00:00:00+00:00", "games": games}

    host_entry = {"jwk": host.key.as_jwk(), "public": host.key.public, "kid": host.key.kid}
    ids = {"hanna": ident(host, {host.game: {"url": "http://elsewhere.example", "host": host_entry}})}
    for name, p in zip(("ada", "bruno"), seats, strict=True):
        ids[name] = ident(p, {p.game: {"url": "http://elsewhere.example", "seat": p.seat}})
    return json.dumps({"version": 2, "identities": ids})


def test_rollback_on_the_pages(tab: Any, live_server: str, worker: Any, kontor: Kontor) -> None:
    base = live_server
    host = _game(base, "stall", 2)
    gid = host.game
    seats = []
    for name in ("Ada", "Bruno"):
        p = Player.new()
        p.game = gid
        p.seat = _post(base, f"/games/{gid}/seats", {"name": name, "public_key": p.key.public})["seat"]
        seats.append(p)
    kontor.start(gid)
    kontor.submit(gid, 1, 0, {"buy": "wein", "count": 2}, via="test")
    worker()
    kontor.act(gid, 1, {"hoard": "tuch"}, via="test")  # Bruno alone is told his purse: consent needed
    tab.goto(f"{base}/mine")
    tab.set_input_files("#import", files=[{"name": "keys.json", "mimeType": "application/json",
                                           "buffer": _key_file(host, seats).encode()}])
    tab.wait_for_selector("#keys-status:has-text('Imported')")

    # the host picks the step in words
    tab.goto(f"{base}/play/{gid}")
    tab.wait_for_selector("#rollback[data-ready]:not([hidden])", timeout=FOLLOW)
    options = tab.locator("#rollback-step option").all_inner_texts()
    assert options == ["Step 1: Ada's turn: buy 1 to 3 of a good"], options
    tab.click("#rollback-send")
    tab.wait_for_selector("#rollback-pending", timeout=FOLLOW)
    text = tab.inner_text("#rollback")
    assert "The host proposes to go back to step 1 (Ada's turn: buy 1 to 3 of a good). Waiting for Ada and Bruno." \
        in text
    assert "Why the players must agree: step 2 told some players what the others did not see." in text
    assert kontor.current_phase(gid, "public")["id"] == 2  # not applied
    assert not _readable_problems(tab)
    assert_accessible(tab, "the host's rollback on the game's page")
    _shoot(tab, "rollback-host")

    # each seat agrees on its page
    for p, last in zip(seats, (False, True), strict=True):
        tab.goto(f"{base}/play/{gid}/{p.seat}")
        tab.wait_for_selector("#rollback-agree", timeout=FOLLOW)
        assert "The host proposes to go back to step 1" in tab.inner_text("#rollback")
        if not last:
            assert not _readable_problems(tab)
            assert_accessible(tab, "a seat's Agree / Refuse")
            _shoot(tab, "rollback-seat")
        tab.click("#rollback-agree")
        if last:
            tab.wait_for_selector("#rollback-status:has-text('rolled the game back')", state="attached",
                                  timeout=FOLLOW)
        else:
            tab.wait_for_selector("#rollback:has-text('You agreed')", timeout=FOLLOW)
    ph = kontor.current_phase(gid, "public")
    assert (ph["id"], ph["requested"]) == (3, [0])
    assert kontor.store.state(gid)["stock"] == {"wein": 3, "tuch": 2}
