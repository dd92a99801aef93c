"""Orders by email: the parser (pure), and whole mails through the real SMTP listener
(aiosmtpd) and the HTTP inbound-parse endpoint, judged by a real worker, answered with
a receipt that arrives at a real SMTP server. Refused mail changes nothing."""

from __future__ import annotations

import base64
import json
import os
import signal
import smtplib
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from email.message import EmailMessage
from email.utils import make_msgid
from typing import Any

import pytest

from service import create_app, words
from service.channels.contacts import set_contact
from service.channels.inbound.judge import inbound_record, process, refused_text, store_inbound
from service.channels.inbound.parse import parse, unflow
from service.channels.inbound.smtpd import MAX_SIZE, InboundHandler
from service.channels.mail.unsubscribe import unsubscribe_token
from service.channels.notify import reply_address
from service.core.kontor import Kontor, receipt_of
from tests.service.channels import Mailbox, Received, free_port, start_controller, work_all
from tests.service.conftest import Player, footprint, play_to, problem, wait_until, work

SENDER = "ada@players.test"
TOKEN = "eyJhbGciOiJFZDI1NTE5In0.eyJnYW1lIjoiYWJjIn0.c2lnbmF0dXJl"


def raw_mail(body: str, subtype: str = "plain", **headers: str) -> bytes:
    msg = EmailMessage()
    msg["From"] = headers.pop("From", SENDER)
    msg["To"] = headers.pop("To", "orders@kontor.test")
    msg["Subject"] = headers.pop("Subject", "my orders")
    msg["Message-ID"] = make_msgid(domain="players.test")
    for name, value in headers.items():
        msg[name.replace("_", "-")] = value
    msg.set_content(body, subtype=subtype)
    return msg.as_bytes()


# -- the parser ------------------------------------------------------------------------------
def test_the_last_complete_block_wins_and_text_around_it_is_ignored() -> None:
    mail = parse(raw_mail("Hi!\n#orders\nbid=100\n#end\nno, better:\n  #ORDERS\n{\"bid\": 200}\n  #end\nthanks\n"))
    assert mail.errors == [] and mail.block is not None
    assert mail.block.order == {"bid": 200} and mail.block.head is None
    assert (mail.sender, mail.recipients, mail.subject) == (SENDER, ["orders@kontor.test"], "my orders")


def test_quoted_blocks_are_ignored_even_when_they_come_last() -> None:
    body = "#orders\nbid=100\n#end\n\nOn Monday Kontor wrote:\n> #orders g 1 2\n> {\"bid\": 999}\n> #end\n"
    assert parse(raw_mail(body)).block.order == {"bid": 100}  # type: ignore[union-attr]
    only_quoted = parse(raw_mail("> #orders\n> bid=1\n> #end\n"))
    assert only_quoted.block is None and only_quoted.errors == []


def test_everything_after_the_signature_line_is_ignored() -> None:
    mail = parse(raw_mail("#orders\nbid=100\n#end\n-- \nAda\n#orders\nbid=500\n#end\n"))
    assert mail.block.order == {"bid": 100}  # type: ignore[union-attr]
    # "--" without the space is not a signature separator.
    assert parse(raw_mail("--\n#orders\nbid=7\n#end\n")).block.order == {"bid": 7}  # type: ignore[union-attr]


def test_an_outlook_style_original_message_is_quoted_text() -> None:
    body = "#orders\nbid=100\n#end\n\n-----Original Message-----\nFrom: Kontor\n#orders\nbid=0\n#end\n"
    assert parse(raw_mail(body)).block.order == {"bid": 100}  # type: ignore[union-attr]


def test_the_subject_is_ignored() -> None:
    mail = parse(raw_mail("no block here", Subject="#orders bid=100 #end"))
    assert mail.block is None and mail.errors == []


def flowed(body: str, delsp: bool) -> bytes:
    head = (f"From: {SENDER}\r\nTo: orders@kontor.test\r\nSubject: s\r\nMIME-Version: 1.0\r\n"
            f"Content-Type: text/plain; charset=utf-8; format=flowed{'; delsp=yes' if delsp else ''}\r\n\r\n")
    return (head + body.replace("\n", "\r\n")).encode()


def test_format_flowed_lines_are_joined() -> None:
    # DelSp=yes: the soft-break space is not part of the text (a token broken mid-word).
    half = len(TOKEN) // 2
    mail = parse(flowed(f"#orders\n{TOKEN[:half]} \n{TOKEN[half:]}\n#end\n", delsp=True))
    assert mail.block.token == TOKEN  # type: ignore[union-attr]
    # Without DelSp the space stays: a KEY=VALUE line broken at a space comes back whole.
    mail = parse(flowed("#orders\nnote=see you \nin Paris\nbid=3\n#end\n", delsp=False))
    assert mail.block.order == {"note": "see you in Paris", "bid": 3}  # type: ignore[union-attr]
    # Space-stuffed lines lose the stuffing; a quoted paragraph stays quoted.
    assert unflow("> #orders \n> x\n  #end", delsp=False) == "> #orders x\n #end"


def test_a_token_wrapped_by_a_mail_client_is_read_whole() -> None:
    wrapped = "\n".join(TOKEN[i:i + 20] for i in range(0, len(TOKEN), 20))
    mail = parse(raw_mail(f"#orders abc 1 2\n  {wrapped}  \n#end\n"))
    assert mail.block.token == TOKEN and mail.block.head == ("abc", 1, 2)  # type: ignore[union-attr]


