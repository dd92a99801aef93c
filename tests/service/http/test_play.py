"""The web pages (service/http/resources/play.py) without a browser: what each page shows
to whom, the capability of a mail's link (its own step and seat only), the JSON route it
submits through, escaping, and the pages' security headers. The browser tests are
tests/service/test_browser.py."""

from __future__ import annotations

import re
from typing import Any

import pytest

from service.channels.links import page_cap, page_url
from service.core.kontor import Kontor
from tests.service.conftest import Player, create_game, join, new_game, problem, start

# Also with the store on a Valkey Cluster and the queue on a Valkey of its own (issue 24).
pytestmark = pytest.mark.cluster


def _open(client: Any, kontor: Kontor, seats: int = 3, **body: Any) -> tuple[Player, list[Player], dict[str, Any]]:
    host, players = new_game(client, seats, **body)
    ph = client.get(f"/games/{host.game}/phases/current").json
    return host, players, ph


def test_lobby_lists_open_games_titles_and_docs(client: Any) -> None:
    host = Player.new()
    r = client.post("/games", json={"title": "fantasy", "seats": 3, "host_key": host.key.public, "seed": 1,
                                    "name": "<b>Friday</b>"}, headers={"Idempotency-Key": "k-1"})
    assert r.status_code == 201, r.json
    gid = r.json["id"]
    page = client.get("/")
    assert page.status_code == 200 and page.mimetype == "text/html"
    text = page.get_data(as_text=True)
    assert f'href="/play/{gid}"' in text
    assert "&lt;b&gt;Friday&lt;/b&gt;" in text and "<b>Friday" not in text
    for title in ("haendler", "aufachse", "fantasy"):
        assert f'href="/titles/{title}/rules"' in text
    assert 'href="/docs"' in text
    csp = page.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]


def test_join_page_of_a_game_in_its_lobby(client: Any) -> None:
    host = Player.new()
    gid = client.post("/games", json={"title": "haendler", "seats": 2, "host_key": host.key.public},
                      headers={"Idempotency-Key": "k-2"}).json["id"]
    join(client, gid, Player.new(), "Ann")
    text = client.get(f"/play/{gid}").get_data(as_text=True)
    assert 'id="join-form"' in text and "1 of 2 seats are taken" in text and "Ann" in text
    players = text[text.index('<table class="players">'):]
    assert "<td>open</td>" in players[:players.index("</table>")] and "(free)" not in text  # as the host's table says
    assert '<script type="module" src="/static/play/game.js">' in text
    assert "<script>" not in text  # no inline script
    seat_page = client.get(f"/play/{gid}/0").get_data(as_text=True)
    assert 'id="join-form"' not in seat_page and "This is Ann’s seat" in seat_page
    join(client, gid, Player.new(), "Ben")
    assert "Every seat is taken." in client.get(f"/play/{gid}").get_data(as_text=True)


def test_public_page_shows_board_summary_players_and_events(client: Any, kontor: Kontor) -> None:
    host, players, ph = _open(client, kontor)
    gid = host.game
    r = client.get(f"/play/{gid}")
    assert r.status_code == 200
    text = r.get_data(as_text=True)
    assert "<svg" in text and 'class="summary"' in text
    assert "The game begins with P0, P1 and P2." in text
    for p in range(3):
        assert f"P{p}" in text
    waiting = [f"P{s}" for s in ph["requested"]]
    assert "Waiting for " + ", ".join(waiting) in text
    assert 'id="decide"' not in text  # the public is asked nothing
    assert "data-countdown" in text
    # the part the script reloads is the same content
    part = client.get(f"/play/{gid}/part").get_data(as_text=True)
    assert part.startswith("<div id=\"content\"") or "<div id=\"content\"" in part[:400]


def test_seat_page_without_key_shows_the_public_view(client: Any, kontor: Kontor) -> None:
    host, players, _ = _open(client, kontor)
    text = client.get(f"/play/{host.game}/1").get_data(as_text=True)
    assert f'data-seat="1" data-seat-key="{players[1].key.public}"' in text
    assert 'id="keynote"' in text and 'id="decide"' not in text


