"""Logs as JSON lines (python-json-logger), and nothing secret in them.

Every line is one JSON object: `time` (UTC, ISO 8601), `level`, `logger`, `id` (the
request id, `r-…`, for HTTP requests; the RQ job id for jobs; `-` elsewhere), `game`
(the game the request or job is about, when known; null otherwise) and `message`, plus
`exc_info` for a traceback. The ids live in context variables (`current_id`, `game_id`)
that the request and job entry points set (`tag`); a filter copies them onto each record.

Rulings:
* No token, secret or full e-mail address is ever logged. A filter on every handler
  (`Redact`) masks, in the message and the traceback: e-mail addresses (`a***@example.org`,
  as `service.channels.notify.mask` shows them; reply addresses are secret too), anything
  that looks like a JWS or its JSON parts (`eyJ…`), bearer credentials, unsubscribe
  tokens (and the path `/unsubscribe/<token>`), a page link's `cap=`, Standard Webhooks secrets (`whsec_…`),
  the user and password of any URL, and every URL's query. The JSON formatter masks
  every field again, so an `extra=` value cannot slip through either. Code still masks
  what it knows at the source (a webhook target's path: `service.channels.webhook.deliver`);
  the filter is the net under it.
* urllib3 logs each request line (a webhook's full path) at DEBUG: it is kept at WARNING,
  and the filter masks the paths of an HTTP client's request lines anyway.
* gunicorn's access log shows the route, never the raw path or query (`GunicornLogger`,
  set with `logger_class`): an unsubscribe link's token carries the address.

Cost: every request writes an access line, so the common lines take a short way. The
default access format is built straight from the request (`GunicornLogger.access`, the
same line the format would give); a line with no traceback and no `extra=` fields is
encoded without python-json-logger's general path (`Json.format`, the same JSON); and in
the web workers the lines are written in batches (`Buffered`, installed by the gunicorn
config's `post_worker_init`): at most `Buffered.INTERVAL` seconds (or `Buffered.MOST`
characters) after the first line of a batch, in one write, instead of one write per
line. A clean stop writes what is left (`flush`, at exit and in gunicorn's `worker_exit`);
a process killed outright loses at most its last batch (docs/operations.md, "Logs").
"""

from __future__ import annotations

import contextvars
import json
import logging
import os
import re
import threading
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from gunicorn.glogging import Logger as _GunicornLogger  # type: ignore[import-untyped]
from pythonjsonlogger.json import JsonFormatter

current_id: contextvars.ContextVar[str] = contextvars.ContextVar("kontor_request_id", default="-")
game_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("kontor_game_id", default=None)

#: The fields of a line, in order, and their names in the JSON.
FIELDS = ("asctime", "levelname", "name", "rid", "game", "message")
RENAME = {"asctime": "time", "levelname": "level", "name": "logger", "rid": "id"}
#: The WSGI environ key where the app may leave the matched route (`/unsubscribe/<token>`)
#: for the access log.
ROUTE_KEY = "kontor.route"


def tag(request_or_job: str, game: str | None = None) -> None:
    """Name the request or job (and its game) that the following log lines belong to;
    called once at the start of each, so a line never carries the game of the one before."""
    current_id.set(request_or_job)
    game_id.set(game)


