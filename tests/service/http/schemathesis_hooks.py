"""Schemathesis hooks that let generated requests reach Kontor's logic instead of stopping
at 401/404: a real table to play on (a lobby game and a running one, made through the
API), bearer tokens signed with the right seat's or host's Ed25519 key, valid public keys
and signed order tokens in positive cases, and genuine unsubscribe tokens.

Used by `tests/service/http/test_schemathesis.py` (in process, through WSGI) and by the
CLI against a running stack:

    KONTOR_SECRET=st-secret KONTOR_INBOUND_SECRET=st-inbound KONTOR_PORT=8731 \
        .venv/bin/python -m service.dev.devstack &
    KONTOR_SECRET=st-secret KONTOR_INBOUND_SECRET=st-inbound \
    SCHEMATHESIS_HOOKS=tests.service.http.schemathesis_hooks \
        .venv/bin/st run openapi/openapi.json --url http://127.0.0.1:8731 --checks all \
        --exclude-operation-id streamGame

Only values whose validity a JSON Schema cannot state (a key that is a point of the
curve, a signature, a game that exists, a title's own seat range) are supplied here; a
case schemathesis made negative keeps what it drew there.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import requests
import schemathesis
from schemathesis import GenerationMode

from service.client.http import bearer_token, order_token
from service.protocol.crypto import SigningKey

#: Per-title seat ranges (as /catalog says): positive cases get a seat count in range.
SEAT_RANGE = {"haendler": (2, 4), "aufachse": (2, 6), "fantasy": (3, 8)}
#: Operations that act on a game still in its lobby; and `updateSeat`, which gives seats
#: new keys or bots: on the running game, the keys the other cases sign with would go stale.
LOBBY_OPS = {"joinGame", "updateGame", "updateSeat"}
#: Operations whose bearer must be the host's.
HOST_OPS = {"updateGame", "updateSeat", "pause", "resume", "extend", "rollback", "rollbackWithdraw", "rematch",
            "updateAbsencePolicy"}


@dataclass
class Game:
    gid: str
    host: SigningKey
    seats: list[SigningKey] = field(default_factory=list)


class Table:
    """The games the cases play on, made once per server through its API."""

    def __init__(self, operation: Any) -> None:
        self.app = operation.app
        self.base = (operation.base_url or operation.schema.get_base_url()).rstrip("/")
        self.lobby = self._game(2, start=False, join=1)
        self.running = self._game(2, start=True, join=2)

    def send(self, method: str, path: str, body: Any = None,
             headers: dict[str, str] | None = None) -> tuple[int, Any, dict[str, str]]:
        if self.app is not None:
            r = self.app.test_client().open(path, method=method, json=body, headers=headers or {})
            return r.status_code, r.get_json(silent=True), dict(r.headers)
        resp = requests.request(method, self.base + path, json=body, headers=headers or {}, timeout=15)
        try:
            return resp.status_code, resp.json(), dict(resp.headers)
        except ValueError:
            return resp.status_code, None, dict(resp.headers)

    def _game(self, seats: int, *, start: bool, join: int) -> Game:
        host = SigningKey.generate()
        status, body, _ = self.send("POST", "/games", {"title": "haendler", "seats": seats, "host_key": host.public,
                                                    "seed": 7}, {"Idempotency-Key": uuid.uuid4().hex})
        assert status == 201, body
        game = Game(body["id"], host)
        for n in range(join):
            key = SigningKey.generate()
            status, body, _ = self.send("POST", f"/games/{game.gid}/seats", {"name": f"P{n}", "public_key": key.public},
                                     {"Idempotency-Key": uuid.uuid4().hex})
            assert status == 201, body
            game.seats.append(key)
        if start:
            status, body, _ = self.send("PATCH", f"/games/{game.gid}", {"status": "running"},
                                     {"Authorization": f"Bearer {bearer_token(host, game.gid)}"})
            assert status == 200, body
        return game

    def game(self, gid: Any) -> Game | None:
        return next((g for g in (self.lobby, self.running) if g.gid == gid), None)

    def current(self, game: Game, seat: int) -> dict[str, Any]:
        key = game.seats[seat] if seat < len(game.seats) else game.host
        status, body, _ = self.send("GET", f"/games/{game.gid}/phases/current",
                                 headers={"Authorization": f"Bearer {bearer_token(key, game.gid)}"})
        return dict(body) if status == 200 else {}


_TABLES: dict[str, Table] = {}
_LOCK = threading.Lock()


def table(operation: Any) -> Table:
    """The table of the server the operation is sent to (one per app or base URL)."""
    key = str(id(operation.app)) if operation.app is not None else (operation.base_url or
                                                                   operation.schema.get_base_url())
    with _LOCK:
        if key not in _TABLES:
            _TABLES[key] = Table(operation)
        return _TABLES[key]


def _op_id(ctx: Any) -> str:
    return str(ctx.operation.definition.raw.get("operationId", ""))


def _positive(case: Any, location: str) -> bool:
    from schemathesis.core.parameters import ParameterLocation

    meta = case.meta
    return meta is None or not meta.is_negative_at(ParameterLocation(location))


@schemathesis.hook
def map_path_parameters(ctx: Any, path_parameters: dict[str, Any]) -> dict[str, Any]:
    """A game that exists (the lobby for joining and starting, else the running one), and
    a seat and phase of it; values drawn as the wrong type are left alone."""
    if not path_parameters or "gid" not in path_parameters or not isinstance(path_parameters["gid"], str):
        return path_parameters
    t = table(ctx.operation)
    game = t.lobby if _op_id(ctx) in LOBBY_OPS else t.running
    out = {**path_parameters, "gid": game.gid}
    seat = out.get("seat")
    if isinstance(seat, int) and not isinstance(seat, bool) and seat >= 0:
        out["seat"] = seat % (len(game.seats) + 1)  # one in three is a seat that does not exist
    phase = out.get("phase")
    if isinstance(phase, int) and not isinstance(phase, bool) and phase >= 0 and phase % 4:
        current = t.current(game, 0).get("id")
        if current is not None:
            out["phase"] = current
    return out


@schemathesis.auth(refresh_interval=None)
class KontorBearer:
    """`Authorization: Bearer <jws>` signed for the path's game: the host's key where the
    host must call, else the path's seat's key (seat 0's without a seat)."""

    def get(self, case: Any, ctx: Any) -> str:
        t = table(case.operation)
        gid = (case.path_parameters or {}).get("gid")
        game = t.game(gid)
        if game is None:
            return bearer_token(SigningKey.generate(), str(gid))
        seat = (case.path_parameters or {}).get("seat")
        if case.operation.definition.raw.get("operationId") in HOST_OPS or not game.seats:
            key = game.host
        elif isinstance(seat, int) and 0 <= seat < len(game.seats):
            key = game.seats[seat]
        else:
            key = game.seats[0]
        return bearer_token(key, game.gid)

    def set(self, case: Any, data: str, ctx: Any) -> None:
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {data}"}


@schemathesis.hook
def before_add_examples(ctx: Any, examples: list[Any]) -> None:
    """The Examples phase applies no `map_*` hook (schemathesis 4.32): apply them here,
    signing the bearer again for the game the path now names."""
    for n, case in enumerate(examples):
        if case.path_parameters:
            case.path_parameters = map_path_parameters(ctx, case.path_parameters)
            if "Authorization" in (case.headers or {}):
                KontorBearer().set(case, KontorBearer().get(case, ctx), ctx)
        examples[n] = map_case(ctx, case)


@schemathesis.hook
def before_call(ctx: Any, case: Any, kwargs: dict[str, Any]) -> None:
    """Stateful steps merge values from links (`{"bot": null}` from a seat's answer) after
    `map_case`: the seat rule is applied again on the case as it is sent."""
    body = case.body
    if (_op_id(ctx) == "updateSeat" and isinstance(body, dict) and "bot" in body and body["bot"] is None
            and "public_key" not in body and _positive(case, "body")):
        case.body = {**body, "public_key": SigningKey.generate().public}


def _no_integral_floats(value: Any) -> Any:
    """`450.0` as `450`. JSON Schema counts `450.0` an integer, but Kontor refuses a
    float where it takes an integer, on purpose (`tests/service/http/test_defects.py`),
    and a JSON Schema cannot tell `450.0` from `450`: the document cannot say so."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _no_integral_floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_integral_floats(v) for v in value]
    return value


def _valid_key(value: Any) -> Any:
    return SigningKey.generate().public if isinstance(value, str) else value


@schemathesis.hook
def map_case(ctx: Any, case: Any) -> Any:
    """Values a schema cannot describe, in positive cases only."""
    op = _op_id(ctx)
    body = case.body
    if isinstance(body, dict) and _positive(case, "body"):
        body = _no_integral_floats(body)
        for name in ("host_key", "public_key"):
            if name in body:
                body[name] = _valid_key(body[name])
        if op == "createGame":
            title = body.get("title")
            if title not in SEAT_RANGE and isinstance(title, str):
                body["title"] = sorted(SEAT_RANGE)[len(title) % len(SEAT_RANGE)]
            low, high = SEAT_RANGE.get(body.get("title"), (2, 4))
            if isinstance(body.get("seats"), int):
                body["seats"] = min(max(body["seats"], low), high)
            body.pop("options", None)
        if op == "submitOrder" and _positive(case, "path"):
            body["token"] = _order_token(ctx.operation, case)
        if op == "setContact":
            body.pop("rotate_secret", None)  # needs a webhook, which the cases do not set
            for name, value in CONTACT.items():
                if isinstance(body.get(name), str):
                    body[name] = value
        if op == "updateSeat" and "bot" in body:
            # A bot kind of the title; a seat that stops being a bot needs a player key.
            if body["bot"] is None:
                body.setdefault("public_key", SigningKey.generate().public)
            elif isinstance(body["bot"], str):
                body["bot"] = "greedy"
        if op == "joinGame" and isinstance(body.get("seat"), int) and not isinstance(body["seat"], bool):
            # A seat the game does not have is 404 `no_such_seat` (tests/service/http/test_problems.py),
            # which schemathesis' `ensure_resource_availability` reads as "the game is gone":
            # joins name a seat of a 2-seat table. (A 422 would suit a body field better.)
            body["seat"] = body["seat"] % 2
        if op == "postMessage" and isinstance(body.get("to"), list):
            body["to"] = [1] if body["to"] else []  # the other seat of the running game (seat 0 sends)
        if op == "receiveInboundMail" and isinstance(body.get("envelope"), str):
            body["envelope"] = json.dumps({"to": ["orders@localhost"], "from": "ada@example.org"})
        case.body = body
    if case.headers and "Idempotency-Key" in case.headers and _positive(case, "header"):
        # A client's key is unique per creation; a drawn key may repeat with another body.
        case.headers = {**case.headers, "Idempotency-Key": uuid.uuid4().hex}
    if op in HOST_OPS and case.headers and "If-Match" in case.headers and _positive(case, "header"):
        case.headers = {**case.headers, "If-Match": _etag(ctx.operation, case)}
    if op == "receiveInboundMail" and os.environ.get("KONTOR_INBOUND_SECRET"):
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {os.environ['KONTOR_INBOUND_SECRET']}"}
    if "token" in (case.path_parameters or {}) and os.environ.get("KONTOR_SECRET") and _positive(case, "path"):
        case.path_parameters = {**case.path_parameters, "token": unsubscribe_token("ada@example.org")}
    return case


#: Contact settings the service takes (a schema cannot say which addresses exist).
CONTACT = {"email": "ada@example.org", "webhook_url": None, "timezone": "Europe/Berlin"}


def _etag(operation: Any, case: Any) -> str:
    """The resource's current ETag, so that a valid `If-Match` matches."""
    params = case.path_parameters or {}
    path = f"/games/{params.get('gid')}" + (f"/seats/{params['seat']}" if "seat" in params else "")
    return table(operation).send("GET", path)[2].get("ETag", '"none"')


def _order_token(operation: Any, case: Any) -> str:
    t = table(operation)
    params = case.path_parameters or {}
    game = t.game(params.get("gid")) or t.running
    seat = params.get("seat") if isinstance(params.get("seat"), int) else 0
    phase = params.get("phase") if isinstance(params.get("phase"), int) else 0
    key = game.seats[seat] if 0 <= seat < len(game.seats) else game.host
    you = t.current(game, seat).get("you") or {}
    return order_token(key, game.gid, phase, seat, you.get("default_order") or {},
                       now=time.time())


def unsubscribe_token(address: str) -> str:
    """A genuine unsubscribe token under `KONTOR_SECRET` (as the server makes it)."""
    addr = address.strip().lower()
    digest = hmac.new(os.environ["KONTOR_SECRET"].encode(), f"unsub|{addr}".encode(), hashlib.sha256).digest()
    signature = base64.b32encode(digest).decode().lower().rstrip("=")[:24]
    return base64.urlsafe_b64encode(addr.encode()).decode().rstrip("=") + "." + signature


__all__ = ["GenerationMode", "KontorBearer", "Table", "map_case", "map_path_parameters", "table"]
