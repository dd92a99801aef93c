"""HTTP resources of a game: the game, its seats, phases and orders, views and events,
and each seat's contact settings and deliveries. Routes parse, authenticate (through
`Blueprint.bearer`), call `Kontor`, and answer."""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify, request, stream_with_context
from flask.views import MethodView

from service.channels.contacts import get_contact, set_contact
from service.channels.links import verify_page_cap
from service.channels.notify import former_targets, public_delivery, redeliver
from service.core.auth import bearer_caller, bearer_session, require, signed_action, signed_order
from service.core.errors import Problem
from service.core.kontor import Caller
from service.core.live import Live
from service.http import schemas as s
from service.http.api import (
    BEARER_OPTIONAL,
    CONDITIONAL_DOC,
    CONDITIONAL_HEADERS,
    PROBLEM,
    Blueprint,
    ProblemSchema,
    conditional,
    key_client,
    kontor,
)

blp = Blueprint("games", __name__, description="Games: creating, listing, starting, and their history.")

SVG = "image/svg+xml"
EVENT_STREAM = "text/event-stream"
STREAM_HEADERS = {"Cache-Control": {"description": "`no-store`.", "schema": {"type": "string"}}}
RETRY_HEADERS = {"Retry-After": {"description": "Seconds to wait before trying again.", "schema": {"type": "integer"}}}
_RECEIPT_FIELDS = tuple(s.ReceiptSchema().fields)
#: An Ed25519 public key (RFC 8037's example), for the examples.
KEY = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"


# -- games ------------------------------------------------------------------------------
@blp.route("/games", tags=["games"])
class Games(MethodView):
    @blp.arguments(s.GameListArgsSchema, location="query")
    @blp.response(200, s.GameListSchema)
    @blp.doc(operationId="listGames")
    def get(self, args: dict[str, Any]) -> Any:
        """List games, newest first.

        `?status=lobby` lists the games you can join. Example: `GET /games?status=lobby&limit=20`;
        pass the answer's `before` for the next page."""
        return kontor().listing(args["status"], args["limit"], args["before"])

    @blp.arguments(s.CreateGameSchema, example={
        "title": "haendler", "seats": 3, "host_key": KEY, "name": "Friday table",
        "deadlines": {"sealed_seconds": 86400, "on_expiry": "defaults"}})
    @blp.response(201, s.GameSchema)
    @blp.idempotent(lambda body: "host-" + key_client(body.get("host_key")))
    @blp.doc(operationId="createGame")
    def post(self, body: dict[str, Any]) -> Any:
        """Create a game.

        The creator registers the host key that starts the game and manages seats. Example:
        `POST /games` with `{"title": "haendler", "seats": 3, "host_key": "<your public key>"}` and an
        `Idempotency-Key` header answers 201 with the game and its `Location`."""
        game = kontor().create_game(body["title"], body["seats"], body["options"], body["deadlines"],
                                    body["seed"], body["host_key"], body["name"],
                                    mail_orders=body["mail_orders"], press=body["press"])
        return game, 201, {"Location": f"/games/{game['id']}"}


def _game(gid: str, **_: Any) -> Any:
    return kontor().game(gid)


@blp.route("/games/<gid>", tags=["games"])
class GameResource(MethodView):
    @blp.etag
    @blp.response(200, s.GameSchema)
    @blp.doc(operationId="getGame")
    def get(self, gid: str) -> Any:
        """A game: title, options, deadlines, players, the open phase, the result.

        Example: `GET /games/3f9c2a1b7e` answers the game with an `ETag`."""
        return kontor().game(gid)

    @blp.arguments(s.GamePatchSchema, example={"status": "running"})
    @blp.response(200, s.GameSchema)
    @blp.bearer("host")
    @blp.if_match(_game, s.GameSchema)
    @blp.doc(operationId="updateGame")
    def patch(self, body: dict[str, Any], gid: str) -> Any:
        """Start the game (host only).

        Example: `PATCH /games/3f9c2a1b7e` with `{"status": "running"}` and the host's bearer token; send
        `If-Match` with the game's `ETag` to start it only if nothing changed since you read it."""
        return kontor().start(gid)


