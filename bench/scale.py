"""Benchmark: Kontor with many active games in one Valkey or on a Valkey Cluster (issue 14,
item 5; issue 24, item 7).

Starts the stack as `make run` starts it (`python -m service.dev.devstack`: embedded
Valkey with AOF, `appendfsync` as `KONTOR_DURABILITY` asks, gunicorn, the RQ workers of the `Procfile` (one per core),
the sweeper, the mail processes) on the ports from `--port` (web; Valkey, mail-in and
the dev outbox on the next three), and loads it with 10, 100, 1,000 and 10,000 active
games (`--sizes`, up to 100,000 and more) of two workloads:

* `sealedbid`: the peer benchmark's 4-seat sealed-bid title (20 rounds; a game is loaded
  halfway, after 10 rounds: 40 orders), loaded into the stack's processes from
  `--plugin` (default `bench/sealedbid`) by `PYTHONPATH`. When that plugin is not there,
  the workload is reported as skipped (nothing is made up in its place);
* `haendler`: 4-seat Die Händler, seat 0 a player and seats 1-3 `greedy` bots, loaded
  mid-game (after step `--haendler-step`, 78 by default, about half a game), waiting for
  seat 0.

Games are played for real through the HTTP API (signed orders) up to `--real-sealedbid` /
`--real-haendler` of them; above that, the store is filled with copies of the real games
under new ids: every key of a game is copied with DUMP/RESTORE and its TTL, its events
stream is grown again entry by entry with XADD (a RESTOREd stream is packed tighter than
one the service grew), and the shared index entries are added (the games index, the
running set, the listing indexes, the open step's scheduled deadline job, an
Idempotency-Key record share).
Copies are whole games: the timed loop plays some of them. The copies are written through
the store's own client and key names (`service.store.base.store_client`,
`service.store.keys.Keys`), so on a cluster every key goes to the master of its slot and
the games spread over the shards as the service's own would; the deadline jobs go to the
queue's Valkey.

`--store cluster` (issue 24) runs the game store on an embedded 3-master Valkey Cluster
(`service.dev.cluster.start_cluster`, the masters on `--port + 4` to `+ 6`, each with
the settings of `make run`'s Valkey) and the job queue on a Valkey of its own (`--port +
1`): the stack gets `KONTOR_REDIS_URL=redis-cluster://...` and `KONTOR_QUEUE_URL`
(`bench/lib/devstack.py`). `--store single` (the default) is `make run`'s one Valkey.

At each size, once the queues are quiet (no job waiting, running or scheduled to run
within a minute), it prints one JSON line:

* `kb_per_game`: the store's `used_memory` (summed over the cluster's masters) above the
  idle stack's, per game; `own_kb`: the game's own keys (`MEMORY USAGE`, summed over one
  real game's keys); `keys_kb_per_game`: every key's `MEMORY USAGE` by kind (up to
  `--breakdown-upto` games); on a cluster also `queue_kb_per_game` (the queue's Valkey)
  and `keys_per_master` (how the keys spread);
* `intake_per_s`: orders answered 202 per second by `--clients` closed-loop players in
  `--seconds` seconds, each on a game picked at random among those (real and copies) no
  timed loop has played yet, then on the next such game once its game is over;
* `resolve_p50_ms`, `resolve_p99_ms`: from sending an order that completed its step (its
  receipt says `resolving`; the step may resolve before that answer arrives, so the
  clock starts at the send) until the next step is visible in the store
  (keyspace notifications, as `bench/api_bench.py` waits); with `--webhooks`, in the
  sealed-bid workload, until every seat's webhook receiver got the next step's
  `step.opened` (the players bid when told, as push clients do);
* `commands_per_move`: Valkey commands (INFO commandstats, summed) per accepted order
  while the loop ran, whatever sent them (web, workers, sweeper; the bench's own
  notifications reads are taken off), and per resolved step (`commands_per_step`; in Die
  Händler the bots' steps come between two of seat 0's orders); `jobs_per_step`: RQ
  jobs run per resolved step;
* `intake_ratio`, `p50_ratio`: the intake and the p50 against the smallest size's,
  measured in the same run (the baseline); `load_1m`: the host's load average as the
  timed loop started; `fill_s`: the seconds the copies of this size took;
  `server_cores`, `cores_by_process`: the CPU the stack's processes (every Valkey
  included) spent while the loop ran, per second, in all and by program (web, worker,
  sweeper, valkey, ...): what grows with the games (the sweeper reads every running game
  each sweep).

`--webhooks` gives every player seat of the real games a webhook to a receiver in the
bench (loopback), so each commit's notices go out as they do in push mode; use it with a
small `--sizes` to count jobs and Valkey commands per move in push mode (memory then
includes the delivery records, which the targets below do not).

Last line: a summary with, per workload, the flatness ratio of the intake (the largest
size over the smallest; target within 25%: 0.75 to 1.25) and of the p50 latency, the
range of both ratios over every size (`flat`: all within 25%), and the memory per game
at the largest size against the targets (16 KB sealed-bid, 48 KB Die Händler).

    .venv/bin/python bench/scale.py [--sizes 10,100,1000,10000] [--workloads sealedbid,haendler]
        [--store single|cluster] [--real-sealedbid 200] [--real-haendler 40] [--seconds 8]
        [--clients 8] [--webhooks] [--port 8400] [--source DIR] [--breakdown-upto 100000]
        [--time-limit 3600]
    .venv/bin/python bench/scale.py --store cluster --sizes 10,100,1000,10000,100000 \
        --workloads sealedbid

`--source` runs the stack from another checkout of Kontor (its `service`, `workers` and
`Procfile`), for a before/after comparison in one sitting.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import secrets
import signal
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import redis
import requests
from lib import limit
from lib.devstack import STORES, Devstack
from lib.load import cpu_split
from lib.watch import KeyspaceWatcher
from redis.crc import key_slot

from service.protocol.crypto import SigningKey
from service.store.base import store_client
from service.store.keys import Keys

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "bench" / "sealedbid"
HOST = "127.0.0.1"
TARGET_KB = {"sealedbid": 16.0, "haendler": 48.0}
FLATNESS = 0.25
SEATS = 4


# -- the stack --------------------------------------------------------------------------
# -- players over HTTP --------------------------------------------------------------------
@dataclass
class Game:
    id: str
    keys: dict[int, SigningKey]  # player seats
    host: SigningKey


class Api:
    def __init__(self, url: str) -> None:
        self.url = url
        self.local = threading.local()

    @property
    def s(self) -> requests.Session:
        s = getattr(self.local, "s", None)
        if s is None:
            s = self.local.s = requests.Session()
        return s

    def call(self, method: str, path: str, expect: int, **kw: Any) -> Any:
        for _ in range(5):  # as a client does: a 503 says when to try again
            r = self.s.request(method, self.url + path, timeout=60, **kw)
            if r.status_code != 503:
                break
            time.sleep(float(r.headers.get("Retry-After") or 1) / 5)
        if r.status_code != expect:
            raise RuntimeError(f"{method} {path}: {r.status_code} {r.text[:300]}")
        return r.json() if r.content else None

    @staticmethod
    def bearer(key: SigningKey, gid: str) -> dict[str, str]:
        now = int(time.time())
        return {"Authorization": f"Bearer {key.sign({'game': gid, 'iat': now, 'exp': now + 300})}"}

    def new_game(self, title: str, seed: int, bots: dict[int, str], options: dict[str, Any],
                 hook: str | None) -> Game:
        host = SigningKey.generate()
        body = {"title": title, "seats": SEATS, "host_key": host.public, "seed": seed, "name": f"scale {seed}",
                "options": options, "deadlines": {"sealed_seconds": 86400, "sequential_seconds": 86400}}
        gid = self.call("POST", "/games", 201, json=body, headers={"Idempotency-Key": uuid.uuid4().hex})["id"]
        keys = {}
        for seat in range(SEATS):
            if seat in bots:
                self.call("PATCH", f"/games/{gid}/seats/{seat}", 200, json={"bot": bots[seat]},
                          headers=self.bearer(host, gid))
                continue
            key = SigningKey.generate()
            self.call("POST", f"/games/{gid}/seats", 201, json={"name": f"P{seat}", "public_key": key.public,
                                                                   "seat": seat},
                      headers={"Idempotency-Key": uuid.uuid4().hex})
            keys[seat] = key
            if hook:
                self.call("PUT", f"/games/{gid}/seats/{seat}/contact", 200, json={"webhook_url": hook},
                          headers=self.bearer(key, gid))
        self.call("PATCH", f"/games/{gid}", 200, json={"status": "running"},
                  headers={**self.bearer(host, gid), "Idempotency-Key": uuid.uuid4().hex})
        return Game(gid, keys, host)

    def order(self, game: Game, phase: int, seat: int, order: Any) -> dict[str, Any]:
        claims = {"game": game.id, "phase": phase, "seat": seat, "iat": int(time.time()), "jti": uuid.uuid4().hex,
                  "order": order}
        return dict(self.call("PUT", f"/games/{game.id}/phases/{phase}/orders/{seat}", 202,
                              json={"token": game.keys[seat].sign(claims)}))

    def default(self, game: Game, seat: int) -> Any:
        ph = self.call("GET", f"/games/{game.id}/phases/current", 200, headers=self.bearer(game.keys[seat], game.id))
        return ph["you"]["default_order"]


class Hooks:
    """A webhook receiver on loopback that answers 204 to everything (push mode)."""

    def __init__(self, port: int) -> None:
        self.count = 0
        #: (game, step) -> arrival times of its `step.opened` notices (`game.finished`: step 0).
        self.opened: dict[tuple[str, int], list[float]] = {}
        self.cond = threading.Condition()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                at = time.perf_counter()
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()
                note = json.loads(body)
                kind, data = note.get("type"), note.get("data") or {}
                with hooks.cond:
                    hooks.count += 1
                    if kind in ("step.opened", "game.finished"):
                        step = int(data["phase"]) if kind == "step.opened" else 0
                        hooks.opened.setdefault((data["game"], step), []).append(at)
                        hooks.cond.notify_all()

        hooks = self
        self.server = ThreadingHTTPServer((HOST, port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://{HOST}:{port}/hook"

    def told(self, gid: str, step: int, seats: int, timeout: float = 60) -> float:
        """When the last of `seats` seats got the `step.opened` of `step` (or the game's
        end): the push-mode round's end, as a player acting on webhooks sees it."""
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                got = self.opened.get((gid, step)) or self.opened.get((gid, 0)) or []
                if len(got) >= seats:
                    return max(got[:seats])
                if time.monotonic() > end:
                    raise RuntimeError(f"game {gid}: step {step} not told to {seats} seats within {timeout} s")
                self.cond.wait(0.5)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# -- the store, read by the bench -----------------------------------------------------------
