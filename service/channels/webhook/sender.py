"""The webhook sender's HTTP client: one POST on a keep-alive connection, lean.

`service.channels.webhook.deliver.post` is its caller; this module knows nothing of
deliveries. A direct POST is written in one `sendall` (request line, headers and body)
on this thread's kept connection to the receiver. Its answer, when it is a plain one
(HTTP/1.1, a Content-Length, nothing folded or odd: `plain_answer`), is read here as
`http.client` would read it (about 10 us less a POST); any other is read by the standard
library's `http.client.HTTPResponse` (status line, headers, Content-Length or chunked
body, keep-alive or close; its header lines read without the `email` parser: `Response`,
6 us an answer against 14): about 35 us of CPU per POST on loopback, against 500 for
requests and 140-190 for urllib3's pools (issue 26). A POST through a proxy goes through
urllib3's `ProxyManager` (proxy authentication, HTTPS proxies, CONNECT tunnels for https
targets), a rarer path.

Rulings:
* Nothing is followed: a redirect is an answer like any other (the caller's retry).
* An answer's body is read and dropped up to `DRAIN_LIMIT` bytes, so that its
  connection carries the next request; a longer one closes the connection instead.
* The timeout bounds each exchange as a whole: the connect, the TLS handshake, writing
  the request and reading the whole answer end by a deadline `timeout` seconds after the
  exchange began (`Deadline`: each read waits only for what is left of it), so a receiver
  that dribbles its answer a byte at a time holds a sender's thread no longer than one
  that does not answer (a per-read timeout, as requests' was, let it hold one for about a
  hundred times the timeout). A request made again on a new connection (below) is a new
  exchange, with a deadline of its own. An https receiver's certificate is verified against the CA bundle
  requests used (`REQUESTS_CA_BUNDLE` or `CURL_CA_BUNDLE` when set, else certifi's,
  else the system's), with its host name.
* The environment is read once per process (`environment`; `reset` reads it again):
  `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` (upper or lower case; a proxy without a scheme
  is `http://`), and `NO_PROXY`: `*` (no proxy at all), or a comma-separated list of host
  names (each also stands for its subdomains; a leading `.` or `*.` is dropped), IP
  addresses and CIDR blocks, any of them with `:port` for that port only. A URL's route
  (receiver, request target, proxy) is worked out once and kept.
* A kept connection the receiver has closed meanwhile is noticed before the request is
  written (it polls readable: end of file), and a new one is opened: no request is lost
  to an idle connection closed long ago. A request written on a kept connection that then
  fails as closed (reset, broken pipe, closed before the status line) is made again at
  once, once, on a new connection: a receiver closes an idle connection at a moment of
  its own, and the request raced it. (Had the receiver read it after all, it sees it twice
  with the same `webhook-id`, its idempotency key, like any rare duplicate.) Every other
  failure, and any failure on a new connection, is the attempt's: the caller retries it on
  its schedule. Through a proxy, urllib3 makes the first check only.
* Errors are texts `<Kind>: <host>:<port>: <exception>: <detail>`, the kinds those
  requests used (`ConnectionError`, `ConnectTimeout`, `ReadTimeout`, `SSLError`,
  `ProxyError`, `InvalidURL`); never the URL's path or query (the caller masks them
  again all the same).
* Connections are per thread (a thread's requests are one at a time), at most
  `MAX_RECEIVERS` receivers per thread (the oldest connection goes first); a forked
  child starts with none (it shares no socket with its parent). A connection is kept
  only when its answer was read to the end and did not ask to close it.
* A header name or value with a line break (or that is not ASCII) sends nothing:
  `InvalidHeader`.
"""

from __future__ import annotations

import http.client
import io
import ipaddress
import os
import select
import socket
import ssl
import threading
import time
import urllib.request
from typing import Any, NamedTuple
from urllib.parse import quote, unquote, urlsplit

import urllib3

#: An answer's body is read up to this many bytes (and dropped), so that its keep-alive
#: connection can carry the next request; a longer one closes the connection instead.
DRAIN_LIMIT = 64 * 1024
#: Receivers one thread keeps a connection to (the oldest goes first).
MAX_RECEIVERS = 32
#: URLs whose route is kept (all are forgotten when there are more).
MAX_ROUTES = 4096
#: Connections per receiver of a proxy's pools (a thread uses one at a time).
PROXY_POOL_SIZE = 16


