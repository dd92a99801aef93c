"""Idempotency-Key on the creating POSTs: required, a retry replays the first answer,
another body under the same key is refused, and a refusal creates nothing."""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

import pytest

from service.core.kontor import Kontor
from tests.service.conftest import Player, create_game, footprint, problem


def game_body(host: Player, **over: Any) -> dict[str, Any]:
    return {"title": "haendler", "seats": 2, "host_key": host.key.public, "seed": 7, **over}


def post_game(client: Any, body: dict[str, Any], key: str | None) -> Any:
    headers = {} if key is None else {"Idempotency-Key": key}
    return client.post("/games", json=body, headers=headers)


def games_count(kontor: Kontor) -> int:
    return kontor.store.registered()


def test_create_without_key_is_refused_and_creates_nothing(client: Any, kontor: Kontor) -> None:
    before = footprint(kontor)
    problem(post_game(client, game_body(Player.new()), None), 400, "idempotency_key_missing")
    assert footprint(kontor) == before
    assert games_count(kontor) == 0


@pytest.mark.parametrize("key", ["", " ", "x" * 256, "two words", "é-accent", '"unterminated'])
def test_invalid_key_is_refused_and_creates_nothing(client: Any, kontor: Kontor, key: str) -> None:
    before = footprint(kontor)
    problem(post_game(client, game_body(Player.new()), key), 400, "idempotency_key_invalid")
    assert footprint(kontor) == before


def test_same_key_same_body_replays_the_first_answer(client: Any, kontor: Kontor) -> None:
    host, key = Player.new(), uuid.uuid4().hex
    body = game_body(host)
    first = post_game(client, body, key)
    assert first.status_code == 201
    assert "Idempotent-Replayed" not in first.headers
    again = post_game(client, body, key)
    assert again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json == first.json
    assert again.headers["Location"] == first.headers["Location"] == f"/games/{first.json['id']}"
    assert games_count(kontor) == 1
    assert [g["id"] for g in client.get("/games").json["items"]] == [first.json["id"]]


def test_same_key_other_body_is_refused(client: Any, kontor: Kontor) -> None:
    host, key = Player.new(), uuid.uuid4().hex
    assert post_game(client, game_body(host), key).status_code == 201
    before = footprint(kontor)
    problem(post_game(client, game_body(host, seats=3), key), 422, "idempotency_key_reused")
    problem(post_game(client, game_body(host, name="Other"), key), 422, "idempotency_key_reused")
    assert footprint(kontor) == before
    assert games_count(kontor) == 1


def test_keys_belong_to_one_client(client: Any, kontor: Kontor) -> None:
    """Two hosts that happen to pick the same key do not see each other's games."""
    key = "shared-key-1"
    a = post_game(client, game_body(Player.new()), key)
    b = post_game(client, game_body(Player.new()), key)
    assert a.status_code == b.status_code == 201
    assert a.json["id"] != b.json["id"]
    assert "Idempotent-Replayed" not in b.headers
    assert games_count(kontor) == 2


def test_quoted_structured_field_key_is_the_same_key(client: Any, kontor: Kontor) -> None:
    host = Player.new()
    body = game_body(host)
    first = post_game(client, body, '"abc-123"')
    assert first.status_code == 201
    again = post_game(client, body, "abc-123")
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json["id"] == first.json["id"]
    assert games_count(kontor) == 1


def test_a_stored_client_error_is_replayed(client: Any, kontor: Kontor) -> None:
    host, key = Player.new(), uuid.uuid4().hex
    body = game_body(host, options={"abilities": "nope"})
    first = problem(post_game(client, body, key), 422, "bad_options")
    again = problem(post_game(client, body, key), 422, "bad_options")
    assert again["detail"] == first["detail"]
    assert games_count(kontor) == 0
    problem(post_game(client, game_body(host), key), 422, "idempotency_key_reused")


def test_a_request_still_running_is_in_flight(client: Any, kontor: Kontor) -> None:
    host, key = Player.new(), uuid.uuid4().hex
    raw = json.dumps(game_body(host)).encode()
    # Another web process holds the key: it has claimed it and not finished yet.
    fp = hashlib.sha256(raw).hexdigest()
    assert kontor.store.idem_claim(f"host-{host.key.kid}", key, fp, 60) is None
    r = client.post("/games", data=raw, content_type="application/json", headers={"Idempotency-Key": key})
    problem(r, 409, "idempotency_key_in_flight")
    assert games_count(kontor) == 0


def test_a_malformed_body_is_refused_before_the_key_is_claimed(client: Any, kontor: Kontor) -> None:
    host, key = Player.new(), uuid.uuid4().hex
    problem(post_game(client, {"title": "haendler"}, key), 422, "invalid_request")
    # The key is still free: the fixed request goes through.
    assert post_game(client, game_body(host), key).status_code == 201


# -- joining ------------------------------------------------------------------------------
def post_join(client: Any, gid: str, body: dict[str, Any], key: str | None) -> Any:
    headers = {} if key is None else {"Idempotency-Key": key}
    return client.post(f"/games/{gid}/seats", json=body, headers=headers)


@pytest.fixture
def lobby(client: Any) -> str:
    return str(create_game(client, Player.new(), 3)["id"])


def test_join_without_key_is_refused(client: Any, kontor: Kontor, lobby: str) -> None:
    before = footprint(kontor)
    problem(post_join(client, lobby, {"name": "A", "public_key": Player.new().key.public}, None),
            400, "idempotency_key_missing")
    problem(post_join(client, lobby, {"name": "A", "public_key": Player.new().key.public}, ""),
            400, "idempotency_key_invalid")
    assert footprint(kontor) == before


def test_joining_twice_with_one_key_is_one_join(client: Any, lobby: str) -> None:
    p, key = Player.new(), uuid.uuid4().hex
    body = {"name": "Anna", "public_key": p.key.public}
    first = post_join(client, lobby, body, key)
    assert first.status_code == 201
    again = post_join(client, lobby, body, key)
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json == first.json
    taken = [s for s in client.get(f"/games/{lobby}/seats").json if s["taken"]]
    assert [s["seat"] for s in taken] == [first.json["seat"]]


def test_join_same_key_other_body_is_refused(client: Any, kontor: Kontor, lobby: str) -> None:
    p, key = Player.new(), uuid.uuid4().hex
    assert post_join(client, lobby, {"name": "Anna", "public_key": p.key.public}, key).status_code == 201
    before = footprint(kontor)
    problem(post_join(client, lobby, {"name": "Berta", "public_key": p.key.public}, key), 422,
            "idempotency_key_reused")
    assert footprint(kontor) == before


def test_join_stored_error_is_replayed_not_recomputed(client: Any, lobby: str) -> None:
    first, late = Player.new(), Player.new()
    assert post_join(client, lobby, {"name": "First", "public_key": first.key.public, "seat": 0},
                     uuid.uuid4().hex).status_code == 201
    key = uuid.uuid4().hex
    body = {"name": "Late", "public_key": late.key.public, "seat": 0}
    problem(post_join(client, lobby, body, key), 409, "seat_taken")
    # The same player then takes seat 1 under a new key. Run afresh, the old request
    # would now be `key_in_use`; under its old key it replays the stored answer.
    ok = post_join(client, lobby, {**body, "seat": 1}, uuid.uuid4().hex)
    assert ok.status_code == 201 and ok.json["seat"] == 1
    problem(post_join(client, lobby, body, key), 409, "seat_taken")
    problem(post_join(client, lobby, body, uuid.uuid4().hex), 409, "key_in_use")
