"""Email out: mails arrive at a real SMTP server (aiosmtpd) and are parsed back: both
parts, the subject, the deadline in the seat's time zone, the prefilled `#orders`
block, Reply-To in both order modes, one-click unsubscribe (RFC 8058), retries on a
temporary SMTP failure, a permanent failure the host can see, digests, and duplicate
jobs that send nothing."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime
from html import escape
from typing import Any
from zoneinfo import ZoneInfo

import pytest

import service.jobs.tasks
from service.channels.mail.render import citer, linkify
from service.channels.mail.send import send_delivery, send_digests
from service.channels.mail.unsubscribe import unsubscribe_token, unsubscribe_url
from service.channels.notify import Notifier, reply_address
from service.config import Settings
from service.core.kontor import Kontor
from tests.service.channels import Mailbox, Received, work_all
from tests.service.conftest import Player, default_step, problem

# Also with the store on a Valkey Cluster and the queue on a Valkey of its own (issue 24).
pytestmark = pytest.mark.cluster

NAME = "Sunday <traders> & co"
BERLIN = {"email": "ada@example.org", "timezone": "Europe/Berlin"}


def mail_game(kontor: Kontor, client: Any, contacts: dict[int, dict[str, Any]], mail_orders: str = "signed",
              seats: int = 3) -> tuple[str, Player, dict[int, Player]]:
    """A started game whose seats set their contacts (over HTTP) before it starts, so
    the first step's mail is sent too; mail mode `every` unless a contact says otherwise.
    Its id, host and players."""
    host = Player.new()
    gid = kontor.create_game("haendler", seats, None, None, 7, host.key.public, name=NAME,
                             mail_orders=mail_orders)["id"]
    host.game = gid
    players = {}
    for seat in range(seats):
        p = Player.new()
        kontor.join(gid, f"P{seat}", p.key.public, seat)
        p.game, p.seat = gid, seat
        players[seat] = p
    for seat, body in contacts.items():
        body = {"delivery": "every", **body}  # these tests read every step's mail (`asked` is the default)
        r = client.put(f"/games/{gid}/seats/{seat}/contact", json=body, headers=players[seat].bearer())
        assert r.status_code == 200, r.json
    kontor.start(gid)
    return gid, host, players


def asked_seat(kontor: Kontor, gid: str) -> tuple[int, int]:
    ph = kontor.current_phase(gid, "public")
    return ph["requested"][0], ph["id"]


def play_until_asked(kontor: Kontor, settings: Settings, gid: str, seat: int, limit: int = 20) -> int:
    """Answer default orders until a step asks `seat`; that step's id."""
    for _ in range(limit):
        ph = kontor.current_phase(gid, "public")
        if seat in ph["requested"]:
            return int(ph["id"])
        default_step(kontor, gid)
        work_all(settings)
    raise AssertionError(f"seat {seat} was not asked within {limit} steps")


def mails_to(mailbox: Mailbox, address: str) -> list[Received]:
    return mailbox.to(address)


def text(mail: Received) -> str:
    """The text part with its lines ending in \\n (the wire has CRLF)."""
    return mail.text.replace("\r\n", "\n")


def orders_blocks(text: str) -> list[list[str]]:
    return [m.group(0).splitlines() for m in re.finditer(r"^#orders .*?^#end$", text, re.S | re.M)]


def deliveries(kontor: Kontor, gid: str, seat: int) -> list[dict[str, Any]]:
    return kontor.store.deliveries(gid, seat, 100)


