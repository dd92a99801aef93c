"""Project-wide flask-smorest pieces, so that every resource module says what it needs in
one decorator and imports no other resource module:

* `Api`: every error is an RFC 9457 problem (`application/problem+json` with Kontor's
  stable `code`), built in one place, flask-smorest's public `handle_http_exception`,
  and documented as such (`ERROR_SCHEMA` and an apispec plugin).
* `Blueprint`: strict JSON bodies (415 for another media type, `too_deep`, no NaN), and
  decorators that both enforce and document: `bearer` (who may call), `idempotent`
  (`Idempotency-Key`), `if_match` (`If-Match` against the ETag a GET sends).
* The helpers the resources share: `kontor()`, `caller_of`, `conditional`.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
import re
from collections.abc import Callable
from functools import wraps
from typing import Any

import marshmallow as ma
from apispec import BasePlugin
from flask import Flask, Response, current_app, jsonify, request
from flask_smorest import Api as _Api
from flask_smorest import Blueprint as _Blueprint
from flask_smorest.utils import unpack_tuple_response
from webargs.core import is_json
from webargs.flaskparser import FlaskParser
from werkzeug.exceptions import HTTPException, InternalServerError
from werkzeug.routing import IntegerConverter

from service.core.auth import bearer_caller, require
from service.core.errors import CODES, Problem
from service.core.kontor import Caller, Kontor
from service.protocol.crypto import PublicKey
from service.protocol.jsonlimits import MAX_DEPTH, NotFinite, TooDeep
from service.protocol.jsonlimits import loads as strict_loads
from service.store import STORE_DOWN

log = logging.getLogger("kontor")

PROBLEM = "application/problem+json"

#: werkzeug's exceptions, by status, mapped to our stable codes.
HTTP_CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 413: "payload_too_large",
              415: "unsupported_media_type", 412: "precondition_failed", 428: "precondition_failed",
              414: "uri_too_long", 431: "header_fields_too_large"}

#: Codes the HTTP layer answers that `service.core.errors.CODES` may not list yet: their
#: status and title. `CODES` wins where it has them.
HTTP_PROBLEMS: dict[str, tuple[int, str]] = {
    "too_deep": (400, f"The JSON is nested more than {MAX_DEPTH} levels deep."),
    "store_unavailable": (503, "The store is not reachable; try again later."),
    "uri_too_long": (414, "The request line is too long."),
    "header_fields_too_large": (431, "The request's header fields are too large."),
    "expectation_failed": (417, "The request's Expect header cannot be met."),
    "not_implemented": (501, "The request uses a transfer coding this server does not implement."),
}

#: Seconds a client should wait before trying again while the store is down.
STORE_RETRY_AFTER = 5


def http_problem(code: str, detail: str | None = None, **extra: Any) -> Problem:
    """A `Problem` with one of the HTTP layer's codes (see `HTTP_PROBLEMS`)."""
    status = (CODES.get(code) or HTTP_PROBLEMS[code])[0]
    exc = Problem(code, detail or HTTP_PROBLEMS.get(code, (0, None))[1], status=status, **extra)
    if code not in CODES:
        exc.title = HTTP_PROBLEMS[code][1]
    return exc


class Schema(ma.Schema):
    """Base schema: unknown fields are an error, so a typo never passes silently."""

    class Meta:
        unknown = ma.RAISE


class ProblemSchema(Schema):
    """RFC 9457 problem details with Kontor's stable `code`."""

    class Meta:
        unknown = ma.INCLUDE

    type = ma.fields.String(metadata={"description": "A URI naming the problem type, `/problems/<code>`."})
    title = ma.fields.String(metadata={"description": "A short summary of the problem type."})
    status = ma.fields.Integer(metadata={"description": "The HTTP status."})
    detail = ma.fields.String(metadata={"description": "What went wrong with this request, for a person."})
    instance = ma.fields.String(metadata={"description": "The request path."})
    code = ma.fields.String(metadata={"description": "The stable code clients branch on (see /problems)."})
    errors = ma.fields.Dict(metadata={"description": "Field errors of a request that failed validation."})
    phase = ma.fields.Dict(metadata={"description": "The open phase, on 409s about phases."})


def problem_response(exc: Problem) -> Response:
    resp = jsonify(exc.body(request.path))
    resp.status_code = exc.status
    resp.mimetype = PROBLEM
    retry = exc.extra.get("retry_after")
    if retry is not None:
        resp.headers["Retry-After"] = str(retry)
    return resp


