"""What schemathesis (`--checks all`) found where the OpenAPI document and the server
disagreed, each fixed so that what the document allows is taken and what it forbids is
refused."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from service.config import Settings
from tests.service.conftest import Player, create_game

DOC = json.loads((Path(__file__).resolve().parents[3] / "openapi" / "openapi.json").read_text())


def _header(op: str, name: str) -> dict[str, Any]:
    for path in DOC["paths"].values():
        for method in path.values():
            if isinstance(method, dict) and method.get("operationId") == op:
                return next(p for p in method["parameters"] if p.get("name") == name)
    raise KeyError(op)


@pytest.mark.parametrize("key", ["abc", '"abc"', "5f0c2d7e-8a43", "a b", 'a"b', '"abc', "x" * 255, "x" * 256,
                                 '"' + "x" * 255 + '"', "é"])
def test_idempotency_key_document_states_what_the_server_takes(client: Any, key: str) -> None:
    """The document said only "1 to 257 characters": a key with a space or a quote inside
    was documented as valid and refused with 400."""
    pattern = _header("createGame", "Idempotency-Key")["schema"]["pattern"]
    documented = re.fullmatch(pattern, key) is not None and len(key) <= 257
    body = {"title": "haendler", "seats": 2, "host_key": Player.new().key.public}
    r = client.post("/games", json=body, headers={"Idempotency-Key": key.encode().decode("latin-1")})
    refused = r.status_code == 400 and r.json["code"] == "idempotency_key_invalid"
    assert refused is not documented, (key, r.status_code, r.json)


def test_deadline_bounds_are_documented() -> None:
    """A deadline of 9 s or 9 weeks was documented as valid and refused with 422."""
    policy = DOC["components"]["schemas"]["Policy"]["properties"]
    for name in ("sealed_seconds", "sequential_seconds", "extension_seconds"):
        assert policy[name]["minimum"] == Settings.min_step_seconds
        assert policy[name]["maximum"] == Settings.max_step_seconds
    lead = DOC["components"]["schemas"]["Contact"]["properties"]["reminder_lead"]
    assert (lead["minimum"], lead["maximum"]) == (1, Settings.max_step_seconds)


def test_reminder_lead_bounds_hold(client: Any) -> None:
    host = Player.new()
    gid = create_game(client, host, 2)["id"]
    p = Player.new()
    r = client.post(f"/games/{gid}/seats", json={"name": "A", "public_key": p.key.public},
                    headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 201
    p.game, p.seat = gid, 0
    for lead, status in ((0, 422), (1, 200), (Settings.max_step_seconds, 200), (Settings.max_step_seconds + 1, 422)):
        r = client.put(f"/games/{gid}/seats/0/contact", json={"reminder_lead": lead}, headers=p.bearer())
        assert r.status_code == status, (lead, r.json)


def test_event_cursor_bound_is_documented(client: Any) -> None:
    """`after` above 18 digits was documented as valid and refused with 422."""
    host = Player.new()
    gid = create_game(client, host, 2)["id"]
    params = next(p for p in DOC["paths"]["/games/{gid}/events"]["get"]["parameters"] if p.get("name") == "after")
    top = params["schema"]["maximum"]
    assert client.get(f"/games/{gid}/events?after={top}").status_code in (200, 409)
    r = client.get(f"/games/{gid}/events?after={top + 1}")
    assert r.status_code == 422 and r.json["code"] == "invalid_request"


def test_inbound_mail_must_not_be_empty_in_the_document() -> None:
    """An empty mail was documented as valid and refused with 422 `invalid_request`."""
    body = DOC["paths"]["/inbound/email"]["post"]["requestBody"]["content"]
    assert body["message/rfc822"]["schema"]["minLength"] == 1
    email = body["multipart/form-data"]["schema"]["properties"]["email"]
    assert re.search(email["pattern"], "  \r\n") is None and re.search(email["pattern"], "From: a") is not None


def test_message_recipients_are_documented_as_the_server_takes_them() -> None:
    """`"to": []` and `[1, 1]` were documented as valid and refused with 422 `bad_recipients`."""
    to = DOC["components"]["schemas"]["MessageIn"]["properties"]["to"]["oneOf"][1]
    assert to["minItems"] == 1 and to["uniqueItems"] is True and to["items"]["minimum"] == 0


@pytest.mark.parametrize("text", ["hi", "a\tb\nc\r\nd", "h\x9d", "\x00", "   ", "\n\t", "ünï"])
def test_message_text_pattern_states_what_the_server_takes(text: str) -> None:
    """A text with U+009D was documented as valid and refused with 422 `bad_message`."""
    from service.core.errors import Problem
    from service.core.press import clean_text

    pattern = DOC["components"]["schemas"]["MessageIn"]["properties"]["text"]["pattern"]
    try:
        clean_text(text)
        taken = True
    except Problem:
        taken = False
    assert (re.search(pattern, text) is not None) is taken, text


def test_join_seat_below_zero_is_invalid(client: Any) -> None:
    """`seat: -901` was documented as valid and answered 404, as if the game were gone."""
    assert DOC["components"]["schemas"]["Join"]["properties"]["seat"]["minimum"] == 0
    gid = create_game(client, Player.new(), 2)["id"]
    r = client.post(f"/games/{gid}/seats", json={"name": "A", "public_key": Player.new().key.public, "seat": -1},
                    headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 422 and r.json["code"] == "invalid_request", r.json
