"""`kontor game rematch` (issue 25, item 5): the host starts the rematch of a finished game;
the key file learns it for every local identity (the host's fresh host key, each seat held
by the same public key), so `kontor status` and `kontor order` work on it at once."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.playertext import problems
from tests.service.client.test_cli import Shell
from tests.service.stall import registered


@pytest.fixture(autouse=True)
def stall() -> Iterator[Any]:
    with registered() as game:
        yield game


def test_rematch_cli_records_the_new_game_and_a_seat_orders_in_it(tmp_path: Path, live_server: str,
                                                                   worker: Any) -> None:
    sh = Shell(tmp_path / "kontor", live_server)
    for name in ("alice", "anna", "bert"):
        sh("keygen", "--name", name)
    gid = sh("game", "create", "--title", "stall", "--seats", "3", "--as", "alice", "--name", "Friday table",
             "-q").stdout.strip()
    sh("seat", "join", gid, "--as", "anna", "--name", "Anna")
    sh("seat", "join", gid, "--as", "bert", "--name", "Bert")
    sh("seat", "bot", gid, "2", "--kind", "passer", "--as", "alice")
    out = sh("game", "rematch", gid, "--as", "alice", ok=False)  # not over yet
    assert out.exit_code != 0 and "not over yet" in out.output
    sh("game", "start", gid, "--as", "alice")
    who = {0: "anna", 1: "bert"}
    for _ in range(12):
        worker()
        g = sh.json("status", gid, "--json")
        if g["game"]["status"] == "finished":
            break
        phase = g["phase"]
        for seat in phase["requested"]:
            if seat in who and seat not in phase["answered"]:
                sh("order", gid, "--as", who[seat], "--default")
    worker()

    out = sh("game", "rematch", gid)  # the one identity that hosts it
    said = out.stdout
    keys = json.loads((tmp_path / "kontor" / "keys.json").read_text())
    [new] = [g for g in keys["identities"]["anna"]["games"] if g != gid]
    assert said.startswith(f"the rematch of game {gid} started: game {new}, “Friday table (rematch)”, with "
                           "Anna (your identity anna), Bert (your identity bert) and ")
    assert "step 1 waits for Anna" in said
    assert problems(said.replace(gid, "").replace(new, "")) == []
    # the key file: alice hosts it with a fresh key of its own; anna and bert hold their seats
    host = keys["identities"]["alice"]["games"][new]["host"]
    assert host["kid"] != keys["identities"]["alice"]["games"][gid]["host"]["kid"]
    assert keys["identities"]["anna"]["games"][new]["seat"] == 0
    assert keys["identities"]["bert"]["games"][new]["seat"] == 1
    # status and order just work; status says where each game's rematch is
    shown = sh("status", new).stdout
    assert f"A rematch of game {gid}: the same players, a new shuffle" in shown
    assert f"Rematch: game {new} (`kontor status {new}`)" in sh("status", gid, "--as", "anna").stdout
    assert "step 1 seat 0" in sh("order", new, "--default").stdout  # the one identity asked
    # asked again: the same rematch, said so
    again = sh("game", "rematch", gid, "--as", "alice").stdout
    assert again.startswith(f"the rematch of game {gid} was started before: game {new},")
