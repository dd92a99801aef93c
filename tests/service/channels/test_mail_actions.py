"""Unprompted actions by mail (issue 21, Deliver 2 and 4), with the test title Stall
(tests/service/stall.py: a seat may hoard a good at any time, asked or not).

The mail of a seat that may act offers its actions as lines to reply with; a reply "hoard
wein" to it is the action, applied at once (`Kontor.act`), with a receipt in words; the
other seats are told in their next mail (`action.taken`). A reply that is neither an
order nor an action is refused with what was expected, and changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from email.message import EmailMessage
from typing import Any

import pytest

from service.channels.inbound.judge import process, store_inbound
from service.channels.notify import reply_address
from service.config import Settings
from service.core.kontor import Kontor
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
    gid = k.create_game("stall", 2, None, None, 3, host.key.public, mail_orders="reply_address")["id"]
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
    msg["In-Reply-To"] = msg["References"] = str(to.message["Message-ID"])  # as a mail client threads it
    msg.set_content(f"{said}\n")
    before = len(mailbox.to(address))
    process(k, store_inbound(k, msg.as_bytes(), [str(to.message["Reply-To"])], address))
    return mailbox.wait(before + 1, address=address)[-1]


def test_an_unprompted_action_is_a_line_in_a_reply(stall: Any, nkontor: Kontor, notify_settings: Settings,
                                                   mailbox: Mailbox) -> None:
    gid = stall_game(nkontor)
    work_all(notify_settings)
    phase = int(nkontor.current_phase(gid, "public")["id"])
    assert nkontor.current_phase(gid, "public")["requested"] == [0]
    # Bruno is not asked, but may hoard: his mail (the game's start) offers it, and his
    # reply address for the step takes it.
    (start,) = mailbox.to("bruno@players.example.org")
    body = text(start)
    assert "What you may do now\n-------------------\nYou may hoard a good at any time.\n- Hoard 1 Wein\n" in body
    assert start.message["Reply-To"] == reply_address(nkontor, gid, phase, 1)
    receipt = reply(nkontor, mailbox, 1, start, "hoard wein")
    assert receipt.message["X-Kontor-Status"] == "accepted", text(receipt)
    assert text(receipt).startswith("Your action was taken: Hoard 1 Wein for 2 coins.\n"
                                    "- Bruno hoarded 1 Wein.\n- Bruno has 3 coins left.\n")
    state = nkontor.store.state(gid)
    assert state["players"][1]["goods"]["wein"] == 1 and state["players"][1]["coins"] == 3
    # A line that is neither his order nor an action: refused with what was expected, nothing changed.
    before = footprint(nkontor, gid)
    refused = reply(nkontor, mailbox, 1, start, "buy the whole market")
    assert refused.message["X-Kontor-Status"] == "refused" and refused.message["X-Kontor-Code"] == "bad_order_words"
    assert "does not answer: Which good do you hoard?" in text(refused)
    assert footprint(nkontor, gid) == before
    # Ada is told in her next mail (the action is not urgent), in words only.
    work_all(notify_settings)
    told = [d for d in nkontor.store.deliveries(gid, 0, 50) if "action.taken" in d["types"]]
    held = [n for n in nkontor.store.held(gid, 0) if n["type"] == "action.taken"]
    assert not told and [n["sentences"] for n in held] == [["Bruno hoarded 1 Wein."]]
    # Ada answers her turn in two replies: the good, then (asked what is missing) the count.
    (turn,) = [m for m in mailbox.to("ada@players.example.org") if "Your choices" in text(m)]
    half = reply(nkontor, mailbox, 0, turn, "Wein")
    assert half.message["X-Kontor-Status"] == "incomplete"
    assert "Still missing: How many Wein?\n" in text(half), text(half)
    assert "Reply with a whole number from 1 to " in text(half)
    done = reply(nkontor, mailbox, 0, half, "2")
    assert done.message["X-Kontor-Status"] == "accepted", text(done)
    assert "The order as understood: Buy 2 Wein.\n" in text(done)
    assert nkontor.store.orders(gid, phase)[0]["order"] == {"buy": "wein", "count": 2}
