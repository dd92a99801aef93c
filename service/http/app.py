"""The Flask app factory."""

from __future__ import annotations

import logging
from pathlib import Path

from flask import Flask, Response, request

from engine.core import registry
from service import logs
from service.config import Settings
from service.core.kontor import Kontor
from service.http.api import PROBLEM, Api
from service.http.headers import secure
from service.http.request_id import request_id
from service.logs import current_id
from service.store import STORE_DOWN
from service.store.durable import check_at_start

log = logging.getLogger("kontor")

#: service/http: its `static/` and `templates/` folders are the app's.
HERE = Path(__file__).resolve().parent
#: Where the vendored documentation viewers are served from (see static/vendor/README.md).
VENDOR = "/static/vendor"

#: The methods of a write: a success answer to one waits until the store has it on disk.
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})

#: Tags beyond the blueprints' own (one per blueprint), in the order the docs show them.
TAGS = [
    {"name": "seats", "description": "Seats of a game: joining, bots, player keys."},
    {"name": "phases", "description": "The open phase and the seats' orders."},
    {"name": "views", "description": "The game as the caller may see it: view, picture and events."},
    {"name": "contacts", "description": "Where a seat's notifications go, and their deliveries."},
]


def create_app(settings: Settings | None = None, kontor: Kontor | None = None) -> Flask:
    from_env = settings is None
    settings = settings or Settings.from_env()
    app = Flask("kontor", root_path=str(HERE))
    app.config.update(
        API_TITLE="Kontor",
        API_VERSION="1",
        OPENAPI_VERSION="3.1.0",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi.json",
        OPENAPI_SWAGGER_UI_PATH="/docs",
        # Both viewers are served from the package (no CDN): the docs work offline.
        OPENAPI_SWAGGER_UI_URL=f"{VENDOR}/swagger-ui/",
        OPENAPI_SWAGGER_UI_CONFIG={"validatorUrl": None},  # no badge fetched from swagger.io
        OPENAPI_REDOC_PATH="/redoc",
        OPENAPI_REDOC_URL=f"{VENDOR}/redoc/redoc.standalone.js",
        MAX_CONTENT_LENGTH=64 * 1024,
        API_SPEC_OPTIONS={
            "info": {"description": DESCRIPTION},
            "servers": [{"url": settings.public_url}],
        },
    )
    logs.setup()
    for name, error in sorted(registry.load_errors().items()):
        log.error("title %s failed to load and is not served: %s", name, error)

    @app.before_request
    def _request_id() -> None:
        logs.tag(request_id(request.headers.get("X-Request-Id", "")), (request.view_args or {}).get("gid"))
        if request.url_rule is not None:
            request.environ[logs.ROUTE_KEY] = request.url_rule.rule

    @app.after_request
    def _echo_id(resp: Response) -> Response:
        resp.headers["X-Request-Id"] = current_id.get()
        return resp

    # Every answer's security headers (a CSP with frame-ancestors, nosniff): service/http/headers.py.
    app.after_request(secure)

    app.extensions["kontor"] = kontor or Kontor(settings)
    if from_env:  # the deployment's `service:create_app()`: refuse a store that cannot keep the promise
        check_at_start(app.extensions["kontor"].store, settings, "the web process")
    # A step flipped here (an order's, a host's action) is resolved here, after the answer
    # (`resolve_in_web`; service/http/inweb.py), else by a worker through the ready list.
    from service.http.inweb import install

    install(app.extensions["kontor"])

    @app.after_request
    def _durable(resp: Response) -> Response:
        # Acknowledged means durable (issue 23): a write answered with success waits until
        # the store has it on disk (`settle`; nothing to wait for unless `waitaof`).
        if request.method in WRITES and resp.status_code < 400:
            try:
                app.extensions["kontor"].store.settle(settings)
            except STORE_DOWN as exc:
                return api.handle_store_down(exc)
        return resp

    # Request limits (issue 23): counted before the route, per client address and per key.
    from service.http import limits
    from service.store.ratelimit import RateLimits

    app.extensions[limits.EXTENSION] = RateLimits(settings)
    app.before_request(limits.check)
    api = Api(app)
    api.spec.plugins.append(limits.LimitDocs(app))
    api.spec.components.response("RATE_LIMITED", {**limits.RATE_LIMITED, "content": {
        PROBLEM: {"schema": api.ERROR_SCHEMA}}}, lazy=True)
    api.spec.components.security_scheme(
        "bearer", {"type": "http", "scheme": "bearer", "bearerFormat": "JWS (Ed25519), claims game/iat/exp"})
    from service.channels.webhook.deliver import openapi_webhooks
    from service.http.schemas import WebhookEventSchema

    api.spec.components.schema("WebhookEvent", schema=WebhookEventSchema)
    api.spec.options["webhooks"] = openapi_webhooks()
    from service.http.resources.absence import absence_blp
    from service.http.resources.games import blp
    from service.http.resources.hosting import hosting_blp
    from service.http.resources.inbound import inbound_blp
    from service.http.resources.meta import meta_blp
    from service.http.resources.play import links_blp, pages
    from service.http.resources.press import press_blp
    from service.http.resources.rematch import rematch_blp
    from service.http.resources.rollback import rollback_blp
    from service.http.resources.titles import titles_blp
    from service.http.resources.unsubscribe import mail_blp

    api.register_blueprint(meta_blp)
    api.register_blueprint(blp)
    for tag in TAGS:
        api.spec.tag(tag)
    api.register_blueprint(press_blp)
    api.register_blueprint(rematch_blp)
    api.register_blueprint(rollback_blp)
    api.register_blueprint(hosting_blp)
    api.register_blueprint(absence_blp)
    api.register_blueprint(mail_blp)
    api.register_blueprint(inbound_blp)
    api.register_blueprint(titles_blp)
    api.register_blueprint(links_blp)
    # The web pages for people (`/`, `/play/...`, `/mine`) are not the JSON API: not documented.
    app.register_blueprint(pages)
    _errors_for_people(app, api)
    # The order PUT's and the public poll's common cases skip the framework
    # (service/http/fastpath.py); everything else, and every request they cannot answer
    # themselves, goes through Flask as before.
    from service.http.fastpath import FastPaths

    app.wsgi_app = FastPaths(app, before=[_request_id, limits.check],  # type: ignore[method-assign]
                             after=[_echo_id, secure, _durable])
    if settings.trusted_proxies:  # the client's address from X-Forwarded-For, set by that many proxies
        from werkzeug.middleware.proxy_fix import ProxyFix

        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings.trusted_proxies)  # type: ignore[method-assign]
    return app