class Answer(NamedTuple):
    """What one POST came to: the status and `Retry-After` header, or the error."""

    status: int | None = None
    retry_after: str | None = None
    error: str | None = None


class Environment(NamedTuple):
    """What this process read from its environment, once."""

    proxies: dict[str, str]  # scheme (or "all") -> proxy URL
    no_proxy: tuple[str, ...]
    ca_file: str | None
    ca_dir: str | None


class Route(NamedTuple):
    """Where a URL's requests go: the receiver (scheme, host in ASCII, port), the
    request target (path and query, quoted), the proxy URL (None: direct), and the
    request's first lines (`POST <target> HTTP/1.1`, `Host`)."""

    key: tuple[str, str, int]
    target: str
    proxy: str | None
    head: bytes

    @property
    def origin(self) -> str:
        """`scheme://host[:port]` (the port only when it is not the scheme's own)."""
        scheme, host, port = self.key
        named = f"[{host}]" if ":" in host else host
        return f"{scheme}://{named}" if port == (443 if scheme == "https" else 80) else f"{scheme}://{named}:{port}"

    @property
    def hostport(self) -> str:
        _, host, port = self.key
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


_lock = threading.Lock()
_env: Environment | None = None
_tls: ssl.SSLContext | None = None
_routes: dict[str, Route] = {}
_proxied: dict[str, urllib3.ProxyManager] = {}
_local = threading.local()
_generation = 0  # `reset` moves it on: every thread's connections are then dropped


def environment() -> Environment:
    """The proxies, `NO_PROXY` and CA bundle of the environment, read at the first call."""
    global _env
    env = _env
    if env is None:
        proxies = {key: value for key, value in urllib.request.getproxies().items() if value}
        no = proxies.pop("no", "")
        ca = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or _certifi()
        is_dir = bool(ca) and os.path.isdir(ca or "")
        env = _env = Environment(
            {key: value if "://" in value else f"http://{value}" for key, value in proxies.items()},
            tuple(x.strip().lower() for x in no.split(",") if x.strip()),
            None if is_dir else ca, ca if is_dir else None)
    return env


def _certifi() -> str | None:
    try:
        import certifi
    except ImportError:  # pragma: no cover (requests depends on it)
        return None
    return str(certifi.where())


def reset() -> None:
    """Forget what was read and opened: the environment is read again, every route
    worked out again, every thread's connections closed at its next request (tests
    that change the environment; a forked child)."""
    global _env, _tls, _generation
    with _lock:
        _env, _tls = None, None
        _routes.clear()
        for manager in _proxied.values():
            manager.clear()
        _proxied.clear()
        _generation += 1


def _forked() -> None:
    global _lock
    _lock = threading.Lock()  # (another thread of the parent may have held it)
    reset()


os.register_at_fork(after_in_child=_forked)


def tls_context() -> ssl.SSLContext:
    """The context of every direct https connection: certificates and host names
    verified against the environment's CA bundle."""
    global _tls
    ctx = _tls
    if ctx is None:
        env = environment()
        ctx = _tls = ssl.create_default_context(cafile=env.ca_file, capath=env.ca_dir)
    return ctx


# -- routes ---------------------------------------------------------------------------------
def route(url: str) -> Route:
    """Where `url`'s requests go (worked out once per URL). ValueError (or
    UnicodeError) for a URL no request can be made to."""
    found = _routes.get(url)
    if found is not None:
        return found
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("not an http:// or https:// URL with a host")
    host = parts.hostname if parts.hostname.isascii() else parts.hostname.encode("idna").decode("ascii")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    target = requote_uri(parts.path or "/") + (f"?{requote_uri(parts.query)}" if parts.query else "")
    named = f"[{host}]" if ":" in host else host
    host_header = named if port == (443 if parts.scheme == "https" else 80) else f"{named}:{port}"
    found = Route((parts.scheme, host, port), target, proxy_for(parts.scheme, host, port, environment()),
                  f"POST {target} HTTP/1.1\r\nHost: {host_header}\r\n".encode("ascii"))
    if len(_routes) >= MAX_ROUTES:
        _routes.clear()
    _routes[url] = found
    return found


def proxy_for(scheme: str, host: str, port: int, env: Environment) -> str | None:
    """The proxy URL for a request to `host`:`port` by `scheme`, or None (direct)."""
    proxy = env.proxies.get(scheme) or env.proxies.get("all")
    if not proxy or bypassed(host, port, env.no_proxy):
        return None
    return proxy


