"""`kontor status`, `watch` and `verify` in words, against a real HTTP server: the
headline and Kontor's step (never "phase N" for it), the players' names, the table, what
happened last, what is asked with the time left, the rules link; `--json` and `--view`
for scripts; `verify` replays a finished game from its published history. (A player's
`kontor status` is written to /tmp/kontor-status.txt, to read.)"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from engine.core import registry
from service import words
from tests.service.client.test_cli import Shell, create

GAME = registry.get("haendler")


@pytest.fixture
def table(tmp_path: Path, live_server: str, worker: Any) -> tuple[Shell, str]:
    """A running 3-seat game: alice hosts, bob and carol hold seats 0 and 1, seat 2 is a
    greedy bot; the first step has been answered, so there is a last step to tell."""
    sh = Shell(tmp_path / "kontor", live_server)
    for name in ("alice", "bob", "carol"):
        sh("keygen", "--name", name)
    game = create(sh, 3, "--option", "start_player=0")
    sh("seat", "join", game, "--as", "bob", "--name", "Bob", "--seat", "0")
    sh("seat", "join", game, "--as", "carol", "--name", "Carol", "--seat", "1")
    sh("seat", "bot", game, "2", "--kind", "greedy", "--as", "alice")
    sh("game", "start", game, "--as", "alice")
    worker()
    sh("order", game, "--as", "bob", "--default")
    worker()
    return sh, game


def no_json(text: str) -> None:
    assert not re.search(r"[{}]", text), text
    assert '"players"' not in text and "phase_" not in text


def test_status_says_where_the_game_stands_and_what_is_asked_in_words(table: tuple[Shell, str],
                                                                     live_server: str, tmp_path: Path) -> None:
    sh, game = table
    raw = sh.json("status", game, "--as", "carol", "--json")
    phase, view = raw["phase"], raw["view"]
    assert phase["you"]["requested"], phase  # step 2 asks Carol (seat 1) to buy
    out = sh("status", game, "--as", "carol").stdout
    Path("/tmp/kontor-status.txt").write_text(out)
    no_json(out)
    headline = view.get("headline") or GAME.headline(view["state"])
    assert f"Step {phase['id']} \N{EM DASH} {headline}" in out
    names = [p["name"] for p in raw["game"]["players"]]
    assert "Bob (seat 0)" in out and "Carol (seat 1) <- you (carol)" in out and f"{names[2]} (seat 2" in out
    summary = view.get("summary") or GAME.summary(view["state"], names)
    assert summary.strip().splitlines()[0] in out
    assert "Last step (1):\n  Bob bought nothing." in out
    assert "Your turn: " in out and "Time left: " in out
    asked = phase["you"].get("asked")
    if asked:
        assert f"Your turn: {asked}" in out
    assert f"Rules: {live_server}/titles/haendler/rules" in out
    # "phase N" only as the title's own ("round 1, phase 1: buying goods"), never for Kontor's step.
    assert not re.search(r"\bphase \d", re.sub(r"round \d+, phase \d+", "", out))

    # Someone else's turn, and the public, in words too.
    bob = sh("status", game, "--as", "bob").stdout
    no_json(bob)
    assert f"Nothing is asked of you (Bob) in step {phase['id']}." in bob and "Waiting for Carol" in bob
    # Without --as, of the key file's identities, the one the step waits for: Carol.
    chosen = sh("status", game).stdout
    assert "Carol (seat 1) <- you (carol)" in chosen and "Your turn: " in chosen and "Waiting for Carol (you)" in chosen
    public = Shell(tmp_path / "nobody", live_server)("status", game).stdout
    assert "the public view" in public and "Your turn" not in public


def test_status_json_and_view_stay_raw_for_scripts(table: tuple[Shell, str]) -> None:
    sh, game = table
    raw = sh.json("status", game, "--as", "carol", "--json")
    assert set(raw) == {"game", "phase", "view"} and raw["view"]["state"]["players"]
    view = sh.json("status", game, "--as", "carol", "--view")
    assert view == raw["view"] or view["state"] == raw["view"]["state"]
    assert "money" in view["state"]["players"][1] and "money" not in view["state"]["players"][0]


def test_the_summary_is_built_locally_when_the_server_has_none(table: tuple[Shell, str], monkeypatch: Any) -> None:
    from service.client.http import Api

    sh, game = table
    plain_view = Api.view

    def old_server_view(self: Api, gid: str, key: Any = None) -> dict[str, Any]:
        answer = plain_view(self, gid, key)
        return {k: v for k, v in answer.items() if k not in ("summary", "headline")}

    monkeypatch.setattr(Api, "view", old_server_view)
    raw = sh.json("status", game, "--as", "carol", "--json")
    assert "summary" not in raw["view"]
    out = sh("status", game, "--as", "carol").stdout
    local = GAME.summary(raw["view"]["state"], [p["name"] for p in raw["game"]["players"]])
    assert local.strip().splitlines()[-1].strip() in out and GAME.headline(raw["view"]["state"]) in out
    no_json(out)


def test_watch_prints_the_titles_sentences_with_names(table: tuple[Shell, str]) -> None:
    sh, game = table
    events = [json.loads(line) for line in sh("watch", game, "--as", "carol", "--once", "--json").stdout.splitlines()]
    lines = sh("watch", game, "--as", "carol", "--once").stdout.splitlines()
    no_json("\n".join(lines))
    names = [p["name"] for p in sh.json("status", game, "--as", "carol", "--json")["game"]["players"]]
    assert names[:2] == ["Bob", "Carol"] and names[2].endswith(" (greedy bot)")
    expected = [text for ev in events if (text := words.describe(GAME, ev, names))]
    assert [line.split(": ", 1)[1] for line in lines] == expected
    assert lines[0].endswith(f"step 0: The game begins with Bob, Carol and {names[2]}.")
    assert any(line.endswith("step 1: Bob bought nothing.") for line in lines)
    assert any(line.endswith("step 2: Now it is Carol's turn.") for line in lines)


def finished_game(sh: Shell, worker: Any) -> str:
    sh("keygen", "--name", "alice")
    game = create(sh, 2)
    sh("seat", "bot", game, "0", "--kind", "random", "--as", "alice")
    sh("seat", "bot", game, "1", "--kind", "greedy", "--as", "alice")
    sh("game", "start", game, "--as", "alice")
    worker()
    assert sh.json("status", game, "--json")["game"]["status"] == "finished"
    return game


def test_status_of_a_finished_game_names_the_ranking_and_its_tiebreaks(shell: Shell, worker: Any) -> None:
    game = finished_game(shell, worker)
    g = shell.json("status", game, "--json")["game"]
    out = shell("status", game).stdout
    no_json(out)
    names = [p["name"] for p in g["players"]]
    assert names[0].endswith(" (random bot)") and names[1].endswith(" (greedy bot)")
    assert words.finish_sentence(g["result"], names) in out
    for line in words.ranking_lines(g["result"], names):
        assert f"  {line}" in out
    assert "seat 0" not in "\n".join(line for line in out.splitlines() if line.startswith("  1. "))
    assert f"kontor verify {game}" in out


def test_verify_replays_a_finished_game_and_refuses_a_running_one(shell: Shell, worker: Any) -> None:
    pytest.importorskip("engine.core.verify")
    game = finished_game(shell, worker)
    result = shell("verify", game)
    assert result.exit_code == 0 and result.stdout.rstrip().endswith("it checks out.")
    assert any(line.startswith("Verified: ") for line in result.stdout.splitlines())
    report = shell.json("verify", game, "--json")
    assert report["ok"] is True and report["steps"] > 10

    shell("keygen", "--name", "bob")
    running = create(shell, 2, host="bob")
    shell("seat", "join", running, "--as", "bob", "--seat", "0")
    shell("seat", "bot", running, "1", "--kind", "random", "--as", "bob")
    shell("game", "start", running, "--as", "bob")
    refused = shell("verify", running, ok=False)
    assert refused.exit_code == 1 and refused.stderr.startswith("error game_not_over: ")
    assert "not over yet" in refused.stderr


def test_verify_fails_a_history_that_was_tampered_with(shell: Shell, worker: Any, monkeypatch: Any) -> None:
    pytest.importorskip("engine.core.verify")
    from service.client.http import Api

    game = finished_game(shell, worker)
    honest = Api.history

    def tampered(self: Api, gid: str) -> dict[str, Any]:
        doc = honest(self, gid)
        doc["seed"] = f"{doc['seed']}-changed"
        return doc

    monkeypatch.setattr(Api, "history", tampered)
    result = shell("verify", game, ok=False)
    assert result.exit_code == 1 and "does NOT check out" in result.stdout
    assert any(line.startswith("DIFFERS: ") for line in result.stdout.splitlines())


@pytest.fixture
def shell(tmp_path: Path, live_server: str) -> Shell:
    return Shell(tmp_path / "kontor", live_server)
