"""gunicorn's own answers (before the app sees a request) are problem+json too, with the
limits of `service/http/gunicorn_conf.py`, as the Procfile starts the web process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from service.http import gunicorn_conf

ROOT = Path(__file__).resolve().parents[3]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_procfile_web_line_uses_the_config() -> None:
    web = next(line for line in (ROOT / "Procfile").read_text().splitlines() if line.startswith("web:"))
    assert "-c python:service.http.gunicorn_conf" in web


@pytest.fixture(scope="module")
def gunicorn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """A real gunicorn, one worker (of the class the config sets), started with the config
    the Procfile names. The app is not needed for these answers; it never connects to a
    store here."""
    port = _free_port()
    env = {**os.environ, "KONTOR_REDIS_URL": "redis://127.0.0.1:1/0"}
    log = tmp_path_factory.mktemp("gunicorn") / "log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "python:service.http.gunicorn_conf",
                                 "-w", "1", "-b", f"127.0.0.1:{port}", "--no-control-socket",
                                 "service:create_app()"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        # Ready once a worker answers (the socket accepts before the worker has loaded the app).
        with serving(proc, log, lambda: raw(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")[0],
                     timeout=120):
            yield port


@contextmanager
def serving(proc: subprocess.Popen[bytes], log: Path, status: Callable[[], int], timeout: float) -> Iterator[None]:
    """A gunicorn started as `proc` (its output in `log`), once `status()` (a probe of
    `/healthz`) says 200 within `timeout` seconds; terminated after the block."""
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if status() == 200:
                    break
            except (OSError, IndexError, ValueError):
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"gunicorn did not start: {log.read_text()[-2000:]}")
            time.sleep(0.2)
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def raw(port: int, data: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send bytes, read the whole answer (gunicorn closes after its own errors)."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        s.sendall(data)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


@pytest.mark.parametrize("name,request_bytes,status,code", [
    ("request line too long", b"GET /" + b"a" * 5000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414, "uri_too_long"),
    ("header field too large", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 9000 + b"\r\n\r\n", 431,
     "header_fields_too_large"),
    ("too many header fields", b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
     + b"".join(b"X-%d: 1\r\n" % i for i in range(80)) + b"\r\n", 431, "header_fields_too_large"),
    ("malformed request line", b"GET\r\n\r\n", 400, "bad_request"),
    ("bad header name", b"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n", 400, "bad_request"),
])
def test_gunicorn_errors_are_problems(gunicorn: int, name: str, request_bytes: bytes, status: int,
                                      code: str) -> None:
    got, headers, body = raw(gunicorn, request_bytes)
    assert got == status, (name, got, body[:200])
    assert headers["content-type"] == "application/problem+json", headers
    assert int(headers["content-length"]) == len(body)
    problem: dict[str, Any] = json.loads(body)
    assert (problem["status"], problem["code"], problem["type"]) == (status, code, f"/problems/{code}")
    assert problem["title"] and problem["detail"]


def test_gunicorn_still_serves_the_app(gunicorn: int) -> None:
    status, headers, body = raw(gunicorn, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert status == 200 and json.loads(body) == {"status": "ok"}


def test_gunicorn_codes_are_listed(client: Any) -> None:
    listed = client.get("/problems").json
    for status, (code, title) in gunicorn_conf.GUNICORN_PROBLEMS.items():
        assert listed[code] == {"status": status, "title": title}, code


def test_loading_the_config_imports_no_app() -> None:
    # gunicorn's master loads the config before any worker loads the app.
    out = subprocess.run([sys.executable, "-c", "import sys, service.http.gunicorn_conf; "
                          "print('flask' in sys.modules)"], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_access_log_of_a_gunicorn_worker_is_written_in_batches_and_whole_at_a_clean_stop(
        tmp_path: Path) -> None:
    """The web workers write their log lines in batches (`service.logs.Buffered`): a line
    shows within a moment without a flush, and a clean stop (SIGTERM) writes every line
    still held back."""
    port = _free_port()
    env = {**os.environ, "KONTOR_REDIS_URL": "redis://127.0.0.1:1/0"}
    log = tmp_path / "log"

    def healthz(rid: str) -> int:
        request = f"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: {rid}\r\nConnection: close\r\n\r\n"
        return raw(port, request.encode())[0]

    def ids() -> list[str]:
        out = []
        for line in log.read_text().splitlines():
            if line.startswith("{") and json.loads(line).get("logger") == "gunicorn.access":
                out.append(json.loads(line)["id"])
        return out

    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "python:service.http.gunicorn_conf",
                                 "-w", "1", "-b", f"127.0.0.1:{port}", "--no-control-socket",
                                 "service:create_app()"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        with serving(proc, log, lambda: healthz("r-probe"), timeout=120):
            assert healthz("r-first") == 200
            deadline = time.monotonic() + 20
            while "r-first" not in ids() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert "r-first" in ids()  # written by the batch's timer, no flush asked
            for i in range(5):
                assert healthz(f"r-last-{i}") == 200
        # (`serving` stopped it with SIGTERM and waited)
    assert [i for i in ids() if i.startswith("r-last-")] == [f"r-last-{i}" for i in range(5)]


def test_order_requests_forwarding_check_answers_as_gunicorns() -> None:
    """The per-worker memory of gunicorn's forwarding check (`remembered_allow_check`,
    installed by `post_fork`) answers what gunicorn's own check answers, asking it once
    per address and lists."""
    import ipaddress

    from gunicorn.http import message

    real = message._ip_in_allow_list
    asked: list[str] = []

    def counted(ip: str, allow: Any, networks: Any) -> bool:
        asked.append(ip)
        return bool(real(ip, allow, networks))

    check = gunicorn_conf.remembered_allow_check(counted)
    local = ["127.0.0.1", "::1", "10.0.0.0/8"]
    local_nets = [ipaddress.ip_network(a) for a in local]
    anyone: list[str] = ["*"]
    for _ in range(3):
        for ip in ("127.0.0.1", "::1", "10.2.3.4", "192.168.1.1", "not-an-ip", "127.0.0.2"):
            assert check(ip, local, local_nets) == real(ip, local, local_nets), ip
            assert check(ip, anyone, []) is True
    assert len(asked) == 12  # once per (address, lists)


def test_order_requests_forwarding_check_is_installed_by_post_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    from gunicorn import util
    from gunicorn.http import message, wsgi

    monkeypatch.setattr(message, "_ip_in_allow_list", message._ip_in_allow_list)
    monkeypatch.setattr(util, "write_error", util.write_error)
    monkeypatch.setattr(wsgi.Response, "write", wsgi.Response.write)
    real = message._ip_in_allow_list
    gunicorn_conf.post_fork(None, None)
    assert message._ip_in_allow_list is not real
    assert message._ip_in_allow_list("127.0.0.1", ["127.0.0.1"], [__import__("ipaddress").ip_network("127.0.0.1")])
    assert not message._ip_in_allow_list("10.0.0.1", ["127.0.0.1"], [__import__("ipaddress").ip_network("127.0.0.1")])
    assert util.write_error is gunicorn_conf.write_problem


class _Socket:
    """A response's socket that keeps every send."""

    def __init__(self) -> None:
        self.sends: list[bytes] = []

    def sendall(self, data: bytes) -> None:
        self.sends.append(bytes(data))