def test_an_html_only_mail_is_read_without_its_tags_and_blockquotes() -> None:
    html = ("<html><head><style>p {color: red}</style></head><body><div>Here:</div><div>#orders</div>"
            "<div>bid=300<br>good=wein &amp; salz</div><div>#end</div><blockquote><div>#orders</div>"
            "<div>bid=1</div><div>#end</div></blockquote></body></html>")
    mail = parse(raw_mail(html, subtype="html"))
    assert mail.block.order == {"bid": 300, "good": "wein & salz"}  # type: ignore[union-attr]


def test_key_value_lines_take_json_values_else_text() -> None:
    mail = parse(raw_mail('#orders\nbid = 300\ngoods=["wein","salz"]\nnote=hello world\nflag=true\n#end\n'))
    assert mail.block.order == {"bid": 300, "goods": ["wein", "salz"], "note": "hello world",  # type: ignore[union-attr]
                                "flag": True}


@pytest.mark.parametrize(("body", "code", "detail"), [
    ('#orders\n{"bid" 300}\n#end\n', "malformed_order",
     "the order is not valid JSON: Expecting ':' delimiter: line 1 column 8 (char 7)"),
    ("#orders\n[1, 2]\n#end\n", "bad_order_block", "the block holds a JSON list; an order is a JSON object, "
                                                   "KEY=VALUE lines or the order in plain words"),
    ('#orders\n{"bid": [1}\n#end\n', "malformed_order",
     "the order is not valid JSON: Expecting ',' delimiter: line 1 column 11 (char 10)"),
    ("#orders\n\n#end\n", "bad_order_block", "the block between '#orders' and '#end' is empty"),
    ("#orders\nbid=1\n", "bad_order_block", "the '#orders' line has no '#end' line after it"),
    ("#orders abc seat1\nbid=1\n#end\n", "bad_order_block",
     "the '#orders' line is '#orders' alone or '#orders <game> <seat> <phase>'"),
    ("#orders\nbid=1\nmore words\n#end\n", "bad_order_block",
     "'more words' is not KEY=VALUE; the block holds an order token, a JSON object, KEY=VALUE lines or the "
     "order in plain words"),
])
def test_a_block_that_cannot_be_read_is_an_exact_error(body: str, code: str, detail: str) -> None:
    mail = parse(raw_mail(body))
    assert mail.block is None and mail.errors == [(code, detail)]


def test_a_mail_without_a_block_has_none_and_no_error() -> None:
    mail = parse(raw_mail("Dear Kontor, please buy wine for me."))
    assert mail.block is None and mail.errors == []


@pytest.mark.parametrize(("headers", "auto"), [
    ({"Auto_Submitted": "auto-replied"}, "the mail is automatic (Auto-Submitted: auto-replied)"),
    ({"Auto_Submitted": "auto-generated; type=vacation"}, "the mail is automatic (Auto-Submitted: auto-generated)"),
    ({"Precedence": "bulk"}, "the mail is automatic (Precedence: bulk)"),
    ({"Auto_Submitted": "no"}, None),
    ({}, None),
])
def test_automatic_mail_is_recognised(headers: dict[str, str], auto: str | None) -> None:
    assert parse(raw_mail("#orders\nbid=1\n#end\n", **headers)).auto == auto


# -- through the SMTP listener ---------------------------------------------------------------
@pytest.fixture
def listener(nkontor: Kontor) -> Iterator[int]:
    """The inbound SMTP listener on loopback, on the notification settings; its port."""
    controller = start_controller(InboundHandler(nkontor), data_size_limit=MAX_SIZE)
    yield controller.port
    controller.stop()


def new_game(k: Kontor, mail_orders: str = "signed", sealed: bool = False,
             contact: str | None = SENDER) -> tuple[str, dict[int, Player]]:
    """A started 3-seat game (seed 7: step 1 asks seat 1 to buy); with `sealed`, played
    on to the first sealed step (a cart auction asking every seat), where an order stays
    in the step's orders until the others answer. Every seat registers `contact` as its
    address (receipts go only there)."""
    host = Player.new()
    gid = k.create_game("haendler", 3, None, None, 7, host.key.public, mail_orders=mail_orders)["id"]
    players = {}
    for seat in range(3):
        p = Player.new()
        k.join(gid, f"P{seat}", p.key.public, seat)
        if contact:
            k.store.set_contact(gid, seat, {"email": contact, "email_status": "ok", "delivery": "asked"})
        p.game, p.seat = gid, seat
        players[seat] = p
    k.start(gid)
    if sealed:
        play_to(k, lambda: work(k.settings), gid, "cart_bid")
    if contact:
        work_all(k.settings)  # the seats' notices are sent before the test looks
    return gid, players


def asked(k: Kontor, gid: str) -> tuple[int, int, dict[str, Any]]:
    """The open step's phase, the seat it asks and that seat's default order."""
    ph = k.current_phase(gid, "public")
    seat = ph["requested"][0]
    return ph["id"], seat, k.current_phase(gid, seat)["you"]["default_order"]


def send(port: int, body: str, to: str = "orders@kontor.test", sender: str = SENDER, mail_from: str | None = None,
         **headers: str) -> EmailMessage:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, to, headers.pop("Subject", "my orders")
    msg["Message-ID"] = make_msgid(domain="players.test")
    for name, value in headers.items():
        msg[name.replace("_", "-")] = value
    msg.set_content(body)
    with smtplib.SMTP("127.0.0.1", port) as smtp:
        smtp.send_message(msg, from_addr=sender if mail_from is None else mail_from)
    return msg


