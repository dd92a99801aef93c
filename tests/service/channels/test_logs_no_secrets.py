"""No token, secret or full e-mail address is ever logged (issue 12, item 7).

A whole game is played with every channel: seats with mail contacts (one ordering by
mail to its secret reply address, one by signed tokens in mails), seats with webhooks
whose URLs carry secrets in the path and query, orders over HTTP with bearer and order
tokens, SMTP failures (temporary and permanent), a webhook answering 500, the
unsubscribe page and its undo, and the unsubscribe address. Every log line of the
process is captured at DEBUG (a handler on the root logger, set up as `service.logs`
sets up its own; and pytest's caplog, whose handler sees the records after it) and
searched for every token, secret, address and unsubscribe token the game used. The
lines are JSON and carry the request or job id and the game id.
"""

from __future__ import annotations

import io
import json
import logging
import smtplib
import time
import uuid
from collections.abc import Iterator
from email.message import EmailMessage
from email.utils import make_msgid
from typing import Any

import pytest

from service import logs
from service.channels.inbound.smtpd import InboundHandler
from service.channels.mail.unsubscribe import unsubscribe_token
from service.channels.notify import reply_address
from service.config import Settings
from service.core.kontor import Kontor
from tests.service.channels import Hooks, Mailbox, start_controller, work_all
from tests.service.conftest import Player, create_game, join

# Also with the store on a Valkey Cluster and the queue on a Valkey of its own (issue 24).
pytestmark = pytest.mark.cluster

PATH_SECRET = "pathsecret7f3a9c"
QUERY_SECRET = "querysecret2b8e41"
#: Distinctive local parts, so a leak of an address is found even without its domain.
ADDRESSES = {0: "ada.lovelace.k7q2@example.org", 1: "bob.builder.x9w4@example.net", 2: "cyd.charisse.m3v8@example.com"}


class Secrets:
    """Every secret the game hands out, collected as it goes."""

    def __init__(self) -> None:
        self.values: set[str] = set()

    def add(self, *values: str | None) -> None:
        self.values.update(v for v in values if v)

    def bearer(self, player: Player) -> dict[str, str]:
        now = int(time.time())
        token = player.key.sign({"game": player.game, "iat": now, "exp": now + 120})
        self.add(token)
        return {"Authorization": f"Bearer {token}"}

    def order_token(self, player: Player, phase: int, order: Any) -> str:
        token = player.order_token(phase, order)
        self.add(token)
        return token


@pytest.fixture
def captured(caplog: pytest.LogCaptureFixture) -> Iterator[io.StringIO]:
    """Every log line of the process at DEBUG, formatted as the service formats them."""
    out = io.StringIO()
    handler = logs.install(logging.StreamHandler(out))
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    caplog.set_level(logging.DEBUG)
    logging.getLogger("urllib3").setLevel(logging.DEBUG)  # (setup quiets it: the filter must hold too)
    try:
        yield out
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        logging.getLogger("urllib3").setLevel(logging.WARNING)


@pytest.fixture
def listener(nkontor: Kontor) -> Iterator[int]:
    controller = start_controller(InboundHandler(nkontor))
    yield controller.port
    controller.stop()


def mail_in(port: int, sender: str, to: str, body: str, subject: str = "my orders") -> None:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, to, subject
    msg["Message-ID"] = make_msgid(domain="players.example.org")
    msg.set_content(body)
    with smtplib.SMTP("127.0.0.1", port) as smtp:
        smtp.send_message(msg)


