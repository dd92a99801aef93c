"""Whose turn it is, from the command line: the README's quickstart works whichever seat
the game draws to start; an order for an identity that is not asked sends nothing and
says whose turn it is; `kontor games` lists my games, those waiting for me first;
`--json` on every reading command; colour only on a terminal, never with NO_COLOR."""

from __future__ import annotations

import json
import re
import shlex
import threading
from pathlib import Path
from typing import Any

import click
import pytest

from service.client.cli import cli
from service.client.output import Out, plain_table, style_of, use_rich
from tests.service.client.test_cli import Shell, create

README = Path(__file__).resolve().parents[3] / "README.md"


def quickstart() -> list[list[str]]:
    """The shell lines of the README's quickstart, as argument lists (comments dropped)."""
    text = README.read_text(encoding="utf-8")
    part = text[text.index("## Quickstart"):]
    part = part[:part.index("\n## ", 4)]
    lines: list[list[str]] = []
    for block in re.findall(r"```sh\n(.*?)```", part, re.S):
        lines += [shlex.split(line, comments=True) for line in block.splitlines() if line.strip()]
    return lines


def run_quickstart(sh: Shell, worker: Any, seed: int) -> dict[str, str]:
    """Every line of the quickstart, in order, as a user would type it (the worker runs
    between lines, as it does beside `make run`); each must exit 0. The output by command."""
    game = ""
    said: dict[str, str] = {}
    for argv in quickstart():
        if argv[0] == "export":
            continue
        worker()
        if argv[0].startswith("GAME=$("):
            argv = [argv[0].removeprefix("GAME=$("), *argv[1:]]
            argv[-1] = argv[-1].removesuffix(")")
            assert argv[:3] == ["kontor", "game", "create"], argv
            game = sh(*argv[1:], "--seed", str(seed)).stdout.strip()
            continue
        assert argv[0] == "kontor", argv
        args = [game if a == "$GAME" else a for a in argv[1:]]
        result = sh(*args)  # exit status 0, or the assertion names the line and its output
        said.setdefault(" ".join(args[:2]), result.stdout)
    said["game"] = game
    return said


def test_the_readme_quickstart_works_whoever_starts(tmp_path: Path, live_server: str, worker: Any) -> None:
    assert any(a[:2] == ["kontor", "order"] for a in quickstart())
    starters: set[str] = set()
    for seed in range(1, 12):
        sh = Shell(tmp_path / f"home{seed}", live_server)
        said = run_quickstart(sh, worker, seed)
        first = re.search(r"step 1 waits for (\w+)", said["game start"])
        assert first, said["game start"]
        starters.add(first.group(1))
        assert "Your turn: " in said[f"status {said['game']}"]
        assert "order accepted" in said[f"order {said['game']}"]
        assert said[f"verify {said['game']}"].rstrip().endswith("it checks out.")
        if starters == {"Alice", "Bob"}:
            break
    assert starters == {"Alice", "Bob"}, starters


@pytest.fixture
def two(tmp_path: Path, live_server: str, worker: Any) -> tuple[Shell, str]:
    """alice (seat 0, host, starts) and bob (seat 1) in one key file; step 1 asks alice."""
    sh = Shell(tmp_path / "kontor", live_server)
    for name in ("alice", "bob", "carol"):
        sh("keygen", "--name", name)
    game = create(sh, 2, "--option", "start_player=0")
    sh("seat", "join", game, "--as", "alice", "--name", "Alice")
    sh("seat", "join", game, "--as", "bob", "--name", "Bob")
    started = sh("game", "start", game, "--as", "alice")
    assert "step 1 waits for Alice (your identity alice)" in started.stdout
    worker()
    return sh, game


