"""RFC 9457 problem details: one exception, one list of stable codes.

Every error the API returns is `application/problem+json` with `type`, `title`,
`status`, `detail` and a stable `code`; clients branch on `code`, never on the text.
The engine's order codes (the generic ones and every registered title's own, see
`Game.order_codes`) are passed through as they are, with status 422.
"""

from __future__ import annotations

from typing import Any

from engine.core import registry
from engine.core.errors import GENERIC_CODES, known_codes

#: code -> (HTTP status, title). Never rename a shipped code; add new ones.
CODES: dict[str, tuple[int, str]] = {
    "invalid_request": (422, "The request body or parameters are not valid."),
    "bad_request": (400, "The request is malformed."),
    "not_found": (404, "No such resource."),
    "game_not_found": (404, "No such game."),
    "no_such_seat": (404, "No such seat in this game."),
    "no_such_phase": (404, "No such step in this game."),
    "title_not_found": (404, "No such title."),
    "rules_not_found": (404, "This title has no player's guide."),
    "method_not_allowed": (405, "Method not allowed."),
    "unsupported_media_type": (415, "Unsupported media type."),
    "bad_options": (422, "The title does not accept these options or seat count."),
    "bad_deadline_policy": (422, "The deadline policy is out of bounds."),
    "bad_public_key": (422, "Not an Ed25519 public key."),
    "unknown_bot": (422, "No bot of that kind for this title."),
    "authentication_required": (401, "This request needs a signed bearer token."),
    "malformed_token": (401, "The token is not a compact JWS with a JSON payload."),
    "bad_algorithm": (401, "Only Ed25519 (EdDSA) signatures are accepted."),
    "unknown_key": (401, "The token's kid is not registered in this game."),
    "bad_signature": (401, "The signature does not verify."),
    "bad_claims": (401, "The token's claims do not match this request."),
    "token_expired": (401, "The token has expired or is too old."),
    "token_from_future": (401, "The token was issued in the future."),
    "token_replayed": (401, "This token's one-time id was used before."),
    "forbidden": (403, "This key may not do that."),
    "not_host": (403, "Only the game's host may do that."),
    "wrong_seat": (403, "The key belongs to another seat."),
    "seat_taken": (409, "That seat is taken."),
    "game_full": (409, "Every seat is taken."),
    "key_in_use": (409, "That key already holds a seat in this game."),
    "game_started": (409, "The game has started; the lobby is closed."),
    "game_expired": (410, "The game was not started in time: its lobby has closed and the game is being removed."),
    "game_not_started": (409, "The game has not started yet."),
    "seats_empty": (409, "Some seats are neither taken nor bots."),
    "game_finished": (409, "The game is over."),
    "game_paused": (409, "The host has paused the game: the clock is stopped, and nothing may change the game "
                         "until the host resumes it."),
    "game_not_paused": (409, "The game is not paused."),
    "bad_extension": (422, "An extension is a whole number of seconds within the server's step bounds."),
    "stale_phase": (409, "That step is not the open one."),
    "step_locked": (409, "The step is being resolved; orders are closed."),
    "not_requested": (409, "This step asks nothing of that seat."),
    "idempotency_key_missing": (400, "This request needs an Idempotency-Key header."),
    "idempotency_key_invalid": (400, "The Idempotency-Key header is not valid."),
    "idempotency_key_in_flight": (409, "A request with this Idempotency-Key is still being processed."),
    "idempotency_key_reused": (422, "This Idempotency-Key was used with another request body."),
    "precondition_failed": (412, "The resource changed since your copy (ETag)."),
    "payload_too_large": (413, "The request body is too large."),
    "rate_limited": (429, "Too many requests."),
    "too_many_streams": (429, "Too many live streams are open; try again later."),
    "bad_email": (422, "Not a valid email address."),
    "bad_timezone": (422, "Not an IANA time zone."),
    "webhook_target_refused": (422, "That webhook target is not allowed (scheme, or a loopback or private address)."),
    "press_disabled": (403, "This game does not allow that kind of message."),
    "bad_message": (422, "The message text is empty, too long or holds control characters."),
    "bad_recipients": (422, "The message's recipients are not other seats of this game."),
    "delivery_not_failed": (409, "Only a failed or disabled delivery can be tried again."),
    "no_such_token": (404, "No such link (it may have been mistyped)."),
    "no_order_block": (422, "The mail holds no '#orders' ... '#end' block outside quoted text."),
    "bad_order_block": (422, "The order block is not an order token, a JSON object or KEY=VALUE lines."),
    "order_block_mismatch": (422, "The '#orders' line names another game, seat or phase than the order."),
    "unsigned_order": (401, "An order mailed to the general address needs a signed order token."),
    "bad_reply_address": (401, "That reply address was not made by this server."),
    "bad_page_link": (401, "That page link was not made by this server for this step and seat."),
    "seat_changed": (403, "That link or reply address was sent to the seat's former player; the seat has "
                          "changed hands since."),
    "reply_orders_disabled": (403, "This game takes orders by email only as signed order tokens."),
    "bad_order_words": (422, "The order in plain words could not be read."),
    "seat_played_by_bot": (409, "A bot plays this seat now; its reply address and page take no order."),
    "auto_submitted": (422, "Automatic mail (auto-replies, bounces, lists) is not taken as orders."),
    "bad_inbound_secret": (401, "The inbound endpoint's shared secret is missing or wrong."),
    "bad_pick": (422, "A pick that the decision does not offer at this point."),
    "no_action": (409, "No such action may be taken now."),
    "no_choices": (409, "The title offers this decision only as an order (its order schema), not in words."),
    # -- rematch (issue 25) --
    "game_not_finished": (409, "The game is not over yet: a rematch follows a finished game."),
    "bad_rollback_step": (409, "That is not an earlier step of the game that stands: a rollback goes back to one."),
    "rollback_pending": (409, "A rollback proposal is waiting for the players' consent; withdraw it first."),
    "no_rollback_pending": (409, "No rollback proposal is waiting for consent (it was applied, refused, withdrawn "
                                 "or has lapsed)."),
    "bad_absence": (422, "An absence is malformed, out of bounds or in the past."),
    "absence_in_use": (409, "A seat is away now or the open step's deadline was extended for an absence: the "
                            "absence policy cannot change until then."),
    "unavailable": (503, "The store is not reachable."),
    "internal_error": (500, "Internal error."),
}
for _code, _text in GENERIC_CODES.items():
    CODES.setdefault(_code, (422, _text))
for _game in registry.titles().values():
    for _code, _text in _game.order_codes.items():
        CODES.setdefault(_code, (422, _text))


class Problem(Exception):
    """Raise anywhere in the service; the API turns it into problem+json."""

    def __init__(self, code: str, detail: str | None = None, status: int | None = None, **extra: Any) -> None:
        # An engine code registered after this module was imported (a title loaded late)
        # is still a refusal by the rules: 422, as every title's codes.
        unknown = (422 if code in known_codes() else 400, code.replace("_", " "))
        known_status, title = CODES.get(code) or unknown
        super().__init__(detail or title)
        self.code = code
        self.status = status or known_status
        self.title = title
        self.detail = detail or title
        self.extra = extra

    def body(self, instance: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": f"/problems/{self.code}",
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
            "code": self.code,
        }
        if instance:
            out["instance"] = instance
        out.update(self.extra)
        return out
