"""The benches' load generator: a few processes (so the generator's GIL does not cap the
rate), each with a few threads driving raw keep-alive-aware HTTP/1.1 connections with
pre-built request bytes.

The processes are started with the "spawn" method, never "fork": the bench runs threads
(keyspace watchers, pools' helper threads), and a child forked while another thread held
a lock can hang or die, which is how `api_bench.py` used to hang for good. Spawned
children start from a fresh interpreter and get their request bytes pickled; each one
says when it is ready, and the timed window opens only once all of them are."""

from __future__ import annotations

import itertools
import multiprocessing as mp
import os
import queue
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The start method of every process the benches start themselves (see above).
CONTEXT = mp.get_context("spawn")
#: How long the load processes may take to import and connect before the window opens.
START_BOUND = 60.0


def http_request(method: str, path: str, body: bytes = b"") -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: kontor-bench\r\nAccept: */*\r\n"
    if body:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + body


class Conn:
    """A minimal HTTP/1.1 client connection: sends pre-built request bytes, reads one
    response (Content-Length bodies), reconnects when the server closes (gunicorn's sync
    workers close after every response)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sock: socket.socket | None = None
        self.buf = b""

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
        self.sock, self.buf = None, b""

    def request(self, data: bytes) -> int:
        reused = self.sock is not None
        if self.sock is None:
            self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            self.sock.sendall(data)
            return self._response()
        except (ConnectionError, _Closed):
            self.close()
            if not reused:
                raise
            return self.request(data)  # a kept-alive connection the server had closed: once more, fresh

    def _recv(self) -> bytes:
        assert self.sock is not None
        chunk = self.sock.recv(65536)
        if not chunk:
            raise _Closed
        return chunk

    def _response(self) -> int:
        buf = self.buf
        while b"\r\n\r\n" not in buf:
            buf += self._recv()
        head, _, rest = buf.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        length, close = 0, lines[0].startswith(b"HTTP/1.0")
        for line in lines[1:]:
            k, _, v = line.partition(b":")
            k = k.strip().lower()
            if k == b"content-length":
                length = int(v)
            elif k == b"connection":
                close = v.strip().lower() == b"close"
        while len(rest) < length:
            rest += self._recv()
        self.buf = rest[length:]
        if close:
            self.close()
        return status


class _Closed(Exception):
    pass


def _load_process(port: int, reqs: list[bytes], cycle: bool, threads: int, ok_status: int, warmup: float,
                  seconds: float, ready: Any, go: Any, out: Any) -> None:
    """One load process: `threads` connections, each sending the next request until the
    window [start + warmup, start + warmup + seconds) is over; counts answers by status.
    A socket timeout (30 s) counts as a failed request: the bench's time limit, not this
    process, decides when a stuck server ends the run."""
    counter = itertools.count()
    n = len(reqs)
    ready.release()
    go.wait()
    start = time.monotonic()
    lo, hi = start + warmup, start + warmup + seconds
    results: list[tuple[int, int, float, bool, int]] = []
    lock = threading.Lock()

    def run() -> None:
        conn = Conn(port)
        ok = bad = answered = 0
        last = lo
        exhausted = False
        while True:
            i = next(counter)
            if i >= n:
                if not cycle:
                    exhausted = True
                    break
                i %= n
            try:
                status = conn.request(reqs[i])
            except OSError:
                status = 0
                conn.close()
            answered += 1
            now = time.monotonic()
            if now >= hi:
                break
            if now >= lo:
                last = now
                if status == ok_status:
                    ok += 1
                else:
                    bad += 1
        conn.close()
        with lock:
            results.append((ok, bad, last, exhausted, answered))

    pool = [threading.Thread(target=run) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    out.put((sum(r[0] for r in results), sum(r[1] for r in results), lo, hi,
             max(r[2] for r in results), any(r[3] for r in results), sum(r[4] for r in results)))


@dataclass
class Rate:
    per_s: float
    ok: int
    errors: int
    exhausted: bool
    seconds: float
    #: Requests answered in all, warm-up included (for the CPU cost per request).
    answered: int
    #: CPU seconds the server processes spent, warm-up included, by process group.
    cpu: dict[str, float]

    def cpu_ms(self, name: str) -> float:
        return 1000 * self.cpu[name] / max(self.answered, 1)


def load(port: int, reqs: list[bytes], *, cycle: bool, ok_status: int, concurrency: int, processes: int,
         seconds: float, warmup: float = 1.0, cpu: dict[str, list[int]] | None = None) -> Rate:
    """Drive `reqs` at `port` with `concurrency` connections spread over `processes`
    processes; the rate of `ok_status` answers inside the timed window. `cpu` names
    groups of server pids whose CPU time is taken over the whole run. A load process
    that dies is an error (RuntimeError), not a wait."""
    cpu = cpu or {}
    ready, go, out = CONTEXT.Semaphore(0), CONTEXT.Event(), CONTEXT.Queue()
    per = [concurrency // processes + (1 if i < concurrency % processes else 0) for i in range(processes)]
    share = [reqs[i::processes] for i in range(processes)] if not cycle else [reqs] * processes
    procs = [CONTEXT.Process(target=_load_process, args=(port, share[i], cycle, per[i], ok_status, warmup, seconds,
                                                         ready, go, out), daemon=True)
             for i in range(processes) if per[i]]
    for p in procs:
        p.start()
    try:
        for _ in procs:
            _wait(lambda: ready.acquire(timeout=0.2), procs, START_BOUND, "start")
        before = {name: cpu_seconds(pids) for name, pids in cpu.items()}
        go.set()
        rows: list[Any] = []
        for _ in procs:
            rows.append(_wait(lambda: _get(out), procs, warmup + seconds + 90, "finish"))
        spent = {name: cpu_seconds(pids) - before[name] for name, pids in cpu.items()}
    finally:
        for p in procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
                p.join()
    ok, bad = sum(r[0] for r in rows), sum(r[1] for r in rows)
    exhausted = any(r[5] for r in rows)
    lo = min(r[2] for r in rows)
    # Out of pre-signed tokens before the window closed: the window ends at the last answer.
    hi = max(r[4] for r in rows) if exhausted else max(r[3] for r in rows)
    return Rate(ok / max(hi - lo, 1e-9), ok, bad, exhausted, hi - lo, sum(r[6] for r in rows), spent)


def _get(q: Any) -> Any:
    try:
        return q.get(timeout=0.2)
    except queue.Empty:
        return None


def _wait(step: Any, procs: list[Any], bound: float, what: str) -> Any:
    """Repeat `step` until it answers something truthy; a load process that has died
    meanwhile, or `bound` seconds, is a RuntimeError."""
    until = time.monotonic() + bound
    while time.monotonic() < until:
        got = step()
        if got:
            return got
        dead = [p for p in procs if p.exitcode not in (None, 0)]
        if dead:
            raise RuntimeError(f"a load process exited with code {dead[0].exitcode} before it could {what}")
    raise RuntimeError(f"the load processes did not {what} within {bound:g} s")


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of these processes so far (Linux /proc)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return total / os.sysconf("SC_CLK_TCK")



# -- the stack's processes: CPU by program (/proc) ------------------------------------------
def tree(root: int) -> list[int]:
    """`root` and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out


#: The stack's programs by a mark in their command line, first match wins (the sweeper's
#: and the mail listener's `-m workers.<name>` before the RQ workers' `-m workers`).
ROLES = (("web", "gunicorn"), ("valkey", "valkey"), ("sweeper", "sweeper"), ("mail", "mail"),
         ("worker", "-m workers"))


def role(pid: int) -> str:
    """Which of the stack's programs a process is (for the CPU split)."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "other"
    for name, mark in ROLES:
        if mark in cmd:
            return name
    return "other"


def cpu_split(pids: list[int]) -> dict[str, float]:
    """CPU seconds so far of these processes, summed by program (`role`)."""
    out: dict[str, float] = {}
    for pid in pids:
        out[role(pid)] = out.get(role(pid), 0.0) + cpu_seconds([pid])
    return out
