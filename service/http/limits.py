"""Request limits on the web side: which requests are limited, by what, and the refusal.

Every limited request is counted twice in one round trip (`RateLimits.hit`): by its client
address and by its key. The client address is `REMOTE_ADDR`, which ProxyFix
(`Settings.trusted_proxies`) sets from `X-Forwarded-For` when proxies are trusted. The
key is the key that speaks: the `kid` of the body's token or of the bearer token, else the
host's (`host_key`) or joining player's (`public_key`) public key, else, for a page link's
order or choices (`cap`), the seat it is for.

Over a limit, the answer is 429 `rate_limited` (problem+json, or the people's error page
for the pages) with `Retry-After`, before the route runs: nothing is read or changed, no
idempotency record is made. The fast paths (service/http/fastpath.py) count their
requests with `fast_check` and leave a refusal to the route, which answers it from the
mark they leave in the environ (so a request is counted once, and refused alike).

Most requests are counted without a round trip: each process takes counts ahead, a few
at once, and grants from them; a limit is never exceeded, and a refusal may come early
by at most what the other processes hold unused (`service.store.ratelimit`, issue 26).
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from apispec import BasePlugin
from flask import current_app, request

from service.core.errors import Problem
from service.protocol.jsonlimits import loads as strict_loads
from service.store.ratelimit import RateLimits, Refusal, words

#: The environ mark of a request the fast path counted (None) or refused (the `Refusal`).
COUNTED = "kontor.limits"
#: The app's extension that holds the counters.
EXTENSION = "kontor_limits"

#: (endpoint, method) -> kind, besides the reads below.
KINDS: dict[tuple[str, str], str] = {
    ("games.Games", "POST"): "create",
    ("games.Seats", "POST"): "join",
    ("games.OrderResource", "PUT"): "order",
    ("links.LinkOrder", "PUT"): "order",
    ("games.ChoicesResource", "POST"): "order",
    ("games.ActionResource", "POST"): "order",
    ("press.Messages", "POST"): "message",
    ("inbound.InboundMail", "POST"): "mail",
    ("games.Stream", "GET"): "stream",
    # issue 25: the host's and the seats' writes on a game count as its orders do (a
    # rematch too: it makes a game, but at most one per finished game, its host's).
    ("hosting.Pause", "POST"): "order",
    ("hosting.Resume", "POST"): "order",
    ("hosting.Extend", "POST"): "order",
    ("rollback.Rollback", "POST"): "order",
    ("rollback.Rollback", "DELETE"): "order",
    ("rollback.Consent", "POST"): "order",
    ("absences.AbsencesResource", "PUT"): "order",
    ("absences.AbsencePolicyResource", "PATCH"): "order",
    ("rematch.RematchResource", "POST"): "order",
}
#: Every GET of these blueprints is a read (the game's resources, the messages, the pages),
#: but for these endpoints.
READS = ("games", "press", "pages", "rollback", "absences")
NOT_READS = {"pages.favicon"}
#: The kinds whose key may be in the JSON body.
BODY_KEYS = {"create", "join", "order", "message"}
#: A kid or public key as it may appear (longer or odder ones are not keys: the address counts).
KEYLIKE = re.compile(r"[A-Za-z0-9_-]{1,100}")


def kind_of(endpoint: str | None, method: str) -> str | None:
    """The kind of limited request an endpoint's method is, else None."""
    if endpoint is None:
        return None
    method = "GET" if method == "HEAD" else method
    kind = KINDS.get((endpoint, method))
    if kind is None and method == "GET" and endpoint.split(".")[0] in READS and endpoint not in NOT_READS:
        kind = "read"
    return kind


def token_kid(token: Any) -> str | None:
    """The `kid` in a compact JWS's header (not verified: the route verifies), else None;
    kept per header text (`KIDS_KEPT`: a key signs all its tokens with the same header)."""
    if not isinstance(token, str) or not 0 < token.find(".") <= 400:
        return None
    head = token[:token.find(".")]
    if head in _KIDS:
        return _KIDS[head]
    try:
        header = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    except (ValueError, TypeError):
        return None
    kid = header.get("kid") if isinstance(header, dict) else None
    kid = kid if isinstance(kid, str) and KEYLIKE.fullmatch(kid) else None
    if len(_KIDS) >= KIDS_KEPT:
        _KIDS.clear()
    _KIDS[head] = kid
    return kid


