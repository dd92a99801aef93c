"""HTTP resources of the host's clock (issue 25): pause, resume and extend a running
game's open step (see `service.core.hosting` for the rulings). Host only: the host's
bearer token, as `PATCH /games/{gid}`."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView

from service.config import Settings
from service.http import schemas as s
from service.http.api import PROBLEM, Blueprint, ProblemSchema, Schema, kontor
from service.http.schemas.fields import Int

hosting_blp = Blueprint("hosting", __name__, description="The host's clock: pause, resume and extend a running game.")

_NOT_RUNNING = "the game has not started (`game_not_started`) or is over (`game_finished`)"


class ExtendSchema(Schema):
    seconds = Int(required=True, metadata={
        "description": "Seconds to add to the open step's deadline: a whole number within the server's step "
                       "bounds (`bad_extension` otherwise).",
        "minimum": Settings.min_step_seconds, "maximum": Settings.max_step_seconds})


@hosting_blp.route("/games/<gid>/pause", tags=["hosting"])
class Pause(MethodView):
    @hosting_blp.response(200, s.GameSchema)
    @hosting_blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM, description="No such game "
                              "(`game_not_found`).")
    @hosting_blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM, description=(
        "The game is paused already (`game_paused`), its step is being resolved (`step_locked`: try again in a "
        f"moment), or {_NOT_RUNNING}."))
    @hosting_blp.bearer("host")
    @hosting_blp.doc(operationId="pause")
    def post(self, gid: str) -> Any:
        """Pause the game (host only): the open step's clock stops.

        Its deadline moves on by exactly the time paused when the host resumes it. While paused, nothing
        resolves and no deadline passes; players may still read, write messages and enter or change their
        orders, but take no unprompted action (`game_paused`). Every seat is told (`game_paused` event).
        Example: `POST /games/3f9c2a1b7e/pause` with the host's bearer token answers the game, with its
        `paused_since`."""
        return kontor().pause(gid)


@hosting_blp.route("/games/<gid>/resume", tags=["hosting"])
class Resume(MethodView):
    @hosting_blp.response(200, s.GameSchema)
    @hosting_blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM, description="No such game "
                              "(`game_not_found`).")
    @hosting_blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM, description=(
        f"The game is not paused (`game_not_paused`), or {_NOT_RUNNING}."))
    @hosting_blp.bearer("host")
    @hosting_blp.doc(operationId="resume")
    def post(self, gid: str) -> Any:
        """Resume a paused game (host only): the clock runs again.

        The open step's deadline moves on by exactly the time paused; if every asked seat answered meanwhile,
        the step resolves now. Every seat is told (`game_resumed` event, with the time paused and the new
        deadline). Example: `POST /games/3f9c2a1b7e/resume` with the host's bearer token answers the game."""
        return kontor().resume(gid)


@hosting_blp.route("/games/<gid>/extend", tags=["hosting"])
class Extend(MethodView):
    @hosting_blp.arguments(ExtendSchema, example={"seconds": 86400})
    @hosting_blp.response(200, s.GameSchema)
    @hosting_blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM, description="No such game "
                              "(`game_not_found`).")
    @hosting_blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM, description=(
        f"The step is being resolved (`step_locked`), or {_NOT_RUNNING}."))
    @hosting_blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM, description=(
        "`seconds` is not a whole number within the server's step bounds (`bad_extension`, or "
        "`invalid_request` for a body that is not `{\"seconds\": N}`)."))
    @hosting_blp.bearer("host")
    @hosting_blp.idempotent(lambda body, gid: f"{gid}-extend")
    @hosting_blp.doc(operationId="extend")
    def post(self, body: dict[str, Any], gid: str) -> Any:
        """Extend the open step's deadline by `seconds` (host only).

        Allowed while paused too (the deadline then moves on again when the game resumes). Every seat is told
        (`deadline_extended` event). Send an `Idempotency-Key`: a retry with the same key does not extend
        twice. Example: `POST /games/3f9c2a1b7e/extend` with `{"seconds": 86400}`, the host's bearer token and
        an `Idempotency-Key` answers the game with its new deadline."""
        return kontor().extend(gid, body["seconds"]), 200