def test_a_whole_game_logs_no_token_secret_or_address(
        nkontor: Kontor, nclient: Any, notify_settings: Settings, mailbox: Mailbox, hooks: Hooks, listener: int,
        captured: io.StringIO, caplog: pytest.LogCaptureFixture) -> None:
    s = Secrets()
    s.add(notify_settings.secret, notify_settings.inbound_secret, *ADDRESSES.values(),
          *(a.split("@")[0] for a in ADDRESSES.values()), PATH_SECRET, QUERY_SECRET)
    host = Player.new()
    # Fantasy Business in one round: a whole game in a few dozen steps.
    gid = create_game(nclient, host, 3, title="fantasy", options={"rounds": 1}, mail_orders="reply_address",
                      name="Log watch")["id"]
    players = {}
    for seat in range(3):
        p = Player.new()
        join(nclient, gid, p, f"P{seat}", seat)
        players[seat] = p
    # Seat 0 and 2 by mail, seats 1 and 2 by webhook (secrets in the URL's path and query).
    contacts = {0: {"email": ADDRESSES[0]}, 1: {"webhook_url": hooks.url(f"/h1/{PATH_SECRET}?key={QUERY_SECRET}")},
                2: {"email": ADDRESSES[2], "webhook_url": hooks.url(f"/h2/{PATH_SECRET}")}}
    for seat, body in contacts.items():
        r = nclient.put(f"/games/{gid}/seats/{seat}/contact", json=body, headers=s.bearer(players[seat]))
        assert r.status_code == 200, r.json
        s.add(r.json.get("webhook_secret"))
        if "webhook_url" in body:
            hooks.secrets[body["webhook_url"].removeprefix(hooks.url(""))] = r.json["webhook_secret"]
    for address in ADDRESSES.values():
        s.add(unsubscribe_token(nkontor, address))
    mailbox.fail_next("451 4.3.0 try again later", 1)
    hooks.answers[f"/h1/{PATH_SECRET}?key={QUERY_SECRET}"] = [500]
    r = nclient.patch(f"/games/{gid}", json={"status": "running"}, headers=s.bearer(host))
    assert r.status_code == 200, r.json

    ways = {0: "reply", 1: "http", 2: "token"}
    for step in range(400):
        work_all(notify_settings, horizon=0.5)
        if nkontor.game(gid)["status"] == "finished":
            break
        ph = nkontor.current_phase(gid, "public")
        for seat in ph["requested"]:
            order = nkontor.current_phase(gid, seat)["you"]["default_order"]
            way = ways[seat] if step < 12 else "direct"
            if way == "http":
                r = nclient.put(f"/games/{gid}/phases/{ph['id']}/orders/{seat}",
                                json={"token": s.order_token(players[seat], ph["id"], order)},
                                headers={"Idempotency-Key": uuid.uuid4().hex})
                assert r.status_code in (200, 201, 202), r.json
            elif way == "reply":
                address = reply_address(nkontor, gid, ph["id"], 0)
                asking = [m for m in mailbox.to(ADDRESSES[0]) if m.message["Reply-To"] == address]
                assert asking, "no mail asked seat 0"
                s.add(asking[-1].message["Reply-To"], asking[-1].message["Reply-To"].split("@")[0])
                mail_in(listener, ADDRESSES[0], asking[-1].message["Reply-To"],
                        f"#orders {gid} 0 {ph['id']}\n{json.dumps(order)}\n#end\n")
            elif way == "token":
                token = s.order_token(players[seat], ph["id"], order)
                mail_in(listener, ADDRESSES[2], "orders@kontor.test", f"#orders\n{token}\n#end\n")
            else:
                nkontor.submit(gid, ph["id"], seat, order, via="test")
        if step == 2:  # a permanent failure, and reading and changing things over HTTP
            mailbox.fail_next(f"550 5.1.1 <{ADDRESSES[2]}>: no such user", 1)
            for seat, p in players.items():
                assert nclient.get(f"/games/{gid}/view", headers=s.bearer(p)).status_code == 200
                assert nclient.get(f"/games/{gid}/seats/{seat}/deliveries", headers=s.bearer(host)).status_code == 200
        if step == 4:  # the unsubscribe page, its undo, and the unsubscribe address
            path = f"/unsubscribe/{unsubscribe_token(nkontor, ADDRESSES[2])}"
            assert nclient.get(path).status_code == 200
            assert nclient.post(path).status_code == 200
            assert nclient.post(f"{path}/undo").status_code == 200
            assert nclient.get(f"/unsubscribe/{unsubscribe_token(nkontor, ADDRESSES[0])}x").status_code == 404
            mail_in(listener, ADDRESSES[0], "unsubscribe@kontor.test", "stop",
                    subject=unsubscribe_token(nkontor, ADDRESSES[0])[:-2])  # a cut token: refused, logged
    else:
        raise AssertionError("the game did not finish")
    for m in mailbox.messages:  # the tokens in the mails' links and headers
        s.add(m.message["Reply-To"], (m.message["List-Unsubscribe"] or "").split("?subject=")[-1].rstrip(">"))
    s.values.discard("orders@kontor.test")

    lines = captured.getvalue().splitlines()
    raw = [rec.getMessage() for rec in caplog.records if rec.name.startswith("kontor")]
    assert len(lines) > 100 and raw
    # Every channel was used, and failed once.
    assert any("attempt 1: retrying (500)" in line for line in lines)
    assert any("550" in line and "no such user" in line for line in lines)
    assert any("inbound mail" in line and "accepted" in line for line in lines)
    leaks = {secret: [line for line in lines + raw if secret in line] for secret in s.values}
    assert {secret: found[:3] for secret, found in leaks.items() if found} == {}

    # JSON lines with the request or job id, and the game when it is known.
    records = [json.loads(line) for line in lines]
    assert all({"time", "level", "logger", "id", "game", "message"} <= set(rec) for rec in records)
    jobs = [rec for rec in records if rec["logger"] in ("kontor.webhooks", "kontor.mail")]
    assert jobs and all(rec["game"] == gid and rec["id"] not in ("-", None) for rec in jobs)


