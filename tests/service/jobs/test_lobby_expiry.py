"""Lobby games expire (issue 23, item 1): `lobby_ttl` after creation a game nobody
started is removed by the sweeper with every key it has; the game is told once,
`lobby_warning` before; a started game never expires; a join racing the expiry either
lands before it (and goes with the game) or is refused.

The clock: the expiry is judged on the store's clock inside the scripts, against the
game's `created_at`; the tests move a game back in time (`age`) instead of waiting.
"""

from __future__ import annotations

import threading
import uuid
import zlib
from dataclasses import replace
from typing import Any

import pytest

from service.config import Settings
from service.core.kontor import Kontor
from service.http.app import create_app
from service.jobs.sweep import sweep
from service.store.keys import INDEXES
from tests.service.conftest import Player, create_game, footprint, join, new_game, problem

TTL = 30 * 86400


@pytest.fixture
def lobby_settings(settings: Settings) -> Settings:
    return replace(settings, lobby_ttl=TTL, lobby_warning=86400)


@pytest.fixture
def lk(lobby_settings: Settings) -> Kontor:
    return Kontor(lobby_settings)


@pytest.fixture
def lclient(lobby_settings: Settings, lk: Kontor) -> Any:
    app = create_app(lobby_settings, lk)
    app.config["TESTING"] = True
    return app.test_client()


def age(k: Kontor, gid: str, seconds: float) -> None:
    """Move the game's creation `seconds` back (its meta, the registry, its index entries)."""
    s = k.store
    created = float(s.r.hget(s.key(gid, "meta"), "created_at")) - seconds  # type: ignore[arg-type]
    s.r.hset(s.key(gid, "meta"), "created_at", f"{created:.6f}")
    for key in [s.games_key(gid), *s.index_keys(gid)]:
        s.r.zadd(key, {gid: created}, xx=True)


def created_ago(k: Kontor, gid: str) -> float:
    return k.now() - float(k.store.r.hget(k.store.key(gid, "meta"), "created_at"))  # type: ignore[arg-type]


def set_age(k: Kontor, gid: str, seconds: float) -> None:
    """Make the game `seconds` old."""
    age(k, gid, seconds - created_ago(k, gid))


def traces(k: Kontor, gid: str) -> list[str]:
    """Everything in the store that still names the game: key names, members of sets and
    sorted sets, hash fields, and string values (packed Idempotency-Key records unpacked)."""
    r = k.rq
    found = []
    for raw in r.scan_iter(count=1000):
        key = raw.decode()
        if gid in key:
            found.append(key)
            continue
        kind = r.type(key).decode()  # type: ignore[union-attr]
        if kind == "zset":
            found += [f"{key} {m!r}" for m in r.zrange(key, 0, -1) if gid.encode() in m]  # type: ignore[union-attr]
        elif kind == "set":
            found += [f"{key} {m!r}" for m in r.smembers(key) if gid.encode() in m]  # type: ignore[union-attr]
        elif kind == "hash":
            found += [f"{key} {f!r}" for f in r.hkeys(key) if gid.encode() in f]  # type: ignore[union-attr]
        elif kind == "string":
            value: bytes = r.get(key)  # type: ignore[assignment]
            text = zlib.decompress(value[1:], -15) if value[:1] == b"\x01" else value
            if gid.encode() in text:
                found.append(f"{key} (value)")
    return found


def lobby_game(client: Any, k: Kontor, joined: int = 1) -> tuple[Player, str]:
    """A 3-seat game in the lobby, made over HTTP (so Idempotency-Key records point at
    it), with `joined` players, one of them with a contact."""
    host = Player.new()
    gid = create_game(client, host, 3)["id"]
    for seat in range(joined):
        p = Player.new()
        join(client, gid, p, f"P{seat}", seat)
        k.store.set_contact(gid, seat, {"email": f"p{seat}@example.org"})
    return host, gid


def test_a_lobby_game_expires_after_the_ttl_and_leaves_nothing_behind(lclient: Any, lk: Kontor, worker: Any) -> None:
    other_host, other = lobby_game(lclient, lk)  # a game of the same age that started: kept
    _, gid = lobby_game(lclient, lk, joined=2)
    created = lclient.get(f"/games/{gid}").json
    assert created["expires_at"] is not None
    assert lk.store.r.exists(lk.store.key(gid, "idem")), "the game's Idempotency-Key records are noted"

    set_age(lk, gid, TTL - 5)
    stats = sweep(lk)
    assert stats["lobby_expired"] == 0 and lclient.get(f"/games/{gid}").status_code == 200
    worker()  # the day-before notices (a job) are made before the game goes

    set_age(lk, gid, TTL + 1)
    set_age(lk, other, TTL + 1)
    lclient.patch(f"/games/{other}/seats/1", json={"bot": "greedy"}, headers=other_host.bearer())
    lclient.patch(f"/games/{other}/seats/2", json={"bot": "greedy"}, headers=other_host.bearer())
    assert lclient.patch(f"/games/{other}", json={"status": "running"}, headers=other_host.bearer()).status_code == 200
    stats = sweep(lk)
    assert stats["lobby_expired"] == 1
    problem(lclient.get(f"/games/{gid}"), 404, "game_not_found")
    assert gid not in [g["id"] for g in lclient.get("/games?status=lobby").json["items"]]
    assert gid not in [g["id"] for g in lclient.get("/games").json["items"]]
    assert traces(lk, gid) == []
    assert lclient.get(f"/games/{other}").json["status"] == "running"