# -- masking ---------------------------------------------------------------------------------
_B64 = r"[A-Za-z0-9_-]"
#: (pattern, replacement) in the order they apply: URL credentials before addresses
#: (`user:pass@host` would otherwise keep the user), tokens before addresses.
RULES: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    # A URL's user and password: `smtp://***@host`, `redis://***@host`.
    (re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@'\"<>]+@"), r"\1***@"),
    # Bearer credentials of any shape, then anything that looks like base64url JSON (a JWS,
    # its header or payload: `{"` encodes to `eyJ`).
    (re.compile(r"(?i)\b(bearer\s+)[^\s'\",;]+"), r"\1***"),
    (re.compile(rf"\beyJ{_B64}{{6,}}(?:\.{_B64}*)*"), "eyJ***"),
    # Standard Webhooks secrets.
    (re.compile(r"\bwhsec_[A-Za-z0-9+/=]+"), "whsec_***"),
    # Unsubscribe links and tokens (`<base64url of the address>.<24 base32 characters>`).
    (re.compile(r"/unsubscribe/[^/\s?#'\"<>]+"), "/unsubscribe/***"),
    (re.compile(rf"{_B64}{{2,}}\.[a-z2-7]{{24}}(?![A-Za-z0-9])"), "***"),
    # E-mail addresses: the first character and the domain, as the host sees them.
    (re.compile(r"(?<![A-Za-z0-9._%+-])([A-Za-z0-9_%+-])[A-Za-z0-9._%+-]*@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)"),
     r"\1***@\2"),
    # A page link's capability (`/play/<game>/<seat>?step=<n>&cap=<mac>`), also in a bare
    # path without scheme and host.
    (re.compile(r"([?&]cap=)[^\s&#'\"<>]+"), r"\1***"),
    # A URL's query and fragment (tokens travel there).
    (re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s?#'\"<>]*)[?#][^\s'\"<>]*"), r"\1?***"),
]


#: The path of a request line (`"POST /path?query HTTP/1.1"`): in the lines of an HTTP
#: client (urllib3) it is the webhook receiver's, whose path may be its key.
REQUEST_LINE = re.compile(r"\b((?:GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) )/[^\s\"']*")
#: Loggers whose request lines are another party's (outgoing requests).
CLIENTS = ("urllib3", "requests")


#: A string none of `RULES` can change has none of these in it (each rule's pattern needs
#: one: `://`, bearer, `eyJ`, `whsec_`, `/unsubscribe/`, `@`, `cap=`, or a dot followed by
#: 24 base32 letters), so most log lines are passed over after a few substring checks.
_TOKEN_TAIL = re.compile(r"\.[a-z2-7]{24}")


def _suspect(text: str) -> bool:
    return ("@" in text or "://" in text or "eyJ" in text or "whsec_" in text or "cap=" in text
            or "/unsubscribe/" in text or "bearer" in text.lower()
            or ("." in text and _TOKEN_TAIL.search(text) is not None))


def redact(text: str, outgoing: bool = False) -> str:
    """`text` with every token, secret and address masked (see the module's rulings);
    `outgoing`: text of an HTTP client, whose request lines lose their paths too."""
    if outgoing:
        text = REQUEST_LINE.sub(r"\1/***", text)
    if not _suspect(text):
        return text
    for pattern, replacement in RULES:
        text = pattern.sub(replacement, text)
    return text


def _redact_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: _redact_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_redact_value(item) for item in value]
    return value


class Redact(logging.Filter):
    """Masks the message, traceback and stack of each record it sees, in place (so every
    later handler gets the masked record too). Never refuses a record."""

    _tracebacks = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format: logging reports it when the handler formats
            return True
        clean = redact(message, outgoing=record.name.startswith(CLIENTS))
        if clean != message or record.args:  # formatted once: the formatter reads the text
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._tracebacks.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


