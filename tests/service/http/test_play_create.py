"""The create page and the invite links without a browser (issue 22, item 1): `/new`
offers each title with its players' range, its variants in words (no rule id, no engine
value) each linked to a place that exists in the title's guide, its bots and the
deadlines in words; an invitation shows the join form for an open seat, and says in
words why not for a taken seat, a bot's seat, a full or started game. The browser test is
tests/service/test_web_create.py."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

from tests.playertext import problems
from tests.service.conftest import Player, create_game, join, start


def _text(html: str) -> str:
    """What a person reads of a page: its text without tags."""
    body = re.sub(r"<(script|style)\b.*?</\1>", "", html, flags=re.S)
    return unescape(re.sub(r"<[^>]+>", " ", body))


def test_the_create_page_offers_each_title_in_words(client: Any) -> None:
    r = client.get("/new")
    assert r.status_code == 200 and r.mimetype == "text/html"
    assert "script-src 'self'" in r.headers["Content-Security-Policy"]
    page = r.get_data(as_text=True)
    assert '<script type="module" src="/static/play/new.js">' in page and "<script>" not in page
    assert 'href="/new"' in client.get("/").get_data(as_text=True)  # the front page links it
    # as the host panel says it (host.js): the host takes a seat like anyone, never by an invitation
    assert "To play yourself, take a seat with “join a seat” on the game’s page once it is made." in \
        " ".join(_text(page).split())
    catalog = {t["id"]: t for t in client.get("/catalog").json}
    for tid, entry in catalog.items():
        seats = entry["seats"]
        assert (f'<option value="{tid}" data-min="{seats["min"]}" data-max="{seats["max"]}"' in page)
        assert f'data-bots="{" ".join(entry["bots"])}"' in page
        box = page.split(f'<fieldset class="variants" data-title="{tid}"', 1)[1].split("</fieldset>", 1)[0]
        offered = re.findall(r'data-option="([a-z_]+)"', box)
        # the yes/no options and the lists of values are all offered; documents are not
        for key, spec in entry["options"].items():
            if spec["type"] == "boolean" or spec["choices"]:
                assert key in offered, f"{tid}: {key} is not offered"
            if "object" in spec["type"] or "array" in spec["type"]:
                assert key not in offered, f"{tid}: {key} is offered"
        found = problems(_text(box))
        assert not found, "\n".join(found)
        guide = client.get(f"/titles/{tid}/rules").get_data(as_text=True)
        links = re.findall(r'href="/titles/' + tid + r'/rules#([^"]+)"', box)
        assert len(links) >= len(offered)
        for anchor in links:
            assert f'id="{anchor}"' in guide, f"{tid}: the guide has no place #{anchor}"
    assert "light variant" in page.lower() and "kids" in page and "Trading variant" in page
    for words in ("1 hour", "1 day", "1 week", "Play the default order for whoever has not answered"):
        assert words in page


def test_invitations_say_in_words_when_a_seat_is_not_open(client: Any) -> None:
    host = Player.new()
    gid = create_game(client, host, 3)["id"]
    r = client.get(f"/play/{gid}/join/1")
    assert r.status_code == 200 and "script-src 'self'" in r.headers["Content-Security-Policy"]
    text = r.get_data(as_text=True)
    assert 'id="join-form"' in text and 'data-seat="1"' in text and "This invitation is for seat 1." in text
    assert 'data-seat=' not in client.get(f"/play/{gid}/join").get_data(as_text=True).split('id="join-form"')[1][:200]
    join(client, gid, Player.new(), "Ann", 1)
    r = client.patch(f"/games/{gid}/seats/2", json={"bot": "greedy"}, headers=host.bearer())
    assert r.status_code == 200, r.json
    taken = client.get(f"/play/{gid}/join/1").get_data(as_text=True)
    assert "Seat 1 is taken (by Ann)." in taken and 'id="join-form"' not in taken
    assert f'href="/play/{gid}/join"' in taken  # another seat is open: the any-seat link
    assert "Seat 2 is taken (by a bot)." in client.get(f"/play/{gid}/join/2").get_data(as_text=True)
    anyone = client.get(f"/play/{gid}/join").get_data(as_text=True)
    assert "Joined so far: Ann." in _text(anyone) and "1 seat is a bot." in anyone
    join(client, gid, Player.new(), "Ben", 0)
    full = client.get(f"/play/{gid}/join").get_data(as_text=True)
    assert "Every seat of this game is taken." in full and 'id="join-form"' not in full
    start(client, host)
    started = client.get(f"/play/{gid}/join/0").get_data(as_text=True)
    assert "This game has started" in started and f'href="/play/{gid}"' in started
    assert client.get(f"/play/{gid}/join/7").status_code == 404
    assert client.get("/play/nosuchgame/join").status_code == 404
