"""Settings, read from the environment (`KONTOR_*`), with defaults for `make run`.

Durations are seconds. Tests and benchmarks build a `Settings` directly.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from typing import Any


@dataclass(frozen=True)
class Settings:
    redis_url: str = "redis://127.0.0.1:6379/0"
    #: Where the service is reachable, for links in answers, mails and the CLI.
    public_url: str = "http://127.0.0.1:8000"
    #: Every Redis key starts with this, so several installations can share a server.
    key_prefix: str = "kontor"
    #: A signed order is refused once older than this (its one-time id is kept as long).
    order_max_age: int = 86400
    #: A bearer token may live at most this long (issue: at most 5 minutes).
    bearer_max_ttl: int = 300
    #: How far a client's clock may run ahead of ours.
    clock_skew: int = 60
    #: The shortest and longest step a game may ask for.
    min_step_seconds: int = 10
    max_step_seconds: int = 8 * 7 * 86400
    #: A step still `resolving` this long after its flip is re-enqueued by the sweeper.
    stuck_after: int = 60
    #: How often the sweeper looks for overdue and stuck steps.
    sweep_interval: float = 5.0
    #: How long an Idempotency-Key is remembered.
    idempotency_ttl: int = 86400
    #: RQ job timeout for a resolution (seconds).
    resolve_timeout: int = 60

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, **overrides: Any) -> Settings:
        env = dict(os.environ if env is None else env)
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get(f"KONTOR_{f.name.upper()}")
            if raw is None:
                continue
            kind = type(f.default)
            values[f.name] = kind(raw) if kind in (int, float) else raw
        return replace(cls(**values), **overrides)
