"""The HTTP defects of the attack and fault probe (issue 12, item 9): each answer is what
the OpenAPI document says, a problem+json with a stable code, and changes nothing."""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from service import create_app
from service.config import Settings
from service.core.kontor import Kontor
from service.protocol.jsonlimits import MAX_DEPTH, NotFinite, TooDeep, check_depth, loads
from tests.service.conftest import Player, create_game, footprint, join, new_game, problem

# The tests whose requests reach the store run also with the store on a Valkey Cluster and
# the queue on a Valkey of its own (issue 24, marker `cluster`); the refusals of a body, a
# media type or a path are the HTTP layer's, made before the store is asked.


def idem() -> dict[str, str]:
    return {"Idempotency-Key": uuid.uuid4().hex}


def game_body(**over: Any) -> dict[str, Any]:
    return {"title": "haendler", "seats": 2, "host_key": Player.new().key.public, **over}


def lobby(client: Any) -> tuple[Player, str]:
    host = Player.new()
    return host, create_game(client, host, 3)["id"]


# -- 405 carries Allow -------------------------------------------------------------------
def test_405_lists_the_allowed_methods(client: Any) -> None:
    r = client.delete("/games")
    problem(r, 405, "method_not_allowed")
    assert set(r.headers["Allow"].split(", ")) >= {"GET", "POST"}
    r = client.post("/catalog", json={})
    problem(r, 405, "method_not_allowed")
    assert "GET" in r.headers["Allow"] and "POST" not in r.headers["Allow"]


# -- media types and bodies --------------------------------------------------------------
def test_wrong_content_type_is_415(client: Any, kontor: Kontor) -> None:
    before = footprint(kontor)
    body = json.dumps(game_body())
    for ctype in ("text/plain", "application/x-www-form-urlencoded", "application/xml"):
        problem(client.post("/games", data=body, content_type=ctype, headers=idem()), 415, "unsupported_media_type")
    problem(client.post("/games", data=body, headers=idem()), 415, "unsupported_media_type")  # none at all
    assert {k: v for k, v in footprint(kontor).items() if ":idem:" not in k} == before
    # application/json with parameters, and +json, are JSON.
    r = client.post("/games", data=body, content_type="application/json; charset=utf-8", headers=idem())
    assert r.status_code == 201, r.json


@pytest.mark.cluster
def test_put_contact_without_a_body_is_refused(client: Any, kontor: Kontor) -> None:
    host, gid = lobby(client)
    p = Player.new()
    join(client, gid, p, "A", 0)
    client.put(f"/games/{gid}/seats/0/contact", json={"timezone": "Europe/Berlin"}, headers=p.bearer())
    before = footprint(kontor, gid)
    problem(client.put(f"/games/{gid}/seats/0/contact", headers=p.bearer()), 422, "invalid_request")
    problem(client.put(f"/games/{gid}/seats/0/contact", data=b"", content_type="application/json",
                       headers=p.bearer()), 422, "invalid_request")
    problem(client.put(f"/games/{gid}/seats/0/contact", data=b"email=a@example.org",
                       content_type="application/x-www-form-urlencoded", headers=p.bearer()), 415,
            "unsupported_media_type")
    assert footprint(kontor, gid) == before


@pytest.mark.parametrize("name,body", [
    ("seats as a string", game_body(seats="2")),
    ("seats as a float", game_body(seats=2.0)),
    ("seats as a fraction", game_body(seats=2.5)),
    ("seats as a boolean", game_body(seats=True)),
    ("a deadline as a string", game_body(deadlines={"sealed_seconds": "600"})),
    ("a deadline as a fraction", game_body(deadlines={"sealed_seconds": 600.5})),
    ("seed as a float", game_body(seed=7.0)),
])
def test_lossy_coercions_are_refused_at_create(client: Any, kontor: Kontor, name: str, body: dict[str, Any]) -> None:
    before = footprint(kontor)
    r = problem(client.post("/games", json=body, headers=idem()), 422, "invalid_request")
    assert r["errors"], r
    assert {k: v for k, v in footprint(kontor).items() if ":idem:" not in k} == before


def test_lossy_coercions_are_refused_elsewhere(client: Any, kontor: Kontor) -> None:
    host, gid = lobby(client)
    p = Player.new()
    join(client, gid, p, "A", 0)
    before = footprint(kontor, gid)
    for seat in (True, "1", 1.0, "１"):
        problem(client.post(f"/games/{gid}/seats", json={"name": "B", "public_key": Player.new().key.public,
                                                         "seat": seat}, headers=idem()), 422, "invalid_request")
    for field, value in (("reminder_lead", "3600"), ("reminder_lead", 3600.5), ("reminder_lead", False),
                         ("rotate_secret", "yes"), ("rotate_secret", 1)):
        problem(client.put(f"/games/{gid}/seats/0/contact", json={field: value}, headers=p.bearer()), 422,
                "invalid_request")
    for query in ("limit=１０", "limit=10.5", "after=1e2", "after=%2B1"):
        problem(client.get(f"/games/{gid}/events?{query}"), 422, "invalid_request")
    problem(client.get("/games?before=nan"), 422, "invalid_request")
    problem(client.get("/games?before=１"), 422, "invalid_request")
    assert footprint(kontor, gid) == before
    assert client.get(f"/games/{gid}/events?after=0&limit=10").status_code == 200  # plain digits pass
    assert client.get("/games?before=1.5e12&limit=5").status_code == 200