@blp.route("/games/<gid>/history", tags=["games"])
class History(MethodView):
    @blp.response(200, s.HistorySchema)
    @blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM,
                      description="The game is not over yet (`forbidden`): the seed stays secret until then.")
    @blp.doc(operationId="getHistory")
    def get(self, gid: str) -> Any:
        """Once the game is over, its history (format `kontor-history/1`).

        The seed and its commitment, and per step the accepted orders, the seats given defaults,
        the SHA-256 of the state after it and the engine's events; and the result. `python -m engine
        verify FILE` replays it and checks every draw, state and event. Example: `GET
        /games/3f9c2a1b7e/history > game.json`."""
        return kontor().published_history(gid)


# -- seats ------------------------------------------------------------------------------
def _seat(gid: str, seat: int, **_: Any) -> Any:
    return kontor().seat(gid, seat)


@blp.route("/games/<gid>/seats", tags=["seats"])
class Seats(MethodView):
    @blp.response(200, s.PlayerSchema(many=True))
    @blp.doc(operationId="listSeats")
    def get(self, gid: str) -> Any:
        """Every seat: name, bot, key id.

        Example: `GET /games/3f9c2a1b7e/seats`."""
        return kontor().game(gid)["players"]

    @blp.arguments(s.JoinSchema, example={"name": "Ada", "public_key": KEY, "seat": 1})
    @blp.response(201, s.PlayerSchema)
    @blp.idempotent(lambda body, gid: f"{gid}-" + key_client(body.get("public_key")))
    @blp.doc(operationId="joinGame")
    def post(self, body: dict[str, Any], gid: str) -> Any:
        """Join a game in its lobby with a display name and your Ed25519 public key.

        Example: `POST /games/3f9c2a1b7e/seats` with `{"name": "Ada", "public_key": "<your public key>"}`
        and an `Idempotency-Key` header answers 201 with your seat."""
        seat = kontor().join(gid, body["name"], body["public_key"], body["seat"])
        return seat, 201, {"Location": f"/games/{gid}/seats/{seat['seat']}"}


@blp.route("/games/<gid>/seats/<int:seat>", tags=["seats"])
class SeatResource(MethodView):
    @blp.etag
    @blp.response(200, s.PlayerSchema)
    @blp.doc(operationId="getSeat")
    def get(self, gid: str, seat: int) -> Any:
        """One seat, with an `ETag`.

        Example: `GET /games/3f9c2a1b7e/seats/0`."""
        return kontor().seat(gid, seat)

    @blp.arguments(s.SeatPatchSchema, example={"bot": "greedy"})
    @blp.response(200, s.PlayerSchema)
    @blp.bearer("host")
    @blp.if_match(_seat, s.PlayerSchema)
    @blp.doc(operationId="updateSeat")
    def patch(self, body: dict[str, Any], gid: str, seat: int) -> Any:
        """Host only: make the seat a bot, give it to a new player key, or rename it.

        Works in the lobby and during the game (to replace an absent player). Example: `PATCH
        /games/3f9c2a1b7e/seats/2` with `{"bot": "greedy"}`; send `If-Match` with the seat's `ETag` to
        change it only if nothing changed since you read it."""
        return kontor().update_seat(gid, seat, body.get("name"), body.get("public_key"), body.get("bot"),
                                    clear_bot="bot" in body and body["bot"] is None)


# -- phases and orders ------------------------------------------------------------------
@blp.route("/games/<gid>/phases/current", tags=["phases"])
class CurrentPhase(MethodView):
    @blp.etag
    @blp.response(200, s.PhaseSchema)
    @blp.bearer()
    @blp.doc(operationId="getCurrentPhase")
    def get(self, gid: str, caller: Caller) -> Any:
        """The open phase: who must answer, the deadline, who has answered (never what).

        With a seat's bearer token, also that seat's choices, order schema and default, and
        (`asked`) what is asked of it in the title's words. Example: `GET
        /games/3f9c2a1b7e/phases/current` with `Authorization: Bearer <token>`.

        Without a bearer token, a poll that would repeat, within `KONTOR_POLL_PACE_MS`
        (default 200) ms, the answer (the `ETag`) the client's address was last given is
        held until the game changes or that pace has passed since that answer, then read
        and answered: never stale; pacing delays, never refuses (docs/api.md, "Polling the open step")."""
        return kontor().current_phase(gid, caller)


