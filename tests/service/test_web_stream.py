"""The game page and the stream's end (issue 23): when the server ends a stream it says
why (`event: closed`); a page whose seat changed hands goes on as everyone sees it at
once, and a public page whose stream idled out follows again only once the person is
back (here: a mouse move)."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import pytest
import requests

from service.config import Settings
from tests.service.test_browser import _game, _import_keys, _key_file, _seated

#: A public stream ends after this many seconds without an event (here).
IDLE = 2


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return replace(settings, stream_idle_timeout=IDLE)


def _streams(tab: Any) -> list[dict[str, str]]:
    """The page's stream requests (their headers), as they are made."""
    seen: list[dict[str, str]] = []
    tab.on("request", lambda r: seen.append(r.headers) if r.url.endswith("/stream") else None)
    return seen


def _until(tab: Any, what: Any, limit: float) -> None:
    """Wait until `what()`, letting the page's events in (playwright delivers them only
    while it is called)."""
    end = time.monotonic() + limit
    while not what():
        assert time.monotonic() < end, "timed out"
        tab.wait_for_timeout(100)


def test_a_page_whose_seat_changed_hands_follows_as_everyone_at_once(tab: Any, live_server: str,
                                                                      worker: Any) -> None:
    base = live_server
    host = _game(base, "haendler", 2, options={"light": True})
    me, _ = _seated(base, host, "Sam", 2, "greedy", worker)
    _import_keys(tab, base, _key_file(me, "sam"))
    seen = _streams(tab)
    tab.goto(f"{base}/play/{host.game}/{me.seat}")
    tab.wait_for_selector("body[data-follow='stream']", timeout=10_000)
    _until(tab, lambda: seen, 5)
    assert "authorization" in seen[0]
    # A read the page sent with the former holder's key while the seat changed hands is
    # refused (403 seat_changed), and the browser logs any refused load: the page meets it
    # by following as everyone, which is what this test checks.
    tab.expected_errors.append("status of 403")
    r = requests.patch(f"{base}/games/{host.game}/seats/{me.seat}", json={"bot": "greedy"}, headers=host.bearer(),
                       timeout=10)
    assert r.status_code == 200, r.text
    # Well before the slow poll (15 s) would find out: the stream's closing frame says so.
    _until(tab, lambda: len(seen) > 1, 8)
    assert "authorization" not in seen[1]


def test_an_idle_public_page_follows_again_once_the_person_is_back(tab: Any, live_server: str,
                                                                   worker: Any) -> None:
    base = live_server
    host = _game(base, "haendler", 2)
    seen = _streams(tab)
    tab.goto(f"{base}/play/{host.game}")
    tab.wait_for_selector("body[data-follow='stream']", timeout=10_000)
    tab.wait_for_timeout((IDLE + 2.5) * 1000)  # the stream ended (idle) a while ago; no one is at the page
    assert len(seen) == 1
    tab.mouse.move(200, 200)
    tab.mouse.move(220, 240)
    _until(tab, lambda: len(seen) > 1, 5)