def text(got: Received) -> str:
    return got.text.replace("\r\n", "\n")


def receipts(mailbox: Mailbox, address: str = SENDER) -> list[Received]:
    return [m for m in mailbox.to(address) if m.message["X-Kontor-Status"]]


def only_receipt(mailbox: Mailbox, sent: EmailMessage, address: str = SENDER) -> Received:
    got = [m for m in receipts(mailbox, address) if m.message["In-Reply-To"] == sent["Message-ID"]]
    assert len(got) == 1, [m.message["Subject"] for m in receipts(mailbox, address)]
    return got[0]


def block(content: str, head: str = "") -> str:
    return f"Here is my order.\n\n#orders{' ' + head if head else ''}\n{content}\n#end\n\n-- \nAda\n"


@pytest.mark.cluster  # the mail kept, then indexed in its bucket (issue 24)
def test_a_signed_order_mailed_to_the_orders_address_is_submitted(
        nkontor: Kontor, notify_settings: Any, mailbox: Mailbox, listener: int) -> None:
    gid, players = new_game(nkontor, sealed=True)
    phase, seat, order = asked(nkontor, gid)
    token = players[seat].order_token(phase, order)
    sent = send(listener, block(token, f"{gid} {seat} {phase}"), Subject="phase 1")
    work_all(notify_settings)

    stored = nkontor.store.orders(gid, phase)[seat]
    assert stored["via"] == "email" and stored["order"] == order and stored["token"] == token
    got = only_receipt(mailbox, sent)
    m = got.message
    assert m["X-Kontor-Status"] == "accepted" and m["Auto-Submitted"] == "auto-replied"
    assert m["Subject"] == "Re: phase 1 [order accepted]" and m["References"] == sent["Message-ID"]
    assert m["Reply-To"] == "orders@kontor.test"
    assert f"receipt:  {receipt_of(stored)}" in text(got) and f"step:     {phase}" in text(got)
    assert "replaced: no" in text(got)
    assert json.loads(text(got).split("The order as understood: ")[1].split("\n", 1)[1]) == order
    rec = inbound_record(nkontor, rec_id(nkontor))
    assert (rec["status"], rec["game"], rec["seat"], rec["receipt"]) == ("accepted", gid, str(seat),
                                                                          receipt_of(stored))
    assert rec["receipt_status"] == "sent" and rec["rcpt_tos"] == ["orders@kontor.test"] and rec["by"] == "token"


def rec_id(k: Kontor, index: int = -1) -> str:
    """The id of a kept inbound mail, in order of arrival."""
    return k.store.inbound_ids()[index]


def test_an_unsigned_order_to_the_reply_address_is_taken_where_the_game_allows_it(
        nkontor: Kontor, notify_settings: Any, mailbox: Mailbox, listener: int) -> None:
    gid, _ = new_game(nkontor, "reply_address", sealed=True)
    phase, seat, order = asked(nkontor, gid)
    address = reply_address(nkontor, gid, phase, seat)
    send(listener, block("bid=0"), to=address)
    work_all(notify_settings)
    sent = send(listener, block(json.dumps(order), f"{gid} {seat} {phase}"), to=address)
    work_all(notify_settings)

    stored = nkontor.store.orders(gid, phase)[seat]
    assert (stored["via"], stored["order"], stored["token"]) == ("email", order, None)
    got = only_receipt(mailbox, sent)
    assert got.message["X-Kontor-Status"] == "accepted" and got.message["Reply-To"] == address
    assert "replaced: yes, it replaces your earlier order" in text(got)
    assert inbound_record(nkontor, rec_id(nkontor))["by"] == "reply_address"


def reply(text: str, quoted: str = "Your turn in Die Händler.") -> str:
    """A reply as mail clients write it: the answer above an attribution line and the
    quoted mail, then a signature."""
    quote = "\n".join(f"> {line}" for line in [*quoted.splitlines(), "#orders x 1 2", '{"bid": 4000}', "#end"])
    return f"{text}\n\nOn Mon, 1 Jun 2026 at 10:00, Kontor <kontor@kontor.test> wrote:\n{quote}\n\n-- \nAda\n"


@pytest.mark.parametrize(("said", "expected"), [
    ("bid 300", {"bid": 300}), ("I bid 300, please", {"bid": 300}), ("300", {"bid": 300}),
    ("Hello, bid 300", {"bid": 300}),
    ("default", None), ("pass", {"bid": 0}), ("bid=200", {"bid": 200}), ('{"bid": 100}', {"bid": 100})])
def test_a_plain_reply_to_the_reply_address_is_the_order(
        nkontor: Kontor, notify_settings: Any, mailbox: Mailbox, listener: int, said: str,
        expected: dict[str, Any] | None) -> None:
    gid, _ = new_game(nkontor, "reply_address", sealed=True)
    phase, seat, order = asked(nkontor, gid)
    sent = send(listener, reply(said), to=reply_address(nkontor, gid, phase, seat),
                Subject="Re: Die Händler #b51b \N{EM DASH} your turn")
    work_all(notify_settings)

    stored = nkontor.store.orders(gid, phase)[seat]
    assert (stored["via"], stored["order"]) == ("email", order if expected is None else expected)
    got = only_receipt(mailbox, sent)
    assert got.message["X-Kontor-Status"] == "accepted"
    # The receipt threads under the reply it answers.
    assert got.message["In-Reply-To"] == sent["Message-ID"] and sent["Message-ID"] in got.message["References"]
    assert got.message["Subject"].startswith("Re: Die Händler #b51b")