def bypassed(host: str, port: int, entries: tuple[str, ...]) -> bool:
    """Whether `NO_PROXY` (its `entries`) sends requests to `host`:`port` direct."""
    try:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    for entry in entries:
        if entry == "*":
            return True
        name, wanted = entry, ""
        if entry.startswith("["):  # [v6]:port
            name, _, rest = entry[1:].partition("]")
            wanted = rest[1:] if rest.startswith(":") else ""
        elif entry.count(":") == 1:  # name:port, v4:port (v6 has more colons)
            name, _, wanted = entry.partition(":")
        if wanted and wanted != str(port):
            continue
        if ip is not None:
            try:
                if ip in ipaddress.ip_network(name, strict=False):
                    return True
            except ValueError:
                pass
            continue
        name = name.removeprefix("*").removeprefix(".")
        if name and (host == name or host.endswith(f".{name}")):
            return True
    return False


_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def requote_uri(uri: str) -> str:
    """`uri` quoted as requests quotes a URL before sending it (`requests.utils.
    requote_uri`): characters not allowed in a URL percent-encoded, escapes of
    unreserved characters undone, other escapes kept."""
    parts = uri.split("%")
    for i in range(1, len(parts)):
        code = parts[i][:2]
        if len(code) == 2 and code.isalnum():
            try:
                char = chr(int(code, 16))
            except ValueError:  # not an escape: quote the `%` too
                return quote(uri, safe="!#$&'()*+,/:;=?@[]~")
            parts[i] = char + parts[i][2:] if char in _UNRESERVED else f"%{parts[i]}"
        else:
            parts[i] = f"%{parts[i]}"
    return quote("".join(parts), safe="!#$%&'()*+,/:;=?@[]~")


# -- direct ---------------------------------------------------------------------------------
class Connections:
    """One thread's kept connections, one per receiver (`Route.key`): a socket
    whose last answer was read to its end, ready for the next request."""

    def __init__(self) -> None:
        self.generation = _generation
        self.kept: dict[tuple[str, str, int], socket.socket] = {}

    def take(self, key: tuple[str, str, int]) -> socket.socket | None:
        """The kept connection to `key`, if there is one that the receiver has not
        closed meanwhile (it is no longer kept: `keep` it again after the exchange)."""
        sock = self.kept.pop(key, None)
        if sock is not None and dropped(sock):
            sock.close()
            return None
        return sock

    def keep(self, key: tuple[str, str, int], sock: socket.socket) -> None:
        if len(self.kept) >= MAX_RECEIVERS:
            self.kept.pop(next(iter(self.kept))).close()
        self.kept[key] = sock

    def close(self) -> None:
        for sock in self.kept.values():
            sock.close()
        self.kept.clear()


def connections() -> Connections:
    """This thread's kept connections."""
    mine: Connections | None = getattr(_local, "connections", None)
    if mine is None or mine.generation != _generation:
        if mine is not None:
            mine.close()
        mine = _local.connections = Connections()
    return mine


def dropped(sock: socket.socket) -> bool:
    """Whether a kept connection is readable: the receiver closed it (or sent what
    nobody asked for); either way it carries no more requests."""
    poll = select.poll()
    poll.register(sock, select.POLLIN)
    return bool(poll.poll(0))


def connect(key: tuple[str, str, int], timeout: float, deadline: float | None = None) -> socket.socket:
    """A new connection to the receiver `key` (TLS for https, the certificate verified);
    `deadline` (`time.monotonic`): the TLS handshake's waits end by then too."""
    scheme, host, port = key
    sock = socket.create_connection((host, port), timeout)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if scheme == "https":
            if deadline is not None:
                sock.settimeout(left(deadline))
            sock = tls_context().wrap_socket(sock, server_hostname=host)
    except BaseException:
        sock.close()
        raise
    return sock


#: A request written on a kept connection that fails with one of these before the
#: status line came was raced by the receiver closing the idle connection.
CLOSED = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError, ssl.SSLEOFError, ssl.SSLZeroReturnError)