# -- what a mail says ----------------------------------------------------------------------
def test_a_step_that_asks_the_seat_mails_everything_needed_to_answer(
        nkontor: Kontor, nclient: Any, notify_settings: Settings, mailbox: Mailbox) -> None:
    gid, _, _ = mail_game(nkontor, nclient, {0: BERLIN})
    phase = play_until_asked(nkontor, notify_settings, gid, 0)
    work_all(notify_settings)
    mail = mails_to(mailbox, "ada@example.org")[-1]
    msg = mail.message
    you = nkontor.current_phase(gid, 0)
    [notice] = [n for n in nkontor.store.delivery(gid, msg["X-Kontor-Delivery"])["payload"] if n.get("request")]
    # The subject names the game once (its name lacks the title's, so that follows) and what is asked.
    assert msg["Subject"].startswith(f"{NAME} (Die Händler) \N{EM DASH} your turn: ")
    assert msg["Subject"].endswith("(round 1)") and gid not in msg["Subject"]
    assert msg.get_content_type() == "multipart/alternative" and text(mail) and mail.html
    assert msg["From"] == notify_settings.mail_from and msg["To"] == "ada@example.org"
    assert msg["Reply-To"] == "orders@kontor.test"
    assert msg["Auto-Submitted"] == "auto-generated"
    assert msg["Message-ID"].endswith("@kontor.test>")
    assert msg["In-Reply-To"] == msg["References"] == f"<game-{gid}-0@kontor.test>"
    assert gid in msg["List-Id"]
    # A letter: the greeting, where the game stands (Kontor's step, the title's headline).
    assert text(mail).startswith(f"Hello P0,\n\nIt is your turn in {NAME} (Die Händler): step {phase} "
                                 f"({notice['headline']}).")
    # The deadline in the seat's zone, with the zone's name and UTC.
    deadline = datetime.fromisoformat(you["deadline"])
    local = deadline.astimezone(ZoneInfo("Europe/Berlin"))
    offset = local.strftime("%z")
    assert f"{local:%Y-%m-%d %H:%M %Z} (Europe/Berlin, UTC{offset[:3]}:{offset[3:]})" in text(mail)
    assert f"{deadline.astimezone(UTC):%Y-%m-%d %H:%M} UTC (in 23h 59m)" in text(mail)
    # A game of signed orders: the block to send the token in (no JSON: the program
    # offers the choices and signs the answer).
    [block] = orders_blocks(text(mail))
    assert block == [f"#orders {gid} 0 {phase}", "<your token>", "#end"]
    assert f"    kontor order {gid} --as <you> --step {phase} --print-token\n" in text(mail)
    # What is asked in the title's words, the choices numbered, the table (its summary
    # of the seat's view), the links.
    assert f"Your turn\n---------\n{notice['asked']}\n" in text(mail)
    assert "If you do not answer in time, this is played for you: Buy nothing." in text(mail)
    prompt = notice["request"]["prompt"]
    labels = [o["label"] for o in prompt["ask"]["options"]]
    # (What to do is said once: the title's prompt says what its request line said.)
    assert prompt["say"] == notice["asked"] and text(mail).count(prompt["say"]) == 1
    assert "Your choices\n------------\n" + prompt["ask"]["question"] + "\n" in text(mail)
    assert "".join(f"  {i}. {label}\n" for i, label in enumerate(labels, 1)) in text(mail)
    assert f"Reply 2 to choose {labels[1]}, or write the words of an option." in text(mail)
    summary = citer(nkontor, "haendler")(notice["summary"])
    assert "The table\n---------\n" in text(mail) and summary.strip() in text(mail)
    assert "Rules\n-----\nThe rules of Die Händler, as a player's guide: http://kontor.test/titles/haendler/rules" \
        in text(mail)
    assert f"http://kontor.test/games/{gid}/phases/{phase}/orders/0" in text(mail)
    # The HTML part shows the same, escaped, the table in a <pre> block.
    assert "Sunday &lt;traders&gt; &amp; co" in mail.html and NAME not in mail.html
    assert f"#orders {gid} 0 {phase}" in mail.html
    assert f"<pre>{linkify(summary.rstrip())}</pre>" in mail.html.replace("\r\n", "\n")
    assert "".join(f"<li>{escape(label)}</li>" for label in labels) in mail.html
    assert f'<a href="http://kontor.test/games/{gid}">' in mail.html