def test_the_host_is_told_once_a_day_before(lclient: Any, lk: Kontor) -> None:
    _, gid = lobby_game(lclient, lk)
    set_age(lk, gid, TTL - 86400 - 60)  # a minute before the warning
    assert sweep(lk)["lobby_told"] == 0
    assert "Less than a day left" not in lclient.get(f"/play/{gid}").get_data(as_text=True)
    set_age(lk, gid, TTL - 86400 + 60)
    assert sweep(lk)["lobby_told"] == 1
    assert sweep(lk)["lobby_told"] == 0, "told once"
    events = lclient.get(f"/games/{gid}/events").json["items"]
    closing = [e for e in events if e["type"] == "lobby_closing"]
    assert len(closing) == 1
    expires = lclient.get(f"/games/{gid}").json["expires_at"]
    assert expires[:10] in lclient.get("/").get_data(as_text=True), "the front page says until when"
    assert expires[:16].replace("T", " ") in lclient.get(f"/play/{gid}").get_data(as_text=True)
    page = lclient.get(f"/play/{gid}").get_data(as_text=True)
    assert "Less than a day left: unless the host starts it, this game closes on" in page
    assert closing[0]["closes_at"] == expires
    # The seat's contact is told (tests/service/channels/test_lobby_closing.py): its
    # notices are a job, enqueued once; a game where nobody has a contact is done at once.
    meta = lk.store.meta(gid)
    assert meta["notified_through"] == "0" and meta["event_seq"] == "1"
    _, quiet = lobby_game(lclient, lk, joined=0)
    set_age(lk, quiet, TTL - 86400 + 60)
    assert sweep(lk)["lobby_told"] == 1
    meta = lk.store.meta(quiet)
    assert meta["notified_through"] == meta["event_seq"] == "1"


def test_a_started_game_never_expires(lclient: Any, lk: Kontor) -> None:
    _, _ = new_game(lclient, 2)
    gid = lk.listing("running", 5, None)["items"][0]["id"]
    set_age(lk, gid, 3 * TTL)
    before = footprint(lk, gid)
    stats = sweep(lk)
    assert (stats["lobby_told"], stats["lobby_expired"]) == (0, 0)
    assert lclient.get(f"/games/{gid}").json["expires_at"] is None
    assert lk.store.purge_expired(gid, TTL).value == "started"
    after = footprint(lk, gid)
    assert {k: v for k, v in after.items() if not k.endswith(":meta")} == \
           {k: v for k, v in before.items() if not k.endswith(":meta")}


def test_a_join_after_the_expiry_is_refused_and_changes_nothing(lclient: Any, lk: Kontor) -> None:
    _, gid = lobby_game(lclient, lk)
    set_age(lk, gid, TTL + 1)
    before = footprint(lk, gid)
    r = lclient.post(f"/games/{gid}/seats", json={"name": "Late", "public_key": Player.new().key.public},
                     headers={"Idempotency-Key": uuid.uuid4().hex})
    problem(r, 410, "game_expired")
    assert footprint(lk, gid) == before


def test_a_join_racing_the_expiry_lands_before_or_finds_no_game(lclient: Any, lk: Kontor) -> None:
    _, gid = lobby_game(lclient, lk, joined=0)
    set_age(lk, gid, TTL - 0.4)  # expires in 0.4 s, on the store's clock
    answers: list[tuple[int, str]] = []
    stop = threading.Event()

    def joiner() -> None:
        while not stop.is_set():
            try:
                seat = lk.join(gid, "Racer", Player.new().key.public, None)
                answers.append((201, str(seat["seat"])))
            except Exception as exc:  # Problem
                answers.append((getattr(exc, "status", 500), getattr(exc, "code", repr(exc))))

    t = threading.Thread(target=joiner)
    t.start()
    try:
        for _ in range(400):
            if sweep(lk)["lobby_expired"]:
                break
        else:
            pytest.fail("not expired")
    finally:
        stop.set()
        t.join()
    codes = {code for _, code in answers}
    assert codes <= {"0", "1", "2", "game_full", "game_expired", "game_not_found"}, codes
    assert traces(lk, gid) == [], "a seat taken just before the expiry went with the game"
    problem(lclient.get(f"/games/{gid}"), 404, "game_not_found")
    for index in INDEXES:
        assert lk.store.r.zscore(lk.store.index_key(index, gid), gid) is None