class Store:
    """The bench's reads of Valkey, counted (taken off the commands per move): the game
    store through the store's own client (`store_client`: a cluster client on a cluster,
    which sends each key to its shard), the job queue (RQ) through a plain client of its
    server (on a single Valkey, the same server)."""

    def __init__(self, stack: Devstack) -> None:
        self.stack = stack
        self.cluster = stack.store == "cluster"
        self.r: Any = store_client(stack.store_url)
        self.raw: Any = store_client(stack.store_url, decode=False)
        self.q = redis.Redis.from_url(stack.redis_url, decode_responses=True)
        self.qraw = redis.Redis.from_url(stack.redis_url)
        #: Every store server alone (the cluster's masters), for scans and INFO.
        self.nodes = [redis.Redis.from_url(u, decode_responses=True) for u in stack.store_nodes]
        self.own = 0
        self.lock = threading.Lock()

    def count(self, n: int = 1) -> None:
        with self.lock:
            self.own += n

    def phase(self, gid: str) -> dict[str, str]:
        self.count()
        return dict(self.r.hgetall(f"kontor:{{g:{gid}}}:phase"))

    def commands(self) -> int:
        self.count(len(self.stack.servers))
        return self.stack.commands()

    def jobs_run(self) -> int:
        """Jobs the registered workers have run so far (RQ keeps the count per worker)."""
        names = list(self.q.smembers("rq:workers"))
        total = 0
        for name in names:
            raw = self.q.hmget(name, "successful_job_count", "failed_job_count")
            total += sum(int(x or 0) for x in raw)
        self.count(1 + len(names))
        return total

    def used(self) -> int:
        """The store's `used_memory` (summed over the cluster's masters)."""
        return self.stack.used_memory()

    def queue_used(self) -> int:
        """The queue's own Valkey's `used_memory` (a cluster store's queue is apart)."""
        return int(self.q.info("memory")["used_memory"])

    def quiet(self, timeout: float = 300) -> None:
        """Wait until no job waits or runs (and none is due within a minute)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            busy = sum(int(self.q.llen(f"rq:queue:{q}") or 0) for q in ("resolve", "notify"))
            busy += sum(int(self.q.zcard(f"rq:wip:{q}") or 0) for q in ("resolve", "notify"))
            busy += sum(int(self.q.zcount(f"rq:scheduled:{q}", 0, time.time() + 60) or 0)
                        for q in ("resolve", "notify"))
            if not busy:
                time.sleep(0.5)
                return
            time.sleep(0.2)
        raise RuntimeError("the queues did not get quiet")

    def game_keys(self, gid: str) -> list[str]:
        """Every key of game `gid`: on a cluster, the keys of its hash tag's slot on the
        node that holds it (a scan of every node would read every game's keys)."""
        head = f"kontor:{{g:{gid}}}:"
        if not self.cluster:
            return list(self.r.scan_iter(match=head + "*", count=1000))
        slot = key_slot(head.encode())
        node = self.r.get_node_from_key(head)
        n = int(self.r.execute_command("CLUSTER COUNTKEYSINSLOT", slot, target_nodes=node))
        keys = self.r.execute_command("CLUSTER GETKEYSINSLOT", slot, n, target_nodes=node) if n else []
        return [k for k in keys if k.startswith(head)]

    def scan_all(self, pattern: str | None = None, count: int = 5000) -> list[tuple[redis.Redis, list[str]]]:
        """Every store key (matching `pattern`), by server: (that server's client, keys)."""
        return [(node, list(node.scan_iter(match=pattern, count=count))) for node in self.nodes]

    def breakdown(self) -> dict[str, int]:
        """Bytes of every key (`MEMORY USAGE`), by kind: a game's own keys, Idempotency-Key
        records, RQ job hashes, the rest of RQ (queues, registries, workers), the rest
        (the store's servers and, apart from them, the queue's)."""
        out = {"game": 0, "idem": 0, "rq_jobs": 0, "rq_other": 0, "other": 0}
        servers = self.nodes + ([self.q] if self.cluster else [])
        for node in servers:
            batch: list[str] = []

            def flush(node: redis.Redis = node, batch: list[str] = batch) -> None:
                pipe = node.pipeline(transaction=False)
                for k in batch:
                    pipe.memory_usage(k, samples=0)
                for k, n in zip(batch, pipe.execute(), strict=True):
                    kind = ("game" if k.startswith("kontor:{g:") else "idem" if k.startswith("kontor:idem:")
                            else "rq_jobs" if k.startswith("rq:job:") else "rq_other" if k.startswith("rq:")
                            else "other")
                    out[kind] += int(n or 0)
                batch.clear()

            for k in node.scan_iter(count=5000):
                batch.append(k)
                if len(batch) >= 5000:
                    flush()
            if batch:
                flush()
        return out

    def own_bytes(self, gid: str) -> dict[str, int]:
        """One game's keys by name (`orders:7` -> `orders`): bytes each (`MEMORY USAGE`)."""
        out: dict[str, int] = {}
        for k in self.game_keys(gid):
            name = k.split("}:", 1)[1].split(":", 1)[0]
            out[name] = out.get(name, 0) + int(self.r.memory_usage(k, samples=0) or 0)
        return out

    def shards(self) -> list[int]:
        """Keys on each of the store's servers (DBSIZE): how the games spread."""
        return [int(node.dbsize()) for node in self.nodes]


class Watcher(KeyspaceWatcher):
    """Time-stamps, per game, the keyspace notification after which its step moved on."""

    def __init__(self, store: Store, urls: list[str]) -> None:
        self.store = store
        self.waits: dict[str, tuple[str, threading.Event, list[float]]] = {}
        super().__init__(urls, "__keyspace@0__:kontor:*:phase")

    def seen(self, key: str, at: float) -> None:
        gid = key.split("{g:", 1)[1].split("}", 1)[0]
        with self.lock:
            wait = self.waits.get(gid)
        if wait is not None and not wait[1].is_set() and self.store.phase(gid).get("id") != wait[0]:
            wait[2].append(at)
            wait[1].set()

    def expect(self, gid: str, phase: str) -> tuple[threading.Event, list[float]]:
        done: tuple[str, threading.Event, list[float]] = (phase, threading.Event(), [])
        with self.lock:
            self.waits[gid] = done
        return done[1], done[2]

    def wait(self, gid: str, phase: str, done: threading.Event, at: list[float], timeout: float = 60) -> float:
        if not done.wait(timeout) and self.store.phase(gid).get("id") == phase:
            raise RuntimeError(f"game {gid}: step {phase} not resolved within {timeout} s")
        with self.lock:
            self.waits.pop(gid, None)
        return at[0] if at else time.perf_counter()

    def forget(self, gid: str) -> None:
        with self.lock:
            self.waits.pop(gid, None)


# -- workloads ------------------------------------------------------------------------------
@dataclass
class Workload:
    title: str
    bots: dict[int, str]
    options: dict[str, Any]
    #: Play a fresh game to where it is loaded (mid-game), through the API.
    setup: Callable[[Bench, Game], None]
    #: One move of the timed loop on a game: (orders accepted, resolve latency in ms or None, steps resolved).
    move: Callable[[Bench, Game], tuple[int, float | None, int]]


@dataclass
class Sample:
    orders: int = 0
    steps: int = 0
    latencies: list[float] = field(default_factory=list)


class Bench:
    def __init__(self, stack: Devstack, args: argparse.Namespace, hooks: Hooks | None) -> None:
        self.stack, self.args, self.hooks = stack, args, hooks
        self.api = Api(stack.url)
        self.store = Store(stack)
        #: The store's key names, as the service makes them (a copy's index entries go
        #: where the service would put that game's: on a cluster, to its shard).
        self.keys = Keys()
        self.keys.prefix = "kontor"
        self.watcher: Watcher | None = None
        self.seed = iter(range(1, 10**9))
        self.seed_lock = threading.Lock()
        self.snapshots: dict[str, list[tuple[str, str, int, Any]]] = {}

    def next_seed(self) -> int:
        with self.seed_lock:
            return next(self.seed)

    # -- sealed bid ----------------------------------------------------------------------
    def bid_round(self, game: Game, timed: bool) -> tuple[int, float | None]:
        ph = self.store.phase(game.id)
        if ph.get("status") != "collecting":
            raise RuntimeError(f"game {game.id}: step {ph} is not collecting")
        pid = ph["id"]
        seats = list(range(SEATS))
        random.shuffle(seats)
        for seat in seats[:-1]:
            self.api.order(game, int(pid), seat, {"bid": random.randrange(1000)})
        assert self.watcher is not None
        done, at = self.watcher.expect(game.id, pid)
        answered = time.perf_counter()  # the last order sent (the step may resolve before its answer arrives)
        receipt = self.api.order(game, int(pid), seats[-1], {"bid": random.randrange(1000)})
        if receipt["step_status"] != "resolving":
            raise RuntimeError(f"game {game.id}: the last bid did not complete step {pid}")
        if self.hooks is not None:  # push mode: the round ends when every seat was told
            self.watcher.forget(game.id)
            finished = self.hooks.told(game.id, int(pid) + 1, SEATS)
        else:
            finished = self.watcher.wait(game.id, pid, done, at)
        return SEATS, (finished - answered) * 1000 if timed else None

    def sealed_setup(self, game: Game) -> None:
        for _ in range(self.args.sealedbid_rounds):
            self.bid_round(game, timed=False)

    def sealed_move(self, game: Game) -> tuple[int, float | None, int]:
        if self.store.phase(game.id).get("status") == "finished":
            return 0, None, 0
        n, ms = self.bid_round(game, timed=True)
        return n, ms, 1

    # -- Die Händler, seat 0 against three bots --------------------------------------------
    def seat0_turn(self, game: Game, timed: bool) -> tuple[int, float | None, int]:
        """Wait until seat 0 is asked (bots play meanwhile), then answer with its default;
        (orders, latency when its order completed the step, steps resolved meanwhile)."""
        assert self.watcher is not None
        start = self.store.phase(game.id)
        end = time.monotonic() + 120
        ph = start
        while True:
            if ph.get("status") == "finished":
                return 0, None, int(ph["id"]) - int(start["id"])
            if ph.get("status") == "collecting" and 0 in json.loads(ph["expected"]):
                self.store.count()
                if not self.store.r.hexists(f"kontor:{{g:{game.id}}}:orders:{ph['id']}", "0"):
                    break
            if time.monotonic() > end:
                raise RuntimeError(f"game {game.id}: seat 0 never asked after step {start['id']}")
            done, _ = self.watcher.expect(game.id, ph["id"])  # the bots play: wait for the step to move
            if self.store.phase(game.id).get("id") == ph["id"]:
                done.wait(1.0)
            self.watcher.forget(game.id)
            ph = self.store.phase(game.id)
        pid = ph["id"]
        order = self.api.default(game, 0)
        done, at = self.watcher.expect(game.id, pid)
        answered_at = time.perf_counter()  # sent, as above
        receipt = self.api.order(game, int(pid), 0, order)
        ms = None
        if receipt["step_status"] == "resolving":
            finished = self.watcher.wait(game.id, pid, done, at)
            ms = (finished - answered_at) * 1000 if timed else None
        else:
            self.watcher.forget(game.id)
        return 1, ms, int(pid) - int(start["id"])

    def haendler_setup(self, game: Game) -> None:
        while True:
            self.seat0_turn(game, timed=False)
            ph = self.store.phase(game.id)
            if int(ph["id"]) >= self.args.haendler_step:
                break
        # Leave it where seat 0 is asked (bots answered): copies then wait for a player only.
        while True:
            ph = self.store.phase(game.id)
            if ph["status"] == "collecting" and 0 in json.loads(ph["expected"]):
                others = set(json.loads(ph["expected"])) - {0}
                got = set(self.store.r.hkeys(f"kontor:{{g:{game.id}}}:orders:{ph['id']}"))
                if {str(s) for s in others} <= got:
                    return
            elif ph["status"] == "finished":
                raise RuntimeError(f"game {game.id} ended before step {self.args.haendler_step}")
            else:
                self.seat0_turn(game, timed=False)
                continue
            time.sleep(0.05)

    def haendler_move(self, game: Game) -> tuple[int, float | None, int]:
        return self.seat0_turn(game, timed=True)

    # -- copies -----------------------------------------------------------------------------
    def snapshot(self, src: str) -> list[tuple[str, str, int, Any]]:
        """Game `src`'s keys as a copy needs them: (key, type, TTL in ms, DUMP or, for a
        stream, its entries); the open step's scheduled deadline job too (as
        `rq:job:...`, its score in place of the TTL). Read once per real game."""
        held = self.snapshots.get(src)
        if held is not None:
            return held
        raw = self.store.raw
        keys = self.store.game_keys(src)
        pipe = raw.pipeline(transaction=False)
        for k in keys:
            pipe.type(k)
            pipe.pttl(k)
        meta = pipe.execute()
        kinds = [(k, meta[2 * i].decode(), int(meta[2 * i + 1])) for i, k in enumerate(keys)]
        read = raw.pipeline(transaction=False)
        for k, kind, _ in kinds:
            read.xrange(k) if kind == "stream" else read.dump(k)
        out = [(k, kind, ttl, value) for (k, kind, ttl), value in zip(kinds, read.execute(), strict=True)]
        ph = self.store.phase(src)
        if ph.get("deadline"):
            job = f"deadline-{src}-{ph['id']}-{math.ceil(float(ph['deadline'])) + 1}"
            score = self.store.q.zscore("rq:scheduled:resolve", job)
            data = self.store.qraw.dump(f"rq:job:{job}")
            if score is not None and data is not None:
                out.append((f"rq:job:{job}", "rq", int(score), data))
        self.snapshots[src] = out
        return out

    def copy(self, src: str, idem: list[tuple[int, bytes]], share: int) -> str:
        """A copy of game `src` under a new id (see the module's docstring); its id. The
        writes go through the store's client in one batch (on a cluster, split by shard:
        each key to the master of its slot), the deadline job to the queue."""
        new = secrets.token_hex(5)
        write = self.store.raw.pipeline(transaction=False)
        queue = self.store.qraw.pipeline(transaction=False)
        for k, kind, ttl, value in self.snapshot(src):
            if kind == "rq":  # the open step's deadline check, for the copy
                job = k.replace(src, new)
                queue.restore(job, 0, value)
                queue.zadd("rq:scheduled:resolve", {job.removeprefix("rq:job:"): ttl})
                continue
            nk = k.replace(f"{{g:{src}}}", f"{{g:{new}}}")
            if kind == "stream":
                for entry_id, fields in value:
                    write.xadd(nk, fields, id=entry_id)
            else:
                write.restore(nk, max(ttl, 0), value)
        write.hset(self.keys.key(new, "meta"), "id", new)
        made = time.time()
        write.zadd(self.global_key("games_key", new), {new: made})
        for index in ("running", "all"):  # the copy is a running game: the listing indexes list it
            write.zadd(self.keys.index_key(index, new), {new: made})
        write.sadd(self.global_key("active_key", new), new)
        for i in range(share if idem else 0):  # a share of the Idempotency-Key records
            ttl, data = idem[random.randrange(len(idem))]
            write.restore(self.keys.idem_key("copy", f"{new}:{i}"), ttl, data)
        write.execute()
        if len(queue):
            queue.execute()
        return new

    def global_key(self, name: str, gid: str) -> str:
        """The key of a registry (`games_key`, `active_key`) that holds game `gid`: one key,
        or, where the store buckets it over hash tags, the game's bucket (a method of the
        game's id)."""
        attr = getattr(self.keys, name)
        return str(attr(gid) if callable(attr) else attr)

    # -- the run ------------------------------------------------------------------------------
    def run_workload(self, name: str, w: Workload) -> list[dict[str, Any]]:
        a = self.args
        sizes = a.sizes
        real_n = min(max(sizes), a.real_sealedbid if name == "sealedbid" else a.real_haendler)
        base, queue_base = self.store.used(), self.store.queue_used()
        idem_before = set(self.store.r.scan_iter(match="kontor:idem:*", count=1000))
        hook = self.hooks.url if self.hooks else None

        def make(_: int) -> Game:
            game = self.api.new_game(w.title, self.next_seed(), w.bots, w.options, hook)
            w.setup(self, game)
            return game

        real: list[Game] = []
        idem: list[tuple[int, bytes]] = []
        share = 0
        games: list[str] = []
        by_id: dict[str, Game] = {}
        own: dict[str, int] = {}
        #: Games a timed loop has played: each loop takes games nobody played since they
        #: were loaded, so every size starts from the same point of the game.
        played: set[str] = set()
        self.snapshots = {}

        def play_real(n: int) -> None:
            """Play real games until there are `n` (each size gets its own share first)."""
            nonlocal idem, share, own
            if len(real) >= n:
                return
            t0 = time.monotonic()
            with ThreadPoolExecutor(a.clients) as pool:
                made = list(pool.map(make, range(n - len(real))))
            print(f"{name}: {len(made)} more real games played in {time.monotonic() - t0:.0f} s", file=sys.stderr,
                  flush=True)
            for g in made:  # what copies copy: the games as loaded, before a timed loop plays them
                self.snapshot(g.id)
            real.extend(made)
            games.extend(g.id for g in made)
            by_id.update({g.id: g for g in made})
            self.store.quiet()
            idem_keys = sorted(set(self.store.r.scan_iter(match="kontor:idem:*", count=1000)) - idem_before)
            share = round(len(idem_keys) / max(1, len(real)))
            pairs = [(max(int(self.store.r.pttl(k)), 1), self.store.raw.dump(k)) for k in idem_keys]
            idem = [(ttl, data) for ttl, data in pairs if data is not None]
            own = self.store.own_bytes(real[0].id)

        rows: list[dict[str, Any]] = []
        prev_used, prev_n = base, 0
        for size in sizes:
            play_real(min(size, real_n))
            fill_s = 0.0
            if len(games) < size:
                t0 = time.monotonic()
                while len(games) < size:
                    src = real[len(games) % len(real)]
                    new = self.copy(src.id, idem, share)
                    games.append(new)
                    by_id[new] = Game(new, src.keys, src.host)
                fill_s = time.monotonic() - t0
                print(f"{name}: {size} games ({size - real_n if size > real_n else 0} copies, "
                      f"{fill_s:.0f} s)", file=sys.stderr, flush=True)
            self.store.quiet()
            used = self.store.used()
            kb = (used - base) / 1024 / size
            marginal = (used - prev_used) / 1024 / max(1, size - prev_n)
            prev_used, prev_n = used, size
            t0 = time.monotonic()
            kinds = ({f"{kind}_kb": round(n / 1024 / size, 2) for kind, n in self.store.breakdown().items()}
                     if size <= a.breakdown_upto else None)
            if kinds is not None:
                print(f"{name}: memory by kind of key read in {time.monotonic() - t0:.0f} s", file=sys.stderr,
                      flush=True)
            fresh = [g for g in games if g not in played]
            order = random.sample(fresh, min(len(fresh), max(a.clients, round(a.clients * a.seconds))))
            load = os.getloadavg()[0]
            sample = self.timed(w, [by_id[g] for g in order], played)
            row = {"bench": "scale", "store": a.store, "workload": name, "games": size, "real": min(size, real_n),
                   "copies": max(0, size - real_n), "kb_per_game": round(kb, 1),
                   "marginal_kb_per_game": round(marginal, 1), "own_kb": round(sum(own.values()) / 1024, 1),
                   "own_keys_kb": {n: round(b / 1024, 2) for n, b in sorted(own.items())},
                   "target_kb": TARGET_KB[name], "keys_kb_per_game": kinds, **sample, "webhooks": bool(self.hooks)}
            if self.store.cluster:
                row["queue_kb_per_game"] = round((self.store.queue_used() - queue_base) / 1024 / size, 2)
                row["keys_per_master"] = self.store.shards()
            if rows:  # the ratios to the baseline: the smallest size, measured in this run
                first = rows[0]
                row["intake_ratio"] = round(row["intake_per_s"] / first["intake_per_s"], 2)
                row["p50_ratio"] = (round(row["resolve_p50_ms"] / first["resolve_p50_ms"], 2)
                                    if first["resolve_p50_ms"] and row["resolve_p50_ms"] else None)
            row["fill_s"] = round(fill_s, 1)
            row["load_1m"] = round(load, 2)
            print(json.dumps(row), flush=True)
            rows.append(row)
        return rows

    def timed(self, w: Workload, games: list[Game], played: set[str]) -> dict[str, Any]:
        """`--clients` closed-loop players for `--seconds`, each on one game of `games` (in
        their order) at a time, the next one when that game is over: intake, latency, costs."""
        stop = time.monotonic() + self.args.seconds
        out = Sample()
        lock = threading.Lock()
        errors: list[BaseException] = []
        todo = list(reversed(games))

        def play() -> None:
            try:
                while time.monotonic() < stop:
                    with lock:
                        if not todo:
                            return  # every game given is played out
                        game = todo.pop()
                        played.add(game.id)
                    while time.monotonic() < stop:
                        n, ms, steps = w.move(self, game)
                        with lock:
                            out.orders += n
                            out.steps += steps
                            if ms is not None:
                                out.latencies.append(ms)
                        if n == 0 and steps == 0:
                            break  # the game is over: the next one
            except BaseException as exc:  # noqa: BLE001  (reported below)
                errors.append(exc)

        own0, cmd0, jobs0 = self.store.own, self.store.commands(), self.store.jobs_run()
        pids = self.stack.pids()
        cpu0 = cpu_split(pids)
        t0 = time.perf_counter()
        threads = [threading.Thread(target=play, daemon=True) for _ in range(min(self.args.clients, len(games)))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seconds = time.perf_counter() - t0
        cpu1 = cpu_split(pids)
        cores = {k: round((v - cpu0.get(k, 0.0)) / seconds, 2) for k, v in sorted(cpu1.items())}
        if errors:
            raise RuntimeError(f"a player failed: {errors[0]!r}")
        self.store.quiet()
        commands = self.store.commands() - cmd0 - (self.store.own - own0)
        jobs = self.store.jobs_run() - jobs0
        lat = sorted(out.latencies)
        return {"clients": len(threads), "seconds": round(seconds, 1), "orders": out.orders,
                "intake_per_s": round(out.orders / seconds, 1), "steps": out.steps,
                "resolve_p50_ms": round(pct(lat, 50), 1) if lat else None,
                "resolve_p99_ms": round(pct(lat, 99), 1) if lat else None,
                "commands_per_move": round(commands / max(1, out.orders), 1),
                "commands_per_step": round(commands / max(1, out.steps), 1),
                "jobs_per_step": round(jobs / max(1, out.steps), 2),
                "server_cores": round(sum(cores.values()), 2), "cores_by_process": cores}

    def run(self) -> dict[str, Any]:
        catalog = {t["id"] for t in self.api.call("GET", "/catalog", 200)}
        workloads = {
            "sealedbid": Workload("sealedbid", {}, {"rounds": 20}, Bench.sealed_setup, Bench.sealed_move),
            "haendler": Workload("haendler", {1: "greedy", 2: "greedy", 3: "greedy"}, {}, Bench.haendler_setup,
                                 Bench.haendler_move),
        }
        summary: dict[str, Any] = {"bench": "scale-summary", "store": self.args.store, "sizes": self.args.sizes}
        self.watcher = Watcher(self.store, self.stack.store_nodes)
        try:
            for name in self.args.workloads:
                if name not in catalog:
                    print(json.dumps({"bench": "scale", "workload": name, "skipped":
                                      f"title {name!r} is not installed (plugin: {self.args.plugin})"}), flush=True)
                    summary[name] = "skipped"
                    continue
                rows = self.run_workload(name, workloads[name])
                first, last = rows[0], rows[-1]
                intake = [r.get("intake_ratio", 1.0) for r in rows]
                p50 = [r["p50_ratio"] for r in rows[1:] if r.get("p50_ratio") is not None]
                summary[name] = {
                    "baseline_games": first["games"],
                    "intake_flatness": round(last["intake_per_s"] / first["intake_per_s"], 2),
                    "p50_flatness": (round(last["resolve_p50_ms"] / first["resolve_p50_ms"], 2)
                                     if first["resolve_p50_ms"] and last["resolve_p50_ms"] else None),
                    "intake_ratio_range": [min(intake), max(intake)],
                    "p50_ratio_range": [min(p50), max(p50)] if p50 else None,
                    "flat_within": FLATNESS,
                    "flat": (all(abs(x - 1) <= FLATNESS for x in intake) and bool(p50)
                             and all(abs(x - 1) <= FLATNESS for x in p50)),
                    "kb_per_game": last["kb_per_game"], "target_kb": TARGET_KB[name],
                    "memory_ratio": round(last["kb_per_game"] / TARGET_KB[name], 2),
                    "commands_per_move": first["commands_per_move"], "commands_per_step": first["commands_per_step"],
                    "jobs_per_step": first["jobs_per_step"],
                }
                self.reset()
        finally:
            self.watcher.close()
        return summary

    def reset(self) -> None:
        """Empty the store between workloads: every key but the server secret and the job
        queue's (on one Valkey, the same server): games, their registries and indexes,
        Idempotency-Key records, the sweeper's cursors."""
        keep = {self.keys.secret_key}
        for node in self.store.nodes:
            batch = [k for k in node.scan_iter(match="kontor:*", count=5000)
                     if k not in keep and not k.startswith("kontor:{ready}")]
            for i in range(0, len(batch), 5000):  # one key a command: on a cluster, keys of many slots
                pipe = node.pipeline(transaction=False)
                for k in batch[i:i + 5000]:
                    pipe.delete(k)
                pipe.execute()
        q = self.store.q
        q.delete("rq:scheduled:resolve", "rq:scheduled:notify")
        for job in list(q.scan_iter(match="rq:job:*", count=5000)):
            q.delete(job)
        self.store.quiet()


def pct(values: list[float], p: float) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(p) - 1]


def sizes_of(text: str) -> list[int]:
    out = sorted({int(x) for x in text.split(",") if x.strip()})
    if not out or out[0] < 1:
        raise argparse.ArgumentTypeError("sizes are whole numbers from 1")
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sizes", type=sizes_of, default=[10, 100, 1000, 10000], help="active games, comma-separated")
    parser.add_argument("--workloads", default="sealedbid,haendler", help="sealedbid, haendler or both")
    parser.add_argument("--real-sealedbid", type=int, default=200, help="sealed-bid games played for real")
    parser.add_argument("--real-haendler", type=int, default=40, help="Die Händler games played for real")
    parser.add_argument("--sealedbid-rounds", type=int, default=10, help="rounds played before a game is loaded")
    parser.add_argument("--haendler-step", type=int, default=78, help="Die Händler step a game is loaded at")
    parser.add_argument("--seconds", type=float, default=8.0, help="timed seconds at each size")
    parser.add_argument("--clients", type=int, default=8, help="closed-loop players (one game each) in the timed loop")
    parser.add_argument("--webhooks", action="store_true", help="every player seat gets a webhook (push mode)")
    parser.add_argument("--store", choices=STORES, default="single",
                        help="single: one Valkey (make run's); cluster: the store on an embedded 3-master Valkey "
                             "Cluster, the queue on a Valkey of its own")
    parser.add_argument("--breakdown-upto", type=int, default=100_000,
                        help="read every key's MEMORY USAGE (memory by kind of key) at sizes up to this one")
    parser.add_argument("--port", type=int, default=8400,
                        help="web port; Valkey (the queue's on a cluster), mail-in and outbox on the next 3, "
                             "the cluster's masters on the 3 after")
    parser.add_argument("--source", type=Path, default=ROOT, help="the Kontor checkout the stack runs")
    parser.add_argument("--plugin", type=Path, default=PLUGIN, help="the sealedbid title plugin's folder")
    limit.add_argument(parser, default=3600.0)
    args = parser.parse_args(argv)
    args.workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    if not set(args.workloads) <= set(TARGET_KB):
        parser.error(f"--workloads: choose from {', '.join(TARGET_KB)}")
    plugin = args.plugin if args.plugin.is_dir() else None
    stack = Devstack(args.port, Path(tempfile.mkdtemp(prefix="kontor-scale-")), source=args.source.resolve(),
                     pythonpath=[plugin] if plugin else [], store=args.store)
    hooks: Hooks | None = None

    def _term(*_: Any) -> None:
        raise SystemExit(143)

    signal.signal(signal.SIGTERM, _term)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    limit.arm(args.time_limit, "scale", hard_stop=stack.kill)
    try:
        if args.webhooks:
            hooks = Hooks(args.port + 10)
        stack.start()
        summary = Bench(stack, args, hooks).run()
    except (RuntimeError, requests.RequestException, redis.RedisError) as exc:
        print(f"scale: failed: {exc}\nthe stack's warnings and errors:\n{stack.log_errors()}", file=sys.stderr)
        raise SystemExit(1) from None
    finally:
        stack.stop()
        if hooks is not None:
            hooks.stop()
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
