"""Project-wide flask-smorest pieces: an `Api` that speaks RFC 9457 problem+json for
every error (and documents it), and the base `Schema`."""

from __future__ import annotations

import http
import logging
from typing import Any

import marshmallow as ma
from flask import Response, current_app, jsonify, request
from flask_smorest import Api as _Api
from flask_smorest.utils import prepare_response
from werkzeug.exceptions import HTTPException

from service.core.errors import Problem

log = logging.getLogger("kontor")

PROBLEM = "application/problem+json"

#: werkzeug's exceptions, by status, mapped to our stable codes.
HTTP_CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 413: "payload_too_large",
              415: "unsupported_media_type", 412: "precondition_failed", 428: "precondition_failed"}


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
    return resp


class Api(_Api):  # type: ignore[misc]
    ERROR_SCHEMA = ProblemSchema

    def _register_error_handlers(self) -> None:
        self._app.register_error_handler(HTTPException, self.handle_http_exception)
        self._app.register_error_handler(Problem, problem_response)
        self._app.register_error_handler(Exception, self.handle_unexpected)

    def handle_http_exception(self, error: HTTPException) -> Response:
        data: dict[str, Any] = getattr(error, "data", None) or {}
        status = error.code or 500
        if status == 422 and ("messages" in data or "errors" in data):
            errors = data.get("errors") or data.get("messages")
            exc = Problem("invalid_request", _first_error(errors), errors=_flatten_locations(errors))
        else:
            code = data.get("code") or HTTP_CODES.get(status) or ("internal_error" if status >= 500 else "bad_request")
            # webargs' 400s (a body that is not JSON) carry the reason in `messages`.
            detail = data.get("message") or (_first_error(data["messages"]) if data.get("messages") else None)
            exc = Problem(code, detail or error.description, status=status)
        resp = problem_response(exc)
        for k, v in (data.get("headers") or {}).items():
            resp.headers[k] = v
        return resp

    def handle_unexpected(self, error: Exception) -> Response:
        if isinstance(error, HTTPException):
            return self.handle_http_exception(error)
        log.exception("unhandled error on %s %s", request.method, request.path)
        if current_app.config.get("PROPAGATE_EXCEPTIONS"):
            raise error
        return problem_response(Problem("internal_error", "internal error; it has been logged"))

    def _register_responses(self) -> None:
        # As flask-smorest's, but errors are documented as application/problem+json.
        for status in http.HTTPStatus:
            response: dict[str, Any] = {"description": status.phrase}
            if not (100 <= status < 200) and status not in (204, 304):
                response["schema"] = self.ERROR_SCHEMA
            prepare_response(response, self.spec, PROBLEM)
            self.spec.components.response(status.name, response, lazy=True)
        response = {"description": "Default error response", "schema": self.ERROR_SCHEMA}
        prepare_response(response, self.spec, PROBLEM)
        self.spec.components.response("DEFAULT_ERROR", response, lazy=True)


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
