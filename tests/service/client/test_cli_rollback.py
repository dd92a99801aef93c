"""`kontor game rollback` (host) and `kontor rollback agree|refuse` (seats), and `kontor verify`
on a game that was rolled back (issue 25). With the test title Stall (tests/service/stall.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.core.kontor import Kontor
from tests.playertext import problems
from tests.service.client.test_cli import Shell, play_defaults
from tests.service.stall import registered


@pytest.fixture(autouse=True)
def stall() -> Iterator[Any]:
    with registered() as game:
        yield game


@pytest.fixture
def shell(tmp_path: Path, live_server: str) -> Shell:
    return Shell(tmp_path / "kontor", live_server)


def stall_game(sh: Shell) -> str:
    for name in ("alice", "bob", "carol"):
        sh("keygen", "--name", name)
    game = sh("game", "create", "--title", "stall", "--seats", "2", "--as", "alice", "--seed", "7", "-q").stdout.strip()
    sh("seat", "join", game, "--as", "bob", "--name", "Bob", "--seat", "0")
    sh("seat", "join", game, "--as", "carol", "--name", "Carol", "--seat", "1")
    sh("game", "start", game, "--as", "alice")
    return game


def test_rollback_from_the_command_line(shell: Shell, worker: Any, kontor: Kontor) -> None:
    sh = shell
    game = stall_game(sh)
    who = {0: "bob", 1: "carol"}
    play_defaults(sh, game, who, worker, 2)  # steps 1 and 2: step 3 open
    worker()
    listed = sh("game", "rollback", game).stdout
    assert "The open step is 3. You may go back to:\n  Step 2: Carol's turn: buy 1 to 3 of a good\n" \
           "  Step 1: Bob's turn: buy 1 to 3 of a good\n" in listed
    refused = sh("game", "rollback", game, "--to", "2", "--as", "bob", ok=False)
    assert refused.exit_code == 1 and refused.stderr.startswith("error not_host: ")
    out = sh("game", "rollback", game, "--to", "2", "--as", "alice").stdout
    assert out.startswith("The host rolled the game back to step 2 (Carol's turn: buy 1 to 3 of a good); it is "
                          "open again as step 4.")
    assert not problems(out)
    # a hoard (its private event) makes the next one wait for consent
    kontor.act(game, 0, {"hoard": "wein"}, via="test")
    out = sh("game", "rollback", game, "--to", "1", "--as", "alice").stdout
    assert "The host proposes to go back to step 1 (Bob's turn: buy 1 to 3 of a good)." in out
    assert "Waiting for Bob and Carol." in out and "Why: step 4 told some players what the others did not see" in out
    assert sh("rollback", "agree", game, "--as", "bob").stdout.startswith("Your agreement is recorded")
    out = sh("rollback", "agree", game, "--as", "carol").stdout
    assert out.startswith("You agreed, and so did every other player: the game is back.\nThe host rolled the game "
                          "back to step 1 (Bob's turn: buy 1 to 3 of a good) with every player's consent; it is open "
                          "again as step 5.")
    refused = sh("rollback", "refuse", game, "--as", "bob", ok=False)
    assert refused.stderr.startswith("error no_rollback_pending: ")
    play_defaults(sh, game, who, worker, 6)
    worker()
    out = sh("verify", game).stdout
    assert ("Verified: 4 steps of the game that stands, and the steps 2 rollbacks undid, replayed as well (1 step "
            "at step 3, back to step 2; 1 step at step 4, back to step 1); every draw, state and event matches.") in out
    assert out.endswith("it checks out.\n")
