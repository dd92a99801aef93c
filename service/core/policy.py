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
    # -- absences (issue 25): `absence` is `extend` (a deadline that falls in an away seat's
    # absence moves to its end plus the step's length, at most `absence_limit_seconds` in
    # all per step) or `bot` (a bot of kind `absence_bot` plays the away seat's decisions;
    # None: the title's first bot kind). `service.core.absence`.
    absence: str = "extend"
    absence_limit_seconds: int = 7 * 86400
    absence_bot: str | None = None

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
        check_absence_policy(pol, lo, hi)
        return pol


def check_absence_policy(pol: Policy, lo: int, hi: int) -> None:
    """The absence fields of a policy (issue 25): the mode, the limit within the step
    bounds `lo`..`hi` seconds, a bot kind's type (its kind is checked against the title
    where the game is made or changed: `service.core.absence`)."""
    if pol.absence not in ("extend", "bot"):
        raise Problem("bad_deadline_policy", "absence is 'extend' or 'bot'", field="absence")
    limit = pol.absence_limit_seconds
    if not isinstance(limit, int) or isinstance(limit, bool) or not lo <= limit <= hi:
        raise Problem("bad_deadline_policy", f"absence_limit_seconds must be {lo} to {hi} seconds",
                      field="absence_limit_seconds")
    if pol.absence_bot is not None and not isinstance(pol.absence_bot, str):
        raise Problem("bad_deadline_policy", "absence_bot is a bot kind of the title", field="absence_bot")