@blp.route("/games/<gid>/phases/<int:phase>/orders/<int:seat>", tags=["phases"])
class OrderResource(MethodView):
    @blp.arguments(s.OrderSubmitSchema, example={"token": "eyJhbGciOiJFZERTQSIsImtpZCI6Ii4uLiJ9.eyJnYW1lIjoi..."
                                                          ".c2lnbmF0dXJl"})
    @blp.response(202, s.ReceiptSchema)
    @blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM,
                      description="The phase is not open (stale, resolving, or not asking this seat); "
                                  "the problem carries the open `phase`.")
    @blp.doc(operationId="submitOrder")
    def put(self, body: dict[str, Any], gid: str, phase: int, seat: int) -> Any:
        """Submit (or replace, until the step resolves) a seat's order for a phase.

        The order is a signed order token (claims `game`, `phase`, `seat`, `iat`, `jti`, `order`);
        the answer is 202 with a receipt. Example: `PUT /games/3f9c2a1b7e/phases/4/orders/1` with
        `{"token": "<compact JWS>"}` (`kontor order` makes and sends one)."""
        k = kontor()
        token = body["token"]
        claims, snap = signed_order(k, gid, phase, seat, token)
        receipt = k.submit(gid, phase, seat, claims["order"], via="http", jti=claims["jti"], token=token,
                           snapshot=snap)
        # The receipt has exactly ReceiptSchema's fields, already of their types: answered as
        # it is (the same JSON), this hottest path skips the schema dump.
        return jsonify({name: receipt[name] for name in _RECEIPT_FIELDS}), 202

    @blp.response(200, s.ReceiptSchema)
    @blp.bearer("seat")
    @blp.doc(operationId="getOrder")
    def get(self, gid: str, phase: int, seat: int) -> Any:
        """Your own stored order for the open phase (seat's bearer token).

        Example: `GET /games/3f9c2a1b7e/phases/4/orders/1` with seat 1's bearer token."""
        return kontor().own_order(gid, phase, seat)


# -- choices and actions ---------------------------------------------------------------
def choices_caller(k: Any, gid: str, seat: int, cap: str | None) -> None:
    """A choices request is a seat's read: its bearer token, or (without one) the
    capability of its mail's page link for the open step (as the seat's page takes it)."""
    auth = request.headers.get("Authorization")
    if auth or cap is None:
        require(bearer_caller(k, gid, auth), seat)
        return
    k.check_seat(k._meta(gid), seat)
    ph = k.store.phase(gid)
    if not ph.get("id") or not cap.isascii():
        raise Problem("bad_page_link", "that page link is not this seat's for the open step")
    verify_page_cap(k, gid, int(ph["id"]), seat, cap)
    if ph.get("status") != "collecting" or (k.store.seats(gid).get(seat) or {}).get("bot"):
        raise Problem("bad_page_link", "that page link is not this seat's for the open step")


