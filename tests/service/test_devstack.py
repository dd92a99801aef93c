"""`make run` end to end: `python -m service.dev.devstack` starts Valkey (AOF on), gunicorn,
a worker and the sweeper; a game can be created over real HTTP; SIGINT stops it all with
exit code 0 and leaves the AOF behind."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from service.dev.devstack import port_is_free
from service.protocol.crypto import SigningKey

ROOT = Path(__file__).resolve().parents[2]
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
def stack(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str, Path]]:
    port = free_port()
    var_dir = tmp_path / "var"
    proc = subprocess.Popen([sys.executable, "-m", "service.dev.devstack"], cwd=ROOT,
                            env=devstack_env(var_dir, port))
    try:
        yield proc, f"http://127.0.0.1:{port}", var_dir
    finally:
        if proc.poll() is None:  # the test failed before stopping it: don't leak the stack
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_BOUND)
            except subprocess.TimeoutExpired:
                proc.kill()  # its children get SIGTERM from the kernel (PR_SET_PDEATHSIG)
                proc.wait()


def wait_ready(proc: subprocess.Popen[bytes], url: str) -> None:
    until = time.monotonic() + READY_BOUND
    while time.monotonic() < until:
        assert proc.poll() is None, f"devstack exited early with {proc.returncode}"
        try:
            if requests.get(f"{url}/readyz", timeout=5).status_code == 200:
                return
        except requests.RequestException:  # not listening yet, or a worker still booting (timeout)
            pass
        time.sleep(0.2)
    pytest.fail(f"{url}/readyz did not answer 200 within {READY_BOUND} s")


def test_make_run_serves_games_and_stops_cleanly_on_sigint(stack: tuple[subprocess.Popen[bytes], str, Path]) -> None:
    proc, url, var_dir = stack
    wait_ready(proc, url)

    host = SigningKey.generate()
    r = requests.post(f"{url}/games", json={"title": "haendler", "seats": 2, "host_key": host.public},
                      headers={"Idempotency-Key": uuid.uuid4().hex}, timeout=10)
    assert r.status_code == 201, r.text
    game = r.json()["id"]
    assert requests.get(f"{url}/games/{game}", timeout=10).json()["status"] == "lobby"

    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=STOP_BOUND) == 0

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
