"""gunicorn settings of the web process: `gunicorn -c python:service.http.gunicorn_conf ...`
(the Procfile's `web` line). The workers, bind address and logs stay on the command line.

gunicorn answers some requests itself, before the app sees them: a request line longer
than `limit_request_line` (414), too many or too large header fields (431), a malformed
request (400), an unsupported transfer coding (501). It writes those as a small
`text/html` page, and gunicorn 27 has no setting or hook for that page. The `post_fork`
hook below replaces the one function that writes it (`gunicorn.util.write_error`, which
every worker class calls through the module) in each worker, so these answers are
RFC 9457 `application/problem+json` with a stable `code`, like every answer of the app.
"""

from __future__ import annotations

import json
from typing import Any

#: gevent workers: each request runs in a greenlet, so an open live stream
#: (`GET /games/{id}/stream`, server-sent events) waits without holding a worker, and a
#: worker keeps a client's connection alive between requests instead of closing it after
#: each one (gunicorn's sync worker half-closes every connection and waits up to 2 s for
#: the client's close, which cost a quarter of a sync worker's time under load). Requests
#: are still served one at a time per worker while they compute: the app does not yield
#: except on I/O (Valkey). docs/performance.md ("Why gevent workers") has the measurements behind
#: the choice. `GUNICORN_CMD_ARGS="--worker-class sync"` brings the sync workers back
#: (then each open stream holds a worker).
worker_class = "gevent"

def _connections() -> int:
    """Open connections per worker: the live streams a process serves at most
    (`stream_max_per_process`, refused beyond with 429 `too_many_streams`) plus room for
    every other request (`stream_headroom`), so open streams never starve `/healthz`, reads
    or orders. (At 1,000, 2,100 open connections over two workers made `/healthz` wait in
    the listen queue for over 10 s: a gevent worker stops accepting at `worker_connections`.)"""
    from service.config import settings_for  # the settings only (no app): the master loads this file

    # Settings the service cannot run on (a cluster store without KONTOR_QUEUE_URL) stop
    # gunicorn here, before any worker: one sentence, exit status 2.
    settings = settings_for("the web process")
    return settings.stream_max_per_process + settings.stream_headroom


#: Open connections per worker (streams included): see `_connections`. A connection that
#: sends no request is closed after `keepalive` seconds (gunicorn waits that long for
#: every request line, the first included), so idle raw connections do not pile up.
worker_connections = _connections()
#: Store connections a process may open (`service.store.base.MAX_CONNECTIONS`) and other
#: files (logs, the listening socket): file descriptors a worker needs beyond its connections.
OTHER_FILES = 4096 + 256
#: Seconds an idle kept-alive connection stays open.
keepalive = 5
#: Seconds a worker waits for its open requests on shutdown before it closes them. A live
#: stream never ends by itself (a page left open follows its game for hours), so gunicorn's
#: 30 s default made every stop wait for it; a stream's client reconnects (or polls) and
#: resumes from its last event. Below the supervisor's grace (`service.dev.supervisor`),
#: so `make run` stops cleanly on Ctrl-C instead of killing the web process.
graceful_timeout = 3

#: JSON log lines, and an access log that shows the route (never an unsubscribe token,
#: a query's values or a credential): see `service.logs.GunicornLogger`.
logger_class = "service.logs.GunicornLogger"
accesslog = "-"

#: Longest request line (method, target, version), bytes: 414 beyond. Kontor's longest
#: paths and query strings stay far below.
limit_request_line = 4094
#: Most header fields per request: 431 beyond.
limit_request_fields = 64
#: Longest header field (name and value), bytes: 431 beyond. A bearer token is < 1 KB.
limit_request_field_size = 8190