@pytest.mark.parametrize(("said", "why"), [
    ("Hello\nbid 300", "\N{LEFT DOUBLE QUOTATION MARK}Hello\N{RIGHT DOUBLE QUOTATION MARK} does not answer: "),
    ("bid", "\N{LEFT DOUBLE QUOTATION MARK}bid\N{RIGHT DOUBLE QUOTATION MARK} does not answer: "),
    ("", "the reply holds no order")])
def test_a_plain_reply_that_cannot_be_read_is_refused_with_the_reason(
        nkontor: Kontor, notify_settings: Any, mailbox: Mailbox, listener: int, said: str, why: str) -> None:
    gid, _ = new_game(nkontor, "reply_address", sealed=True)
    phase, seat, _ = asked(nkontor, gid)
    before = footprint(nkontor, gid)
    sent = send(listener, reply(said), to=reply_address(nkontor, gid, phase, seat))
    work_all(notify_settings)
    assert footprint(nkontor, gid) == before
    got = only_receipt(mailbox, sent)
    assert got.message["X-Kontor-Status"] == "refused"
    assert why in text(got) or (not said and got.message["X-Kontor-Code"] == "no_order_block")


def test_a_seat_given_to_a_bot_takes_no_order_at_its_reply_address(
        nkontor: Kontor, notify_settings: Any, mailbox: Mailbox, listener: int) -> None:
    gid, _ = new_game(nkontor, "reply_address", sealed=True)
    phase, seat, _ = asked(nkontor, gid)
    nkontor.update_seat(gid, seat, None, None, "random")
    work_all(notify_settings)
    bot_order = nkontor.store.orders(gid, phase).get(seat)
    sent = send(listener, reply("bid 300"), to=reply_address(nkontor, gid, phase, seat))
    work_all(notify_settings)
    assert nkontor.store.orders(gid, phase).get(seat) == bot_order
    # The seat's registered address left with its player (a farewell, then nothing): the
    # refusal is recorded for the operator and mailed to nobody.
    rec = inbound_record(nkontor, rec_id(nkontor))
    assert (rec["status"], rec["code"], rec["receipt_status"]) == ("refused", "seat_played_by_bot", "none")
    assert not [m for m in receipts(mailbox) if m.message["In-Reply-To"] == sent["Message-ID"]]


def forged(address: str) -> str:
    """`address` with the last letter of its MAC changed."""
    local, _, domain = address.partition("@")
    return f"{local[:-1]}{'b' if local[-1] == 'a' else 'a'}@{domain}"


def tampered(token: str, other: str) -> str:
    """`token` with the signature of `other`."""
    return token.rsplit(".", 1)[0] + "." + other.rsplit(".", 1)[1]


#: Refusals: (the game's mail mode, how to make the mail) -> the exact problem code.
REFUSALS: dict[str, tuple[str, Any]] = {
    "bad_signature": ("signed", lambda k, gid, p, ph, seat, order: (block(
        tampered(p[seat].order_token(ph, order), p[seat].order_token(ph, {"goods": ["x"]}))), "orders")),
    "wrong_seat": ("signed", lambda k, gid, p, ph, seat, order: (block(
        p[(seat + 1) % 3].order_token(ph, order, seat=seat)), "orders")),
    "unknown_key": ("signed", lambda k, gid, p, ph, seat, order: (block(
        Player(Player.new().key, gid, seat).order_token(ph, order)), "orders")),
    "stale_phase": ("signed", lambda k, gid, p, ph, seat, order: (block(
        p[seat].order_token(ph + 1, order)), "orders")),
    "order_block_mismatch": ("signed", lambda k, gid, p, ph, seat, order: (block(
        p[seat].order_token(ph, order), f"{gid} {seat} {ph + 1}"), "orders")),
    "unsigned_order": ("reply_address", lambda k, gid, p, ph, seat, order: (block(json.dumps(order)), "orders")),
    "reply_orders_disabled": ("signed", lambda k, gid, p, ph, seat, order: (block(json.dumps(order)), "reply")),
    "bad_reply_address": ("reply_address", lambda k, gid, p, ph, seat, order: (block(json.dumps(order)), "forged")),
    "wrong_kind": ("reply_address", lambda k, gid, p, ph, seat, order: (block('{"kind": "cart_bid", "bid": 0}'),
                                                                        "reply")),
    "no_order_block": ("reply_address", lambda k, gid, p, ph, seat, order: ("Please buy wine.\n", "orders")),
    "bad_order_words": ("reply_address", lambda k, gid, p, ph, seat, order: ("Please buy wine.\n", "reply")),
    "malformed_order": ("reply_address", lambda k, gid, p, ph, seat, order: (block('{"goods": [}'), "reply")),
}


#: Refusals of mail that names no seat (to `orders@` without a token, to a made-up reply address).
NAMES_NO_SEAT = {"unsigned_order", "bad_reply_address", "no_order_block"}


