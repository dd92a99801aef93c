"""The Flask app factory."""

from __future__ import annotations

import logging

from flask import Flask, Response, request

from engine.core import registry
from service import logs
from service.config import Settings
from service.core.kontor import Kontor
from service.http.api import Api
from service.http.request_id import request_id
from service.logs import current_id

log = logging.getLogger("kontor")


def create_app(settings: Settings | None = None, kontor: Kontor | None = None) -> Flask:
    settings = settings or Settings.from_env()
    app = Flask("kontor")
    app.config.update(
        API_TITLE="Kontor",
        API_VERSION="1",
        OPENAPI_VERSION="3.1.0",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi.json",
        OPENAPI_SWAGGER_UI_PATH="/docs",
        OPENAPI_SWAGGER_UI_URL="https://cdn.jsdelivr.net/npm/swagger-ui-dist/",
        OPENAPI_REDOC_PATH="/redoc",
        OPENAPI_REDOC_URL="https://cdn.jsdelivr.net/npm/redoc/bundles/redoc.standalone.js",
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
        current_id.set(request_id(request.headers.get("X-Request-Id", "")))

    @app.after_request
    def _echo_id(resp: Response) -> Response:
        resp.headers["X-Request-Id"] = current_id.get()
        return resp

    app.extensions["kontor"] = kontor or Kontor(settings)
    api = Api(app)
    api.spec.components.security_scheme(
        "bearer", {"type": "http", "scheme": "bearer", "bearerFormat": "JWS (Ed25519), claims game/iat/exp"})
    from service.channels.webhook.deliver import openapi_webhooks
    from service.http.schemas import WebhookEventSchema

    api.spec.components.schema("WebhookEvent", schema=WebhookEventSchema)
    api.spec.options["webhooks"] = openapi_webhooks()
    from service.http.resources.games import blp, meta_blp
    from service.http.resources.inbound import inbound_blp
    from service.http.resources.press import press_blp
    from service.http.resources.titles import titles_blp
    from service.http.resources.unsubscribe import mail_blp

    api.register_blueprint(meta_blp)
    api.register_blueprint(blp)
    api.register_blueprint(press_blp)
    api.register_blueprint(mail_blp)
    api.register_blueprint(inbound_blp)
    api.register_blueprint(titles_blp)
    # The order PUT's common case skips the framework (service/http/fastpath.py); everything
    # else, and every order it cannot answer itself, goes through Flask as before.
    from service.http.fastpath import FastOrders

    app.wsgi_app = FastOrders(app, before=[_request_id], after=[_echo_id])  # type: ignore[method-assign]
    return app


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
Creating POSTs need an `Idempotency-Key` header.
"""
