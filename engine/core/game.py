"""The contract between a title and everything that drives it (service, workers, bots).

A title is a `Game` registered under a short id. Its state is plain JSON data (dicts,
lists, strings, ints, bools, None) that round-trips through `json.dumps/loads`
unchanged and carries its own RNG state. The methods are pure: none of them mutates its
input, reads the clock, or draws outside randomness.

Flow: `requests(state)` says which seats must answer now and with what kind of order.
A sequential step lists one seat; a sealed (simultaneous) step lists several and
resolves only when all have answered. Each order goes through `validate`; once every
listed seat has a valid order, `resolve(state, orders)` returns the next state and the
events. `default_order` is what a missed deadline submits. An order stored before an
unprompted action (`act`) changed the state is checked again with `validate_stored`
before it is resolved.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.core.choices import Prompt
from engine.core.errors import GENERIC_CODES, IllegalOrder, OptionsError
from engine.core.events import Event
from engine.core.info import Information, strip
from engine.core.seed import commitment
from engine.core.types import Order, State, Viewer, clone

__all__ = ["Game", "OptionSpec", "Order", "Prompt", "Request", "State", "Viewer", "Words", "clone", "new_request"]

#: Player names by seat, as every channel shows them ("Bob"); a title's words use them.
Names = Sequence[str]


@dataclass(slots=True)
class Request:
    """One seat that must act now: the order kind and its legal choices.

    `choices` is built from public facts plus this seat's own hidden facts (its money,
    its hand), so it is shown only to `seat`. `sealed` marks a simultaneous window whose
    orders stay hidden until the step resolves.

    Every call of `requests` builds fresh ones that share nothing with the state, so a
    request is a plain value; it is not a frozen dataclass only because those cost
    several times as much to build, and a bot game builds one per seat and step (a title
    may build them with `new_request`, which skips the `__init__` call).
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


_new_object = object.__new__


def new_request(seat: int, kind: str, step: int, sealed: bool, choices: dict[str, Any]) -> Request:
    """`Request(seat, kind, step, sealed, choices)`, built without calling `__init__`
    (the same object, a little cheaper: titles build one per seat and step)."""
    r: Request = _new_object(Request)
    r.seat = seat
    r.kind = kind
    r.step = step
    r.sealed = sealed
    r.choices = choices
    return r


@dataclass(frozen=True)
class Words:
    """A title's words and pictures for people: plain functions of events, requests and
    views (never of a whole state), declared once on the title as `Game.words`."""

    describe_event: Callable[[Event, Names], str]
    describe_request: Callable[[Request, dict[str, Any], Names], str]
    summary: Callable[[dict[str, Any], Names], str]
    picture: Callable[[dict[str, Any], Names], str]
    headline: Callable[[dict[str, Any]], str]


@dataclass(frozen=True)
class OptionSpec:
    """One game option: its JSON type, default and a line of help."""

    type: str
    default: Any
    help: str
    choices: tuple[Any, ...] = ()