@pytest.mark.parametrize("code", sorted(REFUSALS))
def test_a_refused_mail_changes_nothing_and_its_receipt_quotes_the_exact_error(
        nkontor: Kontor, notify_settings: Any, mailbox: Mailbox, listener: int, code: str) -> None:
    mode, make = REFUSALS[code]
    gid, players = new_game(nkontor, mode)
    phase, seat, order = asked(nkontor, gid)
    body, where = make(nkontor, gid, players, phase, seat, order)
    to = {"orders": "orders@kontor.test", "reply": reply_address(nkontor, gid, phase, seat),
          "forged": forged(reply_address(nkontor, gid, phase, seat))}[where]
    before = footprint(nkontor, gid)
    sent = send(listener, body, to=to)
    work_all(notify_settings)

    assert footprint(nkontor, gid) == before
    rec = inbound_record(nkontor, rec_id(nkontor))
    assert (rec["status"], rec["code"]) == ("refused", code)
    if code in NAMES_NO_SEAT:  # no seat to answer: recorded for the operator, no mail to the From
        assert rec["receipt_status"] == "none" and receipts(mailbox) == []
        return
    got = only_receipt(mailbox, sent)
    assert got.message["X-Kontor-Status"] == "refused" and got.message["X-Kontor-Code"] == code
    assert got.message["Reply-To"] == "orders@kontor.test"
    # Only the error, quoted exactly: no game content goes to an untrusted From.
    assert text(got) == refused_text([(code, rec["detail"])])
    # (A rule it cites is a link to the rule in the game's guide; mail to the orders
    # address names no game, so the citation is dropped.)
    said = words.cite_rules(rec["detail"], None, ())
    # (the stable code is for programs: in the X-Kontor-Code header, not in the words)
    assert text(got).startswith(f"Your mail was refused; nothing was changed.\n\n{said[:1].upper()}{said[1:]}\n")
    assert code not in text(got)


def test_a_replayed_token_is_refused_and_changes_nothing(
        nkontor: Kontor, notify_settings: Any, mailbox: Mailbox, listener: int) -> None:
    gid, players = new_game(nkontor, sealed=True)
    phase, seat, order = asked(nkontor, gid)
    body = block(players[seat].order_token(phase, order))
    send(listener, body)
    work_all(notify_settings)
    assert nkontor.store.orders(gid, phase)[seat]["via"] == "email"
    before = footprint(nkontor, gid)
    again = send(listener, body)
    work_all(notify_settings)
    assert footprint(nkontor, gid) == before
    assert only_receipt(mailbox, again).message["X-Kontor-Code"] == "token_replayed"


@pytest.mark.cluster  # the mail kept, then indexed in its bucket (issue 24)
def test_automatic_mail_is_recorded_and_never_answered(
        nkontor: Kontor, notify_settings: Any, mailbox: Mailbox, listener: int) -> None:
    gid, players = new_game(nkontor)
    phase, seat, order = asked(nkontor, gid)
    before = footprint(nkontor, gid)
    send(listener, block(players[seat].order_token(phase, order)), Auto_Submitted="auto-replied")
    send(listener, block("bid=1"), mail_from="")  # a bounce: null envelope sender
    send(listener, block("bid=1"), sender="Kontor <kontor@kontor.test>")
    send(listener, block("bid=1"), Precedence="list")
    work_all(notify_settings)
    assert footprint(nkontor, gid) == before
    for i in range(4):
        rec = inbound_record(nkontor, rec_id(nkontor, i))
        assert (rec["status"], rec["code"], rec["receipt_status"]) == ("refused", "auto_submitted", "none")
    assert receipts(mailbox) == []


def test_no_receipt_goes_to_our_own_mail_domain(nkontor: Kontor, notify_settings: Any, mailbox: Mailbox,
                                                listener: int) -> None:
    send(listener, "no block", sender="orders@kontor.test")
    work_all(notify_settings)
    rec = inbound_record(nkontor, rec_id(nkontor))
    assert (rec["code"], rec["receipt_status"]) == ("no_order_block", "none")
    assert mailbox.messages == []


# -- who gets an answer, and how much mail is read ---------------------------------------------
VICTIM = "victim@example.net"
PLAYER = "player@players.test"


def test_a_forged_from_to_the_orders_address_gets_no_mail(
        nkontor: Kontor, notify_settings: Any, mailbox: Mailbox, listener: int) -> None:
    gid, _ = new_game(nkontor, "reply_address", contact=PLAYER)
    phase, seat, _ = asked(nkontor, gid)
    made_up = "orders+anything.1.2.abcdefghijklmnop@kontor.test"
    for to in ("orders@kontor.test", made_up, forged(reply_address(nkontor, gid, phase, seat))):
        send(listener, "Please buy wine.\n", to=to, sender=VICTIM, Subject="Buy cheap pills at spam.example")
    send(listener, block("bid=1"), sender=VICTIM, Subject="spam")
    work_all(notify_settings)
    codes = [inbound_record(nkontor, rec_id(nkontor, i)) for i in range(4)]
    assert [(r["status"], r["code"], r["receipt_status"]) for r in codes] == [
        ("refused", "no_order_block", "none"), ("refused", "bad_reply_address", "none"),
        ("refused", "bad_reply_address", "none"), ("refused", "unsigned_order", "none")]
    assert mailbox.to(VICTIM) == [] and receipts(mailbox, PLAYER) == []


