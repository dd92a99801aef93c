"""The `kontor` command against a real HTTP server: keys, hosting, joining, orders, events.

Every command runs through click's CliRunner with its own `KONTOR_HOME`, and talks over
HTTP to the fixture app served by werkzeug (`live_server`); the RQ worker runs in burst
mode between commands.
"""

from __future__ import annotations

import json
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from engine.core import registry
from service.client.cli import cli, deadline_text, event_line, parse_duration, parse_pairs, time_left


class Shell:
    """One person's terminal: a key file of their own, and the server's URL."""

    def __init__(self, home: Path, url: str | None) -> None:
        self.runner = CliRunner()
        self.env = {"KONTOR_HOME": str(home), "KONTOR_URL": url, "KONTOR_AS": None}

    def __call__(self, *args: str, ok: bool = True) -> Result:
        result = self.runner.invoke(cli, list(args), env=self.env, catch_exceptions=False)
        if ok:
            assert result.exit_code == 0, (args, result.output)
        return result

    def json(self, *args: str) -> Any:
        return json.loads(self(*args).stdout)

    def public_key(self, name: str) -> str:
        return str(next(i["public"] for i in self.json("keys", "--json") if i["name"] == name))


@pytest.fixture
def shell(tmp_path: Path, live_server: str) -> Shell:
    return Shell(tmp_path / "kontor", live_server)


def create(sh: Shell, seats: int, *extra: str, host: str = "alice") -> str:
    return sh("game", "create", "--title", "haendler", "--seats", str(seats), "--as", host, "--seed", "7",
              "-q", *extra).stdout.strip()


def play_defaults(sh: Shell, game: str, who: dict[int, str], worker: Any, steps: int,
                  until_kind: str | None = None) -> int:
    """Answer open steps with `--default` for the seats in `who` (seat -> identity)."""
    played = 0
    for _ in range(steps):
        worker()
        phase = sh.json("status", game, "--json")["phase"]
        if phase["kind"] == until_kind:
            return played
        assert phase["status"] == "collecting", phase
        for seat in phase["requested"]:
            if seat in who and seat not in phase["answered"]:
                out = sh("order", game, "--as", who[seat], "--default").stdout
                assert f"step {phase['id']} seat {seat}" in out
                played += 1
    assert until_kind is None, f"no {until_kind} step within {steps} steps"
    return played


# -- pure helpers -------------------------------------------------------------------------
def test_durations_accept_seconds_and_units() -> None:
    assert [parse_duration(t) for t in ("90", "30s", "10m", "12h", "2d", "1w", "1d12h")] == \
        [90, 30, 600, 43200, 172800, 604800, 129600]
    with pytest.raises(ValueError):
        parse_duration("soon")


def test_k_values_are_json_when_they_parse() -> None:
    assert parse_pairs(["bid=300", "good=wein", "goods=[]", "flag=true", "note=a=b"]) == \
        {"bid": 300, "good": "wein", "goods": [], "flag": True, "note": "a=b"}


def test_event_line_and_deadline_are_one_readable_line() -> None:
    line = event_line({"id": 16, "at": "2026-01-01T10:00:00+00:00", "type": "cart_auction", "phase": 5,
                       "visible_to": "all", "bids": {"0": 100}, "cart": 1}, "Sealed bids for cart 1: Bob 100.")
    assert line.endswith(" step 5: Sealed bids for cart 1: Bob 100.") and "{" not in line and "phase" not in line
    assert event_line({"phase": 2, "visible_to": [1]}, "Bob drew a card.").endswith("Bob drew a card. (private)")
    text = deadline_text("2026-01-02T10:00:00+00:00", now=datetime(2026, 1, 1, 10, 0, tzinfo=UTC))
    assert "2026-01-02 10:00:00 UTC" in text and text.endswith("in 1d")
    left = time_left("2026-01-02T10:00:00+00:00", now=datetime(2026, 1, 1, 8, 30, tzinfo=UTC))
    assert left.startswith("1d 1h 30m (until ") and "passed" in time_left("2026-01-01T10:00:00+00:00")


# -- keys -------------------------------------------------------------------------------
def test_keygen_writes_a_private_file_and_never_overwrites_silently(tmp_path: Path) -> None:
    home = tmp_path / "kontor"
    sh = Shell(home, None)
    first = sh("keygen", "--name", "alice").stdout
    assert "public key" in first and "kid" in first
    assert stat.S_IMODE((home / "keys.json").stat().st_mode) == 0o600
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    public = sh.public_key("alice")
    assert public in first and len(public) == 43

    again = sh("keygen", "--name", "alice", ok=False)
    assert again.exit_code == 1 and "--force" in again.stderr
    assert sh.public_key("alice") == public

    sh("keygen", "--name", "alice", "--force")
    assert sh.public_key("alice") != public
    assert stat.S_IMODE((home / "keys.json").stat().st_mode) == 0o600

    private = json.loads((home / "keys.json").read_text())["identities"]["alice"]["jwk"]["d"]
    listing = sh("keys").stdout + sh("keys", "--json").stdout
    assert "alice" in listing and private not in listing


