"""A game's deadline policy: how long each step runs and what a missed deadline does."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from service.core.errors import Problem


@dataclass(frozen=True)
class Policy:
    """A game's deadline policy. `on_expiry`: `defaults` (the engine's default orders
    for seats that did not answer) or `extend` (one extension of `extension_seconds`,
    then defaults). `clock: "bank"`: a time bank per seat instead of per-step lengths
    (`service.core.timebank`, which has the rulings)."""

    sealed_seconds: int = 86400
    sequential_seconds: int = 86400
    on_expiry: str = "defaults"
    extension_seconds: int = 86400
    # -- time bank (issue 25; `service/core/timebank.py`) ---------------------------------
    #: `fixed`: each step runs its own length (above); `bank`: each seat has a time bank
    #: that runs while it is asked (a chess clock).
    clock: str = "fixed"
    bank_start_seconds: int = 3 * 86400
    bank_add_seconds: int = 4 * 3600
    bank_cap_seconds: int = 3 * 86400
    #: Out of time: `defaults` (the engine's default order) or `bot` (the bot `bank_bot`).
    bank_out: str = "defaults"
    bank_bot: str | None = None
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
    def checked(cls, raw: dict[str, Any], lo: int, hi: int, *, bots: Sequence[str] = (),
                bank: tuple[int, int] = (60, 8 * 7 * 86400)) -> Policy:
        """A policy from a request body, each duration within `lo`..`hi` seconds; `bots`:
        the title's bot kinds, `bank`: the bounds of a time bank (`_check_bank`)."""
        pol = cls(**raw)
        for name in ("sealed_seconds", "sequential_seconds", "extension_seconds"):
            value = getattr(pol, name)
            if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
                raise Problem("bad_deadline_policy", f"{name} must be {lo} to {hi} seconds", field=name)
        if pol.on_expiry not in ("defaults", "extend"):
            raise Problem("bad_deadline_policy", "on_expiry is 'defaults' or 'extend'", field="on_expiry")
        check_absence_policy(pol, lo, hi)
        return pol._check_bank(bots, *bank)

    def _check_bank(self, bots: Sequence[str], lo: int, hi: int) -> Policy:
        """The time bank's fields checked (and `bank_bot` made the title's stand-in bot,
        `stand_in_bot`, when a bank hands a seat out of time to a bot and names none)."""
        if self.clock not in ("fixed", "bank"):
            raise Problem("bad_deadline_policy", "clock is 'fixed' or 'bank'", field="clock")
        for name, low in (("bank_start_seconds", lo), ("bank_cap_seconds", lo), ("bank_add_seconds", 0)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= hi:
                raise Problem("bad_deadline_policy", f"{name} must be {low} to {hi} seconds", field=name)
        if self.bank_cap_seconds < self.bank_start_seconds:
            raise Problem("bad_deadline_policy", "bank_cap_seconds must be at least bank_start_seconds",
                          field="bank_cap_seconds")
        if self.bank_out not in ("defaults", "bot"):
            raise Problem("bad_deadline_policy", "bank_out is 'defaults' or 'bot'", field="bank_out")
        if self.clock == "bank" and self.on_expiry == "extend":
            raise Problem("bad_deadline_policy", "a time bank has no extension: on_expiry must be 'defaults' "
                          "with clock 'bank'", field="on_expiry")
        if self.bank_bot is not None and (not isinstance(self.bank_bot, str) or self.bank_bot not in bots):
            raise Problem("bad_deadline_policy", f"bank_bot is a bot of this title: {', '.join(bots) or 'none'}",
                          field="bank_bot")
        if self.bank_out == "bot" and self.bank_bot is None:
            if not bots:
                raise Problem("bad_deadline_policy", "this title has no bot to play a seat out of time",
                              field="bank_out")
            return replace(self, bank_bot=stand_in_bot(bots))
        return self


def stand_in_bot(bots: Sequence[str]) -> str | None:
    """The bot that plays for a player by default (out of time, away): the title's first
    bot that plays to win (Die Händler's greedy, Auf Achse's planner, Fantasy Business's
    trader), not the one that picks at random; None for a title without bots."""
    playing = [b for b in bots if b != "random"]
    return playing[0] if playing else (bots[0] if bots else None)


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


@functools.lru_cache(maxsize=256)
def stored_policy(raw: str) -> Policy:
    """The policy a game's meta stores (its `policy` field, JSON), parsed once per text:
    a resolution reads it several times (`Orders._commit`, the time bank's and the
    absences' checks). A `Policy` is frozen and holds only scalars, so one may be shared."""
    return Policy(**json.loads(raw))