@pytest.mark.parametrize("path", ["/games/{gid}/seats/１", "/games/{gid}/seats/٣", "/games/{gid}/seats/0１",
                                  "/games/{gid}/phases/１/orders/0", "/games/{gid}/seats/１/contact"])
def test_integer_path_parameters_take_ascii_digits_only(client: Any, path: str) -> None:
    host, gid = lobby(client)
    problem(client.get(path.format(gid=gid)), 404, "not_found")
    assert client.get(f"/games/{gid}/seats/1").status_code == 200


# -- If-Match ----------------------------------------------------------------------------
@pytest.mark.cluster
def test_if_match_on_patch_game(client: Any, kontor: Kontor) -> None:
    host, gid = lobby(client)
    for seat in range(3):
        join(client, gid, Player.new(), f"P{seat}", seat)
    etag = client.get(f"/games/{gid}").headers["ETag"]
    before = footprint(kontor, gid)
    r = client.patch(f"/games/{gid}", json={"status": "running"}, headers={**host.bearer(), "If-Match": '"stale"'})
    problem(r, 412, "precondition_failed")
    assert footprint(kontor, gid) == before
    r = client.patch(f"/games/{gid}", json={"status": "running"}, headers={**host.bearer(), "If-Match": etag})
    assert r.status_code == 200 and r.json["status"] == "running"


@pytest.mark.cluster
def test_if_match_on_patch_seat(client: Any, kontor: Kontor) -> None:
    host, gid = lobby(client)
    got = client.get(f"/games/{gid}/seats/2")
    etag = got.headers["ETag"]
    assert client.get(f"/games/{gid}/seats/2", headers={"If-None-Match": etag}).status_code == 304
    r = client.patch(f"/games/{gid}/seats/2", json={"bot": "greedy"}, headers=host.bearer())  # it changes
    assert r.status_code == 200, r.json
    before = footprint(kontor, gid)
    problem(client.patch(f"/games/{gid}/seats/2", json={"name": "Stale"}, headers={**host.bearer(), "If-Match": etag}),
            412, "precondition_failed")
    assert footprint(kontor, gid) == before
    for form in ("{}", "*", '"x", {}'):  # the current ETag, any, one of a list
        header = form.format(client.get(f"/games/{gid}/seats/2").headers["ETag"])
        r = client.patch(f"/games/{gid}/seats/2", json={"name": "Again"}, headers={**host.bearer(), "If-Match": header})
        assert r.status_code == 200, (header, r.json)
    # Without If-Match the write goes ahead, as before.
    assert client.patch(f"/games/{gid}/seats/2", json={"name": "Last"}, headers=host.bearer()).status_code == 200


# -- JSON nesting and non-finite numbers ---------------------------------------------------
JSON_ROUTES = [
    ("post", "/games"), ("patch", "/games/0123456789"), ("post", "/games/0123456789/seats"),
    ("patch", "/games/0123456789/seats/0"), ("put", "/games/0123456789/phases/1/orders/0"),
    ("put", "/games/0123456789/seats/0/contact"), ("post", "/games/0123456789/messages"),
    ("put", "/games/0123456789/phases/1/orders/0/by-link"),
    ("post", "/games/0123456789/seats/0/choices"), ("post", "/games/0123456789/seats/0/actions"),
    # issue 25: the host's and the seats' operations on a running game
    ("post", "/games/0123456789/extend"), ("post", "/games/0123456789/rollback"),
    ("post", "/games/0123456789/rollback/consent"), ("post", "/games/0123456789/rematch"),
    ("put", "/games/0123456789/seats/0/absences"), ("patch", "/games/0123456789/absence-policy"),
]


def test_json_routes_cover_every_json_body(app: Any) -> None:
    spec = app.test_client().get("/openapi.json").json
    with_json = {(m, p) for p, item in spec["paths"].items() for m, op in item.items()
                 if m != "parameters" and "application/json" in op.get("requestBody", {}).get("content", {})}
    listed = {(m, "/" + "/".join("{gid}" if part == "0123456789" else part for part in p.split("/")[1:]))
              for m, p in JSON_ROUTES}
    listed = {(m, p.replace("/seats/0", "/seats/{seat}").replace("/phases/1/orders/0", "/phases/{phase}/orders/{seat}"))
              for m, p in listed}
    assert listed == with_json


