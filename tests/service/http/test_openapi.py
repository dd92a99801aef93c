"""The OpenAPI document: committed, current, valid 3.1, complete, and served."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from openapi_spec_validator import OpenAPIV31SpecValidator, validate

from service.dev import openapi

#: Routes that serve the documentation itself rather than the API.
DOC_ROUTES = {"/openapi.json", "/docs", "/docs/<path:filename>", "/redoc"}
#: The web pages for people (service/http/resources/play.py) are not the JSON API.
PAGE_BLUEPRINT = "pages."
HTTP_METHODS = {"get", "put", "post", "patch", "delete"}


@pytest.fixture(scope="module")
def committed() -> dict[str, Any]:
    assert openapi.PATH.exists(), "openapi/openapi.json is missing: run `make openapi`"
    doc: dict[str, Any] = json.loads(openapi.PATH.read_text(encoding="utf-8"))
    return doc


def _resolve(spec: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = spec
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def _operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, method, op) for path, item in spec["paths"].items()
            for method, op in item.items() if method in HTTP_METHODS]


def test_committed_document_is_current() -> None:
    fresh = openapi.render(openapi.document())
    assert openapi.PATH.read_text(encoding="utf-8") == fresh, (
        "openapi/openapi.json is out of date: run `make openapi` and commit it")


def test_document_does_not_depend_on_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KONTOR_PUBLIC_URL", "https://elsewhere.example")
    monkeypatch.setenv("KONTOR_REDIS_URL", "redis://127.0.0.1:1/0")  # unreachable: building needs no Redis
    assert openapi.document()["servers"] == [{"url": "http://127.0.0.1:8000"}]


def test_check_mode_reports_drift(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    stale = tmp_path / "openapi.json"
    stale.write_text("{}\n", encoding="utf-8")
    assert openapi.main(["--check", "--path", str(stale)]) == 1
    assert "make openapi" in capsys.readouterr().err
    assert openapi.main(["--path", str(stale)]) == 0
    assert openapi.main(["--check", "--path", str(stale)]) == 0


def test_document_is_valid_openapi_3_1(committed: dict[str, Any]) -> None:
    assert committed["openapi"].startswith("3.1.")
    validate(committed, cls=OpenAPIV31SpecValidator)


def test_every_route_is_documented(app: Any, committed: dict[str, Any]) -> None:
    documented = {(path, method) for path, method, _ in _operations(committed)}
    missing = []
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static" or rule.rule in DOC_ROUTES or rule.endpoint.startswith(PAGE_BLUEPRINT):
            continue
        path = re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule.rule)
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            if (path, method.lower()) not in documented:
                missing.append(f"{method} {path}")
    assert not missing, f"routes missing from the OpenAPI document: {missing}"


def test_every_error_response_is_problem_json(committed: dict[str, Any]) -> None:
    wrong = []
    for path, method, op in _operations(committed):
        for status, response in op["responses"].items():
            if status != "default" and int(status) < 400:
                continue
            content = _resolve(committed, response).get("content", {})
            if list(content) != ["application/problem+json"]:
                wrong.append(f"{method.upper()} {path} {status}: {sorted(content)}")
            else:
                schema = _resolve(committed, content["application/problem+json"]["schema"])
                assert {"type", "title", "status", "detail", "code"} <= set(schema["properties"])
    assert not wrong, f"error responses that are not problem+json: {wrong}"


def test_creating_posts_document_the_idempotency_key(committed: dict[str, Any]) -> None:
    for path in ("/games", "/games/{gid}/seats"):
        params = [_resolve(committed, p) for p in committed["paths"][path]["post"].get("parameters", [])]
        assert any(p["in"] == "header" and p["name"] == "Idempotency-Key" and p["required"] for p in params), path


def test_docs_are_served(client: Any, committed: dict[str, Any]) -> None:
    served = client.get("/openapi.json")
    assert served.status_code == 200
    assert served.json["paths"] == committed["paths"]
    for page in ("/docs", "/redoc"):
        r = client.get(page)
        assert r.status_code == 200, page
        assert r.mimetype == "text/html"


def test_every_operation_has_an_id_a_tag_and_an_example(committed: dict[str, Any]) -> None:
    declared = {tag["name"] for tag in committed["tags"]}
    ids = []
    for path, method, op in _operations(committed):
        where = f"{method.upper()} {path}"
        assert re.fullmatch(r"[a-z][A-Za-z]+", op.get("operationId", "")), where
        ids.append(op["operationId"])
        assert op.get("tags") and set(op["tags"]) <= declared, where
        assert op.get("summary") and "Example" in op.get("description", ""), where
    assert len(ids) == len(set(ids))
    for name in ("createGame", "joinGame", "submitOrder", "getGame", "listGames", "updateGame", "postMessage"):
        assert name in ids, name


def test_bearer_operations_document_security_and_401(app: Any, committed: dict[str, Any]) -> None:
    for path, method, op in _operations(committed):
        if "security" not in op:
            continue
        assert "401" in op["responses"], f"{method.upper()} {path}"
        optional = {} in op["security"]
        assert optional or "403" in op["responses"] or op["operationId"] == "postMessage", op["operationId"]


def test_json_bodies_document_400_and_415(committed: dict[str, Any]) -> None:
    for path, method, op in _operations(committed):
        if "application/json" in op.get("requestBody", {}).get("content", {}):
            assert {"400", "415"} <= set(op["responses"]), f"{method.upper()} {path}"
            assert "example" in op["requestBody"]["content"]["application/json"], f"{method.upper()} {path}"


def test_store_failures_are_documented(committed: dict[str, Any]) -> None:
    from service.http.api import Api

    for path, method, op in _operations(committed):
        assert ("503" in op["responses"]) == (op["operationId"] not in Api.NO_STORE), f"{method.upper()} {path}"
    unavailable = _resolve(committed, {"$ref": "#/components/responses/SERVICE_UNAVAILABLE"})
    assert "Retry-After" in unavailable["headers"]


def test_if_match_is_documented_on_patch(committed: dict[str, Any]) -> None:
    for path in ("/games/{gid}", "/games/{gid}/seats/{seat}"):
        op = committed["paths"][path]["patch"]
        params = [_resolve(committed, p) for p in op["parameters"]]
        assert any(p["name"] == "If-Match" and not p["required"] for p in params), path
        assert "412" in op["responses"]


def test_seed_is_documented(committed: dict[str, Any]) -> None:
    seed = committed["components"]["schemas"]["CreateGame"]["properties"]["seed"]
    assert set(seed["type"]) == {"integer", "string", "null"} and seed["description"]
