"""The access log never carries an unsubscribe token (issue 12, item 9): the token names
the address. gunicorn's own logger writes the raw request line; `service.logs.GunicornLogger`
(`--logger-class`) writes the route (or the masked path), a query only as `?***`, no
credentials, as JSON lines with the request id."""

from __future__ import annotations

import io
import json
import logging
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from gunicorn.config import Config
from gunicorn.glogging import Logger as PlainGunicornLogger

from service import logs
from service.logs import ROUTE_KEY, GunicornLogger

TOKEN = "YWRhLmxvdmVsYWNlQGV4YW1wbGUub3Jn.zimf4j3k37hmvjxqr2eakxj5"
BEARER = "eyJhbGciOiJFZERTQSJ9.eyJnYW1lIjoiZzEifQ.c2lnbmF0dXJlc2lnbmF0dXJl"


def access_line(logger_class: type[Any], environ: dict[str, Any], fmt: str | None = None) -> str:
    """What `logger_class` writes to the access log for one request."""
    cfg = Config()
    cfg.set("accesslog", "-")
    if fmt:
        cfg.set("access_log_format", fmt)
    logger = logger_class(cfg)
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    if logger_class is GunicornLogger:
        logs.install(handler)
    logger.access_log.handlers = [handler]
    resp = SimpleNamespace(status="200 OK", headers=[("Content-Type", "text/html")], sent=120)
    req = SimpleNamespace(headers=[("AUTHORIZATION", f"Bearer {BEARER}"), ("REFERER", f"https://mail.example/{TOKEN}")])
    base = {"REQUEST_METHOD": "POST", "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "203.0.113.9",
            "HTTP_AUTHORIZATION": f"Bearer {BEARER}", "HTTP_REFERER": f"https://mail.example/x?t={TOKEN}",
            "HTTP_USER_AGENT": "curl/8"}
    logger.access(resp, req, {**base, **environ}, timedelta(milliseconds=3))
    return out.getvalue()


def unsubscribe(path: str = f"/unsubscribe/{TOKEN}", query: str = "") -> dict[str, Any]:
    return {"RAW_URI": path + (f"?{query}" if query else ""), "PATH_INFO": path, "QUERY_STRING": query}


def test_gunicorns_own_access_log_shows_the_token() -> None:
    """The defect, as gunicorn writes it by default (`--access-logfile -`)."""
    assert TOKEN in access_line(PlainGunicornLogger, unsubscribe())


@pytest.mark.parametrize("fmt", [None, '%(r)s %(U)s %(q)s %({raw_uri}e)s %({path_info}e)s %({query_string}e)s '
                                       '%({authorization}i)s %({http_authorization}e)s %(f)s %({referer}i)s'])
def test_kontors_access_log_shows_no_token_and_no_credentials(fmt: str | None) -> None:
    for environ in (unsubscribe(), unsubscribe(f"/unsubscribe/{TOKEN}/undo", f"t={TOKEN}"),
                    {**unsubscribe(), ROUTE_KEY: "/unsubscribe/<token>"}):
        line = access_line(GunicornLogger, environ, fmt)
        assert TOKEN not in line and BEARER not in line and "lovelace" not in line, line
        record = json.loads(line)
        assert record["logger"] == "gunicorn.access" and "/unsubscribe/" in record["message"]


def test_the_access_log_shows_the_route_the_app_matched() -> None:
    line = access_line(GunicornLogger, {**unsubscribe(query="a=1"), ROUTE_KEY: "/unsubscribe/<token>"})
    assert '"POST /unsubscribe/<token>?*** HTTP/1.1" 200' in json.loads(line)["message"]
    plain = access_line(GunicornLogger, {"RAW_URI": "/games/g1/view", "PATH_INFO": "/games/g1/view",
                                         "QUERY_STRING": ""})
    assert '"POST /games/g1/view HTTP/1.1" 200' in json.loads(plain)["message"]


def test_every_atom_reads_as_gunicorns_own_atoms_have_it() -> None:
    """`GunicornLogger.atoms` builds the header and environ atoms only when the format
    names one: each atom, of any kind and case, still reads as from gunicorn's own atoms
    (then masked the same way)."""
    cfg = Config()
    ours = GunicornLogger(cfg)
    resp = SimpleNamespace(status="201 CREATED", headers=[("Content-Type", "application/json"), ("X-Twice", "1"),
                                                          ("x-twice", "2")], sent=42)
    req = SimpleNamespace(headers=[("USER-AGENT", "curl/8"), ("X-Request-Id", "r-1"), ("ACCEPT", "*/*")])
    environ = {"REQUEST_METHOD": "GET", "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "203.0.113.9",
               "RAW_URI": "/games/g1/view?x=1", "PATH_INFO": "/games/g1/view", "QUERY_STRING": "x=1",
               "HTTP_USER_AGENT": "curl/8", "HTTP_X_REQUEST_ID": "r-1", "wsgi.url_scheme": "http"}
    took = timedelta(seconds=1, microseconds=2345)
    lazy = ours.atoms_wrapper_class(ours.atoms(resp, req, environ, took))
    eager = dict(PlainGunicornLogger.atoms(ours, resp, req, environ, took))
    eager.update({k: lazy[k] for k in ("U", "q", "r")})  # Kontor's route, query and request line
    reference = ours.atoms_wrapper_class(eager)
    keys = [*eager, "{X-Request-Id}i", "{content-TYPE}o", "{x-twice}o", "{Wsgi.Url_Scheme}e", "{nothing}i", "zz"]
    assert {k for k in eager if k.startswith("{")} >= {"{user-agent}i", "{content-type}o", "{path_info}e"}
    for key in keys:
        if key != "t":  # the time of day, read a moment apart
            assert lazy[key] == reference[key], key
    assert lazy["{x-twice}o"] == "2" and lazy["{nothing}i"] == "-" and lazy["L"] == "1.002345"