class _Request:
    def __init__(self, method: str = "GET", version: tuple[int, int] = (1, 1)) -> None:
        self.method, self.version = method, version

    def should_close(self) -> bool:
        return False


def _written(write: Any, method: str, status: str, headers: list[tuple[str, str]], pieces: list[bytes],
             version: tuple[int, int] = (1, 1)) -> list[bytes]:
    """The sends of one response whose body pieces `write` writes, as gunicorn's worker
    writes them (then `close`)."""
    from gunicorn.http import wsgi

    sock = _Socket()
    resp = wsgi.Response(_Request(method, version), sock, type("Cfg", (), {})())
    resp.start_response(status, headers)
    for piece in pieces:
        write(resp, piece)
    resp.close()
    return sock.sends


@pytest.mark.parametrize(("method", "status", "headers", "pieces", "version"), [
    ("GET", "200 OK", [("Content-Type", "application/json"), ("Content-Length", "8")], [b'{"a":1}\n'], (1, 1)),
    ("PUT", "202 ACCEPTED", [("Content-Length", "6"), ("X-Request-Id", "r-1")], [b"abc", b"def"], (1, 1)),
    ("GET", "200 OK", [("Content-Type", "text/event-stream")], [b"event: step\n\n", b"", b": keep-alive\n\n"],
     (1, 1)),
    ("GET", "200 OK", [("Content-Type", "text/plain")], [b"", b"late"], (1, 1)),
    ("GET", "200 OK", [("Content-Type", "text/plain")], [b"old client"], (1, 0)),
    ("GET", "304 NOT MODIFIED", [("X-Request-Id", "r-2")], [], (1, 1)),
    ("HEAD", "200 OK", [("Content-Length", "5")], [b"hello"], (1, 1)),
    ("GET", "200 OK", [("Content-Length", "3")], [b"too long"], (1, 1)),
])
def test_an_answers_head_goes_out_with_its_first_piece_of_body(
        monkeypatch: pytest.MonkeyPatch, method: str, status: str, headers: list[tuple[str, str]],
        pieces: list[bytes], version: tuple[int, int]) -> None:
    """`one_send_writes` (installed by `post_fork`) sends the very bytes gunicorn's own
    `Response.write` sends, in one send where gunicorn made two (the head, then the first
    piece of body); later pieces as before."""
    from gunicorn import util
    from gunicorn.http import wsgi

    monkeypatch.setattr(util, "http_date", lambda *_: "Sun, 06 Dec 2026 20:00:00 GMT")
    plain = _written(wsgi.Response.write, method, status, headers, pieces, version)
    once = _written(gunicorn_conf.one_send_writes(wsgi.Response.write), method, status, headers, pieces, version)
    assert b"".join(once) == b"".join(plain)
    assert once[0].startswith(f"HTTP/{version[0]}.{version[1]} {status}\r\n".encode())
    if pieces and pieces[0] and method != "HEAD":  # the head and the first piece: one send
        assert len(once) == len(plain) - 1
        assert once[0] == plain[0] + plain[1]
        assert once[1:] == plain[2:]
    else:
        assert once == plain


def test_one_send_writes_is_installed_by_post_fork_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from gunicorn import util
    from gunicorn.http import message, wsgi

    monkeypatch.setattr(message, "_ip_in_allow_list", message._ip_in_allow_list)
    monkeypatch.setattr(util, "write_error", util.write_error)
    monkeypatch.setattr(wsgi.Response, "write", wsgi.Response.write)
    gunicorn_conf.post_fork(None, None)
    installed = wsgi.Response.write
    assert getattr(installed, "one_send", False)
    gunicorn_conf.post_fork(None, None)  # a second call wraps nothing twice
    assert wsgi.Response.write is installed