#: `token_kid`'s answers by header text, per process (at most `KIDS_KEPT`, then it starts again).
_KIDS: dict[str, str | None] = {}
KIDS_KEPT = 4096


def bearer_kid(authorization: str | None) -> str | None:
    if authorization and authorization[:7].lower() == "bearer ":
        return token_kid(authorization[7:].strip())
    return None


def request_key(kind: str) -> str | None:
    """The key the current request speaks with (see the module's doc), else None."""
    body: Any = None
    if kind == "mail":  # its key is the sender, counted by the route (`check_sender`)
        return None
    if kind in BODY_KEYS and request.mimetype == "application/json":
        try:  # as strictly as the route reads it (not too deep); anything odd: no key from the body
            body = strict_loads(request.get_data(cache=True))
        except ValueError:
            body = None
    if isinstance(body, dict):
        kid = token_kid(body.get("token"))
        if kid:
            return f"kid:{kid}"
    kid = bearer_kid(request.headers.get("Authorization"))
    if kid:
        return f"kid:{kid}"
    if isinstance(body, dict):
        for field in ("host_key", "public_key"):
            value = body.get(field)
            if isinstance(value, str) and KEYLIKE.fullmatch(value):
                return f"pk:{value}"
        if "cap" in body and request.view_args and "seat" in request.view_args:
            return f"seat:{request.view_args.get('gid')}/{request.view_args['seat']}"
    return None


def refusal_problem(refusal: Refusal) -> Problem:
    return Problem("rate_limited", words(refusal), retry_after=refusal.retry_after)


def check() -> None:
    """The app's before-request hook: count the request and refuse it over a limit
    (raises the problem)."""
    limits: RateLimits = current_app.extensions[EXTENSION]
    if not limits.on:
        return
    env = request.environ
    if COUNTED in env:
        refusal = env[COUNTED]
    else:
        endpoint = request.url_rule.endpoint if request.url_rule is not None else None
        kind = kind_of(endpoint, request.method)
        if kind is None:
            return
        refusal = limits.hit(kind, env.get("REMOTE_ADDR"), request_key(kind))
    if refusal is None:
        return
    # The pages answer it with their error page (service/http/resources/play.py `error_page`).
    raise refusal_problem(refusal)


def check_sender(sender: str | None) -> None:
    """Inbound mail by HTTP: count the mail by its sender too (the address was counted
    by `check`); refuse it over the limit."""
    limits: RateLimits = current_app.extensions[EXTENSION]
    refusal = limits.hit("mail", None, (sender or "").strip().lower() or None)
    if refusal is not None:
        raise refusal_problem(refusal)


def fast_check(app: Any, environ: dict[str, Any], kind: str, kid: str | None) -> bool:
    """The fast paths' count of their request: True when it may go on; False when it is
    refused (then the route must answer it: `check` finds the refusal in the environ)."""
    limits: RateLimits = app.extensions[EXTENSION]
    if not limits.on:
        return True
    refusal = limits.hit(kind, environ.get("REMOTE_ADDR"), f"kid:{kid}" if kid else None)
    environ[COUNTED] = refusal
    return refusal is None


class LimitDocs(BasePlugin):  # type: ignore[misc]
    """apispec plugin: every limited operation documents its 429 (`RATE_LIMITED`)."""

    def __init__(self, app: Any) -> None:
        super().__init__()
        self.app = app

    def operation_helper(self, path: str | None = None, operations: dict[str, Any] | None = None,
                         **kwargs: Any) -> None:
        endpoints = {re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", r.rule): r.endpoint
                     for r in self.app.url_map.iter_rules()}
        for method, op in (operations or {}).items():
            if kind_of(endpoints.get(path or ""), method.upper()) is None:
                continue
            responses = op.setdefault("responses", {})
            own = responses.get("429", responses.get(429))
            if isinstance(own, dict):  # the route's own 429 (messages: `press_rate`): the limits' too
                responses.pop(429, None)
                responses["429"] = {**own, "headers": RATE_LIMITED["headers"],
                                    "description": f"{own.get('description', '')} {RATE_LIMITED['description']}"
                                    .strip()}
            else:
                responses["429"] = "RATE_LIMITED"


RATE_LIMITED = {
    "description": "Too many requests of this kind from this client address or with this key "
                   "(`rate_limited`); nothing was done. Try again after `Retry-After` seconds.",
    "headers": {"Retry-After": {"description": "Seconds to wait before trying again.",
                                "schema": {"type": "integer"}}},
}
