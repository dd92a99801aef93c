"""The contract between a title and everything that drives it (service, workers, bots).

A title is a `Game` registered under a short id. Its state is plain JSON data (dicts,
lists, strings, ints, bools, None) that round-trips through `json.dumps/loads`
unchanged and carries its own RNG state. The methods are pure: none of them mutates its
input, reads the clock, or draws outside randomness.

Flow: `requests(state)` says which seats must answer now and with what kind of order.
A sequential step lists one seat; a sealed (simultaneous) step lists several and
resolves only when all have answered. Each order goes through `validate`; once every
listed seat has a valid order, `resolve(state, orders)` returns the next state and the
events. `default_order` is what a missed deadline submits.
"""

from __future__ import annotations

import marshal
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from engine.core.errors import IllegalOrder, OptionsError
from engine.core.events import Event

State = dict[str, Any]
J = TypeVar("J")
Order = dict[str, Any]
#: A seat number, the public (spectators), or the admin (sees everything but the RNG).
Viewer = int | Literal["public", "admin"]


@dataclass
class Request:
    """One seat that must act now: the order kind and its legal choices.

    `choices` is built from public facts plus this seat's own hidden facts (its money,
    its hand), so it is shown only to `seat`. `sealed` marks a simultaneous window whose
    orders stay hidden until the step resolves.

    Every call of `requests` builds fresh ones that share nothing with the state, so a
    request is a plain value; it is not a frozen dataclass only because those cost
    several times as much to build, and a bot game builds one per seat and step.
    """

    seat: int
    kind: str
    step: int
    sealed: bool
    choices: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "kind": self.kind,
            "step": self.step,
            "sealed": self.sealed,
            "choices": self.choices,
        }


@dataclass(frozen=True)
class OptionSpec:
    """One game option: its JSON type, default and a line of help."""

    type: str
    default: Any
    help: str
    choices: tuple[Any, ...] = ()


class Game(ABC):
    """A title. Subclasses declare metadata as class attributes and implement the hooks."""

    id: str
    name: str
    min_seats: int
    max_seats: int
    options: Mapping[str, OptionSpec]

    # -- metadata ---------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """The catalogue entry: id, name, seat range and the option schema."""
        return {
            "id": self.id,
            "name": self.name,
            "seats": {"min": self.min_seats, "max": self.max_seats},
            "options": {
                k: {"type": o.type, "default": o.default, "help": o.help, "choices": list(o.choices)}
                for k, o in self.options.items()
            },
        }

    def normalize_options(self, seats: int, options: Mapping[str, Any] | None) -> dict[str, Any]:
        """Options with defaults filled in; raises `OptionsError` on unknown or bad ones."""
        if not isinstance(seats, int) or not self.min_seats <= seats <= self.max_seats:
            raise OptionsError(
                f"{self.name} takes {self.min_seats} to {self.max_seats} seats, not {seats}",
                field="seats",
            )
        given = dict(options or {})
        unknown = sorted(set(given) - set(self.options))
        if unknown:
            raise OptionsError(f"unknown option(s): {', '.join(unknown)}", field=unknown[0])
        out: dict[str, Any] = {}
        for key, spec in self.options.items():
            value = given.get(key, spec.default)
            if spec.choices and value not in spec.choices:
                allowed = ", ".join(map(repr, spec.choices))
                raise OptionsError(f"option {key} must be one of {allowed}", field=key)
            if spec.type == "boolean" and not isinstance(value, bool):
                raise OptionsError(f"option {key} must be true or false", field=key)
            out[key] = value
        return out

    # -- the hooks ----------------------------------------------------------------------
    @abstractmethod
    def setup(self, seats: int, options: Mapping[str, Any] | None, seed: int | str) -> State:
        """The initial state (with the RNG seeded from `seed`)."""

    @abstractmethod
    def requests(self, state: State) -> list[Request]:
        """Who must act now; empty when the game is over."""

    @abstractmethod
    def validate(self, state: State, seat: int, order: Order) -> None:
        """Raise `IllegalOrder` unless `order` is legal for `seat` now."""

    @abstractmethod
    def resolve(self, state: State, orders: Mapping[int, Order]) -> tuple[State, list[Event]]:
        """Apply one step's orders (one per requested seat). Never mutates `state`."""

    def resolve_validated(self, state: State, orders: Mapping[int, Order]) -> tuple[State, list[Event]]:
        """`resolve` for orders that have each just passed `validate` against this very
        state (a driver that validated them, like the bot loop, need not pay twice).
        Titles override it with their resolution and let `resolve` validate first."""
        return self.resolve(state, orders)

    @abstractmethod
    def default_order(self, state: State, seat: int) -> Order:
        """The order a missed deadline submits for `seat`; always legal."""

    @abstractmethod
    def view(self, state: State, viewer: Viewer) -> dict[str, Any]:
        """The state as `viewer` may see it: other seats' hidden fields are removed."""

    @abstractmethod
    def result(self, state: State) -> list[dict[str, Any]] | None:
        """None while the game runs; the final ranking once it is over."""

    def order_schema(self, kind: str) -> dict[str, Any]:
        """A JSON Schema of an order of `kind`, for clients (the legality check stays
        `validate`; the schema only says which fields exist)."""
        return {"type": "object"}

    # -- shared helpers -----------------------------------------------------------------
    def step(self, state: State, orders: Mapping[int, Order]) -> tuple[State, list[Event]]:
        """Validate a full set of orders for the open step, then resolve it."""
        wanted = {r.seat for r in self.requests(state)}
        if not wanted:
            raise IllegalOrder("game_over", "The game has ended.")
        if set(orders) != wanted:
            raise IllegalOrder(
                "not_your_turn",
                f"this step needs orders from seats {sorted(wanted)}, got {sorted(orders)}",
            )
        for seat, order in orders.items():
            self.validate(state, seat, order)
        return self.resolve_validated(state, orders)


def clone(data: J) -> J:
    """A deep copy of plain JSON data (marshal is the fastest exact copier for it)."""
    copied: J = marshal.loads(marshal.dumps(data))  # type: ignore[arg-type]  # plain JSON data only
    return copied
