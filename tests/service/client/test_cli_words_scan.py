"""Every text the `kontor` command shows a player is words: over 3 seeded games of every
title, `kontor status` and `kontor order` without an order (the decision offered in
words, numbered) carry no decision, rule, card or board id, no `null` and no JSON
(tests/playertext.py). The player answers each step by picking the options as offered
(`--pick`), never by typing an identifier; the other seats are bots."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from engine.core import titles
from tests.playertext import problems
from tests.service.client.test_cli import Shell

STEPS = 6  # the player's own decisions per game


def scan(where: str, text: str) -> list[str]:
    return [f"{where}: {p}" for p in problems(text)]


@pytest.mark.parametrize("tid", sorted(titles()))
def test_cli_output_is_words(tid: str, tmp_path: Path, live_server: str, worker: Any) -> None:
    game_def = titles()[tid]
    found: list[str] = []
    for g in range(3):
        sh = Shell(tmp_path / f"kontor{g}", live_server)
        for name in ("alice", "bob"):
            sh("keygen", "--name", name)
        seats = game_def.min_seats
        game = sh("game", "create", "--title", tid, "--seats", str(seats), "--as", "alice", "--seed", str(11 + g),
                  "-q").stdout.strip()
        sh("seat", "join", game, "--as", "bob", "--name", "Bob", "--seat", "0")
        bot = sorted(game_def.bots())[0]
        for seat in range(1, seats):
            sh("seat", "bot", game, str(seat), "--kind", bot, "--as", "alice")
        sh("game", "start", game, "--as", "alice")
        played = 0
        for _ in range(60):
            worker()
            phase = sh.json("status", game, "--as", "bob", "--json")["phase"]
            if phase["status"] != "collecting":
                break
            found += scan(f"{tid} status", sh("status", game, "--as", "bob").stdout)
            if 0 not in phase["requested"] or 0 in phase["answered"]:
                continue
            offered = sh("order", game, "--as", "bob").stdout
            found += scan(f"{tid} order", offered)
            assert "1." in offered or "1)" in offered or "--say" in offered, offered
            # pick the first option (or a number's lower bound, a sheet's lower bounds) until the
            # order is complete, then send it
            picks: list[str] = []
            say: list[str] = []
            for _ in range(16):
                out = sh("order", game, "--as", "bob", *(a for p in picks for a in ("--pick", p)), *say, ok=False)
                found += scan(f"{tid} order", out.output)
                if out.exit_code == 0 and out.output.startswith("order accepted: "):
                    break
                assert out.exit_code == 0, out.output
                lines = out.output.splitlines()
                asked = [ln for ln in lines if ln.startswith("  ") and not ln.startswith("  So far")]
                bounds = [re.match(r"  (.+): a whole number from (-?\d+)", ln) for ln in asked]
                if any(m is None for m in bounds) or not bounds:
                    picks.append("1")
                elif len(bounds) == 1 or g % 2:
                    picks.append(",".join(m.group(2) for m in bounds if m))  # a number, or a sheet's
                else:
                    say = ["--say", ", ".join(f"{m.group(1)} {m.group(2)}" for m in bounds if m)]
            else:
                pytest.fail(f"{tid}: no order after 16 picks:\n{out.output}")
            played += 1
            if played >= STEPS:
                break
        assert played, f"{tid}: Bob was never asked"
    assert not found, "\n".join(sorted(set(found))[:40])
