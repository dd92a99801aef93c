"""The `kontor` commands for contacts, deliveries, in-game messages and mailed orders,
against a real HTTP server on the notification settings (mail to the test mailbox,
loopback webhooks allowed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from service import create_app
from service.client.cli import cli, message_lines, parse_recipients
from service.client.http import Api
from service.config import Settings
from tests.service.channels import work_all
from tests.service.client.test_cli import Shell, create


@pytest.fixture
def app(notify_settings: Settings, nkontor: Any) -> Any:
    """The app the live server serves: on the notification settings."""
    app = create_app(notify_settings, nkontor)
    app.config["TESTING"] = True
    return app


@pytest.fixture
def table(tmp_path: Path, live_server: str) -> tuple[Shell, str]:
    """A running 3-seat game: alice hosts, bob, carol and dave hold seats 0, 1 and 2."""
    sh = Shell(tmp_path / "kontor", live_server)
    for name in ("alice", "bob", "carol", "dave"):
        sh("keygen", "--name", name)
    game = create(sh, 3)
    for seat, name in enumerate(("bob", "carol", "dave")):
        sh("seat", "join", game, "--as", name, "--name", name.title(), "--seat", str(seat))
    sh("game", "start", game, "--as", "alice")
    return sh, game


# -- pure helpers -----------------------------------------------------------------------
def test_recipients_and_message_lines() -> None:
    assert parse_recipients("all") == "all" and parse_recipients(" 1, 2 ") == [1, 2]
    line = message_lines({"id": 9, "at": None, "phase": 3, "from": 0, "to": [1, 2], "text": "a\nb"},
                         {0: "Bob", 1: "Carol", 2: None})
    assert line == ["#9 -- step 3 Bob (seat 0) to Carol (seat 1), seat 2 (private):", "    a", "    b"]


# -- contact settings -------------------------------------------------------------------
def test_a_seat_shows_and_changes_its_contact(table: tuple[Shell, str], hooks: Any) -> None:
    sh, game = table
    shown = sh("seat", "contact", game, "--as", "bob").stdout
    assert "email      none" in shown and "reminders  off" in shown
    assert "mail       when something is asked of you" in shown

    out = sh("seat", "contact", game, "--as", "bob", "--email", "Bob@Example.org", "--tz", "Europe/Berlin",
             "--remind", "3h", "--digest").stdout
    assert "email      Bob@example.org (ok)" in out and "time zone  Europe/Berlin" in out
    assert "reminders  3h before a deadline" in out and "mail       one digest a day" in out
    assert "secret" not in out.replace("no signing secret", "")

    made = sh("seat", "contact", game, "--as", "bob", "--webhook", hooks.url("/bob")).stdout
    secret = next(w for w in made.split() if w.startswith("whsec_"))
    assert f"webhook signing secret: {secret}" in made and "keep it, it is not shown again" in made
    again = sh("seat", "contact", game, "--as", "bob").stdout
    assert secret not in again and "(active, signing secret set)" in again and "email      Bob@example.org" in again
    assert "events     every type" in again
    chose = sh("seat", "contact", game, "--as", "bob", "--webhook-events", "game.finished, step.opened").stdout
    assert "events     step.opened, game.finished" in chose
    assert "events     every type" in sh("seat", "contact", game, "--as", "bob", "--all-webhook-events").stdout
    rotated = sh("seat", "contact", game, "--as", "bob", "--rotate-secret").stdout
    assert "webhook signing secret: whsec_" in rotated and secret not in rotated

    data = sh.json("seat", "contact", game, "--as", "bob", "--no-webhook", "--no-remind", "--immediate", "--json")
    assert (data["webhook_url"], data["reminder_lead"], data["delivery"]) == (None, None, "every")
    assert sh.json("seat", "contact", game, "--as", "bob", "--mail", "asked", "--json")["delivery"] == "asked"
    assert data["seat"] == 0 and data["email"] == "Bob@example.org"
    assert sh.json("seat", "contact", game, "--as", "bob", "--remind", "90m", "--json")["reminder_lead"] == 5400


@pytest.mark.parametrize(("args", "code"), [
    (("--as", "bob", "--email", "x@example.org", "--no-email"), "conflicting_options"),
    (("--as", "bob", "--remind", "1h", "--no-remind"), "conflicting_options"),
    (("--as", "bob", "--email", "not an address"), "bad_email"),
    (("--as", "bob", "--tz", "Mars/Olympus"), "bad_timezone"),
    (("--as", "bob", "--webhook", "ftp://example.org/x"), "webhook_target_refused"),
    (("--as", "bob", "--webhook-events", "step.opened", "--all-webhook-events"), "conflicting_options"),
    (("--as", "bob", "--webhook-events", "step.openned"), "invalid_request"),
    (("--as", "alice", "--email", "a@example.org"), "not_seated"),
])
def test_bad_contact_changes_are_refused_with_a_stable_code(table: tuple[Shell, str], args: tuple[str, ...],
                                                            code: str) -> None:
    sh, game = table
    result = sh("seat", "contact", game, *args, ok=False)
    assert result.exit_code == 1 and result.stderr.startswith(f"error {code}: "), result.output
    assert "email      none" in sh("seat", "contact", game, "--as", "bob").stdout


def test_deliveries_are_listed_for_the_seat_and_masked_for_the_host(table: tuple[Shell, str],
                                                                    notify_settings: Settings) -> None:
    sh, game = table
    assert "no deliveries" in sh("seat", "deliveries", game, "--as", "bob").stdout
    sh("seat", "contact", game, "--as", "bob", "--email", "bob@example.org")
    sh("message", game, "--as", "carol", "--to", "0", "Hello Bob")
    work_all(notify_settings)
    mine = sh("seat", "deliveries", game, "--as", "bob").stdout
    assert "email   message.received step 1 -> bob@example.org: sent, 1 attempt" in mine
    hosts = sh("seat", "deliveries", game, "--as", "alice", "--seat", "0").stdout
    assert "-> b***@example.org: sent" in hosts and "bob@example.org" not in hosts
    assert sh.json("seat", "deliveries", game, "--as", "bob", "--json")[0]["type"] == "message.received"


# -- messages ---------------------------------------------------------------------------
def test_players_and_the_host_write_and_read_messages(table: tuple[Shell, str]) -> None:
    sh, game = table
    assert "sent privately to seat 1 (step 1)" in sh("message", game, "--as", "bob", "--to", "1", "psst,",
                                                      "wine").stdout
    assert "sent to everyone" in sh("message", game, "--as", "carol", "Hello", "table").stdout
    piped = sh.runner.invoke(cli, ["message", game, "--as", "alice", "-"], input="Welcome, traders.\nHave fun.\n",
                             env=sh.env, catch_exceptions=False)
    assert piped.exit_code == 0 and "sent to everyone" in piped.stdout

    carol = sh("messages", game, "--as", "carol").stdout
    assert "Bob (seat 0) to Carol (seat 1) (private):\n    psst, wine" in carol
    assert "Carol (seat 1) to all:\n    Hello table" in carol
    assert "host to all:\n    Welcome, traders.\n    Have fun." in carol
    for reader in (("--as", "dave"), ()):
        seen = sh("messages", game, *reader).stdout
        assert "psst" not in seen and "Hello table" in seen and "Welcome, traders." in seen
    assert [m["text"] for m in sh.json("messages", game, "--as", "bob", "--json")] == \
        ["psst, wine", "Hello table", "Welcome, traders.\nHave fun."]


@pytest.mark.parametrize(("args", "code"), [
    (("--to", "carol", "hi"), "bad_recipients"),
    (("--to", "0", "hi"), "bad_recipients"),
    (("--to", "all", " "), "bad_message"),
])
def test_bad_messages_are_refused_with_a_stable_code(table: tuple[Shell, str], args: tuple[str, ...],
                                                     code: str) -> None:
    sh, game = table
    result = sh("message", game, "--as", "bob", *args, ok=False)
    assert result.exit_code == 1 and result.stderr.startswith(f"error {code}: "), result.output
    assert "no messages yet" in sh("messages", game, "--as", "bob").stdout


# -- orders for a mail ------------------------------------------------------------------
def test_print_token_prints_a_signed_order_and_sends_nothing(table: tuple[Shell, str], live_server: str) -> None:
    sh, game = table
    phase = sh.json("status", game, "--json")["phase"]
    seat = phase["requested"][0]
    who = ("bob", "carol", "dave")[seat]
    result = sh("order", game, "--as", who, "--default", "--print-token")
    token = result.stdout.strip()
    assert token.count(".") == 2 and "#orders" in result.stderr
    assert sh.json("status", game, "--json")["phase"]["answered"] == []
    # The printed token is the order itself: whoever carries it (a mail, here the API) submits it.
    receipt = Api(live_server).submit(game, phase["id"], seat, token)
    assert receipt["seat"] == seat and receipt["via"] == "http"
    explicit = sh("order", game, "--as", who, "-k", "goods=[]", "--step", str(phase["id"]), "--print-token")
    assert explicit.stdout.strip().count(".") == 2 and explicit.stdout.strip() != token
    old_name = sh("order", game, "--as", who, "-k", "goods=[]", "--phase", str(phase["id"]), "--print-token")
    assert old_name.stdout.strip().count(".") == 2 and f"for step {phase['id']}:" in old_name.stderr
