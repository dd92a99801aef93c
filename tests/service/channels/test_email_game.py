"""A whole 3-seat Die Händler game played by email only (issue 4, "done when").

Three players join over HTTP and give their mail addresses as contacts; from then on
every order is a reply to a mail Kontor sent: mails leave through a real SMTP server
(aiosmtpd, the `mailbox`), bots read them, and answer through the real inbound SMTP
listener (`service.channels.inbound.smtpd`). Seats 0 and 1 answer with signed order tokens (seat 0's
hard-wrapped by its "mail client", seat 1's soft-wrapped with format=flowed), seat 2
with the plain JSON order to its secret reply address. Each reply quotes the whole mail
it answers, prefilled block included, to show that quoted text is ignored.

At the end: the game is finished, every order in the history came from an accepted
mail, every seat got the end-of-game mail, and every mail to a seat showed exactly that
seat's own view of the game, in the title's words (the summary of that seat's view and
the sentences of the events it may see: never another seat's money or hand, never the
raw state).
"""

from __future__ import annotations

import json
import re
import smtplib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from email.message import EmailMessage
from typing import Any

import pytest

from engine.core import registry
from engine.core.events import visible_to
from engine.haendler.view import HIDDEN_PLAYER_FIELDS
from service.channels.inbound.judge import inbound_record
from service.channels.inbound.smtpd import InboundHandler
from service.channels.notify import parse_reply_address
from service.core.kontor import Kontor
from service.store.ratelimit import RateLimits
from tests.service.channels import Mailbox, Received, start_controller, work_all
from tests.service.conftest import Player, join, start, work

GAME = registry.get("haendler")
NAMES = ["P0", "P1", "P2"]
BLOCK = re.compile(r"^#orders (\S+) (\d+) (\d+)\n(.+)\n#end$", re.M)


@pytest.fixture
def listener(nkontor: Kontor) -> Iterator[int]:
    handler = InboundHandler(nkontor)
    # A whole game by mail in a minute: more mails per player than the default limit lets a
    # sender send in an hour (`limit_mail_key`), so this listener's limit is raised.
    handler.limits = RateLimits(replace(nkontor.settings, limit_mail_key="10000/hour"))
    controller = start_controller(handler)
    yield controller.port
    controller.stop()


def text_of(mail: Received) -> str:
    return mail.text.replace("\r\n", "\n")


@dataclass
class MailBot:
    """A player who reads its mail and answers every question by reply."""

    player: Player
    address: str
    style: str  # "wrapped" or "flowed" (signed tokens), "reply" (JSON to the reply address)
    read: int = 0
    sent: int = 0
    receipts: int = 0

    def new_mail(self, mailbox: Mailbox) -> list[Received]:
        got = mailbox.to(self.address)
        new, self.read = got[self.read:], len(got)
        return new

    def answer(self, k: Kontor, mail: Received, text: str, port: int) -> None:
        """Reply to a mail that asks something (`text`: its text part) with the step's
        default order (read from the API, as a program would: the mail offers the
        decision in words only), in the exact `#orders` block syntax programs use."""
        found = parse_reply_address(k, str(mail.message["Reply-To"]))
        assert found, text
        gid, phase, seat = found
        assert (gid, seat) == (self.player.game, self.player.seat)
        assert "How to answer by reply" in text and "{" not in text
        order = default_order(k, gid, seat)
        if self.style == "reply":
            content = json.dumps(order)
        else:
            token = self.player.order_token(phase, order)
            content = token if self.style == "flowed" else "\n".join(token[i:i + 40] for i in range(0, len(token), 40))
        quoted = "\n".join(f"> {line}" if line else ">" for line in text.splitlines())
        body = (f"My order for phase {phase}.\n\n#orders {gid} {seat} {phase}\n{content}\n#end\n\n"
                f"On {mail.message['Date']}, Kontor wrote:\n{quoted}\n\n-- \nSeat {seat}\n")
        reply = EmailMessage()
        reply["From"] = self.address
        reply["To"] = mail.message["Reply-To"]
        reply["Subject"] = f"Re: {mail.message['Subject']}"
        reply["In-Reply-To"] = mail.message["Message-ID"]
        if self.style == "flowed":
            # A mail client that soft-wraps long lines (RFC 3676, DelSp=yes).
            body = body.replace(content, " \n".join(content[i:i + 30] for i in range(0, len(content), 30)))
            reply.set_content(body, params={"format": "flowed", "delsp": "yes"})
        else:
            reply.set_content(body)
        with smtplib.SMTP("127.0.0.1", port) as smtp:
            smtp.send_message(reply)
        self.sent += 1


