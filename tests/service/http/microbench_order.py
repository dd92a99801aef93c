"""Micro-benchmark of the order PUT's fast path, client-free (not a test: pytest does not
collect this file; run it by path). Web CPU per order against the test Valkey: `_prepare`
alone, `fast_receipt` + `settle` with the step's state held and with it read each time,
and the whole WSGI fast path (the request limits' count too). Prints figures only.

    PYTHONPATH=$PWD .venv/bin/python -m pytest -p no:xdist -o addopts="" -q -s \\
        tests/service/http/microbench_order.py          # N=3000 orders; PROFILE=tottime: cProfile
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import time
from typing import Any

import pytest

from service.core.kontor import Kontor
from service.http import fastpath
from tests.service.conftest import new_game, play_to
from tests.service.core.test_auth import default_of, put

N = int(os.environ.get("N", "3000"))


@pytest.fixture
def settings(settings: Any) -> Any:
    return dataclasses.replace(settings, limit_order_key="100000000/minute", limit_order_address="100000000/minute")


def test_bench_fast_order(client: Any, kontor: Kontor, worker: Any) -> None:
    host, players = new_game(client, 3)
    play_to(kontor, worker, host.game, "cart_bid")
    ph = client.get(f"/games/{host.game}/phases/current").json
    p0 = players[0]
    order = default_of(client, p0)
    assert put(client, p0, ph["id"], 0, p0.order_token(ph["id"], order)).status_code == 202
    tokens = iter([p0.order_token(ph["id"], order) for _ in range(3 * N + 600)])
    path = f"/games/{host.game}/phases/{ph['id']}/orders/0"

    def prep() -> None:
        fastpath._prepare(kontor, host.game, ph["id"], 0, next(tokens))

    def one() -> None:
        assert fastpath.fast_receipt(kontor, host.game, ph["id"], 0, next(tokens)) is not None
        kontor.store.settle(kontor.settings)

    def miss() -> None:
        kontor.store._states.clear()
        one()

    def wsgi() -> None:
        body = json.dumps({"token": next(tokens)}).encode()
        env = {"REQUEST_METHOD": "PUT", "CONTENT_TYPE": "application/json", "PATH_INFO": path,
               "CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body), "QUERY_STRING": "",
               "SERVER_NAME": "x", "SERVER_PORT": "80", "wsgi.url_scheme": "http", "REMOTE_ADDR": "10.0.0.1"}
        status: list[str] = []
        b"".join(client.application.wsgi_app(env, lambda s, h, e=None: status.append(s)))
        assert status[0].startswith("202"), status

    for name, f, n in (("_prepare alone (state held)", prep, N // 2),
                       ("fast_receipt+settle (state held)", one, N),
                       ("... state read each time", miss, N // 4),
                       ("WSGI FastPaths (limits too)", wsgi, N // 4)):
        for _ in range(50):
            f()
        t, w = time.process_time(), time.perf_counter()
        for _ in range(n):
            f()
        cpu, wall = (time.process_time() - t) / n * 1e6, (time.perf_counter() - w) / n * 1e6
        print(f"\n{name}: {cpu:.1f} us CPU, {wall:.1f} us wall per order")
    if os.environ.get("PROFILE"):
        import cProfile
        import pstats

        prof = cProfile.Profile()
        prof.enable()
        for _ in range(N // 4):
            one()
        prof.disable()
        pstats.Stats(prof).sort_stats(os.environ["PROFILE"]).print_stats(45)