def test_resolved_steps_are_mailed_with_what_happened(
        nkontor: Kontor, nclient: Any, notify_settings: Settings, mailbox: Mailbox) -> None:
    gid, _, _ = mail_game(nkontor, nclient, {1: {"email": "bo@example.org"}})
    work_all(notify_settings)
    first = play_until_asked(nkontor, notify_settings, gid, 1)
    default_step(nkontor, gid)
    work_all(notify_settings)
    second = play_until_asked(nkontor, notify_settings, gid, 1)
    got = mails_to(mailbox, "bo@example.org")
    # `every` mode: the run of steps between the seat's two decisions is one mail, which
    # tells each step that resolved, step by step.
    made = list(reversed(deliveries(nkontor, gid, 1)))
    assert [d["phase"] for d in made] == [first, second]
    resolved = [n["phase"] for n in made[1]["payload"] if n["type"] == "step.resolved"]
    assert resolved == list(range(first, second)) and all(d["status"] == "sent" and d["attempts"] == 1
                                                           for d in made)
    assert len(got) == len(made)
    told = 0
    for mail in got:
        for n in nkontor.store.delivery(gid, mail.message["X-Kontor-Delivery"])["payload"]:
            if n["type"] != "step.resolved":
                continue
            section = text(mail).split(f"What happened in step {n['phase']}\n", 1)[1].split("\n\n", 1)[0]
            assert section.splitlines()[1:] == [f"- {sentence}" for sentence in n["sentences"]]
            told += len(n["sentences"])
    assert told >= 3  # every step of buying says who bought what


def test_a_game_with_reply_addresses_answers_to_the_seats_secret_address(
        nkontor: Kontor, nclient: Any, notify_settings: Settings, mailbox: Mailbox) -> None:
    gid, _, _ = mail_game(nkontor, nclient, {0: BERLIN, 1: {"email": "bo@example.org"}},
                          mail_orders="reply_address")
    phase = play_until_asked(nkontor, notify_settings, gid, 1)
    work_all(notify_settings)
    mail = mails_to(mailbox, "bo@example.org")[-1]
    assert mail.message["Reply-To"] == reply_address(nkontor, gid, phase, 1)
    assert "your secret address for this step" in text(mail) and "--print-token" not in text(mail)
    assert orders_blocks(text(mail)) == []  # the answer is words; programs may still send a block
    # A mail that asks nothing answers to the seat's own address for the open step, so a
    # reply can still say `away ...`, `back` or answer a rollback (issue 25).
    other = [m for m in mails_to(mailbox, "ada@example.org") if "your turn" not in m.message["Subject"]]
    open_step = int(nkontor.store.phase(gid)["id"])
    assert other and all(m.message["Reply-To"] == reply_address(nkontor, gid, open_step, 0) for m in other)


def test_a_digest_and_a_message_render_every_notice(nkontor: Kontor, nclient: Any, notify_settings: Settings,
                                                    mailbox: Mailbox) -> None:
    from service.channels.mail.render import render

    gid, _, _ = mail_game(nkontor, nclient, {0: BERLIN})
    nkontor.store.append_events(gid, [{"type": "message", "from": 2, "to": [0], "text": "Salt <for> wine?",
                                       "phase": 1, "visible_to": [0, 2]}])
    meta = nkontor.store.meta(gid)
    head = Notifier(nkontor).header(gid, meta, 0, nkontor.store.seats(gid))
    message = {"type": "message.received", **head, "phase": 1, "at": None,
               "message": {"id": 9, "from": 2, "to": [0], "text": "Salt <for> wine?", "phase": 1}, "links": {}}
    finished = {"type": "game.finished", **head, "phase": 40, "at": None, "links": {},
                "ranking": [{"seat": 2, "place": 1, "money": 900}, {"seat": 0, "place": 2, "money": 10}]}
    msg = render(nkontor, gid, 0, BERLIN, [message, finished], "e_test", digest=True)
    text = msg.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
    html = msg.get_body(preferencelist=("html",)).get_content()  # type: ignore[union-attr]
    assert msg["Subject"] == f"{NAME} (Die Händler) \N{EM DASH} digest: 2 updates"
    assert "Message from P2\n---------------\nTo you:\n\nSalt <for> wine?" in text
    assert "Salt &lt;for&gt; wine?" in html
    assert "- 1. P2: money 900" in text and "- 2. P0 (you): money 10" in text
    assert msg["Reply-To"] == "orders@kontor.test"


# -- unsubscribing -------------------------------------------------------------------------
def test_list_unsubscribe_headers_are_exact_and_on_one_line(
        nkontor: Kontor, nclient: Any, notify_settings: Settings, mailbox: Mailbox) -> None:
    gid, _, _ = mail_game(nkontor, nclient, {0: BERLIN})
    work_all(notify_settings)
    mail = mailbox.wait(1, address="ada@example.org")[0]
    token = unsubscribe_token(nkontor, "ada@example.org")
    expected = f"<http://kontor.test/unsubscribe/{token}>, <mailto:unsubscribe@kontor.test?subject={token}>"
    assert mail.message["List-Unsubscribe"] == expected
    assert mail.message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert f"\r\nList-Unsubscribe: {expected}\r\n".encode() in mail.raw
    assert b"\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n" in mail.raw
    assert unsubscribe_url(nkontor, "ada@example.org") in text(mail)


