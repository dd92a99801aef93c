"""The crash test (issue 23, item 8), short: `bench/crash.py` for 3 cycles (SIGKILL Valkey,
web, worker and sweeper at random moments of live play, restart, check), and its checks
shown to catch what they look for."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from service.core.kontor import Kontor
from tests.service.conftest import Player

ROOT = Path(__file__).resolve().parents[2]


def _crash() -> ModuleType:
    spec = importlib.util.spec_from_file_location("crash_bench", ROOT / "bench" / "crash.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_three_crashes_lose_nothing_acknowledged_and_apply_nothing_twice() -> None:
    out = subprocess.run([sys.executable, "bench/crash.py", "--cycles", "3", "--games", "3", "--play", "0.5,1.5",
                          "--seed", "7"], cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["cycles"] == 3 and result["durability"] == "fsync-always"
    assert (result["lost"], result["applied_twice"], result["stalled"]) == (0, 0, 0)
    acked = result["acknowledged"]
    assert acked["creates"] >= 3 and acked["joins"] >= 6 and acked["orders"] >= 10, acked


def test_the_checks_find_a_lost_write(kontor: Kontor) -> None:
    crash = _crash()
    host = Player.new()
    gid = kontor.create_game("fantasy", 3, {"rounds": 1}, None, 11, host.key.public)["id"]
    ledger = crash.Ledger()
    ledger.add("creates", gid)
    assert crash.check_store(kontor, ledger).lost == []
    ledger.add("creates", "0123456789")  # acknowledged, not in the store
    ledger.add("joins", (gid, 1, Player.new().key.kid))  # acknowledged, nobody holds the seat
    ledger.add("orders", (gid, 1, 0, "a" * 32, "b" * 20, {"pass": True}))  # acknowledged, not stored
    lost = crash.check_store(kontor, ledger).lost
    assert [x.split()[0] for x in lost] == ["create", "join", "order"], lost