class Context(logging.Filter):
    """Puts the request or job id (`rid`) and the game id (`game`) on each record."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.rid = current_id.get()
        record.game = game_id.get()
        return True


class Json(JsonFormatter):
    """One JSON object per line with `FIELDS`, every string in it masked."""

    def __init__(self) -> None:
        super().__init__(list(FIELDS), rename_fields=RENAME)

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802
        return stamp(record.created)

    def process_log_record(self, log_data: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = _redact_value(log_data)
        return out

    def format(self, record: logging.LogRecord) -> str:
        """The line python-json-logger would write, the common case (a text message, no
        traceback or stack, no `extra=` fields) made directly, as the same JSON."""
        if (record.exc_info or record.exc_text or record.stack_info or type(record.msg) is not str
                or not _PLAIN.issuperset(record.__dict__)):
            return super().format(record)
        record.message = message = record.getMessage()
        record.asctime = when = self.formatTime(record)
        rid, game = getattr(record, "rid", None), getattr(record, "game", None)
        line = plain_line(when, record.levelname, record.name, rid, game, message)
        if line is not None:
            return line
        return json.dumps({"time": redact(when), "level": _redact_value(record.levelname),
                           "logger": _redact_value(record.name), "id": _redact_value(rid),
                           "game": _redact_value(game), "message": _redact_value(message)})


def stamp(created: float) -> str:
    """A line's time (`Json`'s `time`): UTC, to the millisecond."""
    return datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds")


def plain_line(when: str, level: str, name: str, rid: Any, game: Any, message: str) -> str | None:
    """`Json`'s line of a plain record (the same text as `json.dumps` of its fields),
    when none of its parts has anything to mask (`_suspect` of the whole says so of
    each part); else None."""
    if (type(rid) is not str or (game is not None and type(game) is not str)
            or _suspect(f"{when}\n{level}\n{name}\n{rid}\n{game}\n{message}")):
        return None
    quoted = _quote
    return (f'{{"time": {quoted(when)}, "level": {quoted(level)}, "logger": {quoted(name)}, "id": {quoted(rid)}, '
            f'"game": {"null" if game is None else quoted(game)}, "message": {quoted(message)}}}')


#: json's own string quoting (what `json.dumps` of a str gives, ASCII-only).
_quote: Callable[[str], str] = json.encoder.encode_basestring_ascii  # type: ignore[attr-defined]


#: The attributes of a record without `extra=` fields (those a plain record has, and what
#: the filters and the formatter add): `Json.format` takes its short way for such a record.
_PLAIN = frozenset(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime", "rid", "game"}


class Buffered(logging.StreamHandler):  # type: ignore[type-arg]
    """A stream handler that writes its lines in batches: a line waits at most `INTERVAL`
    seconds (a batch is written at once when it reaches `MOST` characters), then the
    batch goes out in one write. `flush` (called by `logging.shutdown` at exit, and by the
    gunicorn config's `worker_exit`) writes what is waiting, so a clean stop loses
    nothing; a process killed outright loses at most its last batch. The batches are
    written by a thread of the process (a greenlet under gevent: make the handler after
    gevent patched the process), started with the first line (again in a forked child)."""

    INTERVAL = 0.05
    MOST = 64 * 1024

    def __init__(self, stream: Any = None, interval: float | None = None) -> None:
        super().__init__(stream)
        self.interval = self.INTERVAL if interval is None else interval
        self.lines: list[str] = []
        self.size = 0
        self.pid = 0
        self.due = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        try:  # (under the handler's lock: `Handler.handle`)
            line = self.format(record) + self.terminator
        except Exception:
            self.handleError(record)
            return
        self._add(line)

    def emit_line(self, line: str) -> None:
        """Write `line` (made already, with its terminator) as `emit` writes a record's."""
        self.acquire()
        try:
            self._add(line)
        finally:
            self.release()

    def _add(self, line: str) -> None:
        self.lines.append(line)
        self.size += len(line)
        if self.size >= self.MOST:
            self._write()
        elif len(self.lines) == 1:
            if self.pid != os.getpid():
                self._start()
            self.due.set()

    def _start(self) -> None:
        self.pid = os.getpid()
        self.due = threading.Event()
        threading.Thread(target=self._run, args=(self.due,), name="kontor-log-flush", daemon=True).start()

    def _run(self, due: threading.Event) -> None:
        while self.pid == os.getpid():
            due.wait()
            time.sleep(self.interval)
            self.acquire()
            try:
                due.clear()
                self._write()
            except Exception:  # noqa: S110  (the stream is gone: nothing to write to)
                pass
            finally:
                self.release()

    def _write(self) -> None:
        if self.lines:
            text, self.lines, self.size = "".join(self.lines), [], 0
            self.stream.write(text)
        super().flush()

    def flush(self) -> None:
        self.acquire()
        try:
            if self.stream is not None and hasattr(self.stream, "write"):
                self._write()
        finally:
            self.release()


def buffer(logger: logging.Logger) -> None:
    """Make `logger`'s plain stream handlers `Buffered` ones (the same stream, level,
    filters and formatter); idempotent."""
    for i, handler in enumerate(list(logger.handlers)):
        if type(handler) is logging.StreamHandler:
            new = Buffered(handler.stream)
            new.setLevel(handler.level)
            new.setFormatter(handler.formatter)
            for f in handler.filters:
                new.addFilter(f)
            handler.flush()
            logger.handlers[i] = new
            handler.close()


def flush_all(*loggers: logging.Logger) -> None:
    """Write what the handlers of `loggers` (and the root's) hold back."""
    for logger in (*loggers, logging.getLogger()):
        for handler in logger.handlers:
            try:
                handler.flush()
            except Exception:  # noqa: S110  (a closed stream at exit)
                pass


def install(handler: logging.Handler) -> logging.Handler:
    """Give `handler` Kontor's filters and JSON lines (idempotent); the handler."""
    for kind in (Context, Redact):
        if not any(isinstance(f, kind) for f in handler.filters):
            handler.addFilter(kind())
    if not isinstance(handler.formatter, Json):
        handler.setFormatter(Json())
    return handler


def lean_records() -> None:
    """Records without what no Kontor line shows (`FIELDS`): the caller's file and line,
    thread and process names, which `logging` otherwise looks up for every record (the
    logging HOWTO's "Optimization"). Every request writes an access line."""
    logging._srcfile = None  # type: ignore[attr-defined]
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False


def setup(level: int = logging.INFO) -> None:
    """JSON lines, ids and masking on the root handlers (idempotent)."""
    lean_records()
    root = logging.getLogger()
    if not root.handlers:
        logging.basicConfig(level=level)
    for handler in root.handlers:
        install(handler)
    logging.getLogger("urllib3").setLevel(logging.WARNING)


# -- gunicorn ---------------------------------------------------------------------------------
def route_of(environ: dict[str, Any]) -> str:
    """The path to log for a request: the route the app matched when it said so
    (`ROUTE_KEY`), else the path with its secrets masked."""
    return str(environ.get(ROUTE_KEY) or redact(str(environ.get("PATH_INFO") or "/")))


def _quoted(value: Any) -> Any:
    """An access log atom as `GunicornLogger.atoms_wrapper_class` reads it (a text masked,
    its quotes escaped)."""
    return redact(value).replace('"', '\\"') if isinstance(value, str) else value


class _Atoms(dict):  # type: ignore[type-arg]
    """The access log's atoms, with where the `{name}i`/`{name}o`/`{name}e` ones come from
    (`sources`: request headers, response headers, environ) for `lookup`."""

    def __init__(self, core: dict[str, Any], sources: tuple[Any, Any, dict[str, Any]]) -> None:
        super().__init__(core)
        self.sources = sources

    @staticmethod
    def lookup(into: dict[str, Any], key: str, sources: tuple[Any, Any, dict[str, Any]]) -> bool:
        """Put atom `key` (lower case) into `into` as gunicorn's `atoms` would have it (the
        last of equal names wins); whether there is one."""
        if not (key.startswith("{") and key[-2:] in ("}i", "}o", "}e")):
            return False
        name, kind = key[1:-2], key[-1]
        pairs = sources[2] if kind == "e" else sources[0 if kind == "i" else 1]
        found = False
        for k, v in (pairs.items() if hasattr(pairs, "items") else pairs):
            if k.lower() == name:
                dict.__setitem__(into, key, v)
                found = True
        return found


class GunicornLogger(_GunicornLogger):  # type: ignore[misc]
    """gunicorn's logger with Kontor's JSON lines and masking on its error and access
    logs, and an access log that shows the route (or the masked path), a query only as
    `?***`, and no credentials. Use it with `--logger-class service.logs.GunicornLogger`
    (or `logger_class` in a gunicorn config); the default `access_log_format` is then safe."""

    #: Request headers (`{name}i`) and environ keys (`{name}e`) never shown as they are.
    HIDDEN = ("authorization", "cookie", "http_authorization", "http_cookie", "raw_uri", "request_uri",
              "path_info", "query_string", "script_name")

    #: gunicorn's default `access_log_format`, which `access` builds directly.
    DEFAULT_FORMAT = '%(h)s %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s "%(f)s" "%(a)s"'

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        lean_records()
        self._clock: tuple[int, str] = (0, "")
        for log in (self.error_log, self.access_log):
            for handler in log.handlers:
                install(handler)

    def buffer(self) -> None:
        """Write the error and access logs (and the root logger's lines) in batches
        (`Buffered`): in a worker, once gevent patched it (`post_worker_init`)."""
        for log in (self.error_log, self.access_log, logging.getLogger()):
            buffer(log)
        log = self.access_log
        handler = log.handlers[0] if len(log.handlers) == 1 else None
        self._direct: tuple[Buffered, logging.Formatter | None, list[Any]] | None = None
        if (type(handler) is Buffered and type(handler.formatter) is Json and handler.level <= logging.INFO
                and sorted(type(f).__name__ for f in handler.filters) == ["Context", "Redact"]
                and not log.filters and not log.propagate):
            self._direct = (handler, handler.formatter, list(handler.filters))

    def _line(self, message: str) -> None:
        """Log an access line: with the handler `buffer` made (one `Buffered` with `Json`
        and the Context and Redact filters, on a logger without filters of its own that
        does not propagate) the same line written directly (`plain_line`), without a log
        record, when it has nothing to mask; else through `logging`. About half the cost
        of an access line, and one is written for every request."""
        direct = getattr(self, "_direct", None)
        if direct is not None:
            log, (handler, formatter, filters) = self.access_log, direct
            if log.handlers == [handler] and handler.formatter is formatter and handler.filters == filters:
                line = plain_line(stamp(time.time()), "INFO", log.name, current_id.get(), game_id.get(), message)
                if line is not None:
                    handler.emit_line(line + handler.terminator)
                    return
        self.access_log.info(message)

    def flush(self) -> None:
        """Write what the logs hold back (`Buffered`)."""
        flush_all(self.error_log, self.access_log)

    def now(self) -> str:
        """gunicorn's time stamp (Apache's), made once a second."""
        second = int(time.time())
        clock = getattr(self, "_clock", (0, ""))
        if clock[0] != second:
            clock = self._clock = (second, time.strftime("[%d/%b/%Y:%H:%M:%S %z]", time.localtime(second)))
        return clock[1]

    def access(self, resp: Any, req: Any, environ: dict[str, Any], request_time: Any) -> None:
        """gunicorn's access line; with the default format (`DEFAULT_FORMAT`), built
        directly: the same text as the format read from `atoms_wrapper_class` gives."""
        if self.cfg.access_log_format != self.DEFAULT_FORMAT:
            super().access(resp, req, environ, request_time)
            return
        if not self.access_log_enabled or not self.access_log.isEnabledFor(logging.INFO):
            return
        try:
            status = resp.status
            if isinstance(status, str):
                status = status.split(None, 1)[0]
            sent = getattr(resp, "sent", None)
            query = "?***" if environ.get("QUERY_STRING") else ""
            user = self._get_user(environ) if "HTTP_AUTHORIZATION" in environ else None
            atoms = [environ.get("REMOTE_ADDR", "-"), user or "-",
                     f"{environ.get('REQUEST_METHOD')} {route_of(environ)}{query} {environ.get('SERVER_PROTOCOL')}",
                     status, sent is not None and str(sent) or "-", environ.get("HTTP_REFERER", "-"),
                     environ.get("HTTP_USER_AGENT", "-")]
            whole = "\n".join(map(str, atoms))
            if _suspect(whole) or '"' in whole:  # else none of them has anything to mask or escape
                atoms = [_quoted(a) for a in atoms]
            h, u, r, s, b, f, a = atoms
            self._line(f'{h} - {u} {self.now()} "{r}" {s} {b} "{f}" "{a}"')
        except Exception:
            self.error(traceback.format_exc())

    def atoms(self, resp: Any, req: Any, environ: dict[str, Any], request_time: Any) -> dict[str, Any]:
        """gunicorn's atoms, but for the `{name}i`, `{name}o` and `{name}e` ones (every
        request header, response header and environ key), which `atoms_wrapper_class`
        looks up only when the format names one (the default names none): building them
        all for every request was a third of the access log's cost."""
        status = resp.status
        if isinstance(status, str):
            status = status.split(None, 1)[0]
        sent = getattr(resp, "sent", None)
        seconds, micro = request_time.seconds, request_time.microseconds
        route = route_of(environ)
        query = "?***" if environ.get("QUERY_STRING") else ""
        return _Atoms({
            "h": environ.get("REMOTE_ADDR", "-"), "l": "-", "u": self._get_user(environ) or "-", "t": self.now(),
            "r": f"{environ.get('REQUEST_METHOD')} {route}{query} {environ.get('SERVER_PROTOCOL')}",
            "s": status, "m": environ.get("REQUEST_METHOD"), "U": route, "q": "***" if query else "",
            "H": environ.get("SERVER_PROTOCOL"), "b": sent is not None and str(sent) or "-", "B": sent,
            "f": environ.get("HTTP_REFERER", "-"), "a": environ.get("HTTP_USER_AGENT", "-"), "T": seconds,
            "D": seconds * 1000000 + micro, "M": seconds * 1000 + int(micro / 1000), "L": f"{seconds}.{micro:06d}",
            "p": f"<{os.getpid()}>",
        }, (getattr(req, "headers", req), resp.headers, environ))

    class atoms_wrapper_class(dict):  # noqa: N801  (gunicorn's attribute name)
        """gunicorn's `SafeAtoms` (a missing atom reads `-`, `{header}i` in any case, quotes
        escaped), masked as it is read: a hidden atom shows `***` (a path: the route), any
        other string is `redact`ed. Only the atoms the access log format names are read (a
        header or environ atom looked up then, `_Atoms`), so the others cost nothing."""

        def __init__(self, atoms: dict[str, Any]) -> None:
            super().__init__(atoms)
            self.sources = getattr(atoms, "sources", None)

        def __getitem__(self, key: str) -> Any:
            if key.startswith("{"):
                key = key.lower()
            if not dict.__contains__(self, key):
                if self.sources is None or not _Atoms.lookup(self, key, self.sources):
                    return "-"
            value = dict.__getitem__(self, key)
            name = key[1:-2] if key.startswith("{") and key[-2:] in ("}i", "}e") else ""
            if name in GunicornLogger.HIDDEN:
                value = dict.__getitem__(self, "U") if name in ("raw_uri", "request_uri", "path_info") else "***"
            elif isinstance(value, str):
                value = redact(value)
            return value.replace('"', '\\"') if isinstance(value, str) else value