@blp.route("/games/<gid>/seats/<int:seat>/choices", tags=["seats"])
class ChoicesResource(MethodView):
    @blp.arguments(s.ChoicesRequestSchema, example={"picks": ["wein"], "of": "order"})
    @blp.response(200, s.ChoicesSchema)
    @blp.alt_response(401, response="UNAUTHORIZED")
    @blp.alt_response(403, response="FORBIDDEN")
    @blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM, description=(
        "Nothing to choose: the seat is not asked (`not_your_turn`), may do nothing unprompted (`no_action`), the "
        "title offers the decision only as an order (`no_choices`), or the game has not started or is over."))
    @blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM, description=(
        "A pick, or the words, answer nothing the decision offers (`bad_pick`), or the body is not valid "
        "(`invalid_request`)."))
    @blp.doc(operationId="getChoices", security=[{"bearer": []}, {}])
    def post(self, body: dict[str, Any], gid: str, seat: int) -> Any:
        """A seat's open decision (or what it may do unprompted) in words, level by level.

        Send the picks made so far; the answer says what to do, what may be picked next (`ask`: options
        with labels and the ids of their places in the picture, a number with its bounds, or a sheet of
        numbers) and, once the picks make a whole order, that order and the order as a sentence. With
        `words`, a person's words ("cart 2 to Brügge", "Tuch 5, Wein 6", "2") are read as further picks.
        Changes nothing. The seat's bearer token (or its mail link's `cap`). Example: `POST
        /games/3f9c2a1b7e/seats/1/choices` with `{"picks": ["wein"]}`."""
        k = kontor()
        choices_caller(k, gid, seat, body.get("cap"))
        return k.choices(gid, seat, body["picks"], body["of"], body.get("words"))


@blp.route("/games/<gid>/seats/<int:seat>/actions", tags=["seats"])
class ActionResource(MethodView):
    @blp.arguments(s.ActionSubmitSchema, example={"token": "eyJhbGciOiJFZERTQSIsImtpZCI6Ii4uLiJ9.eyJnYW1lIjoi..."
                                                           ".c2lnbmF0dXJl"})
    @blp.response(200, s.ActionResultSchema)
    @blp.alt_response(401, response="UNAUTHORIZED")
    @blp.alt_response(403, response="FORBIDDEN")
    @blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM, description=(
        "No such action may be taken now (`no_action`), the host has paused the game (`game_paused`), or the "
        "game has not started or is over."))
    @blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM, description=(
        "The rules refuse the action (the title's code), or it is not a JSON object (`malformed_order`)."))
    @blp.doc(operationId="takeAction")
    def post(self, body: dict[str, Any], gid: str, seat: int) -> Any:
        """Take an unprompted action (one the rules allow at any time), signed with the seat's key.

        The action is an action prompt's complete `order` (`POST /games/{id}/seats/{seat}/choices` with
        `{"of": "action"}`), sent as a signed action token (claims `game`, `seat`, `iat`, `jti`, `action`).
        It is applied at once and exactly once (a second use of the token is `token_replayed`); a refusal
        is told to you only. The answer lists the action's events you may see, in words. Example: `POST
        /games/3f9c2a1b7e/seats/1/actions` with `{"token": "<compact JWS>"}` (`kontor act` makes one)."""
        k = kontor()
        claims = signed_action(k, gid, seat, body["token"])
        return k.act(gid, seat, claims.action, via="http", jti=claims.jti)


# -- views and events -------------------------------------------------------------------
@blp.route("/games/<gid>/view", tags=["views"])
class View(MethodView):
    @blp.etag
    @blp.response(200, s.ViewSchema)
    @blp.bearer()
    @blp.doc(operationId="getView")
    def get(self, gid: str, caller: Caller) -> Any:
        """The game as the caller may see it (a seat with its bearer token, else the public).

        The view as JSON (`state`), and in the title's words its `headline` and `summary`.
        Example: `GET /games/3f9c2a1b7e/view` with `Authorization: Bearer <token>`."""
        return kontor().view(gid, caller)


@blp.route("/games/<gid>/picture.svg", tags=["views"])
class Picture(MethodView):
    @blp.response(200, {"type": "string"}, content_type=SVG, headers=CONDITIONAL_HEADERS, description=(
        "An SVG picture of the table as the caller may see it (accessible: text labels and titles)."))
    @blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM, description="No such game (`game_not_found`).")
    @blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM,
                      description="The game has not started (`game_not_started`).")
    @blp.bearer()
    @blp.doc(operationId="getPicture", **CONDITIONAL_DOC)
    def get(self, gid: str, caller: Caller) -> Any:
        """The game as a picture (the title's SVG of the caller's view).

        A seat with its bearer token sees its own hidden facts; the host and anyone else the public
        view. Revalidate with `If-None-Match`: unchanged, it answers 304. Example: `GET
        /games/3f9c2a1b7e/picture.svg`."""
        resp = conditional(kontor().picture(gid, caller), SVG)
        resp.vary.add("Authorization")  # each seat has a picture of its own
        return resp


