"""`kontor order` without an order, `kontor act`, and `-k` with display names, against a
real HTTP server (the CLI tests' harness), with the test title Stall
(tests/service/stall.py): seat 0 buys in step 1; any seat may hoard a good at any time."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import service.client.cli as cli_module
from service.client.cli import by_names
from tests.service.client.test_cli import Shell
from tests.service.stall import registered


@pytest.fixture(autouse=True)
def stall() -> Iterator[Any]:
    with registered() as game:
        yield game


@pytest.fixture
def table(tmp_path: Path, live_server: str) -> tuple[Shell, str]:
    sh = Shell(tmp_path / "kontor", live_server)
    for name in ("alice", "bob", "carol"):
        sh("keygen", "--name", name)
    game = sh("game", "create", "--title", "stall", "--seats", "2", "--as", "alice", "-q").stdout.strip()
    sh("seat", "join", game, "--as", "bob", "--name", "Böb", "--seat", "0")
    sh("seat", "join", game, "--as", "carol", "--name", "Carol", "--seat", "1")
    sh("game", "start", game, "--as", "alice")
    return sh, game


def stock(sh: Shell, game: str) -> Any:
    return sh.json("status", game, "--as", "bob", "--json")["view"]["state"]["stock"]


def test_without_a_terminal_it_prints_the_options_and_how_to_answer(table: tuple[Shell, str]) -> None:
    sh, game = table
    out = sh("order", game, "--as", "bob").stdout
    assert out.splitlines() == [
        "Buy 1 to 3 of a good, or pass.", "What do you buy?", "  1. Wein", "  2. Tuch", "  3. Pass",
        f'Answer with: kontor order {game} --as bob --say "<your words>" (or --pick N, repeatable, in order)']
    out = sh("order", game, "--as", "bob", "--pick", "2").stdout  # incomplete: says what comes next
    assert "How many Tuch?" in out and "  How many: a whole number from 1 to 2" in out
    assert "order accepted" not in out


def test_say_and_pick_send_the_order_signed(table: tuple[Shell, str], worker: Any) -> None:
    sh, game = table
    out = sh("order", game, "--as", "bob", "--say", "2 wein").stdout
    assert out.startswith("Order: Buy 2 Wein.\norder accepted: game")
    worker()
    assert stock(sh, game) == {"wein": 1, "tuch": 2}
    out = sh("order", game, "--as", "carol", "--pick", "2", "--pick", "1").stdout  # Tuch, 1
    assert out.startswith("Order: Buy 1 Tuch.\norder accepted")
    worker()
    assert stock(sh, game) == {"wein": 1, "tuch": 1}


def test_bad_words_and_picks_are_refused_and_nothing_is_sent(table: tuple[Shell, str]) -> None:
    sh, game = table
    r = sh("order", game, "--as", "bob", "--say", "a pint of beer", ok=False)
    assert r.exit_code == 1 and "bad_pick" in r.stderr
    r = sh("order", game, "--as", "bob", "--pick", "7", ok=False)
    assert r.exit_code == 1 and "bad_pick" in r.stderr
    r = sh("order", game, "--as", "carol", ok=False)  # not carol's turn
    assert r.exit_code == 1 and "not_requested" in r.stderr
    assert sh.json("status", game, "--json")["phase"]["answered"] == []


def test_interactive_on_a_terminal(table: tuple[Shell, str], monkeypatch: Any, worker: Any) -> None:
    sh, game = table
    monkeypatch.setattr(cli_module, "interactive", lambda: True)
    r = sh.runner.invoke(cli_module.cli, ["order", game, "--as", "bob"], env=sh.env, input="beer\nTUCH\n5\n2\ny\n",
                         catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "  1. Wein\n  2. Tuch\n  3. Pass" in r.output
    assert "Not one of the choices" in r.stderr  # "beer", then 5 is out of bounds
    assert "How many: a whole number from 1 to 2" in r.output
    assert "Send: Buy 2 Tuch? [Y/n]" in r.output and "order accepted" in r.output
    worker()
    assert stock(sh, game) == {"wein": 3, "tuch": 0}


def test_act_lists_and_takes_actions(table: tuple[Shell, str], monkeypatch: Any) -> None:
    sh, game = table
    out = sh("act", game, "--as", "carol").stdout
    assert out.splitlines()[:4] == ["You may hoard a good at any time.", "Which good do you hoard?",
                                    "  1. Hoard 1 Wein", "  2. Hoard 1 Tuch"]
    out = sh("act", game, "--as", "carol", "--say", "wein").stdout
    assert out.splitlines() == ["Action: Hoard 1 Wein for 2 coins.", "action taken in step 1 (carol)",
                                "  Carol hoarded 1 Wein.", "  Carol has 3 coins left."]
    monkeypatch.setattr(cli_module, "interactive", lambda: True)
    r = sh.runner.invoke(cli_module.cli, ["act", game, "--as", "carol"], env=sh.env, input="2\ny\n",
                         catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "Send: Hoard 1 Tuch for 2 coins? [Y/n]" in r.output and "Carol has 1 coins left." in r.output
    r = sh("act", game, "--as", "carol", ok=False)  # 1 coin: nothing to do now
    assert r.exit_code == 1 and "no_action" in r.stderr
    out = sh("act", game, "--as", "bob", "--json", '{"hoard": "wein"}').stdout
    assert "Böb hoarded 1 Wein." in out
    assert stock(sh, game) == {"wein": 1, "tuch": 1}


def test_k_takes_display_names(table: tuple[Shell, str], worker: Any) -> None:
    sh, game = table
    out = sh("order", game, "--as", "bob", "-k", "buy=TUCH", "-k", "count=1").stdout
    assert '{"buy":"tuch","count":1}' in out.replace(" ", "")
    worker()
    assert stock(sh, game) == {"wein": 3, "tuch": 1}


def test_by_names_reads_labels_ids_and_players() -> None:
    schema = {"properties": {"to": {"enum": ["BRU", "KOE"], "x-labels": {"BRU": "Brügge", "KOE": "Köln"}},
                             "target": {"type": "integer"}, "seat": {"enum": [0, 2]}, "note": {"type": "string"}}}
    names = ["Ada", "Jürgen", "Bob"]
    assert by_names({"to": "bruegge", "target": "JURGEN", "seat": "bob", "note": "Köln"}, schema, names) == \
        {"to": "BRU", "target": 1, "seat": 2, "note": "Köln"}
    assert by_names({"to": "koe", "seat": "Jürgen", "x": 5}, schema, names) == {"to": "KOE", "seat": "Jürgen",
                                                                                 "x": 5}
    assert by_names({"to": "Paris"}, schema, names) == {"to": "Paris"}  # names nothing: the server refuses it