#: gunicorn's own answers by status: the stable code and title, as `/problems` lists them
#: (`service.core.errors.CODES`, `service.http.api.HTTP_PROBLEMS`; a test keeps them equal).
#: Kept here so that loading this file in gunicorn's master imports nothing of the app.
GUNICORN_PROBLEMS: dict[int, tuple[str, str]] = {
    400: ("bad_request", "The request is malformed."),
    403: ("forbidden", "This key may not do that."),
    414: ("uri_too_long", "The request line is too long."),
    417: ("expectation_failed", "The request's Expect header cannot be met."),
    431: ("header_fields_too_large", "The request's header fields are too large."),
    500: ("internal_error", "Internal error."),
    501: ("not_implemented", "The request uses a transfer coding this server does not implement."),
}


def problem_page(status: int, reason: str, message: str) -> bytes:
    """The whole HTTP answer gunicorn sends for its own errors, as problem+json."""
    code, title = GUNICORN_PROBLEMS.get(status, ("internal_error" if status >= 500 else "bad_request", reason))
    body = json.dumps({"type": f"/problems/{code}", "title": title, "status": status,
                       "detail": message or reason, "code": code}, ensure_ascii=True).encode("ascii") + b"\n"
    head = (f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\nContent-Type: application/problem+json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode("latin-1")
    return head + body


def write_problem(sock: Any, status_int: int, reason: str, mesg: str) -> None:
    """A stand-in for `gunicorn.util.write_error` (same arguments)."""
    from gunicorn import util

    util.write_nonblock(sock, problem_page(status_int, reason, mesg))


def on_starting(server: Any) -> None:
    """In the master, before the workers are forked (they inherit it): raise the soft limit
    of open files to what `worker_connections` needs, as far as the hard limit allows (a
    worker at its limit refuses connections with EMFILE); say so when it cannot."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = worker_connections + OTHER_FILES
    want = need if hard == resource.RLIM_INFINITY else min(need, hard)
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    if want < need:
        server.log.warning("open files limited to %d, below the %d that %d connections per worker need: raise "
                           "the hard limit (LimitNOFILE, ulimit -Hn) or lower KONTOR_STREAM_MAX_PER_PROCESS",
                           want, need, worker_connections)


#: Peer addresses whose answer `remembered_allow_check` keeps per worker (then it starts again).
ALLOW_CHECKS_KEPT = 4096


def remembered_allow_check(check: Any) -> Any:
    """gunicorn's `_ip_in_allow_list(ip, allow_list, networks)` (whether a peer may set the
    forwarding headers, asked for every request), its answer kept per (address, lists): it
    parsed the peer's address and walked the networks for every request (2% of the web
    CPU of a stream move). The lists are the worker's settings, the same objects for
    every request (taken by identity; a changed setting is a new worker)."""
    kept: dict[tuple[str, int, int], bool] = {}

    def allowed(ip_str: str, allow_list: Any, networks: Any) -> bool:
        key = (ip_str, id(allow_list), id(networks))
        out = kept.get(key)
        if out is None:
            out = bool(check(ip_str, allow_list, networks))
            if len(kept) >= ALLOW_CHECKS_KEPT:
                kept.clear()
            kept[key] = out
        return out

    return allowed


class Gathered:
    """Stands in for a response's socket while gunicorn writes a response's head and its
    first piece of body (`one_send_writes`): keeps what it is asked to send."""

    __slots__ = ("parts",)

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def sendall(self, data: bytes) -> None:
        self.parts.append(bytes(data))


def one_send_writes(write: Any) -> Any:
    """gunicorn's `Response.write`, with the response's head sent together with the first
    piece of its body: gunicorn sent the head (status line and header fields) on its own
    and then the body, two sends (two system calls, two packets) for every answer, the
    fast paths' one-piece answers included (gevent's send was 13% of the web CPU of a poll
    move). The writes are gunicorn's own (its framing, lengths and checks), made on a
    stand-in that gathers them (`Gathered`), then sent at once. Later pieces (a stream's
    next frames) are written as before."""

    def write_once(self: Any, arg: Any) -> None:
        if self.headers_sent:
            return write(self, arg)
        sock, gathered = self.sock, Gathered()
        self.sock = gathered
        try:
            write(self, arg)
        finally:
            self.sock = sock
        if gathered.parts:
            sock.sendall(b"".join(gathered.parts))

    write_once.one_send = True
    return write_once


def post_fork(server: Any, worker: Any) -> None:
    """In each worker: gunicorn's own error answers become problem+json; the forwarding
    check of a peer's address is made once per address (`remembered_allow_check`); an
    answer's head goes out with its first piece of body (`one_send_writes`)."""
    from gunicorn import util
    from gunicorn.http import message, wsgi

    util.write_error = write_problem
    if hasattr(message, "_ip_in_allow_list"):
        message._ip_in_allow_list = remembered_allow_check(message._ip_in_allow_list)
    if not getattr(wsgi.Response.write, "one_send", False):
        wsgi.Response.write = one_send_writes(wsgi.Response.write)