class ProblemRaised(HTTPException):
    """A `Problem` (or a store failure made one) on its way through Flask's HTTP error
    handling, so that `Api.handle_http_exception` answers every error."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.detail)
        self.code = problem.status
        self.problem = problem


class AsciiInt(IntegerConverter):
    """`<int:...>` that takes ASCII digits only: werkzeug's `\\d+` also matches `１` (a
    full-width digit) and `int()` reads it as 1, so `/seats/１` would be seat 1."""

    regex = r"[0-9]+"


class ProblemDocs(BasePlugin):  # type: ignore[misc]
    """apispec plugin: error answers are documented as `application/problem+json`, and
    every operation that reads the store documents its 503."""

    def __init__(self, no_store: set[str]) -> None:
        super().__init__()
        self.no_store = no_store

    def response_helper(self, response: dict[str, Any], **kwargs: Any) -> dict[str, Any] | None:
        # flask-smorest registers a response per HTTP status with ERROR_SCHEMA, under the
        # default (JSON) content type: errors are problem+json.
        content = response.get("content") or {}
        if list(content) == ["application/json"] and _is_problem(content["application/json"].get("schema")):
            response["content"] = {PROBLEM: content["application/json"]}
        return response

    def operation_helper(self, path: str | None = None, operations: dict[str, Any] | None = None,
                         **kwargs: Any) -> None:
        for op in (operations or {}).values():
            responses = op.setdefault("responses", {})
            if op.get("operationId") not in self.no_store and not {503, "503"} & set(responses):
                responses["503"] = "SERVICE_UNAVAILABLE"


def _is_problem(schema: Any) -> bool:
    # The marshmallow plugin may have made the schema a reference already.
    if isinstance(schema, dict):
        return schema.get("$ref") == "#/components/schemas/Problem"
    return schema is ProblemSchema or isinstance(schema, ProblemSchema) or schema == "Problem"


class Api(_Api):  # type: ignore[misc]
    """flask-smorest's Api, answering and documenting problem+json."""

    # Should match the payload structure of handle_http_exception.
    ERROR_SCHEMA = ProblemSchema
    #: Operations that never read the store (no 503 documented).
    NO_STORE = {"getHealth", "listProblems", "getCatalog", "getRules", "getRulesMarkdown"}

    def init_app(self, app: Flask, *, spec_kwargs: dict[str, Any] | None = None) -> None:
        spec_kwargs = dict(spec_kwargs or {})
        spec_kwargs["extra_plugins"] = [*spec_kwargs.get("extra_plugins", ()), ProblemDocs(self.NO_STORE)]
        app.url_map.converters["int"] = AsciiInt
        super().init_app(app, spec_kwargs=spec_kwargs)
        self.spec.components.response("SERVICE_UNAVAILABLE", {
            "description": "The store is not reachable (`store_unavailable`); try again after `Retry-After` "
                           "seconds.",
            "content": {PROBLEM: {"schema": self.ERROR_SCHEMA}},
            "headers": {"Retry-After": {"description": "Seconds to wait before trying again.",
                                        "schema": {"type": "integer"}}},
        }, lazy=True)
        # A domain refusal and a store failure go through the one handler below.
        app.register_error_handler(Problem, lambda exc: self.handle_http_exception(ProblemRaised(exc)))
        for down in STORE_DOWN:
            app.register_error_handler(down, self.handle_store_down)

    def handle_http_exception(self, error: HTTPException) -> Response:
        """Every error answer: problem+json with a stable `code`, the exception's own
        headers (`Allow` of a 405) and those passed to `abort`."""
        data: dict[str, Any] = getattr(error, "data", None) or {}
        status = error.code or 500
        if isinstance(error, ProblemRaised):
            exc = error.problem
        elif isinstance(error, InternalServerError) and error.original_exception is not None:
            # Flask has logged it (with its traceback) before calling this handler.
            exc = Problem("internal_error", "internal error; it has been logged")
        elif status == 422 and ("messages" in data or "errors" in data):
            errors = data.get("errors") or data.get("messages")
            exc = Problem("invalid_request", _first_error(errors), errors=_flatten_locations(errors))
        else:
            code = data.get("code") or HTTP_CODES.get(status) or ("internal_error" if status >= 500 else "bad_request")
            # webargs' 400s carry the reason in `messages`.
            detail = data.get("message") or (_first_error(data["messages"]) if data.get("messages") else None)
            exc = Problem(code, detail or error.description, status=status)
            if code in HTTP_PROBLEMS and code not in CODES:
                exc.title = HTTP_PROBLEMS[code][1]
        resp = problem_response(exc)
        for k, v in error.get_headers():
            if k.lower() != "content-type":
                resp.headers[k] = v
        for k, v in (data.get("headers") or {}).items():
            resp.headers[k] = v
        return resp

    def handle_store_down(self, error: Exception) -> Response:
        """The store refused or did not answer: 503 and when to try again. Never says
        where the store is (the exception's text names its address)."""
        log.warning("store unavailable on %s %s: %s", request.method, request.path, type(error).__name__)
        return self.handle_http_exception(ProblemRaised(http_problem(
            "store_unavailable", "the store does not answer; try again later", retry_after=STORE_RETRY_AFTER)))


