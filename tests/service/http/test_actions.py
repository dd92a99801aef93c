"""`POST /games/{id}/seats/{seat}/actions`: unprompted actions, signed, applied at once and
exactly once, refusals private, atomic with a step's resolution, and replayed by the
history's verification. With the test title Stall (tests/service/stall.py): seat 0 is
asked in step 1, every seat may hoard a good at any time for 2 coins."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from engine.core.verify import verify_history
from tests.service.conftest import Player, footprint, new_game, problem
from tests.service.stall import registered

# Also with the store on a Valkey Cluster and the queue on a Valkey of its own (issue 24).
pytestmark = pytest.mark.cluster


@pytest.fixture(autouse=True)
def stall() -> Iterator[Any]:
    with registered() as game:
        yield game


def action_token(p: Player, action: Any, **claims: Any) -> str:
    body = {"game": p.game, "seat": p.seat, "iat": int(time.time()), "jti": uuid.uuid4().hex, "action": action,
            **claims}
    return p.key.sign(body)


def act(client: Any, p: Player, action: Any = None, token: str | None = None, seat: int | None = None) -> Any:
    token = token if token is not None else action_token(p, action)
    return client.post(f"/games/{p.game}/seats/{p.seat if seat is None else seat}/actions", json={"token": token})


def view(client: Any, p: Player) -> dict[str, Any]:
    return dict(client.get(f"/games/{p.game}/view", headers=p.bearer()).json["state"])


def test_a_seat_not_asked_acts_at_once(client: Any) -> None:
    _, (a, b) = new_game(client, 2, title="stall")
    r = act(client, b, {"hoard": "wein"})
    assert r.status_code == 200, r.json
    assert r.json["accepted"] is True and r.json["phase"] == 1 and r.json["seat"] == 1
    assert [(e["type"], e["text"]) for e in r.json["events"]] == [
        ("hoarded", "P1 hoarded 1 Wein."), ("purse", "P1 has 3 coins left.")]
    state = view(client, b)
    assert state["stock"] == {"wein": 2, "tuch": 2}
    assert state["players"][1] == {"coins": 3, "goods": {"wein": 1, "tuch": 0}}
    # the private event is the actor's alone; the public one everyone's, with its step
    seen_a = [e["type"] for e in client.get(f"/games/{a.game}/events", headers=a.bearer()).json["items"]]
    seen_b = [e for e in client.get(f"/games/{b.game}/events", headers=b.bearer()).json["items"]]
    assert "hoarded" in seen_a and "purse" not in seen_a
    assert [(e["type"], e["phase"]) for e in seen_b[-2:]] == [("hoarded", 1), ("purse", 1)]
    # still the same decision open: seat 0 asked in step 1, and its prompt sees the new stock
    ph = client.get(f"/games/{a.game}/phases/current", headers=a.bearer()).json
    assert (ph["id"], ph["requested"], ph["status"]) == (1, [0], "collecting")
    r = client.post(f"/games/{a.game}/seats/0/choices", json={"picks": ["wein"]}, headers=a.bearer())
    assert r.json["prompt"]["ask"]["number"]["max"] == 2


def test_exactly_once(client: Any, kontor: Any) -> None:
    _, (a, b) = new_game(client, 2, title="stall")
    token = action_token(b, {"hoard": "tuch"})
    assert act(client, b, token=token).status_code == 200
    before = footprint(kontor, b.game)
    problem(act(client, b, token=token), 401, "token_replayed")
    assert footprint(kontor, b.game) == before
    assert view(client, b)["stock"]["tuch"] == 1


@pytest.mark.parametrize(("action", "status", "code"), [
    ({"hoard": "beer"}, 409, "no_action"),
    ({"hoard": "wein", "more": 1}, 409, "no_action"),
    ([1], 422, "malformed_order"),
    ("hoard", 422, "malformed_order"),
])
def test_refused_actions_change_nothing(client: Any, kontor: Any, action: Any, status: int, code: str) -> None:
    _, (a, b) = new_game(client, 2, title="stall")
    before = footprint(kontor, b.game)
    problem(act(client, b, action), status, code)
    assert footprint(kontor, b.game) == before


def test_rules_refusals_are_private(client: Any, kontor: Any) -> None:
    _, (a, b) = new_game(client, 2, title="stall")
    assert act(client, b, {"hoard": "tuch"}).status_code == 200
    assert act(client, b, {"hoard": "tuch"}).status_code == 200
    events = client.get(f"/games/{a.game}/events").json["last"]
    before = footprint(kontor, b.game)
    problem(act(client, a, {"hoard": "tuch"}), 422, "sold_out")
    problem(act(client, b, {"hoard": "wein"}), 422, "short_of_coins")  # 1 coin left
    assert footprint(kontor, b.game) == before
    assert client.get(f"/games/{a.game}/events").json["last"] == events


def test_token_problems(client: Any, kontor: Any) -> None:
    host, (a, b) = new_game(client, 2, title="stall")
    before = footprint(kontor, b.game)
    problem(act(client, b, token="not-a-token"), 401, "malformed_token")
    problem(act(client, b, token=action_token(a, {"hoard": "wein"}), seat=1), 403, "wrong_seat")
    problem(act(client, b, token=action_token(b, {"hoard": "wein"}, seat=0)), 401, "bad_claims")
    problem(act(client, b, token=action_token(b, {"hoard": "wein"}, seat=True)), 401, "bad_claims")
    problem(act(client, b, token=action_token(b, {"hoard": "wein"}, game="other")), 401, "bad_claims")
    problem(act(client, b, token=action_token(b, {"hoard": "wein"}, jti="short")), 401, "bad_claims")
    problem(act(client, b, token=b.key.sign({"game": b.game, "seat": 1, "iat": int(time.time()),
                                             "jti": uuid.uuid4().hex})), 401, "bad_claims")
    problem(act(client, b, token=action_token(b, {"hoard": "wein"}, iat=int(time.time()) - 100000)), 401,
            "token_expired")
    problem(act(client, b, token=action_token(b, {"hoard": "wein"}, iat=int(time.time()) + 3600)), 401,
            "token_from_future")
    problem(act(client, b, token=Player.new().key.sign({"game": b.game})), 401, "unknown_key")
    problem(client.post(f"/games/{b.game}/seats/1/actions", json={}), 422, "invalid_request")
    problem(client.post(f"/games/{b.game}/seats/1/actions", json={"token": 5}), 422, "invalid_request")
    assert footprint(kontor, b.game) == before


def test_lobby_and_finished_games(client: Any, kontor: Any, worker: Any) -> None:
    host, (a, b) = new_game(client, 2, title="stall")
    for step in range(1, 5):
        p = (a, b)[(step - 1) % 2]
        r = client.put(f"/games/{p.game}/phases/{step}/orders/{p.seat}",
                       json={"token": p.order_token(step, {"pass": True})})
        assert r.status_code == 202, r.json
        worker()
    problem(act(client, b, {"hoard": "wein"}), 409, "game_finished")


def test_history_replays_the_actions(client: Any, kontor: Any, worker: Any) -> None:
    host, (a, b) = new_game(client, 2, title="stall")
    assert act(client, b, {"hoard": "wein"}).status_code == 200  # step 1, before seat 0's order
    r = client.put(f"/games/{a.game}/phases/1/orders/0", json={"token": a.order_token(1, {"buy": "wein",
                                                                                          "count": 2})})
    assert r.status_code == 202
    worker()
    assert act(client, a, {"hoard": "tuch"}).status_code == 200  # step 2, by a seat not asked
    assert act(client, b, {"hoard": "tuch"}).status_code == 200  # step 2, by the seat asked
    for step in range(2, 5):
        p = (a, b)[(step - 1) % 2]
        r = client.put(f"/games/{p.game}/phases/{step}/orders/{p.seat}",
                       json={"token": p.order_token(step, {"pass": True})})
        assert r.status_code == 202, r.json
        worker()
    doc = client.get(f"/games/{a.game}/history").json
    steps = doc["steps"]
    assert [s["phase"] for s in steps] == [1, 2, 3, 4]
    assert [(x["seat"], x["action"]) for x in steps[0]["actions"]] == [(1, {"hoard": "wein"})]
    assert [(x["seat"], x["action"]) for x in steps[1]["actions"]] == [(0, {"hoard": "tuch"}),
                                                                       (1, {"hoard": "tuch"})]
    assert "actions" not in steps[2]
    assert steps[0]["actions"][0]["events"] == [
        {"type": "hoarded", "visible_to": "all", "seat": 1, "good": "wein"},
        {"type": "purse", "visible_to": [1], "seat": 1, "coins": 3}]
    assert doc["result"] == [{"place": 1, "seat": 0, "score": 3}, {"place": 2, "seat": 1, "score": 2}]
    report = verify_history(doc)
    assert report.ok, report.lines
    # an action left out, or changed, no longer replays to the recorded states
    doc["steps"][1]["actions"] = doc["steps"][1]["actions"][:1]
    assert not verify_history(doc).ok
    doc["steps"][1].pop("actions")
    assert not verify_history(doc).ok


def test_a_held_state_an_action_changed_is_not_trusted_by_the_fast_path(client: Any, kontor: Any) -> None:
    """The order path's per-process state (`Store.step_state`) is held per step and state
    version: after an action the fast path either reads the new state or its script
    refuses (the version moved) and the full path validates against the new state."""
    _, (a, b) = new_game(client, 2, title="stall")
    held = kontor.store.step_state(a.game, "1")
    assert held is not None and held[1] == "0"
    assert act(client, b, {"hoard": "tuch"}).status_code == 200
    assert act(client, b, {"hoard": "tuch"}).status_code == 200  # no Tuch left
    assert kontor.store.step_state(a.game, "1")[1] == "0"  # still the old one held
    r = client.put(f"/games/{a.game}/phases/1/orders/0", json={"token": a.order_token(1, {"buy": "tuch",
                                                                                          "count": 1})})
    problem(r, 422, "sold_out")
    assert kontor.store.answered(a.game, 1) == []