def test_seat_part_with_bearer_shows_the_form_and_own_view(client: Any, kontor: Kontor) -> None:
    host, players, ph = _open(client, kontor)
    seat = ph["requested"][0]
    p = players[seat]
    r = client.get(f"/play/{host.game}/{seat}/part", headers=p.bearer())
    assert r.status_code == 200
    text = r.get_data(as_text=True)
    assert 'id="decide"' in text and f'data-step="{ph["id"]}"' in text
    you = client.get(f"/games/{host.game}/phases/current", headers=p.bearer()).json["you"]
    assert you["asked"].replace("'", "&#39;")[:40] in text
    # no field of the order schema: the decision comes from the prompt; the JSON is for programmers
    for name in you["order_schema"]["properties"]:
        assert f'name="{name}"' not in text
    assert '<details class="json" id="programmers">' in text and 'id="send-default"' in text
    # another seat's bearer is not this seat's page
    other = players[(seat + 1) % 3]
    assert client.get(f"/play/{host.game}/{seat}/part", headers=other.bearer()).status_code == 403


def test_capability_opens_its_own_step_and_seat_only(client: Any, kontor: Kontor) -> None:
    host, players, ph = _open(client, kontor, mail_orders="reply_address")
    gid, step, seat = host.game, ph["id"], ph["requested"][0]
    url = page_url(kontor, gid, seat, step)
    assert url.endswith(f"/play/{gid}/{seat}?step={step}&cap={page_cap(kontor, gid, step, seat)}")
    path = url.split("127.0.0.1:8000", 1)[1]
    text = client.get(path).get_data(as_text=True)
    assert 'id="decide"' in text and f'data-cap="{page_cap(kontor, gid, step, seat)}"' in text
    other = (seat + 1) % 3
    # the same capability on another seat's page, or a made-up one: the public view and a note
    for bad in (f"/play/{gid}/{other}?step={step}&cap={page_cap(kontor, gid, step, seat)}",
                f"/play/{gid}/{seat}?step={step}&cap=aaaaaaaaaaaaaaaaaaaaaaaaaa",
                f"/play/{gid}/{seat}?step={step + 1}&cap={page_cap(kontor, gid, step, seat)}"):
        text = client.get(bad).get_data(as_text=True)
        assert 'id="decide"' not in text and 'role="alert"' in text, bad
    assert client.get(f"/play/{gid}/{seat}/part?step={step}&cap=x").status_code == 401


def test_a_stale_link_says_so_and_no_capability_is_logged(client: Any, kontor: Kontor, worker: Any) -> None:
    from service.logs import redact

    host, players, ph = _open(client, kontor, mail_orders="reply_address")
    gid, step, seat = host.game, ph["id"], ph["requested"][0]
    cap = page_cap(kontor, gid, step, seat)
    assert cap not in redact(f"GET /play/{gid}/{seat}?step={step}&cap={cap} 200")
    assert cap not in redact(page_url(kontor, gid, seat, step))
    for s in ph["requested"]:
        you = client.get(f"/games/{gid}/phases/current", headers=players[s].bearer()).json["you"]
        r = client.put(f"/games/{gid}/phases/{step}/orders/{s}/by-link",
                       json={"cap": page_cap(kontor, gid, step, s), "order": you["default_order"]})
        assert r.status_code == 202, r.json
    worker()
    text = client.get(f"/play/{gid}/{seat}?step={step}&cap={cap}").get_data(as_text=True)
    assert f"for step {step}, which is over" in text and 'id="decide"' not in text


def test_submit_by_link(client: Any, kontor: Kontor, worker: Any) -> None:
    host, players, ph = _open(client, kontor, mail_orders="reply_address")
    gid, step, seat = host.game, ph["id"], ph["requested"][0]
    cap = page_cap(kontor, gid, step, seat)
    you = client.get(f"/games/{gid}/phases/current", headers=players[seat].bearer()).json["you"]
    url = f"/games/{gid}/phases/{step}/orders/{seat}/by-link"
    problem(client.put(url, json={"cap": cap[:-1] + ("a" if cap[-1] != "a" else "b"), "order": you["default_order"]}),
            401, "bad_page_link")
    problem(client.put(f"/games/{gid}/phases/{step + 1}/orders/{seat}/by-link",
                       json={"cap": cap, "order": you["default_order"]}), 401, "bad_page_link")
    refused = client.put(url, json={"cap": cap, "order": {"goods": "everything"}})
    assert refused.status_code == 422 and refused.mimetype == "application/problem+json", refused.json
    r = client.put(url, json={"cap": cap, "order": you["default_order"]})
    assert r.status_code == 202, r.json
    assert r.json["via"] == "page" and r.json["seat"] == seat and r.json["phase"] == step
    stored = client.get(f"/games/{gid}/phases/{step}/orders/{seat}", headers=players[seat].bearer()).json
    assert stored["receipt"] == r.json["receipt"]


