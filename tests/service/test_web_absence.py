""""I'll be away" in the browser (issue 25): a seat's own page lists its planned absences
and adds one from two dates or removes one with its button, signed with the seat's key in
the browser; a reversed pair is refused in words and changes nothing; the players list
says "away until ..." for a seat away now. Looked at at 1280 and 390 px (screenshots in
the test's folder) and checked with axe."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import requests

from tests.playertext import problems
from tests.service.browserkit import assert_accessible, watch
from tests.service.conftest import Player
from tests.service.test_browser import _bots_and_start, _game, _import_keys, _key_file, _post


def _said(page: Any, selector: str) -> str:
    text = str(page.inner_text(selector))
    assert not problems(text), (text, problems(text))
    return text


def _absences(base: str, gid: str, seat: int) -> list[dict[str, Any]]:
    r = requests.get(f"{base}/games/{gid}/seats/{seat}/absences", timeout=10)
    assert r.status_code == 200, r.text
    return list(r.json()["absences"])


def test_absence_page_away_form_list_and_players(browser: Any, live_server: str, tmp_path: Path) -> None:
    base = live_server
    host = _game(base, "haendler", 3, options={"light": True})
    gid = host.game
    me = Player.new()
    me.game = gid
    me.seat = _post(base, f"/games/{gid}/seats", {"name": "Carla", "public_key": me.key.public})["seat"]
    _bots_and_start(base, host, range(1, 3), "greedy")
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = ctx.new_page()
    errors = watch(tab)
    try:
        _import_keys(tab, base, _key_file(me, "Carla"))
        tab.goto(f"{base}/play/{gid}/{me.seat}")
        tab.wait_for_selector("#away[data-ready]")
        assert _said(tab, "#away-now") == "No absence planned."
        assert "the game waits for you" in _said(tab, "#away-help")
        today = datetime.now(UTC).date()
        a, b = today + timedelta(days=10), today + timedelta(days=20)
        tab.fill("#away-from", a.isoformat())
        tab.fill("#away-until", b.isoformat())
        tab.click("#away-add")
        tab.wait_for_selector("#away-status:has-text('Saved:')")
        assert _said(tab, "#away-status") == f"Saved: away {a.day} {a:%B} to {b.day} {b:%B}."
        assert [x["from"][:10] for x in _absences(base, gid, me.seat)] == [a.isoformat()]
        assert _said(tab, "#away-list").startswith(f"{a.day} {a:%B} to {b.day} {b:%B}")
        # A second one; then a reversed pair is refused in words, nothing changed.
        c, d = today + timedelta(days=30), today + timedelta(days=32)
        tab.fill("#away-from", c.isoformat())
        tab.fill("#away-until", d.isoformat())
        tab.click("#away-add")
        tab.wait_for_selector("#away-list li:nth-child(2)")
        tab.fill("#away-from", d.isoformat())
        tab.fill("#away-until", c.isoformat())
        tab.click("#away-add")
        assert "must be after" in _said(tab, "#away-e")
        assert len(_absences(base, gid, me.seat)) == 2
        # Too long: the server's refusal, in words.
        tab.fill("#away-from", (today + timedelta(days=50)).isoformat())
        tab.fill("#away-until", (today + timedelta(days=90)).isoformat())
        tab.click("#away-add")
        tab.wait_for_selector("#away-status.bad")
        said = _said(tab, "#away-status")
        assert said.startswith("Not saved: ") and said.endswith("Nothing was changed."), said
        assert len(_absences(base, gid, me.seat)) == 2
        assert_accessible(tab, "a seat's page with its absences")
        tab.locator("#away").screenshot(path=str(tmp_path / "away-1280.png"))
        tab.set_viewport_size({"width": 390, "height": 844})
        tab.wait_for_timeout(100)
        assert tab.evaluate("document.documentElement.scrollWidth") <= 390
        assert tab.locator("#away").bounding_box()["width"] <= 390
        tab.locator("#away").screenshot(path=str(tmp_path / "away-390.png"))
        tab.set_viewport_size({"width": 1280, "height": 900})
        # Remove the first with its button.
        tab.click("#away-list li:nth-child(1) button")
        tab.wait_for_selector("#away-status:has-text('Removed:')")
        assert [x["from"][:10] for x in _absences(base, gid, me.seat)] == [c.isoformat()]
        # Away now: the players list says until when (every page, the public's too).
        now = time.time()
        r = requests.put(f"{base}/games/{gid}/seats/{me.seat}/absences", headers=me.bearer(), timeout=10, json={
            "absences": [{"from": datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                          "until": b.isoformat()}]})
        assert r.status_code == 200, r.text
        tab.goto(f"{base}/play/{gid}")
        assert f"(away until {b.day} {b:%B})" in _said(tab, "table.players")
        assert_accessible(tab, "the players list with an away seat")
        # The page redraws the players list when the game changes (a live refresh): a
        # screenshot of the whole page does not depend on that one element staying put.
        tab.screenshot(path=str(tmp_path / "players-1280.png"), full_page=True)
        assert not [e for e in errors if "status of 422" not in e], errors  # the refused one's console note
    finally:
        ctx.close()