def test_an_unreachable_server_is_named_with_a_hint(tmp_path: Path) -> None:
    sh = Shell(tmp_path / "kontor", "http://127.0.0.1:9")
    result = sh("status", "0123456789", ok=False)
    assert result.exit_code == 1
    assert "http://127.0.0.1:9" in result.stderr and "make run" in result.stderr


# -- hosting and playing ----------------------------------------------------------------
def test_host_creates_players_join_and_orders_go_through_json_k_and_default(shell: Shell, worker: Any) -> None:
    sh = shell
    for name in ("alice", "bob", "carol"):
        sh("keygen", "--name", name)
    game = create(sh, 3, "--option", "start_player=0", "--sealed", "1d", "--sequential", "12h",
                  "--on-expiry", "extend", "--extension", "2h", "--name", "CLI table", "--mail-orders", "signed",
                  "--press", "public")
    lobby = sh("status", game).stdout
    assert "lobby" in lobby and "seats 0, 1, 2 free" in lobby

    assert "seat 0" in sh("seat", "join", game, "--as", "bob", "--name", "Bob", "--seat", "0").stdout
    assert "seat 1" in sh("seat", "join", game, "--as", "carol", "--name", "Carol").stdout
    assert "greedy bot" in sh("seat", "bot", game, "2", "--kind", "greedy", "--as", "alice").stdout

    refused = sh("game", "start", game, "--as", "bob", ok=False)
    assert refused.exit_code == 1 and refused.stderr.startswith("error not_host: ")
    assert "started" in sh("game", "start", game, "--as", "alice").stdout

    g = sh.json("status", game, "--json")["game"]
    assert g["name"] == "CLI table" and g["options"]["start_player"] == 0
    assert (g["mail_orders"], g["press"]) == ("signed", "public")
    fixed = ("sealed_seconds", "sequential_seconds", "on_expiry", "extension_seconds", "clock")
    assert {k: g["deadlines"][k] for k in fixed} == {"sealed_seconds": 86400, "sequential_seconds": 43200,
                                                     "on_expiry": "extend", "extension_seconds": 7200,
                                                     "clock": "fixed"}  # (no time bank)

    worker()
    mine = sh("status", game, "--as", "bob").stdout
    view = sh.json("status", game, "--as", "bob", "--view")
    assert f"Step 1 \N{EM DASH} {view['headline']}" in mine and "UTC" in mine
    assert "Your turn: " in mine and "Default order, played if you do not answer: Buy nothing" in mine
    assert "Nothing is asked of you (Carol) in step 1." in sh("status", game, "--as", "carol").stdout

    receipt = sh("order", game, "--as", "bob", "--json", '{"goods": []}').stdout
    assert "order accepted" in receipt and "step 1 seat 0" in receipt

    play_defaults(sh, game, {0: "bob", 1: "carol"}, worker, 12, until_kind="cart_bid")
    phase = sh.json("status", game, "--as", "bob", "--json")["phase"]
    assert phase["sealed"] and phase["you"]["requested"]

    bid = sh("order", game, "--as", "bob", "-k", "bid=100").stdout
    assert 'seat 0 (bob): Bid 100 for cart 1 in Paris.' in bid
    bad = sh("order", game, "--as", "bob", "-k", "bid=150", ok=False)
    assert bad.exit_code == 1 and bad.stderr.startswith("error bad_amount: ")
    stale = sh("order", game, "--as", "bob", "--phase", "1", "--json", '{"goods": []}', ok=False)
    assert stale.exit_code == 1 and stale.stderr.startswith("error stale_phase: ")
    assert "You answered: Bid 100 for cart 1 in Paris (you may replace it" in sh("status", game, "--as", "bob").stdout

    sh("order", game, "--as", "carol", "--default")
    worker()
    events = [json.loads(line) for line in sh("watch", game, "--as", "bob", "--once", "--json").stdout.splitlines()]
    assert events[0]["type"] == "game_started"
    assert any(ev["type"] == "cart_auction" and ev["bids"].get("0") == 100 for ev in events)
    lines = sh("watch", game, "--as", "bob", "--once").stdout.splitlines()
    names = [p["name"] for p in sh.json("status", game, "--json")["game"]["players"]]
    assert names[:2] == ["Bob", "Carol"] and names[2].endswith(" (greedy bot)")  # a given name, and the kind
    assert lines[0].endswith(f"step 0: The game begins with Bob, Carol and {names[2]}.")
    auction = next(ev for ev in events if ev["type"] == "cart_auction")
    said = registry.get("haendler").describe_event(auction, names)
    assert any(line.endswith(f"step {auction['phase']}: {said}") for line in lines)