def test_a_link_opens_nothing_once_a_bot_has_the_seat(client: Any, kontor: Kontor) -> None:
    host, players, ph = _open(client, kontor, mail_orders="reply_address")
    gid, step, seat = host.game, ph["id"], ph["requested"][0]
    cap = page_cap(kontor, gid, step, seat)
    r = client.patch(f"/games/{gid}/seats/{seat}", json={"bot": "greedy"}, headers=host.bearer())
    assert r.status_code == 200, r.json
    text = client.get(f"/play/{gid}/{seat}?step={step}&cap={cap}").get_data(as_text=True)
    assert 'id="decide"' not in text
    r = client.put(f"/games/{gid}/phases/{step}/orders/{seat}/by-link", json={"cap": cap, "order": {}})
    problem(r, 409, "seat_played_by_bot")


def test_submit_by_link_refused_in_a_signed_game(client: Any, kontor: Kontor) -> None:
    host, players, ph = _open(client, kontor, mail_orders="signed")
    gid, step, seat = host.game, ph["id"], ph["requested"][0]
    r = client.put(f"/games/{gid}/phases/{step}/orders/{seat}/by-link",
                   json={"cap": page_cap(kontor, gid, step, seat), "order": {}})
    problem(r, 403, "reply_orders_disabled")


def test_names_are_escaped_everywhere(client: Any, kontor: Kontor) -> None:
    host = Player.new()
    gid = client.post("/games", json={"title": "haendler", "seats": 2, "host_key": host.key.public, "seed": 3},
                      headers={"Idempotency-Key": "k-3"}).json["id"]
    host.game = gid
    evil = '<img src=x onerror="alert(1)">'
    for name in (evil, "Bob"):
        join(client, gid, Player.new(), name)
    assert client.patch(f"/games/{gid}", json={"status": "running"}, headers=host.bearer()).status_code == 200
    for path in (f"/play/{gid}", f"/play/{gid}/0", f"/play/{gid}/part"):
        text = client.get(path).get_data(as_text=True)
        assert "<img src=x" not in text, path
        assert "&lt;img src=x" in text, path


def test_unknown_game_and_seat_are_pages_too(client: Any) -> None:
    r = client.get("/play/nosuchgame")
    assert r.status_code == 404 and r.mimetype == "text/html" and "No such game" in r.get_data(as_text=True)
    assert "Content-Security-Policy" in r.headers


def test_mine_page_is_static_and_scripted(client: Any) -> None:
    text = client.get("/mine").get_data(as_text=True)
    assert '<script type="module" src="/static/play/mine.js">' in text
    assert client.get("/static/play/keys.js").status_code == 200
    assert not re.search(r"<script(?![^>]*\bsrc=)", text)


def test_pages_say_so_when_the_store_is_down() -> None:
    from tests.service.http.test_defects import _closed_port, down_app

    r = down_app(_closed_port()).test_client().get("/")
    assert r.status_code == 503 and r.mimetype == "text/html" and int(r.headers["Retry-After"]) > 0
    assert "not reachable" in r.get_data(as_text=True)


def visible_text(html_text: str) -> str:
    """What a person reads of a page without opening anything: its text less scripts
    (the embedded prompt is data), closed disclosures (the JSON for programmers) and
    tags; plus the words of attributes that are read out or shown on hover."""
    import html as html_mod

    t = re.sub(r"<script\b.*?</script>", " ", html_text, flags=re.S)
    t = re.sub(r"<details\b(?![^>]*\bopen\b)[^>]*>.*?</details>", " ", t, flags=re.S)
    t = re.sub(r"<noscript>.*?</noscript>", " ", t, flags=re.S)
    said = re.findall(r'\b(?:aria-label|title|alt|placeholder)="([^"]*)"', t)
    t = re.sub(r"<[^>]+>", " ", t)
    return html_mod.unescape(" ".join([t, *said]))


