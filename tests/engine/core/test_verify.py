"""Verifiable games: the seed commitment and `python -m engine verify` (engine.core.verify)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.core import titles
from engine.core.bots import play_game
from engine.core.seed import commitment, seed_bytes, state_digest
from engine.core.verify import record, verify_history

ROOT = Path(__file__).resolve().parents[3]


def history(tid: str, seed: int | str = "verify-1") -> dict[str, Any]:
    game = titles()[tid]
    seats = game.min_seats
    steps: list[dict[str, Any]] = []
    bots = {i: game.bots()["random"](f"v/{i}") for i in range(seats)}
    out = play_game(game, seats, bots, seed, on_step=lambda s, o, e: steps.append(
        {"orders": o, "state_sha256": state_digest(s), "events": e}))
    return json.loads(json.dumps(record(tid, seats, {}, seed, steps, game.result(out.state))))


def test_seeds_are_32_bytes_and_an_int_and_a_string_differ() -> None:
    raw = bytes(range(32)).hex()
    assert seed_bytes(raw) == bytes(range(32))
    assert len(seed_bytes(7)) == len(seed_bytes("7")) == 32 and seed_bytes(7) != seed_bytes("7")
    assert commitment(7) != commitment("7")
    with pytest.raises(TypeError):
        seed_bytes(True)


@pytest.mark.parametrize("tid", sorted(titles()))
def test_every_title_commits_to_its_seed_in_every_view(tid: str) -> None:
    game = titles()[tid]
    state = game.setup(game.min_seats, None, "commit-me")
    for viewer in [*range(game.min_seats), "public"]:
        assert game.view(state, viewer)["commitment"] == commitment("commit-me")
        assert "commit-me" not in json.dumps(game.view(state, viewer))


@pytest.mark.parametrize("tid", sorted(titles()))
def test_a_finished_game_verifies(tid: str) -> None:
    report = verify_history(history(tid))
    assert report.ok, report.lines
    assert report.steps > 0 and report.lines[-1].startswith("Verified")


def test_a_wrong_seed_is_caught_by_the_commitment() -> None:
    doc = history("haendler")
    doc["seed"] = "verify-2"
    report = verify_history(doc)
    assert not report.ok and "does not match the commitment" in report.problems[0]


def test_a_changed_event_or_state_is_named_with_its_step() -> None:
    doc = history("haendler")
    tampered = copy.deepcopy(doc)
    first = next(i for i, s in enumerate(tampered["steps"]) if s["events"])
    tampered["steps"][first]["events"][0]["tampered"] = 1
    tampered["steps"][first + 1]["state_sha256"] = "0" * 64
    report = verify_history(tampered)
    assert not report.ok
    assert any(f"step {first + 1}: event 1" in p and "tampered" in p for p in report.problems), report.problems
    assert any(f"step {first + 2}: the replayed state differs" in p for p in report.problems), report.problems


def test_an_illegal_recorded_order_stops_the_replay() -> None:
    doc = history("haendler")
    doc["steps"][0]["orders"] = {"9": {}}
    report = verify_history(doc)
    assert not report.ok and "not legal" in report.problems[0]


def test_the_command_line_plays_with_a_history_and_verifies_it(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    run = [sys.executable, "-m", "engine"]
    played = subprocess.run([*run, "play", "haendler", "--seats", "2", "--seed", "11", "--history", str(path)],
                            capture_output=True, text=True, cwd=ROOT, timeout=120, check=True)
    assert "seed commitment" in played.stdout and path.exists()
    ok = subprocess.run([*run, "verify", str(path)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert ok.returncode == 0 and "Verified" in ok.stdout
    doc = json.loads(path.read_text())
    doc["seed"] = 12
    path.write_text(json.dumps(doc))
    bad = subprocess.run([*run, "verify", str(path)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert bad.returncode == 1 and "DIFFERS" in bad.stdout