def test_two_players_each_in_their_own_shell_play_with_defaults(tmp_path: Path, live_server: str,
                                                                worker: Any) -> None:
    host = Shell(tmp_path / "alice", live_server)
    bob = Shell(tmp_path / "bob", None)  # after joining, the server is the one remembered for the game
    carol = Shell(tmp_path / "carol", None)
    host("keygen", "--name", "alice")
    bob("keygen", "--name", "bob")
    carol("keygen", "--name", "carol")
    game = create(host, 2)
    bob("seat", "join", game, "--name", "Bob", "--url", live_server)
    carol("seat", "join", game, "--name", "Carol", "--url", live_server)
    host("game", "start", game)

    played = {"bob": 0, "carol": 0}
    for _ in range(8):
        worker()
        for name, sh in (("bob", bob), ("carol", carol)):
            phase = sh.json("status", game, "--json")["phase"]
            if (phase["you"] or {}).get("requested") and not phase["you"]["answered"]:
                sh("order", game, "--default")
                played[name] += 1
    assert played["bob"] >= 3 and played["carol"] >= 3

    not_mine = next(sh for sh in (bob, carol)
                    if not (sh.json("status", game, "--json")["phase"]["you"] or {}).get("requested"))
    refused = not_mine("order", game, "--default", ok=False)
    assert refused.exit_code == 1 and refused.stderr.startswith("error not_requested: ")

    lines = carol("watch", game, "--once", "--json").stdout.splitlines()
    assert json.loads(lines[0])["type"] == "game_started"
    assert sum(json.loads(line)["type"] == "step_resolved" for line in lines) >= 4  # a sealed step takes two orders
    said = carol("watch", game, "--once").stdout
    assert "The game begins with Bob and Carol." in said and "{" not in said


def test_watch_follows_a_game_until_it_is_finished(shell: Shell, worker: Any) -> None:
    shell("keygen", "--name", "alice")
    game = create(shell, 2)
    shell("seat", "bot", game, "0", "--kind", "random", "--as", "alice")
    shell("seat", "bot", game, "1", "--kind", "random", "--as", "alice")
    shell("game", "start", game, "--as", "alice")
    # alice only hosts: her reads are signed with the game's host key, which the server knows
    assert "alice holds no seat in this game" in shell("status", game, "--as", "alice").stdout
    worker()  # the bots play the whole game in one burst
    lines = shell("watch", game, "--interval", "0").stdout.splitlines()
    assert "The game begins" in lines[0] and ": The game is over: " in lines[-1]
    assert len(lines) > 100  # more than one page of events
    raw = shell("watch", game, "--interval", "0", "--json").stdout.splitlines()
    assert json.loads(raw[-1])["type"] == "game_finished" and len(raw) > len(lines)
    assert "The game is over" in shell("status", game).stdout


def test_host_gives_a_seat_to_another_key(shell: Shell) -> None:
    sh = shell
    for name in ("alice", "bob", "dave", "erin"):
        sh("keygen", "--name", name)
    game = create(sh, 3)
    sh("seat", "join", game, "--as", "bob", "--seat", "0")
    dave = sh.json("keys", "--json")[2]
    assert dave["name"] == "dave"
    out = sh("seat", "replace", game, "0", "--key", dave["public"], "--name", "Dave", "--as", "alice").stdout
    assert dave["kid"] in out and "Dave" in out
    sh("seat", "replace", game, "1", "--key", "erin", "--as", "alice")
    erin = next(i for i in sh.json("keys", "--json") if i["name"] == "erin")
    assert erin["games"][game]["seat"] == 1
    bob = next(i for i in sh.json("keys", "--json") if i["name"] == "bob")
    assert game not in bob["games"]  # bob's seat went to dave

    taken = sh("seat", "join", game, "--as", "erin", ok=False)
    assert taken.exit_code == 1 and "error key_in_use" in taken.stderr and "hint:" in taken.stderr
    assert "seat 2" in sh("seat", "join", game, "--as", "alice").stdout  # the host may play too


