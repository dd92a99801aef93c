"""HTTP resources: inbound mail from a provider's inbound-parse webhook.

`POST /inbound/email` takes a raw mail the way mail providers forward it, keeps it and
queues it exactly like the SMTP listener does (`service.channels.inbound.judge.store_inbound`); the
order in it is judged by the job, and the seat's registered address gets its receipt.

Rulings:
* The endpoint exists only when `KONTOR_INBOUND_SECRET` is set (else 404), and takes
  that shared secret as `Authorization: Bearer <secret>` or as the password of HTTP
  Basic authentication (what most providers can be configured to send).
* A mail may be up to `inbound_max_bytes` (1 MB by default): this route alone raises the
  app's 64 KB body limit.
* Recipients come from the provider's envelope (`envelope` field, SendGrid's JSON), a
  `to` field or query parameter, else the mail's `X-Original-To`, `Delivered-To`, `To`
  and `Cc` headers. They only matter for orders to a secret reply address.
"""

from __future__ import annotations

import hmac
from email import policy
from email.parser import BytesHeaderParser
from email.utils import getaddresses, parseaddr
from typing import Any

from flask import request
from flask.views import MethodView
from marshmallow import fields as f

from service.channels.inbound.judge import store_inbound
from service.core.errors import Problem
from service.http.api import PROBLEM, Blueprint, ProblemSchema, Schema, http_problem, kontor
from service.http.limits import check_sender
from service.protocol.jsonlimits import TooDeep
from service.protocol.jsonlimits import loads as strict_loads

inbound_blp = Blueprint("inbound", __name__, description="Orders by email: the inbound-parse webhook.")

_RECIPIENT_HEADERS = ("X-Original-To", "Delivered-To", "To", "Cc")
_REQUEST_BODY = {
    "required": True,
    "description": "The raw mail (RFC 5322), at most 1 MB.",
    "content": {
        "message/rfc822": {"schema": {"type": "string", "format": "binary", "minLength": 1}},
        "multipart/form-data": {"schema": {"type": "object", "required": ["email"], "properties": {
            "email": {"type": "string", "pattern": r"\S", "description": "The raw mail (SendGrid's raw mode); "
                                                                     "not empty."},
            "to": {"type": "string", "description": "The recipients, comma-separated."},
            "envelope": {"type": "string", "description": 'SMTP envelope as JSON: {"to": [...], "from": "..."}'},
        }}},
    },
}
_TO_PARAM = {"in": "query", "name": "to", "schema": {"type": "string"}, "required": False,
             "description": "The recipient(s) of a message/rfc822 body, comma-separated (else its headers)."}


class InboundQueuedSchema(Schema):
    id = f.String(metadata={"description": "The inbound mail's id (its outcome is kept for 30 days)."})
    status = f.String(metadata={"description": "`queued`: it will be judged and the sender gets a receipt."})


@inbound_blp.route("/inbound/email", tags=["inbound"])
class InboundMail(MethodView):
    @inbound_blp.response(202, InboundQueuedSchema)
    @inbound_blp.alt_response(401, schema=ProblemSchema, content_type=PROBLEM,
                              description="The shared secret is missing or wrong (`bad_inbound_secret`).")
    @inbound_blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM,
                              description="The endpoint is disabled (no inbound secret is configured).")
    @inbound_blp.alt_response(415, response="UNSUPPORTED_MEDIA_TYPE")
    @inbound_blp.doc(requestBody=_REQUEST_BODY, parameters=[_TO_PARAM], operationId="receiveInboundMail")
    def post(self) -> Any:
        """Take an inbound mail from a mail provider (orders by email).

        The raw mail comes as `message/rfc822`, or as the `email` field of
        `multipart/form-data` (SendGrid's raw mode). Authenticate with the shared inbound
        secret as `Authorization: Bearer <secret>` or as the HTTP Basic password. The mail
        is kept and judged by a worker; its sender gets a receipt by mail. Example: `curl -u
        :$SECRET -H 'Content-Type: message/rfc822' --data-binary @mail.eml .../inbound/email`."""
        k = kontor()
        check_secret(k.settings.inbound_secret)
        allow_large_body()
        raw, rcpt_tos, mail_from = read_mail()
        # Per sender too (the address was counted before the route); the refusal is the answer, no mail.
        check_sender(mail_from or parseaddr(str(BytesHeaderParser(policy=policy.default).parsebytes(raw)
                                                   .get("From", "")))[1])
        return {"id": store_inbound(k, raw, rcpt_tos, mail_from, via="http"), "status": "queued"}, 202


def check_secret(secret: str) -> None:
    if not secret:
        raise Problem("not_found", "the inbound mail endpoint is not enabled on this server")
    auth = request.authorization
    given = ""
    if auth is not None and auth.type == "basic":
        given = auth.password or ""
    elif auth is not None and auth.type == "bearer":
        given = auth.token or ""
    if not hmac.compare_digest(given.encode(), secret.encode()):
        raise Problem("bad_inbound_secret", "send the inbound secret as 'Authorization: Bearer <secret>' "
                                            "or as the HTTP Basic password")


def allow_large_body() -> None:
    """Raise this request's body limit from the app's 64 KB to the setting
    `inbound_max_bytes`, before the body is read."""
    limit = kontor().settings.inbound_max_bytes
    if request.content_length is not None and request.content_length > limit:
        raise Problem("payload_too_large", f"a mail may be at most {limit} bytes")
    request.max_content_length = limit
    request.max_form_memory_size = limit


def read_mail() -> tuple[bytes, list[str], str | None]:
    """The raw mail, its recipients and its envelope sender (None when not known)."""
    if request.mimetype == "message/rfc822":
        raw, envelope = request.get_data(), {}
    elif request.mimetype == "multipart/form-data":
        upload = request.files.get("email")
        raw = upload.read() if upload is not None else request.form.get("email", "").encode()
        envelope = _envelope(request.form.get("envelope"))
        if "to" not in envelope and request.form.get("to"):
            envelope["to"] = [request.form["to"]]
    else:
        raise Problem("unsupported_media_type", "send the raw mail as message/rfc822 or multipart/form-data "
                                                "(field `email`)")
    if not raw.strip():
        raise Problem("invalid_request", "the request holds no mail")
    query_to = request.args.getlist("to")
    headers = BytesHeaderParser(policy=policy.default).parsebytes(raw)
    rcpt_tos = _addresses(query_to or envelope.get("to") or
                          [str(v) for name in _RECIPIENT_HEADERS for v in headers.get_all(name) or []])
    mail_from = envelope.get("from")
    if mail_from is None and headers.get("Return-Path") is not None:
        mail_from = parseaddr(str(headers["Return-Path"]))[1]
    return raw, rcpt_tos, mail_from


def _envelope(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = strict_loads(text)
    except TooDeep as exc:
        raise http_problem("too_deep", f"envelope: {exc}") from None
    except ValueError:
        raise Problem("invalid_request", "envelope is not JSON") from None
    if not isinstance(value, dict):
        raise Problem("invalid_request", "envelope is a JSON object")
    to = value.get("to")
    return {"to": [to] if isinstance(to, str) else list(to or []), "from": value.get("from")}


def _addresses(values: list[str]) -> list[str]:
    out: list[str] = []
    for _, addr in getaddresses(values):
        if addr and addr not in out:
            out.append(addr)
    return out
