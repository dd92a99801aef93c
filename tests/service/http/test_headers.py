"""Every answer's security headers (service/http/headers.py): each HTML page, SVG picture,
documentation page, error page, static file and 304 carries a Content-Security-Policy with
`frame-ancestors 'none'` and `X-Content-Type-Options: nosniff`; a page that sets its own
policy keeps it. An address under `/play/` that names no game (an odd id, too many parts)
is an HTML 404 page for every client, browser or not. The docs' viewers rendering under
their policy without a violation: tests/service/test_picture_geometry.py."""

from __future__ import annotations

from typing import Any

import pytest

from service.channels.mail.unsubscribe import unsubscribe_token
from service.core.kontor import Kontor
from service.http.headers import DOCS, OTHER, PAGE, SVG
from tests.service.conftest import new_game

# (No cluster leg: the headers are the HTTP layer's, the same whatever store the game is in.)

BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


def policy(r: Any) -> dict[str, str]:
    """The answer's CSP as {directive: its sources}; fails without nosniff or frame-ancestors."""
    assert r.headers.get("X-Content-Type-Options") == "nosniff", (r.request.path, dict(r.headers))
    csp = r.headers.get("Content-Security-Policy")
    assert csp, (r.request.path, r.status_code, dict(r.headers))
    out = dict((part.strip().split(" ", 1) + [""])[:2] for part in csp.split(";") if part.strip())
    assert out.get("frame-ancestors") == "'none'", (r.request.path, csp)
    return out


def test_every_html_and_svg_answer_carries_the_policy(client: Any, kontor: Kontor) -> None:
    host, _ = new_game(client, 2)
    gid = host.game
    token = unsubscribe_token(kontor, "ada@example.org")
    pages = ["/", "/mine", "/new", f"/play/{gid}", f"/play/{gid}/part", f"/play/{gid}/0", f"/play/{gid}/0/part",
             f"/play/{gid}/join", f"/play/{gid}/join/1", "/titles/haendler/rules", f"/unsubscribe/{token}",
             "/docs", "/redoc", "/play/no-such-game", "/nonexistent-page"]
    for path in pages:
        r = client.get(path, headers={"Accept": BROWSER})
        assert r.mimetype == "text/html", (path, r.status_code, r.mimetype)
        csp = policy(r)
        # no page runs an inline or outside script
        assert csp["script-src"] == "'self'" if "script-src" in csp else csp["default-src"] == "'none'", (path, csp)
    picture = client.get(f"/games/{gid}/picture.svg")
    assert picture.status_code == 200 and picture.mimetype == "image/svg+xml"
    assert picture.headers["Content-Security-Policy"] == SVG and policy(picture)["default-src"] == "'none'"
    for path in ("/favicon.ico", "/static/favicon.svg", "/static/play/keys.js", "/static/docs/swagger-init.js",
                 "/static/vendor/redoc/redoc.standalone.js"):
        r = client.get(path)
        assert r.status_code == 200, path
        assert policy(r)["default-src"] == "'none'", path
    assert client.get("/docs").headers["Content-Security-Policy"] == DOCS
    assert client.get("/").headers["Content-Security-Policy"] == PAGE
    assert client.get("/favicon.ico").headers["Content-Security-Policy"] == OTHER


def test_a_page_keeps_its_own_policy(client: Any) -> None:
    r = client.get("/titles/fantasy/rules")
    csp = policy(r)
    assert csp["style-src"] == "'unsafe-inline'" and "script-src" not in csp


@pytest.mark.parametrize("path", ["/titles/fantasy/rules", "/games/{gid}/picture.svg"])
def test_a_304_carries_the_headers_too(client: Any, path: str) -> None:
    host, _ = new_game(client, 2)
    url = path.format(gid=host.game)
    first = client.get(url)
    again = client.get(url, headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304
    assert again.headers["Content-Security-Policy"] == first.headers["Content-Security-Policy"]
    policy(again)


@pytest.mark.parametrize("path", ["/play/%00", "/play/" + "a" * 55, "/play/x.y", "/play/x%2Fy", "/play/a/b/c",
                                  "/play/%C3%A9", "/play/x/join/9999999999999999999", "/play/x/0/part/more"])
@pytest.mark.parametrize("accept", [BROWSER, "*/*", None, "application/json"])
def test_a_bad_play_address_is_an_html_404_page_for_every_client(client: Any, path: str, accept: str | None) -> None:
    r = client.get(path, headers={"Accept": accept} if accept else {})
    assert r.status_code == 404 and r.mimetype == "text/html", (path, accept, r.status_code, r.mimetype)
    text = r.get_data(as_text=True)
    assert "<h1" in text and "Traceback" not in text
    assert policy(r)["script-src"] == "'self'"


def test_the_api_keeps_problem_json_with_nosniff(client: Any) -> None:
    for accept in ("*/*", None):
        r = client.get("/games/no-such-game/view", headers={"Accept": accept} if accept else {})
        assert r.status_code == 404 and r.mimetype == "application/problem+json"
        assert r.headers["X-Content-Type-Options"] == "nosniff"
    r = client.get("/nonexistent-page", headers={"Accept": "*/*"})
    assert r.status_code == 404 and r.mimetype == "application/problem+json"
