"""Crash test (issue 23, item 8): acknowledged means durable, across host-crash-like kills.

Starts its own stack on loopback: an embedded Valkey with its append-only file
(`appendonly yes`, `appendfsync` as `--durability` needs it: `always` for `fsync-always`)
and the Procfile's `web` (gunicorn), `worker` (RQ) and `clock` (the sweeper), each in
its own process group. Client threads play games of the real titles (Die Händler,
Auf Achse, Fantasy Business; every seat a player with its own key) over the HTTP API,
as a person would: each makes a game (create), takes every seat (joins), starts it, and
answers every step it is asked with the seat's default order, signed; when a game ends
it makes a new one. Every acknowledged write is recorded with its receipt: a create
(201, the game id), a join (201, the seat and key), a start (200), an order (202, the
step, the seat, the token's one-time id and the receipt).

Each cycle lets the clients play for a random moment (`--play`), then SIGKILLs Valkey
and every Kontor process at once, in a random order (what a host crash does to the
processes), restarts them all, and checks, from the store itself:

- every acknowledged create is a game, every acknowledged join holds its seat with its key;
- every acknowledged order is there: for the open step, the seat's stored order has its
  one-time id and its receipt (`lost` otherwise); for a resolved step, the step's
  history record used that seat's order, not a default (`lost` otherwise);
- nothing was applied twice: each step is resolved once in the history (phases 1, 2,
  3, ... with no repeat), the history replays to the stored state digests
  (`engine.core.verify.verify_history`, the check `kontor verify` makes), and an
  order's receipt is answered for exactly one stored record;
- every game resumes: after the restart each running game plays on to its next step
  (or ends) within `--resume-timeout` seconds.

A process kill loses nothing the store had answered even without fsync (its writes are
in the operating system's cache): this test checks the order of things (the store has
a write before Kontor acknowledges it; no write is applied twice after a restart), not
the disk's fsync, which a host crash needs and `appendfsync always` / `WAITAOF`
provide (docs/operations.md, "Durability").

    .venv/bin/python bench/crash.py [--cycles 50] [--games 6] [--play 0.5,2.5]
        [--durability fsync-always|waitaof] [--seed 1] [--resume-timeout 30]

Prints one line per cycle, then the counts and, last, one JSON line:
{"bench":"crash","cycles":…,"acknowledged":{…},"lost":0,"applied_twice":0,"stalled":0,…}
Exit status 0 when nothing was lost, applied twice or stalled.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis
import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from lib.stack import lift_limits  # noqa: E402

from engine.core import registry  # noqa: E402
from engine.core.verify import verify_history  # noqa: E402
from service.config import Settings  # noqa: E402
from service.core.kontor import Kontor  # noqa: E402
from service.core.records import receipt_of_text  # noqa: E402
from service.dev.supervisor import child_env, read_procfile  # noqa: E402
from service.dev.valkey import start_valkey  # noqa: E402
from service.protocol.crypto import SigningKey  # noqa: E402
from service.store.durable import valkey_fsync  # noqa: E402
from service.store.json import dumps  # noqa: E402

HOST = "127.0.0.1"
#: The titles played, in turn (the real ones; `stall` is the tests' own).
TITLES = ("haendler", "aufachse", "fantasy")
#: The Kontor processes of the Procfile the test kills and restarts (mail-in takes no part).
PROCESSES = ("worker", "clock", "web")


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


# -- what the clients were told -------------------------------------------------------------
@dataclass
class Ledger:
    """Every acknowledged write, as the clients saw it (thread-safe appends)."""

    creates: list[str] = field(default_factory=list)
    joins: list[tuple[str, int, str]] = field(default_factory=list)  # game, seat, kid
    starts: list[str] = field(default_factory=list)
    #: (game, phase, seat, jti, receipt, order)
    orders: list[tuple[str, int, int, str, str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, what: str, item: Any) -> None:
        with self.lock:
            getattr(self, what).append(item)

    def counts(self) -> dict[str, int]:
        with self.lock:
            return {"creates": len(self.creates), "joins": len(self.joins), "starts": len(self.starts),
                    "orders": len(self.orders)}


class Refused(Exception):
    """An answer that is not the success asked for (the stack is down, or the step moved)."""


class Player(threading.Thread):
    """One client: plays one game after another, every seat, recording what is acknowledged."""

    def __init__(self, n: int, base: str, ledger: Ledger, seed: int) -> None:
        super().__init__(daemon=True, name=f"player{n}")
        self.n, self.base, self.ledger = n, base, ledger
        self.rng = random.Random(seed)
        self.s = requests.Session()
        self.stop = threading.Event()
        self.gid: str | None = None
        self.keys: list[SigningKey] = []
        self.joins: list[str] = []
        self.joined: set[int] = set()
        self.host = SigningKey.generate()
        #: The create request of the next game (its Idempotency-Key and body), until answered.
        self.pending: tuple[str, dict[str, Any]] | None = None
        self.running = False
        self.games = 0

    def call(self, method: str, path: str, expect: int, **kw: Any) -> Any:
        try:
            r = self.s.request(method, self.base + path, timeout=10, **kw)
        except requests.RequestException as exc:
            raise Refused(type(exc).__name__) from None
        if r.status_code != expect:
            raise Refused(f"{method} {path}: {r.status_code} {r.text[:200]}")
        return r.json()

    def bearer(self, key: SigningKey) -> dict[str, str]:
        now = int(time.time())
        return {"Authorization": f"Bearer {key.sign({'game': self.gid, 'iat': now, 'exp': now + 120})}"}

    def new_game(self) -> None:
        """Make a game, take every seat and start it; resumable after a crash: each
        creating request keeps its Idempotency-Key, so a retry is answered as the first
        (the same game, the same seat) instead of making another."""
        if self.gid is None:
            if self.pending is None:
                title = TITLES[(self.n + self.games) % len(TITLES)]
                self.pending = (uuid.uuid4().hex, {
                    "title": title, "seats": registry.get(title).min_seats, "host_key": self.host.public,
                    "seed": f"crash-{self.n}-{self.games}", "name": f"crash {self.n}.{self.games}"})
            idem, body = self.pending
            self.gid = self.call("POST", "/games", 201, json=body, headers={"Idempotency-Key": idem})["id"]
            self.ledger.add("creates", self.gid)
            self.games += 1
            self.keys = [SigningKey.generate() for _ in range(body["seats"])]
            self.joins = [uuid.uuid4().hex for _ in range(body["seats"])]
            self.joined = set()
        for seat, key in enumerate(self.keys):
            if seat in self.joined:
                continue
            self.call("POST", f"/games/{self.gid}/seats", 201, json={"name": f"P{seat}", "public_key": key.public,
                                                                    "seat": seat},
                      headers={"Idempotency-Key": self.joins[seat]})
            self.ledger.add("joins", (self.gid, seat, key.kid))
            self.joined.add(seat)
        try:
            self.call("PATCH", f"/games/{self.gid}", 200, json={"status": "running"}, headers=self.bearer(self.host))
            self.ledger.add("starts", self.gid)
        except Refused:
            # Started before the crash, its answer lost? Then play it (not counted as acknowledged).
            if self.call("GET", f"/games/{self.gid}", 200)["status"] == "lobby":
                raise
        self.running = True

    def play_once(self) -> None:
        """Answer every seat asked in the open step (or make a game when there is none)."""
        if self.gid is None or not self.running:
            self.new_game()
            return
        ph = self.call("GET", f"/games/{self.gid}/phases/current", 200)
        if ph["status"] == "finished":
            self.gid, self.pending, self.running = None, None, False
            self.host = SigningKey.generate()
            return
        if ph["status"] != "collecting":
            time.sleep(0.02)
            return
        for seat in ph["requested"]:
            if seat in ph["answered"] or self.stop.is_set():
                continue
            key = self.keys[seat]
            mine = self.call("GET", f"/games/{self.gid}/phases/current", 200, headers=self.bearer(key))
            if mine["id"] != ph["id"]:
                return
            order = mine["you"]["default_order"]
            jti = uuid.uuid4().hex
            claims = {"game": self.gid, "phase": ph["id"], "seat": seat, "iat": int(time.time()), "jti": jti,
                      "order": order}
            got = self.call("PUT", f"/games/{self.gid}/phases/{ph['id']}/orders/{seat}", 202,
                            json={"token": key.sign(claims)})
            self.ledger.add("orders", (self.gid, int(ph["id"]), seat, jti, got["receipt"], order))

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                self.play_once()
            except Refused:
                time.sleep(0.05 + self.rng.random() * 0.1)  # the stack is down or busy: try again soon
            except Exception as exc:  # a client bug must not pass silently
                print(f"{self.name}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
                time.sleep(0.2)


# -- the stack ----------------------------------------------------------------------------
class CrashStack:
    """Valkey (append-only file on) and the Procfile's web, worker and clock, each killable."""

    def __init__(self, durability: str, workdir: Path) -> None:
        self.durability, self.workdir = durability, workdir
        self.valkey_port, self.web_port = free_port(), free_port()
        self.valkey: Any = None
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.log = open(workdir / "stack.log", "ab")  # noqa: SIM115  (closed by close)
        self.url = f"redis://{HOST}:{self.valkey_port}/0"
        env = child_env()
        env.update(KONTOR_REDIS_URL=self.url, KONTOR_DURABILITY=durability, WEB_HOST=HOST, WEB_CONCURRENCY="2",
                   PORT=str(self.web_port), WORKERS="1", KONTOR_SWEEP_INTERVAL="0.5",
                   KONTOR_MIN_STEP_SECONDS="10", GUNICORN_CMD_ARGS="--log-level warning --no-control-socket")
        # `stuck_after` keeps its default (60 s), longer than `--resume-timeout`: a step lost
        # in a crash must come back by its lease or the sweep's orphan check, not by it.
        lift_limits(env)
        self.env = env
        self.lines = read_procfile(env)

    @property
    def base(self) -> str:
        return f"http://{HOST}:{self.web_port}"

    def start(self) -> None:
        self.valkey = start_valkey(self.workdir / "valkey", self.valkey_port, persist=True, appendonly="yes",
                                   appendfsync=valkey_fsync(self.durability))
        for name in PROCESSES:
            self.procs[name] = subprocess.Popen(self.lines[name].argv, env=self.env, cwd=ROOT, stdout=self.log,
                                                stderr=subprocess.STDOUT, start_new_session=True)
        self.wait_ready()

    def wait_ready(self, timeout: float = 60.0) -> None:
        end = time.monotonic() + timeout
        r = redis.Redis.from_url(self.url)
        while time.monotonic() < end:
            for name, p in self.procs.items():
                if p.poll() is not None:
                    raise RuntimeError(f"{name} exited with {p.returncode}; see {self.workdir / 'stack.log'}")
            try:
                if (requests.get(f"{self.base}/readyz", timeout=2).status_code == 200
                        and r.scard("rq:workers")):
                    return
            except (requests.RequestException, redis.RedisError):
                pass
            time.sleep(0.1)
        raise RuntimeError(f"the stack did not get ready in {timeout:g} s; see {self.workdir / 'stack.log'}")

    def crash(self, rng: random.Random) -> list[str]:
        """SIGKILL Valkey and every process group, in a random order, as fast as we can."""
        order = ["valkey", *PROCESSES]
        rng.shuffle(order)
        for name in order:
            if name == "valkey":
                os.kill(self.valkey._process.pid, signal.SIGKILL)
            else:
                try:
                    os.killpg(self.procs[name].pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self.valkey._process.wait()
        self.valkey._process = None
        for p in self.procs.values():
            p.wait()
        # The web's gunicorn workers are in its group; wait until the port is free again.
        end = time.monotonic() + 10
        while time.monotonic() < end:
            try:
                requests.get(f"{self.base}/healthz", timeout=0.2)
                time.sleep(0.05)
            except requests.RequestException:
                break
        return order

    def close(self) -> None:
        for p in self.procs.values():
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs.values():
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
        if self.valkey is not None and self.valkey._process is not None:
            self.valkey.stop()
        self.log.close()


# -- the checks ---------------------------------------------------------------------------
@dataclass
class Counts:
    lost: list[str] = field(default_factory=list)
    twice: list[str] = field(default_factory=list)
    stalled: list[str] = field(default_factory=list)


def check_store(k: Kontor, ledger: Ledger) -> Counts:
    """Every acknowledged write against the store (after a restart)."""
    out = Counts()
    with ledger.lock:
        creates, joins, orders = list(ledger.creates), list(ledger.joins), list(ledger.orders)
    for gid in creates:
        if not k.store.meta(gid):
            out.lost.append(f"create {gid}")
    seats: dict[str, dict[int, dict[str, Any]]] = {}
    for gid, seat, kid in joins:
        held = seats.setdefault(gid, k.store.seats(gid)).get(seat) or {}
        if held.get("kid") != kid and k.store.holder(gid, kid) != str(seat):
            out.lost.append(f"join {gid} seat {seat}")
    histories: dict[str, dict[int, dict[str, Any]]] = {}
    receipts: Counter[str] = Counter()
    for gid, phase, seat, jti, receipt, order in orders:
        if gid not in histories:
            steps = k.store.history(gid, events=False)
            phases = [int(s["phase"]) for s in steps]
            if phases != list(range(1, len(phases) + 1)):
                out.twice.append(f"game {gid}: history phases {phases[:20]}...")
            histories[gid] = {int(s["phase"]): s for s in steps}
        step = histories[gid].get(phase)
        if step is None:  # the open step (or one not resolved yet): the seat's stored order
            rec = k.store.orders(gid, phase).get(seat)
            if rec is None or rec.get("jti") != jti:
                # The step may have been resolved between reading the history and now.
                step = {int(s["phase"]): s for s in k.store.history(gid, events=False)}.get(phase)
                if step is None:
                    out.lost.append(f"order {gid} phase {phase} seat {seat} (not stored)")
                    continue
            else:
                if receipt_of_text(dumps(rec)) != receipt:
                    out.lost.append(f"order {gid} phase {phase} seat {seat} (receipt differs)")
                receipts[receipt] += 1
                continue
        if str(seat) not in step["orders"] or seat in step.get("defaults", []) or step["orders"][str(seat)] != order:
            out.lost.append(f"order {gid} phase {phase} seat {seat} (history has {step['orders'].get(str(seat))!r}, "
                            f"defaults {step.get('defaults')})")
    for receipt, n in receipts.items():
        if n > 1:
            out.twice.append(f"receipt {receipt} acknowledged {n} times")
    return out


def replay(k: Kontor, gids: list[str]) -> list[str]:
    """Replay every game's history from its seed (`verify_history`): an order applied
    twice or a step resolved twice would break the stored state digests."""
    bad = []
    for gid in gids:
        meta = k.store.meta(gid)
        if not meta or meta.get("status") == "lobby":
            continue
        state = k.store.state(gid)
        doc = {"format": "kontor-history/1", "game": gid, "title": meta["title"], "seats": int(meta["seats"]),
               "options": json.loads(meta["options"]), "seed": json.loads(meta["seed"]),
               "commitment": state.get("commitment") if isinstance(state, dict) else None,
               "steps": k.store.history(gid)}
        if meta.get("status") == "finished":
            doc["result"] = registry.get(meta["title"]).result(state)
        report = verify_history(json.loads(json.dumps(doc)))
        running = meta.get("status") != "finished"
        # A game still running replays to its open step: that it is "still running" is no fault.
        problems = [x for x in report.problems if not (running and x.endswith("the replayed game is still running"))]
        if problems:
            bad.append(f"game {gid}: history does not replay: {problems[:3]}")
    return bad


def resumes(k: Kontor, gids: list[str], timeout: float) -> list[str]:
    """Every running game plays on to its next step (or ends) within `timeout` s."""
    start = {g: k.store.phase(g).get("id") for g in gids if k.store.meta(g).get("status") == "running"}
    end = time.monotonic() + timeout
    waiting = set(start)
    while waiting and time.monotonic() < end:
        for g in list(waiting):
            if k.store.meta(g).get("status") != "running" or k.store.phase(g).get("id") != start[g]:
                waiting.discard(g)
        time.sleep(0.1)
    return [f"game {g} stuck at step {start[g]}" for g in sorted(waiting)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cycles", type=int, default=50, help="kill-and-restart cycles")
    parser.add_argument("--games", type=int, default=6, help="games played at once (one client thread each)")
    parser.add_argument("--play", default="0.5,2.5", help="seconds of play before each kill: low,high (uniform)")
    parser.add_argument("--durability", default="fsync-always", choices=("fsync-always", "waitaof"))
    parser.add_argument("--seed", type=int, default=1, help="the random moments and kill orders")
    parser.add_argument("--resume-timeout", type=float, default=30.0, help="seconds a game may take to play on")
    args = parser.parse_args(argv)
    lo, hi = (float(x) for x in args.play.split(","))
    rng = random.Random(args.seed)
    workdir = Path(tempfile.mkdtemp(prefix="kontor-crash-"))
    stack = CrashStack(args.durability, workdir)
    ledger = Ledger()
    k = Kontor(Settings(redis_url=stack.url, durability="none"))
    total = Counts()
    began = time.monotonic()
    players: list[Player] = []
    try:
        stack.start()
        players = [Player(i, stack.base, ledger, args.seed * 1000 + i) for i in range(args.games)]
        for p in players:
            p.start()
        for cycle in range(1, args.cycles + 1):
            time.sleep(rng.uniform(lo, hi))
            before = ledger.counts()
            order = stack.crash(rng)
            stack.start()
            got = check_store(k, ledger)
            got.stalled += resumes(k, sorted({p.gid for p in players if p.gid and p.running}), args.resume_timeout)
            total.lost += got.lost
            total.twice += got.twice
            total.stalled += got.stalled
            print(f"cycle {cycle:3d}: killed {'+'.join(order)}; acknowledged so far {before}; "
                  f"lost {len(got.lost)}, applied twice {len(got.twice)}, stalled {len(got.stalled)}", flush=True)
            for line in (got.lost + got.twice + got.stalled)[:10]:
                print(f"    {line}", flush=True)
        for p in players:
            p.stop.set()
        for p in players:
            p.join(timeout=15)
        total.twice += replay(k, sorted(set(ledger.starts)))
    finally:
        for p in players:
            p.stop.set()
        stack.close()
    counts = ledger.counts()
    seconds = time.monotonic() - began
    command = "python bench/crash.py " + " ".join(argv if argv is not None else sys.argv[1:])
    print(f"{args.cycles} cycles in {seconds:.0f} s ({args.durability}); acknowledged: {counts['creates']} creates, "
          f"{counts['joins']} joins, {counts['starts']} starts, {counts['orders']} orders")
    print(f"lost {len(total.lost)}, applied twice {len(total.twice)}, games that did not resume {len(total.stalled)}")
    print(f"command: {command.strip()}")
    for line in (total.lost + total.twice + total.stalled)[:20]:
        print(f"  {line}")
    print(json.dumps({"bench": "crash", "cycles": args.cycles, "durability": args.durability,
                      "acknowledged": counts, "lost": len(total.lost), "applied_twice": len(total.twice),
                      "stalled": len(total.stalled), "seconds": round(seconds, 1)}))
    ok = not (total.lost or total.twice or total.stalled)
    if ok:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        print(f"the stack's log and data are kept in {workdir}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
