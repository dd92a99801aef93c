"""Service processes for the multi-host and failover tests (issue 24): web processes
(gunicorn as the Procfile starts it), workers (`python -m workers`) and sweepers
(`python -m workers.sweeper`) on one store and one queue, each in a process group of its
own and killed by group at the end (a stray worker of a failed run would take jobs from
later runs' queues); and the players' side: HTTP calls and public streams read frame by
frame (`Watch`).
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import requests

from service.dev.supervisor import read_procfile
from tests.service.conftest import Player
from tests.service.http.test_gunicorn import _free_port

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"

#: Settings of every process: short steps and sweeps, and the request limits lifted
#: (every request comes from one address, loopback).
ENV = {"KONTOR_DURABILITY": "none", "KONTOR_MIN_STEP_SECONDS": "1", "KONTOR_SWEEP_INTERVAL": "0.5",
       "KONTOR_STUCK_AFTER": "4", "KONTOR_LIMIT_READ_ADDRESS": "100000/minute",
       "KONTOR_LIMIT_READ_KEY": "100000/minute", "KONTOR_LIMIT_ORDER_ADDRESS": "100000/minute",
       "KONTOR_LIMIT_ORDER_KEY": "100000/minute", "KONTOR_LIMIT_CREATE_ADDRESS": "10000/hour",
       "KONTOR_LIMIT_CREATE_KEY": "10000/hour", "KONTOR_LIMIT_JOIN_ADDRESS": "10000/hour",
       "KONTOR_LIMIT_JOIN_KEY": "10000/hour", "KONTOR_LIMIT_STREAM_ADDRESS": "10000/minute",
       "KONTOR_LIMIT_STREAM_KEY": "10000/minute", "PYTHONUNBUFFERED": "1",
       "GUNICORN_CMD_ARGS": "--no-control-socket --log-level warning"}


class Hosts:
    """The processes of one test, each the leader of its own process group."""

    def __init__(self, store_url: str, queue_url: str, logs: Path, **env: str) -> None:
        self.env = {**os.environ, **ENV, "KONTOR_REDIS_URL": store_url, "KONTOR_QUEUE_URL": queue_url, **env}
        self.logs = logs
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, argv: list[str], **env: str) -> subprocess.Popen[bytes]:
        with (self.logs / f"{name}.log").open("ab") as out:
            proc = subprocess.Popen([sys.executable, *argv], cwd=ROOT, env={**self.env, **env}, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        self.procs[name] = proc
        return proc

    def web(self, name: str, timeout: float = 60.0) -> str:
        """A web process (the Procfile's gunicorn line, one worker) once `/healthz` says
        200; its base URL."""
        port = _free_port()
        env = {**self.env, "PORT": str(port), "WEB_HOST": HOST, "WEB_CONCURRENCY": "1"}
        proc = self.start(name, ["-m", *read_procfile(env)["web"].argv], PORT=str(port), WEB_HOST=HOST,
                          WEB_CONCURRENCY="1")
        base = f"http://{HOST}:{port}"
        end = time.monotonic() + timeout
        while True:
            try:
                if requests.get(base + "/healthz", timeout=5).status_code == 200:
                    return base
            except requests.RequestException:
                pass
            if proc.poll() is not None or time.monotonic() > end:
                raise AssertionError(f"{name} did not start: {self.log(name)[-2000:]}")
            time.sleep(0.2)

    def worker(self, name: str) -> subprocess.Popen[bytes]:
        return self.start(name, ["-m", "workers", "--count", "1"])

    def sweeper(self, name: str) -> subprocess.Popen[bytes]:
        return self.start(name, ["-m", "workers.sweeper"])

    def log(self, name: str) -> str:
        path = self.logs / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def kill(self, name: str) -> None:
        """SIGKILL the process group of `name` (the process and every child it made)."""
        proc = self.procs[name]
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)

    def stop(self) -> None:
        for name in list(self.procs):
            self.kill(name)


# -- the players' side ---------------------------------------------------------------------
def call(method: str, url: str, expect: int, **kwargs: Any) -> Any:
    r = requests.request(method, url, timeout=30, **kwargs)
    assert r.status_code == expect, (method, url, r.status_code, r.text[:500])
    return r.json() if r.content else None


def http_game(create_on: str, join_on: str, seats: int, **body: Any) -> tuple[str, Player, list[Player]]:
    """A started game of `seats` players: created on one web, joined and started on another."""
    host = Player.new()
    payload = {"title": "haendler", "seats": seats, "host_key": host.key.public, "seed": 11, **body}
    gid = call("POST", f"{create_on}/games", 201, json=payload, headers={"Idempotency-Key": uuid.uuid4().hex})["id"]
    host.game = gid
    players = []
    for seat in range(seats):
        p = Player.new()
        got = call("POST", f"{join_on}/games/{gid}/seats", 201, json={"name": f"P{seat}", "public_key": p.key.public,
                                                                       "seat": seat},
                   headers={"Idempotency-Key": uuid.uuid4().hex})
        p.game, p.seat = gid, got["seat"]
        players.append(p)
    call("PATCH", f"{create_on}/games/{gid}", 200, json={"status": "running"}, headers=host.bearer())
    return gid, host, players


def all_events(base: str, gid: str) -> list[dict[str, Any]]:
    """Every public event of `gid`, as `/events` lists them (every page)."""
    out: list[dict[str, Any]] = []
    after = 0
    while True:
        page = call("GET", f"{base}/games/{gid}/events", 200, params={"after": after, "limit": 500})
        out += page["items"]
        if not page["more"]:
            return out
        after = page["next"]


class Watch(threading.Thread):
    """A public stream of one game on one web, read frame by frame in a thread of its own:
    `events` the `game` frames' data with their ids (as sent, `sentence` left out)."""

    def __init__(self, base: str, gid: str) -> None:
        super().__init__(daemon=True, name=f"watch-{gid}")
        self.base, self.gid = base, gid
        self.events: list[dict[str, Any]] = []
        self.ids: list[int] = []
        self.closed: dict[str, Any] | None = None
        self.error: BaseException | None = None
        host, port = base.split("://", 1)[1].split(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=60)
        self.conn.request("GET", f"/games/{gid}/stream", headers={"Accept": "text/event-stream"})
        self.resp = self.conn.getresponse()
        assert self.resp.status == 200, (self.resp.status, self.resp.read()[:500])
        self.start()

    def run(self) -> None:
        frame: dict[str, str] = {}
        try:
            while True:
                line = self.resp.readline()
                if not line:
                    return
                text = line.decode().rstrip("\r\n")
                if text:
                    name, _, value = text.partition(":")
                    frame[name] = value[1:] if value.startswith(" ") else value
                    continue
                if frame.get("event") == "game":
                    data = json.loads(frame["data"])
                    data.pop("sentence", None)
                    self.ids.append(int(frame["id"]))
                    self.events.append(data)
                elif frame.get("event") == "closed":
                    self.closed = json.loads(frame["data"])
                frame = {}
        except BaseException as exc:  # noqa: BLE001  (kept for the test to show)
            self.error = exc

    def until(self, last: int, timeout: float) -> None:
        """Wait until the stream has sent event `last` (or ended)."""
        end = time.monotonic() + timeout
        while (not self.ids or self.ids[-1] < last) and self.is_alive() and time.monotonic() < end:
            time.sleep(0.05)

    def close(self) -> None:
        try:
            self.conn.sock.shutdown(2) if self.conn.sock else None  # type: ignore[func-returns-value]
        except OSError:
            pass
        self.conn.close()
