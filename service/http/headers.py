"""The security headers of every answer the app makes (one `after_request` hook, `secure`).

Every answer gets `X-Content-Type-Options: nosniff`; every answer but the JSON API's
(JSON and problem+json) a Content-Security-Policy with `frame-ancestors 'none'`, chosen
by what it is:

* an HTML page: `PAGE` (scripts, styles, images and requests from this server only; no
  inline script or style), unless the page set a policy of its own (a player's guide
  allows its inline styles), which is kept, with `frame-ancestors 'none'` added when it
  lacks one;
* the API's documentation (`/docs`, Swagger UI; `/redoc`, ReDoc), vendored under
  /static/vendor: `DOCS`, which adds the inline styles both viewers set from their
  scripts, `data:` images and fonts, and ReDoc's search worker (a `blob:`);
* an SVG picture (`/games/{id}/picture.svg`): `SVG`, a document that runs nothing and
  loads nothing (its presentation attributes are not styles; inline styles allowed);
* anything else (scripts, styles, icons, text): `OTHER`, which loads and runs nothing.

A 304 answer carries the same headers as its 200 would (a cache updates them from it).
"""

from __future__ import annotations

from flask import Response, request

#: The web pages' policy (service/http/resources/play.py and every HTML error page).
PAGE = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
#: The API documentation's viewers (Swagger UI and ReDoc write their styles inline).
DOCS = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        "font-src 'self' data:; connect-src 'self'; worker-src blob:; form-action 'self'; base-uri 'none'; "
        "frame-ancestors 'none'")
#: An SVG document served alone.
SVG = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"
#: Every other answer that is not the JSON API's.
OTHER = "default-src 'none'; frame-ancestors 'none'"
#: The endpoints of the documentation viewers (flask-smorest's).
DOC_ENDPOINTS = frozenset({"api-docs.openapi_swagger_ui", "api-docs.openapi_redoc"})
#: Answers of the JSON API: no page, no policy (nosniff only).
JSON = frozenset({"application/json", "application/problem+json"})


def policy(mimetype: str | None, endpoint: str | None) -> str | None:
    """The Content-Security-Policy an answer of `mimetype` from `endpoint` gets (None: none)."""
    if endpoint in DOC_ENDPOINTS and mimetype == "text/html":
        return DOCS
    if mimetype == "text/html":
        return PAGE
    if mimetype == "image/svg+xml":
        return SVG
    if mimetype in JSON:
        return None
    return OTHER


def secure(resp: Response) -> Response:
    """Set the answer's security headers (see the module's text); a page's own policy is kept."""
    resp.headers["X-Content-Type-Options"] = "nosniff"
    own = resp.headers.get("Content-Security-Policy")
    if own is not None:
        if "frame-ancestors" not in own:
            resp.headers["Content-Security-Policy"] = f"{own.rstrip('; ')}; frame-ancestors 'none'"
        return resp
    csp = policy(resp.mimetype, request.endpoint)
    if csp is not None:
        resp.headers["Content-Security-Policy"] = csp
    return resp


__all__ = ["DOCS", "OTHER", "PAGE", "SVG", "policy", "secure"]