def post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> Answer:
    """POST `body` to `url` once (see the module's rulings). The error is not masked."""
    try:
        where = route(url)
    except (ValueError, UnicodeError) as exc:
        return Answer(error=f"InvalidURL: {type(exc).__name__}: {exc}")
    if where.proxy is not None:
        return post_proxied(where, body, headers, timeout)
    lines = "".join([f"Content-Length: {len(body)}\r\n",
                     *(f"{name}: {value}\r\n" for name, value in headers.items()), "\r\n"])
    # (every line ends with CRLF, and no name or value holds a CR or LF of its own)
    if lines.count("\n") != len(headers) + 2 or lines.count("\r") != len(headers) + 2 or not lines.isascii():
        return Answer(error=f"InvalidHeader: {where.hostport}: a header name or value with a line break "
                            "or a character that is not ASCII")
    request = b"".join([where.head, lines.encode(), body])
    mine = connections()
    sock = mine.take(where.key)
    kept = sock is not None
    while True:
        connecting, answered, response = sock is None, False, None
        deadline = time.monotonic() + timeout  # the exchange's (a new one's, when made again)
        try:
            if sock is None:
                sock = connect(where.key, timeout, deadline)
                connecting = False
            sock.settimeout(left(deadline))  # (sendall: the whole request within it)
            sock.sendall(request)
            reader = Deadline(sock, deadline)
            plain = reader.plain_head()
            if plain is not None:  # the common answer, read without http.client (`plain_answer`)
                answered = True
                status, retry_after, length, close = plain
                again = reader.drain(length) and not close
                answer = Answer(status, retry_after)
            else:  # anything else (or nothing), as read so far, and on: http.client reads it
                response = Response(reader, method="POST")
                response.begin()
                answered = True
                again = drain(response) and not response.will_close
                answer = Answer(response.status, response.getheader("Retry-After"))
                response.close()  # (its reader; the socket stays open)
            if again:
                mine.keep(where.key, sock)
            else:
                sock.close()
            return answer
        except (OSError, http.client.HTTPException, ValueError) as exc:
            if response is not None:
                response.close()
            if sock is not None:
                sock.close()
            if kept and not answered and isinstance(exc, CLOSED):
                sock, kept = None, False
                continue  # the receiver closed the kept connection as the request went: once more
            return Answer(error=failed(kind_of(exc, connecting), where, exc))
        except BaseException:  # stopped mid-exchange (a job's time limit): the socket goes now
            if response is not None:
                response.close()
            if sock is not None:
                sock.close()
            raise


def left(deadline: float) -> float:
    """The seconds left until `deadline` (`time.monotonic`); TimeoutError when none are."""
    rest = deadline - time.monotonic()
    if rest <= 0:
        raise TimeoutError("timed out")
    return rest


