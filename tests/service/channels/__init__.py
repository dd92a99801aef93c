"""Real notification endpoints on loopback for the tests: an SMTP server (aiosmtpd
`Controller`) that keeps every message it receives, and an HTTP receiver that verifies
every webhook with the `standardwebhooks` reference library.

Both are plain classes plus pytest fixtures (`mailbox`, `hooks`, `notify_settings`);
the fixtures are imported by the service conftest.
"""

from __future__ import annotations

import email
import email.policy
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session
from standardwebhooks import Webhook, WebhookVerificationError

import service.jobs.tasks
from service.config import Settings


@dataclass
class Received:
    """One message the SMTP server took: envelope and parsed message."""

    mail_from: str
    rcpt_tos: list[str]
    raw: bytes
    message: EmailMessage

    @property
    def text(self) -> str:
        part = self.message.get_body(preferencelist=("plain",))
        return part.get_content() if part is not None else ""  # type: ignore[union-attr]

    @property
    def html(self) -> str:
        part = self.message.get_body(preferencelist=("html",))
        return part.get_content() if part is not None else ""  # type: ignore[union-attr]


class Mailbox:
    """An SMTP server on loopback. `fail_next(code, n)` makes the next n DATA commands
    answer `code` (e.g. 451 for a temporary failure, 550 for a permanent one)."""

    def __init__(self) -> None:
        self.messages: list[Received] = []
        self.lock = threading.Lock()
        self._fail: list[str] = []
        self.controller: Controller | None = None

    # aiosmtpd handler hook
    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        with self.lock:
            if self._fail:
                return self._fail.pop(0)
            raw = envelope.original_content or envelope.content
            raw = raw if isinstance(raw, bytes) else str(raw).encode()
            msg = email.message_from_bytes(raw, policy=email.policy.default)
            self.messages.append(Received(envelope.mail_from or "", list(envelope.rcpt_tos), raw,
                                          msg))  # type: ignore[arg-type]
        return "250 OK"

    def fail_next(self, reply: str, times: int = 1) -> None:
        with self.lock:
            self._fail.extend([reply] * times)

    def start(self) -> None:
        self.controller = start_controller(self)

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()

    @property
    def url(self) -> str:
        # (aiosmtpd looks the handler's attributes over before the controller exists)
        return f"smtp://127.0.0.1:{self.controller.port}" if self.controller else ""

    def to(self, address: str) -> list[Received]:
        with self.lock:
            return [m for m in self.messages if address in m.rcpt_tos]

    def wait(self, count: int, timeout: float = 10.0, address: str | None = None) -> list[Received]:
        end = time.monotonic() + timeout
        while True:
            got = self.to(address) if address else list(self.messages)
            if len(got) >= count or time.monotonic() > end:
                return got
            time.sleep(0.02)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_controller(handler: Any, **kwargs: Any) -> Controller:
    """An aiosmtpd `Controller` for `handler` on a free loopback port. (Port 0 does not
    work: the controller connects to its own port to check it is up.) Parallel test
    processes may race for the same free port: the loser tries another."""
    for attempt in range(5):
        controller = Controller(handler, hostname="127.0.0.1", port=free_port(), **kwargs)
        try:
            controller.start()
            return controller
        except (OSError, RuntimeError):
            if attempt == 4:
                raise
    raise AssertionError("unreachable")


@dataclass
class Hook:
    """One webhook request the receiver took, verified or not."""

    path: str
    headers: dict[str, str]
    body: bytes
    payload: Any = None
    verified: bool = False
    error: str | None = None


