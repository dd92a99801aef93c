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


# -- the short ways (issue 26): the same lines, cheaper ----------------------------------------
def _both_ways(environ: dict[str, Any], resp: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The access record `GunicornLogger.access` writes with the default format, and the
    one gunicorn's own `access` writes through `atoms`/`atoms_wrapper_class` (same clock)."""
    lines = []
    for way in (GunicornLogger.access, PlainGunicornLogger.access):
        cfg = Config()
        cfg.set("accesslog", "-")
        logger = GunicornLogger(cfg)
        logger.now = lambda: "[06/Dec/2026:16:30:30 +0000]"
        out = io.StringIO()
        handler = logs.install(logging.StreamHandler(out))
        logger.access_log.handlers = [handler]
        req = SimpleNamespace(headers=[("USER-AGENT", "x")])
        base = {"REQUEST_METHOD": "PUT", "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1"}
        logs.tag("r-1", "g1")
        way(logger, resp, req, {**base, **environ}, timedelta(milliseconds=3))
        record = json.loads(out.getvalue())
        record.pop("time")
        lines.append(record)
    return lines[0], lines[1]


@pytest.mark.parametrize("environ", [
    {"PATH_INFO": "/games/g1/orders/3", ROUTE_KEY: "/games/<gid>/orders/<phase>", "HTTP_USER_AGENT": "httpx/0.27"},
    {**unsubscribe(query=f"t={TOKEN}"), "HTTP_REFERER": f"https://mail.example/x?t={TOKEN}",
     "HTTP_USER_AGENT": 'a "quoted" agent ada@example.org'},
    {"PATH_INFO": "/games/g1", "HTTP_AUTHORIZATION": "Basic YWRhQGV4YW1wbGUub3JnOnB3",  # ada@example.org:pw
     "REMOTE_ADDR": "203.0.113.9", "HTTP_AUTHORIZATION_X": f"Bearer {BEARER}"},
    {"PATH_INFO": f"/x/{BEARER}", "QUERY_STRING": "cap=abc"},
])
@pytest.mark.parametrize("resp", [SimpleNamespace(status="202 ACCEPTED", headers=[], sent=120),
                                  SimpleNamespace(status=404, headers=[], sent=None)])
def test_access_log_line_is_the_default_formats_line(environ: dict[str, Any], resp: Any) -> None:
    """The access line built directly is the one gunicorn's default format gives through
    Kontor's masked atoms: same fields, same text, masked alike."""
    ours, gunicorns = _both_ways(environ, resp)
    assert ours == gunicorns
    assert ours["id"] == "r-1" and ours["game"] == "g1" and ours["logger"] == "gunicorn.access"
    assert TOKEN not in ours["message"] and BEARER not in ours["message"] and "ada@" not in ours["message"]


@pytest.mark.parametrize("msg,args,extra,exc", [
    ("plain %s line", ("a",), None, False),
    ("mail ada@example.org and token %s", (BEARER,), None, False),
    ('quotes " and ünïcode \\ and\nnewline', (), None, False),
    ("with extra", (), {"target": "https://h.example/p?k=secret", "n": 3}, False),
    ("with a traceback", (), None, True),
])
def test_access_log_json_short_way_writes_what_python_json_logger_writes(
        msg: str, args: tuple[Any, ...], extra: dict[str, Any] | None, exc: bool) -> None:
    formatter = logs.Json()
    record = logging.getLogger("kontor").makeRecord("kontor", logging.INFO, "f.py", 1, msg, args, None, extra=extra)
    if exc:
        try:
            raise ValueError(f"boom {BEARER}")
        except ValueError:
            import sys
            record.exc_info = sys.exc_info()
    logs.Context().filter(record)
    ours = formatter.format(record)
    theirs = logs.JsonFormatter.format(formatter, record)
    assert ours == theirs
    assert BEARER not in ours and "ada@" not in ours and "secret" not in ours


def _lines(out: io.StringIO) -> list[str]:
    return [json.loads(line)["message"] for line in out.getvalue().splitlines()]


def test_access_log_buffered_lines_wait_for_the_batch_and_a_clean_stop_writes_them_all() -> None:
    import time
    import weakref

    out = io.StringIO()
    handler = logs.install(logs.Buffered(out, interval=30.0))
    logger = logging.getLogger("kontor.test.buffered")
    logger.handlers, logger.propagate = [handler], False
    for i in range(3):
        logger.warning("line %d", i)
    assert out.getvalue() == ""  # held back: one write per batch
    handler.flush()
    assert _lines(out) == ["line 0", "line 1", "line 2"]
    logger.warning("line 3")
    logging.shutdown([weakref.ref(handler)])  # what a clean exit runs (atexit)
    assert _lines(out)[-1] == "line 3"

    quick = io.StringIO()
    handler = logs.install(logs.Buffered(quick, interval=0.01))
    logger.handlers = [handler]
    logger.warning("soon")
    deadline = time.monotonic() + 10
    while not quick.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _lines(quick) == ["soon"]  # written within the interval, without a flush

    big = io.StringIO()
    handler = logs.install(logs.Buffered(big, interval=30.0))
    logger.handlers = [handler]
    for _ in range(logs.Buffered.MOST // 100 + 1):
        logger.warning("%s", "x" * 100)
    assert len(_lines(big)) > 0  # a full batch goes out at once
    handler.flush()
    assert len(_lines(big)) == logs.Buffered.MOST // 100 + 1


def test_access_log_buffer_keeps_the_handlers_stream_filters_and_format() -> None:
    out = io.StringIO()
    logger = logging.getLogger("kontor.test.buffer")
    logger.handlers, logger.propagate = [logs.install(logging.StreamHandler(out))], False
    logs.buffer(logger)
    (handler,) = logger.handlers
    assert isinstance(handler, logs.Buffered) and handler.stream is out
    logger.warning("mail ada@example.org")
    handler.flush()
    assert json.loads(out.getvalue())["message"] == "mail a***@example.org"


@pytest.mark.parametrize("environ", [
    {"PATH_INFO": "/games/g1/orders/3", ROUTE_KEY: "/games/<gid>/orders/<phase>", "HTTP_USER_AGENT": "httpx/0.27"},
    {**unsubscribe(query=f"t={TOKEN}"), "HTTP_USER_AGENT": 'a "quoted" ünïcode agent ada@example.org'},
    {"PATH_INFO": "/games/g1", "HTTP_USER_AGENT": 'back\\slash "and" \u2603'},
])
@pytest.mark.parametrize("ids", [("r-1", "g1"), ("r-2", None)])
def test_access_log_written_directly_is_the_line_logging_writes(environ: dict[str, Any],
                                                                ids: tuple[str, str | None]) -> None:
    """A buffered access log (as a web worker has it, `GunicornLogger.buffer`) writes its
    plain lines without a log record (`_line`): the same JSON text, key by key and byte
    by byte but for the time, as the record through `logging` gives; a line with
    something to mask goes through `logging` and is masked."""
    lines = []
    for direct in (True, False):
        cfg = Config()
        cfg.set("accesslog", "-")
        logger = GunicornLogger(cfg)
        logger.now = lambda: "[06/Dec/2026:16:30:30 +0000]"
        out = io.StringIO()
        logger.access_log.handlers = [logs.install(logging.StreamHandler(out))]
        logger.access_log.propagate = False
        logger.buffer()
        assert (logger._direct is not None) is True
        if not direct:
            logger._direct = None
        logs.tag(*ids)
        base = {"REQUEST_METHOD": "PUT", "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1"}
        logger.access(SimpleNamespace(status="202 ACCEPTED", headers=[], sent=120), SimpleNamespace(headers=[]),
                      {**base, **environ}, timedelta(milliseconds=3))
        logger.flush()
        (line,) = out.getvalue().splitlines()
        lines.append(line)
    ours, theirs = (json.loads(line) for line in lines)
    assert ours.pop("time")[:4] == theirs.pop("time")[:4] == "2026"
    assert ours == theirs and ours["id"] == ids[0] and ours["game"] == ids[1]
    assert lines[0].partition('"level"')[2] == lines[1].partition('"level"')[2]  # the same text
    assert TOKEN not in lines[0] and "ada@" not in lines[0]


def _buffered() -> tuple[Any, io.StringIO]:
    """A web worker's access log (`GunicornLogger.buffer` made its handler), and its stream."""
    cfg = Config()
    cfg.set("accesslog", "-")
    logger = GunicornLogger(cfg)
    out = io.StringIO()
    logger.access_log.handlers = [logs.install(logging.StreamHandler(out))]
    logger.access_log.propagate = False
    logger.buffer()
    return logger, out


def _health(logger: Any) -> None:
    """One request's access line, then the buffered lines written."""
    logger.access(SimpleNamespace(status="200 OK", headers=[], sent=1), SimpleNamespace(headers=[]),
                  {"REQUEST_METHOD": "GET", "SERVER_PROTOCOL": "HTTP/1.1", "PATH_INFO": "/health"},
                  timedelta(milliseconds=1))
    logger.flush()


def test_access_log_is_written_through_logging_when_its_handlers_are_not_the_buffered_one() -> None:
    """A handler added to the access log after `buffer` sees every line again: the direct
    way is taken only for the handler `buffer` made."""
    logger, first = _buffered()
    second = io.StringIO()
    logger.access_log.addHandler(logs.install(logging.StreamHandler(second)))
    _health(logger)
    assert len(first.getvalue().splitlines()) == len(second.getvalue().splitlines()) == 1


def test_access_log_filter_added_after_buffer_sees_every_line() -> None:
    """A filter put on the buffered handler after `buffer` (here one that drops every
    line) is honoured: the direct way is taken only with the handler's own two filters."""
    logger, out = _buffered()
    (handler,) = logger.access_log.handlers
    handler.filters[1] = type("Drop", (logging.Filter,), {"filter": lambda self, record: False})()
    _health(logger)
    assert out.getvalue() == ""
    handler.filters[1] = logs.Redact()  # its own kind again: written
    _health(logger)
    assert len(out.getvalue().splitlines()) == 1
