"""`kontor seat away` / `kontor seat back` and who is away in `kontor status` (issue 25),
against a real HTTP server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.playertext import problems
from tests.service.client.test_cli import Shell, create


def test_absence_cli_away_back_and_status(tmp_path: Path, live_server: str) -> None:
    sh = Shell(tmp_path / "kontor", live_server)
    for name in ("alice", "bob", "carol", "dave"):
        sh("keygen", "--name", name)
    game = create(sh, 3, "--absence", "extend", "--absence-limit", "3d")
    assert sh("game", "absence-policy", game).stdout.strip() == (
        "while a seat is away, a deadline in its absence moves to its end plus the step's length, by at most 3d "
        "per step")
    for seat, name in enumerate(("bob", "carol", "dave")):
        sh("seat", "join", game, "--as", name, "--name", name.title(), "--seat", str(seat))
    sh("game", "start", game, "--as", "alice")
    today = datetime.now(UTC).date()
    a, b = today + timedelta(days=10), today + timedelta(days=20)
    c, d = today + timedelta(days=30), today + timedelta(days=33)
    out = sh("seat", "away", game, "--as", "carol", "--from", a.isoformat(), "--until", b.isoformat()).stdout
    assert f"Away {a.day} {a:%B} to {b.day} {b:%B}." in out and not problems(out)
    # A second is added; both listed.
    data = sh.json("seat", "away", game, "--as", "carol", "--from", c.isoformat(), "--until", d.isoformat(),
                   "--json")
    assert [x["from"][:10] for x in data["absences"]] == [a.isoformat(), c.isoformat()]
    status = sh("status", game).stdout
    assert f"Away: Carol {a.day} {a:%B} to {b.day} {b:%B}." in status
    # Bad input: refused with the server's code, nothing changed.
    bad = sh("seat", "away", game, "--as", "carol", "--from", b.isoformat(), "--until", a.isoformat(), ok=False)
    assert bad.exit_code != 0 and "bad_absence" in bad.output
    bad = sh("seat", "away", game, "--as", "carol", "--from", "next week", "--until", a.isoformat(), ok=False)
    assert bad.exit_code != 0 and "bad_absence" in bad.output
    assert len(sh.json("seat", "away", game, "--as", "carol", "--json")["absences"]) == 2
    out = sh("seat", "back", game, "--as", "carol").stdout
    assert "no absence planned" in out
    assert sh.json("seat", "away", game, "--as", "carol", "--json")["absences"] == []
    assert "Away:" not in sh("status", game).stdout
    # The host changes the policy while nobody is away; a seat may not; refused while someone is away.
    out = sh("game", "absence-policy", game, "--as", "alice", "--absence", "bot", "--absence-bot", "greedy").stdout
    assert out.strip() == "while a seat is away, a greedy bot plays its decisions"
    bad = sh("game", "absence-policy", game, "--as", "bob", "--absence", "extend", ok=False)
    assert bad.exit_code != 0 and "not_host" in bad.output
    now = datetime.now(UTC)
    sh("seat", "away", game, "--as", "dave", "--from", now.strftime("%Y-%m-%dT%H:%M:%SZ"), "--until",
       (today + timedelta(days=3)).isoformat())
    assert f"Away: Dave until {(today + timedelta(days=3)).day}" in sh("status", game).stdout
    bad = sh("game", "absence-policy", game, "--as", "alice", "--absence", "extend", ok=False)
    assert bad.exit_code != 0 and "absence_in_use" in bad.output and "Dave is away now" in bad.output
    # `--until` alone: away from now until then (as a mail's "away until ...").
    data = sh.json("seat", "away", game, "--as", "carol", "--until", b.isoformat(), "--json")
    (now_away,) = data["absences"]
    assert now_away["from"][:10] == today.isoformat() and now_away["until"][:10] == b.isoformat()