@pytest.mark.parametrize(("text", "shown"), [
    ("mail to ada.lovelace+x@example.org failed", "mail to a***@example.org failed"),
    ("reply to orders+g1.4.1.abcdefghijklmnop@kontor.test", "reply to o***@kontor.test"),
    ("Authorization: Bearer not.a.jws", "Authorization: Bearer ***"),
    ("token eyJhbGciOiJFZERTQSJ9.eyJnYW1lIjoiYSJ9.c2ln here", "token eyJ*** here"),
    ("secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw= ok", "secret whsec_*** ok"),
    ("GET /unsubscribe/YWRhQGV4YW1wbGUub3Jn.abcdefghijklmnopqrstuvwx/undo", "GET /unsubscribe/***/undo"),
    ("subject YWRhQGV4YW1wbGUub3Jn.abcdefghijklmnopqrstuvwx", "subject ***"),
    ("redis://:hunter2@cache:6379/0", "redis://***@cache:6379/0"),
    ("smtp://user:pa%40ss@mail.example.org:587", "smtp://***@mail.example.org:587"),
    ("see https://hooks.example.org/x?token=abc#f now", "see https://hooks.example.org/x?*** now"),
    ("module service.channels.webhook.deliver; a***@example.org; step 14", None),
])
def test_redact_masks_tokens_secrets_and_addresses(text: str, shown: str | None) -> None:
    assert logs.redact(text) == (text if shown is None else shown)


def test_an_http_clients_request_lines_lose_their_paths() -> None:
    line = 'http://127.0.0.1:8000 "POST /h1/key-in-the-path HTTP/1.1" 204 0'
    assert "key-in-the-path" in logs.redact(line)
    assert logs.redact(line, outgoing=True) == 'http://127.0.0.1:8000 "POST /*** HTTP/1.1" 204 0'


def test_a_line_is_json_with_the_ids_and_a_masked_traceback() -> None:
    out = io.StringIO()
    log = logging.getLogger("kontor.test_logs")
    handler = logs.install(logging.StreamHandler(out))
    log.addHandler(handler)
    log.propagate = False
    try:
        logs.tag("r-abc", "g1")
        try:
            raise ValueError("no such user ada@example.org")
        except ValueError:
            log.exception("sending to %s failed", "bo@example.org", extra={"to": "cy@example.org"})
        logs.tag("job-1")
        log.warning("plain")
    finally:
        log.removeHandler(handler)
        log.propagate = True
        logs.tag("-")
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert (first["level"], first["logger"], first["id"], first["game"]) == ("ERROR", "kontor.test_logs", "r-abc", "g1")
    assert first["message"] == "sending to b***@example.org failed" and first["to"] == "c***@example.org"
    assert "a***@example.org" in first["exc_info"] and "ada@" not in out.getvalue()
    assert (second["id"], second["game"], second["message"]) == ("job-1", None, "plain")
