"""Typed engine errors with stable codes.

The codes are the public contract: the API returns them as the problem+json `code`
(prefixed by nothing), clients branch on them, and they are never renamed. The core keeps
only the generic ones; each title declares its own beside its rules, so the API can
document them all.
"""

from __future__ import annotations

from typing import Any

#: The generic codes of `IllegalOrder` every title may raise, with a short description
#: for the API docs. A title declares its own codes (`Game.order_codes`) and registers
#: them with `declare_codes` when its errors module is imported.
GENERIC_CODES: dict[str, str] = {
    "not_your_turn": "No decision is open for this seat.",
    "malformed_order": "The order does not have the shape this decision takes.",
    "wrong_kind": "The order is for another kind of decision than the open one.",
    "game_over": "The game has ended.",
}

_KNOWN: dict[str, str] = dict(GENERIC_CODES)


def declare_codes(codes: dict[str, str]) -> dict[str, str]:
    """Register a title's order codes (returns them, for `Game.order_codes`). A code may
    be shared by titles (`not_enough_money`); it is then described by the first."""
    for code, text in codes.items():
        if not code.isidentifier() or not code.islower():
            raise ValueError(f"an order code is a lowercase identifier, not {code!r}")
        _KNOWN.setdefault(code, text)
    return codes


def known_codes() -> dict[str, str]:
    """Every order code registered so far (generic and declared)."""
    return dict(_KNOWN)


class EngineError(Exception):
    """Base of every error the engine raises on purpose."""

    code = "engine_error"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, **self.details}


class IllegalOrder(EngineError):
    """An order that `validate` refuses. The state is never touched."""

    def __init__(self, code: str, message: str, **details: Any) -> None:
        if code not in _KNOWN:
            raise ValueError(f"unregistered order error code {code!r}")
        super().__init__(message, **details)
        self.code = code


class OptionsError(EngineError):
    """Game options (or the seat count) that a title does not accept."""

    code = "bad_options"


class DataError(EngineError):
    """A board, card or table file that fails validation; names the file and the field."""

    code = "bad_data_file"

    def __init__(self, file: str, field: str, problem: str) -> None:
        super().__init__(f"{file}: {field}: {problem}", file=file, field=field)