def test_a_seat_page_carries_its_prompt_and_actions_in_words(client: Any, kontor: Kontor) -> None:
    """With a title that has prompts (Stall), a seat's part embeds the first level of its
    decision and of its actions exactly as its phase has them (the script draws them), says
    what to do in words, and shows no id, null or JSON; a seat not asked gets the actions only."""
    import json

    from tests.playertext import problems
    from tests.service.stall import registered

    with registered():
        host, a, b = Player.new(), Player.new(), Player.new()
        create_game(client, host, 2, title="stall", name="Market day")
        join(client, host.game, a, "Rosa", 0)
        join(client, host.game, b, "Jonas", 1)
        start(client, host)
        you = client.get(f"/games/{host.game}/phases/current", headers=a.bearer()).json["you"]
        text = client.get(f"/play/{host.game}/0/part", headers=a.bearer()).get_data(as_text=True)
        embedded = re.search(r'<script type="application/json" id="prompt-data">(.*?)</script>', text, re.S)
        actions = re.search(r'<script type="application/json" id="actions-data">(.*?)</script>', text, re.S)
        assert embedded and actions
        assert json.loads(embedded.group(1)) == you["prompt"] and json.loads(actions.group(1)) == you["actions"]
        assert '<p class="say">Buy 1 to 3 of a good, or pass.</p>' in text
        assert '<p class="say">You may hoard a good at any time.</p>' in text
        seen = visible_text(text)
        assert "Your turn" in seen and "At any time" in seen and "Send the default order" in seen
        assert problems(seen) == [], "\n".join(problems(seen))
        # the seat that is not asked: no decision, but its actions
        text = client.get(f"/play/{host.game}/1/part", headers=b.bearer()).get_data(as_text=True)
        assert 'id="decide"' not in text and 'id="actions-data"' in text and "Not your turn" in text
        assert problems(visible_text(text)) == []


def test_a_link_dies_when_the_seat_changes_hands(client: Any, kontor: Kontor, worker: Any) -> None:
    """A mail link is bound to the seat's holder when it was sent: once the host gives the
    seat a new key, the former player's link orders nothing, opens nothing and says why;
    the new holder's fresh link works."""
    host, players, ph = _open(client, kontor, mail_orders="reply_address")
    gid, step, seat = host.game, ph["id"], ph["requested"][0]
    old = page_cap(kontor, gid, step, seat)
    you = client.get(f"/games/{gid}/phases/current", headers=players[seat].bearer()).json["you"]
    heir = Player.new()
    r = client.patch(f"/games/{gid}/seats/{seat}", json={"public_key": heir.key.public}, headers=host.bearer())
    assert r.status_code == 200, r.json
    worker()
    url = f"/games/{gid}/phases/{step}/orders/{seat}/by-link"
    body = problem(client.put(url, json={"cap": old, "order": you["default_order"]}), 403, "seat_changed")
    assert "former player" in body["detail"]
    assert seat not in kontor.store.orders(gid, step)
    problem(client.post(f"/games/{gid}/seats/{seat}/choices", json={"cap": old, "picks": []}), 403, "seat_changed")
    text = client.get(f"/play/{gid}/{seat}?step={step}&cap={old}").get_data(as_text=True)
    assert 'id="decide"' not in text and 'role="alert"' in text and "former player" in text
    # a made-up capability is still just not this server's
    problem(client.put(url, json={"cap": "a" * 26, "order": you["default_order"]}), 401, "bad_page_link")
    fresh = page_cap(kontor, gid, step, seat)
    assert fresh != old and fresh in page_url(kontor, gid, seat, step)
    assert 'id="decide"' in client.get(f"/play/{gid}/{seat}?step={step}&cap={fresh}").get_data(as_text=True)
    r = client.put(url, json={"cap": fresh, "order": you["default_order"]})
    assert r.status_code == 202 and r.json["via"] == "page", r.json


def test_a_link_stays_dead_after_a_bot_held_the_seat(client: Any, kontor: Kontor, worker: Any) -> None:
    """A bot takes the seat, then the host gives it to another player: the first player's
    link still orders nothing."""
    host, players, ph = _open(client, kontor, mail_orders="reply_address")
    gid, step, seat = host.game, ph["id"], ph["requested"][0]
    old = page_cap(kontor, gid, step, seat)
    r = client.patch(f"/games/{gid}/seats/{seat}", json={"bot": "greedy"}, headers=host.bearer())
    assert r.status_code == 200, r.json
    r = client.patch(f"/games/{gid}/seats/{seat}", json={"public_key": Player.new().key.public},
                     headers=host.bearer())
    assert r.status_code == 200, r.json
    before = kontor.store.orders(gid, step).get(seat)
    current = client.get(f"/games/{gid}/phases/current").json
    r = client.put(f"/games/{gid}/phases/{current['id']}/orders/{seat}/by-link", json={"cap": old, "order": {}})
    assert r.status_code in (401, 403), r.json
    assert kontor.store.orders(gid, step).get(seat) == before
