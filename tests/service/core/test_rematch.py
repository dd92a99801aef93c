"""Rematch (issue 25, item 5): a finished game played again by the same seats with a new
seed, exactly once, by its host only; the finished game links it and tells its seats.
With the test title Stall (tests/service/stall.py: four steps, so a game ends quickly)."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from engine.core.verify import verify_history
from service.core.errors import Problem
from service.core.kontor import Kontor
from service.jobs.sweep import sweep
from service.store.keys import INDEX_BUCKETS
from tests.playertext import problems
from tests.service.conftest import Player, default_step, problem
from tests.service.stall import registered

# Also with the store on a Valkey Cluster (the claim, the new game and the registry are in other slots).
pytestmark = pytest.mark.cluster


@pytest.fixture(autouse=True)
def stall() -> Iterator[Any]:
    with registered() as game:
        yield game


def finished_game(client: Any, kontor: Kontor, worker: Any, **body: Any) -> tuple[Player, dict[int, Player]]:
    """A Stall game of three seats (two players, a bot), played to its end with default orders."""
    host = Player.new()
    payload = {"title": "stall", "seats": 3, "host_key": host.key.public, "name": "Friday table", **body}
    r = client.post("/games", json=payload, headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 201, r.json
    gid = host.game = r.json["id"]
    players: dict[int, Player] = {}
    for seat, name in ((0, "Anna"), (1, "Bert")):
        p = Player.new()
        r = client.post(f"/games/{gid}/seats", json={"name": name, "public_key": p.key.public, "seat": seat},
                        headers={"Idempotency-Key": uuid.uuid4().hex})
        assert r.status_code == 201, r.json
        p.game, p.seat = gid, seat
        players[seat] = p
    r = client.patch(f"/games/{gid}/seats/2", json={"bot": "passer"}, headers=host.bearer())
    assert r.status_code == 200, r.json
    r = client.patch(f"/games/{gid}", json={"status": "running"}, headers=host.bearer())
    assert r.status_code == 200, r.json
    for _ in range(20):
        if kontor.store.meta(gid)["status"] == "finished":
            return host, players
        default_step(kontor, gid)
        worker()
    raise AssertionError("the game did not end")


def rematch(client: Any, host: Player, body: dict[str, Any] | None = None, key: str | None = None) -> Any:
    return client.post(f"/games/{host.game}/rematch", json=body or {}, headers={
        **host.bearer(), "Idempotency-Key": key or uuid.uuid4().hex})


def test_rematch_same_seats_options_and_policy_with_a_new_seed_started_at_once(
        client: Any, kontor: Kontor, worker: Any) -> None:
    deadlines = {"sealed_seconds": 7200, "sequential_seconds": 3600, "on_expiry": "extend",
                 "extension_seconds": 600}
    host, players = finished_game(client, kontor, worker, deadlines=deadlines, mail_orders="signed", press="public")
    old = client.get(f"/games/{host.game}").json
    assert old["rematch"] is None and old["rematch_of"] is None

    r = rematch(client, host)
    assert r.status_code == 201, r.json
    new = r.json
    assert r.headers["Location"] == f"/games/{new['id']}"
    assert new["id"] != host.game
    assert new["name"] == "Friday table (rematch)"
    for field in ("title", "seats", "options", "deadlines", "mail_orders", "press", "host_kid"):
        assert new[field] == old[field], field
    assert new["deadlines"]["sequential_seconds"] == 3600 and new["press"] == "public"
    assert [(p["seat"], p["name"], p["public_key"], p["kid"], p["bot"]) for p in new["players"]] == \
        [(p["seat"], p["name"], p["public_key"], p["kid"], p["bot"]) for p in old["players"]]
    # started at once, with a new seed (so a new commitment): its first step is open
    assert new["status"] == "running"
    assert new["phase"]["id"] == 1 and new["phase"]["status"] == "collecting"
    assert new["commitment"] and new["commitment"] != old["commitment"]
    assert kontor.store.meta(new["id"])["seed"] != kontor.store.meta(host.game)["seed"]
    assert new["rematch_of"] == {"id": host.game, "url": f"{kontor.settings.public_url.rstrip('/')}/play/{host.game}"}
    # the same seats play it with their own keys: seat 0 orders in step 1
    me = players[0]
    me.game = new["id"]
    ph = client.get(f"/games/{new['id']}/phases/current", headers=me.bearer()).json
    assert ph["you"]["requested"]
    r = client.put(f"/games/{new['id']}/phases/1/orders/0", json={"token": me.order_token(1, {"pass": True})})
    assert r.status_code == 202, r.json

    # the finished game links it, and its last event tells everyone in words
    again = client.get(f"/games/{host.game}").json
    assert again["rematch"] == {"id": new["id"], "url": f"{kontor.settings.public_url.rstrip('/')}/play/{new['id']}"}
    events = client.get(f"/games/{host.game}/events?after=0&limit=200").json["items"]
    last = events[-1]
    assert last["type"] == "rematch_started" and last["game"] == new["id"]
    # the finished game's history still verifies (its last event is no step of it)
    doc = client.get(f"/games/{host.game}/history").json
    assert verify_history(doc).ok
    # the new game's start says it is a rematch of the finished one
    started = client.get(f"/games/{new['id']}/events?after=0&limit=5").json["items"][0]
    assert (started["type"], started["rematch_of"], started["rematch_of_name"]) == \
        ("game_started", host.game, "Friday table")


def test_rematch_of_a_rematch_is_named_rematch_2(client: Any, kontor: Kontor, worker: Any) -> None:
    host, _ = finished_game(client, kontor, worker)
    first = rematch(client, host).json
    host.game = first["id"]
    for _ in range(20):
        if kontor.store.meta(first["id"])["status"] == "finished":
            break
        default_step(kontor, first["id"])
        worker()
    # the rematch, played to its end, has a history of its own that verifies
    assert verify_history(client.get(f"/games/{first['id']}/history").json).ok
    second = rematch(client, host)
    assert second.status_code == 201, second.json
    assert second.json["name"] == "Friday table (rematch 2)"
    assert second.json["rematch_of"]["id"] == first["id"]


def test_rematch_exactly_once_twice_and_concurrently(client: Any, kontor: Kontor, worker: Any,
                                                   settings: Any) -> None:
    host, _ = finished_game(client, kontor, worker)
    first = rematch(client, host)
    assert first.status_code == 201
    second = rematch(client, host)  # another request (another Idempotency-Key): the same game
    assert second.status_code == 200, second.json
    assert second.json["id"] == first.json["id"]
    key = uuid.uuid4().hex  # a retry with the same Idempotency-Key replays the first answer
    assert rematch(client, host, key=key).json["id"] == first.json["id"]
    assert rematch(client, host, key=key).headers.get("Idempotent-Replayed") == "true"

    # a race of eight on another finished game: one new game, every answer names it
    host2, _ = finished_game(client, kontor, worker)
    answers: list[tuple[str, bool]] = []
    errors: list[BaseException] = []

    def go() -> None:
        try:
            game, created = Kontor(settings).rematch(host2.game)
            answers.append((game["id"], created))
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=go) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len({gid for gid, _ in answers}) == 1 and sum(created for _, created in answers) == 1
    made = [g for g in (kontor.store.meta(gid) for gid, _ in answers[:1]) if g]
    assert made[0]["status"] == "running"
    told = [e for _, e, _ in kontor.store.events(host2.game, 0, 500) if e["type"] == "rematch_started"]
    assert len(told) == 1
    # exactly one game names the finished one as its rematch's origin
    registered = [g for b in range(INDEX_BUCKETS) for g in kontor.r.zrange(kontor.store.registry_bucket(b), 0, -1)]
    every = [g for g in registered if kontor.store.meta(g).get("rematch_of") == host2.game]
    assert len(every) == 1


def test_rematch_only_by_the_host(client: Any, kontor: Kontor, worker: Any) -> None:
    host, players = finished_game(client, kontor, worker)
    r = client.post(f"/games/{host.game}/rematch", json={},
                    headers={**players[0].bearer(), "Idempotency-Key": uuid.uuid4().hex})
    problem(r, 403, "not_host")
    r = client.post(f"/games/{host.game}/rematch", json={}, headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 401
    assert "rematch" not in kontor.store.meta(host.game)
    assert client.get(f"/games/{host.game}").json["rematch"] is None


def test_rematch_only_of_a_finished_game(client: Any, kontor: Kontor) -> None:
    host = Player.new()
    r = client.post("/games", json={"title": "stall", "seats": 2, "host_key": host.key.public},
                    headers={"Idempotency-Key": uuid.uuid4().hex})
    host.game = r.json["id"]
    problem(rematch(client, host), 409, "game_not_finished")  # in the lobby
    for seat in range(2):
        client.patch(f"/games/{host.game}/seats/{seat}", json={"bot": "passer"}, headers=host.bearer())
    client.patch(f"/games/{host.game}", json={"status": "running"}, headers=host.bearer())
    problem(rematch(client, host), 409, "game_not_finished")  # running
    assert not {"rematch", "rematch_host"} & set(kontor.store.meta(host.game))
    assert kontor.store.rematch_intents(kontor.now() + 1000, 10) == []


def test_rematch_with_a_fresh_host_key(client: Any, kontor: Kontor, worker: Any) -> None:
    host, players = finished_game(client, kontor, worker)
    fresh = Player.new()
    # a key that holds a seat cannot host it
    problem(rematch(client, host, {"host_key": players[0].key.public}), 409, "key_in_use")
    problem(rematch(client, host, {"host_key": "not a key"}), 422, "bad_public_key")
    r = rematch(client, host, {"host_key": fresh.key.public})
    assert r.status_code == 201, r.json
    assert r.json["host_kid"] == fresh.key.kid
    fresh.game = r.json["id"]
    # the fresh key hosts the rematch (and the old one does not)
    r3 = client.get(f"/games/{fresh.game}/seats/0/contact", headers=fresh.bearer())
    assert r3.status_code == 200, r3.json
    old_host = Player(host.key, fresh.game)
    problem(client.get(f"/games/{fresh.game}/seats/0/contact", headers=old_host.bearer()), 401, "unknown_key")


def test_rematch_a_crash_between_the_writes_is_finished_by_the_sweep(
        client: Any, kontor: Kontor, worker: Any) -> None:
    # The claim made and the process gone before the game: the sweep makes it, starts it, tells the old game.
    host, _ = finished_game(client, kontor, worker)
    meta = kontor.store.meta(host.game)
    kontor.store.intend_rematch(host.game, kontor.now() - 120)
    out = kontor.store.claim_rematch(host.game, "abcdef0123", meta["host_key"])
    assert out.status == "new"
    assert client.get(f"/games/{host.game}").json["rematch"] is None  # not shown before it started
    assert sweep(kontor)["rematches"] == 1
    new = kontor.game("abcdef0123")
    assert new["status"] == "running" and new["rematch_of"]["id"] == host.game
    assert client.get(f"/games/{host.game}").json["rematch"]["id"] == "abcdef0123"
    assert kontor.store.rematch_intents(kontor.now() + 1000, 10) == []
    assert sweep(kontor)["rematches"] == 0
    # a later request answers that very game (200)
    r = rematch(client, host)
    assert (r.status_code, r.json["id"]) == (200, "abcdef0123")

    # The game made but not started (a crash after its script): the next request finishes it.
    host2, _ = finished_game(client, kontor, worker)
    meta2 = kontor.store.meta(host2.game)
    kontor.store.intend_rematch(host2.game, kontor.now())
    kontor.store.claim_rematch(host2.game, "fedcba9876", meta2["host_key"])
    kontor._make_rematch(host2.game, kontor.store.meta(host2.game), "fedcba9876")
    assert kontor.store.meta("fedcba9876")["status"] == "lobby"
    with pytest.raises(Problem):  # not listed as open to join: its seats are all held
        kontor.join("fedcba9876", "Eve", Player.new().key.public, None)
    r = rematch(client, host2)
    assert (r.status_code, r.json["id"], r.json["status"]) == (200, "fedcba9876", "running")


def test_rematch_started_in_words_on_the_finished_game(client: Any, kontor: Kontor, worker: Any) -> None:
    host, _ = finished_game(client, kontor, worker)
    new = rematch(client, host).json
    from service import words
    from tests.service.stall import GAME

    [ev] = [e for _, e, _ in kontor.store.events(host.game, 0, 500) if e["type"] == "rematch_started"]
    text = words.describe(GAME, ev, ["Anna", "Bert", "Greta"])
    assert "rematch" in text and "Friday table (rematch)" in text and f"/play/{new['id']}" in text
    assert problems(text.replace(new["id"], "")) == []
    [started] = [e for _, e, _ in kontor.store.events(new["id"], 0, 5) if e["type"] == "game_started"]
    said = words.describe(GAME, started, ["Anna", "Bert", "Greta"])
    assert "rematch of “Friday table”" in said and problems(said) == []
    assert json.loads(kontor.store.meta(host.game)["event_ids"].split(",")[0]) >= 1
