"""Logging with a request or job id on every line (`[r-…]` for HTTP requests, the RQ
job id for jobs); the game id is part of each message."""

from __future__ import annotations

import contextvars
import logging

current_id: contextvars.ContextVar[str] = contextvars.ContextVar("kontor_request_id", default="-")

FORMAT = "%(asctime)s %(levelname)s %(name)s [%(rid)s] %(message)s"


class _IdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.rid = current_id.get()
        return True


def setup(level: int = logging.INFO) -> None:
    """Install the format and the id filter on the root handlers (idempotent)."""
    root = logging.getLogger()
    if not root.handlers:
        logging.basicConfig(level=level, format=FORMAT)
    for handler in root.handlers:
        if not any(isinstance(f, _IdFilter) for f in handler.filters):
            handler.addFilter(_IdFilter())
            handler.setFormatter(logging.Formatter(FORMAT))