def test_a_receipt_goes_to_the_registered_address_never_to_a_strangers_from(
        nkontor: Kontor, notify_settings: Any, mailbox: Mailbox, listener: int) -> None:
    gid, players = new_game(nkontor, "reply_address", sealed=True, contact=PLAYER)
    phase, seat, order = asked(nkontor, gid)
    before = footprint(nkontor, gid)
    # A reply address that leaked, mailed from a stranger's From: the order counts (the
    # address is the secret), but the receipt goes to the seat's own address.
    sent = send(listener, reply("bid 300"), to=reply_address(nkontor, gid, phase, seat), sender=VICTIM,
                Subject="Cheap pills")
    # A bad token naming the seat, from a stranger: its refusal goes to the seat too.
    bad = send(listener, block(tampered(players[seat].order_token(phase, order),
                                        players[seat].order_token(phase, {"bid": 1}))), sender=VICTIM,
               Subject="Cheap pills")
    work_all(notify_settings)
    assert footprint(nkontor, gid) != before and nkontor.store.orders(gid, phase)[seat]["order"] == {"bid": 300}
    assert mailbox.to(VICTIM) == []
    got = only_receipt(mailbox, sent, PLAYER)
    assert got.message["X-Kontor-Status"] == "accepted" and got.rcpt_tos == [PLAYER]
    # The stranger's Subject is not echoed to the player.
    assert got.message["Subject"] == "Re: [Kontor] your mail [order accepted]" and "pills" not in got.text
    refused = only_receipt(mailbox, bad, PLAYER)
    assert refused.message["X-Kontor-Code"] == "bad_signature" and "pills" not in str(refused.message)


def test_a_seat_without_a_registered_address_gets_no_receipt(
        nkontor: Kontor, notify_settings: Any, mailbox: Mailbox, listener: int) -> None:
    gid, players = new_game(nkontor, sealed=True, contact=None)
    phase, seat, order = asked(nkontor, gid)
    send(listener, block(players[seat].order_token(phase, order)))
    work_all(notify_settings)
    rec = inbound_record(nkontor, rec_id(nkontor))
    assert rec["status"] == "accepted" and rec["receipt_status"] == "none"
    assert nkontor.store.orders(gid, phase)[seat]["via"] == "email" and receipts(mailbox) == []


def nested(depth: int, to: str, parts: int = 1, sender: str = VICTIM, pad: int = 0) -> bytes:
    """A mail of `depth` nested multipart/mixed parts around `parts` text parts."""
    head = (f"From: {sender}\r\nTo: {to}\r\nSubject: deep\r\nMessage-ID: <deep.{depth}.{parts}@players.test>\r\n"
            "MIME-Version: 1.0\r\n")
    body = "".join(f'Content-Type: multipart/mixed; boundary="b{i}"\r\n\r\n--b{i}\r\n' for i in range(depth))
    inner = "Content-Type: text/plain\r\n\r\nbid 300\r\n" + "x" * pad + "\r\n"
    body += f"--b{depth - 1}\r\n".join([inner] * parts) if depth else inner
    body += "".join(f"--b{i}--\r\n" for i in reversed(range(depth)))
    return (head + body).encode()


@pytest.mark.parametrize(("depth", "parts", "pad", "code"), [
    (1000, 1, 0, "mail_too_deep"), (9, 1, 0, "mail_too_deep"), (1, 60, 0, "mail_too_many_parts"),
    (0, 1, MAX_SIZE, "mail_too_large")])
def test_a_mail_beyond_the_bounds_is_refused_to_the_registered_address(
        nkontor: Kontor, notify_settings: Any, mailbox: Mailbox, depth: int, parts: int, pad: int,
        code: str) -> None:
    gid, _ = new_game(nkontor, "reply_address", sealed=True, contact=PLAYER)
    phase, seat, _ = asked(nkontor, gid)
    before = footprint(nkontor, gid)
    to = reply_address(nkontor, gid, phase, seat)
    mail_id = store_inbound(nkontor, nested(depth, to, parts, pad=pad), [to], VICTIM)
    assert process(nkontor, mail_id) == "refused"
    assert footprint(nkontor, gid) == before
    rec = inbound_record(nkontor, mail_id)
    assert (rec["status"], rec["code"], rec["receipt_status"]) == ("refused", code, "sent")
    got = receipts(mailbox, PLAYER)
    assert len(got) == 1 and got[0].message["X-Kontor-Code"] == code and mailbox.to(VICTIM) == []
    assert text(got[0]) == refused_text([(code, rec["detail"])]) and code not in text(got[0])


def test_a_1000_deep_mail_through_the_listener_is_refused_without_a_crash(
        nkontor: Kontor, notify_settings: Any, mailbox: Mailbox, listener: int) -> None:
    gid, _ = new_game(nkontor, "reply_address", sealed=True, contact=PLAYER)
    phase, seat, _ = asked(nkontor, gid)
    to = reply_address(nkontor, gid, phase, seat)
    with smtplib.SMTP("127.0.0.1", listener) as smtp:
        smtp.sendmail(VICTIM, [to], nested(1000, to))
    work_all(notify_settings)
    rec = inbound_record(nkontor, rec_id(nkontor))
    assert (rec["status"], rec["code"], rec["receipt_status"]) == ("refused", "mail_too_deep", "sent")
    assert [m.message["X-Kontor-Code"] for m in receipts(mailbox, PLAYER)] == ["mail_too_deep"]


def test_the_listener_refuses_mail_over_the_size_setting_with_552(notify_settings: Any) -> None:
    from service.channels.inbound.smtpd import controller

    small = Kontor(replace(notify_settings, inbound_max_bytes=2000))
    server = controller(small, "127.0.0.1", free_port())
    server.start()
    try:
        with smtplib.SMTP("127.0.0.1", server.port) as smtp:
            with pytest.raises(smtplib.SMTPResponseException) as exc:  # at MAIL (its SIZE) or at DATA
                smtp.sendmail(SENDER, ["orders@kontor.test"], raw_mail("x" * 3000))
        assert exc.value.smtp_code == 552
    finally:
        server.stop()


