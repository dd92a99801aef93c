"""`make run` end to end: `python -m service.dev.devstack` starts Valkey (AOF on) and the
Procfile's web, worker, clock and mail-in; a game can be created over real HTTP; SIGINT
stops it all with exit code 0 and leaves the AOF behind. The test starts the devstack
through the same supervisor (`service.dev.supervisor`), which also cleans up after a
failed test."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import requests

from service.dev.devstack import port_is_free
from service.dev.supervisor import Process, Supervisor
from service.protocol.crypto import SigningKey

ROOT = Path(__file__).resolve().parents[3]
READY_BOUND = 30.0
STOP_BOUND = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def devstack_env(var_dir: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KONTOR_")}
    env.update(KONTOR_VAR_DIR=str(var_dir), KONTOR_PORT=str(port))
    return env


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[tuple[Supervisor, str, Path]]:
    port = free_port()
    var_dir = tmp_path / "var"
    sup = Supervisor([Process("devstack", (sys.executable, "-m", "service.dev.devstack"))], cwd=ROOT,
                     env=devstack_env(var_dir, port), grace=STOP_BOUND)
    # On a failed test, stop() sends SIGTERM, then SIGKILL to the devstack's group; its
    # children, in groups of their own, get SIGTERM from the kernel (PR_SET_PDEATHSIG).
    with sup:
        yield sup, f"http://127.0.0.1:{port}", var_dir


def test_make_run_serves_games_and_stops_cleanly_on_sigint(stack: tuple[Supervisor, str, Path]) -> None:
    sup, url, var_dir = stack
    sup.wait_ready(f"{url}/readyz", timeout=READY_BOUND)

    host = SigningKey.generate()
    r = requests.post(f"{url}/games", json={"title": "haendler", "seats": 2, "host_key": host.public},
                      headers={"Idempotency-Key": uuid.uuid4().hex}, timeout=10)
    assert r.status_code == 201, r.text
    game = r.json()["id"]
    assert requests.get(f"{url}/games/{game}", timeout=10).json()["status"] == "lobby"
    # The stack's processes talk to Valkey over its Unix socket (TCP stays open for tools).
    sock = var_dir / "valkey" / "valkey.sock"
    assert sock.is_socket()
    assert redis.Redis.from_url(f"unix://{sock}").exists(f"kontor:{{g:{game}}}:meta")

    sup.send_signal("devstack", signal.SIGINT)
    assert sup.wait("devstack", timeout=STOP_BOUND) == 0

    aof = var_dir / "valkey" / "appendonlydir"
    assert (aof / "appendonly.aof.manifest").is_file()
    incr = list(aof.glob("appendonly.aof.*.incr.aof"))
    assert incr and any(game.encode() in f.read_bytes() for f in incr)


def test_a_busy_web_port_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert not port_is_free(port)
        done = subprocess.run([sys.executable, "-m", "service.dev.devstack"], cwd=ROOT, capture_output=True,
                              env=devstack_env(tmp_path / "var", port), timeout=STOP_BOUND)
    assert done.returncode == 1
    assert f"port {port}" in done.stderr.decode() and "already in use" in done.stderr.decode()
    assert not (tmp_path / "var").exists()  # it gave up before starting anything
