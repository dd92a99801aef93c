"""Rematch (issue 25, item 5) on the channels: the finished game's seats are told at once,
in words, with the rematch's link and how to play it by mail; their contact settings carry
over to the rematch (the same address, the same webhook with the same signing secret), so
the rematch's own notices reach them."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from service.channels.notify import at_once
from service.config import Settings
from service.core.kontor import Kontor
from tests.playertext import problems
from tests.service.channels import Hooks, Mailbox, payloads, work_all
from tests.service.conftest import Player, default_step
from tests.service.stall import registered


@pytest.fixture(autouse=True)
def stall() -> Iterator[Any]:
    with registered() as game:
        yield game


def test_rematch_notice_goes_at_once() -> None:
    assert at_once({"type": "rematch.started"})


def test_rematch_seats_are_told_in_words_and_their_contacts_carry_over(
        nkontor: Kontor, nclient: Any, notify_settings: Settings, mailbox: Mailbox, hooks: Hooks) -> None:
    host = Player.new()
    r = nclient.post("/games", json={"title": "stall", "seats": 3, "host_key": host.key.public,
                                     "name": "Friday table"}, headers={"Idempotency-Key": uuid.uuid4().hex})
    gid = host.game = r.json["id"]
    players = {}
    for seat, name in ((0, "Anna"), (1, "Bert")):
        p = Player.new()
        r = nclient.post(f"/games/{gid}/seats", json={"name": name, "public_key": p.key.public, "seat": seat},
                         headers={"Idempotency-Key": uuid.uuid4().hex})
        p.game, p.seat = gid, seat
        players[seat] = p
    nclient.patch(f"/games/{gid}/seats/2", json={"bot": "passer"}, headers=host.bearer())
    # Anna mails in digest mode (the rematch's notice still goes at once); Bert has a webhook.
    r = nclient.put(f"/games/{gid}/seats/0/contact", json={"email": "anna@example.org", "delivery": "digest",
                                                           "timezone": "Europe/Berlin"},
                    headers=players[0].bearer())
    assert r.status_code == 200, r.json
    r = nclient.put(f"/games/{gid}/seats/1/contact", json={"webhook_url": hooks.url("/bert")},
                    headers=players[1].bearer())
    hooks.secrets["/bert"] = r.json["webhook_secret"]
    nclient.patch(f"/games/{gid}", json={"status": "running"}, headers=host.bearer())
    for _ in range(20):
        if nkontor.store.meta(gid)["status"] == "finished":
            break
        default_step(nkontor, gid)
        work_all(notify_settings)
    assert nkontor.store.meta(gid)["status"] == "finished"
    work_all(notify_settings)
    mails, hooked = len(mailbox.messages), len(hooks.at("/bert"))

    r = nclient.post(f"/games/{gid}/rematch", json={}, headers={**host.bearer(),
                                                                "Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 201, r.json
    new = r.json["id"]
    work_all(notify_settings)

    # the contacts carried over, bound to the same holders
    anna = nclient.get(f"/games/{new}/seats/0/contact", headers=Player(players[0].key, new).bearer()).json
    assert (anna["email"], anna["delivery"], anna["timezone"]) == ("anna@example.org", "digest", "Europe/Berlin")
    bert = nclient.get(f"/games/{new}/seats/1/contact", headers=Player(players[1].key, new).bearer()).json
    assert bert["webhook_url"] == hooks.url("/bert") and bert["webhook_secret_set"]

    # Anna's mail about the rematch, in words, with the link and how to play by mail
    told = [m for m in mailbox.messages[mails:] if "rematch started" in str(m.message["Subject"])]
    [mail] = told
    assert mail.rcpt_tos == ["anna@example.org"]
    assert mail.message["Subject"] == "Friday table (Stall) \N{EM DASH} rematch started: Friday table (rematch)"
    body = mail.text.replace("\r\n", "\n")
    assert "The host of Friday table (Stall) started a rematch with the same players: “Friday table (rematch)”." \
        in body
    assert f"http://kontor.test/play/{new}/0" in body and f"http://kontor.test/play/{new}" in body
    assert "Your mail settings came along: the rematch's mails come to this address" in body
    assert "Its step 1 asks you now." in body and f"orders+{new}.1.0." in body
    said = body.split("\n-- \n")[0]
    assert problems(said.replace(gid, "").replace(new, "")) == []
    # and the rematch's own first mail asks her, from the new game, saying it is a rematch
    [first] = [m for m in mailbox.messages[mails:] if "your turn" in str(m.message["Subject"])]
    assert first.rcpt_tos == ["anna@example.org"] and str(first.message["Subject"]).startswith(
        "Friday table (rematch) (Stall)")
    assert "It is a rematch of “Friday table”, with the same players and a new shuffle." in first.text

    # Bert's webhook: the rematch notice from the finished game, then the new game's, same secret
    got = payloads([h for h in hooks.at("/bert")[hooked:]])
    assert all(h.verified for h in hooks.at("/bert")[hooked:])
    types = [(p["type"], p["data"]["game"]) for p in got]
    assert ("rematch.started", gid) in types and ("step.opened", new) in types
    [notice] = [p["data"] for p in got if p["type"] == "rematch.started"]
    assert notice["rematch"] == {"game": new, "name": "Friday table (rematch)",
                                 "url": f"http://kontor.test/play/{new}", "seat": 1}
    assert any("rematch" in s for s in notice["sentences"])

    # a second request tells nobody again
    mails, hooked = len(mailbox.messages), len(hooks.at("/bert"))
    r = nclient.post(f"/games/{gid}/rematch", json={}, headers={**host.bearer(), "Idempotency-Key": uuid.uuid4().hex})
    assert (r.status_code, r.json["id"]) == (200, new)
    work_all(notify_settings)
    assert not [m for m in mailbox.messages[mails:] if "rematch" in str(m.message["Subject"])]
    assert not [p for p in payloads(hooks.at("/bert")[hooked:]) if p["type"] == "rematch.started"]