def test_a_duplicate_job_for_the_same_mail_acts_once(nkontor: Kontor, notify_settings: Any,
                                                     mailbox: Mailbox) -> None:
    gid, players = new_game(nkontor)
    phase, seat, order = asked(nkontor, gid)
    mail_id = store_inbound(nkontor, raw_mail(block(players[seat].order_token(phase, order))),
                            ["orders@kontor.test"], SENDER)
    assert process(nkontor, mail_id) == "accepted"
    assert process(nkontor, mail_id) == "duplicate"
    work_all(notify_settings)  # the queued job is a duplicate too
    assert len(receipts(mailbox)) == 1 and inbound_record(nkontor, mail_id)["status"] == "accepted"


def test_the_listener_takes_mail_only_for_order_and_unsubscribe_addresses(listener: int) -> None:
    with smtplib.SMTP("127.0.0.1", listener) as smtp:
        smtp.ehlo()
        smtp.mail(SENDER)
        assert smtp.rcpt("someone@kontor.test") == (550, b"5.1.1 no such user here")
        assert smtp.rcpt("orders@elsewhere.test")[0] == 550
        assert smtp.rcpt("ORDERS@Kontor.Test")[0] == 250
        assert smtp.rcpt("orders+anything@kontor.test")[0] == 250
        assert smtp.rcpt("unsubscribe@kontor.test")[0] == 250


def test_a_mail_that_cannot_be_kept_is_answered_451_so_the_sender_retries(notify_settings: Any) -> None:
    dead = Kontor(replace(notify_settings, redis_url="redis://127.0.0.1:9/0"))
    controller = start_controller(InboundHandler(dead))
    try:
        with smtplib.SMTP("127.0.0.1", controller.port) as smtp:
            with pytest.raises(smtplib.SMTPDataError) as exc:
                smtp.sendmail(SENDER, ["orders@kontor.test"], raw_mail("#orders\nbid=1\n#end\n"))
        assert exc.value.smtp_code == 451
    finally:
        controller.stop()


def test_mail_over_the_size_limit_is_refused_by_the_listener(listener: int) -> None:
    with smtplib.SMTP("127.0.0.1", listener) as smtp:
        with pytest.raises(smtplib.SMTPException):
            smtp.sendmail(SENDER, ["orders@kontor.test"], raw_mail("x" * (MAX_SIZE + 10)))


def test_mail_to_the_unsubscribe_address_unsubscribes_the_address(
        nkontor: Kontor, notify_settings: Any, mailbox: Mailbox, listener: int) -> None:
    send(listener, "unsubscribe", to="unsubscribe@kontor.test", Subject=unsubscribe_token(nkontor, SENDER) + "x")
    assert not nkontor.store.unsubscribed(SENDER)  # a token that is not genuine changes nothing
    send(listener, "unsubscribe", to="unsubscribe@kontor.test", Subject=unsubscribe_token(nkontor, SENDER))
    work_all(notify_settings)
    assert nkontor.store.unsubscribed(SENDER)
    # Not an order mail: not kept, no receipt.
    assert mailbox.messages == [] and nkontor.store.inbound_ids() == []


def test_kontor_mail_in_serves_until_sigterm(nkontor: Kontor, notify_settings: Any, mailbox: Mailbox) -> None:
    gid, _ = new_game(nkontor, "reply_address")
    phase, seat, _ = asked(nkontor, gid)
    port = free_port()
    env = {**os.environ, "KONTOR_REDIS_URL": notify_settings.redis_url, "KONTOR_MAIL_DOMAIN": "kontor.test",
           "KONTOR_DURABILITY": "none"}
    server = subprocess.Popen([sys.executable, "-m", "workers.mailin", "--port", str(port)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_until(lambda: listening(port), timeout=20)
        sent = send(port, "Please buy wine.\n", to=reply_address(nkontor, gid, phase, seat))
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=20) == 0
    work_all(notify_settings)
    assert only_receipt(mailbox, sent).message["X-Kontor-Code"] == "bad_order_words"


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


# -- through the HTTP endpoint ---------------------------------------------------------------
BEARER = {"Authorization": "Bearer inbound-test-secret"}


def basic(password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"provider:{password}".encode()).decode()}


def test_the_http_endpoint_takes_a_raw_mail(nkontor: Kontor, nclient: Any, notify_settings: Any,
                                            mailbox: Mailbox) -> None:
    gid, players = new_game(nkontor, sealed=True)
    phase, seat, order = asked(nkontor, gid)
    raw = raw_mail(block(players[seat].order_token(phase, order)) + "padding " * 10_000)  # > the app's 64 KB
    r = nclient.post("/inbound/email", data=raw, content_type="message/rfc822", headers=BEARER)
    assert r.status_code == 202, r.json
    assert r.json["status"] == "queued" and r.json["id"].startswith("in_")
    work_all(notify_settings)
    assert nkontor.store.orders(gid, phase)[seat]["via"] == "email"
    rec = inbound_record(nkontor, r.json["id"])
    assert (rec["status"], rec["via"], rec["rcpt_tos"], rec["raw"]) == ("accepted", "http", ["orders@kontor.test"],
                                                                        raw)
    assert receipts(mailbox)[0].message["X-Kontor-Status"] == "accepted"