def _flatten_locations(errors: Any) -> Any:
    # webargs nests errors under the location ("json", "query"); one level is enough.
    if isinstance(errors, dict) and len(errors) == 1 and next(iter(errors)) in ("json", "query", "headers", "form"):
        return next(iter(errors.values()))
    return errors


def _first_error(errors: Any, path: str = "") -> str:
    errors = _flatten_locations(errors)
    if isinstance(errors, dict):
        for k, v in errors.items():
            return _first_error(v, f"{path}.{k}" if path else str(k))
    if isinstance(errors, list) and errors:
        return f"{path}: {errors[0]}" if path else str(errors[0])
    return "the request is not valid"


class Parser(FlaskParser):
    """webargs' parser with strict JSON bodies: `application/json` (or `+json`) only
    (415 otherwise), a body required, nested at most `MAX_DEPTH` deep (checked before
    parsing, so no recursion), and no NaN or Infinity."""

    def load_json(self, req: Any, schema: ma.Schema) -> Any:
        data: bytes = req.get_data(cache=True)
        if not is_json(req.mimetype) and (req.mimetype or data):
            raise Problem("unsupported_media_type", f"send the body as application/json, not {req.mimetype or 'bare'}")
        if not data.strip():
            raise Problem("invalid_request", "this request needs a JSON body",
                          errors={"_schema": ["a JSON body is required"]})
        try:
            return strict_loads(data.decode("utf-8"))
        except TooDeep as exc:
            raise http_problem("too_deep", str(exc)) from None
        except NotFinite as exc:
            raise Problem("bad_request", f"the body is not strict JSON: {exc}") from None
        except UnicodeDecodeError:
            raise Problem("bad_request", "the JSON body is not UTF-8") from None
        except json.JSONDecodeError as exc:
            raise Problem("bad_request", f"the body is not valid JSON ({exc})") from None


# -- the helpers every resource shares -----------------------------------------------------
def kontor() -> Kontor:
    k: Kontor = current_app.extensions["kontor"]
    return k


def caller_of(gid: str) -> Caller:
    """Who calls, from the request's `Authorization` (a seat, "host", or "public")."""
    return bearer_caller(kontor(), gid, request.headers.get("Authorization"))


def key_client(text: Any) -> str:
    """The idempotency client of a request that registers a key: that key's id (else
    the caller's address)."""
    try:
        return PublicKey.from_text(text).kid
    except (ValueError, TypeError):
        return "anon-" + (request.remote_addr or "unknown")


_IDEM_RE = re.compile(r'^("?)([\x21\x23-\x7e]{1,255})\1$')  # a token, or an RFC 8941 sf-string
#: `_IDEM_RE` as the OpenAPI document states it (ECMA-262, no back-reference).
IDEM_PATTERN = '^(?:[!#-~]{1,255}|"[!#-~]{1,255}")$'
Answer = tuple[Any, int, dict[str, str]]


