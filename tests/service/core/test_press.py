"""In-game messages: public and private messages, who sees them (messages and events),
the game's press setting, the rate limit, bad input refused unchanged, and delivery of
`message.received` to the recipients' channels (never to the sender or a third seat)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

import pytest

from service import create_app
from service.config import Settings
from service.core.kontor import Kontor
from tests.service.channels import payloads, work_all
from tests.service.conftest import Player, create_game, default_step, footprint, join, new_game, problem

# The tests whose requests reach the store's scripts run also with the store on a Valkey
# Cluster and the queue on a Valkey of its own (issue 24, marker `cluster`); the refusals of
# a malformed body are made before the store is asked.


def post(client: Any, who: Player, body: dict[str, Any], key: str | None = None) -> Any:
    headers = {**who.bearer(), "Idempotency-Key": key or uuid.uuid4().hex}
    return client.post(f"/games/{who.game}/messages", json=body, headers=headers)


def texts(page: dict[str, Any]) -> list[str]:
    return [m["text"] for m in page["items"]]


def seen(client: Any, gid: str, who: Player | None) -> dict[str, list[str]]:
    """The message texts `who` (None: the public) finds in the messages and in the events."""
    headers = who.bearer() if who else {}
    messages = client.get(f"/games/{gid}/messages", headers=headers).json
    events = client.get(f"/games/{gid}/events?limit=500", headers=headers).json
    return {"messages": texts(messages), "events": [e["text"] for e in events["items"] if e["type"] == "message"]}


# -- who sees what ----------------------------------------------------------------------
@pytest.mark.cluster
def test_public_and_private_messages_are_seen_only_by_their_audience(client: Any) -> None:
    host, (p0, p1, p2) = new_game(client, 3)
    gid = host.game
    r = post(client, p0, {"to": [1], "text": "Psst, seat 1: wine is cheap."})
    assert r.status_code == 201, r.json
    private = r.json
    assert (private["from"], private["to"], private["phase"]) == (0, [1], 1) and private["id"] > 0
    assert post(client, p1, {"to": "all", "text": "Hello table!"}).status_code == 201
    assert post(client, host, {"text": "Host: next step in an hour."}).json["from"] == "host"

    everyone = ["Hello table!", "Host: next step in an hour."]
    both = ["Psst, seat 1: wine is cheap.", *everyone]
    assert seen(client, gid, p0) == {"messages": both, "events": both}
    assert seen(client, gid, p1) == {"messages": both, "events": both}
    assert seen(client, gid, p2) == {"messages": everyone, "events": everyone}
    assert seen(client, gid, None) == {"messages": everyone, "events": everyone}
    assert seen(client, gid, host) == {"messages": everyone, "events": everyone}


@pytest.mark.cluster
def test_a_private_message_to_several_seats_and_paging(client: Any) -> None:
    host, (p0, p1, p2, p3) = new_game(client, 4)
    gid = host.game
    assert post(client, p2, {"to": [3, 0], "text": "Shall we?"}).json["to"] == [0, 3]
    for n in range(5):
        post(client, p1, {"text": f"public {n}"})
    assert seen(client, gid, p1)["messages"] == [f"public {n}" for n in range(5)]
    assert seen(client, gid, p3)["messages"][0] == "Shall we?"

    first = client.get(f"/games/{gid}/messages?limit=2", headers=p0.bearer()).json
    assert texts(first) == ["Shall we?", "public 0"] and first["more"] is True
    rest = client.get(f"/games/{gid}/messages?after={first['next']}", headers=p0.bearer()).json
    assert texts(rest) == [f"public {n}" for n in range(1, 5)] and rest["more"] is False


@pytest.mark.cluster
def test_messages_can_be_written_in_the_lobby(client: Any) -> None:
    host = Player.new()
    gid = create_game(client, host, 2)["id"]
    p0, p1 = Player.new(), Player.new()
    join(client, gid, p0, "A", 0)
    join(client, gid, p1, "B", 1)
    r = post(client, p0, {"to": [1], "text": "Ready when you are."})
    assert r.status_code == 201 and r.json["phase"] == 0
    assert texts(client.get(f"/games/{gid}/messages", headers=p1.bearer()).json) == ["Ready when you are."]


@pytest.mark.cluster
def test_a_retry_with_the_same_idempotency_key_stores_the_message_once(client: Any) -> None:
    host, (p0, _p1) = new_game(client, 2)
    key = uuid.uuid4().hex
    first = post(client, p0, {"text": "once"}, key=key)
    again = post(client, p0, {"text": "once"}, key=key)
    assert again.status_code == 201 and again.json == first.json
    assert again.headers["Idempotent-Replayed"] == "true"
    assert seen(client, host.game, None)["messages"] == ["once"]


# -- the press setting ------------------------------------------------------------------
@pytest.mark.cluster
def test_press_public_refuses_private_messages(client: Any, kontor: Kontor) -> None:
    host, (p0, _p1) = new_game(client, 2, press="public")
    before = footprint(kontor, host.game)
    problem(post(client, p0, {"to": [1], "text": "secret"}), 403, "press_disabled")
    assert footprint(kontor, host.game) == before
    assert post(client, p0, {"to": "all", "text": "open"}).status_code == 201


@pytest.mark.cluster
def test_press_none_refuses_every_message(client: Any, kontor: Kontor) -> None:
    host, (p0, _p1) = new_game(client, 2, press="none")
    assert client.get(f"/games/{host.game}").json["press"] == "none"
    before = footprint(kontor, host.game)
    problem(post(client, p0, {"to": "all", "text": "hello"}), 403, "press_disabled")
    problem(post(client, p0, {"to": [1], "text": "hello"}), 403, "press_disabled")
    problem(post(client, host, {"text": "hello"}), 403, "press_disabled")
    assert footprint(kontor, host.game) == before


# -- refusals ---------------------------------------------------------------------------
@pytest.mark.parametrize(("body", "code"), [
    ({"to": [], "text": "x"}, "bad_recipients"),
    ({"to": [7], "text": "x"}, "bad_recipients"),
    ({"to": [0], "text": "x"}, "bad_recipients"),
    ({"to": [1, 1], "text": "x"}, "bad_recipients"),
    ({"to": [True], "text": "x"}, "bad_recipients"),
    ({"to": "everyone", "text": "x"}, "bad_recipients"),
    ({"to": 1, "text": "x"}, "bad_recipients"),
    ({"to": "all", "text": ""}, "bad_message"),
    ({"to": "all", "text": " \n\t "}, "bad_message"),
    ({"to": "all", "text": "x" * 2001}, "bad_message"),
    ({"to": "all", "text": "bell\x07"}, "bad_message"),
    ({"to": "all", "text": "escape \x1b[31mred"}, "bad_message"),
    ({"to": "all"}, "invalid_request"),
    ({"to": "all", "text": 5}, "invalid_request"),
    ({"to": "all", "text": "x", "colour": "red"}, "invalid_request"),
])
def test_bad_messages_are_refused_and_change_nothing(client: Any, kontor: Kontor, body: dict[str, Any],
                                                     code: str) -> None:
    host, (p0, _p1) = new_game(client, 2)
    before = footprint(kontor, host.game)
    problem(post(client, p0, body), 422, code)
    assert footprint(kontor, host.game) == before


@pytest.mark.cluster
def test_line_breaks_and_tabs_are_kept_and_the_longest_text_goes_through(client: Any) -> None:
    host, (p0, _p1) = new_game(client, 2)
    assert post(client, p0, {"text": "a\r\n\tb\rc"}).json["text"] == "a\n\tb\nc"
    assert post(client, p0, {"text": "ä" * 2000}).status_code == 201


@pytest.mark.cluster
def test_who_may_write(client: Any, kontor: Kontor) -> None:
    host, (p0, _p1) = new_game(client, 2)
    gid = host.game
    before = footprint(kontor, gid)
    anonymous = client.post(f"/games/{gid}/messages", json={"text": "hi"}, headers={"Idempotency-Key": "k1"})
    problem(anonymous, 401, "authentication_required")
    problem(post(client, host, {"to": [0], "text": "private from the host"}), 403, "forbidden")
    problem(client.post(f"/games/{gid}/messages", json={"text": "hi"}, headers=p0.bearer()), 400,
            "idempotency_key_missing")
    stranger = Player.new()
    stranger.game = gid
    problem(post(client, stranger, {"text": "hi"}), 401, "unknown_key")
    assert footprint(kontor, gid) == before
    problem(client.get("/games/nope/messages"), 404, "game_not_found")


@pytest.mark.cluster
def test_no_messages_once_the_game_is_over(client: Any, kontor: Kontor) -> None:
    host, (p0, _p1) = new_game(client, 2)
    gid = host.game
    for _ in range(1000):  # resolved in-process, as the worker would, to keep it fast
        ph = kontor.store.phase(gid)
        if ph["status"] == "finished":
            break
        default_step(kontor, gid)
        kontor.resolve(gid, int(ph["id"]))
    before = footprint(kontor, gid)
    problem(post(client, p0, {"text": "gg"}), 409, "game_finished")
    assert footprint(kontor, gid) == before
    assert client.get(f"/games/{gid}/messages").json["items"] == []


# -- the rate limit ---------------------------------------------------------------------
@pytest.fixture
def strict(settings: Settings) -> tuple[Any, Kontor]:
    """A client on settings that allow two messages per seat in ten minutes."""
    s = replace(settings, press_rate=2, press_window=600)
    k = Kontor(s)
    app = create_app(s, k)
    app.config["TESTING"] = True
    return app.test_client(), k


@pytest.mark.cluster
def test_the_rate_limit_refuses_with_retry_after_and_a_refusal_does_not_count(strict: tuple[Any, Kontor]) -> None:
    client, k = strict
    host, (p0, p1) = new_game(client, 2)
    gid = host.game
    assert post(client, p0, {"text": "one"}).status_code == 201
    problem(post(client, p0, {"to": [0], "text": "to myself"}), 422, "bad_recipients")  # does not count
    assert post(client, p0, {"to": [1], "text": "two"}).status_code == 201

    before = footprint(k, gid)
    key = uuid.uuid4().hex
    r = post(client, p0, {"text": "three"}, key=key)
    body = problem(r, 429, "rate_limited")
    assert 0 < body["retry_after"] <= 600 and r.headers["Retry-After"] == str(body["retry_after"])
    again = post(client, p0, {"text": "three"}, key=key)  # a 429 is not kept under its key
    problem(again, 429, "rate_limited")
    assert "Idempotent-Replayed" not in again.headers
    assert footprint(k, gid) == before

    # The limit is per writer: the other seat and the host still write.
    assert post(client, p1, {"text": "mine"}).status_code == 201
    assert post(client, host, {"text": "host"}).status_code == 201
    assert seen(client, gid, p1)["messages"] == ["one", "two", "mine", "host"]


# -- delivery to the recipients' channels -----------------------------------------------
@pytest.mark.cluster
def test_a_recipient_gets_the_message_by_mail_and_the_sender_and_a_third_seat_do_not(
        nclient: Any, nkontor: Kontor, notify_settings: Settings, mailbox: Any) -> None:
    host, players = new_game(nclient, 3)
    gid = host.game
    for seat, p in enumerate(players):
        r = nclient.put(f"/games/{gid}/seats/{seat}/contact", headers=p.bearer(),
                        json={"email": f"s{seat}@example.org"})
        assert r.status_code == 200
    assert post(nclient, players[0], {"to": [1], "text": "Meet me at the harbour."}).status_code == 201
    work_all(notify_settings)

    mails = mailbox.wait(1)
    assert [m.rcpt_tos for m in mails] == [["s1@example.org"]]
    assert "Meet me at the harbour." in mails[0].text
    deliveries = {seat: nkontor.store.deliveries(gid, seat, 10) for seat in range(3)}
    assert [d["type"] for d in deliveries[1]] == ["message.received"] and deliveries[1][0]["status"] == "sent"
    assert deliveries[0] == [] and deliveries[2] == []
    notice = deliveries[1][0]["payload"][0]
    assert notice["message"]["from"] == 0 and notice["message"]["to"] == [1] and "visible_to" not in notice["message"]


@pytest.mark.cluster
def test_a_public_message_reaches_a_webhook(nclient: Any, notify_settings: Settings, hooks: Any) -> None:
    host, players = new_game(nclient, 3)
    gid = host.game
    r = nclient.put(f"/games/{gid}/seats/2/contact", headers=players[2].bearer(),
                    json={"webhook_url": hooks.url("/s2")})
    hooks.secrets["/s2"] = r.json["webhook_secret"]
    assert post(nclient, players[0], {"to": [1], "text": "not for seat 2"}).status_code == 201
    assert post(nclient, host, {"text": "Welcome, traders."}).status_code == 201
    work_all(notify_settings)

    got = hooks.wait("/s2", 1)
    assert len(got) == 1 and got[0].verified
    (payload,) = payloads(got)
    assert payload["type"] == "message.received"
    assert payload["data"]["seat"] == 2 and payload["data"]["message"]["from"] == "host"
    assert payload["data"]["message"]["text"] == "Welcome, traders."
