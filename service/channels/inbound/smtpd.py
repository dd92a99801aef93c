"""The SMTP listener for orders by email (`python -m workers.mailin`, Procfile `mailin`), on aiosmtpd.

It takes mail only for the addresses orders go to, `orders@<mail_domain>` and the
secret reply addresses `orders+...@<mail_domain>`, and `unsubscribe@<mail_domain>`;
anything else is refused at RCPT (550). A mail is only kept and queued
(`service.channels.inbound.judge.store_inbound`) before the 250 answer: judging it is the job's
work. If it cannot be kept, the answer is 451 and the sender's MTA tries again, so
nothing is lost. Run it behind the MX (or as the MTA's relay for the mail domain), in
its own process.

Mail to `unsubscribe@` (the `mailto:` of `List-Unsubscribe`) carries the unsubscribe
token as its subject and is handed to `service.channels.mail.unsubscribe.unsubscribe_by_token`; it is not
kept as an order mail and gets no receipt (an address that unsubscribes is not
written to).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from typing import TYPE_CHECKING, Any

from aiosmtpd.controller import Controller

from service.channels.inbound.judge import store_inbound
from service.channels.inbound.parse import parse
from service.channels.mail.unsubscribe import unsubscribe_by_token
from service.core.errors import Problem
from service.store.durable import check_at_start
from service.store.ratelimit import RateLimits, words

if TYPE_CHECKING:
    from aiosmtpd.smtp import SMTP, Envelope, Session

    from service.core.kontor import Kontor

log = logging.getLogger("kontor.mailin")

#: The default largest mail taken (an order mail is a few kB; quoted turn reports a few
#: dozen); the setting `inbound_max_bytes` is the one in force.
MAX_SIZE = 1024 * 1024


class InboundHandler:
    """aiosmtpd handler: RCPT checks the address, DATA keeps the mail and queues it."""

    def __init__(self, kontor: Kontor) -> None:
        self.k = kontor
        self.limits = RateLimits(kontor.settings)

    def local_part(self, address: str) -> str | None:
        """The local part of an address of our mail domain, lowercased, else None."""
        local, _, domain = address.strip().strip("<>").rpartition("@")
        if domain.lower() != self.k.settings.mail_domain.lower():
            return None
        return local.lower()

    def wanted(self, address: str) -> bool:
        local = self.local_part(address)
        return local is not None and (local in ("orders", "unsubscribe") or local.startswith("orders+"))

    async def handle_MAIL(self, server: SMTP, session: Session, envelope: Envelope, address: str,  # noqa: N802
                          mail_options: list[str]) -> str:
        """Each mail counts against the limits of its connecting address and of its sender
        (`limit_mail_*`); over one, 451 (the sending server tries again later; nobody is mailed)."""
        peer = session.peer[0] if isinstance(session.peer, tuple) else str(session.peer or "")
        sender = address.strip().strip("<>").lower() or None
        refusal = await asyncio.get_running_loop().run_in_executor(None, self.limits.hit, "mail", peer, sender)
        if refusal is not None:
            return f"451 4.7.1 {words(refusal)}"
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        return "250 OK"

    async def handle_RCPT(self, server: SMTP, session: Session, envelope: Envelope, address: str,  # noqa: N802
                          rcpt_options: list[str]) -> str:
        if not self.wanted(address):
            return "550 5.1.1 no such user here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:  # noqa: N802
        raw = envelope.original_content or envelope.content or b""
        raw = raw if isinstance(raw, bytes) else str(raw).encode()
        rcpt_tos = list(envelope.rcpt_tos)
        try:
            await asyncio.get_running_loop().run_in_executor(None, self.take, raw, rcpt_tos, envelope.mail_from)
        except Exception:
            log.exception("could not keep an inbound mail from %s", envelope.mail_from)
            return "451 4.3.0 the mail could not be stored; try again later"
        return "250 Message accepted for delivery"

    def take(self, raw: bytes, rcpt_tos: list[str], mail_from: str | None) -> None:
        orders = [a for a in rcpt_tos if self.local_part(a) != "unsubscribe"]
        if len(orders) < len(rcpt_tos):
            self.unsubscribe(raw)
        if orders:
            store_inbound(self.k, raw, orders, (mail_from or "").strip("<>"), via="smtp")
        self.k.store.settle(self.k.settings)  # the 250 means kept on disk (issue 23: durability)

    def unsubscribe(self, raw: bytes) -> None:
        """Unsubscribe the address the subject's token names (`List-Unsubscribe`'s
        `mailto:`); a token that is not genuine is logged and otherwise ignored."""
        token = parse(raw).subject.strip()
        try:
            unsubscribe_by_token(self.k, token)
        except Problem as exc:
            log.info("unsubscribe mail refused: %s %s", exc.code, exc.detail)


def controller(kontor: Kontor, host: str, port: int, **kwargs: Any) -> Controller:
    """An aiosmtpd `Controller` running `InboundHandler` (not started); a mail over
    `inbound_max_bytes` is refused at DATA with 552."""
    kwargs.setdefault("data_size_limit", kontor.settings.inbound_max_bytes)
    return Controller(InboundHandler(kontor), hostname=host, port=port, **kwargs)


def main(host: str = "127.0.0.1", port: int = 8025, kontor: Kontor | None = None) -> None:
    """Serve until SIGINT or SIGTERM (settings from the environment)."""
    from service import logs
    from service.config import Settings
    from service.core.kontor import Kontor

    logs.setup()
    logging.getLogger("mail.log").setLevel(logging.WARNING)  # aiosmtpd logs every command at INFO
    k = kontor or Kontor(Settings.from_env())
    check_at_start(k.store, k.settings, "mail-in")
    server = controller(k, host, port)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    server.start()
    log.info("mail-in listening on %s:%d for %s", host, port, k.settings.mail_domain)
    try:
        stop.wait()
    finally:
        server.stop()
