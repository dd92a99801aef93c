"""The HTTP resources. Routes parse, authenticate, call `Kontor`, and answer."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any

from flask import Response, current_app, jsonify, request
from flask.views import MethodView
from flask_smorest import Blueprint

from engine.core import registry
from service.channels.contacts import get_contact, set_contact
from service.channels.notify import public_delivery, redeliver
from service.core.auth import bearer_caller, require, signed_order
from service.core.errors import CODES, Problem
from service.core.kontor import Caller, Kontor
from service.http import schemas as s
from service.http.api import PROBLEM, ProblemSchema
from service.protocol.crypto import PublicKey

blp = Blueprint("games", __name__, description="Games, seats, phases, orders and events.")
meta_blp = Blueprint("service", __name__, description="Catalog, health and problem types.")

BEARER = [{"bearer": []}, {}]
SVG = "image/svg+xml"
IDEM_HELP = {
    "Idempotency-Key": {
        "description": "Required. A unique key per creation (RFC 8941 string, e.g. a UUID), remembered for 24 h: "
                       "the same key with the same body returns the first answer; with another body, 422.",
        "schema": {"type": "string"}, "required": True,
    }
}
_RECEIPT_FIELDS = tuple(s.ReceiptSchema().fields)
_IDEM_RE = re.compile(r'^("?)([\x21\x23-\x7e]{1,255})\1$')  # a token, or an RFC 8941 sf-string


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


def kontor() -> Kontor:
    k: Kontor = current_app.extensions["kontor"]
    return k


def caller_of(gid: str) -> Caller:
    return bearer_caller(kontor(), gid, request.headers.get("Authorization"))


def idempotent(client: str, run: Callable[[], tuple[Any, int, dict[str, str]]]) -> tuple[Any, int, dict[str, str]]:
    """Run a creating request once per (client, Idempotency-Key): a retry with the same
    body replays the first answer (success or client error), another body gets 422, a
    retry while the first is still running gets 409. A 429 is not an answer to keep: a
    retry with the same key after `Retry-After` runs the request."""
    raw = request.headers.get("Idempotency-Key")
    if raw is None:
        raise Problem("idempotency_key_missing")
    m = _IDEM_RE.match(raw.strip())
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
    k.store.idem_finish(client, key, fp, status, body, headers, ttl)
    return body, status, headers


def _client_of_key(text: Any) -> str:
    try:
        return PublicKey.from_text(text).kid
    except (ValueError, TypeError):
        return "anon-" + (request.remote_addr or "unknown")


def _replay_or(result: tuple[Any, int, dict[str, str]]) -> tuple[Any, int, dict[str, str]]:
    body, status, headers = result
    if status >= 400:  # a stored client error, replayed as problem+json
        raise Problem(body["code"], body.get("detail"), status=status,
                      **{k: v for k, v in body.items() if k not in ("type", "title", "status", "detail", "code",
                                                                    "instance")})
    return body, status, headers


# -- catalog, health --------------------------------------------------------------------
@meta_blp.route("/catalog")
class Catalog(MethodView):
    @meta_blp.response(200, s.TitleSchema(many=True))
    def get(self) -> Any:
        """The titles: seat ranges, options with defaults, bot kinds, order codes, and
        the link to each title's player's guide."""
        return kontor().catalog()


@meta_blp.route("/healthz")
class Health(MethodView):
    @meta_blp.response(200)
    def get(self) -> Any:
        """Liveness: the web process answers."""
        return {"status": "ok"}


@meta_blp.route("/readyz")
class Ready(MethodView):
    @meta_blp.response(200, s.ReadySchema)
    @meta_blp.alt_response(503, schema=ProblemSchema, content_type=PROBLEM, description="The store is not reachable.")
    def get(self) -> Any:
        """Readiness: the store answers. Also lists the titles that failed to load (a
        broken plugin is left out; the others are served)."""
        try:
            kontor().r.ping()
        except Exception as exc:  # any connection failure means not ready
            raise Problem("unavailable", f"store: {exc}") from None
        return {"status": "ready", "titles_failed": registry.load_errors()}


@meta_blp.route("/metrics")
class Metrics(MethodView):
    @meta_blp.response(200, content_type="text/plain")
    def get(self) -> Any:
        """Prometheus metrics: running games, open steps by status, RQ queues and workers."""
        from flask import Response

        from service.http.metrics import render

        return Response(render(kontor()), mimetype="text/plain; version=0.0.4")


@meta_blp.route("/problems")
class Problems(MethodView):
    @meta_blp.response(200)
    def get(self) -> Any:
        """Every stable problem `code` with its HTTP status and title."""
        return {code: {"status": st, "title": title} for code, (st, title) in sorted(CODES.items())}


# -- games ------------------------------------------------------------------------------
@blp.route("/games")
class Games(MethodView):
    @blp.arguments(s.GameListArgsSchema, location="query")
    @blp.response(200, s.GameListSchema)
    def get(self, args: dict[str, Any]) -> Any:
        """Games, newest first; `?status=lobby` lists the games you can join."""
        return kontor().listing(args["status"], args["limit"], args["before"])

    @blp.arguments(s.CreateGameSchema)
    @blp.response(201, s.GameSchema)
    @blp.doc(parameters=[{"in": "header", "name": "Idempotency-Key", **IDEM_HELP["Idempotency-Key"]}])
    def post(self, body: dict[str, Any]) -> Any:
        """Create a game. The creator registers the host key that starts the game and
        manages seats."""

        def run() -> tuple[Any, int, dict[str, str]]:
            game = kontor().create_game(body["title"], body["seats"], body["options"], body["deadlines"],
                                        body["seed"], body["host_key"], body["name"],
                                        mail_orders=body["mail_orders"], press=body["press"])
            return game, 201, {"Location": f"/games/{game['id']}"}

        return _replay_or(idempotent("host-" + _client_of_key(body.get("host_key")), run))


@blp.route("/games/<gid>")
class GameResource(MethodView):
    @blp.etag
    @blp.response(200, s.GameSchema)
    def get(self, gid: str) -> Any:
        """A game: title, options, deadlines, players, the open phase, the result."""
        return kontor().game(gid)

    @blp.arguments(s.GamePatchSchema)
    @blp.response(200, s.GameSchema)
    @blp.doc(security=BEARER)
    def patch(self, body: dict[str, Any], gid: str) -> Any:
        """Start the game (`{"status": "running"}`); host only."""
        require(caller_of(gid), "host")
        return kontor().start(gid)


@blp.route("/games/<gid>/seats")
class Seats(MethodView):
    @blp.response(200, s.PlayerSchema(many=True))
    def get(self, gid: str) -> Any:
        """Every seat: name, bot, key id."""
        return kontor().game(gid)["players"]

    @blp.arguments(s.JoinSchema)
    @blp.response(201, s.PlayerSchema)
    @blp.doc(parameters=[{"in": "header", "name": "Idempotency-Key", **IDEM_HELP["Idempotency-Key"]}])
    def post(self, body: dict[str, Any], gid: str) -> Any:
        """Join a game in its lobby with a display name and your Ed25519 public key."""

        def run() -> tuple[Any, int, dict[str, str]]:
            seat = kontor().join(gid, body["name"], body["public_key"], body["seat"])
            return seat, 201, {"Location": f"/games/{gid}/seats/{seat['seat']}"}

        return _replay_or(idempotent(f"{gid}-" + _client_of_key(body.get("public_key")), run))


@blp.route("/games/<gid>/seats/<int:seat>")
class SeatResource(MethodView):
    @blp.response(200, s.PlayerSchema)
    def get(self, gid: str, seat: int) -> Any:
        """One seat."""
        return kontor().seat(gid, seat)

    @blp.arguments(s.SeatPatchSchema)
    @blp.response(200, s.PlayerSchema)
    @blp.doc(security=BEARER)
    def patch(self, body: dict[str, Any], gid: str, seat: int) -> Any:
        """Host only: make the seat a bot, give it to a new player key, or rename it.
        Works in the lobby and during the game (to replace an absent player)."""
        require(caller_of(gid), "host")
        return kontor().update_seat(gid, seat, body.get("name"), body.get("public_key"), body.get("bot"),
                                    clear_bot="bot" in body and body["bot"] is None)


# -- phases and orders ------------------------------------------------------------------
@blp.route("/games/<gid>/phases/current")
class CurrentPhase(MethodView):
    @blp.etag
    @blp.response(200, s.PhaseSchema)
    @blp.doc(security=BEARER)
    def get(self, gid: str) -> Any:
        """The open phase: who must answer, the deadline, who has answered (never what).
        With a seat's bearer token, also that seat's choices, order schema and default, and
        (`asked`) what is asked of it in the title's words."""
        return kontor().current_phase(gid, caller_of(gid))