@pytest.mark.parametrize("method,path", JSON_ROUTES)
@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 10_000])
def test_deep_json_is_refused_on_every_json_route(client: Any, kontor: Kontor, method: str, path: str,
                                                   depth: int) -> None:
    before = footprint(kontor)
    body = "[" * depth + "]" * depth  # 10,000 deep still fits the 64 KB body limit
    r = getattr(client, method)(path, data=body, content_type="application/json",
                                headers={**idem(), **Player.new().bearer(game="0123456789")})
    problem(r, 400, "too_deep")
    assert footprint(kontor) == before


def test_json_at_the_depth_limit_is_parsed(client: Any) -> None:
    nested: Any = 1
    for _ in range(MAX_DEPTH - 2):  # inside the body's object and `options`
        nested = [nested]
    problem(client.post("/games", json=game_body(options={"x": nested}), headers=idem()), 422, "bad_options")


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_are_refused(client: Any, kontor: Kontor, literal: str) -> None:
    before = footprint(kontor)
    raw = json.dumps(game_body())[:-1] + f', "options": {{"x": {literal}}}}}'
    assert "JSON" in problem(client.post("/games", data=raw, content_type="application/json", headers=idem()),
                             400, "bad_request")["detail"]
    problem(client.put("/games/0123456789/phases/1/orders/0", data=f'{{"token": {literal}}}',
                       content_type="application/json"), 400, "bad_request")
    assert {k: v for k, v in footprint(kontor).items() if ":idem:" not in k} == before


