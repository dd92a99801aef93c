"""`kontor game pause`, `game resume` and `game extend` (issue 25): the host's clock from
a shell, signed with the game's host key from the key file; `kontor status` says the
game is paused, `kontor watch` tells the events in words; a seat's identity is refused."""

from __future__ import annotations

from pathlib import Path

from service.client.cli import time_left
from tests.playertext import problems
from tests.service.client.test_cli import Shell, create


def test_pause_resume_and_extend_from_the_cli(tmp_path: Path, live_server: str) -> None:
    sh = Shell(tmp_path / "kontor", live_server)
    for name in ("alice", "bob", "carol"):
        sh("keygen", "--name", name)
    game = create(sh, 2)
    sh("seat", "join", game, "--as", "bob", "--name", "Bob", "--seat", "0")
    sh("seat", "join", game, "--as", "carol", "--name", "Carol")
    refused = sh("game", "pause", game, "--as", "alice", ok=False)
    assert refused.exit_code != 0 and "not started" in refused.output and "kontor game start" in refused.output
    sh("game", "start", game, "--as", "alice")

    before = sh.json("status", game, "--json")["game"]["phase"]["deadline"]
    out = sh("game", "pause", game, "--as", "alice").stdout
    assert f"game {game} is paused since" in out and "the clock is stopped" in out
    status = sh("status", game, "--as", "bob").stdout
    assert "Paused by the host since" in status and "the clock is stopped" in status
    assert "paused by the host" in sh("games", "--as", "bob").stdout
    assert sh.json("games", "--as", "bob", "--json")[0]["paused_since"]
    twice = sh("game", "pause", game, "--as", "alice", ok=False)
    assert "paused" in twice.output and "kontor game resume" in twice.output
    not_host = sh("game", "pause", game, "--as", "bob", ok=False)
    assert not_host.exit_code != 0 and "host key" in not_host.output, not_host.output

    out = sh("game", "extend", game, "2d", "--as", "alice").stdout
    assert out.startswith("extended by 2 days;") and "paused since" in out
    g = sh.json("game", "extend", game, "1h", "--as", "alice", "--json")
    assert g["paused_since"] and g["phase"]["deadline"] > before
    bad = sh("game", "extend", game, "soon", "--as", "alice", ok=False)
    assert bad.exit_code == 2 and "not a duration" in bad.output

    out = sh("game", "resume", game, "--as", "alice").stdout
    assert out.startswith(f"resumed; game {game}: step 1, deadline ")
    assert "Paused" not in sh("status", game, "--as", "bob").stdout
    again = sh("game", "resume", game, "--as", "alice", ok=False)
    assert "not paused" in again.output and "kontor game pause" in again.output

    watched = sh("watch", game, "--once").stdout
    lines = [line for line in watched.splitlines() if "host" in line]
    assert len(lines) == 4, watched
    assert "The host paused the game; the clock is stopped" in lines[0]
    assert "The host extended the deadline by 2 days" in lines[1]
    assert "The host extended the deadline by 1 hour" in lines[2]
    assert "The host resumed the game after" in lines[3]
    assert all(not problems(line.split(": ", 1)[1]) for line in lines), lines


def test_pause_status_says_the_time_left_as_it_stood_when_paused() -> None:
    """While paused, `kontor status` does not count down to the frozen deadline: it says
    the time that was left when the host paused, and that the clock is stopped."""
    assert time_left("2026-12-06T15:00:00+00:00", paused="2026-12-06T14:00:30+00:00") == \
        "59m, the clock stopped (the game is paused)"


def test_pause_an_order_while_paused_is_told_it_waits_for_the_resume(tmp_path: Path, live_server: str) -> None:
    """The last order of a paused step is received, and its receipt says the step resolves
    when the host resumes the game (not "waiting for the other seats")."""
    sh = Shell(tmp_path / "kontor", live_server)
    for name in ("alice", "bob", "carol"):
        sh("keygen", "--name", name)
    game = create(sh, 2)
    sh("seat", "join", game, "--as", "bob", "--name", "Bob", "--seat", "0")
    sh("seat", "join", game, "--as", "carol", "--name", "Carol", "--seat", "1")
    sh("game", "start", game, "--as", "alice")
    sh("game", "pause", game, "--as", "alice")
    (asked,) = sh.json("status", game, "--json")["game"]["phase"]["requested"]
    out = sh("order", game, "--as", ("bob", "carol")[asked], "--default").stdout
    assert "everyone has answered; the game is paused, so the step resolves when the host resumes it" in out, out
