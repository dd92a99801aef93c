"""HTTP resources: in-game messages (see `service.core.press` for the rulings)."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import fields as f

from service.core import press
from service.core.errors import Problem
from service.http import schemas as s
from service.http.api import PROBLEM, ProblemSchema, Schema, problem_response
from service.http.resources.games import BEARER, IDEM_HELP, _replay_or, caller_of, idempotent, kontor

press_blp = Blueprint("press", __name__, description="In-game messages between seats (press).")


class MessageInSchema(Schema):
    to = f.Raw(load_default="all", metadata={
        "description": '`"all"` for a public message, or a list of other seats\' numbers for a private one.'})
    text = f.String(required=True, metadata={
        "description": f"1 to {press.MAX_TEXT} characters; line breaks and tabs are the only control "
                       "characters allowed."})


class MessageSchema(Schema):
    id = f.Integer(metadata={"description": "The message's event number."})
    at = f.String()
    from_ = f.Raw(data_key="from", attribute="from", metadata={"description": "A seat number, or `host`."})
    to = f.Raw(metadata={"description": '`"all"`, or the recipient seats.'})
    text = f.String()
    phase = f.Integer(metadata={"description": "The step open when it was written (0 before the start)."})


class MessagePageSchema(Schema):
    items = f.List(f.Nested(MessageSchema), metadata={"description": "Only the messages you may see."})
    next = f.Integer(metadata={"description": "Pass as `after` for the next page."})
    more = f.Boolean()
    last = f.Integer(metadata={"description": "The game's last event number."})


@press_blp.route("/games/<gid>/messages")
class Messages(MethodView):
    @press_blp.etag
    @press_blp.arguments(s.EventsArgsSchema, location="query")
    @press_blp.response(200, MessagePageSchema)
    @press_blp.doc(security=BEARER)
    def get(self, args: dict[str, Any], gid: str) -> Any:
        """The messages after event `after`, oldest first: public ones for everyone, and
        with a seat's bearer token the private ones that seat wrote or received."""
        return press.messages(kontor(), gid, caller_of(gid), args["after"], args["limit"])

    @press_blp.arguments(MessageInSchema)
    @press_blp.response(201, MessageSchema)
    @press_blp.alt_response(429, schema=ProblemSchema, content_type=PROBLEM,
                            description="Too many messages: the problem's `retry_after` and the `Retry-After` "
                                        "header say when to try again.")
    @press_blp.doc(security=BEARER[:1],
                   parameters=[{"in": "header", "name": "Idempotency-Key", **IDEM_HELP["Idempotency-Key"]}])
    def post(self, body: dict[str, Any], gid: str) -> Any:
        """Write a message: to everyone (`"to": "all"`), or privately to other seats (a
        seat's bearer token; the host writes public announcements only)."""
        caller = caller_of(gid)
        if caller == "public":
            raise Problem("authentication_required", "sign a bearer token with your seat's or the host's key")

        def run() -> tuple[Any, int, dict[str, str]]:
            return press.post(kontor(), gid, caller, body["to"], body["text"]), 201, {}

        try:
            return _replay_or(idempotent(f"{gid}-press-{caller}", run))
        except Problem as exc:
            if exc.code != "rate_limited":
                raise
            resp = problem_response(exc)
            resp.headers["Retry-After"] = str(exc.extra["retry_after"])
            return resp