def idempotent(client: str, run: Callable[[], Answer]) -> Answer:
    """Run a creating request once per (client, Idempotency-Key): a retry with the same
    body replays the first answer (success or client error), another body gets 422, a
    retry while the first is still running gets 409. A 429 is not an answer to keep: a
    retry with the same key after `Retry-After` runs the request; nor is a 5xx."""
    raw = request.headers.get("Idempotency-Key")
    if raw is None:
        raise Problem("idempotency_key_missing")
    m = _IDEM_RE.fullmatch(raw)
    if not m:
        raise Problem("idempotency_key_invalid", "use 1 to 255 visible characters, e.g. a UUID")
    key, k = m.group(2), kontor()
    fp = hashlib.sha256(request.get_data()).hexdigest()
    ttl = k.settings.idempotency_ttl
    held = k.store.idem_claim(client, key, fp, ttl)
    if held is not None:
        if held.get("fp") != fp:
            raise Problem("idempotency_key_reused")
        if held.get("state") != "done":
            raise Problem("idempotency_key_in_flight")
        return held["body"], held["status"], {**held.get("headers", {}), "Idempotent-Replayed": "true"}
    try:
        body, status, headers = run()
    except Problem as exc:
        if exc.status >= 500 or exc.status == 429:
            k.store.idem_release(client, key)
        else:
            body = exc.body(request.path)
            k.store.idem_finish(client, key, fp, exc.status, body, {}, ttl)
        raise
    except BaseException:
        k.store.idem_release(client, key)
        raise
    k.store.idem_finish(client, key, fp, status, body, headers, ttl, game=_idem_game(body))
    return body, status, headers


def _idem_game(body: Any) -> str | None:
    """The game a kept successful answer is about (the route's game, or the game just
    created), so the record goes with the game when its lobby expires
    (`Games.purge_expired`). A refusal's record names no game of its own (the game may not
    exist) and leaves after `idempotency_ttl` (an hour), long before a lobby expires."""
    gid = (request.view_args or {}).get("gid")
    if gid is None and request.path == "/games" and isinstance(body, dict):
        gid = body.get("id")
    return str(gid) if gid else None


def replay_or(result: Answer) -> Answer:
    """A kept answer as the view returns it: a stored client error raised again as the
    very problem it was."""
    body, status, headers = result
    if status >= 400:
        raise Problem(body["code"], body.get("detail"), status=status,
                      **{k: v for k, v in body.items() if k not in ("type", "title", "status", "detail", "code",
                                                                    "instance")})
    return body, status, headers


#: The OpenAPI of a text answer that `conditional` makes (ETag, no-cache, 304).
CONDITIONAL_HEADERS: dict[str, Any] = {
    "ETag": "ETAG",
    "Cache-Control": {"description": "`no-cache`: keep it, but revalidate with `If-None-Match`.",
                      "schema": {"type": "string"}},
}
CONDITIONAL_DOC: dict[str, Any] = {"parameters": ["IF_NONE_MATCH"], "responses": {304: "NOT_MODIFIED"}}


def conditional(body: str, mimetype: str) -> Response:
    """A text answer with a strong ETag (of its bytes) and `Cache-Control: no-cache`; a
    304 without a body when the request's `If-None-Match` names that ETag."""
    data = body.encode()
    resp = Response(data, mimetype=mimetype)
    resp.set_etag(hashlib.sha256(data).hexdigest()[:32])
    resp.headers["Cache-Control"] = "no-cache"
    resp.headers["X-Content-Type-Options"] = "nosniff"
    resp.make_conditional(request)  # in place: 304 and no body when the copy is current
    return resp


# -- the blueprint and its decorators ------------------------------------------------------
BEARER_OPTIONAL: list[dict[str, list[str]]] = [{"bearer": []}, {}]
BEARER_REQUIRED: list[dict[str, list[str]]] = [{"bearer": []}]
IDEMPOTENCY_KEY: dict[str, Any] = {
    "in": "header", "name": "Idempotency-Key", "required": True,
    "description": "A unique key per creation (a token or RFC 8941 string of 1 to 255 visible characters, e.g. "
                   "a UUID), remembered for an hour: the same key with the same body answers the first answer again "
                   "(with `Idempotent-Replayed: true`); with another body, 422 `idempotency_key_reused`; while "
                   "the first request still runs, 409 `idempotency_key_in_flight`. Missing: 400 "
                   "`idempotency_key_missing`.",
    # Exactly what `_IDEM_RE` takes, so a key the document allows is never refused.
    "schema": {"type": "string", "minLength": 1, "maxLength": 257, "pattern": IDEM_PATTERN},
    "example": "5f0c2d7e-8a43-4c1e-9d1b-2f6e7a9c0b31",
}
IF_MATCH: dict[str, Any] = {
    "in": "header", "name": "If-Match", "required": False,
    "description": "Optional: the `ETag` of your copy (from the GET). When the resource has changed since, the "
                   "write is refused with 412 `precondition_failed` and changes nothing.",
    "schema": {"type": "string"},
}


