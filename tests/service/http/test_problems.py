"""Bad input of every kind: a 4xx `application/problem+json` answer with a stable
`code`, and nothing changed in the store."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from service.core.errors import CODES
from service.core.kontor import Kontor
from service.http.api import HTTP_PROBLEMS
from tests.service.conftest import Player, create_game, default_step, footprint, join, new_game, play_to, problem

# The refusals made by the store's scripts (the lobby, orders, a finished game) run also with
# the store on a Valkey Cluster and the queue on a Valkey of its own (issue 24, marker
# `cluster`); those of the HTTP layer (bodies, routes, query parameters) are made before the
# store is asked.


def idem() -> dict[str, str]:
    return {"Idempotency-Key": uuid.uuid4().hex}


def game_body(**over: Any) -> dict[str, Any]:
    return {"title": "haendler", "seats": 2, "host_key": Player.new().key.public, **over}


# -- creating a game ----------------------------------------------------------------------
CREATE_CASES: dict[str, tuple[dict[str, Any], int, str]] = {
    "seats not a number": (game_body(seats="x"), 422, "invalid_request"),
    "seats missing": ({k: v for k, v in game_body().items() if k != "seats"}, 422, "invalid_request"),
    "unknown field": (game_body(colour="red"), 422, "invalid_request"),
    "unknown deadline field": (game_body(deadlines={"sealed_secs": 60}), 422, "invalid_request"),
    "seed a list": (game_body(seed=[1, 2]), 422, "invalid_request"),
    "seed a boolean": (game_body(seed=True), 422, "invalid_request"),
    "name too long": (game_body(name="n" * 81), 422, "invalid_request"),
    "options not an object": (game_body(options=[1]), 422, "invalid_request"),
    "on_expiry unknown": (game_body(deadlines={"on_expiry": "never"}), 422, "invalid_request"),
    "unknown title": (game_body(title="monopoly"), 422, "bad_options"),
    "unknown option": (game_body(options={"nope": 1}), 422, "bad_options"),
    "bad option value": (game_body(options={"abilities": "lottery"}), 422, "bad_options"),
    "too many seats": (game_body(seats=9), 422, "bad_options"),
    "too few seats": (game_body(seats=1), 422, "bad_options"),
    "zero seats": (game_body(seats=0), 422, "bad_options"),
    "step too short": (game_body(deadlines={"sealed_seconds": 0}), 422, "bad_deadline_policy"),
    "step too long": (game_body(deadlines={"sequential_seconds": 10**9}), 422, "bad_deadline_policy"),
    "bad host key": (game_body(host_key="not-a-key"), 422, "bad_public_key"),
    "host key of 43 bad characters": (game_body(host_key="!" * 43), 422, "bad_public_key"),
}


@pytest.mark.parametrize("case", list(CREATE_CASES))
def test_bad_game_is_refused_and_nothing_created(client: Any, kontor: Kontor, case: str) -> None:
    body, status, code = CREATE_CASES[case]
    before = footprint(kontor)
    r = client.post("/games", json=body, headers=idem())
    problem(r, status, code)
    # Only the Idempotency-Key record of the refusal may be new.
    after = {k: v for k, v in footprint(kontor).items() if ":idem:" not in k}
    assert after == before
    if code == "invalid_request":
        assert r.json["errors"], r.json


def test_malformed_json_body(client: Any, kontor: Kontor) -> None:
    before = footprint(kontor)
    r = client.post("/games", data=b'{"title": "haendler",', content_type="application/json", headers=idem())
    assert "JSON" in problem(r, 400, "bad_request")["detail"]
    for body in (b"[1, 2]", b"null", b'"text"'):
        r = client.post("/games", data=body, content_type="application/json", headers=idem())
        problem(r, 422, "invalid_request")
    assert footprint(kontor) == before


def test_body_too_large(client: Any, kontor: Kontor) -> None:
    before = footprint(kontor)
    problem(client.post("/games", json=game_body(name="n" * 70_000), headers=idem()), 413, "payload_too_large")
    assert footprint(kontor) == before


def test_unknown_route_and_wrong_method(client: Any) -> None:
    problem(client.get("/nowhere"), 404, "not_found")
    problem(client.get("/games/abc/nowhere"), 404, "not_found")
    problem(client.delete("/games"), 405, "method_not_allowed")
    problem(client.post("/catalog", json={}), 405, "method_not_allowed")


BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"


@pytest.mark.parametrize("path", ["/play/", "/nonexistent-page", "/play/x/y/z/w"])
def test_a_browser_gets_the_error_page_for_an_unknown_address(client: Any, path: str) -> None:
    r = client.get(path, headers={"Accept": BROWSER})
    assert r.status_code == 404 and r.mimetype == "text/html", (r.status_code, r.mimetype)
    page = r.get_data(as_text=True)
    assert "<h1>No such page</h1>" in page and "<p>There is no page at this address.</p>" in page
    assert '<a href="/">Back to the games</a>' in page and "not_found" not in page
    assert "script-src 'self'" in r.headers["Content-Security-Policy"]
    for accept in ("application/json", "application/problem+json", "*/*", None):
        r = client.get(path, headers={"Accept": accept} if accept else {})
        if path.startswith("/play/"):  # the pages' addresses are not the API: a page for every client
            assert r.status_code == 404 and r.mimetype == "text/html", (path, accept, r.mimetype)
        else:
            problem(r, 404, "not_found")


def test_api_addresses_keep_problem_json_even_for_a_browser(client: Any) -> None:
    problem(client.get("/games/abc/nowhere", headers={"Accept": BROWSER}), 404, "not_found")
    problem(client.delete("/games", headers={"Accept": BROWSER}), 405, "method_not_allowed")
    r = client.post("/mine", headers={"Accept": BROWSER})  # a page's address, the wrong method
    assert r.status_code == 405 and r.mimetype == "text/html" and "<h1>Not allowed here</h1>" in r.get_data(
        as_text=True) and "GET" in r.headers["Allow"]


@pytest.mark.parametrize("method,path", [
    ("get", "/games/0123456789"), ("get", "/games/0123456789/seats"), ("get", "/games/0123456789/seats/0"),
    ("get", "/games/0123456789/view"), ("get", "/games/0123456789/phases/current"),
    ("get", "/games/0123456789/events"), ("get", "/games/0123456789/history"),
])
def test_unknown_game(client: Any, method: str, path: str) -> None:
    problem(getattr(client, method)(path), 404, "game_not_found")


@pytest.mark.cluster
def test_unknown_game_for_writes(client: Any, kontor: Kontor) -> None:
    p = Player.new()
    before = footprint(kontor)
    problem(client.post("/games/0123456789/seats", json={"name": "A", "public_key": p.key.public}, headers=idem()),
            404, "game_not_found")
    p.game, p.seat = "0123456789", 0
    problem(client.put("/games/0123456789/phases/1/orders/0", json={"token": p.order_token(1, {})}), 404,
            "game_not_found")
    problem(client.patch("/games/0123456789", json={"status": "running"}, headers=p.bearer()), 404, "game_not_found")
    assert {k: v for k, v in footprint(kontor).items() if ":idem:" not in k} == before


def test_bad_query_parameters(client: Any) -> None:
    host = Player.new()
    gid = create_game(client, host, 2)["id"]
    problem(client.get(f"/games/{gid}/events?limit=0"), 422, "invalid_request")
    problem(client.get(f"/games/{gid}/events?after=-1"), 422, "invalid_request")
    problem(client.get(f"/games/{gid}/events?after=x"), 422, "invalid_request")
    problem(client.get("/games?status=lost"), 422, "invalid_request")


# -- the lobby ----------------------------------------------------------------------------
@pytest.mark.cluster
def test_lobby_refusals_change_nothing(client: Any, kontor: Kontor) -> None:
    host = Player.new()
    gid = create_game(client, host, 3)["id"]
    a = Player.new()
    join(client, gid, a, "A", 0)
    before = footprint(kontor, gid)
    cases = [
        (client.post(f"/games/{gid}/seats", json={"name": "B", "public_key": "short"}, headers=idem()),
         422, "bad_public_key"),
        (client.post(f"/games/{gid}/seats", json={"name": "B"}, headers=idem()), 422, "invalid_request"),
        (client.post(f"/games/{gid}/seats", json={"name": "", "public_key": Player.new().key.public},
                     headers=idem()), 422, "invalid_request"),
        (client.post(f"/games/{gid}/seats", json={"name": "B", "public_key": Player.new().key.public, "seat": 0},
                     headers=idem()), 409, "seat_taken"),
        (client.post(f"/games/{gid}/seats", json={"name": "B", "public_key": Player.new().key.public, "seat": 7},
                     headers=idem()), 404, "no_such_seat"),
        (client.post(f"/games/{gid}/seats", json={"name": "A2", "public_key": a.key.public}, headers=idem()),
         409, "key_in_use"),
        (client.post(f"/games/{gid}/seats", json={"name": "H", "public_key": host.key.public}, headers=idem()),
         409, "key_in_use"),
        (client.patch(f"/games/{gid}", json={"status": "running"}, headers=host.bearer()), 409, "seats_empty"),
        (client.patch(f"/games/{gid}", json={"status": "finished"}, headers=host.bearer()), 422, "invalid_request"),
        (client.patch(f"/games/{gid}/seats/1", json={"bot": "genius"}, headers=host.bearer()), 422, "unknown_bot"),
        (client.patch(f"/games/{gid}/seats/9", json={"bot": "greedy"}, headers=host.bearer()), 404, "no_such_seat"),
        (client.patch(f"/games/{gid}/seats/1", json={"bot": None}, headers=host.bearer()), 422, "invalid_request"),
        (client.patch(f"/games/{gid}/seats/1", json={"public_key": "x"}, headers=host.bearer()),
         422, "bad_public_key"),
        (client.get(f"/games/{gid}/seats/3"), 404, "no_such_seat"),
        (client.get(f"/games/{gid}/phases/current"), 409, "game_not_started"),
        (client.get(f"/games/{gid}/view"), 409, "game_not_started"),
        (client.get(f"/games/{gid}/history"), 403, "forbidden"),
    ]
    for response, status, code in cases:
        problem(response, status, code)
    body = problem(client.patch(f"/games/{gid}", json={"status": "running"}, headers=host.bearer()), 409,
                   "seats_empty")
    assert body["seats"] == [1, 2]
    assert {k: v for k, v in footprint(kontor, gid).items()} == before


@pytest.mark.cluster
def test_join_or_start_a_started_game(client: Any, kontor: Kontor) -> None:
    host, players = new_game(client, 2)
    gid = host.game
    before = footprint(kontor, gid)
    problem(client.post(f"/games/{gid}/seats", json={"name": "Late", "public_key": Player.new().key.public},
                        headers=idem()), 409, "game_started")
    problem(client.patch(f"/games/{gid}", json={"status": "running"}, headers=host.bearer()), 409, "game_started")
    assert footprint(kontor, gid) == before


# -- orders -------------------------------------------------------------------------------
def put(client: Any, p: Player, phase: int, order: Any, seat: int | None = None) -> Any:
    seat = p.seat if seat is None else seat
    return client.put(f"/games/{p.game}/phases/{phase}/orders/{seat}",
                      json={"token": p.order_token(phase, order, seat=seat)})


@pytest.mark.cluster
def test_orders_the_engine_refuses(client: Any, kontor: Kontor) -> None:
    host, players = new_game(client, 2)
    gid = host.game
    ph = client.get(f"/games/{gid}/phases/current").json
    assert ph["kind"] == "buy" and len(ph["requested"]) == 1
    p = players[ph["requested"][0]]
    before = footprint(kontor, gid)
    cases = [
        ({"bogus": 1}, "malformed_order"),
        ({"goods": "tuch"}, "malformed_order"),
        ({"goods": [{"good": "tuch"}]}, "malformed_order"),
        ({"goods": [{"good": "gold", "city": "BRU"}]}, "malformed_order"),
        ({"kind": "sales"}, "wrong_kind"),
        ({"goods": [{"good": "tuch", "city": "KOE"}]}, "wrong_city"),
        ({"goods": [{"good": "tuch", "city": "BRU"}] * 4}, "too_many_goods"),
        ([1, 2], "malformed_order"),
        ("buy", "malformed_order"),
    ]
    for order, code in cases:
        body = problem(put(client, p, ph["id"], order), 422, code)
        assert code in CODES
        assert body["detail"]
    assert footprint(kontor, gid) == before


@pytest.mark.cluster
def test_sealed_order_beyond_the_seat_money(client: Any, kontor: Kontor, worker: Any) -> None:
    host, players = new_game(client, 2)
    play_to(kontor, worker, host.game, "cart_bid")
    ph = client.get(f"/games/{host.game}/phases/current").json
    before = footprint(kontor, host.game)
    problem(put(client, players[0], ph["id"], {"bid": 10_000_000}), 422, "not_enough_money")
    problem(put(client, players[0], ph["id"], {"bid": -100}), 422, "bad_amount")
    assert footprint(kontor, host.game) == before


@pytest.mark.cluster
def test_order_for_a_seat_not_requested(client: Any, kontor: Kontor) -> None:
    host, players = new_game(client, 2)
    ph = client.get(f"/games/{host.game}/phases/current").json
    idle = players[1 - ph["requested"][0]]
    before = footprint(kontor, host.game)
    body = problem(put(client, idle, ph["id"], {"goods": []}), 409, "not_requested")
    assert body["phase"]["id"] == ph["id"] and body["phase"]["requested"] == ph["requested"]
    assert footprint(kontor, host.game) == before


@pytest.mark.cluster
def test_order_to_a_lobby_game(client: Any, kontor: Kontor) -> None:
    host = Player.new()
    gid = create_game(client, host, 2)["id"]
    p = Player.new()
    join(client, gid, p, "A", 0)
    before = footprint(kontor, gid)
    problem(put(client, p, 1, {"goods": []}), 409, "game_not_started")
    assert footprint(kontor, gid) == before


@pytest.mark.cluster
def test_orders_and_seat_changes_after_the_game_is_over(client: Any, kontor: Kontor) -> None:
    host, players = new_game(client, 2)
    gid = host.game
    # Resolve in-process (what the worker's job does) so the ~150 steps stay fast.
    for _ in range(1000):
        ph = kontor.store.phase(gid)
        if ph["status"] == "finished":
            break
        default_step(kontor, gid)
        kontor.resolve(gid, int(ph["id"]))
    game = client.get(f"/games/{gid}").json
    assert game["status"] == "finished" and game["result"]
    last = int(kontor.store.phase(gid)["id"])
    before = footprint(kontor, gid)
    for phase in (last, last + 1):
        body = problem(put(client, players[0], phase, {"goods": []}), 409, "game_finished")
        assert body["phase"]["status"] == "finished"
    problem(client.patch(f"/games/{gid}/seats/0", json={"bot": "greedy"}, headers=host.bearer()), 409,
            "game_finished")
    problem(client.patch(f"/games/{gid}", json={"status": "running"}, headers=host.bearer()), 409, "game_started")
    assert footprint(kontor, gid) == before
    assert client.get(f"/games/{gid}/history").status_code == 200


def test_every_code_is_listed(client: Any) -> None:
    listed = client.get("/problems").json
    assert set(listed) == set(CODES) | set(HTTP_PROBLEMS)
    for code, entry in listed.items():
        assert 400 <= entry["status"] < 600 and entry["title"], code
