"""The fast paths: the common cases of the two hottest requests answered in front of Flask,
with one store round trip each, byte for byte as the routes answer them. The order PUT
is below; the public poll of the open step (`FastPaths._poll`) at the end. A public poll
that repeats, within `poll_pace_ms`, the answer its address was last given is held until
the game changes or that pace has passed, then read and answered (`service/http/pace.py`).

An order is the hottest request there is, and most of its cost in the full route is the
framework (routing, webargs and marshmallow parsing, response wrapping) plus two store
round trips (`intake.lua` to read, `submit.lua` to store). The fast path answers the
common case, byte for byte as the route would:

* a `PUT` of exactly `application/json` `{"token": "<compact JWS>"}` (a sane length,
  no query string, no chunked body) to exactly that path;
* the token is split as the full path splits it (`crypto.plain_parts`), its header a
  plain one (`alg` Ed25519, `kid`, `typ` at most) with a `kid` that holds this seat: the
  key this process saw verify an order of the seat before (`Store.order_key`, filled by
  `auth.signed_order`), else read with the open step's state in one round trip
  (`auth.seat_key`, the full path's read); its signature is verified with it as
  `crypto.verify` verifies it (libsodium: `crypto.verified_claims`), and its claims pass
  the very function `auth.signed_order` checks them with (`auth.check_order_claims`),
  but for the time bounds, which need the server clock;
* the engine state of the claimed step, the open one (`Store.step_state`: held by this
  process since `Store.intake` or an earlier order of the step, else read in one round
  trip), and the title's rules accept the order against it (the script checks that no
  action has changed that state since: its version).

Then one script (`order.lua`, `Store.submit_signed`) checks again, inside the store and
atomically with storing, everything taken from the caches (the kid still holds that seat
with that very key, so a replaced key stops working at once; the game runs; the step is
the open one, collecting, asking this seat), the token's time bounds on the server clock
(the comparisons of `auth.check_order_claims`) and the one-time id, and stores the
record `Kontor.submit` would store: its text comes from the same `order_record`
(`service.core.records`), split at the time stamp the script fills in.

Before anything else, the request limits count the order (by its address and its token's
kid, `service/http/limits.py` `fast_check`: one round trip), as the route's hook would; a
refusal is left to the route, which answers it from the mark left in the environ.

Anything else, any refusal (of the checks here or of the script, which then changed
nothing) goes to the Flask route with the body as it came: the full path then answers,
with exactly the problem it always gave. So the fast path never refuses anything itself;
it only ever accepts what the full path would have accepted at that moment.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import re
from collections.abc import Callable, Iterable
from typing import Any

from flask import Flask
from flask.json.provider import DefaultJSONProvider

from engine.core import registry
from service.core.auth import OrderClaims, check_order_claims, seat_key
from service.core.errors import Problem
from service.core.kontor import Kontor, iso
from service.core.reading import phase_summary
from service.core.records import order_record_around_time, receipt_of_text, stamp
from service.http.api import PROBLEM, STORE_RETRY_AFTER, http_problem
from service.http.limits import fast_check, token_kid
from service.http.pace import Ended, Pacer
from service.http.request_id import request_id
from service.logs import ROUTE_KEY, tag
from service.protocol.crypto import ALGORITHMS, plain_parts, strict_json, verified_claims
from service.store import PUBLIC_STEP_FIELDS, STORE_DOWN

log = logging.getLogger("kontor")

#: The order route's path, in the plain forms the fast path takes (game ids are made of
#: hex digits; anything unusual is left to the router).
ORDER_PATH = re.compile(r"/games/([A-Za-z0-9_-]{1,64})/phases/([0-9]{1,9})/orders/([0-9]{1,9})")
#: The route's endpoint, checked once against the app's URL map, and its blueprint.
ENDPOINT = "games.OrderResource"
BLUEPRINT = "games"
#: The poll of the open step, in the plain form the fast path takes, its endpoint and rule.
PHASE_PATH = re.compile(r"/games/([A-Za-z0-9_-]{1,64})/phases/current")
PHASE_ENDPOINT = "games.CurrentPhase"
PHASE_RULE = "/games/<gid>/phases/current"
#: Public answers kept per process, by what the store said (`Store.public_step`).
PHASE_MEMO_SIZE = 4096

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class Fallback(Exception):
    """The fast path cannot answer this order: the Flask route will."""


def fast_receipt(k: Kontor, gid: str, phase: int, seat: int, token: str) -> dict[str, Any] | None:
    """Store `seat`'s order for `phase` if the fast path can vouch for every check the
    full path makes; its receipt (as `Kontor.submit` returns it), or None when the full
    path must answer (nothing was changed then). Raises only what the store raised while
    storing, as the full path would."""
    try:
        prepared = _prepare(k, gid, phase, seat, token)
    except Fallback:
        return None
    kid, entry, claims, head, tail, state, version = prepared
    s = k.settings
    # The time bounds are checked by the script, on the server clock (`check_order_claims`'s
    # comparisons); iat and exp are whole numbers a double holds exactly (`auth.MAX_TIME`).
    exp = "" if claims.exp is None else str(claims.exp)
    # A step this process will resolve (`service/http/inweb.py`): its flip answers what
    # the resolution reads (`Store.prime`).
    here = k.jobs.here
    resolving = state if here is not None else None
    out = k.store.submit_signed(gid, phase, seat, kid, entry, str(claims.iat), exp, claims.jti, head, tail,
                                s.clock_skew, s.order_max_age, version, resolving)
    if out is None:  # the store disagreed with a cache, or a time bound, or a replay: nothing changed
        return None
    status, replaced, now = out
    if status == "trigger":
        k.jobs.resolve(gid, phase)
    # The access log has every order request; the flip of the step is worth a line more.
    log.log(logging.INFO if status == "trigger" else logging.DEBUG,
            "game %s phase %d: order of seat %d %s via %s", gid, phase, seat, status, "http")
    return {
        "game": gid, "phase": phase, "seat": seat, "received_at": iso(now), "via": "http", "replaced": replaced,
        "step_status": "resolving" if status == "trigger" else "collecting",
        # receipt_of(record): the stored record is exactly head + its time stamp + tail.
        "receipt": receipt_of_text(head + stamp(now) + tail), "order": claims.order,
    }


def _prepare(k: Kontor, gid: str, phase: int, seat: int,
             token: str) -> tuple[str, Any, OrderClaims, str, str, Any, str]:
    """Everything checked that can be checked without the store; raises `Fallback`."""
    parts = plain_parts(token)  # None for a token with a blank in it, too (base64url has none)
    if parts is None:
        raise Fallback
    header = parts[0]
    kid = header.get("kid")
    if header["alg"] != ALGORITHMS[0] or type(kid) is not str:
        raise Fallback
    entry = k.store.order_key(gid, kid)
    if entry is None:  # not seen in this process yet: read it (with the step's state), as the full path would
        entry = seat_key(k, gid, kid)
    if entry is None or entry.seat != seat:
        raise Fallback
    raw = verified_claims(parts, entry.key)
    if raw is None:
        raise Fallback
    try:
        claims = check_order_claims(raw, gid, phase, seat, k.settings, now=None)
    except Problem:
        raise Fallback from None
    held = k.store.step_state(gid, str(phase))
    if held is None:
        raise Fallback
    state, version = held
    try:
        registry.get(entry.title).validate(state, seat, claims.order)
    except Exception:  # IllegalOrder and the like: the full path names it (after its own checks)
        raise Fallback from None
    # The record Kontor.submit stores (`order_record`), as text around its time stamp.
    head, tail = order_record_around_time(claims.order, "http", claims.jti, token)
    return kid, entry, claims, head, tail, state, version


class FastPaths:
    """WSGI middleware in front of the Flask app (`app.wsgi_app`): answers the order PUTs
    `fast_receipt` can take and the public polls of the open step (`_poll`), passes
    everything else to Flask untouched.

    It stands in for the routes only while the app is what it was built for: the same
    request hooks (`before`, `after`: the request id), both routes where they are, a
    compact JSON provider, ETags on; else (checked at the first request it could take)
    every request goes to Flask. `app.config["KONTOR_FAST_ORDERS"] = False` turns the
    order path off, `app.config["KONTOR_FAST_POLLS"] = False` the poll's."""

    def __init__(self, app: Flask, before: list[Callable[..., Any]], after: list[Callable[..., Any]]) -> None:
        self.app = app
        self.wsgi_app: WSGIApp = app.wsgi_app
        self.hooks = (before, after)
        self.fits: bool | None = None
        self.encoder = json.JSONEncoder()  # made like the app's JSON provider's once the app is complete
        #: (step fields, answered) -> (body, ETag) of the public poll's answer.
        self.polls: dict[tuple[tuple[str | None, ...], tuple[int, ...]], tuple[bytes, str]] = {}
        #: step fields -> the route's dump of the step with nobody answered (`_phase_answer`).
        self.steps: dict[tuple[str | None, ...], dict[str, Any]] = {}
        #: The route's response schema (`PhaseSchema`), made at the first answer (dumping is read-only).
        self.phase_schema: Any = None
        #: The pacing of repeated unchanged public polls (`service/http/pace.py`).
        self.pacer = Pacer()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") == "GET":
            return self._poll(environ, start_response)
        if (environ.get("REQUEST_METHOD") != "PUT" or environ.get("CONTENT_TYPE") != "application/json"
                or environ.get("QUERY_STRING") or "HTTP_TRANSFER_ENCODING" in environ):
            return self.wsgi_app(environ, start_response)
        m = ORDER_PATH.fullmatch(environ.get("PATH_INFO", ""))
        length = environ.get("CONTENT_LENGTH", "")
        if m is None or not (length.isascii() and length.isdigit()) or not self._on("KONTOR_FAST_ORDERS"):
            return self.wsgi_app(environ, start_response)
        n, limit = int(length), self.app.config.get("MAX_CONTENT_LENGTH")
        if not 0 < n <= (limit or n):
            return self.wsgi_app(environ, start_response)
        body = environ["wsgi.input"].read(n)
        environ["wsgi.input"] = io.BytesIO(body)  # for Flask, should it answer after all
        try:  # read as strictly as a token (no NaN, no key twice, not deep): anything odd is the route's
            data = strict_json(body)
        except ValueError:  # not UTF-8, not strict JSON, too deep: the route answers
            return self.wsgi_app(environ, start_response)
        if type(data) is not dict or len(data) != 1 or type(data.get("token")) is not str:
            return self.wsgi_app(environ, start_response)
        # The request limits, as the route's hook counts them (one round trip); a refusal is the route's.
        if not fast_check(self.app, environ, "order", token_kid(data["token"])):
            return self.wsgi_app(environ, start_response)
        rid = request_id(environ.get("HTTP_X_REQUEST_ID", ""))
        tag(rid, m.group(1))
        path = environ["PATH_INFO"]
        k = self.app.extensions["kontor"]
        try:
            receipt = fast_receipt(k, m.group(1), int(m.group(2)), int(m.group(3)), data["token"])
        except STORE_DOWN:  # the route answers it (503 store_unavailable with Retry-After)
            return self.wsgi_app(environ, start_response)
        except Exception:  # as the route's unexpected errors (logged, 500 internal_error)
            log.exception("unhandled error on %s %s", "PUT", path)
            if self.app.config.get("PROPAGATE_EXCEPTIONS"):
                raise
            problem = Problem("internal_error", "internal error; it has been logged")
            return self._answer(start_response, problem.status, problem.body(path), PROBLEM, rid)
        if receipt is None:
            return self.wsgi_app(environ, start_response)
        try:  # acknowledged means durable, as the route's `_durable` hook (service/http/app.py)
            k.store.settle(k.settings)
        except STORE_DOWN:  # stored but not confirmed on disk: not acknowledged (the route's 503)
            log.warning("store unavailable on %s %s: %s", "PUT", path, "NotDurable")
            problem = http_problem("store_unavailable", "the store does not answer; try again later",
                                   retry_after=STORE_RETRY_AFTER)
            return self._answer(start_response, problem.status, problem.body(path), PROBLEM, rid,
                                [("Retry-After", str(STORE_RETRY_AFTER))])
        return self._answer(start_response, 202, receipt, "application/json", rid)

    def _answer(self, start_response: Callable[..., Any], status: int, obj: Any, mimetype: str,
                rid: str, extra: list[tuple[str, str]] | None = None) -> list[bytes]:
        # As flask.jsonify in a non-debug app: compact, sorted keys, a final newline.
        out = f"{self.encoder.encode(obj)}\n".encode()
        start_response(STATUS[status], [("Content-Type", mimetype), ("Content-Length", str(len(out))),
                                        *(extra or []), NOSNIFF, ("X-Request-Id", rid)])
        return [out]

    def _poll(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        """`GET /games/<gid>/phases/current` without a bearer token, as the route answers
        the public (`Kontor.current_phase`): read in one script (`Store.public_step`), and
        the answer made once per (step, seats that answered) and kept (`polls`). A running
        game's open step only; anything else (no game, the lobby, a query, a bearer token,
        an `If-None-Match` other than the answer's own ETag, the store down) is the route's.
        A repeat of the answer the caller's address was last given, within `poll_pace_ms`,
        is held first (until the game changes or the pace has passed) and then read again
        (`service/http/pace.py` has the ruling)."""
        m = PHASE_PATH.fullmatch(environ.get("PATH_INFO", ""))
        if (m is None or environ.get("QUERY_STRING") or "HTTP_AUTHORIZATION" in environ
                or not self._on("KONTOR_FAST_POLLS")):
            return self.wsgi_app(environ, start_response)
        gid = m.group(1)
        if not fast_check(self.app, environ, "read", None):  # as the route's hook; a refusal is the route's
            return self.wsgi_app(environ, start_response)
        return self._public_step(environ, start_response, gid, True)

    def _public_step(self, environ: dict[str, Any], start_response: Callable[..., Any], gid: str,
                     paced: bool, ended: Ended | None = None) -> Iterable[bytes]:
        """`_poll`'s read and answer; `paced`: whether a repeated unchanged answer may be
        held first (`service/http/pace.py`), then read again (once, not held again; `ended`:
        what ended the hold, so that the polls one change released share a read, `Pacer.read`)."""
        k = self.app.extensions["kontor"]
        pacing = k.settings.poll_pace_ms > 0 and self.pacer.cooperative()  # a sync worker: none
        pace = k.settings.poll_pace_ms / 1000 if paced and pacing else 0.0
        # (what this process has heard of the game before the read: a change between the read
        # and a hold releases the hold at once)
        hub = k.live_hub() if pacing else None
        before = hub.heard_of(gid) if hub is not None and pace > 0 else (False, 0)
        try:
            if hub is None:
                got = k.store.public_step(gid)
            else:
                got = self.pacer.read(hub, gid, ended, lambda: k.store.public_step(gid))
        except Exception:  # the store down, or anything odd: the route answers, as it always did
            return self.wsgi_app(environ, start_response)
        if got is None or got[0] == "lobby":
            return self.wsgi_app(environ, start_response)
        _, fields, answered = got
        answer = self.polls.get((fields, answered))
        if answer is None:
            answer = self._phase_answer(fields, answered)
            if len(self.polls) >= PHASE_MEMO_SIZE:
                self.polls.clear()
            self.polls[(fields, answered)] = answer
        body, etag = answer
        unchanged = environ.get("HTTP_IF_NONE_MATCH")
        if unchanged is not None and unchanged != f'"{etag}"':
            return self.wsgi_app(environ, start_response)  # a list, a weak or another tag: the route's
        address = environ.get("REMOTE_ADDR") or ""
        if pace > 0:
            wait = self.pacer.hold_for(address, gid, etag, pace)
            if wait > 0:
                held = self.pacer.held_until(hub, gid, wait, k.settings.poll_pace_max_held, before)
                if held is not None:
                    return self._public_step(environ, start_response, gid, False, held)  # read after the wait
        if pacing:
            self.pacer.given(address, gid, etag)
        rid = request_id(environ.get("HTTP_X_REQUEST_ID", ""))
        tag(rid, gid)
        environ[ROUTE_KEY] = PHASE_RULE
        if unchanged is not None:  # the caller's copy is current (as flask-smorest's `NotModified`)
            start_response("304 NOT MODIFIED", [NOSNIFF, ("X-Request-Id", rid)])
            return []
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body))),
                                  ("ETag", f'"{etag}"'), NOSNIFF, ("X-Request-Id", rid)])
        return [body]

    def _phase_answer(self, fields: tuple[str | None, ...], answered: tuple[int, ...]) -> tuple[bytes, str]:
        """The route's answer to the public: `PhaseSchema`'s dump of what
        `Kontor.current_phase` returns, as the app's JSON, and its ETag as flask-smorest
        makes it (SHA-1 of the dump in the app's JSON with sorted keys)."""
        base = self.steps.get(fields)
        if base is None:  # the step's dump with nobody answered, made once per step
            if self.phase_schema is None:  # made once: a schema's fields are copied at every instance
                from service.http.schemas import PhaseSchema

                self.phase_schema = PhaseSchema()
            summary = phase_summary({k: v for k, v in zip(PUBLIC_STEP_FIELDS, fields, strict=True)
                                     if v is not None})
            base = self.phase_schema.dump({**summary, "answered": [], "you": None})
            if len(self.steps) >= PHASE_MEMO_SIZE:
                self.steps.clear()
            self.steps[fields] = base
        # (`answered` is a list of ints, which the schema dumps as they are; a finished game's is empty)
        data = base if base["status"] == "finished" or not answered else {**base, "answered": list(answered)}
        etag = hashlib.sha1(self.app.json.dumps(data, sort_keys=True).encode()).hexdigest()
        return f"{self.encoder.encode(data)}\n".encode(), etag

    def _on(self, switch: str) -> bool:
        if self.fits is None:
            self.fits = self._fits()
            if self.fits:  # what app.json.dumps(obj, separators=(",", ":")) does, made once
                p = self.app.json
                self.encoder = json.JSONEncoder(ensure_ascii=p.ensure_ascii, sort_keys=p.sort_keys,  # type: ignore[attr-defined]
                                                separators=(",", ":"), default=p.default)  # type: ignore[attr-defined]
        app = self.app
        return (self.fits and app.config.get(switch, True) and not app.debug
                and app.json.compact is not False)  # type: ignore[attr-defined]

    def _fits(self) -> bool:
        """Whether the app still is what the fast path stands in for."""
        app, (before, after) = self.app, self.hooks
        try:
            urls = app.url_map.bind("localhost")
            endpoint, _ = urls.match("/games/g/phases/1/orders/0", "PUT")
            poll, _ = urls.match("/games/g/phases/current", "GET")
        except Exception:  # a route moved or went: nothing to stand in for
            return False

        def applying(hooks: dict[str | None, list[Any]]) -> dict[str | None, list[Any]]:
            # What Flask would run for the order route: the app's hooks and its blueprint's.
            return {k: v for k, v in hooks.items() if k in (None, BLUEPRINT) and v}

        return (endpoint == ENDPOINT and poll == PHASE_ENDPOINT and not app.config.get("ETAG_DISABLED")
                and applying(app.before_request_funcs) == {None: before}
                and applying(app.after_request_funcs) == {None: after} and not applying(app.teardown_request_funcs)
                and not applying(app.url_value_preprocessors) and type(app.json) is DefaultJSONProvider
                and "kontor" in app.extensions)


STATUS = {202: "202 ACCEPTED", 500: "500 INTERNAL SERVER ERROR", 503: "503 SERVICE UNAVAILABLE"}
#: What the app's `secure` hook (service/http/headers.py) sets on a JSON answer: nosniff, no
#: policy (the fast path answers only JSON, problem+json and 304s of them).
NOSNIFF = ("X-Content-Type-Options", "nosniff")
