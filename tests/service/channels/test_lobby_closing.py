"""A lobby game nobody started is told a day before it closes (issue 23, item 1): the
sweeper's public `lobby_closing` event becomes a `lobby.closing` notice that goes at once,
whatever the mail mode, to every seat whose current holder set a contact: one mail in
words (when, that the game is then removed, the seats still open, the links), one signed
webhook; nothing to a seat without a contact, and nothing again on the next sweep."""

from __future__ import annotations

from typing import Any

import pytest

from service.channels.notify import at_once
from service.config import Settings
from service.core.kontor import Kontor
from service.jobs.sweep import sweep
from service.words import utc_time
from tests.playertext import problems
from tests.service.channels import Hooks, Mailbox, payloads, work_all
from tests.service.conftest import Player, create_game, join
from tests.service.jobs.test_lobby_expiry import set_age

# Also with the store on a Valkey Cluster and the queue on a Valkey of its own (issue 24).
pytestmark = pytest.mark.cluster


def test_a_closing_notice_goes_at_once() -> None:
    assert at_once({"type": "lobby.closing"})


def test_the_seats_contacts_are_told_at_once_that_the_lobby_closes(
        nkontor: Kontor, nclient: Any, notify_settings: Settings, mailbox: Mailbox, hooks: Hooks) -> None:
    host = Player.new()
    gid = create_game(nclient, host, 4, name="Sunday table")["id"]
    players = {seat: Player.new() for seat in range(3)}
    for seat, name in zip(players, ("Anna", "Bert", "Cora"), strict=True):
        join(nclient, gid, players[seat], name, seat)
    # Seat 0 mails in digest mode (the notice still goes at once), seat 1 has no contact,
    # seat 2 has a webhook; seat 3 is open.
    r = nclient.put(f"/games/{gid}/seats/0/contact", json={"email": "anna@example.org", "delivery": "digest"},
                    headers=players[0].bearer())
    assert r.status_code == 200, r.json
    r = nclient.put(f"/games/{gid}/seats/2/contact", json={"webhook_url": hooks.url("/s2")},
                    headers=players[2].bearer())
    assert r.status_code == 200, r.json
    hooks.secrets["/s2"] = r.json["webhook_secret"]
    work_all(notify_settings)
    mails, hooked = len(mailbox.messages), len(hooks.at("/s2"))

    set_age(nkontor, gid, nkontor.settings.lobby_ttl - 86400 + 60)
    assert sweep(nkontor)["lobby_told"] == 1
    work_all(notify_settings)
    expires = nclient.get(f"/games/{gid}").json["expires_at"]
    when = utc_time(expires)

    [mail] = mailbox.messages[mails:]
    assert mail.rcpt_tos == ["anna@example.org"]
    assert mail.message["Subject"] == f"Sunday table (Die Händler) \N{EM DASH} closes on {when} unless the host " \
                                      "starts it"
    body = mail.text.replace("\r\n", "\n")
    # the opening line says what is at stake; the section says when, and what the host can do
    assert "Sunday table (Die Händler) closes in less than a day unless the host starts it." in body
    assert f"it closes on {when} and is then removed, unless the host starts it before" in body
    assert body.count(when) == 1
    assert "Seats still open: Seat 3." in body
    assert f"http://kontor.test/play/{gid}/0" in body and f"http://kontor.test/play/{gid}\n" in body
    assert when in mail.html
    said = body.split("\n-- \n")[0]  # the letter, before the signature (which names the game's address)
    assert problems(said.replace(gid, "")) == []

    [hook] = hooks.at("/s2")[hooked:]
    assert hook.verified, hook.error
    [payload] = payloads([hook])
    assert payload["type"] == "lobby.closing"
    data = payload["data"]
    assert (data["seat"], data["closes_at"], data["open_seats"]) == (2, expires, [3])
    assert any(when in s for s in data["sentences"])

    # Told once: the next sweep finds it told and sends nothing; the mark is past the event.
    assert sweep(nkontor)["lobby_told"] == 0
    work_all(notify_settings)
    assert len(mailbox.messages) == mails + 1 and len(hooks.at("/s2")) == hooked + 1
    meta = nkontor.store.meta(gid)
    assert meta["notified_through"] == meta["event_seq"]
    assert [d["type"] for d in nkontor.store.deliveries(gid, 1, 50)] == []
