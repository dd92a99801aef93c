"""HTTP resources: the host's rollback, with the players' consent (see `service.core.rollback`
for the rulings)."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView
from marshmallow import fields as f

from service.core.errors import Problem
from service.core.kontor import Caller
from service.http.api import PROBLEM, Blueprint, ProblemSchema, Schema, kontor
from service.http.schemas.fields import Bool, Int

rollback_blp = Blueprint("rollback", __name__, description="The host rolls the game back to an earlier step; when "
                         "the steps undone revealed something hidden, every human seat must agree first.")


NOT_FOUND = "No such game (`game_not_found`)."
STATE = ("The game has not started (`game_not_started`) or is over (`game_finished`), or the open step is being "
         "resolved (`step_locked`: try again in a moment)")


def _answers(conflict: str, unprocessable: str | None = None) -> Any:
    def decorator(func: Any) -> Any:
        func = rollback_blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM, description=NOT_FOUND)(func)
        func = rollback_blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM,
                                         description=f"{STATE}{conflict}")(func)
        if unprocessable:
            func = rollback_blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM,
                                             description=unprocessable)(func)
        return func

    return decorator


class RollbackInSchema(Schema):
    to_phase = Int(required=True, metadata={
        "description": "The earlier step of the game as it stands to go back to (`GET /games/{id}/rollback` lists "
                       "them in words).", "minimum": 1})


class OptionsArgsSchema(Schema):
    steps = f.Boolean(load_default=True, truthy={"true", "1"}, falsy={"false", "0"}, metadata={
        "description": "`false` leaves the list of steps out (a seat's page reads only the pending proposal)."})


class ConsentInSchema(Schema):
    agree = Bool(required=True, metadata={"description": "`true` to agree, `false` to refuse (one refusal drops "
                                                         "the proposal)."})


class StepChoiceSchema(Schema):
    phase = f.Integer()
    text = f.String(metadata={"description": "The step in words, e.g. \"Step 12: Carla's turn: ...\"."})


class PendingSchema(Schema):
    id = f.String(metadata={"description": "The proposal's id."})
    to_phase = f.Integer()
    at_phase = f.Integer(metadata={"description": "The step open when it was proposed: it lapses when that step "
                                                  "commits."})
    step = f.String(metadata={"description": "The step to go back to, in words."})
    needs = f.List(f.Integer(), metadata={"description": "The human seats whose consent is needed."})
    agreed = f.List(f.Integer(), metadata={"description": "Those that agreed so far."})
    waiting = f.List(f.Integer(), metadata={"description": "Those still to answer."})
    reasons = f.String(metadata={"description": "Why consent is needed, in words."})
    expires_at = f.String(metadata={"description": "When it lapses unless applied before."})
    text = f.String(metadata={"description": "The proposal in words."})


class RollbackOptionsSchema(Schema):
    game = f.String()
    phase = f.Integer(allow_none=True, metadata={
        "description": "The open step; null when the game is not running (in the lobby, or over): then there is "
                       "nothing to go back to."})
    steps = f.List(f.Nested(StepChoiceSchema), metadata={
        "description": "The steps the game may go back to, newest first."})
    pending = f.Nested(PendingSchema, allow_none=True)


class RollbackSchema(Schema):
    game = f.String()
    seat = f.Integer(metadata={"description": "The seat that answered (consent only)."})
    status = f.String(metadata={
        "enum": ["applied", "pending", "agreed", "refused", "withdrawn"],
        "description": "`applied`: the game is back at the step, open as `new_phase`; `pending`: every human seat "
                       "must agree first; `agreed`: your consent is recorded, others are awaited; `refused`: your "
                       "refusal dropped the proposal; `withdrawn`: the host took it back."})
    to_phase = f.Integer()
    at_phase = f.Integer()
    new_phase = f.Integer(allow_none=True, metadata={"description": "The new open step, once applied."})
    pending = f.Nested(PendingSchema, allow_none=True)
    text = f.String(allow_none=True, metadata={"description": "What happened, in words."})


@rollback_blp.route("/games/<gid>/rollback", tags=["rollback"])
class Rollback(MethodView):
    @rollback_blp.arguments(OptionsArgsSchema, location="query")
    @rollback_blp.response(200, RollbackOptionsSchema)
    @rollback_blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM, description=NOT_FOUND)
    @rollback_blp.doc(operationId="rollbackOptions")
    def get(self, args: dict[str, Any], gid: str) -> Any:
        """The steps the game may be rolled back to, in words, and the pending proposal, if any.

        Example: `GET /games/3f9c2a1b7e/rollback`."""
        return kontor().rollback_options(gid, steps=args["steps"])

    @rollback_blp.arguments(RollbackInSchema, example={"to_phase": 12})
    @rollback_blp.response(200, RollbackSchema)
    @_answers("; or a proposal waits for consent already (`rollback_pending`); or `to_phase` is not an "
              "earlier step of the game as it stands (`bad_rollback_step`: the open step, a later one, or a step "
              "a rollback undid).",
              "The body is not valid (`invalid_request`).")
    @rollback_blp.bearer("host")
    @rollback_blp.doc(operationId="rollback")
    def post(self, body: dict[str, Any], gid: str) -> Any:
        """Host only: roll the game back to an earlier step (`to_phase`).

        The game returns to the state that step had when it opened and opens it as a new step (the open
        step's number + 1; old order tokens are never accepted again). When the steps undone revealed
        nothing hidden, it applies at once (`applied`); else it waits for every human seat's consent
        (`pending`). Example: `POST /games/3f9c2a1b7e/rollback` with `{"to_phase": 12}`."""
        return kontor().propose_rollback(gid, body["to_phase"])

    @rollback_blp.response(200, RollbackSchema)
    @_answers("; or no proposal waits for consent (`no_rollback_pending`).")
    @rollback_blp.bearer("host")
    @rollback_blp.doc(operationId="rollbackWithdraw")
    def delete(self, gid: str) -> Any:
        """Host only: withdraw the pending rollback proposal.

        Example: `DELETE /games/3f9c2a1b7e/rollback`."""
        return kontor().withdraw_rollback(gid)


@rollback_blp.route("/games/<gid>/rollback/consent", tags=["rollback"])
class Consent(MethodView):
    @rollback_blp.arguments(ConsentInSchema, example={"agree": True})
    @rollback_blp.response(200, RollbackSchema)
    @_answers("; or no proposal waits for consent (`no_rollback_pending`: applied, refused, withdrawn or lapsed).",
              "The body is not valid (`invalid_request`).")
    @rollback_blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM, description=(
        "Only a seat asked to agree answers (`forbidden`)."))
    @rollback_blp.bearer("any")
    @rollback_blp.doc(operationId="rollbackConsent")
    def post(self, body: dict[str, Any], gid: str, caller: Caller) -> Any:
        """A seat agrees to (`{"agree": true}`) or refuses (`{"agree": false}`) the pending rollback.

        With the seat's bearer token. The last human seat's agreement applies it; one refusal drops it.
        Example: `POST /games/3f9c2a1b7e/rollback/consent` with `{"agree": true}`."""
        if not isinstance(caller, int):
            raise Problem("forbidden", "only a seat agrees to or refuses a rollback", status=403)
        return kontor().rollback_consent(gid, caller, body["agree"])