def test_one_click_unsubscribe_stops_mail_and_undo_restarts_it(
        nkontor: Kontor, nclient: Any, notify_settings: Settings, mailbox: Mailbox) -> None:
    gid, host, _ = mail_game(nkontor, nclient, {0: BERLIN})
    work_all(notify_settings)
    path = f"/unsubscribe/{unsubscribe_token(nkontor, 'ada@example.org')}"
    # A GET (a mail scanner following the link) shows a button and changes nothing.
    page = nclient.get(path)
    assert page.status_code == 200 and page.mimetype == "text/html"
    assert 'method="post"' in page.get_data(as_text=True) and "a***@example.org" in page.get_data(as_text=True)
    assert not nkontor.store.unsubscribed("ada@example.org")
    # A mail queued before the click is suppressed when its job runs.
    queued = Notifier(nkontor).dispatch(gid, 0, nkontor.store.contact(gid, 0) or {},
                                        [{"type": "game.finished", "game": gid, "seat": 0, "phase": 1}])
    r = nclient.post(path, data="List-Unsubscribe=One-Click", content_type="application/x-www-form-urlencoded")
    assert r.status_code == 200 and nkontor.store.unsubscribed("ada@example.org")
    sent_before = len(mailbox.messages)
    work_all(notify_settings)
    assert nkontor.store.delivery(gid, queued[0])["status"] == "suppressed"
    # Later mails are not even queued; the host sees why.
    default_step(nkontor, gid)
    work_all(notify_settings)
    assert len(mailbox.messages) == sent_before
    assert deliveries(nkontor, gid, 0)[0]["status"] == "suppressed"
    seen = nclient.get(f"/games/{gid}/seats/0/contact", headers=host.bearer()).json
    assert seen["email_status"] == "unsubscribed"
    # An empty one-click body works too; undo subscribes again.
    assert nclient.post(path).status_code == 200
    assert nclient.post(f"{path}/undo").status_code == 200
    assert not nkontor.store.unsubscribed("ada@example.org")
    default_step(nkontor, gid)
    work_all(notify_settings)
    assert len(mailbox.messages) > sent_before


def test_a_bad_unsubscribe_token_is_a_404_problem(nkontor: Kontor, nclient: Any) -> None:
    good = unsubscribe_token(nkontor, "ada@example.org")
    encoded, _, signature = good.partition(".")
    other = unsubscribe_token(nkontor, "bo@example.org").partition(".")[0]
    for token in ("nonsense", f"{encoded}.{'a' * len(signature)}", f"{other}.{signature}", f"%%%.{signature}",
                  f"{encoded}.é"):
        problem(nclient.get(f"/unsubscribe/{token}"), 404, "no_such_token")
        problem(nclient.post(f"/unsubscribe/{token}"), 404, "no_such_token")
        problem(nclient.post(f"/unsubscribe/{token}/undo"), 404, "no_such_token")
    assert not nkontor.store.unsubscribed("ada@example.org")
    assert not nkontor.store.unsubscribed("bo@example.org")


# -- failures and retries ------------------------------------------------------------------
def test_temporary_smtp_failures_are_retried_until_the_mail_is_sent(
        nkontor: Kontor, nclient: Any, notify_settings: Settings, mailbox: Mailbox) -> None:
    mailbox.fail_next("451 try later", 2)
    gid, _, _ = mail_game(nkontor, nclient, {0: BERLIN})
    work_all(notify_settings)
    [first] = deliveries(nkontor, gid, 0)
    assert (first["status"], first["attempts"]) == ("sent", 3), first
    assert len(mails_to(mailbox, "ada@example.org")) == 1


