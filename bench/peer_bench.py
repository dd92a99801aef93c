"""Benchmark: Kontor against its peer, boardgame.io, on the same live workload (issue 14).

The workload (the peer's own): 4 seats, one sealed bid each per round, 20 rounds, G games
at once, every client bidding as soon as it learns its seat may (closed loop, no think
time). The title is `bench/sealedbid` (the peer's rules, a `kontor.titles` plugin loaded
into the stack's processes by `PYTHONPATH`, never into a normal `make run`).

Configurations, alternated run by run (`--runs` passes, each pass every configuration,
first G games at once, then 1 game alone):

* `kontor-stream`: each seat follows `GET /games/{id}/stream` (server-sent events) and bids
  on the `step` frame of a new round;
* `kontor-webhook`: each seat has a webhook to a local receiver of this bench and bids on
  the `step.opened` delivery; its webhook takes the event types it acts on
  (`webhook_events`: `step.opened`, `game.finished`; `--webhook-events all` for every type,
  which adds a `step.resolved` delivery per seat and commit that the players never read);
* `kontor-poll`: each seat, after its bid, reads `GET /games/{id}/phases/current` (the
  public answer) again and again until the round has moved on;
* `bgio-memory`, `bgio-file`: the boardgame.io harness (`--peer DIR`: its `run.sh`,
  `server.js`, `bench.js`, `sealedbid.js` and its `package.json`/`package-lock.json`),
  copied to `var/peer/bgio` (git-ignored) and installed there with `npm ci`; its in-memory
  store and its file storage (FlatFile). Without `--peer` only Kontor runs.

The players of every game run in this process's one asyncio loop. A seat's bids and
polls go on a kept-alive connection of its own, written and read here (`Link`), and the
webhook receiver is a plain asyncio protocol (`Receiver`): the load generator shares the
host's cores with the server it measures, and aiohttp's client and server took about twice
its CPU (0.37 against 0.18 cores in a webhook run of 50 games). The streams are read with
aiohttp's client.

Kontor runs as `make run` runs it: `python -m service.dev.devstack` (a fresh `var` folder
per run under `var/peer/`), the Procfile's processes and the embedded Valkey with AOF
(`appendfsync always` for the default durability `fsync-always`, `everysec` for `waitaof`
and `none`; `--durability fsync-always,none` runs every Kontor configuration in each mode,
alternated, rows `<config>@none` beside the plain ones), on the ports from `--port` on (web, Valkey, mail in, outbox;
the webhook receiver on `--port + 10`).

`--store single,cluster` (issue 24) runs every Kontor configuration also with the game
store on an embedded 3-master Valkey Cluster and the job queue on a Valkey of its own
(`bench/lib/devstack.py`; the masters on `--port + 4` to `+ 6`, each with the AOF of the
durability mode), alternated with the single Valkey run by run: rows `<config>:cluster`
beside the plain ones, and in the JSON line the ratio of each to its single-Valkey row of
the same run (`cluster_ratio_<config>`: moves/s, `cluster_p50_ratio_<config>`: round p50,
`cluster_cpu_ratio_<config>`: server CPU per move; target for the stream: moves/s within
15%, a ratio of at least 0.85). The server CPU, the peak RSS and the Valkey commands count
every node (masters and the queue's Valkey). `single-tcp` is the single Valkey reached
over loopback TCP instead of its Unix socket (a cluster's clients always use TCP): with
`--store single,single-tcp,cluster` the run tells TCP's share of the cluster's cost from
the cluster client's.

Measured per run: moves/s (accepted bids / play time: from the start barrier until every
seat saw the last round resolved), round latency (per game and round: from the moment
the round's last bid is handed to the HTTP client until the 4th seat learns of the next
round; p50/p95/p99, nearest rank), server CPU per move (user + system time of every
process of the stack, Valkey included, over the play window / moves), peak RSS (the sum
of VmHWM over the stack's processes), Valkey commands per move (INFO commandstats
before and after) and the load generator's own CPU. Every run is checked: every game
finished with 4 accepted bids per round and one point per round, every bid answered 202.

Before each run the bench waits (at most `--settle-wait` s) for the 1-minute load average
to fall to `--settle`. Human-readable tables first (median of the runs, with the range),
then one JSON line:

{"bench":"peer","kontor_push_moves_per_s":…,"kontor_poll_moves_per_s":…,
 "kontor_stream_moves_per_s":…,"bgio_memory_moves_per_s":…,"bgio_file_moves_per_s":…,
 "push_ratio_file":…,"push_ratio_memory":…,"p50_ratio_file":…, …}

(`kontor_push` is the better of stream and webhook.) Each Kontor channel's ratio to each peer,
the medians and pass by pass (`stream_ratio_file_by_pass`, ...), its CPU per move by process,
and the host's baseline before each pass (`bench/engine_playouts.py`: state JSON round-trips per
second, the machine's speed) are in it too; `targets` holds issue 26's, met when every pass meets
them. The whole run has a time limit
(`--time-limit`): at the limit it stops what it started and exits 124.

    .venv/bin/python bench/peer_bench.py --peer DIR [--runs 3] [--games 50] [--rounds 20]
        [--configs kontor-stream,kontor-webhook,kontor-poll,bgio-memory,bgio-file]
        [--port 8300] [--durability fsync-always[,none,waitaof]] [--store single[,cluster]]
        [--time-limit 3600]
    .venv/bin/python bench/peer_bench.py --configs kontor-stream --store single,cluster --no-single
    .venv/bin/python bench/peer_bench.py --runs 1 --games 10      # quick, Kontor only
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import redis
import requests
from engine_playouts import baseline
from lib import limit
from lib.devstack import STORES, Devstack
from lib.load import cpu_seconds as cpu_s
from lib.load import cpu_split

from service.channels.webhook.sender import plain_answer
from service.protocol.crypto import SigningKey

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "bench" / "sealedbid"
VAR = ROOT / "var" / "peer"
HOST = "127.0.0.1"
SEATS = 4
MAX_BID = 1_000_000
#: Longest a player waits for an answer to one request, seconds.
ANSWER_WITHIN = 120.0
KONTOR_MODES = ("stream", "webhook", "poll")
CONFIGS = ("kontor-stream", "kontor-webhook", "kontor-poll", "bgio-memory", "bgio-file")
PEER_FILES = ("package.json", "package-lock.json", "sealedbid.js", "server.js", "bench.js", "run.sh")
#: Issue 26's targets, as ratios to boardgame.io's file storage measured in the same run (each
#: pass's own ratio: the passes alternate, so a pass compares like with like): the stream at
#: least 1.2x with a round p50 no higher, webhooks 0.8x, polls 0.6x.
TARGET_STREAM_RATIO_FILE = 1.2
TARGET_WEBHOOK_RATIO_FILE = 0.8
TARGET_POLL_RATIO_FILE = 0.6
#: The event types the webhook players take by default (`--webhook-events`).
DEFAULT_WEBHOOK_EVENTS = ("step.opened", "game.finished")
#: Issue 14's: one game alone, the stream's round p50.
TARGET_SINGLE_P50_MS = 15.0


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def percentile(values: list[float], p: float) -> float:
    """Nearest rank, as the peer's harness computes it."""
    s = sorted(values)
    return s[max(0, min(len(s) - 1, -(-len(s) * p // 100) - 1))] if s else float("nan")


# -- processes: memory from /proc ----------------------------------------------------------
def peak_rss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def settle(threshold: float, longest: float) -> float:
    """Wait until the 1-minute load average is at most `threshold` (at most `longest` s)."""
    end = time.monotonic() + longest
    while os.getloadavg()[0] > threshold and time.monotonic() < end:
        time.sleep(1)
    return os.getloadavg()[0]


# -- Kontor: the stack as `make run` starts it -----------------------------------------------
class KontorStack(Devstack):
    """The devstack with the sealed-bid plugin on its path (checked in its catalogue)."""

    def __init__(self, port: int, run: str, web_args: str = "", store: str = "single") -> None:
        super().__init__(port, VAR / f"kontor-{run}", log_path=VAR / f"kontor-{run}.log", pythonpath=[PLUGIN],
                         web_args=web_args, ready_timeout=90, store=store)

    def start(self) -> None:
        # Every seat's stream comes from one address (loopback): the per-address stream cap
        # (32 by default) is lifted to fit them (the stack's processes read our environment).
        os.environ.setdefault("KONTOR_STREAM_MAX_PER_ADDRESS", "100000")
        super().start()
        catalog = requests.get(self.url + "/catalog", timeout=5).json()
        if not any(t["id"] == "sealedbid" for t in catalog):
            raise RuntimeError("the sealedbid plugin is not in the stack's catalogue")



# -- Kontor: the load generator --------------------------------------------------------------
@dataclass
class Game:
    id: str
    keys: list[SigningKey]
    first: int = 0
    #: tokens[seat][round]: the signed bid orders, made before the window opens.
    tokens: list[list[str]] = field(default_factory=list)
    #: When the last bid of each round was handed to the HTTP client.
    sent: list[float] = field(default_factory=list)
    #: seen[round][seat]: when the seat learnt that the round had resolved.
    seen: list[list[float]] = field(default_factory=list)
    #: opened[seat][round]: set when the seat may bid in that round.
    opened: list[list[asyncio.Event]] = field(default_factory=list)
    progress: list[int] = field(default_factory=list)

    def bearer(self, seat: int, ttl: int = 290) -> dict[str, str]:
        now = int(time.time())
        return {"Authorization": "Bearer " + self.keys[seat].sign({"game": self.id, "iat": now, "exp": now + ttl})}

    def observe(self, seat: int, phase: int | None, finished: bool, rounds: int) -> bool:
        """Seat `seat` learnt that the open step is `phase` (or that the game is over):
        every round before it has resolved. True once the seat has seen the end."""
        upto = rounds if finished else min(rounds, (phase or 0) - self.first)
        now = time.perf_counter()
        while self.progress[seat] < upto:
            r = self.progress[seat]
            self.seen[r][seat] = now
            self.progress[seat] = r + 1
            if r + 1 < rounds:
                self.opened[seat][r + 1].set()
        return self.progress[seat] >= rounds


def framing(lines: list[str]) -> tuple[int | None, bool, bool]:
    """What a request's header lines say of its body and connection: the Content-Length
    (None without one), whether it asks to close the connection, and whether it has a
    Transfer-Encoding (the receiver reads none)."""
    length, close, coded = None, False, False
    for line in lines:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name == "content-length":
            length = int(value)
        elif name == "connection":
            close = "close" in value.lower()
        elif name == "transfer-encoding":
            coded = True
    return length, close, coded


class Link:
    """One seat's kept-alive HTTP/1.1 connection to Kontor, for its bids and polls: a
    request written whole, its answer's head read as the webhook sender reads one
    (`plain_answer`) and its body by its Content-Length (Kontor's answers carry one).
    ConnectionError when the connection was closed under the request (the caller tries
    again; the next request opens a new one)."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or HOST, parts.port or 80
        self.head = f"Host: {parts.netloc}\r\n"
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        extra = f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n" if body else ""
        self.writer.write(f"{method} {path} HTTP/1.1\r\n{self.head}{extra}\r\n".encode() + body)
        try:
            async with asyncio.timeout(ANSWER_WITHIN):
                return await self._answer(method, path)
        except (asyncio.IncompleteReadError, OSError) as exc:
            self.close()
            raise ConnectionError(f"{method} {path}: {exc!r}") from exc

    async def _answer(self, method: str, path: str) -> tuple[int, bytes]:
        assert self.reader is not None
        head = await self.reader.readuntil(b"\r\n\r\n")
        plain = plain_answer(head)  # (the webhook sender's reading of an answer's head)
        if plain is None:
            raise RuntimeError(f"{method} {path}: an answer that is not plain HTTP/1.1 with a Content-Length")
        status, _, length, close = plain
        answer = await self.reader.readexactly(length) if length else b""
        if close:
            self.close()
        return status, answer

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


class Client:
    """The players of every game, in one asyncio loop."""

    def __init__(self, url: str, mode: str, games: int, rounds: int, hook_port: int, seed: int,
                 events: list[str] | None = None) -> None:
        self.url, self.mode, self.n, self.rounds, self.hook_port = url, mode, games, rounds, hook_port
        self.events = events  # the event types the webhooks take (None: every type)
        self.rng = random.Random(seed)
        self.games: list[Game] = []
        self.by_id: dict[str, Game] = {}
        self.bad: list[str] = []
        self.accepted = 0
        self.requests = 0
        self.done: asyncio.Event | None = None
        self.finished = 0
        self.retries = 0

    async def call(self, s: aiohttp.ClientSession, method: str, path: str, expect: int, **kw: Any) -> Any:
        async with s.request(method, self.url + path, **kw) as r:
            body = await r.read()
            if r.status != expect:
                raise RuntimeError(f"{method} {path}: {r.status} {body[:300]!r}")
            return json.loads(body) if body else None

    async def setup(self, s: aiohttp.ClientSession) -> None:
        sem = asyncio.Semaphore(8)

        async def one(i: int) -> Game:
            async with sem:
                host = SigningKey.generate()
                body = {"title": "sealedbid", "seats": SEATS, "host_key": host.public, "seed": i + 1,
                        "name": f"peer bench {i}", "options": {"rounds": self.rounds}}
                gid = (await self.call(s, "POST", "/games", 201, json=body,
                                       headers={"Idempotency-Key": uuid.uuid4().hex}))["id"]
                g = Game(gid, [SigningKey.generate() for _ in range(SEATS)])
                for seat, key in enumerate(g.keys):
                    await self.call(s, "POST", f"/games/{gid}/seats", 201,
                                    json={"name": f"P{seat}", "public_key": key.public, "seat": seat},
                                    headers={"Idempotency-Key": uuid.uuid4().hex})
                    if self.mode == "webhook":
                        hook = f"http://{HOST}:{self.hook_port}/hook/{gid}/{seat}"
                        await self.call(s, "PUT", f"/games/{gid}/seats/{seat}/contact", 200,
                                        json={"webhook_url": hook, "webhook_events": self.events},
                                        headers=g.bearer(seat))
                now = int(time.time())
                start = {"Authorization": "Bearer " + host.sign({"game": gid, "iat": now, "exp": now + 60})}
                started = await self.call(s, "PATCH", f"/games/{gid}", 200, json={"status": "running"},
                                          headers=start)
                g.first = int(started["phase"]["id"])  # before any notice of it can arrive
                return g

        self.games = list(await asyncio.gather(*(one(i) for i in range(self.n))))
        self.by_id = {g.id: g for g in self.games}
        for g in self.games:
            g.sent = [0.0] * self.rounds
            g.seen = [[0.0] * SEATS for _ in range(self.rounds)]
            g.opened = [[asyncio.Event() for _ in range(self.rounds)] for _ in range(SEATS)]
            g.progress = [0] * SEATS

    async def sign(self, s: aiohttp.ClientSession) -> None:
        """Learn each game's first step's number and sign its bids."""
        sem = asyncio.Semaphore(8)

        async def one(g: Game) -> None:
            async with sem:
                ph = await self.call(s, "GET", f"/games/{g.id}/phases/current", 200)
                if int(ph["id"]) != g.first:
                    raise RuntimeError(f"game {g.id} moved before the start barrier: {ph}")

        await asyncio.gather(*(one(g) for g in self.games))
        for g in self.games:
            g.tokens = [[k.sign({"game": g.id, "phase": g.first + r, "seat": seat, "iat": int(time.time()),
                                 "jti": uuid.uuid4().hex, "order": {"bid": self.rng.randrange(MAX_BID + 1)}})
                         for r in range(self.rounds)] for seat, k in enumerate(g.keys)]

    async def bid(self, link: Link, g: Game, seat: int, r: int) -> None:
        g.sent[r] = max(g.sent[r], time.perf_counter())
        path = f"/games/{g.id}/phases/{g.first + r}/orders/{seat}"
        body = json.dumps({"token": g.tokens[seat][r]}).encode()
        for attempt in range(3):
            try:
                status, answer = await link.request("PUT", path, body)
            except ConnectionError:
                # A kept-alive connection the server closed as we reused it: once more, fresh.
                self.retries += 1
                if attempt == 2:
                    raise
                continue
            self.requests += 1
            stored_before = attempt and any(c in answer for c in (b'"token_replayed"', b'"step_locked"',
                                                                   b'"stale_phase"'))
            if status == 202 or stored_before:
                # After a lost answer the first attempt may have been stored (and may
                # have closed the step): the final check counts every game's bids.
                self.accepted += 1
            else:  # the round cannot resolve without it: the run fails now, saying why
                self.bad.append(f"{path}: {status} {answer[:200]!r}")
                raise RuntimeError(f"bid refused (attempt {attempt + 1}): {self.bad[-1]}")
            return

    async def current(self, link: Link, g: Game) -> dict[str, Any]:
        for attempt in range(3):
            try:
                status, answer = await link.request("GET", f"/games/{g.id}/phases/current")
            except ConnectionError:
                if attempt == 2:
                    raise
                continue
            self.requests += 1
            if status != 200:
                raise RuntimeError(f"GET /games/{g.id}/phases/current: {status} {answer[:200]!r}")
            out: dict[str, Any] = json.loads(answer)
            return out
        raise AssertionError("unreachable")

    async def seat(self, g: Game, seat: int) -> None:
        link = Link(self.url)
        try:
            for r in range(self.rounds):
                if r:
                    await g.opened[seat][r].wait()
                await self.bid(link, g, seat, r)
                if self.mode == "poll":
                    while True:
                        ph = await self.current(link, g)
                        if ph["status"] == "finished" or int(ph["id"]) > g.first + r:
                            self.observe(g, seat, int(ph["id"]), ph["status"] == "finished")
                            break
        finally:
            link.close()

    def observe(self, g: Game, seat: int, phase: int | None, finished: bool) -> None:
        if not g.first or not g.progress or g.progress[seat] >= self.rounds:
            return
        if g.observe(seat, phase, finished, self.rounds):
            self.finished += 1
            if self.finished == self.n * SEATS and self.done is not None:
                self.done.set()

    async def stream(self, s: aiohttp.ClientSession, g: Game, seat: int, ready: asyncio.Event) -> None:
        """Follow the seat's stream until the game is over (reconnecting with a fresh token
        and Last-Event-ID if the server ends it first)."""
        last = None
        timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
        while g.progress[seat] < self.rounds:
            headers = g.bearer(seat)
            if last is not None:
                headers["Last-Event-ID"] = last
            async with s.get(f"{self.url}/games/{g.id}/stream", headers=headers, timeout=timeout) as resp:
                if resp.status != 200:
                    raise RuntimeError(f"stream of {g.id}/{seat}: {resp.status}")
                kind, data = None, None
                async for raw in resp.content:
                    line = raw.decode().rstrip("\n")
                    if line.startswith("event:"):
                        kind = line[6:].strip()
                    elif line.startswith("data:"):
                        data = line[5:].strip()
                    elif line.startswith("id:"):
                        last = line[3:].strip()
                    elif line == "":
                        if kind == "step" and data:
                            step = json.loads(data)
                            ready.set()
                            self.observe(g, seat, step["phase"], step["status"] == "finished")
                        kind, data = None, None
                        if g.progress[seat] >= self.rounds:
                            return

    def told(self, gid: str, seat: int, body: dict[str, Any]) -> None:
        """A webhook delivery to seat `seat` of game `gid` (its JSON body)."""
        if os.environ.get("PEER_BENCH_DEBUG"):
            say(f"hook {gid}/{seat}: {body['type']} {body['data'].get('phase')}")
        g = self.by_id.get(gid)
        if g is not None:
            if body["type"] == "step.opened":
                self.observe(g, seat, int(body["data"]["phase"]), False)
            elif body["type"] == "game.finished":
                self.observe(g, seat, None, True)


class Receiver(asyncio.Protocol):
    """The webhook players' receiver: plain HTTP/1.1 on asyncio's transport, kept-alive,
    each request a POST /hook/<game>/<seat> with a Content-Length (as Kontor's sender
    writes them), answered 204."""

    def __init__(self, client: Client) -> None:
        self.client, self.buf, self.transport = client, b"", None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buf[:end].decode("latin-1").split("\r\n")
            length, close, coded = framing(head[1:])
            parts = head[0].split(" ")
            if length is None or coded or len(parts) != 3 or parts[0] != "POST" or not parts[1].startswith("/hook/"):
                self.client.bad.append(f"receiver: {head[0]!r}")
                self.transport.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                self.transport.close()
                return
            if len(self.buf) < end + 4 + length:
                return
            body, self.buf = self.buf[end + 4:end + 4 + length], self.buf[end + 4 + length:]
            gid, _, seat = parts[1][6:].partition("/")
            self.client.told(gid, int(seat), json.loads(body))
            self.transport.write(b"HTTP/1.1 204 No Content\r\n\r\n")
            if close:
                self.transport.close()
                return


async def play_kontor(stack: KontorStack, mode: str, games: int, rounds: int, seed: int,
                      idle: Any, events: list[str] | None = None) -> dict[str, Any]:
    client = Client(stack.url, mode, games, rounds, stack.port + 10, seed, events)
    connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=3)
    server = None
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=120)) as s:
        if mode == "webhook":
            server = await asyncio.get_running_loop().create_server(lambda: Receiver(client), HOST, stack.port + 10)
        try:
            await client.setup(s)
            await client.sign(s)
            readers: list[asyncio.Task[None]] = []
            if mode == "stream":
                ready = [asyncio.Event() for _ in range(games * SEATS)]
                readers = [asyncio.create_task(client.stream(s, g, seat, ready[i * SEATS + seat]))
                           for i, g in enumerate(client.games) for seat in range(SEATS)]
                await asyncio.wait_for(asyncio.gather(*(e.wait() for e in ready)), 60)
            await asyncio.to_thread(idle)
            client.done = asyncio.Event()
            pids = stack.pids()
            cmds0, cpu0, me0, split0 = stack.commands(), cpu_s(pids), time.process_time(), cpu_split(pids)
            t0 = time.perf_counter()
            seats = [asyncio.create_task(client.seat(g, seat)) for g in client.games for seat in range(SEATS)]
            await until_done(client.done, [*seats, *readers], 600)
            t1 = time.perf_counter()
            cpu1, me1, split1 = cpu_s(pids), time.process_time(), cpu_split(pids)
            cmds1 = stack.commands()
            await asyncio.gather(*seats)
            await asyncio.wait_for(asyncio.gather(*readers), 30)
            rss = peak_rss_mb(stack.pids())
            checked = await verify(client, s)
        finally:
            if server is not None:
                server.close()
                await server.wait_closed()
    moves = client.accepted
    lat = [(max(g.seen[r]) - g.sent[r]) * 1000 for g in client.games for r in range(rounds)]
    if client.bad:
        raise RuntimeError(f"{len(client.bad)} bids were not accepted, e.g. {client.bad[:3]}")
    return {"moves": moves, "moves_per_s": moves / (t1 - t0), "p50": percentile(lat, 50),
            "p95": percentile(lat, 95), "p99": percentile(lat, 99), "cpu_ms_per_move": 1000 * (cpu1 - cpu0) / moves,
            "server_cores": (cpu1 - cpu0) / (t1 - t0), "peak_rss_mb": rss,
            "valkey_cmds_per_move": (cmds1 - cmds0) / moves, "client_cores": (me1 - me0) / (t1 - t0),
            "http_requests_per_move": client.requests / moves, "play_s": t1 - t0, "checked_games": checked,
            "retried_requests": client.retries,
            "cpu_ms_per_move_by_process": {k: round(1000 * (split1[k] - split0.get(k, 0.0)) / moves, 3)
                                           for k in split1}}


async def until_done(done: asyncio.Event, tasks: list[asyncio.Task[None]], longest: float) -> None:
    """Wait for `done`; a task that failed meanwhile ends the run at once (with its error)."""
    waiter = asyncio.create_task(done.wait())
    pending: set[Any] = {waiter, *tasks}
    end = time.monotonic() + longest
    try:
        while not done.is_set():
            left = end - time.monotonic()
            if left <= 0:
                raise RuntimeError(f"the players did not finish within {longest:g} s")
            finished, pending = await asyncio.wait(pending, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            for task in finished:
                if task is not waiter and task.exception() is not None:
                    raise RuntimeError(f"a player failed: {task.exception()!r}")
    finally:
        waiter.cancel()


async def verify(client: Client, s: aiohttp.ClientSession) -> int:
    """Every game over, 4 accepted bids per round, one point per round."""
    for g in client.games:
        view = await client.call(s, "GET", f"/games/{g.id}/view", 200)
        st = view["state"]
        rounds = client.rounds
        if st["round"] != rounds or st["accepted"] != SEATS * rounds or sum(st["scores"]) != rounds:
            raise RuntimeError(f"game {g.id} ended wrong: {st}")
    if client.accepted != client.n * SEATS * client.rounds:
        raise RuntimeError(f"{client.accepted} bids accepted, {client.n * SEATS * client.rounds} sent")
    return len(client.games)


def wait_idle(stack: KontorStack, longest: float = 120.0) -> None:
    """Wait until the RQ queues are empty and no job runs (the setup's notices delivered),
    so the play window starts with an idle worker."""
    r = redis.Redis.from_url(stack.redis_url)
    end, quiet = time.monotonic() + longest, 0
    while time.monotonic() < end:
        busy = sum(int(r.llen(k)) for k in r.scan_iter("rq:queue:*"))
        busy += sum(int(r.zcard(k)) for k in r.scan_iter("rq:wip:*"))
        quiet = quiet + 1 if busy == 0 else 0
        if quiet >= 3:
            return
        time.sleep(0.2)
    raise RuntimeError("the RQ queues did not drain before the run")


def webhook_events(text: str) -> list[str] | None:
    """`--webhook-events`: the types, comma-separated; `all`: None (every type)."""
    return None if text == "all" else [x.strip() for x in text.split(",") if x.strip()]


def run_kontor(args: argparse.Namespace, mode: str, games: int, run: str, store: str = "single") -> dict[str, Any]:
    stack = KontorStack(args.port, run, args.web_args, store)
    RUNNING.append(stack)
    try:
        stack.start()

        async def main() -> dict[str, Any]:
            # Setup outside the window; the window opens once the worker is idle again.
            return await play_kontor(stack, mode, games, args.rounds, args.seed, lambda: wait_idle(stack),
                                     webhook_events(args.webhook_events))

        return asyncio.run(main())
    except Exception as exc:
        raise RuntimeError(f"kontor-{mode} G={games}: {exc}\n{stack.log_tail()}") from exc
    finally:
        stack.stop()
        RUNNING.remove(stack)


# -- the peer ---------------------------------------------------------------------------------
def install_peer(src: Path) -> Path:
    """Copy the peer's harness into var/peer/bgio (git-ignored) and install it there."""
    dst = VAR / "bgio"
    dst.mkdir(parents=True, exist_ok=True)
    for name in PEER_FILES:
        if not (src / name).is_file():
            raise SystemExit(f"--peer {src}: no {name} there")
        if not (dst / name).exists() or (dst / name).read_bytes() != (src / name).read_bytes():
            shutil.copyfile(src / name, dst / name)
    lock = dst / "node_modules" / ".package-lock.json"
    if not lock.exists() or lock.stat().st_mtime < (dst / "package-lock.json").stat().st_mtime:
        say("peer_bench: installing the peer (npm ci) in var/peer/bgio")
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=dst, check=True, stdout=sys.stderr)
    return dst


def run_bgio(peer: Path, storage: str, games: int, rounds: int) -> dict[str, Any]:
    env = {**os.environ, "GAMES": str(games), "ROUNDS": str(rounds), "STORAGE": storage}
    out = subprocess.run(["bash", "run.sh"], cwd=peer, env=env, capture_output=True, text=True, timeout=400)
    if out.returncode != 0:
        raise RuntimeError(f"bgio-{storage} G={games}: run.sh exited {out.returncode}: {out.stderr[-2000:]}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    lat = r["round_latency_ms"]
    if r.get("hidden_bid_leaks", 0) or r["moves"] != games * rounds * SEATS:
        raise RuntimeError(f"bgio-{storage}: a check failed: {r}")
    return {"moves": r["moves"], "moves_per_s": r["moves_per_s"], "p50": lat["p50"], "p95": lat["p95"],
            "p99": lat["p99"], "cpu_ms_per_move": 1000 * r["server_cpu_s_play"] / r["moves"],
            "server_cores": r["server_cpu_util_play"], "peak_rss_mb": r["server_peak_rss_mb"],
            "client_cores": r["bench_cpu_s_play"] / r["play_wall_s"], "play_s": r["play_wall_s"]}


# -- the report ---------------------------------------------------------------------------------
RUNNING: list[KontorStack] = []


def median_row(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"runs": len(rows)}
    for key in rows[0]:
        values = [r[key] for r in rows if isinstance(r.get(key), int | float)]
        if values:
            out[key] = statistics.median(values)
            out[key + "_range"] = (min(values), max(values))
    return out


def split_text(rows: list[dict[str, Any]]) -> str:
    """The median CPU per move of each of Kontor's processes (web, worker, valkey, ...), in
    the runs' order of appearance; the processes spending under 0.01 ms a move left out."""
    split = [r.get("cpu_ms_per_move_by_process") or {} for r in rows]
    names = [k for k in split[0] if statistics.median(x.get(k, 0.0) for x in split) >= 0.01] if split else []
    return " ".join(f"{k} {statistics.median(x.get(k, 0.0) for x in split):.2f}" for k in names) or "–"


def table(results: dict[tuple[str, int], list[dict[str, Any]]], games: int) -> str:
    head = ("| configuration | moves/s (range) | round p50 / p95 / p99 ms | server CPU per move ms | "
            "CPU per move by process ms | server cores | peak RSS MB | Valkey cmds per move | load generator cores |\n"
            "|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for (config, g), rows in results.items():
        if g != games or not rows:
            continue
        m = median_row(rows)
        lo, hi = m["moves_per_s_range"]
        cmds = f"{m['valkey_cmds_per_move']:.1f}" if "valkey_cmds_per_move" in m else "–"
        lines.append(f"| {config} | {m['moves_per_s']:.0f} ({lo:.0f}–{hi:.0f}) | {m['p50']:.1f} / {m['p95']:.1f} / "
                     f"{m['p99']:.1f} | {m['cpu_ms_per_move']:.2f} | {split_text(rows)} | {m['server_cores']:.2f} | "
                     f"{m['peak_rss_mb']:.0f} | {cmds} | {m['client_cores']:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--peer", type=Path, help="the boardgame.io harness's folder (without it: Kontor only)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--games", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--no-single", action="store_true", help="skip the 1-game runs")
    ap.add_argument("--configs", default=",".join(CONFIGS), help=f"comma-separated, of {', '.join(CONFIGS)}")
    ap.add_argument("--port", type=int, default=8300, help="first of the ports Kontor's stack uses (and +10)")
    ap.add_argument("--web-args", default="", help="GUNICORN_CMD_ARGS for the web process (variants)")
    ap.add_argument("--durability", default="fsync-always",
                    help="comma-separated KONTOR_DURABILITY modes (fsync-always, waitaof, none) each Kontor "
                         "configuration runs in, alternated, side by side: `--durability fsync-always,none`; "
                         "rows of a mode after the first are named `<config>@<mode>`")
    ap.add_argument("--store", default="single",
                    help="comma-separated stores each Kontor configuration runs on, alternated: single (one "
                         "Valkey, as make run), single-tcp (the same over TCP), cluster (3 masters, the queue "
                         "apart); rows of a store after the first are named `<config>:<store>`")
    ap.add_argument("--webhook-events", default=",".join(DEFAULT_WEBHOOK_EVENTS),
                    help="the event types the webhook players take, comma-separated, or `all` (every type)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--settle", type=float, default=1.0, help="1-minute load average to wait for before a run")
    ap.add_argument("--settle-wait", type=float, default=45.0, help="longest wait for it, seconds")
    ap.add_argument("--json-out", type=Path, help="also append every run's figures to this file (JSON lines)")
    limit.add_argument(ap, 3600)
    args = ap.parse_args(argv)
    configs = [c for c in args.configs.split(",") if c]
    unknown = set(configs) - set(CONFIGS)
    if unknown:
        ap.error(f"unknown configurations: {', '.join(sorted(unknown))}")
    if not args.peer:
        configs = [c for c in configs if not c.startswith("bgio")]
    limit.arm(args.time_limit, "peer_bench", hard_stop=lambda: [s.kill() for s in RUNNING])
    VAR.mkdir(parents=True, exist_ok=True)
    peer = install_peer(args.peer.resolve()) if args.peer else None
    sizes = [args.games] + ([] if args.no_single or args.games == 1 else [1])
    modes = [m for m in args.durability.split(",") if m]
    if not modes or set(modes) - {"fsync-always", "waitaof", "none"}:
        ap.error(f"--durability: modes of fsync-always, waitaof, none, not {args.durability!r}")
    # Each Kontor configuration once per durability mode (issue 23): the first mode's rows keep
    # the plain name (the summary's figures), the others are `<config>@<mode>`.
    configs = [c if c.startswith("bgio") or m == modes[0] else f"{c}@{m}"
               for c in configs for m in (modes if c.startswith("kontor") else modes[:1])]
    stores = [x for x in args.store.split(",") if x]
    if not stores or set(stores) - set(STORES) or len(set(stores)) != len(stores):
        ap.error(f"--store: one or more of {', '.join(STORES)}, not {args.store!r}")
    # Each Kontor configuration once per store (issue 24), alternated: the first store's rows
    # keep the plain name, the others are `<config>:<store>`.
    configs = [c if c.startswith("bgio") or x == stores[0] else f"{c}:{x}"
               for c in configs for x in (stores if c.startswith("kontor") else stores[:1])]
    results: dict[tuple[str, int], list[dict[str, Any]]] = {(c, g): [] for g in sizes for c in configs}
    hosts: list[float] = []  # the host's baseline before each pass (after its settle)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    try:
        for n in range(args.runs):
            settle(args.settle, args.settle_wait)
            hosts.append(baseline(1.0))
            say(f"peer_bench: pass {n + 1}/{args.runs}: host baseline {hosts[-1]:,.0f} state JSON round-trips/s")
            for g in sizes:
                for config in configs:
                    load = settle(args.settle, args.settle_wait)
                    say(f"peer_bench: pass {n + 1}/{args.runs}, {config}, {g} game(s) (load {load:.2f})")
                    rest, _, store = config.partition(":")
                    name, _, mode = rest.partition("@")
                    kind, _, variant = name.partition("-")
                    if kind == "kontor":
                        # devstack (make run) runs Valkey with the appendfsync the mode needs
                        os.environ["KONTOR_DURABILITY"] = mode or modes[0]
                        row = run_kontor(args, variant, g, f"{stamp}-{n}", store or stores[0])
                    else:
                        assert peer is not None
                        row = run_bgio(peer, "flatfile" if variant == "file" else "memory", g, args.rounds)
                    row["load_before"] = load
                    results[(config, g)].append(row)
                    say(f"  {row['moves_per_s']:.0f} moves/s, p50 {row['p50']:.1f} ms, "
                        f"CPU {row['cpu_ms_per_move']:.2f} ms/move {row.get('cpu_ms_per_move_by_process', '')}"
                        + (f", {row['http_requests_per_move']:.2f} requests/move"
                           if "http_requests_per_move" in row else ""))
                    if args.json_out:
                        with args.json_out.open("a") as f:
                            f.write(json.dumps({"config": config, "games": g, "pass": n + 1, **row}) + "\n")
    finally:
        for stack in list(RUNNING):
            stack.stop()
    for g in sizes:
        print(f"\n{g} game{'s' if g > 1 else ''} × {args.rounds} rounds, 4 seats, median of {args.runs} run(s):\n")
        print(table(results, g))
    say(f"peer_bench: Kontor rows without @ ran with durability {modes[0]}")
    out = summary(results, args.games, 1 if 1 in sizes else None)
    out["host_baseline_json_round_trips_per_s_by_pass"] = [round(h) for h in hosts]
    say("peer_bench: host baseline (bench/engine_playouts.py), state JSON round-trips/s by pass: "
        + ", ".join(f"{h:,.0f}" for h in hosts))
    out["durability"] = modes[0]
    out["store"] = stores[0]
    out["webhook_events"] = webhook_events(args.webhook_events) or "all"
    for (config, g), rows in results.items():
        if ("@" in config or ":" in config) and rows and g == args.games:
            out[f"{config}_moves_per_s"] = round(statistics.median(r["moves_per_s"] for r in rows), 2)
            out[f"{config}_p50_ms"] = round(statistics.median(r["p50"] for r in rows), 2)
            out[f"{config}_cpu_ms_per_move"] = round(statistics.median(r["cpu_ms_per_move"] for r in rows), 3)
    out.update(store_ratios(results, args.games))
    print(json.dumps(out))
    return 0


def store_ratios(results: dict[tuple[str, int], list[dict[str, Any]]], games: int) -> dict[str, Any]:
    """Each `<config>:<store>` row against its plain row (the first store) of the same run:
    moves/s, round p50 and server CPU per move, medians of the runs, and each pass's own
    moves/s ratio (the runs alternate, so pass by pass is the fairer comparison)."""
    out: dict[str, Any] = {}
    for (config, g), rows in results.items():
        base_config, _, store = config.partition(":")
        plain = results.get((base_config, g)) or []
        if not store or not rows or not plain or g != games:
            continue

        def med(rs: list[dict[str, Any]], key: str) -> float:
            return float(statistics.median(r[key] for r in rs))

        tag = f"{store}_ratio_{base_config}"  # cluster_ratio_kontor-stream, ...
        out[tag] = round(med(rows, "moves_per_s") / med(plain, "moves_per_s"), 3)
        out[f"{store}_p50_ratio_{base_config}"] = round(med(rows, "p50") / med(plain, "p50"), 3)
        out[f"{store}_cpu_ratio_{base_config}"] = round(med(rows, "cpu_ms_per_move") / med(plain, "cpu_ms_per_move"),
                                                       3)
        out[f"{store}_ratio_by_pass_{base_config}"] = [round(a["moves_per_s"] / b["moves_per_s"], 3)
                                                       for a, b in zip(rows, plain, strict=False)]
    if "cluster_ratio_kontor-stream" in out:
        out["targets_cluster"] = {"stream within 15% of single": out["cluster_ratio_kontor-stream"] >= 0.85}
    return out


def summary(results: dict[tuple[str, int], list[dict[str, Any]]], games: int, single: int | None) -> dict[str, Any]:
    def med(config: str, key: str, g: int = games) -> float | None:
        rows = results.get((config, g)) or []
        return round(statistics.median(r[key] for r in rows), 2) if rows else None

    out: dict[str, Any] = {"bench": "peer", "games": games}
    stream, webhook = med("kontor-stream", "moves_per_s"), med("kontor-webhook", "moves_per_s")
    push_config = max((c for c in ("kontor-stream", "kontor-webhook") if med(c, "moves_per_s") is not None),
                      key=lambda c: med(c, "moves_per_s") or 0.0, default=None)
    out["kontor_push_moves_per_s"] = med(push_config, "moves_per_s") if push_config else None
    out["kontor_push_via"] = push_config.split("-")[1] if push_config else None
    out["kontor_poll_moves_per_s"] = med("kontor-poll", "moves_per_s")
    out["kontor_stream_moves_per_s"] = stream
    out["kontor_webhook_moves_per_s"] = webhook
    out["bgio_memory_moves_per_s"] = med("bgio-memory", "moves_per_s")
    out["bgio_file_moves_per_s"] = med("bgio-file", "moves_per_s")

    def ratio(a: float | None, b: float | None) -> float | None:
        return round(a / b, 3) if a is not None and b else None

    file_, memory = out["bgio_file_moves_per_s"], out["bgio_memory_moves_per_s"]
    out["push_ratio_file"] = ratio(out["kontor_push_moves_per_s"], file_)
    out["push_ratio_memory"] = ratio(out["kontor_push_moves_per_s"], memory)
    out["poll_ratio_file"] = ratio(out["kontor_poll_moves_per_s"], file_)
    push_p50 = med(push_config, "p50") if push_config else None
    out["kontor_push_p50_ms"] = push_p50
    out["bgio_file_p50_ms"] = med("bgio-file", "p50")
    out["bgio_memory_p50_ms"] = med("bgio-memory", "p50")
    out["p50_ratio_file"] = ratio(push_p50, out["bgio_file_p50_ms"])
    out["p50_ratio_memory"] = ratio(push_p50, out["bgio_memory_p50_ms"])
    out["kontor_push_cpu_ms_per_move"] = med(push_config, "cpu_ms_per_move") if push_config else None
    out["kontor_poll_cpu_ms_per_move"] = med("kontor-poll", "cpu_ms_per_move")
    out["bgio_file_cpu_ms_per_move"] = med("bgio-file", "cpu_ms_per_move")
    if single is not None:
        out["single_stream_p50_ms"] = med("kontor-stream", "p50", single)
        out["single_webhook_p50_ms"] = med("kontor-webhook", "p50", single)
        out["single_poll_p50_ms"] = med("kontor-poll", "p50", single)
        out["single_bgio_memory_p50_ms"] = med("bgio-memory", "p50", single)
    # Issue 26: each Kontor channel against both peers, the medians and pass by pass.
    for channel in ("stream", "webhook", "poll"):
        mine = results.get((f"kontor-{channel}", games)) or []
        for peer, key in (("file", "bgio-file"), ("memory", "bgio-memory")):
            theirs = results.get((key, games)) or []
            out[f"{channel}_ratio_{peer}"] = ratio(med(f"kontor-{channel}", "moves_per_s"), med(key, "moves_per_s"))
            out[f"{channel}_ratio_{peer}_by_pass"] = [round(a["moves_per_s"] / b["moves_per_s"], 3)
                                                      for a, b in zip(mine, theirs, strict=False)]
        out[f"{channel}_p50_ratio_file_by_pass"] = [
            round(a["p50"] / b["p50"], 3) for a, b in zip(mine, results.get(("bgio-file", games)) or [], strict=False)]
        out[f"{channel}_cpu_ms_per_move_by_process"] = {
            k: round(statistics.median(r["cpu_ms_per_move_by_process"].get(k, 0.0) for r in mine), 3)
            for k in (mine[0].get("cpu_ms_per_move_by_process") or {})} if mine else None

    def every_pass(values: list[float], ok: Any) -> bool:
        return bool(values) and all(ok(v) for v in values)

    out["targets"] = {
        f"stream_ratio_file>={TARGET_STREAM_RATIO_FILE} and p50<=peer, every pass": (
            every_pass(out["stream_ratio_file_by_pass"], lambda v: v >= TARGET_STREAM_RATIO_FILE)
            and every_pass(out["stream_p50_ratio_file_by_pass"], lambda v: v <= 1.0)),
        f"webhook_ratio_file>={TARGET_WEBHOOK_RATIO_FILE}, every pass": every_pass(
            out["webhook_ratio_file_by_pass"], lambda v: v >= TARGET_WEBHOOK_RATIO_FILE),
        f"poll_ratio_file>={TARGET_POLL_RATIO_FILE}, every pass": every_pass(
            out["poll_ratio_file_by_pass"], lambda v: v >= TARGET_POLL_RATIO_FILE),
    }
    if single is not None:  # (measured only with the 1-game runs)
        single_p50 = out.get("single_stream_p50_ms") or float("inf")
        out["targets"]["single_stream_p50<=15ms"] = single_p50 <= TARGET_SINGLE_P50_MS
    return out


if __name__ == "__main__":
    sys.exit(main())