@blp.route("/games/<gid>/events", tags=["views"])
class Events(MethodView):
    @blp.etag
    @blp.arguments(s.EventsArgsSchema, location="query")
    @blp.response(200, s.EventPageSchema)
    @blp.bearer()
    @blp.doc(operationId="listEvents")
    def get(self, args: dict[str, Any], gid: str, caller: Caller) -> Any:
        """The game's events after `after`, oldest first, only those the caller may see.

        Ids are the caller's own: the public (and the host) and each seat number the events they may
        see 1, 2, 3, ... with no gaps, so an id reveals nothing about events the caller may not see.
        Example: `GET /games/3f9c2a1b7e/events?after=120&limit=50`; pass the answer's `next` as
        `after` for the next page."""
        return kontor().events(gid, caller, args["after"], args["limit"])


@blp.route("/games/<gid>/stream", tags=["views"])
class Stream(MethodView):
    @blp.arguments(s.StreamArgsSchema, location="query")
    @blp.arguments(s.StreamHeadersSchema, location="headers")
    @blp.response(200, {"type": "string"}, content_type=EVENT_STREAM, headers=STREAM_HEADERS, description=(
        "Server-sent events, cut to what the caller may see: `event: step` (data `{\"phase\": <step number, "
        "null in the lobby>, \"status\": \"collecting\"|\"resolving\"|\"finished\"|\"lobby\"}`; first on "
        "connecting, then whenever the step changes), `event: game` with `id: <event id>` (data: the item "
        "`GET /games/{id}/events` lists, plus `sentence`, the event in words, null when it says nothing "
        "new), and `: keep-alive` comments at least every 15 s. When the server ends the stream its last "
        "frame is `event: closed` with data `{\"code\": ..., \"detail\": <why, in words>}`: `token_expired` "
        "(reconnect with a fresh token), `seat_changed` (the host gave the seat to another key or a bot; "
        "nothing of the new holder is ever sent), `idle` (a stream without a token had no event for "
        "`stream_idle_timeout` seconds; reconnect when the person is back), `game_not_found`. It also ends, "
        "without that frame, once the game is over."),
        example='event: step\ndata: {"phase":4,"status":"collecting"}\n\n')
    @blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM, description="No such game (`game_not_found`).")
    @blp.alt_response(429, schema=ProblemSchema, content_type=PROBLEM, headers=RETRY_HEADERS, description=(
        "Too many live streams are open (`too_many_streams`): on this server process, from this client "
        "address, or on this game. Try again after `Retry-After` seconds, or poll the game meanwhile."))
    @blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM,
                      description="`Last-Event-ID` or `after` is not an event id (`invalid_request`).")
    @blp.alt_response(401, response="UNAUTHORIZED")
    @blp.doc(operationId="streamGame", security=BEARER_OPTIONAL)
    def get(self, args: dict[str, Any], headers: dict[str, Any], gid: str) -> Any:
        """Follow the game live: its steps and events as they happen (server-sent events).

        No polling: a new step or event reaches the stream as it is committed. A seat's bearer token
        shows what that seat may see (the same events as `GET /games/{id}/events`); no token, or the
        host's, the public. The `id:` of an event is the caller's own id of it, as `/events` gives it.
        To resume, reconnect with `Last-Event-ID` (or `?after=`) set to the last event id received:
        the events after it come first. When the token expires the server ends the stream; reconnect
        with a fresh token. A seat's stream ends at once when the host gives the seat to another key
        or a bot (`event: closed`, `seat_changed`). Open streams are capped per server process, client
        address and game (429 `too_many_streams`). Example: `GET /games/3f9c2a1b7e/stream` with `Accept:
        text/event-stream` and `Authorization: Bearer <token>`."""
        k = kontor()
        caller, until, kid = bearer_session(k, gid, request.headers.get("Authorization"))
        after = headers["last_event_id"] if headers["last_event_id"] is not None else args["after"] or 0
        # The caps (per process, address and game) before anything is read; the place is
        # given back when the stream ends, or when its answer is closed before it began.
        ticket = k.live_hub().admit(gid, request.remote_addr or "unknown", k.settings)
        try:  # problems (no such game) before the first byte
            live = Live(k, gid, caller, after, until, kid,
                        idle=k.settings.stream_idle_timeout if until is None else None)
        except BaseException:
            ticket.release()
            raise
        resp = Response(stream_with_context(live.frames(ticket=ticket)), status=200, content_type=EVENT_STREAM)
        resp.call_on_close(ticket.release)
        resp.headers["Cache-Control"] = "no-store"
        resp.headers["X-Accel-Buffering"] = "no"  # a proxy in front must not buffer the stream
        return resp


