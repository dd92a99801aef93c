"""A game people can read: the picture per caller (`/games/{id}/picture.svg`), the words
beside the JSON (`headline`, `summary`, `asked`), the players' guides over HTTP
(`/titles/{id}/rules` and `.md`), the catalogue's links to them, every order code in
`/problems`, and titles that failed to load in `/readyz`."""

from __future__ import annotations

import dataclasses
import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest

from engine.core import registry
from engine.core.errors import GENERIC_CODES
from service import create_app
from service.config import RULES_DIR, Settings
from service.core.kontor import Kontor
from tests.service.conftest import Player, create_game, new_game, problem

SEATS = 3
SVG = "image/svg+xml"


@pytest.fixture
def table(client: Any, kontor: Kontor) -> dict[str, Any]:
    """A started 3-seat game whose seats hold distinctive sums of money (set in the store),
    so a picture that shows one can be caught."""
    host, players = new_game(client, SEATS)
    gid = host.game
    key = kontor.store.key(gid, "state")
    state = json.loads(kontor.r.get(key))
    for seat, p in enumerate(state["players"]):
        p["money"] = 71_913 + 1000 * seat
    kontor.r.set(key, json.dumps(state))
    return {"gid": gid, "host": host, "players": players, "state": state,
            "names": [f"P{s}" for s in range(SEATS)], "money": [f"{71_913 + 1000 * s:,}" for s in range(SEATS)]}


def svg(client: Any, gid: str, headers: dict[str, str] | None = None) -> str:
    r = client.get(f"/games/{gid}/picture.svg", headers=headers or {})
    assert r.status_code == 200, r.get_data(as_text=True)[:300]
    assert r.mimetype == SVG and r.headers["Cache-Control"] == "no-cache" and r.headers["ETag"]
    text: str = r.get_data(as_text=True)
    assert text.lstrip().startswith("<svg") or text.lstrip().startswith("<?xml"), text[:80]
    return text


# -- the picture -----------------------------------------------------------------------------
def test_each_caller_gets_the_picture_of_its_own_view(client: Any, table: dict[str, Any]) -> None:
    gid, state, names = table["gid"], table["state"], table["names"]
    game = registry.get("haendler")
    public = svg(client, gid)
    assert public == game.picture(game.view(state, "public"), names)
    assert svg(client, gid, table["host"].bearer()) == public  # the host sees what the public sees
    for seat, p in enumerate(table["players"]):
        mine = svg(client, gid, p.bearer())
        assert mine == game.picture(game.view(state, seat), names), seat
        assert table["money"][seat] in mine, seat
        for other in range(SEATS):
            if other != seat:
                assert table["money"][other] not in mine, (seat, other)
    assert not any(m in public for m in table["money"])