class Deadline(io.RawIOBase):
    """A socket's reads for one answer, each waiting only for what is left until the
    exchange's `deadline` (`time.monotonic`), then TimeoutError: the whole answer comes
    by then, however the receiver spreads it out. `plain_head` reads the common answer's
    head itself; what it read, and what follows, is read on by `http.client` when it is
    not one (`makefile`: buffered, as a socket's own; closing it leaves the socket open)."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self.sock, self.deadline = sock, deadline
        self.held = b""  # read, not yet handed on

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(self)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.held:
            n = min(len(buffer), len(self.held))
            buffer[:n] = self.held[:n]
            self.held = self.held[n:]
            return n
        self.sock.settimeout(left(self.deadline))
        return self.sock.recv_into(buffer)

    def _recv(self) -> bytes:
        self.sock.settimeout(left(self.deadline))
        return self.sock.recv(PLAIN_HEAD)

    def plain_head(self) -> tuple[int, str | None, int, bool] | None:
        """Read the answer's head up to its blank line and, when it is a plain one
        (`plain_answer`), answer (status, Retry-After, body length, asks to close), the
        body's first bytes held for `drain`; else None, all that was read held for
        `http.client` (it reads that and on, as from the socket)."""
        buf = b""
        while True:
            chunk = self._recv()
            if not chunk:  # closed early: http.client says how
                self.held = buf
                return None
            buf += chunk
            end = buf.find(b"\r\n\r\n")
            bare = buf.count(b"\n") != buf.count(b"\r\n") if end < 0 else False
            if end >= 0 or bare or len(buf) > PLAIN_HEAD:
                break
        plain = None if end < 0 else plain_answer(buf[:end + 4])
        if plain is None:
            self.held = buf
            return None
        self.held = buf[end + 4:]
        return plain

    def drain(self, length: int) -> bool:
        """Read and drop a body of `length` bytes (after the held ones) unless it is
        longer than `DRAIN_LIMIT`; whether it was read to its end, and nothing more came
        (so that the connection can carry the next request). A body that ends early is
        `http.client.IncompleteRead`, as `http.client` reads it."""
        if length > DRAIN_LIMIT:
            return False
        got, self.held = len(self.held), b""
        while got < length:
            chunk = self._recv()
            if not chunk:
                raise http.client.IncompleteRead(bytes(got), length - got)
            got += len(chunk)
        return got == length


#: The longest answer head `Deadline.plain_head` reads itself (longer: `http.client` reads it).
PLAIN_HEAD = 16384


def plain_answer(head: bytes) -> tuple[int, str | None, int, bool] | None:
    """The answer whose `head` (its status line and header lines, each ending with CRLF,
    then the blank line) is plain, read as `Response` reads it: (status, the
    `Retry-After` header (several: joined with `, `, as `getheader`), the body's length,
    asks to close the connection). Plain: `HTTP/1.1` with a final status (2xx to 5xx), no
    bare CR or LF, no folded line, every line a `name: value`, at most 100 header lines,
    one `Content-Length` of digits (or none for 204 and 304, whose body is empty), no
    `Transfer-Encoding`. Anything else is None (`http.client` reads it)."""
    lines = head[:-4].split(b"\r\n")
    first = lines[0]
    if (len(lines) > 101 or not first.startswith(b"HTTP/1.1 ") or b"\r" in head[:-4].replace(b"\r\n", b"")
            or b"\n" in head[:-4].replace(b"\r\n", b"")):
        return None
    code = first[9:12]
    if not (code.isdigit() and len(first) >= 12 and first[12:13] in (b"", b" ") and 200 <= int(code) <= 599):
        return None
    status, length, close, retry = int(code), None, None, []
    for line in lines[1:]:
        name, colon, raw = line.partition(b":")
        if not colon or line[:1] in (b" ", b"\t"):
            return None
        key, value = name.lower(), raw.decode("iso-8859-1").lstrip(" \t")
        if key == b"content-length":
            if length is not None or not (value.isascii() and value.isdigit()):
                return None
            length = int(value)
        elif key == b"transfer-encoding":
            return None
        elif key == b"connection":
            if close is None:  # (the first, as `HTTPMessage.get`)
                close = "close" in value.lower()
        elif key == b"retry-after":
            retry.append(value)
    if status in (204, 304):
        length = 0
    elif length is None:
        return None
    return status, ", ".join(retry) if retry else None, length, bool(close)


class Response(http.client.HTTPResponse):
    """`http.client.HTTPResponse` whose header lines are read into its `HTTPMessage`
    directly (`lean_headers`), not through the `email` package's parser (a fifth of a
    POST's CPU): the same status, headers, length, chunking and keep-alive."""

    def begin(self) -> None:
        if self.headers is not None:
            return
        while True:  # (as http.client: up to the first answer that is not 100 Continue)
            version, status, reason = self._read_status()
            if status != http.client.CONTINUE:
                break
            http.client._read_headers(self.fp)  # type: ignore[attr-defined]
        self.code = self.status = status
        self.reason = reason.strip()
        if version in ("HTTP/1.0", "HTTP/0.9"):
            self.version = 10
        elif version.startswith("HTTP/1."):
            self.version = 11
        else:
            raise http.client.UnknownProtocol(version)
        self.headers = self.msg = lean_headers(self.fp)
        tr_enc = self.headers.get("transfer-encoding")
        self.chunked = bool(tr_enc and tr_enc.lower() == "chunked")
        if self.chunked:
            self.chunk_left = None
        self.will_close = self._check_close()  # type: ignore[attr-defined]
        self.length = None
        length = self.headers.get("content-length")
        if length and not self.chunked:
            try:
                self.length = int(length)
            except ValueError:
                self.length = None
            else:
                if self.length < 0:
                    self.length = None
        if status in (http.client.NO_CONTENT, http.client.NOT_MODIFIED) or 100 <= status < 200:
            self.length = 0
        if not self.will_close and not self.chunked and self.length is None:
            self.will_close = True


