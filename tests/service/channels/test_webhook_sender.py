"""The webhook sender's HTTP client (`service.channels.webhook.sender`, issue 26), against
raw HTTP receivers on loopback that do what a test asks of each request: proxies from
the environment (read once; `NO_PROXY` honoured), no redirect followed, the drain limit,
kept connections the receiver closed, TLS verification, and targets that are IP
addresses checked without the resolver."""

from __future__ import annotations

import base64
import datetime as dt
import http.client
import ipaddress
import socket
import ssl
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from service.channels.notify import Notifier
from service.channels.webhook import deliver, sender
from service.config import Settings
from service.core.errors import Problem
from service.core.kontor import Kontor
from tests.service.conftest import new_game

HEADERS = {"webhook-id": "w_test_1", "webhook-timestamp": "1", "webhook-signature": "v1,xx",
           "Content-Type": "application/json", "User-Agent": deliver.USER_AGENT}
BODY = b'{"type":"step.opened","timestamp":null,"data":{}}'
NO_CONTENT = b"HTTP/1.1 204 No Content\r\n\r\n"


# -- a receiver ---------------------------------------------------------------------------------
@dataclass
class Seen:
    """One request a receiver read: on which of its connections (from 1), and what."""

    conn: int
    line: str
    headers: dict[str, str]
    body: bytes


#: What a receiver does with a request (the request, its number on its connection from 1):
#: the bytes to answer (None: close at once without an answer) and whether to close after.
Behaviour = Callable[[Seen, int], tuple[bytes | None, bool]]


