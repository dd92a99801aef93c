"""The host's clock on the game's page (issue 25): the host (the browser holds the game's
host key) pauses the game, extends the deadline and resumes it with the panel's
controls; everyone's page says "Paused by the host since ...; the clock is stopped"
while it is paused, in words, and the events tell each change. Drawn at 1280 and 390 px
(screenshots `pause-host`, `pause-seat`), checked with axe-core."""

from __future__ import annotations

import json
from typing import Any

import requests

from tests.service.browserkit import FOLLOW, SHOTS, assert_accessible, watch
from tests.service.conftest import Player
from tests.service.test_browser import _game, _import_keys, _key_file, _readable_problems, _seated


def _host_file(host: Player) -> str:
    """A `kontor` key file whose identity hosts `host.game` (`games[<game>].host`)."""
    me = Player.new()
    key = host.key
    return json.dumps({"version": 2, "identities": {"hanna": {
        "jwk": me.key.as_jwk(), "public": me.key.public, "kid": me.key.kid, "created_at": "2026-11-28T00:00:00+00:00",
        "games": {host.game: {"url": "http://elsewhere.example",
                              "host": {"jwk": key.as_jwk(), "public": key.public, "kid": key.kid}}}}}})


def _shoot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    for suffix, width in (("", 1280), ("-390", 390)):
        page.set_viewport_size({"width": width, "height": 900 if width > 800 else 844})
        page.wait_for_timeout(150)
        page.screenshot(path=str(SHOTS / f"{name}{suffix}.png"), full_page=True)
        wide, shown = page.evaluate(
            "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert wide <= shown, f"{name}: the page is {wide - shown} px wider than a {width} px window"
    page.set_viewport_size({"width": 1280, "height": 900})


def test_pause_extend_and_resume_on_the_page(tab: Any, browser: Any, live_server: str, worker: Any) -> None:
    base = live_server
    host = _game(base, "haendler", 2, options={"light": True})
    me, _ = _seated(base, host, "Clara", 2, "greedy", worker)

    # The host's browser: the game's public page with the host panel and its clock.
    _import_keys(tab, base, _host_file(host))
    tab.goto(f"{base}/play/{host.game}")
    tab.wait_for_selector("#host[data-ready]", timeout=FOLLOW)
    assert tab.inner_text("#host-pause") == "Pause the game"
    assert "The clock runs" in tab.inner_text("#host-clock-now")
    tab.click("#host-pause")
    tab.wait_for_selector("#host[data-paused='1']", timeout=FOLLOW)
    tab.wait_for_selector("#paused", timeout=FOLLOW)
    banner = tab.inner_text("#paused")
    assert banner.startswith("Paused by the host since ") and "the clock is stopped" in banner
    assert tab.inner_text("#host-pause") == "Resume the game"
    assert requests.get(f"{base}/games/{host.game}", timeout=10).json()["paused_since"]

    # Extend by two days while paused.
    tab.select_option("#host-extend-by", "172800")
    tab.click("#host-extend")
    tab.wait_for_selector("#host-status:has-text('The deadline is extended by 2 days.')", timeout=FOLLOW)
    tab.wait_for_selector("ol.events:has-text('The host extended the deadline by 2 days')", timeout=FOLLOW)
    assert "The host paused the game; the clock is stopped" in tab.inner_text("ol.events")
    assert _readable_problems(tab) == []
    assert_accessible(tab, "the host's page while paused")
    _shoot(tab, "pause-host")

    # The player's own page says it too.
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    seat = ctx.new_page()
    errors = watch(seat)
    try:
        _import_keys(seat, base, _key_file(me, "clara"))
        seat.goto(f"{base}/play/{host.game}/{me.seat}")
        seat.wait_for_selector("#paused", timeout=FOLLOW)
        text = seat.inner_text("#paused")
        assert text.startswith("Paused by the host since ") and "enter or change your order" in text
        assert _readable_problems(seat) == []
        assert_accessible(seat, "a seat's page while paused")
        _shoot(seat, "pause-seat")

        # The host resumes: every page shows the running clock again.
        tab.click("#host-pause")
        tab.wait_for_selector("#host:not([data-paused='1'])", timeout=FOLLOW)
        tab.wait_for_selector("#paused", state="detached", timeout=FOLLOW)
        tab.wait_for_selector("ol.events:has-text('The host resumed the game after')", timeout=FOLLOW)
        seat.wait_for_selector("#paused", state="detached", timeout=FOLLOW)
        seat.wait_for_selector("p.deadline [data-countdown]", timeout=FOLLOW)
        assert requests.get(f"{base}/games/{host.game}", timeout=10).json()["paused_since"] is None
    finally:
        ctx.close()
    assert not errors, errors