class Game(ABC):
    """A title. It declares its contract as data (class attributes), then small hooks.

    Declared: `id`, `name`, seat range, `options`, `order_codes` (its own `IllegalOrder`
    codes; the generic ones are the core's), and `information` (what of its state is
    public, whose, or secret: every view is built from it by `engine.core.info.strip`).
    `words` (its sentences, request text, summary, picture and headline for people).
    Hooks: the rules (`initial_state`, `requests`, `validate`, `resolve`,
    `default_order`, `result`) and its `bots`.
    """

    id: str
    name: str
    min_seats: int
    max_seats: int
    options: Mapping[str, OptionSpec]
    #: This title's own order codes -> a line of description (see `declare_codes`).
    order_codes: Mapping[str, str] = {}
    #: The information structure of the state (see `engine.core.info`).
    information: Information
    #: The words and pictures people see (see `Words`).
    words: Words
    #: Events that show a hidden value to more viewers than the view does, because a
    #: rule says so: event type -> the fields it reveals (e.g. Die Händler's
    #: `upkeep_shortfall` shows the dropping seat's money, H-91). Any other event that
    #: carries a value some viewer of it may not see is a leak (`tests/engine/test_event_reveals.py`).
    reveals: Mapping[str, tuple[str, ...]] = {}

    # -- metadata ---------------------------------------------------------------------
    def catalog_entry(self) -> dict[str, Any]:
        """The catalogue entry: id, name, seat range, the option schema, the bot kinds
        and the order codes this title may answer with."""
        return {
            "id": self.id,
            "name": self.name,
            "seats": {"min": self.min_seats, "max": self.max_seats},
            "options": {
                k: {"type": o.type, "default": o.default, "help": o.help, "choices": list(o.choices)}
                for k, o in self.options.items()
            },
            "bots": sorted(self.bots()),
            "order_codes": self.all_order_codes(),
        }

    def all_order_codes(self) -> dict[str, str]:
        """The generic order codes and this title's own."""
        return {**GENERIC_CODES, **self.order_codes}

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
    def setup(self, seats: int, options: Mapping[str, Any] | None, seed: int | str) -> State:
        """The initial state (the title's `initial_state`), with the public commitment to
        `seed` that lets anyone check the game's randomness once the seed is revealed."""
        state = self.initial_state(seats, options, seed)
        state["commitment"] = commitment(seed)
        return state

    @abstractmethod
    def initial_state(self, seats: int, options: Mapping[str, Any] | None, seed: int | str) -> State:
        """The title's initial state (with its RNG seeded from `seed`)."""

    @abstractmethod
    def requests(self, state: State) -> list[Request]:
        """Who must act now; empty when the game is over."""

    @abstractmethod
    def validate(self, state: State, seat: int, order: Order) -> None:
        """Raise `IllegalOrder` unless `order` is legal for `seat` now."""

    def validate_stored(self, state: State, seat: int, order: Order) -> None:
        """Check an order that was stored before unprompted actions (`act`) changed the
        state under it: raise `IllegalOrder` unless it may still be resolved now. A
        driver that re-checks stored orders before `resolve_validated` (the service does,
        and plays the seat's default order instead of one this refuses) calls this, not
        `validate`.

        By default it is `validate`: an order that is no longer legal is refused. A title
        whose rules keep such an order and resolve it under its own rules overrides it to
        accept exactly those orders, and its resolution must then carry them out as the
        rules say. For example, a title may let a player give away, while a sealed window
        is open, a card that another player's sealed play names; its rules then keep that
        play, which fails when the window resolves (its card going back to its player),
        instead of replacing it by a default order. Anything else wrong with the order is
        still refused. Whatever `validate` accepts, this accepts."""
        self.validate(state, seat, order)

    @abstractmethod
    def resolve(self, state: State, orders: Mapping[int, Order]) -> tuple[State, list[Event]]:
        """Apply one step's orders (one per requested seat). Never mutates `state`."""

    def resolve_validated(self, state: State, orders: Mapping[int, Order]) -> tuple[State, list[Event]]:
        """`resolve` for orders that have each just passed `validate` against this very
        state, or `validate_stored` for an order stored before an action changed it (a
        driver that validated them, like the bot loop or the service, need not pay twice).
        Titles override it with their resolution and let `resolve` validate first."""
        return self.resolve(state, orders)

    @abstractmethod
    def default_order(self, state: State, seat: int) -> Order:
        """The order a missed deadline submits for `seat`; always legal."""

    def view(self, state: State, viewer: Viewer) -> dict[str, Any]:
        """The state as `viewer` may see it, built by allow-list from `information`:
        a key nobody declared never appears, whoever looks."""
        return strip(self.information, state, viewer)

    @abstractmethod
    def result(self, state: State) -> list[dict[str, Any]] | None:
        """None while the game runs; the final ranking once it is over."""

    @abstractmethod
    def bots(self) -> Mapping[str, Callable[[int | str], Any]]:
        """The bot kinds: kind -> factory(seed) of an `engine.core.bots.Bot`."""

    # -- words and pictures, for people ------------------------------------------------
    # A title declares them once as `words` (see `Words`); these methods are the contract
    # every channel calls. A title may still override one of them instead.
    def describe_event(self, event: Event, names: Names) -> str:
        """One plain sentence for `event`, with player names and display names ("Bob
        bought 2 Salz in Brügge for 200."). It reveals exactly what the event carries,
        so it may be shown to whoever may see the event."""
        return self.words.describe_event(event, names)

    def describe_request(self, request: Request, view: dict[str, Any], names: Names) -> str:
        """What `request` asks of its seat, in words (for "your turn" lines and mail
        subjects), from the request and that seat's view only."""
        return self.words.describe_request(request, view, names)

    def summary(self, view: dict[str, Any], names: Names) -> str:
        """What a player needs to decide, as readable plain text (about one screen),
        built from a view only (so it shows nothing that view does not)."""
        return self.words.summary(view, names)

    def picture(self, view: dict[str, Any], names: Names) -> str:
        """An SVG picture of the table as the view shows it: accessible (text labels,
        `<title>`s), deterministic, under 100 KB, built from a view only."""
        return self.words.picture(view, names)

    def headline(self, view: dict[str, Any]) -> str:
        """Where the game stands, in a few words ("round 2, phase 1: buying goods").
        Built from a view only."""
        return self.words.headline(view)

    def order_schema(self, kind: str) -> dict[str, Any]:
        """A JSON Schema of an order of `kind`, for clients (the legality check stays
        `validate`; the schema only says which fields exist)."""
        return {"type": "object"}

    def order_schema_for(self, state: State, kind: str) -> dict[str, Any]:
        """`order_schema` for this game's own state (a title whose ids come from the
        game's board, e.g. a custom board's cities, overrides this)."""
        return self.order_schema(kind)

    # -- decisions in the player's terms (see engine.core.choices) ------------------------
    def prompt(self, state: State, seat: int, picks: Sequence[Any] = ()) -> Prompt | None:
        """`seat`'s open decision in words after `picks` (a list of plain JSON values):
        what to do, what may be picked next and, once the picks make an order, that order
        and the order as a sentence. Built from that seat's view only (it is shown to
        that seat), so it names nothing the seat may not see. Raises
        `IllegalOrder("not_your_turn")` when `seat` is not asked and `("bad_pick")` for a
        pick that was not offered. Every order a prompt completes passes `validate`; every
        option offered can be completed. None: the title offers no choices in words (the
        channels then show its order form)."""
        return None

    def describe_order(self, state: State, seat: int, order: Order) -> str:
        """The order `seat` gave (or would give) for its open decision, in one sentence of
        words, as the prompt's `sentence` says it: the same picks give the same words, and
        an order no prompt builds (a program's, a missed deadline's default) is said in
        full words too. `order` has passed `validate` on `state`; other seats are written
        with `engine.core.choices.seat_ref` (every channel names them, as in prompts).
        Built from that seat's view only. "" means the title has no words for it (the
        channels then fall back to their own)."""
        return ""

    def describe_action(self, state: State, seat: int, action: Order) -> str:
        """An unprompted action of `seat` (see `action_prompt`) in one sentence of words,
        as the action prompt's `sentence` says it; `action` is one `act` accepts on
        `state`. "" means the title has no words for it."""
        return ""

    def action_prompt(self, state: State, seat: int, picks: Sequence[Any] = ()) -> Prompt | None:
        """What `seat` may do unprompted right now, whether or not it is asked (Fantasy
        Business: play an instant, FD12; propose, withdraw, accept or reject a transfer,
        V4), as a prompt whose first ask lists the actions; its complete `order` is the
        action to send to `act`. None when there is nothing such to do now."""
        return None

    def act(self, state: State, seat: int, action: Order,
            submitted: Mapping[int, Order] | None = None) -> tuple[State, list[Event]]:
        """Apply an unprompted `action` of `seat` at once: validate it (raising
        `IllegalOrder`, and then nothing changes) and return the next state and its
        events, like `resolve`. `submitted` are the orders already stored for the open
        step (sealed ones included: the engine reads them, never shows them), for the
        checks that need them (V4: no offered special may be part of a submitted play).
        An action never changes who is asked in the open step or for what
        (`requests` keeps its seats, kinds and step). Pure, like every hook."""
        raise IllegalOrder("no_action", f"{self.name} has no actions outside the open decision")

    def action_schema(self) -> dict[str, Any]:
        """A JSON Schema of an unprompted action, for clients (legality stays `act`)."""
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