@dataclass
class Hooks:
    """An HTTP receiver on loopback. Each path has a secret (`secrets[path]`) to verify
    with; `answers[path]` is a list of status codes to answer in turn (then 204)."""

    secrets: dict[str, str] = field(default_factory=dict)
    answers: dict[str, list[int]] = field(default_factory=dict)
    received: list[Hook] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    def start(self) -> None:
        hooks = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                hook = Hook(self.path, headers, body)
                secret = hooks.secrets.get(self.path)
                if secret:
                    try:
                        hook.payload = Webhook(secret).verify(body, headers)
                        hook.verified = True
                    except WebhookVerificationError as exc:
                        hook.error = str(exc)
                with hooks.lock:
                    hooks.received.append(hook)
                    queue = hooks.answers.get(self.path) or []
                    status = queue.pop(0) if queue else 204
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self) -> None:
        if self.server:
            self.server.shutdown()
            self.server.server_close()

    def url(self, path: str = "/hook") -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def at(self, path: str) -> list[Hook]:
        with self.lock:
            return [h for h in self.received if h.path == path]

    def wait(self, path: str, count: int, timeout: float = 10.0) -> list[Hook]:
        end = time.monotonic() + timeout
        while True:
            got = self.at(path)
            if len(got) >= count or time.monotonic() > end:
                return got
            time.sleep(0.02)


def parse(raw: bytes) -> EmailMessage:
    return email.message_from_bytes(raw, policy=email.policy.default)  # type: ignore[return-value]


def payloads(hooks: list[Hook]) -> list[dict[str, Any]]:
    return [json.loads(h.body) for h in hooks]


@pytest.fixture
def mailbox() -> Iterator[Mailbox]:
    box = Mailbox()
    box.start()
    yield box
    box.stop()


@pytest.fixture
def hooks() -> Iterator[Hooks]:
    h = Hooks()
    h.start()
    yield h
    h.stop()


@pytest.fixture
def notify_settings(settings: Settings, mailbox: Mailbox) -> Settings:
    """The test settings with mail going to `mailbox`, short retry schedules (tenths of
    a second instead of minutes) and loopback webhook targets allowed."""
    s = replace(settings, smtp_url=mailbox.url, mail_domain="kontor.test", mail_from="Kontor <kontor@kontor.test>",
                mail_retry="0.1,0.2", webhook_schedule="0,0.1,0.2,0.3", webhook_timeout=2.0,
                webhook_allow_loopback=True, inbound_secret="inbound-test-secret", secret="test-secret",
                public_url="http://kontor.test")
    service.jobs.tasks.configure(s)
    return s


@pytest.fixture
def nkontor(notify_settings: Settings) -> Any:
    """A `Kontor` on the notification settings."""
    from service.core.kontor import Kontor

    return Kontor(notify_settings)


@pytest.fixture
def nclient(notify_settings: Settings, nkontor: Any) -> Any:
    """A test client of an app on the notification settings."""
    from service import create_app

    app = create_app(notify_settings, nkontor)
    app.config["TESTING"] = True
    return app.test_client()


def work_all(settings: Settings, rounds: int = 50, horizon: float = 1.5) -> None:
    """Run every queued job, and every scheduled job due within `horizon` seconds (RQ
    keeps schedules to the whole second; the tests' retry delays are tenths of a second),
    with real burst workers, until nothing is left to do that soon."""
    import redis
    from rq import Queue
    from rq.serializers import JSONSerializer

    from service.jobs.queue import QUEUES
    from tests.service.conftest import work

    conn = redis.Redis.from_url(settings.queue)
    queues = [Queue(q, connection=conn, serializer=JSONSerializer) for q in QUEUES]
    for _ in range(rounds):
        moved = 0
        for q in queues:
            registry = q.scheduled_job_registry
            for job_id in registry.get_jobs_to_schedule(int(time.time() + horizon)):
                job = q.fetch_job(job_id)
                registry.remove(job_id)
                if job is not None:
                    q._enqueue_job(job)
                    moved += 1
        if not moved and not any(q.count for q in queues):
            if not any(q.scheduled_job_registry.get_jobs_to_schedule(int(time.time() + horizon)) for q in queues):
                return
        work(settings)
        time.sleep(0.05)