# -- contact settings and deliveries ----------------------------------------------------
@blp.route("/games/<gid>/seats/<int:seat>/contact", tags=["contacts"])
class ContactResource(MethodView):
    @blp.response(200, s.ContactOutSchema)
    @blp.bearer("seat", or_host=True)
    @blp.doc(operationId="getContact")
    def get(self, gid: str, seat: int, caller: Caller) -> Any:
        """A seat's contact settings (the seat's bearer token; the host sees them masked).

        Example: `GET /games/3f9c2a1b7e/seats/1/contact` with seat 1's bearer token."""
        return get_contact(kontor(), gid, seat, caller)

    @blp.arguments(s.ContactSchema, example={"email": "ada@example.org", "timezone": "Europe/Berlin",
                                             "reminder_lead": 3600, "delivery": "asked"})
    @blp.response(200, s.ContactOutSchema)
    @blp.bearer("seat")
    @blp.doc(operationId="setContact")
    def put(self, body: dict[str, Any], gid: str, seat: int) -> Any:
        """Set where the seat's notifications go.

        Email, webhook (a new URL answers its signing secret once), reminder lead time, time zone,
        immediate or digest; fields left out keep their value, null clears. Example: `PUT
        /games/3f9c2a1b7e/seats/1/contact` with `{"email": "ada@example.org"}`."""
        return set_contact(kontor(), gid, seat, body)


@blp.route("/games/<gid>/seats/<int:seat>/deliveries", tags=["contacts"])
class DeliveryList(MethodView):
    @blp.arguments(s.DeliveryListArgsSchema, location="query")
    @blp.response(200, s.DeliverySchema(many=True))
    @blp.bearer("seat", or_host=True)
    @blp.doc(operationId="listDeliveries")
    def get(self, args: dict[str, Any], gid: str, seat: int, caller: Caller) -> Any:
        """The seat's mails and webhook deliveries, newest first, with their outcome.

        For the seat (the addresses of its former holders masked), or the host with targets masked. Example: `GET
        /games/3f9c2a1b7e/seats/1/deliveries?limit=20`."""
        k = kontor()
        k.check_seat(k._meta(gid), seat)
        hidden = set() if caller == "host" else former_targets(k, gid, seat)
        return [public_delivery(d, caller == "host" or d.get("target") in hidden)
                for d in k.store.deliveries(gid, seat, args["limit"])]


@blp.route("/games/<gid>/seats/<int:seat>/deliveries/<did>/retry", tags=["contacts"])
class DeliveryRetry(MethodView):
    @blp.response(202, s.DeliverySchema)
    @blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM,
                      description="The delivery has not failed, or its webhook is still disabled.")
    @blp.bearer("seat")
    @blp.doc(operationId="retryDelivery")
    def post(self, gid: str, seat: int, did: str) -> Any:
        """Try a failed or disabled delivery again (the seat's bearer token).

        A webhook keeps its `webhook-id`; re-enable a disabled webhook by setting its URL first.
        Example: `POST /games/3f9c2a1b7e/seats/1/deliveries/d-7f3a/retry`."""
        return public_delivery(redeliver(kontor(), gid, seat, did), for_host=False)
