"""HTTP resources: a finished game's rematch (see `service.core.rematch` for the rulings)."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView

from service.http import schemas as s
from service.http.api import PROBLEM, Blueprint, ProblemSchema, kontor

rematch_blp = Blueprint("rematch", __name__, description="A finished game's rematch: same seats, a new seed.")


@rematch_blp.route("/games/<gid>/rematch", tags=["games"])
class RematchResource(MethodView):
    @rematch_blp.arguments(s.RematchSchema, example={"host_key": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"})
    @rematch_blp.response(201, s.GameSchema, description="The rematch, made and started by this request.")
    @rematch_blp.alt_response(200, schema=s.GameSchema, description=(
        "The rematch was made before (by an earlier or a racing request): the same game."))
    @rematch_blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM, description=(
        "The game is not over yet (`game_not_finished`), or the host key given holds a seat (`key_in_use`)."))
    @rematch_blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM,
                              description="No such game (`game_not_found`).")
    @rematch_blp.bearer("host")
    @rematch_blp.idempotent(lambda body, gid: f"{gid}-rematch-host")
    @rematch_blp.doc(operationId="rematch")
    def post(self, body: dict[str, Any], gid: str) -> Any:
        """Start a rematch of a finished game (host only): same seats and options, a new seed.

        A new game with the same title, seat count, options, deadline policy, mail orders and press, named
        after this one ("Friday table (rematch)"), every seat held by the same player key (and name) or the
        same bot, a new server seed (so a new commitment), started at once. Each seat's contact settings
        carry over. Exactly once: the first request answers 201, any later one (or a racing one) 200 with the
        same game; this game then links it (`rematch`) and its seats are told (`rematch_started`). Send
        `host_key` to host the rematch with a fresh key (else this game's host key hosts it). Example: `POST
        /games/3f9c2a1b7e/rematch` with `{}`, the host's bearer token and an `Idempotency-Key`."""
        game, created = kontor().rematch(gid, body.get("host_key"))
        return game, 201 if created else 200, {"Location": f"/games/{game['id']}"}
