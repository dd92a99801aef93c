"""The development outbox of `make run`: an SMTP server on loopback that keeps every
mail Kontor sends as an `.eml` file (readable with any mail program, or `cat`) instead
of delivering it, and logs one line per mail. Production sets `KONTOR_SMTP_URL` to a
real relay instead.

`python -m service.dev.devmail --port 8026 --dir var/mail`
"""

from __future__ import annotations

import argparse
import email
import email.policy
import re
import signal
import sys
import threading
import time
from pathlib import Path

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session


class Outbox:
    """aiosmtpd handler: each message to `<dir>/<time>-<n>-<first recipient>.eml`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.count = 0
        self.lock = threading.Lock()

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:  # noqa: N802
        raw = envelope.original_content or envelope.content or b""
        raw = raw if isinstance(raw, bytes) else raw.encode()
        msg = email.message_from_bytes(raw, policy=email.policy.default)
        with self.lock:
            self.count += 1
            first = (envelope.rcpt_tos or ["nobody"])[0]
            name = f"{time.strftime('%Y%m%d-%H%M%S')}-{self.count:04d}-{re.sub(r'[^A-Za-z0-9@._+-]', '_', first)}.eml"
            (self.directory / name).write_bytes(raw)
        print(f"devmail: to {', '.join(envelope.rcpt_tos)}: {msg.get('Subject', '')}  -> {self.directory / name}",
              flush=True)
        return "250 kept in the development outbox"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8026)
    parser.add_argument("--dir", default="var/mail")
    args = parser.parse_args(argv)
    directory = Path(args.dir)
    directory.mkdir(parents=True, exist_ok=True)
    controller = Controller(Outbox(directory), hostname=args.host, port=args.port)
    controller.start()
    print(f"devmail: outbox on smtp://{args.host}:{args.port}, mails kept in {directory}", flush=True)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    controller.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
