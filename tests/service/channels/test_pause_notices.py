"""The host's pause, resume and extension reach every seat's contact at once, in words
(issue 25): a mail whose subject and opening say what the host did, with the deadline as
it now stands, and a signed webhook of `game.paused`, `game.resumed`,
`deadline.extended` with the deadline and the sentences."""

from __future__ import annotations

import uuid
from typing import Any

from service.config import Settings
from service.core.kontor import Kontor
from tests.playertext import problems
from tests.service.channels import Hooks, Mailbox, payloads, work_all
from tests.service.conftest import Player, create_game, join, start


def test_pause_resume_and_extend_notices_in_words(nkontor: Kontor, nclient: Any, notify_settings: Settings,
                                                  mailbox: Mailbox, hooks: Hooks) -> None:
    host = Player.new()
    gid = create_game(nclient, host, 2, name="Sunday table")["id"]
    anna, bert = Player.new(), Player.new()
    join(nclient, gid, anna, "Anna", 0)
    join(nclient, gid, bert, "Bert", 1)
    # Anna mails in digest mode (these notices still go at once); Bert has a webhook.
    r = nclient.put(f"/games/{gid}/seats/0/contact", json={"email": "anna@example.org", "delivery": "digest"},
                    headers=anna.bearer())
    assert r.status_code == 200, r.json
    r = nclient.put(f"/games/{gid}/seats/1/contact", json={"webhook_url": hooks.url("/b")}, headers=bert.bearer())
    assert r.status_code == 200, r.json
    hooks.secrets["/b"] = r.json["webhook_secret"]
    start(nclient, host)
    work_all(notify_settings)
    mails, hooked = len(mailbox.messages), len(hooks.at("/b"))

    assert nclient.post(f"/games/{gid}/pause", headers=host.bearer()).status_code == 200
    work_all(notify_settings)
    r = nclient.post(f"/games/{gid}/extend", json={"seconds": 2 * 86400 + 3 * 3600},
                     headers={**host.bearer(), "Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 200, r.json
    work_all(notify_settings)
    r = nclient.post(f"/games/{gid}/resume", headers=host.bearer())
    assert r.status_code == 200, r.json
    deadline = r.json["phase"]["deadline"]
    work_all(notify_settings)

    paused, extended, resumed = mailbox.messages[mails:]
    assert paused.message["Subject"] == "Sunday table (Die Händler) \N{EM DASH} the host paused the game; the " \
                                        "clock is stopped"
    assert "the host extended the deadline" in extended.message["Subject"]
    assert "the host resumed the game" in resumed.message["Subject"]
    for mail in (paused, extended, resumed):
        body = mail.text.replace("\r\n", "\n")
        said = body.split("\n-- \n")[0]
        assert problems(said.replace(gid, "")) == [], said
    body = paused.text.replace("\r\n", "\n")
    assert "The host paused the game; the clock is stopped" in body
    assert "enter or change your order" in body
    assert "the clock is stopped: it moves on by the time paused" in body
    assert "The host extended the deadline by 2 days 3 hours" in extended.text.replace("\r\n", "\n")
    assert "The host resumed the game after" in resumed.text.replace("\r\n", "\n")

    got = payloads(hooks.at("/b")[hooked:])
    assert [p["type"] for p in got] == ["game.paused", "deadline.extended", "game.resumed"]
    assert [p["data"]["paused"] for p in got] == [True, True, False]
    assert got[-1]["data"]["deadline"] == deadline
    assert all(p["data"]["sentences"] for p in got)
    assert got[1]["data"]["events"][0]["seconds"] == 2 * 86400 + 3 * 3600
