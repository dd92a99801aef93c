"""Live streams on the web process as `make run` starts it (the Procfile's gunicorn, a gevent
worker): the game's change reaches its open stream at once through the hub's sharded
subscription (one per game, on the store); after the subscription's connection is
killed (CLIENT KILL) the hub subscribes again and a stream hears the next change at once
(not at the keep-alive's read, 15 s later)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from service.dev import streamload
from service.dev.supervisor import read_procfile
from service.protocol.crypto import SigningKey
from tests.service.conftest import wait_until
from tests.service.http.test_gunicorn import _free_port, serving

ROOT = Path(__file__).resolve().parents[3]
HOST = "127.0.0.1"
#: Well before the keep-alive's read (15 s) would have found the change.
SOON = 5.0


@pytest.fixture(scope="module")
def web(valkey: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str]]:
    port = _free_port()
    prefix = f"gevent{uuid.uuid4().hex[:6]}"
    env = {**os.environ, "KONTOR_REDIS_URL": valkey.connection_url, "KONTOR_KEY_PREFIX": prefix, "PORT": str(port),
           "WEB_HOST": HOST, "WEB_CONCURRENCY": "1", "KONTOR_DURABILITY": "none",
           "GUNICORN_CMD_ARGS": "--no-control-socket --log-level warning"}
    argv = read_procfile(env)["web"].argv
    log = tmp_path_factory.mktemp("web") / "log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", *argv], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        with serving(proc, log, lambda: streamload.request(HOST, port, "GET", "/healthz")[0], timeout=60):
            yield port, prefix


def call(port: int, method: str, path: str, body: Any, headers: dict[str, str] | None = None) -> Any:
    status, answer = streamload.request(HOST, port, method, path, body,
                                        {"Idempotency-Key": uuid.uuid4().hex, **(headers or {})})
    assert status in (200, 201), (status, answer[:300])
    return json.loads(answer)


def test_a_gevent_worker_s_streams_hear_changes_at_once_also_after_the_subscription_was_killed(
        web: tuple[int, str], valkey: Any) -> None:
    port, prefix = web
    r = redis.Redis.from_url(valkey.connection_url, decode_responses=True)
    games = []
    for _ in range(2):  # two lobbies with both seats taken, a public stream open on each
        host = SigningKey.generate()
        gid = call(port, "POST", "/games", {"title": "haendler", "seats": 2, "host_key": host.public})["id"]
        for name in ("Ann", "Bob"):
            call(port, "POST", f"/games/{gid}/seats", {"name": name, "public_key": SigningKey.generate().public})
        s = socket.create_connection((HOST, port), timeout=2 * SOON)
        s.sendall(f"GET /games/{gid}/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n".encode())
        got = b""
        while b"event: step" not in got:
            got += s.recv(65536)
        games.append((gid, host, s))
    channels = [f"{prefix}:{{g:{gid}}}:live" for gid, _, _ in games]

    def subscribed() -> list[int]:
        return [int(r.execute_command("PUBSUB", "SHARDNUMSUB", c)[1]) for c in channels]

    wait_until(lambda: subscribed() == [1, 1])  # one subscription a game, of the web process's hub

    def start(gid: str, host: SigningKey, s: socket.socket) -> float:
        """Start the game; seconds until its stream shows the first step collecting."""
        now = int(time.time())
        token = host.sign({"game": gid, "iat": now, "exp": now + 120})
        sent = time.monotonic()
        call(port, "PATCH", f"/games/{gid}", {"status": "running"}, {"Authorization": f"Bearer {token}"})
        got = b""
        while b'"status":"collecting"' not in got:
            got += s.recv(65536)
            assert b": keep-alive" not in got, got  # heard at once, not by the keep-alive's read
        return time.monotonic() - sent

    assert start(*games[0]) < SOON
    # The hub's subscription connection (the one holding these games' channels) is killed.
    ours = [c["id"] for c in r.client_list(_type="pubsub") if int(c.get("ssub", 0)) == 2]
    assert len(ours) == 1, r.client_list(_type="pubsub")
    r.client_kill_filter(_id=ours[0])
    assert start(*games[1]) < SOON
    wait_until(lambda: subscribed() == [1, 1])
    for _, _, s in games:
        s.close()
    r.close()
