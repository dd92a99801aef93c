"""A game's deadline policy: how long each step runs and what a missed deadline does."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.core.errors import Problem


@dataclass(frozen=True)
class Policy:
    """A game's deadline policy. `on_expiry`: `defaults` (the engine's default orders
    for seats that did not answer) or `extend` (one extension of `extension_seconds`,
    then defaults)."""

    sealed_seconds: int = 86400
    sequential_seconds: int = 86400
    on_expiry: str = "defaults"
    extension_seconds: int = 86400

    def seconds(self, sealed: bool) -> int:
        return self.sealed_seconds if sealed else self.sequential_seconds

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def checked(cls, raw: dict[str, Any], lo: int, hi: int) -> Policy:
        """A policy from a request body, each duration within `lo`..`hi` seconds."""
        pol = cls(**raw)
        for name in ("sealed_seconds", "sequential_seconds", "extension_seconds"):
            value = getattr(pol, name)
            if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
                raise Problem("bad_deadline_policy", f"{name} must be {lo} to {hi} seconds", field=name)
        if pol.on_expiry not in ("defaults", "extend"):
            raise Problem("bad_deadline_policy", "on_expiry is 'defaults' or 'extend'", field="on_expiry")
        return pol