def test_one_identity_creates_joins_starts_and_plays_its_own_game(shell: Shell, worker: Any) -> None:
    sh = shell
    sh("keygen", "--name", "alice")
    game = create(sh, 2)
    assert "seat 0" in sh("seat", "join", game, "--as", "alice", "--name", "Alice").stdout
    sh("seat", "bot", game, "1", "--kind", "greedy", "--as", "alice")
    assert "started" in sh("game", "start", game).stdout  # the remembered host, with its host key

    alice = sh.json("keys", "--json")[0]
    g = sh.json("status", game, "--json")["game"]
    assert alice["hosts"] == [game] and alice["games"][game]["host"] and alice["games"][game]["seat"] == 0
    assert alice["games"][game]["host_kid"] == g["host_kid"] != alice["kid"]
    assert next(p for p in g["players"] if p["seat"] == 0)["kid"] == alice["kid"]
    listing = sh("keys").stdout
    assert f"hosts: {game}" in listing and f"plays: {game} (seat 0)" in listing

    home = Path(sh.env["KONTOR_HOME"] or "")
    doc = json.loads((home / "keys.json").read_text())
    assert doc["version"] == 2 and stat.S_IMODE((home / "keys.json").stat().st_mode) == 0o600
    host_private = doc["identities"]["alice"]["games"][game]["host"]["jwk"]["d"]
    assert host_private not in listing + sh("keys", "--json").stdout

    worker()
    assert "<- you (alice)" in sh("status", game, "--as", "alice").stdout
    assert play_defaults(sh, game, {0: "alice"}, worker, 6) >= 3
    assert "step_resolved" in sh("watch", game, "--as", "alice", "--once", "--json").stdout
    assert "Alice bought nothing." in sh("watch", game, "--as", "alice", "--once").stdout


def test_a_key_file_of_the_previous_version_still_hosts_and_plays(shell: Shell, live_server: str) -> None:
    from service.client.http import Api
    from service.protocol.crypto import SigningKey

    sh = shell
    for name in ("alice", "bob"):
        sh("keygen", "--name", name)
    home = Path(sh.env["KONTOR_HOME"] or "")
    doc = json.loads((home / "keys.json").read_text())
    alice = doc["identities"]["alice"]
    # Version 1 registered the identity's own key as the host key and kept one role per game.
    api = Api(live_server)
    game = api.create_game({"title": "haendler", "seats": 2, "host_key": alice["public"]})["id"]
    seat = api.join(game, "Bob", doc["identities"]["bob"]["public"])["seat"]
    alice["games"] = {game: {"url": live_server, "role": "host"}}
    doc["identities"]["bob"]["games"] = {game: {"url": live_server, "role": "seat", "seat": seat}}
    doc["version"] = 1
    (home / "keys.json").write_text(json.dumps(doc))

    assert f"hosts: {game}" in sh("keys").stdout
    refused = sh("seat", "join", game, "--as", "alice", ok=False)  # that game's host key is alice's own
    assert refused.exit_code == 1 and "error key_in_use" in refused.stderr and "older kontor" in refused.stderr
    sh("seat", "bot", game, str(1 - seat), "--kind", "random")  # the one remembered host
    assert json.loads((home / "keys.json").read_text())["version"] == 2
    assert "started" in sh("game", "start", game, "--as", "alice").stdout
    assert "<- you (bob)" in sh("status", game).stdout
    assert SigningKey.from_jwk(alice["jwk"]).kid == sh.json("status", game, "--json")["game"]["host_kid"]

    (home / "keys.json").write_text(json.dumps({"version": 3, "identities": {}}))
    newer = sh("keys", ok=False)
    assert newer.exit_code == 1 and "newer kontor" in newer.stderr


def test_a_player_whose_seat_went_to_a_bot_still_watches_as_the_public(shell: Shell, worker: Any) -> None:
    sh = shell
    for name in ("alice", "bob"):
        sh("keygen", "--name", name)
    game = create(sh, 2)
    sh("seat", "join", game, "--as", "alice", "--name", "Alice")
    sh("seat", "join", game, "--as", "bob", "--name", "Bob")
    sh("game", "start", game, "--as", "alice")
    worker()
    assert "now a greedy bot" in sh("seat", "bot", game, "1", "--kind", "greedy", "--as", "alice").stdout
    worker()
    watched = sh("watch", game, "--as", "bob", "--once")
    assert watched.exit_code == 0, watched.stderr
    assert "Bob's seat is now played by a greedy bot." in watched.stdout
    refused = sh("order", game, "--as", "bob", "--default", ok=False)
    assert refused.exit_code == 1