def post_worker_init(worker: Any) -> None:
    """In each worker, once gevent has patched it and the app is loaded: redis-py's
    per-command check of a pooled connection becomes a plain non-blocking poll
    (`service.store.base.quick_readiness_checks`; nothing to do in a sync worker), and the
    logs (access, error, the app's) are written in batches (`service.logs.Buffered`: one
    write per `Buffered.INTERVAL` seconds instead of one per line; `worker_exit` and the
    exit write the rest); gevent's `sendall` first tries one plain send (`quick_sendall`)."""
    from service.store.base import quick_readiness_checks

    quick_readiness_checks()
    quick_sendall()
    if hasattr(worker.log, "buffer"):
        worker.log.buffer()


def quick_sendall() -> None:
    """gevent's `socket.sendall` asks the kernel for the socket's send buffer size (a
    `getsockopt` call) before every send, to cut large data in chunks. What a web worker
    sends (answers, stream frames, store commands) is small and nearly always goes out in
    one send: so `sendall` of `bytes` on a plain gevent socket first tries one send of the
    whole, and hands only what is left (or a full buffer's wait) to gevent's own `sendall`,
    with its chunks, waits and timeout. Other sockets (TLS ones) and other data keep
    gevent's. Once per process; nothing in a process without gevent."""
    try:
        from gevent import socket as gsocket
    except ImportError:  # pragma: no cover - gevent is a dependency
        return
    cls = gsocket.socket
    real = cls.sendall
    if getattr(real, "quick", False):
        return

    def sendall(self: Any, data: Any, flags: int = 0) -> None:
        if type(data) is bytes and type(self) is cls and data:
            try:
                sent = self._sock.send(data, flags)
            except BlockingIOError:  # the buffer is full: gevent's waits for room
                return real(self, data, flags)  # type: ignore[no-any-return]
            if sent == len(data):
                return None
            return real(self, memoryview(data)[sent:], flags)  # type: ignore[no-any-return]
        return real(self, data, flags)  # type: ignore[no-any-return]

    sendall.quick = True  # type: ignore[attr-defined]
    cls.sendall = sendall


def _flush_logs(log: Any) -> None:
    if hasattr(log, "flush"):
        log.flush()


#: Seconds a stopping worker waits for the steps it is resolving (`service.http.inweb`).
INWEB_FINISH = 5.0


def worker_exit(server: Any, worker: Any) -> None:
    """In a worker that stops: let the steps it is resolving commit (`inweb.finish`: else
    they wait for the sweep's orphan check), then write the log lines it holds back (`post_worker_init`)."""
    from service.http import inweb

    if not inweb.finish(INWEB_FINISH):
        worker.log.warning("stopping with steps still being resolved here: the sweep hands them to the workers")
    _flush_logs(worker.log)


def worker_abort(worker: Any) -> None:
    """In a worker that timed out (SIGABRT, before it exits): write the log lines it holds back."""
    _flush_logs(worker.log)
