"""HTTP resources: the unsubscribe links of Kontor's mails (RFC 8058 one-click).

The token in the URL is the only credential (`service.channels.mail.unsubscribe.unsubscribe_token`): no
bearer, no cookies. A GET only shows a page with a button, since mail scanners and
link previews fetch every link in a mail; the POST unsubscribes.
"""

from __future__ import annotations

from typing import Any

from flask import Response, render_template, url_for
from flask.views import MethodView

from service.channels.mail.unsubscribe import unsubscribe_address, unsubscribe_by_token
from service.channels.notify import mask
from service.http.api import PROBLEM, Blueprint, ProblemSchema, kontor

mail_blp = Blueprint("mail", __name__, description="Unsubscribe links of Kontor's mails (RFC 8058 one-click).")

NO_SUCH_TOKEN = {"schema": ProblemSchema, "content_type": PROBLEM, "description": "No such token (`no_such_token`)."}


def html_page(description: str) -> dict[str, Any]:
    """The OpenAPI answer of a view that answers a small HTML page."""
    return {"200": {"description": description, "content": {"text/html": {"schema": {"type": "string"}}}}}


def page(title: str, text: str, action: str | None = None, button: str = "") -> Response:
    """A tiny HTML page (`templates/unsubscribe.html`, autoescaped), with a one-button
    POST form when `action` is given."""
    body = render_template("unsubscribe.html", title=title, text=text, action=action, button=button)
    return Response(body, mimetype="text/html")


@mail_blp.route("/unsubscribe/<token>", tags=["mail"])
class Unsubscribe(MethodView):
    @mail_blp.doc(responses=html_page("A page with an Unsubscribe button."))
    @mail_blp.alt_response(404, **NO_SUCH_TOKEN)
    @mail_blp.doc(operationId="getUnsubscribePage")
    def get(self, token: str) -> Any:
        """The page behind a mail's unsubscribe link. It changes nothing: its button POSTs.

        Example: `GET /unsubscribe/<token from the mail>`."""
        address = unsubscribe_address(kontor(), token)
        return page("Unsubscribe", f"Stop every mail from Kontor to {mask(address)}?",
                    url_for("mail.Unsubscribe", token=token), "Unsubscribe")

    @mail_blp.doc(responses=html_page("Unsubscribed; a page with an Undo button."))
    @mail_blp.alt_response(404, **NO_SUCH_TOKEN)
    @mail_blp.doc(operationId="unsubscribe")
    def post(self, token: str) -> Any:
        """Unsubscribe the address of the link from every Kontor mail.

        RFC 8058 one-click: no authentication, no cookies; the body `List-Unsubscribe=One-Click`,
        form-encoded, or empty. Mails already queued to it are suppressed too. Example: `POST
        /unsubscribe/<token>` with `List-Unsubscribe=One-Click`."""
        address = unsubscribe_by_token(kontor(), token)
        return page("Unsubscribed", f"Kontor sends no more mail to {mask(address)}.",
                    url_for("mail.Resubscribe", token=token), "Undo")


@mail_blp.route("/unsubscribe/<token>/undo", tags=["mail"])
class Resubscribe(MethodView):
    @mail_blp.doc(responses=html_page("Subscribed again."))
    @mail_blp.alt_response(404, **NO_SUCH_TOKEN)
    @mail_blp.doc(operationId="resubscribe")
    def post(self, token: str) -> Any:
        """Undo an unsubscribe: Kontor mails the address again (from the next notice on).

        Example: `POST /unsubscribe/<token>/undo`."""
        address = unsubscribe_by_token(kontor(), token, on=False)
        return page("Subscribed again", f"Kontor mails {mask(address)} again.")