def _manual(func: Any, key: str) -> list[Any]:
    """What earlier `doc(...)` calls put under `key` (lists are replaced, not merged)."""
    return list(getattr(func, "_apidoc", {}).get("manual_doc", {}).get(key, []))


class Blueprint(_Blueprint):  # type: ignore[misc]
    """flask-smorest's Blueprint with strict JSON bodies and Kontor's decorators."""

    ARGUMENTS_PARSER = Parser()

    def arguments(self, schema: Any, *, location: str = "json", **kwargs: Any) -> Callable[[Any], Any]:
        """As flask-smorest's; a JSON body also documents its 400 (not JSON, `too_deep`)
        and 415 (another media type) answers."""
        inner = super().arguments(schema, location=location, **kwargs)
        if location != "json":
            return inner  # type: ignore[no-any-return]

        def decorator(func: Any) -> Any:
            func = self.alt_response(400, response="BAD_REQUEST")(func)
            func = self.alt_response(415, response="UNSUPPORTED_MEDIA_TYPE")(func)
            return inner(func)

        return decorator

    def bearer(self, who: str | None = None, *, or_host: bool = False) -> Callable[[Any], Any]:
        """Authenticate the caller from `Authorization: Bearer <jws>` and document it.

        `who`: None (optional: without a token the caller is the public), "any" (a seat
        or the host), "host", or "seat" (the seat of the path's `seat`; `or_host`: the
        host may too). A view with a `caller` parameter gets the caller."""

        def decorator(func: Any) -> Any:
            wants_caller = "caller" in inspect.signature(func).parameters

            @wraps(func)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                caller = caller_of(kwargs["gid"])
                if who == "any":
                    if caller == "public":
                        raise Problem("authentication_required", "sign a bearer token with your seat's or the "
                                                                 "host's key")
                elif who is not None:
                    require(caller, kwargs["seat"] if who == "seat" else who, or_host=or_host)
                if wants_caller:
                    kwargs["caller"] = caller
                return func(*args, **kwargs)

            doc = self.doc(security=BEARER_OPTIONAL if who is None else BEARER_REQUIRED)(wrapper)
            doc = self.alt_response(401, response="UNAUTHORIZED")(doc)
            if who in ("host", "seat"):
                doc = self.alt_response(403, response="FORBIDDEN")(doc)
            return doc

        return decorator

    def idempotent(self, client: Callable[..., str]) -> Callable[[Any], Any]:
        """Run the view once per (client, `Idempotency-Key`) and document the header.

        `client(*args, **kwargs)` names who sends the request, from the view's arguments
        (the body, the path's `gid`, the `caller`). The view returns `(body, status)` or
        `(body, status, headers)`; that answer is kept and replayed."""

        def decorator(func: Any) -> Any:
            @wraps(func)
            def wrapper(view: Any, *args: Any, **kwargs: Any) -> Any:
                def run() -> Answer:
                    body, status, headers = unpack_tuple_response(func(view, *args, **kwargs))
                    return body, status or 200, dict(headers or {})

                return replay_or(idempotent(client(*args, **kwargs), run))

            return self.doc(parameters=[*_manual(func, "parameters"), IDEMPOTENCY_KEY])(wrapper)

        return decorator

    def if_match(self, current: Callable[..., Any], schema: Any) -> Callable[[Any], Any]:
        """Honour an `If-Match` header: compare it with the ETag the resource's GET sends
        (`current(**path)` dumped with `schema`), 412 `precondition_failed` when it
        differs. Without the header the write goes ahead (it is optional).

        The comparison is made before the write, not inside the store's script: two
        writers racing with the same ETag may both pass."""

        def decorator(func: Any) -> Any:
            @wraps(func)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                if request.if_match:
                    self.check_etag(current(**kwargs), schema)
                return func(*args, **kwargs)

            doc = self.doc(parameters=[*_manual(func, "parameters"), IF_MATCH])(wrapper)
            return self.alt_response(412, response="PRECONDITION_FAILED")(doc)

        return decorator

