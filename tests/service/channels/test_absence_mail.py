"""Absences by mail (issue 25): a seat replies `away 20 December to 3 January` (or `away
2026-12-20 to 2027-01-03`, `away until 3 January`) to its reply address, and `back`;
the receipt says in words what was recorded; a line it cannot read is refused and
changes nothing. Then, once the absence has ended, the summary of what was played for
the seat reaches its mail, like any event."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from typing import Any

import pytest

from service.channels.inbound.judge import process, store_inbound
from service.config import Settings
from service.core.kontor import Kontor
from tests.playertext import problems
from tests.service.channels import Mailbox, Received, work_all
from tests.service.conftest import Player, footprint
from tests.service.stall import registered

NAMES = ["Ada", "Bruno"]


@pytest.fixture
def stall() -> Iterator[None]:
    with registered():
        yield


def text(mail: Received) -> str:
    return mail.text.replace("\r\n", "\n")


def stall_game(k: Kontor) -> str:
    host = Player.new()
    gid = k.create_game("stall", 2, None, {"sequential_seconds": 600, "absence": "bot"}, 3, host.key.public,
                        mail_orders="reply_address")["id"]
    for seat, name in enumerate(NAMES):
        k.join(gid, name, Player.new().key.public, seat)
        k.store.set_contact(gid, seat, {"email": f"{name.lower()}@players.example.org", "email_status": "ok",
                                        "timezone": "UTC", "delivery": "every"})
    k.start(gid)
    return gid


def reply(k: Kontor, mailbox: Mailbox, seat: int, to: Received, said: str) -> Received:
    address = f"{NAMES[seat].lower()}@players.example.org"
    msg = EmailMessage()
    msg["From"] = address
    msg["To"] = str(to.message["Reply-To"])
    msg["Subject"] = f"Re: {to.message['Subject']}"
    msg["Message-ID"] = f"<{said.replace(' ', '.')}.{len(mailbox.messages)}@players.example.org>"
    msg.set_content(f"{said}\n\nBruno\n")
    before = len(mailbox.to(address))
    process(k, store_inbound(k, msg.as_bytes(), [str(to.message["Reply-To"])], address))
    return mailbox.wait(before + 1, address=address)[-1]


def test_absence_mail_away_to_and_back(stall: Any, nkontor: Kontor, notify_settings: Settings,
                                       mailbox: Mailbox) -> None:
    gid = stall_game(nkontor)
    work_all(notify_settings)
    (first,) = mailbox.to("bruno@players.example.org")
    today = datetime.fromtimestamp(nkontor.now(), UTC).date()
    start, end = today + timedelta(days=10), today + timedelta(days=20)
    said = f"away {start.day} {start:%B} to {end.day} {end:%B}"
    receipt = reply(nkontor, mailbox, 1, first, said)
    assert receipt.message["X-Kontor-Status"] == "accepted", text(receipt)
    body = text(receipt)
    assert body.startswith(f"Your absence is recorded. Away {start.day} {start:%B} to {end.day} {end:%B}."), body
    assert not problems(body)
    listed = nkontor.get_absences(gid, 1)["absences"]
    assert listed == [{"from": f"{start.isoformat()}T00:00:00.000+00:00",
                       "until": f"{end.isoformat()}T00:00:00.000+00:00"}]
    # A second, in ISO dates, is added to the first.
    later, back_on = today + timedelta(days=40), today + timedelta(days=45)
    receipt = reply(nkontor, mailbox, 1, first, f"away {later.isoformat()} to {back_on.isoformat()}")
    assert receipt.message["X-Kontor-Status"] == "accepted", text(receipt)
    assert len(nkontor.get_absences(gid, 1)["absences"]) == 2
    # A line it cannot read: refused, nothing changed.
    before = footprint(nkontor, gid)
    refused = reply(nkontor, mailbox, 1, first, "away sometime soon")
    assert refused.message["X-Kontor-Status"] == "refused" and refused.message["X-Kontor-Code"] == "bad_absence"
    assert "away 20 December to 3 January" in text(refused)
    assert footprint(nkontor, gid) == before
    # Back: none planned.
    receipt = reply(nkontor, mailbox, 1, first, "back")
    assert receipt.message["X-Kontor-Status"] == "accepted", text(receipt)
    assert text(receipt).startswith("Welcome back: you have no absence planned now.")
    assert nkontor.get_absences(gid, 1)["absences"] == []


def test_absence_summary_reaches_the_seat_by_mail(stall: Any, nkontor: Kontor, notify_settings: Settings,
                                                  mailbox: Mailbox) -> None:
    gid = stall_game(nkontor)
    work_all(notify_settings)
    now = nkontor.now()
    stamp = datetime.fromtimestamp(now + 2, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    nkontor.set_absences(gid, 0, [{"from": datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                                   "until": stamp}])
    work_all(notify_settings)  # Ada is asked and away: the passer bot plays her step
    assert int(nkontor.store.phase(gid)["id"]) == 2
    time.sleep(3.2)
    assert nkontor.absence_end(gid, 0) == 1
    work_all(notify_settings)
    summaries = [m for m in mailbox.to("ada@players.example.org") if "While you were away" in text(m)]
    assert len(summaries) == 1, [text(m) for m in mailbox.to("ada@players.example.org")]
    assert "what was played for you while you were away" in str(summaries[0].message["Subject"])
    assert "in step 1 the passer bot played for you" in text(summaries[0])
    assert not [m for m in mailbox.to("bruno@players.example.org") if "While you were away" in text(m)]


def test_absence_bot_mode_does_not_ask_the_away_seat_by_mail(stall: Any, nkontor: Kontor, notify_settings: Settings,
                                                            mailbox: Mailbox) -> None:
    """While a bot plays the away seat (policy `bot`), a step that asks the seat mails it
    no "your turn" (before, one came for every decision the bot was playing); the seat's
    notice says the bot plays it, and the summary tells it afterwards."""
    gid = stall_game(nkontor)
    work_all(notify_settings)
    now = int(nkontor.now())
    nkontor.set_absences(gid, 1, [{"from": datetime.fromtimestamp(now, UTC).isoformat(),
                                   "until": datetime.fromtimestamp(now + 3600, UTC).isoformat()}])
    ph = nkontor.store.phase(gid)
    assert ph["expected"] == "[0]"
    before = len(mailbox.to("bruno@players.example.org"))
    nkontor.submit(gid, int(ph["id"]), 0, {"pass": True}, via="test")
    work_all(notify_settings)
    assert int(nkontor.store.phase(gid)["id"]) >= int(ph["id"]) + 2  # the bot played seat 1's step
    time.sleep(0.5)
    mails = mailbox.to("bruno@players.example.org")[before:]
    body = "\n".join(text(m) for m in mails)
    assert "your turn" not in " ".join(str(m.message["Subject"]) for m in mails).lower()
    assert not problems(body)