class Receiver:
    """A raw HTTP/1.1 server on loopback (TLS with `tls`): reads each request whole,
    records it, and does what `behaviour` says."""

    def __init__(self, behaviour: Behaviour | None = None, tls: ssl.SSLContext | None = None,
                 reset: bool = False) -> None:
        self.behaviour: Behaviour = behaviour or (lambda seen, n: (NO_CONTENT, False))
        self.tls, self.reset = tls, reset
        self.seen: list[Seen] = []
        self.closed = threading.Event()  # set whenever the receiver has closed a connection
        self.lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.conns = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, path: str = "/hook", scheme: str = "http") -> str:
        return f"{scheme}://127.0.0.1:{self.port}{path}"

    def stop(self) -> None:
        self.sock.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.conns += 1
                number = self.conns
            threading.Thread(target=self._serve, args=(conn, number), daemon=True).start()

    def _serve(self, conn: socket.socket, number: int) -> None:
        try:
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True)
            buf, n = b"", 0
            while True:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                head, _, buf = buf.partition(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
                length = int(headers.get("content-length") or 0)
                while len(buf) < length:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                seen = Seen(number, lines[0], headers, buf[:length])
                buf = buf[length:]
                n += 1
                with self.lock:
                    self.seen.append(seen)
                answer, close = self.behaviour(seen, n)
                if answer is None:
                    return
                conn.sendall(answer)
                if close:
                    return
        except OSError:
            return
        finally:
            if self.reset:
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            conn.close()
            self.closed.set()


def answer(status: str, *headers: str, body: bytes = b"") -> bytes:
    return ("\r\n".join([f"HTTP/1.1 {status}", *headers, f"Content-Length: {len(body)}", "", ""])).encode() + body


def chunked(status: str, size: int) -> bytes:
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in [b"x" * 8000] * (size // 8000) + [
        b"x" * (size % 8000)] if part)
    return f"HTTP/1.1 {status}\r\nTransfer-Encoding: chunked\r\n\r\n".encode() + chunks + b"0\r\n\r\n"


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """No proxy in the environment, and the sender reads it again (before and after)."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    sender.reset()
    yield monkeypatch
    sender.reset()


@pytest.fixture
def receivers() -> Iterator[Callable[..., Receiver]]:
    made: list[Receiver] = []

    def make(*args: Any, **kwargs: Any) -> Receiver:
        made.append(Receiver(*args, **kwargs))
        return made[-1]

    yield make
    for r in made:
        r.stop()


def post(url: str, timeout: float = 5.0, **headers: str) -> deliver.Answer:
    return deliver.post(url, BODY, {**HEADERS, **headers}, timeout)


# -- proxies ---------------------------------------------------------------------------------------------
def test_webhook_a_proxy_from_the_environment_is_used(fresh: pytest.MonkeyPatch,
                                                      receivers: Callable[..., Receiver]) -> None:
    proxy = receivers(lambda seen, n: (NO_CONTENT, False) if seen.line.startswith("POST")
                      else (answer("403 Forbidden"), True))
    fresh.setenv("HTTP_PROXY", f"http://kontor:s%40cret@127.0.0.1:{proxy.port}")
    fresh.setenv("HTTPS_PROXY", f"http://127.0.0.1:{proxy.port}")
    reads = []
    real = urllib.request.getproxies
    fresh.setattr(urllib.request, "getproxies", lambda: reads.append(1) or real())

    # (names under .invalid resolve nowhere: only the proxy can have sent them on)
    assert post("http://hooks.example.invalid:8080/h/key?token=t") == deliver.Answer(204, None)
    [seen] = proxy.seen
    assert seen.line == "POST http://hooks.example.invalid:8080/h/key?token=t HTTP/1.1"
    assert seen.headers["proxy-authorization"] == "Basic " + base64.b64encode(b"kontor:s@cret").decode()
    assert seen.body == BODY and seen.headers["webhook-id"] == "w_test_1"
    # An https target goes through a CONNECT tunnel (this proxy refuses it).
    refused = post("https://hooks.example.invalid/h/key")
    assert refused.status is None and refused.error and refused.error.startswith("ProxyError")
    assert proxy.seen[-1].line.startswith("CONNECT hooks.example.invalid:443 HTTP/1.")
    # The environment was read once: changing it now changes nothing until a reset.
    fresh.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    assert post("http://other.example.invalid/h") == deliver.Answer(204, None)
    assert proxy.seen[-1].line == "POST http://other.example.invalid/h HTTP/1.1"
    assert len(reads) == 1


@pytest.mark.parametrize("no_proxy", ["127.0.0.1", "localhost,127.0.0.0/8", "*", "{port}", ".example.org, 127.0.0.1"])
def test_webhook_no_proxy_is_honoured(fresh: pytest.MonkeyPatch, receivers: Callable[..., Receiver],
                                      no_proxy: str) -> None:
    proxy, target = receivers(), receivers()
    fresh.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
    fresh.setenv("NO_PROXY", no_proxy.replace("{port}", f"127.0.0.1:{target.port}"))
    assert post(target.url("/direct")) == deliver.Answer(204, None)
    assert [s.line for s in target.seen] == ["POST /direct HTTP/1.1"] and proxy.seen == []


@pytest.mark.parametrize(("host", "port", "entries", "direct"), [
    ("hooks.example.org", 443, ("example.org",), True),
    ("example.org", 443, (".example.org",), True),
    ("hooks.example.org", 443, ("*.example.org",), True),
    ("badexample.org", 443, ("example.org",), False),
    ("hooks.example.org", 443, ("example.org:8443",), False),
    ("hooks.example.org", 8443, ("example.org:8443",), True),
    ("10.1.2.3", 80, ("10.0.0.0/8",), True),
    ("10.1.2.3", 80, ("10.1.2.4",), False),
    ("::1", 80, ("::1",), True),
    ("::1", 80, ("[::1]:81",), False),
    ("anything", 80, ("*",), True),
    ("anything", 80, (), False),
])
def test_webhook_no_proxy_entries_match_as_documented(host: str, port: int, entries: tuple[str, ...],
                                                      direct: bool) -> None:
    assert sender.bypassed(host, port, entries) is direct


# -- answers -----------------------------------------------------------------------------------------------
def test_webhook_a_redirect_is_not_followed(fresh: pytest.MonkeyPatch, receivers: Callable[..., Receiver]) -> None:
    other = receivers()
    receiver = receivers(lambda seen, n: (answer("302 Found", f"Location: {other.url('/elsewhere')}"), False))
    assert post(receiver.url("/hook")) == deliver.Answer(302, None)
    assert len(receiver.seen) == 1 and other.seen == []


def test_webhook_a_redirect_is_recorded_as_a_retry(nclient: Any, nkontor: Kontor,
                                                   receivers: Callable[..., Receiver]) -> None:
    other = receivers()
    receiver = receivers(lambda seen, n: (answer("307 Temporary Redirect", f"Location: {other.url('/x')}"), False))
    host, players = new_game(nclient, 2)
    r = nclient.put(f"/games/{host.game}/seats/0/contact", json={"webhook_url": receiver.url("/s0")},
                    headers=players[0].bearer())
    assert r.status_code == 200, r.json
    [did] = Notifier(nkontor).dispatch(host.game, 0, nkontor.store.contact(host.game, 0) or {},
                                       [{"type": "game.finished", "game": host.game, "seat": 0, "phase": 1}])
    assert deliver.deliver(nkontor, host.game, did, 1) == "retrying"
    rec = nkontor.store.delivery(host.game, did)
    assert (rec["status"], rec["attempts"], rec["last_status"], rec["last_error"]) == ("retrying", 1, 307, "HTTP 307")
    assert len(receiver.seen) == 1 and other.seen == []


def test_webhook_retry_after_is_read(fresh: pytest.MonkeyPatch, receivers: Callable[..., Receiver]) -> None:
    receiver = receivers(lambda seen, n: (answer("503 Service Unavailable", "Retry-After: 120"), False))
    assert post(receiver.url()) == deliver.Answer(503, "120")


@pytest.mark.parametrize(("body", "kept"), [
    (answer("200 OK", body=b"x" * sender.DRAIN_LIMIT), True),
    (answer("200 OK", body=b"x" * (sender.DRAIN_LIMIT + 1)), False),
    (chunked("200 OK", sender.DRAIN_LIMIT - 100), True),
    (chunked("200 OK", 3 * sender.DRAIN_LIMIT), False),
    (answer("204 No Content", "Connection: close"), False),
])
def test_webhook_an_answer_over_the_drain_limit_closes_the_connection(
        fresh: pytest.MonkeyPatch, receivers: Callable[..., Receiver], body: bytes, kept: bool) -> None:
    receiver = receivers(lambda seen, n: (body, False))
    for _ in range(2):
        got = post(receiver.url())
        assert got.status == int(body.split()[1]), got
    assert [s.conn for s in receiver.seen] == ([1, 1] if kept else [1, 2])


# -- kept connections --------------------------------------------------------------------------------------
def test_webhook_a_kept_connection_the_receiver_closed_does_not_fail_the_next_delivery(
        nclient: Any, nkontor: Kontor, receivers: Callable[..., Receiver]) -> None:
    """The receiver closes each connection after its answer (a keep-alive timeout at
    once, no `Connection: close`): the next delivery goes on a new one, sent once."""
    receiver = receivers(lambda seen, n: (NO_CONTENT, True))
    host, players = new_game(nclient, 2)
    r = nclient.put(f"/games/{host.game}/seats/0/contact", json={"webhook_url": receiver.url("/s0")},
                    headers=players[0].bearer())
    assert r.status_code == 200, r.json
    dids = [Notifier(nkontor).dispatch(host.game, 0, nkontor.store.contact(host.game, 0) or {},
                                       [{"type": "game.finished", "game": host.game, "seat": 0, "phase": i}])[0]
            for i in (1, 2)]
    assert deliver.deliver(nkontor, host.game, dids[0], 1) == "sent"
    assert receiver.closed.wait(5)
    time.sleep(0.05)
    assert deliver.deliver(nkontor, host.game, dids[1], 1) == "sent"
    assert [(s.conn, s.headers["webhook-id"]) for s in receiver.seen] == [(1, dids[0]), (2, dids[1])]
    assert [nkontor.store.delivery(host.game, d)["attempts"] for d in dids] == [1, 1]


@pytest.mark.parametrize("reset", [False, True])
def test_webhook_a_request_that_raced_the_receiver_closing_a_kept_connection_is_made_again(
        fresh: pytest.MonkeyPatch, receivers: Callable[..., Receiver], reset: bool) -> None:
    """The receiver answers the first request of a connection and closes it on the
    second without an answer (closed, or reset): that request is made again at once on
    a new connection, with the same headers; the delivery does not fail."""
    receiver = receivers(lambda seen, n: (NO_CONTENT, False) if n == 1 else (None, True), reset=reset)
    assert post(receiver.url(), **{"webhook-id": "w_1"}) == deliver.Answer(204, None)
    assert post(receiver.url(), **{"webhook-id": "w_2"}) == deliver.Answer(204, None)
    assert [(s.conn, s.headers["webhook-id"]) for s in receiver.seen] == [(1, "w_1"), (1, "w_2"), (2, "w_2")]


def test_webhook_a_new_connection_closed_without_an_answer_is_a_failed_attempt(
        fresh: pytest.MonkeyPatch, receivers: Callable[..., Receiver]) -> None:
    receiver = receivers(lambda seen, n: (None, True))
    got = post(receiver.url("/hooks/p4th-s3cret?token=q5ery"))
    assert got.status is None and got.error and got.error.startswith("ConnectionError: 127.0.0.1:")
    assert "s3cret" not in got.error and "q5ery" not in got.error
    assert len(receiver.seen) == 1


def test_webhook_a_receiver_that_does_not_answer_in_time_is_a_read_timeout(
        fresh: pytest.MonkeyPatch, receivers: Callable[..., Receiver]) -> None:
    gate = threading.Event()
    receiver = receivers(lambda seen, n: (gate.wait(5) and NO_CONTENT, False))
    got = post(receiver.url(), timeout=0.3)
    gate.set()
    assert got.status is None and got.error and got.error.startswith("ReadTimeout: 127.0.0.1:")


class Dribbler:
    """A receiver that reads a request whole, then writes `head` at once and `slow` one
    byte at a time, `pause` seconds apart (each byte well within the sender's timeout,
    the whole far beyond it)."""

    def __init__(self, head: bytes, slow: bytes, pause: float = 0.02) -> None:
        self.head, self.slow, self.pause = head, slow, pause
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.requests = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                try:
                    buf = b""
                    while b"\r\n\r\n" not in buf or len(buf.partition(b"\r\n\r\n")[2]) < len(BODY):
                        data = conn.recv(65536)
                        if not data:
                            break
                        buf += data
                    self.requests += 1
                    conn.sendall(self.head)
                    for i in range(len(self.slow)):
                        conn.sendall(self.slow[i:i + 1])
                        time.sleep(self.pause)
                except OSError:  # the sender gave up and closed
                    pass

    def stop(self) -> None:
        self.sock.close()


@pytest.mark.parametrize("part", ["head", "body"])
def test_webhook_a_receiver_that_dribbles_its_answer_is_a_read_timeout(fresh: pytest.MonkeyPatch,
                                                                      part: str) -> None:
    """The timeout bounds the whole exchange, not each read: an answer that comes a byte
    at a time (every byte within the timeout, the whole answer taking ~20 times it) is a
    read timeout, as one that never comes; its connection is not kept."""
    whole = answer("200 OK", "X-Pad: " + "p" * 80, body=b"x" * 200)
    head, _, body = whole.partition(b"\r\n\r\n")
    dribbler = Dribbler(b"", whole) if part == "head" else Dribbler(head + b"\r\n\r\n", body)
    try:
        got = post(f"http://127.0.0.1:{dribbler.port}/hook", timeout=0.2)
        assert got.status is None and got.error and got.error.startswith("ReadTimeout: 127.0.0.1:")
        assert dribbler.requests == 1
        assert sender.connections().kept == {}
    finally:
        dribbler.stop()


def test_webhook_an_answer_in_time_after_a_slow_one_is_read_on_a_kept_connection(
        fresh: pytest.MonkeyPatch, receivers: Callable[..., Receiver]) -> None:
    """Each exchange has a deadline of its own: a kept connection whose last answer took
    most of the timeout carries the next request with the whole timeout again."""
    receiver = receivers(lambda seen, n: (time.sleep(0.15) or NO_CONTENT, False))
    assert post(receiver.url(), timeout=0.5).status == 204
    assert post(receiver.url(), timeout=0.5).status == 204
    assert [s.conn for s in receiver.seen] == [1, 1]


# -- TLS ----------------------------------------------------------------------------------------------------
def self_signed(tmp: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 signed by itself, and its key (PEM files)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kontor test receiver")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = tmp / "cert.pem", tmp / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file


def test_webhook_https_verifies_the_receivers_certificate(fresh: pytest.MonkeyPatch, tmp_path: Path,
                                                          receivers: Callable[..., Receiver]) -> None:
    cert, key = self_signed(tmp_path)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    receiver = receivers(tls=tls)
    refused = post(receiver.url(scheme="https"))
    assert refused.status is None and refused.error and refused.error.startswith("SSLError: 127.0.0.1:")
    assert receiver.seen == []
    # Trusted through the environment's CA bundle (as requests read it), and kept.
    fresh.setenv("REQUESTS_CA_BUNDLE", str(cert))
    sender.reset()
    for _ in range(2):
        assert post(receiver.url("/tls", scheme="https")) == deliver.Answer(204, None)
    assert [(s.conn, s.line) for s in receiver.seen] == [(2, "POST /tls HTTP/1.1")] * 2


# -- targets --------------------------------------------------------------------------------------------------
def test_webhook_an_ip_literal_target_is_checked_without_the_resolver(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def resolver(host: str, *args: Any, **kwargs: Any) -> list[Any]:
        asked.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.9.8.7", 80))]

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    strict, private = Settings(), replace(Settings(), webhook_allow_private=True)
    for url in ("http://10.1.2.3/x", "http://[fd00::1]:8080/x", "http://169.254.169.254/latest", "http://127.0.0.1/x"):
        with pytest.raises(Problem) as refused:
            deliver.check_target(url, strict)
        assert refused.value.code == "webhook_target_refused"
    assert deliver.check_target("http://10.1.2.3/x", private) == ["10.1.2.3"]
    assert deliver.check_target("http://10.1.2.3/x", private) == ["10.1.2.3"]
    assert deliver.check_target("http://93.184.215.14/x", strict) == ["93.184.215.14"]
    assert asked == []
    # A name is resolved at every check (DNS may change between attempts).
    for _ in range(2):
        with pytest.raises(Problem):
            deliver.check_target("http://hooks.example.org/x", strict)
    assert asked == ["hooks.example.org"] * 2


_ANSWERS = [
    b"HTTP/1.1 204 No Content\r\nServer: x \r\nDate: Sun, 06 Dec 2026 17:00:00 GMT\r\n\r\n",
    b"HTTP/1.1 503 Busy\r\nRetry-After: 120\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbusy",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Folded: a\r\n  b\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\nKeep-Alive: timeout=5\r\n\r\nok",
    b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
    b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 429 Slow\r\nretry-after: Wed, 21 Oct 2026 07:28:00 GMT\r\n"
    b"Content-Length: -1\r\nno colon here\r\n\r\n",
    b"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n",
]


class _Sock:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def makefile(self, mode: str) -> Any:
        import io

        return io.BytesIO(self.data)


@pytest.mark.parametrize("raw", _ANSWERS)
def test_webhook_sender_reads_an_answer_as_http_client_does(raw: bytes) -> None:
    """The sender's lean answer (`Response`: headers without the email parser) reads
    status, headers, length, chunking and keep-alive as `http.client.HTTPResponse`."""
    import http.client

    mine, theirs = sender.Response(_Sock(raw), method="POST"), http.client.HTTPResponse(_Sock(raw), method="POST")
    mine.begin()
    theirs.begin()
    assert list(mine.headers.items()) == list(theirs.headers.items())
    assert (mine.status, mine.reason, mine.version, mine.length, mine.chunked, mine.will_close) == \
        (theirs.status, theirs.reason, theirs.version, theirs.length, theirs.chunked, theirs.will_close)
    assert mine.getheader("Retry-After") == theirs.getheader("Retry-After")
    assert mine.read() == theirs.read()


#: Answers `Deadline.plain_head` reads itself (the others: `http.client` reads them on).
_PLAIN = [
    b"HTTP/1.1 204 No Content\r\nServer: x \r\nDate: Sun, 06 Dec 2026 17:00:00 GMT\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    b"HTTP/1.1 503 Busy\r\nRetry-After: 120\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbusy",
    b"HTTP/1.1 429 Slow\r\nretry-after: 5\r\nRetry-After: \t 7 \r\nContent-Length: 0\r\n\r\n",
    b"HTTP/1.1 200\r\nContent-Length: 0\r\nConnection: keep-alive\r\nCONNECTION: close\r\n\r\n",
    b"HTTP/1.1 201 Created\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n",
    b"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n",
    b"HTTP/1.1 204 No Content\r\n\r\nsurplus",
    b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nokay",
    b"HTTP/1.1 200 OK\r\nContent-Length: 70000\r\n\r\n" + b"x" * 70000,
    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab",
    b"HTTP/1.1 410 Gone\r\n:odd\r\nX: a:b\r\nContent-Length: 1\r\n\r\n!",
]
_NOT_PLAIN = [
    *_ANSWERS[2:6],
    b"HTTP/1.1 200 OK\nContent-Length: 0\n\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 0\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok",
    b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok",
    b"HTTP/1.1 200 OK\r\n\r\nuntil the end",
    b"HTTP/1.1  200 OK\r\nContent-Length: 0\r\n\r\n",
    b"HTTP/1.1 200OK\r\nContent-Length: 0\r\n\r\n",
    b"HTTP/1.1 600 Odd\r\nContent-Length: 0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: a\rb\r\n\r\n",
    b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * 101 + b"Content-Length: 0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n",
    b"",
    b"garbage\r\n\r\n",
]


def _fed(raw: bytes) -> socket.socket:
    """The reading end of a connection on which `raw` was answered, then closed."""
    ours, theirs = socket.socketpair()
    threading.Thread(target=lambda: (theirs.sendall(raw), theirs.shutdown(socket.SHUT_WR)), daemon=True).start()
    return ours


def _read_as_post_does(raw: bytes, plain: bool) -> tuple[Any, ...]:
    reader = sender.Deadline(_fed(raw), time.monotonic() + 5)
    try:
        head = reader.plain_head()
        assert (head is not None) == plain
        if head is not None:
            status, retry_after, length, close = head
            return status, retry_after, reader.drain(length) and not close
        response = sender.Response(reader, method="POST")
        response.begin()
        return response.status, response.getheader("Retry-After"), sender.drain(response) and not response.will_close
    except (OSError, http.client.HTTPException, ValueError) as exc:
        return type(exc).__name__, str(exc)
    finally:
        reader.sock.close()


def _read_by_http_client(raw: bytes) -> tuple[Any, ...]:
    sock = _fed(raw)
    try:
        response = http.client.HTTPResponse(sock, method="POST")
        response.begin()
        return response.status, response.getheader("Retry-After"), sender.drain(response) and not response.will_close
    except (OSError, http.client.HTTPException, ValueError) as exc:
        return type(exc).__name__, str(exc)
    finally:
        sock.close()


@pytest.mark.parametrize(("raw", "plain"), [(raw, True) for raw in _PLAIN] + [(raw, False) for raw in _NOT_PLAIN])
def test_webhook_sender_reads_a_plain_answer_itself_and_any_other_by_http_client_as_it_does(raw: bytes,
                                                                                           plain: bool) -> None:
    """A plain answer is read without `http.client`, anything else by it from what was
    read on: the status, `Retry-After`, and whether the connection is kept (its body
    read to the end, no more and no close asked) come out as `http.client` reads them,
    and so do its errors; a plain answer with more than its body is not kept."""
    got, expected = _read_as_post_does(raw, plain), _read_by_http_client(raw)
    if raw.endswith(b"surplus") or raw.endswith(b"okay"):  # http.client drops the surplus, keeping the connection
        assert got == (*expected[:2], False) and expected[2] is True
    else:
        assert got == expected