def test_the_picture_revalidates_with_its_etag(client: Any, table: dict[str, Any]) -> None:
    gid, p0 = table["gid"], table["players"][0]
    first = client.get(f"/games/{gid}/picture.svg")
    again = client.get(f"/games/{gid}/picture.svg", headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304 and again.data == b""
    assert again.headers["ETag"] == first.headers["ETag"] and again.headers["Cache-Control"] == "no-cache"
    # Seat 0 sees another picture, with another tag: the public copy is not current for it.
    mine = client.get(f"/games/{gid}/picture.svg", headers={**p0.bearer(), "If-None-Match": first.headers["ETag"]})
    assert mine.status_code == 200 and mine.headers["ETag"] != first.headers["ETag"]


def test_no_picture_before_the_start_or_of_no_game(client: Any) -> None:
    host = Player.new()
    gid = create_game(client, host, 2)["id"]
    problem(client.get(f"/games/{gid}/picture.svg"), 409, "game_not_started")
    problem(client.get("/games/0123456789/picture.svg"), 404, "game_not_found")
    stranger = Player.new()
    stranger.game = gid
    problem(client.get(f"/games/{gid}/picture.svg", headers=stranger.bearer()), 401, "unknown_key")


# -- words beside the JSON -------------------------------------------------------------------
def test_the_view_carries_headline_and_summary(client: Any, table: dict[str, Any]) -> None:
    gid, state, names = table["gid"], table["state"], table["names"]
    game = registry.get("haendler")
    for viewer, headers in [("public", {}), *((s, p.bearer()) for s, p in enumerate(table["players"]))]:
        body = client.get(f"/games/{gid}/view", headers=headers).json
        view = game.view(state, viewer)
        assert body["state"] == view and body["viewer"] == viewer
        assert body["headline"] == game.headline(view) and body["headline"]
        assert body["summary"] == game.summary(view, names) and body["summary"]
        shown = [m for m in table["money"] if m in body["summary"]]
        assert shown == ([] if viewer == "public" else [table["money"][viewer]]), viewer


def test_only_the_asked_seat_is_told_what_is_asked(client: Any, table: dict[str, Any]) -> None:
    gid = table["gid"]
    current = client.get(f"/games/{gid}/phases/current").json
    assert current["you"] is None
    asked_seats = current["requested"]
    for seat, p in enumerate(table["players"]):
        you = client.get(f"/games/{gid}/phases/current", headers=p.bearer()).json["you"]
        if seat in asked_seats:
            assert isinstance(you["asked"], str) and you["asked"].strip(), you
        else:
            assert "asked" not in you, you
    host_you = client.get(f"/games/{gid}/phases/current", headers=table["host"].bearer()).json["you"]
    assert host_you is None


# -- the players' guides ---------------------------------------------------------------------
GUIDE = """\
# Testspiel — how to play

Raw HTML stays text: <script>alert("x")</script> <b>bold?</b>

## 4. The phases (H-36 to H-97)

### Phase 1 — buying goods (H-41 to H-44)

#### D1-BUY — buy goods (kind `buy`)

| code | rule |
| --- | --- |
| `not_in_warehouse` | H-43 |

## 4. The phases (H-36 to H-97)
"""


@pytest.fixture
def guides(tmp_path: Path, settings: Settings) -> Any:
    """A client whose guides folder holds a test guide for haendler (and nothing else)."""

    def make(text: str | None) -> Any:
        folder = tmp_path / "rules"
        folder.mkdir(exist_ok=True)
        if text is not None:
            (folder / "haendler.md").write_text(text, encoding="utf-8")
        custom = dataclasses.replace(settings, rules_dir=str(folder))
        app = create_app(custom, Kontor(custom))
        app.config["TESTING"] = True
        return app.test_client()

    return make


def test_the_rules_page(guides: Any) -> None:
    client = guides(GUIDE)
    r = client.get("/titles/haendler/rules")
    assert r.status_code == 200 and r.mimetype == "text/html" and r.headers["ETag"]
    html = r.get_data(as_text=True)
    assert html.startswith("<!doctype html>") and '<html lang="en">' in html
    assert "<title>Testspiel — how to play</title>" in html and "<style>" in html
    # Raw HTML in the guide is escaped, never passed on.
    assert "<script>" not in html and "&lt;script&gt;" in html and "&lt;b&gt;" in html
    assert "default-src 'none'" in r.headers["Content-Security-Policy"]
    # Tables are on; a table or code block wider than the page scrolls from the keyboard too.
    assert '<table tabindex="0">' in html and "<td><code>not_in_warehouse</code></td>" in html
    # Every heading has an id; the same heading twice gets two.
    ids = re.findall(r'<h[1-6] id="([^"]+)"', html)
    assert ids == ["testspiel--how-to-play", "4-the-phases-h-36-to-h-97", "phase-1--buying-goods-h-41-to-h-44",
                   "d1-buy--buy-goods-kind-buy", "4-the-phases-h-36-to-h-97-1"]
    # Rule numbers a heading names link to the deepest heading naming them.
    phase1 = re.search(r'<h3 id="phase-1--buying-goods-h-41-to-h-44">(.*?)</h3>', html)
    assert phase1 and all(f'id="H-{n}"' in phase1.group(1) for n in (41, 42, 43, 44))
    assert html.count('id="H-41"') == 1 and html.count('id="H-36"') == 1 and 'id="D1-BUY"' in html
    again = client.get("/titles/haendler/rules", headers={"If-None-Match": r.headers["ETag"]})
    assert again.status_code == 304 and again.data == b""


def test_the_rules_markdown(guides: Any) -> None:
    r = guides(GUIDE).get("/titles/haendler/rules.md")
    assert r.status_code == 200 and r.mimetype == "text/markdown" and r.mimetype_params["charset"] == "utf-8"
    assert r.get_data(as_text=True) == GUIDE


def test_rules_404s(guides: Any) -> None:
    client = guides(None)  # a guides folder without haendler's guide
    problem(client.get("/titles/haendler/rules"), 404, "rules_not_found")
    problem(client.get("/titles/haendler/rules.md"), 404, "rules_not_found")
    for path in ("/titles/nope/rules", "/titles/nope/rules.md", "/titles/.haendler/rules"):
        problem(client.get(path), 404, "title_not_found")
    problem(client.get("/titles/..%2F..%2Fetc%2Fpasswd/rules"), 404, "not_found")  # no such route
    assert client.get("/catalog").json[0]["rules_url"] is None


def test_the_shipped_guide_is_served(client: Any) -> None:
    if not (RULES_DIR / "haendler.md").is_file():
        pytest.skip("no shipped guide for haendler")
    r = client.get("/titles/haendler/rules")
    assert r.status_code == 200 and "<h1 id=" in r.get_data(as_text=True)
    md = client.get("/titles/haendler/rules.md")
    assert md.get_data(as_text=True) == (RULES_DIR / "haendler.md").read_text(encoding="utf-8")


def test_the_catalogue_links_each_guide(guides: Any, settings: Settings) -> None:
    entries = {t["id"]: t for t in guides(GUIDE).get("/catalog").json}
    haendler = entries["haendler"]
    assert haendler["rules_url"] == f"{settings.public_url}/titles/haendler/rules"
    assert haendler["order_codes"]["not_in_warehouse"] and set(GENERIC_CODES) <= set(haendler["order_codes"])


# -- order codes and titles that failed to load ------------------------------------------
def test_problems_lists_every_order_code(client: Any) -> None:
    listed = client.get("/problems").json
    for code in GENERIC_CODES:
        assert listed[code]["status"] == 422, code
    for game in registry.titles().values():
        for code in game.order_codes:
            assert listed[code]["status"] == 422, code
    assert "not_in_warehouse" in listed


def test_readyz_reports_titles_that_failed(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    assert client.get("/readyz").json == {"status": "ready", "titles_failed": registry.load_errors()}
    monkeypatch.setattr(registry, "load_errors", lambda: {"broken": "ImportError: no module named 'broken'"})
    assert client.get("/readyz").json["titles_failed"] == {"broken": "ImportError: no module named 'broken'"}


def test_a_broken_title_is_logged_at_app_start(settings: Settings, monkeypatch: pytest.MonkeyPatch,
                                               caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(registry, "load_errors", lambda: {"broken": "ImportError: no module named 'broken'"})
    with caplog.at_level(logging.ERROR, logger="kontor"):
        create_app(settings, Kontor(settings))
    assert any("broken" in rec.getMessage() and "ImportError" in rec.getMessage() for rec in caplog.records)


def test_the_players_table_writes_money_with_thousands_commas(client: Any, table: dict[str, Any]) -> None:
    gid, p0 = table["gid"], table["players"][0]
    text = client.get(f"/play/{gid}/0/part", headers=p0.bearer()).get_data(as_text=True)
    players = text[text.index('<table class="players">'):]
    players = players[:players.index("</table>")]
    assert "<td>71,913</td>" in players and "71913" not in players
    assert players.count("<td>—</td>") >= 2  # the others' money is not shown to seat 0