def test_jsonlimits_helpers() -> None:
    check_depth("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    check_depth('["' + "[" * 1000 + '"]')  # brackets inside strings do not nest
    check_depth(r'["\"' + "[" * 1000 + '"]')
    with pytest.raises(TooDeep):
        check_depth("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    with pytest.raises(TooDeep):
        loads(b"[" * 100_000)
    for text in ("NaN", '{"exp": Infinity}', "[-Infinity]", "1e400"):
        with pytest.raises(NotFinite):
            loads(text)
    with pytest.raises(ValueError):
        loads("{")
    assert loads('{"a": [1, 2.5, "x"]}') == {"a": [1, 2.5, "x"]}


# -- the store down ----------------------------------------------------------------------
def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def frozen_store() -> Iterator[int]:
    """A port that accepts connections and never answers (a frozen store)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    stop.set()
    thread.join(timeout=5)
    for conn in held:
        conn.close()
    server.close()


def down_app(port: int, timeout: float | None = None) -> Any:
    # The clients' timeout bounds the wait on a frozen store (the URL's query sets it).
    query = f"?socket_timeout={timeout}&socket_connect_timeout={timeout}" if timeout else ""
    settings = Settings(redis_url=f"redis://127.0.0.1:{port}/0{query}", inbound_secret="s3cret")
    app = create_app(settings, Kontor(settings))
    app.config["TESTING"] = True
    return app


def store_requests() -> list[tuple[str, str, dict[str, Any]]]:
    p = Player.new()
    p.game, p.seat = "0123456789", 0
    bearer = p.bearer()
    return [
        ("get", "/games", {}),
        ("post", "/games", {"json": game_body(), "headers": idem()}),
        ("get", "/games/0123456789", {}),
        ("patch", "/games/0123456789", {"json": {"status": "running"}, "headers": bearer}),
        ("get", "/games/0123456789/history", {}),
        ("get", "/games/0123456789/seats", {}),
        ("post", "/games/0123456789/seats", {"json": {"name": "A", "public_key": p.key.public}, "headers": idem()}),
        ("get", "/games/0123456789/seats/0", {}),
        ("patch", "/games/0123456789/seats/0", {"json": {"bot": "greedy"}, "headers": bearer}),
        ("get", "/games/0123456789/phases/current", {}),
        ("put", "/games/0123456789/phases/1/orders/0", {"json": {"token": p.order_token(1, {})}}),
        ("get", "/games/0123456789/phases/1/orders/0", {"headers": bearer}),
        ("put", "/games/0123456789/phases/1/orders/0/by-link", {"json": {"cap": "abc", "order": {}}}),
        ("get", "/games/0123456789/view", {}),
        ("get", "/games/0123456789/picture.svg", {}),
        ("get", "/games/0123456789/events", {}),
        ("get", "/games/0123456789/stream", {"headers": bearer}),
        ("get", "/games/0123456789/messages", {}),
        ("post", "/games/0123456789/messages", {"json": {"text": "hi"}, "headers": {**bearer, **idem()}}),
        ("get", "/games/0123456789/seats/0/contact", {"headers": bearer}),
        ("put", "/games/0123456789/seats/0/contact", {"json": {"timezone": "UTC"}, "headers": bearer}),
        ("get", "/games/0123456789/seats/0/deliveries", {"headers": bearer}),
        ("post", "/games/0123456789/seats/0/choices", {"json": {"picks": []}, "headers": bearer}),
        ("post", "/games/0123456789/seats/0/actions", {"json": {"token": p.key.sign({
            "game": "0123456789", "seat": 0, "iat": int(time.time()), "jti": "defects-action-1", "action": {}})}}),
        ("post", "/games/0123456789/seats/0/deliveries/d1/retry", {"headers": bearer}),
        # issue 25
        ("post", "/games/0123456789/pause", {"headers": bearer}),
        ("post", "/games/0123456789/resume", {"headers": bearer}),
        ("post", "/games/0123456789/extend", {"json": {"seconds": 3600}, "headers": {**bearer, **idem()}}),
        ("get", "/games/0123456789/rollback", {}),
        ("post", "/games/0123456789/rollback", {"json": {"to_phase": 1}, "headers": bearer}),
        ("delete", "/games/0123456789/rollback", {"headers": bearer}),
        ("post", "/games/0123456789/rollback/consent", {"json": {"agree": True}, "headers": bearer}),
        ("post", "/games/0123456789/rematch", {"json": {}, "headers": {**bearer, **idem()}}),
        ("get", "/games/0123456789/seats/0/absences", {}),
        ("put", "/games/0123456789/seats/0/absences", {"json": {"absences": []}, "headers": bearer}),
        ("patch", "/games/0123456789/absence-policy", {"json": {"absence": "bot"}, "headers": bearer}),
        ("get", "/readyz", {}),
        ("get", "/metrics", {}),
        ("get", "/unsubscribe/YUBleGFtcGxlLm9yZw.abc", {}),
        ("post", "/unsubscribe/YUBleGFtcGxlLm9yZw.abc", {}),
        ("post", "/unsubscribe/YUBleGFtcGxlLm9yZw.abc/undo", {}),
        ("post", "/inbound/email", {"data": b"From: a@example.org\r\nTo: orders@localhost\r\n\r\nhi\r\n",
                                    "content_type": "message/rfc822", "headers": {"Authorization": "Bearer s3cret"}}),
    ]


def test_store_requests_cover_every_operation_that_reads_the_store(app: Any) -> None:
    spec = app.test_client().get("/openapi.json").json
    documented = {(m, p) for p, item in spec["paths"].items() for m, op in item.items()
                  if m != "parameters" and "503" in op["responses"]}
    covered = set()
    for method, path, _ in store_requests():
        parts = ["{gid}" if part == "0123456789" else part for part in path.split("/")]
        templ = "/".join(parts).replace("/seats/0", "/seats/{seat}").replace("/phases/1/", "/phases/{phase}/")
        templ = templ.replace("/orders/0", "/orders/{seat}").replace("/deliveries/d1/", "/deliveries/{did}/")
        templ = templ.replace("/YUBleGFtcGxlLm9yZw.abc", "/{token}")
        covered.add((method, templ))
    assert covered == documented


def assert_unavailable(r: Any, where: str) -> None:
    body = problem(r, 503, "store_unavailable")
    assert int(r.headers["Retry-After"]) > 0, where
    assert "127.0.0.1" not in r.get_data(as_text=True), where
    assert body["detail"], where


def test_store_refusing_connections_answers_503_everywhere() -> None:
    port = _closed_port()
    client = down_app(port).test_client()
    for method, path, kwargs in store_requests():
        r = getattr(client, method)(path, **kwargs)
        assert_unavailable(r, f"{method.upper()} {path}")
        assert str(port) not in r.get_data(as_text=True)


def test_frozen_store_answers_503(frozen_store: int) -> None:
    client = down_app(frozen_store, timeout=0.3).test_client()
    for method, path, kwargs in store_requests()[:3] + [("get", "/readyz", {})]:
        assert_unavailable(getattr(client, method)(path, **kwargs), f"{method.upper()} {path}")


def test_store_down_is_logged_without_its_address(caplog: pytest.LogCaptureFixture) -> None:
    client = down_app(_closed_port()).test_client()
    with caplog.at_level("WARNING", logger="kontor"):
        client.get("/games")
    assert "store unavailable" in caplog.text and "127.0.0.1" not in caplog.text


def test_unexpected_errors_stay_500(app: Any, client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    kontor: Kontor = app.extensions["kontor"]
    monkeypatch.setattr(kontor, "listing", lambda *a: 1 / 0)
    app.config["PROPAGATE_EXCEPTIONS"] = False
    problem(client.get("/games"), 500, "internal_error")


@pytest.mark.cluster
def test_new_game_still_plays(client: Any) -> None:
    host, players = new_game(client, 2)
    assert client.get(f"/games/{host.game}/phases/current").status_code == 200