@blp.route("/games/<gid>/phases/<int:phase>/orders/<int:seat>")
class OrderResource(MethodView):
    @blp.arguments(s.OrderSubmitSchema)
    @blp.response(202, s.ReceiptSchema)
    @blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM,
                      description="The phase is not open (stale, resolving, or not asking this seat); "
                                  "the problem carries the open `phase`.")
    def put(self, body: dict[str, Any], gid: str, phase: int, seat: int) -> Any:
        """Submit (or replace, until the step resolves) a seat's order for a phase, as a
        signed order token. Answers 202 with a receipt."""
        k = kontor()
        token = body["token"]
        claims, snap = signed_order(k, gid, phase, seat, token)
        receipt = k.submit(gid, phase, seat, claims["order"], via="http", jti=claims["jti"], token=token,
                           snapshot=snap)
        # The receipt has exactly ReceiptSchema's fields, already of their types: answered as
        # it is (the same JSON), this hottest path skips the schema dump.
        return jsonify({name: receipt[name] for name in _RECEIPT_FIELDS}), 202

    @blp.response(200, s.ReceiptSchema)
    @blp.doc(security=BEARER)
    def get(self, gid: str, phase: int, seat: int) -> Any:
        """Your own stored order for the open phase (seat's bearer token)."""
        require(caller_of(gid), seat)
        return kontor().own_order(gid, phase, seat)


