"""HTTP resources: in-game messages (see `service.core.press` for the rulings)."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView
from marshmallow import fields as f

from service.core import press
from service.core.kontor import Caller
from service.http import schemas as s
from service.http.api import PROBLEM, Blueprint, ProblemSchema, Schema, kontor

press_blp = Blueprint("press", __name__, description="In-game messages between seats (press).")


_NOT_CONTROL = r"[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
#: What `press.clean_text` takes, for the document: no control character but line breaks
#: and tabs, and something that is not white space.
TEXT_PATTERN = rf"^{_NOT_CONTROL}*[^\s\x00-\x1f\x7f-\x9f]{_NOT_CONTROL}*$"


class MessageInSchema(Schema):
    to = f.Raw(load_default="all", metadata={
        "oneOf": [{"type": "string", "enum": ["all"]},
                  {"type": "array", "items": {"type": "integer", "minimum": 0}, "minItems": 1, "uniqueItems": True}],
        "description": '`"all"` for a public message, or a list of other seats\' numbers for a private one.'})
    text = f.String(required=True, metadata={
        "description": f"1 to {press.MAX_TEXT} characters; line breaks and tabs are the only control "
                       "characters allowed.",
        "minLength": 1, "maxLength": press.MAX_TEXT, "pattern": TEXT_PATTERN})


class MessageSchema(Schema):
    id = f.Integer(metadata={"description": "The message's event id, as you number your events (1, 2, 3, ... "
                                            "over the events you may see)."})
    at = f.String()
    from_ = f.Raw(data_key="from", attribute="from", metadata={"description": "A seat number, or `host`."})
    to = f.Raw(metadata={"description": '`"all"`, or the recipient seats.'})
    text = f.String()
    phase = f.Integer(metadata={"description": "The step open when it was written (0 before the start)."})


class MessagePageSchema(Schema):
    items = f.List(f.Nested(MessageSchema), metadata={"description": "Only the messages you may see."})
    next = f.Integer(metadata={"description": "Pass as `after` for the next page."})
    more = f.Boolean()
    last = f.Integer(metadata={"description": "The id of your last event."})


@press_blp.route("/games/<gid>/messages", tags=["press"])
class Messages(MethodView):
    @press_blp.etag
    @press_blp.arguments(s.EventsArgsSchema, location="query")
    @press_blp.response(200, MessagePageSchema)
    @press_blp.bearer()
    @press_blp.doc(operationId="listMessages")
    def get(self, args: dict[str, Any], gid: str, caller: Caller) -> Any:
        """The messages after event id `after`, oldest first.

        Public ones for everyone, and with a seat's bearer token the private ones that seat wrote or
        received. Example: `GET /games/3f9c2a1b7e/messages?after=0`."""
        return press.messages(kontor(), gid, caller, args["after"], args["limit"])

    @press_blp.arguments(MessageInSchema, example={"to": [2], "text": "Cloth to Bruges, you take the wine?"})
    @press_blp.response(201, MessageSchema)
    @press_blp.alt_response(429, schema=ProblemSchema, content_type=PROBLEM,
                            description="Too many messages: the problem's `retry_after` and the `Retry-After` "
                                        "header say when to try again.")
    @press_blp.bearer("any")
    @press_blp.idempotent(lambda body, gid, caller: f"{gid}-press-{caller}")
    @press_blp.doc(operationId="postMessage")
    def post(self, body: dict[str, Any], gid: str, caller: Caller) -> Any:
        """Write a message: to everyone (`"to": "all"`), or privately to other seats.

        A seat's bearer token; the host writes public announcements only. Example: `POST
        /games/3f9c2a1b7e/messages` with `{"to": "all", "text": "Good luck!"}` and an `Idempotency-Key`."""
        return press.post(kontor(), gid, caller, body["to"], body["text"]), 201