def lean_headers(fp: Any) -> http.client.HTTPMessage:
    """An answer's header lines (read as `http.client` reads them: its line and count
    limits) as an `HTTPMessage`, as the `email` parser makes it: each `name: value` line
    one header (the value without the spaces before it), a folded line (one that
    begins with a space or tab) kept, after a line break, in the header before it, a line
    without a colon dropped."""
    msg = http.client.HTTPMessage()
    for raw in http.client._read_headers(fp):  # type: ignore[attr-defined]
        line = raw.decode("iso-8859-1").rstrip("\r\n")
        if not line:
            break
        if line[0] in " \t":
            if msg._headers:  # type: ignore[attr-defined]
                name, value = msg._headers[-1]  # type: ignore[attr-defined]
                msg._headers[-1] = (name, f"{value}\r\n{line}")  # type: ignore[attr-defined]
            continue
        name, colon, value = line.partition(":")
        if colon:
            msg[name] = value.lstrip(" \t")
    return msg


def kind_of(exc: BaseException, connecting: bool) -> str:
    """The kind of a failed request, as requests named it."""
    if isinstance(exc, TimeoutError):
        return "ConnectTimeout" if connecting else "ReadTimeout"
    if isinstance(exc, ssl.SSLError) and not isinstance(exc, CLOSED):
        return "SSLError"
    return "ConnectionError"


def drain(response: http.client.HTTPResponse) -> bool:
    """Read and drop the answer's body, at most `DRAIN_LIMIT` bytes; whether it was
    all read (so that the connection can carry the next request)."""
    if response.length is not None:  # a Content-Length (0 for 204 and 304)
        if response.length > DRAIN_LIMIT:
            return False
        response.read()
        return True
    read = 0
    while read <= DRAIN_LIMIT:
        chunk = response.read(16384)
        if not chunk:
            return True
        read += len(chunk)
    return False


def failed(kind: str, where: Route, exc: BaseException) -> str:
    return f"{kind}: {where.hostport}: {type(exc).__name__}: {exc}"


# -- through a proxy ------------------------------------------------------------------------
def proxy_manager(proxy: str) -> urllib3.ProxyManager:
    """The process's pools through `proxy` (thread-safe), its user and password (if any)
    sent as `Proxy-Authorization`."""
    manager = _proxied.get(proxy)
    if manager is None:
        with _lock:
            manager = _proxied.get(proxy)
            if manager is None:
                auth = urllib3.util.parse_url(proxy).auth
                env = environment()
                manager = urllib3.ProxyManager(
                    proxy, num_pools=MAX_RECEIVERS, maxsize=PROXY_POOL_SIZE, block=False,
                    proxy_headers=urllib3.util.make_headers(proxy_basic_auth=unquote(auth)) if auth else None,
                    cert_reqs="CERT_REQUIRED", ca_certs=env.ca_file, ca_cert_dir=env.ca_dir)
                _proxied[proxy] = manager
    return manager


def post_proxied(where: Route, body: bytes, headers: dict[str, str], timeout: float) -> Answer:
    """`post` through the route's proxy (urllib3; no retry, no redirect)."""
    response = None
    try:
        assert where.proxy is not None
        response = proxy_manager(where.proxy).urlopen(
            "POST", where.origin + where.target, body=body, headers=headers, redirect=False, retries=False,
            timeout=urllib3.Timeout(connect=timeout, read=timeout), preload_content=False, decode_content=False)
        read, whole = 0, False
        while read <= DRAIN_LIMIT:
            chunk = response.read(16384, decode_content=False)
            if not chunk:
                whole = True
                break
            read += len(chunk)
        if not whole:
            response.close()  # (closes its connection)
        return Answer(response.status, response.headers.get("Retry-After"))
    except urllib3.exceptions.ProxyError as exc:
        return Answer(error=failed("ProxyError", where, exc))
    except urllib3.exceptions.NewConnectionError as exc:
        return Answer(error=failed("ConnectionError", where, exc))
    except (urllib3.exceptions.ConnectTimeoutError, urllib3.exceptions.ReadTimeoutError) as exc:
        kind = "ConnectTimeout" if isinstance(exc, urllib3.exceptions.ConnectTimeoutError) else "ReadTimeout"
        return Answer(error=failed(kind, where, exc))
    except urllib3.exceptions.SSLError as exc:
        return Answer(error=failed("SSLError", where, exc))
    except urllib3.exceptions.ProxySchemeUnknown as exc:
        return Answer(error=failed("ProxyError", where, exc))
    except (urllib3.exceptions.HTTPError, OSError, http.client.HTTPException, ValueError) as exc:
        return Answer(error=failed("ConnectionError", where, exc))
    finally:
        if response is not None:
            response.release_conn()