def test_an_order_out_of_turn_says_whose_turn_it_is_and_sends_nothing(two: tuple[Shell, str], worker: Any) -> None:
    sh, game = two
    for way in (["--default"], ["-k", "goods=[]"], ["--json", '{"goods": []}']):
        refused = sh("order", game, "--as", "bob", *way, ok=False)
        assert refused.exit_code == 1 and refused.stdout == ""
        assert refused.stderr.startswith("error not_requested: it is not bob's turn: step 1 waits for Alice\n")
        assert f"hint: that is your identity alice: `kontor order {game} --as alice --default`" in refused.stderr
    phase = sh.json("status", game, "--as", "alice", "--json")["phase"]
    assert phase["id"] == 1 and phase["answered"] == []  # nothing was sent

    # Without --as: the identity the step waits for.
    assert "step 1 seat 0 (alice)" in sh("order", game, "-k", "goods=[]").stdout
    worker()
    assert "step 2 seat 1 (bob)" in sh("order", game, "--default").stdout
    # An identity without a seat in the game is told so, with a hint.
    nothing = sh("order", game, "--as", "carol", "--default", ok=False)
    assert nothing.exit_code == 1 and nothing.stderr.startswith("error unknown_key: ")
    assert "check --as" in nothing.stderr


def test_order_wait_waits_for_the_turn_then_sends(two: tuple[Shell, str], live_server: str, worker: Any,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import service.client.cli as cli_module
    from service.client.http import Api, order_token
    from service.client.keystore import Keystore

    sh, game = two
    late = sh("order", game, "--as", "bob", "--default", "--wait", "1", ok=False)  # alice does not answer
    assert late.exit_code == 1 and "error not_requested: it is not bob's turn: step 1 waits for Alice" in late.stderr
    assert sh.json("status", game, "--json")["phase"]["answered"] == []

    real_sleep, looks = cli_module.time.sleep, []

    def meanwhile(seconds: float) -> None:  # while bob waits, alice answers and the step resolves
        if threading.current_thread() is not threading.main_thread():  # the server's and worker's threads
            return real_sleep(seconds)  # (stream leases, resolution heartbeats) sleep as ever
        looks.append(seconds)
        if len(looks) == 2:
            alice = Keystore.load(Path(sh.env["KONTOR_HOME"] or "")).get("alice")
            Api(live_server).submit(game, 1, 0, order_token(alice.key, game, 1, 0, {"goods": []}))
            worker()
        real_sleep(0)

    monkeypatch.setattr(cli_module.time, "sleep", meanwhile)
    sent = sh("order", game, "--as", "bob", "--default", "--wait", "10m").stdout
    assert "order accepted: game" in sent and "step 2 seat 1 (bob)" in sent and len(looks) == 2
    assert all(0 < s <= cli_module.WAIT_POLL for s in looks)


def test_a_step_waiting_for_several_of_my_identities(two: tuple[Shell, str], worker: Any) -> None:
    sh, game = two
    for _ in range(20):  # defaults until a sealed step asks both
        phase = sh.json("status", game, "--json")["phase"]
        if phase["sealed"] and len(phase["requested"]) == 2:
            break
        sh("order", game, "--default")
        worker()
    else:
        raise AssertionError("no sealed step asking both seats")
    which = sh("order", game, "-k", "bid=0", ok=False)
    assert which.exit_code == 1 and "error which_identity: " in which.stderr and "alice and bob" in which.stderr
    both = sh("order", game, "--default").stdout
    assert f"step {phase['id']} seat 0 (alice)" in both and f"step {phase['id']} seat 1 (bob)" in both
    again = sh("order", game, "--default", ok=False)  # both answered: the step resolves (or did)
    assert again.exit_code == 1 and "error not_requested: none of your identities is asked" in again.stderr


def test_games_lists_my_games_waiting_for_me_first(two: tuple[Shell, str], live_server: str, worker: Any) -> None:
    sh, waiting = two
    quiet = create(sh, 2, host="carol")  # carol hosts a lobby
    other = Shell(Path(sh.env["KONTOR_HOME"] or "").with_name("dave"), live_server)
    other("keygen", "--name", "dave")
    theirs = create(other, 2, "--option", "start_player=0", host="dave")  # running, waiting for dave
    other("seat", "join", theirs, "--as", "dave", "--name", "Dave", "--seat", "0")
    sh("seat", "join", theirs, "--as", "bob", "--name", "Bob", "--seat", "1")
    other("game", "start", theirs, "--as", "dave")
    worker()

    rows = sh.json("games", "--json")
    assert [r["game"] for r in rows][0] == waiting and rows[0]["your_turn"] == ["alice"]
    assert set(rows[0]) == {"game", "url", "name", "title", "title_name", "status", "step", "kind", "sealed",
                            "deadline", "paused_since", "waiting_for", "yours", "your_turn", "error"}
    assert rows[0]["waiting_for"] == [{"seat": 0, "name": "Alice"}] and rows[0]["step"] == 1
    alice = next(m for m in rows[0]["yours"] if m["identity"] == "alice")
    assert alice["seat"] == 0 and alice["host"] and alice["requested"] and alice["asked"].strip()
    assert [r["game"] for r in rows] == [waiting, theirs, quiet]  # mine to answer, running, lobby
    assert rows[1]["your_turn"] == [] and rows[1]["waiting_for"] == [{"seat": 0, "name": "Dave"}]
    assert rows[1]["yours"] == [{"identity": "bob", "seat": 1, "host": False, "requested": False,
                                 "answered": False, "asked": None}]
    assert rows[2]["status"] == "lobby" and rows[2]["yours"][0]["identity"] == "carol"

    text = sh("games").stdout
    assert "\x1b[" not in text
    head, first = text.splitlines()[:2]
    assert head.split()[:5] == ["GAME", "TITLE", "STATUS", "STEP", "WAITS"] and first.startswith(waiting)
    assert "YOU: alice" in first and f"Your turn in {waiting} as alice: " in text
    assert sh.json("games", "--as", "carol", "--json")[0]["game"] == quiet

    # A game its server no longer knows is a row saying so, not a crash.
    home = Path(sh.env["KONTOR_HOME"] or "")
    doc = json.loads((home / "keys.json").read_text())
    doc["identities"]["carol"]["games"]["0000000000"] = {"url": live_server, "seat": 0}
    (home / "keys.json").write_text(json.dumps(doc))
    gone = next(r for r in sh.json("games", "--json") if r["game"] == "0000000000")
    assert gone["error"].startswith("game_not_found")
    assert "unknown (game_not_found" in sh("games").stdout


def test_every_reading_command_takes_json() -> None:
    reading = {"status", "games", "keys", "catalog", "watch", "messages", "verify", "seat contact",
               "seat deliveries", "keygen", "game start", "seat join"}
    found = {}

    def walk(group: click.Group, prefix: str) -> None:
        for name, cmd in group.commands.items():
            full = f"{prefix}{name}"
            if isinstance(cmd, click.Group):
                walk(cmd, full + " ")
            else:
                found[full] = any("--json" in p.opts for p in cmd.params if isinstance(p, click.Option))

    walk(cli, "")
    assert reading <= set(found)
    assert [c for c in sorted(reading) if not found[c]] == []


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)

    class Tty:
        def isatty(self) -> bool:
            return True

    assert use_rich(Tty()) is True and use_rich() is False  # pytest's captured stdout is no terminal
    monkeypatch.setenv("NO_COLOR", "1")
    assert use_rich(Tty()) is False
    monkeypatch.delenv("NO_COLOR")

    lines = ["Die Händler: game x, running", "Step 3 — round 1", "Waiting for Bob (you).", "Your turn: buy [3] goods"]
    Out(rich=True).lines(lines)
    coloured = capsys.readouterr().out
    assert "\x1b[" in coloured and "buy [3] goods" in coloured  # brackets are text, not rich markup
    Out(rich=False).lines(lines)
    assert capsys.readouterr().out == "\n".join(lines) + "\n"
    assert [style_of(line) for line in lines] == [None, "head", "wait", "turn"]

    Out(rich=True).table(["game", "status"], [["abc", "running"]], ["turn"])
    assert "abc" in capsys.readouterr().out
    assert plain_table(["game", "waits for"], [["abc", "YOU: bob"], ["abcdef", ""]]) == \
        ["GAME    WAITS FOR", "abc     YOU: bob", "abcdef"]


def test_no_color_and_a_pipe_keep_status_plain(two: tuple[Shell, str]) -> None:
    sh, game = two
    sh.env["FORCE_COLOR"] = "1"
    assert "\x1b[" in sh("status", game).stdout
    sh.env["NO_COLOR"] = "1"
    assert "\x1b[" not in sh("status", game).stdout and "Your turn: " in sh("status", game).stdout
