"""The request id every answer echoes in `X-Request-Id` and every log line carries."""

from __future__ import annotations

import secrets


def request_id(raw: str) -> str:
    """The request's id: the client's `X-Request-Id` when it is a sane one, else a new one."""
    ok = 0 < len(raw) <= 64 and raw.replace("-", "").replace("_", "").isalnum()
    return raw if ok else "r-" + secrets.token_hex(6)