def _errors_for_people(app: Flask, api: Api) -> None:
    """A browser that asks for an address no route answers (`/play/`, `/nonexistent-page`)
    gets the HTML error page, and so does every client under the pages' own roots
    (`/play/a/b/c`, `/mine/x`); elsewhere an API client (`Accept` of JSON, problem+json, `*/*` or none)
    and every address under an API route (`/games/...`) keep problem+json."""
    from werkzeug.exceptions import HTTPException

    from service.core.errors import Problem
    from service.http.resources.play import error_page

    api_roots = {r.rule.split("/")[1] for r in app.url_map.iter_rules()
                 if r.endpoint.split(".")[0] not in ("pages", "static")}
    # Addresses under the pages' own roots (`/play/...`, `/mine`, `/new`) are not the API:
    # an error there is a page for every client, whatever it accepts.
    page_roots = {r.rule.split("/")[1] for r in app.url_map.iter_rules()
                  if r.endpoint.split(".")[0] == "pages"} - api_roots - {""}
    said = {404: ("not_found", "No such page", "There is no page at this address."),
            405: ("method_not_allowed", "Not allowed here", "This page cannot be used that way.")}

    def answer(error: HTTPException) -> Response:
        root = request.path.split("/")[1]
        wants = request.accept_mimetypes.best_match(["application/problem+json", "application/json", "text/html"])
        if root not in page_roots and (wants != "text/html" or root in api_roots):
            return api.handle_http_exception(error)
        code, title, detail = said[error.code or 404]
        exc = Problem(code, detail)
        exc.title = title
        resp = error_page(exc)
        for k, v in error.get_headers():
            if k.lower() == "allow":
                resp.headers[k] = v
        return resp

    for status in said:
        app.register_error_handler(status, answer)


DESCRIPTION = """\
Kontor serves turn-based trading board games (Die Händler, ...) to players who answer
at their own pace, by HTTP or by email.

**Keys.** Every player makes an Ed25519 key pair locally (`kontor keygen`) and registers
the public key when joining. The key id (`kid`) is the key's RFC 7638 thumbprint.

**Orders** are compact JWS tokens (`alg` `Ed25519`; `EdDSA` is accepted) whose claims
are `game`, `phase`, `seat`, `iat`, `jti` (a one-time id) and `order`. `PUT` one to
`/games/{id}/phases/{phase}/orders/{seat}` as `{"token": "..."}`.

**Reads** may carry `Authorization: Bearer <jws>` signed with your key, claims `game`,
`iat`, `exp` (at most 5 minutes later); without it you see what the public sees.

**Errors** are RFC 9457 `application/problem+json` with a stable `code` (see `/problems`).
Creating POSTs need an `Idempotency-Key` header. A `PATCH` takes an optional `If-Match`
with the `ETag` of your copy. Bodies are strict JSON (`application/json`, at most 32
levels deep, no `NaN`). While the store is unreachable every answer is 503
`store_unavailable` with `Retry-After`.
"""