def test_a_whole_game_is_played_by_email_only(nkontor: Kontor, nclient: Any, notify_settings: Any,
                                              mailbox: Mailbox, listener: int) -> None:
    host = Player.new()
    gid = nkontor.create_game("haendler", 3, None, None, 7, host.key.public, name="By mail",
                              mail_orders="reply_address")["id"]
    host.game = gid
    bots = []
    for seat, style in enumerate(("wrapped", "flowed", "reply")):
        p = Player.new()
        join(nclient, gid, p, f"P{seat}", seat)
        address = f"p{seat}@players.example.org"  # .test is refused by the address validator
        r = nclient.put(f"/games/{gid}/seats/{seat}/contact", json={"email": address}, headers=p.bearer())
        assert r.status_code == 200, r.json
        bots.append(MailBot(p, address, style))
    start(nclient, host)

    for _ in range(400):
        # One burst runs the replies' inbound jobs, the resolution and the mails it makes.
        work(notify_settings)
        if nkontor.game(gid)["status"] == "finished":
            break
        answered = 0
        for bot in bots:
            for mail in bot.new_mail(mailbox):
                text = text_of(mail)
                if mail.message["X-Kontor-Status"]:
                    assert mail.message["X-Kontor-Status"] == "accepted", text
                    if bot.style == "reply":  # JSON to the reply address: the receipt says it in words
                        said = text.split("The order as understood: ")[1].split("\n")[0]
                        assert said and "{" not in text and ":" not in said, text  # (its players are "P0"...)
                    bot.receipts += 1
                elif parse_reply_address(nkontor, str(mail.message["Reply-To"])):
                    bot.answer(nkontor, mail, text, listener)
                    answered += 1
        if not answered:  # a mail may wait for an SMTP retry: run the jobs due soon too
            work_all(notify_settings)
            assert bot_mail_waiting(bots, mailbox), "the game waits, but no mail asks anything"
    else:
        raise AssertionError("the game did not finish")

    for bot in bots:  # the last receipts and the end-of-game mails
        for mail in bot.new_mail(mailbox):
            if mail.message["X-Kontor-Status"]:
                assert mail.message["X-Kontor-Status"] == "accepted", text_of(mail)
                bot.receipts += 1
        assert bot.receipts == bot.sent > 0
    every_order_came_by_mail(nkontor, gid, sum(bot.sent for bot in bots))
    every_mail_shows_only_the_seats_own_view(nkontor, gid, mailbox, bots)


def default_order(k: Kontor, gid: str, seat: int) -> dict[str, Any]:
    _, _, state = k.store.snapshot(gid)
    return dict(GAME.default_order(state, seat))


def bot_mail_waiting(bots: list[MailBot], mailbox: Mailbox) -> bool:
    return any(len(mailbox.to(bot.address)) > bot.read for bot in bots)


def every_order_came_by_mail(k: Kontor, gid: str, mails: int) -> None:
    """Each (phase, seat) of the history is an accepted inbound mail; no default was used.
    Seats 0 and 1 always ordered by their signed token, never by the unsigned block
    quoted below it (which their reply address would have taken: quotes are ignored)."""
    history = k.store.history(gid)
    played = {(step["phase"], int(seat)) for step in history for seat in step["orders"]}
    assert all(not step.get("defaults") for step in history)
    ids = k.store.inbound_ids()
    records = [inbound_record(k, str(i)) for i in ids]
    accepted = {(int(r["phase"]), int(r["seat"])) for r in records if r["status"] == "accepted" and r["game"] == gid}
    assert len(records) == mails and all(r["status"] == "accepted" for r in records)
    assert accepted == played
    assert all(r["by"] == ("reply_address" if r["seat"] == "2" else "token") for r in records)


def states_after_each_step(k: Kontor, gid: str) -> dict[int, Any]:
    """The engine state after each committed step (0: the start), replayed from the seed."""
    meta = k.store.meta(gid)
    state = GAME.setup(3, json.loads(meta["options"]), json.loads(meta["seed"]))
    states = {0: state}
    for step in k.store.history(gid):
        state, _ = GAME.resolve_validated(state, {int(s): o for s, o in step["orders"].items()})
        states[step["phase"]] = state
    return states


def closing_of(notices: list[dict[str, Any]]) -> int:
    """The step whose commit a mail's notices tell about."""
    types = {n["type"]: n["phase"] for n in notices}
    return types["step.resolved"] if "step.resolved" in types else types["step.opened"] - 1


def every_mail_shows_only_the_seats_own_view(k: Kontor, gid: str, mailbox: Mailbox, bots: list[MailBot]) -> None:
    states = states_after_each_step(k, gid)
    for seat, bot in enumerate(bots):
        mails = [m for m in mailbox.to(bot.address) if m.message["X-Kontor-Delivery"]]
        types = set()
        for mail in mails:
            notices = k.store.delivery(gid, mail.message["X-Kontor-Delivery"])["payload"]
            types.update(n["type"] for n in notices)
            state = states[closing_of(notices)]
            view = GAME.view(state, seat)
            if not state["over"]:
                for other, player in enumerate(view["players"]):
                    assert other == seat or not set(HIDDEN_PLAYER_FIELDS) & set(player)
            summary = GAME.summary(view, NAMES)
            assert [n["summary"] for n in notices if "summary" in n][-1] == summary
            assert summary.strip() in text_of(mail), mail.message["Subject"]
            prose = BLOCK.sub("", "\n".join(line for line in text_of(mail).splitlines() if "kontor order" not in line))
            assert '"players"' not in prose and '{"st' not in prose  # JSON only in the order to reply with
            assert all(visible_to(e, seat) for n in notices for e in n.get("events") or [])
            for n in notices:
                told = [e for e in n.get("events") or [] if e["type"] not in ("step_resolved", "step_opened")]
                said = [GAME.describe_event({k: v for k, v in e.items() if k not in ("id", "at")}, NAMES)
                        for e in told if e["type"] != "game_started"]
                assert all(sentence in n["sentences"] for sentence in said)
                assert all(f"- {sentence}" in text_of(mail) for sentence in said if n["type"] == "step.resolved")
        assert "game.finished" in types
