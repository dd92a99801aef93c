"""`POST /games/{gid}/pause`, `/resume` and `/extend` (issue 25): the host's clock over
HTTP. Host only; strict bodies; every refusal a problem with its stable code that
changes nothing; while paused the order fast path stores the last order without
resolving, the public poll shows the pause, and an action is refused. With the test
title Stall (tests/service/stall.py): seat 0 is asked in step 1."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.service.conftest import Player, create_game, footprint, new_game, problem
from tests.service.stall import registered


@pytest.fixture(autouse=True)
def stall() -> Iterator[Any]:
    with registered() as game:
        yield game


def post(client: Any, who: Player | None, gid: str, what: str, body: Any = None, key: str | None = None) -> Any:
    headers = who.bearer(game=gid) if who is not None else {}
    if what == "extend":
        headers["Idempotency-Key"] = key or uuid.uuid4().hex
    return client.post(f"/games/{gid}/{what}", json=body, headers=headers)


def test_pause_and_resume_by_the_host_only(client: Any, kontor: Any) -> None:
    host, (a, b) = new_game(client, 2, title="stall")
    gid = host.game
    before = footprint(kontor, gid)
    problem(post(client, None, gid, "pause"), 401, "authentication_required")
    problem(post(client, a, gid, "pause"), 403, "not_host")
    problem(post(client, b, gid, "resume"), 403, "not_host")
    problem(post(client, a, gid, "extend", {"seconds": 60}), 403, "not_host")
    assert footprint(kontor, gid) == before

    r = post(client, host, gid, "pause")
    assert r.status_code == 200, r.json
    since = r.json["paused_since"]
    assert since and r.json["phase"]["paused_since"] == since and r.json["phase"]["status"] == "collecting"
    assert client.get(f"/games/{gid}").json["paused_since"] == since
    # The public poll (the fast path) shows the pause too.
    assert client.get(f"/games/{gid}/phases/current").json["paused_since"] == since

    before = footprint(kontor, gid)
    body = problem(post(client, host, gid, "pause"), 409, "game_paused")
    assert body["paused_since"] == since
    assert footprint(kontor, gid) == before

    r = post(client, host, gid, "resume")
    assert r.status_code == 200, r.json
    assert r.json["paused_since"] is None and r.json["phase"]["paused_since"] is None
    assert client.get(f"/games/{gid}/phases/current").json["paused_since"] is None
    before = footprint(kontor, gid)
    problem(post(client, host, gid, "resume"), 409, "game_not_paused")
    assert footprint(kontor, gid) == before
    types = [e["type"] for e in client.get(f"/games/{gid}/events").json["items"]]
    assert types[-2:] == ["game_paused", "game_resumed"]


def test_pause_resume_and_extend_refused_before_the_start(client: Any, kontor: Any) -> None:
    host = Player.new()
    gid = create_game(client, host, 2, title="stall")["id"]
    before = footprint(kontor, gid)
    problem(post(client, host, gid, "pause"), 409, "game_not_started")
    problem(post(client, host, gid, "resume"), 409, "game_not_started")
    problem(post(client, host, gid, "extend", {"seconds": 60}), 409, "game_not_started")
    assert footprint(kontor, gid) == before
    problem(post(client, host, "00000000ff", "pause"), 404, "game_not_found")


@pytest.mark.parametrize("body, code", [
    ({"seconds": "60"}, "invalid_request"), ({"seconds": 60.0}, "invalid_request"),
    ({"seconds": True}, "invalid_request"), ({"seconds": None}, "invalid_request"), ({}, "invalid_request"),
    ({"seconds": 60, "minutes": 1}, "invalid_request"), ([60], "invalid_request"),
    ({"seconds": 0}, "bad_extension"), ({"seconds": 10 ** 9}, "bad_extension")])
def test_extend_bodies_are_strict(client: Any, kontor: Any, body: Any, code: str) -> None:
    host, _ = new_game(client, 2, title="stall")
    before = footprint(kontor, host.game)
    r = post(client, host, host.game, "extend", body)
    assert (r.status_code, r.json["code"]) == (422, code), r.json
    assert footprint(kontor, host.game) == before


def test_extend_once_per_idempotency_key(client: Any, kontor: Any) -> None:
    host, _ = new_game(client, 2, title="stall")
    gid = host.game
    old = float(kontor.store.phase(gid)["deadline"])
    problem(client.post(f"/games/{gid}/extend", json={"seconds": 60}, headers=host.bearer()), 400,
            "idempotency_key_missing")
    key = uuid.uuid4().hex
    first = post(client, host, gid, "extend", {"seconds": 3600}, key=key)
    assert first.status_code == 200, first.json
    again = post(client, host, gid, "extend", {"seconds": 3600}, key=key)
    assert again.status_code == 200 and again.headers.get("Idempotent-Replayed") == "true"
    assert float(kontor.store.phase(gid)["deadline"]) == pytest.approx(old + 3600, abs=1e-6)
    assert first.json["phase"]["deadline"] == again.json["phase"]["deadline"]
    events = [e for e in client.get(f"/games/{gid}/events").json["items"] if e["type"] == "deadline_extended"]
    assert [e["seconds"] for e in events] == [3600]


def test_pause_keeps_the_last_order_of_the_fast_path_and_resume_resolves_it(client: Any, kontor: Any,
                                                                            worker: Any) -> None:
    host, (a, b) = new_game(client, 2, title="stall")
    gid = host.game
    assert post(client, host, gid, "pause").status_code == 200
    r = client.put(f"/games/{gid}/phases/1/orders/0", json={"token": a.order_token(1, {"buy": "wein", "count": 1})})
    assert r.status_code == 202, r.json
    assert r.json["step_status"] == "collecting"
    worker()
    ph = client.get(f"/games/{gid}/phases/current").json
    assert (ph["id"], ph["status"], ph["answered"]) == (1, "collecting", [0])
    r = post(client, host, gid, "resume")
    assert r.status_code == 200 and r.json["phase"]["status"] == "resolving"
    worker()
    assert client.get(f"/games/{gid}/phases/current").json["id"] == 2


def test_pause_refuses_an_action_over_http(client: Any, kontor: Any) -> None:
    host, (a, b) = new_game(client, 2, title="stall")
    gid = host.game
    assert post(client, host, gid, "pause").status_code == 200
    token = b.key.sign({"game": gid, "seat": 1, "iat": int(time.time()), "jti": uuid.uuid4().hex,
                        "action": {"hoard": "wein"}})
    before = footprint(kontor, gid)
    problem(client.post(f"/games/{gid}/seats/1/actions", json={"token": token}), 409, "game_paused")
    assert footprint(kontor, gid) == before
    # Messages are still written while paused (ruling: a pause stops the clock only).
    r = client.post(f"/games/{gid}/messages", json={"to": "all", "text": "Back on Monday?"},
                    headers={**b.bearer(), "Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 201, r.json


def test_pause_keeps_the_last_order_in_the_order_fast_path_script(client: Any, kontor: Any, worker: Any,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """order.lua (the fast path's store script) stores the last order of a paused step
    without flipping it, as submit.lua does."""
    from tests.service.http.test_intake_fast import FAST, Spy, warm

    host, players, ph = warm.__wrapped__(client, kontor, worker)  # type: ignore[attr-defined]
    spy = Spy(monkeypatch, kontor)
    gid, pid, last = host.game, ph["id"], players[2]
    assert post(client, host, gid, "pause").status_code == 200
    client.application.config[FAST] = False  # the first order of seat 2: the full path holds its key
    r = client.put(f"/games/{gid}/phases/{pid}/orders/2", json={"token": last.order_token(pid, default_of(client,
                                                                                                        last))})
    assert r.status_code == 202 and r.json["step_status"] == "collecting", r.json
    client.application.config[FAST] = True
    r = client.put(f"/games/{gid}/phases/{pid}/orders/2", json={"token": last.order_token(pid, default_of(client,
                                                                                                        last))})
    assert r.status_code == 202 and r.json["step_status"] == "collecting" and r.json["replaced"] is True, r.json
    assert spy.stored == 1, spy.counts()  # this one went through order.lua
    worker()
    assert kontor.store.phase(gid)["status"] == "collecting"
    assert post(client, host, gid, "resume").json["phase"]["status"] == "resolving"
    worker()
    assert int(kontor.store.phase(gid)["id"]) == pid + 1


def default_of(client: Any, p: Player) -> dict[str, Any]:
    return dict(client.get(f"/games/{p.game}/phases/current", headers=p.bearer()).json["you"]["default_order"])
