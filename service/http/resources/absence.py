"""HTTP resources of absences (issue 25): a seat declares the dates it is away; the
host changes the game's absence policy. See `service.core.absence` for the rulings."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView

from service.core.kontor import Caller
from service.http import schemas as s
from service.http.api import PROBLEM, Blueprint, ProblemSchema, kontor

absence_blp = Blueprint("absences", __name__, description="Absences: the dates a seat is away, and what the game "
                                                          "does about them.")


@absence_blp.route("/games/<gid>/seats/<int:seat>/absences", tags=["absences"])
class AbsencesResource(MethodView):
    @absence_blp.response(200, s.AbsencesSchema)
    @absence_blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM,
                              description="No such game (`game_not_found`) or seat (`no_such_seat`).")
    @absence_blp.doc(operationId="getAbsences")
    def get(self, gid: str, seat: int) -> Any:
        """A seat's absences not ended yet (public: they explain a moved deadline).

        Example: `GET /games/3f9c2a1b7e/seats/1/absences`."""
        return kontor().get_absences(gid, seat)

    @absence_blp.arguments(s.AbsencesInSchema, example={
        "absences": [{"from": "2026-12-20T00:00:00Z", "until": "2027-01-03T00:00:00Z"}]})
    @absence_blp.response(200, s.AbsencesSchema)
    @absence_blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM, description=(
        "`bad_absence` (with the `field`): not a UTC time or date, `until` not after `from`, too long, ending too "
        "far ahead, over already, overlapping, or too many. Nothing is stored."))
    @absence_blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM, description=(
        "`game_finished`: the game is over; `step_locked`: the open step is being resolved (try again in a "
        "moment)."))
    @absence_blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM,
                              description="No such game (`game_not_found`) or seat (`no_such_seat`).")
    @absence_blp.bearer("seat")
    @absence_blp.doc(operationId="absence")
    def put(self, body: dict[str, Any], gid: str, seat: int) -> Any:
        """Declare the dates the seat is away, replacing those declared before (`[]`: back).

        The seat's bearer token. While it is away, the game's policy (`deadlines.absence`) either moves a
        deadline that falls in the absence or lets a bot play the seat; afterwards the seat is told what was
        played for it. Example: `PUT /games/3f9c2a1b7e/seats/1/absences` with `{"absences": [{"from":
        "2026-12-20", "until": "2027-01-03"}]}`."""
        return kontor().set_absences(gid, seat, body["absences"])


@absence_blp.route("/games/<gid>/absence-policy", tags=["absences"])
class AbsencePolicyResource(MethodView):
    @absence_blp.arguments(s.AbsencePolicySchema, example={"absence": "bot", "absence_bot": "greedy"})
    @absence_blp.response(200, s.GameSchema)
    @absence_blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM, description=(
        "`absence_in_use`: a seat is away now, or the open step's deadline was extended for an absence; "
        "`game_finished`."))
    @absence_blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM,
                              description="`bad_deadline_policy` (with the `field`).")
    @absence_blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM,
                              description="No such game (`game_not_found`).")
    @absence_blp.bearer("host")
    @absence_blp.doc(operationId="updateAbsencePolicy")
    def patch(self, body: dict[str, Any], gid: str, caller: Caller) -> Any:
        """Change the game's absence policy (the host's bearer token), while nobody is waiting on it.

        Fields left out keep their value. Example: `PATCH /games/3f9c2a1b7e/absence-policy` with
        `{"absence": "bot"}`."""
        return kontor().update_absence_policy(gid, body)