# -- views and events -------------------------------------------------------------------
@blp.route("/games/<gid>/view")
class View(MethodView):
    @blp.etag
    @blp.response(200, s.ViewSchema)
    @blp.doc(security=BEARER)
    def get(self, gid: str) -> Any:
        """The game as the caller may see it (a seat with its bearer token, else the public):
        the view as JSON (`state`), and in the title's words its `headline` and `summary`."""
        return kontor().view(gid, caller_of(gid))


@blp.route("/games/<gid>/picture.svg")
class Picture(MethodView):
    @blp.response(200, {"type": "string"}, content_type=SVG, headers=CONDITIONAL_HEADERS, description=(
        "An SVG picture of the table as the caller may see it (accessible: text labels and titles)."))
    @blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM, description="No such game (`game_not_found`).")
    @blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM,
                      description="The game has not started (`game_not_started`).")
    @blp.doc(security=BEARER, **CONDITIONAL_DOC)
    def get(self, gid: str) -> Any:
        """The game as a picture (the title's SVG of the caller's view: a seat with its
        bearer token sees its own hidden facts; the host and anyone else the public view).
        Revalidate with `If-None-Match`: unchanged, it answers 304."""
        resp = conditional(kontor().picture(gid, caller_of(gid)), SVG)
        resp.vary.add("Authorization")  # each seat has a picture of its own
        return resp


@blp.route("/games/<gid>/events")
class Events(MethodView):
    @blp.etag
    @blp.arguments(s.EventsArgsSchema, location="query")
    @blp.response(200, s.EventPageSchema)
    @blp.doc(security=BEARER)
    def get(self, args: dict[str, Any], gid: str) -> Any:
        """The game's events after `after`, oldest first, only those the caller may see."""
        return kontor().events(gid, caller_of(gid), args["after"], args["limit"])


@blp.route("/games/<gid>/history")
class History(MethodView):
    @blp.response(200, s.HistorySchema)
    @blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM,
                      description="The game is not over yet (`forbidden`): the seed stays secret until then.")
    def get(self, gid: str) -> Any:
        """Once the game is over, its history (format `kontor-history/1`): the seed and its
        commitment, and per step the accepted orders, the seats given defaults, the SHA-256
        of the state after it and the engine's events; and the result. `python -m engine
        verify FILE` replays it and checks every draw, state and event."""
        return kontor().published_history(gid)


# -- contact settings and deliveries ----------------------------------------------------
@blp.route("/games/<gid>/seats/<int:seat>/contact")
class ContactResource(MethodView):
    @blp.response(200, s.ContactOutSchema)
    @blp.doc(security=BEARER)
    def get(self, gid: str, seat: int) -> Any:
        """A seat's contact settings (the seat's bearer token; the host sees them masked)."""
        caller = caller_of(gid)
        require(caller, seat, or_host=True)
        return get_contact(kontor(), gid, seat, caller)

    @blp.arguments(s.ContactSchema)
    @blp.response(200, s.ContactOutSchema)
    @blp.doc(security=BEARER)
    def put(self, body: dict[str, Any], gid: str, seat: int) -> Any:
        """Set where the seat's notifications go: email, webhook (a new URL answers its
        signing secret once), reminder lead time, time zone, immediate or digest."""
        require(caller_of(gid), seat)
        return set_contact(kontor(), gid, seat, body)


@blp.route("/games/<gid>/seats/<int:seat>/deliveries")
class DeliveryList(MethodView):
    @blp.arguments(s.DeliveryListArgsSchema, location="query")
    @blp.response(200, s.DeliverySchema(many=True))
    @blp.doc(security=BEARER)
    def get(self, args: dict[str, Any], gid: str, seat: int) -> Any:
        """The seat's mails and webhook deliveries, newest first, with their outcome
        (the seat, or the host with targets masked)."""
        caller = caller_of(gid)
        require(caller, seat, or_host=True)
        k = kontor()
        k.check_seat(k._meta(gid), seat)
        return [public_delivery(d, caller == "host") for d in k.store.deliveries(gid, seat, args["limit"])]


@blp.route("/games/<gid>/seats/<int:seat>/deliveries/<did>/retry")
class DeliveryRetry(MethodView):
    @blp.response(202, s.DeliverySchema)
    @blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM,
                      description="The delivery has not failed, or its webhook is still disabled.")
    @blp.doc(security=BEARER)
    def post(self, gid: str, seat: int, did: str) -> Any:
        """Try a failed or disabled delivery again (the seat's bearer token). A webhook
        keeps its `webhook-id`; re-enable a disabled webhook by setting its URL first."""
        require(caller_of(gid), seat)
        return public_delivery(redeliver(kontor(), gid, seat, did), for_host=False)
