"""First contact (issue 22, item 6): every command that takes a game names the real problem
first: no server there, no such game on it, no such seat in it, before any question of
which identity acts. One line on stderr (`error <code>: <detail>`, a `hint:` line where
the fix is not obvious) and exit status 1; nothing is written to the key file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.service.client.test_cli import Shell, create

#: Every command that takes a game, with what else it needs (a seat where it takes one).
GAME_COMMANDS = [
    ("order", "{g}", "--default"), ("order", "{g}"), ("status", "{g}"), ("watch", "{g}", "--once"),
    ("act", "{g}"), ("verify", "{g}"), ("message", "{g}", "hello"), ("messages", "{g}"),
    ("game", "start", "{g}"), ("seat", "join", "{g}"), ("seat", "bot", "{g}", "1", "--kind", "greedy"),
    ("seat", "replace", "{g}", "1", "--key", "bob"), ("seat", "contact", "{g}"), ("seat", "deliveries", "{g}"),
]


@pytest.fixture
def two(tmp_path: Path, live_server: str) -> Shell:
    """A key file of two identities (so that any question of identity would be open)."""
    sh = Shell(tmp_path / "kontor", live_server)
    sh("keygen", "--name", "alice")
    sh("keygen", "--name", "bob")
    return sh


@pytest.mark.parametrize("args", GAME_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_an_unknown_game_is_named_before_any_identity_question(two: Shell, live_server: str,
                                                               args: tuple[str, ...]) -> None:
    before = (Path(two.env["KONTOR_HOME"] or "") / "keys.json").read_text()
    result = two(*(a.format(g="1234") for a in args), ok=False)
    assert result.exit_code == 1, result.output
    first = result.stderr.splitlines()[0]
    assert first == f"error game_not_found: no game 1234 on {live_server}", result.stderr
    assert "which identity" not in result.stderr and "--as" not in result.stderr
    assert "hint: check the game's id (`kontor games` lists yours)" in result.stderr
    assert (Path(two.env["KONTOR_HOME"] or "") / "keys.json").read_text() == before


@pytest.mark.parametrize("args", [("order", "0123456789", "--default"), ("seat", "join", "0123456789"),
                                  ("status", "0123456789"), ("game", "start", "0123456789")])
def test_an_unreachable_server_is_named_first(tmp_path: Path, args: tuple[str, ...]) -> None:
    sh = Shell(tmp_path / "kontor", "http://127.0.0.1:9")
    sh("keygen", "--name", "alice")
    sh("keygen", "--name", "bob")
    result = sh(*args, ok=False)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: cannot reach http://127.0.0.1:9: is `make run` running? "
                                    "(connection refused"), result.stderr
    assert "which identity" not in result.stderr


def test_an_unknown_seat_is_named_with_the_seats_there_are(two: Shell) -> None:
    game = create(two, 3)
    for args in (("seat", "bot", game, "7", "--kind", "greedy"), ("seat", "join", game, "--seat", "3"),
                 ("seat", "replace", game, "5", "--key", "bob"), ("seat", "deliveries", game, "--seat", "9")):
        result = two(*args, ok=False)
        assert result.exit_code == 1, args
        no = args[3] if args[1] in ("bot", "replace") else args[-1]
        assert result.stderr.splitlines()[0] == (
            f"error seat_not_found: game {game} has no seat {no}: its seats are 0 (free), 1 (free), 2 (free)"), \
            result.stderr
    # a name shows once the seat has one
    two("seat", "join", game, "--as", "bob", "--name", "Carla")
    result = two("seat", "bot", game, "3", "--kind", "greedy", ok=False)
    assert "its seats are 0 (Carla), 1 (free), 2 (free)" in result.stderr


def test_a_game_none_of_my_identities_plays_says_so_before_asking_which(two: Shell) -> None:
    game = create(two, 2)  # alice hosts it, and holds no seat
    result = two("order", game, "--default", ok=False)
    assert result.exit_code == 1
    assert result.stderr == (f"error: none of your identities (alice, bob) holds a seat in game {game} in this "
                             "key file: pass --as NAME to act as one of them\n")
    # the host's own commands find the host without --as
    two("seat", "bot", game, "1", "--kind", "greedy")