def test_a_permanent_failure_is_recorded_and_the_host_sees_it(
        nkontor: Kontor, nclient: Any, notify_settings: Settings, mailbox: Mailbox) -> None:
    mailbox.fail_next("550 no such user ada@example.org", 1)
    gid, host, players = mail_game(nkontor, nclient, {0: BERLIN})
    work_all(notify_settings)
    [first] = deliveries(nkontor, gid, 0)
    assert (first["status"], first["attempts"]) == ("failed", 1), first
    assert first["last_error"].startswith("550 ") and "ada@" not in first["last_error"]
    seen = nclient.get(f"/games/{gid}/seats/0/contact", headers=host.bearer()).json
    assert seen["email"] == "a***@example.org" and seen["email_status"] == "failed"
    assert "550" in seen["last_error"]
    listed = nclient.get(f"/games/{gid}/seats/0/deliveries", headers=host.bearer()).json
    assert listed[0]["status"] == "failed" and listed[0]["target"] == "a***@example.org"
    # The next mail that goes through (the next step that asks the seat) sets the address back to ok.
    default_step(nkontor, gid)
    work_all(notify_settings)
    play_until_asked(nkontor, notify_settings, gid, 0)
    assert deliveries(nkontor, gid, 0)[0]["status"] == "sent"
    assert nclient.get(f"/games/{gid}/seats/0/contact", headers=players[0].bearer()).json["email_status"] == "ok"


def test_temporary_failures_past_the_retry_schedule_fail(
        nkontor: Kontor, nclient: Any, notify_settings: Settings, mailbox: Mailbox) -> None:
    mailbox.fail_next("451 still busy", 3)
    gid, _, _ = mail_game(nkontor, nclient, {0: BERLIN})
    work_all(notify_settings)
    [first] = deliveries(nkontor, gid, 0)
    assert (first["status"], first["attempts"]) == ("failed", 3), first
    assert "gave up after 3 attempts" in first["last_error"]
    assert mailbox.messages == []


def test_without_an_smtp_server_mails_are_skipped(nkontor: Kontor, nclient: Any, notify_settings: Settings,
                                                   mailbox: Mailbox) -> None:
    quiet = replace(notify_settings, smtp_url="")
    service.jobs.tasks.configure(quiet)
    gid, _, _ = mail_game(nkontor, nclient, {0: BERLIN})
    work_all(quiet)
    [first] = deliveries(nkontor, gid, 0)
    assert first["status"] == "skipped" and "SMTP" in first["last_error"]
    assert mailbox.messages == []


def test_a_duplicate_job_for_a_sent_mail_sends_nothing(nkontor: Kontor, nclient: Any, notify_settings: Settings,
                                                       mailbox: Mailbox) -> None:
    gid, _, _ = mail_game(nkontor, nclient, {0: BERLIN})
    work_all(notify_settings)
    [first] = deliveries(nkontor, gid, 0)
    assert first["status"] == "sent"
    assert send_delivery(nkontor, gid, first["id"], 1) == "noop"
    assert nkontor.jobs.mail(gid, first["id"], 2)
    work_all(notify_settings)
    assert len(mailbox.messages) == 1 and nkontor.store.delivery(gid, first["id"]) == first


# -- digests -------------------------------------------------------------------------------
@pytest.mark.cluster  # the digest schedule's buckets on a cluster (issue 24)
def test_digest_mode_collects_what_is_not_urgent_into_one_mail(
        nkontor: Kontor, nclient: Any, notify_settings: Settings, mailbox: Mailbox) -> None:
    gid, _, _ = mail_game(nkontor, nclient, {0: {**BERLIN, "delivery": "digest"}})
    for _ in range(4):
        default_step(nkontor, gid)
        work_all(notify_settings)
    for d in deliveries(nkontor, gid, 0):  # sent at once: only steps that ask the seat
        assert any(n.get("request") for n in nkontor.store.delivery(gid, d["id"])["payload"])
    waiting = nkontor.r.llen(nkontor.store.key(gid, "digest", 0))
    assert waiting >= 2
    mails_before = len(mailbox.messages)
    assert send_digests(nkontor, nkontor.now()) == 0  # not due yet
    assert send_digests(nkontor, nkontor.now() + notify_settings.digest_interval + 1) == 1
    assert send_digests(nkontor, nkontor.now() + notify_settings.digest_interval + 1) == 0
    work_all(notify_settings)
    digest = mailbox.messages[mails_before:]
    assert len(digest) == 1
    assert digest[0].message["Subject"].endswith(f"digest: {waiting} updates")
    assert deliveries(nkontor, gid, 0)[0]["status"] == "sent"
    assert nkontor.r.llen(nkontor.store.key(gid, "digest", 0)) == 0

