"""Micro-benchmark of a step resolved in the web (not a test: run it by path). Per step:
web CPU of the fast order PUTs (fast_receipt: the last one flips the step), web CPU of
`InWeb.run`, and the Valkey server's CPU over both. Prints figures only.

    PYTHONPATH=$PWD .venv/bin/python -m pytest -p no:xdist -o addopts="" -q -s \\
        tests/service/jobs/microbench_inweb.py       # N=1500 steps
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from typing import Any

import pytest

from engine.core import registry
from service.core.kontor import Kontor
from service.http import fastpath
from service.http.inweb import InWeb
from tests.service.conftest import domain_game

N = int(os.environ.get("N", "1500"))


@pytest.fixture
def settings(settings: Any) -> Any:
    return dataclasses.replace(settings, limit_order_key="100000000/minute", limit_order_address="100000000/minute",
                               resolve_in_web="on")


def _valkey_cpu(k: Kontor) -> float:
    info = k.rq.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def test_bench_inweb_step(kontor: Kontor) -> None:
    k = kontor
    started: list[tuple[str, int]] = []
    here = InWeb(k, spawn=lambda fn, *args: started.append(args[-2:]))
    k.jobs.here = here
    title = registry.get("haendler")
    games = [domain_game(k, seats=3) for _ in range(40)]
    cpu_orders = cpu_run = 0.0
    steps = 0
    valkey0 = _valkey_cpu(k)
    warm = 100
    while steps < N + warm:
        for gid, players in list(games):
            ph = k.store.phase(gid)
            if ph.get("status") != "collecting":
                games.remove((gid, players))
                continue
            pid = int(ph["id"])
            state = k.store.state(gid)
            tokens = [(seat, players[seat].order_token(pid, title.default_order(state, seat)))
                      for seat in json.loads(ph["expected"])]
            t = time.process_time()
            for seat, token in tokens:
                assert fastpath.fast_receipt(k, gid, pid, seat, token) is not None
            t2 = time.process_time()
            assert started and started[-1] == (gid, pid), started[-1:]
            started.clear()
            assert here.run(gid, pid) == "committed"
            t3 = time.process_time()
            steps += 1
            if steps == warm:
                cpu_orders = cpu_run = 0.0
                valkey0 = _valkey_cpu(k)
            elif steps > warm:
                cpu_orders += t2 - t
                cpu_run += t3 - t2
        if not games:
            games = [domain_game(k, seats=3) for _ in range(40)]
    n = steps - warm
    valkey = _valkey_cpu(k) - valkey0
    print(f"\n{n} steps: orders (3 PUTs) {cpu_orders / n * 1e6:.0f} us, InWeb.run {cpu_run / n * 1e6:.0f} us, "
          f"web {(cpu_orders + cpu_run) / n * 1e6:.0f} us, valkey (all, incl. the reads of the loop) "
          f"{valkey / n * 1e6:.0f} us CPU per step")
