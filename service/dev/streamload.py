"""Many live streams against a running web server, and `/healthz` timed meanwhile: the
loopback proof that open streams do not starve other requests (issue 23: `/healthz`
answers within 100 ms with 2,500 streams open). Used by
`tests/service/http/test_stream_load.py` (a bounded run) and `bench/streams_bench.py`.

Everything is raw sockets on loopback, so the client costs little next to the server:
streams are opened in waves (below gunicorn's listen backlog), each counted open once
its answer's head and first frame (`event: step`) arrived; they are then left open,
unread (their keep-alive comments fit in the socket buffers).
"""

from __future__ import annotations

import json
import resource
import selectors
import socket
import statistics
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

#: Streams opened at once (gunicorn's listen backlog is 2,048).
WAVE = 250


def raise_open_files(need: int) -> int:
    """Raise this process's soft limit of open files towards `need` (children inherit
    it); the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = need if hard == resource.RLIM_INFINITY else min(need, hard)
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return need if soft == resource.RLIM_INFINITY else soft


def request(host: str, port: int, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None,
            timeout: float = 10.0) -> tuple[int, bytes]:
    """One HTTP/1.1 request on a fresh connection (closed after): status and body."""
    data = b"" if body is None else json.dumps(body).encode()
    head = {"Host": f"{host}:{port}", "Connection": "close", **(headers or {})}
    if body is not None:
        head.update({"Content-Type": "application/json", "Content-Length": str(len(data))})
    raw = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in head.items()) + "\r\n"
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(raw.encode() + data)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    answer = b"".join(chunks)
    status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else 0
    return status, answer.partition(b"\r\n\r\n")[2]


def lobby_games(host: str, port: int, count: int) -> list[str]:
    """`count` new games (in their lobby; a stream follows a lobby as well)."""
    from service.protocol.crypto import SigningKey

    out = []
    for _ in range(count):
        body = {"title": "haendler", "seats": 2, "host_key": SigningKey.generate().public}
        status, answer = request(host, port, "POST", "/games", body, {"Idempotency-Key": uuid.uuid4().hex})
        if status != 201:
            raise RuntimeError(f"POST /games answered {status}: {answer[:300]!r}")
        out.append(json.loads(answer)["id"])
    return out


@dataclass
class Streams:
    """Open streams (their sockets) and how the others were answered."""

    open: list[socket.socket] = field(default_factory=list)
    refused: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def close(self) -> None:
        for s in self.open:
            s.close()
        self.open.clear()


def open_streams(host: str, port: int, games: list[str], count: int, timeout: float = 60.0) -> Streams:
    """Open `count` public streams spread evenly over `games`, in waves of `WAVE`."""
    out = Streams()
    start = time.monotonic()
    end = start + timeout
    for first in range(0, count, WAVE):
        wave: dict[socket.socket, bytes] = {}
        sel = selectors.DefaultSelector()
        for i in range(first, min(first + WAVE, count)):
            s = socket.create_connection((host, port), timeout=max(1.0, end - time.monotonic()))
            s.sendall(f"GET /games/{games[i % len(games)]}/stream HTTP/1.1\r\nHost: {host}:{port}\r\n"
                      "Accept: text/event-stream\r\n\r\n".encode())
            s.setblocking(False)
            wave[s] = b""
            sel.register(s, selectors.EVENT_READ)
        while wave and time.monotonic() < end:
            for key, _ in sel.select(timeout=min(1.0, max(0.0, end - time.monotonic()))):
                s = key.fileobj  # type: ignore[assignment]
                try:
                    chunk = s.recv(65536)
                except BlockingIOError:
                    continue
                got = wave[s] + chunk
                head, sep, rest = got.partition(b"\r\n\r\n")
                status = head.split(b" ", 2)[1].decode() if sep and head.startswith(b"HTTP/") else ""
                if not chunk or (sep and status != "200"):
                    out.refused[status or "closed"] += 1
                    sel.unregister(s)
                    del wave[s]
                    s.close()
                elif b"event: step" in rest:
                    sel.unregister(s)
                    del wave[s]
                    out.open.append(s)
                else:
                    wave[s] = got
        for s in wave:
            out.refused["no answer"] += 1
            s.close()
        sel.close()
    out.seconds = time.monotonic() - start
    return out


def idle_connections(host: str, port: int, count: int) -> list[socket.socket]:
    """`count` connections that send nothing (a raw connection hoarder)."""
    return [socket.create_connection((host, port), timeout=10) for _ in range(count)]


def healthz_times(host: str, port: int, count: int, timeout: float = 10.0) -> list[tuple[int, float]]:
    """`count` `GET /healthz`, one after another, each on a fresh connection (as a load
    balancer's probe): (status, seconds); status 0 when it did not answer in `timeout`."""
    out = []
    for _ in range(count):
        start = time.perf_counter()
        try:
            status, _ = request(host, port, "GET", "/healthz", timeout=timeout)
        except OSError:
            status = 0
        out.append((status, time.perf_counter() - start))
    return out


def summary(times: list[tuple[int, float]]) -> dict[str, Any]:
    """p50 and max in milliseconds, and the statuses."""
    ms = [t * 1000 for _, t in times]
    return {"p50_ms": round(statistics.median(ms), 1), "max_ms": round(max(ms), 1),
            "statuses": dict(Counter(str(s) for s, _ in times))}