def test_the_http_endpoint_takes_sendgrid_form_posts_with_the_envelope(
        nkontor: Kontor, nclient: Any, notify_settings: Any, mailbox: Mailbox) -> None:
    gid, _ = new_game(nkontor, "reply_address", sealed=True)
    phase, seat, order = asked(nkontor, gid)
    address = reply_address(nkontor, gid, phase, seat)
    raw = raw_mail(block(json.dumps(order)), To="Kontor <orders@kontor.test>")  # the header hides the address
    form = {"email": raw.decode(), "to": "orders@kontor.test",
            "envelope": json.dumps({"to": [address], "from": SENDER})}
    r = nclient.post("/inbound/email", data=form, content_type="multipart/form-data",
                     headers=basic("inbound-test-secret"))
    assert r.status_code == 202, r.json
    work_all(notify_settings)
    assert nkontor.store.orders(gid, phase)[seat]["via"] == "email"
    assert inbound_record(nkontor, r.json["id"])["rcpt_tos"] == [address]


def test_the_http_endpoint_reads_recipients_from_the_query_or_the_headers(nkontor: Kontor, nclient: Any) -> None:
    raw = raw_mail("hello", To="a@kontor.test", X_Original_To="orders+x@kontor.test")
    r = nclient.post("/inbound/email?to=b@kontor.test", data=raw, content_type="message/rfc822", headers=BEARER)
    assert inbound_record(nkontor, r.json["id"])["rcpt_tos"] == ["b@kontor.test"]
    r = nclient.post("/inbound/email", data=raw, content_type="message/rfc822", headers=BEARER)
    assert inbound_record(nkontor, r.json["id"])["rcpt_tos"] == ["orders+x@kontor.test", "a@kontor.test"]


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, basic("wrong"),
                                     {"Authorization": "Token inbound-test-secret"}])
def test_the_http_endpoint_needs_the_shared_secret(nkontor: Kontor, nclient: Any, headers: dict[str, str]) -> None:
    r = nclient.post("/inbound/email", data=raw_mail("hi"), content_type="message/rfc822", headers=headers)
    problem(r, 401, "bad_inbound_secret")
    assert nkontor.store.inbound_ids() == []


def test_the_http_endpoint_is_off_without_a_secret(notify_settings: Any) -> None:
    off = replace(notify_settings, inbound_secret="")
    app = create_app(off, Kontor(off))
    r = app.test_client().post("/inbound/email", data=raw_mail("hi"), content_type="message/rfc822", headers=BEARER)
    problem(r, 404, "not_found")


def test_the_http_endpoint_refuses_bodies_it_cannot_take(nclient: Any) -> None:
    big = raw_mail("x" * (MAX_SIZE + 10))
    problem(nclient.post("/inbound/email", data=big, content_type="message/rfc822", headers=BEARER),
            413, "payload_too_large")
    problem(nclient.post("/inbound/email", json={"email": "x"}, headers=BEARER), 415, "unsupported_media_type")
    problem(nclient.post("/inbound/email", data={"to": "a@b.test"}, content_type="multipart/form-data",
                         headers=BEARER), 422, "invalid_request")


def test_a_reply_address_dies_when_the_seat_changes_hands(
        nkontor: Kontor, notify_settings: Any, mailbox: Mailbox, listener: int) -> None:
    """The host gives the seat a new key: a reply to the former player's address is refused
    as `seat_changed`, stores nothing and mails nobody (the former player is a stranger to
    the seat now); the new holder's fresh address takes the order."""
    gid, _ = new_game(nkontor, "reply_address", sealed=True)
    phase, seat, order = asked(nkontor, gid)
    old = reply_address(nkontor, gid, phase, seat)
    nkontor.update_seat(gid, seat, None, Player.new().key.public, None)
    work_all(notify_settings)
    before = footprint(nkontor, gid)
    sent = send(listener, reply("bid 300"), to=old)
    work_all(notify_settings)
    assert footprint(nkontor, gid) == before and seat not in nkontor.store.orders(gid, phase)
    # the former player is a stranger to the seat now: recorded for the operator, no mail
    rec = inbound_record(nkontor, rec_id(nkontor))
    assert (rec["status"], rec["code"], rec["receipt_status"]) == ("refused", "seat_changed", "none")
    assert not [m for m in receipts(mailbox) if m.message["In-Reply-To"] == sent["Message-ID"]]
    fresh = reply_address(nkontor, gid, phase, seat)
    assert fresh != old
    # The former player's address left with them: the new holder registers their own,
    # and the receipt goes there only.
    set_contact(nkontor, gid, seat, {"email": "heir@example.org"})
    sent = send(listener, reply("bid 300"), to=fresh)
    work_all(notify_settings)
    assert only_receipt(mailbox, sent, "heir@example.org").message["X-Kontor-Status"] == "accepted"
    assert not [m for m in receipts(mailbox) if m.message["In-Reply-To"] == sent["Message-ID"]]
    assert nkontor.store.orders(gid, phase)[seat]["order"] == {"bid": 300}


def test_a_reply_address_dies_when_a_bot_takes_the_seat(
        nkontor: Kontor, notify_settings: Any, mailbox: Mailbox, listener: int) -> None:
    gid, _ = new_game(nkontor, "reply_address", sealed=True)
    phase, seat, _ = asked(nkontor, gid)
    old = reply_address(nkontor, gid, phase, seat)
    nkontor.update_seat(gid, seat, None, None, "random")
    work_all(notify_settings)
    before = footprint(nkontor, gid)
    sent = send(listener, reply("bid 300"), to=old)
    work_all(notify_settings)
    assert footprint(nkontor, gid) == before
    rec = inbound_record(nkontor, rec_id(nkontor))
    assert (rec["status"], rec["code"], rec["receipt_status"]) == ("refused", "seat_changed", "none")
    assert not [m for m in receipts(mailbox) if m.message["In-Reply-To"] == sent["Message-ID"]]
