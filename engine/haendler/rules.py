"""Die Händler as a Kontor title: setup, the one legality path, resolution and views.

The decision points (D0-NAME ... D6-ADVANCE) live in the phase modules; the order of
play lives in `flow`. This module ties them to the engine contract of `engine.core`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from engine.core.errors import IllegalOrder, OptionsError
from engine.core.events import Event
from engine.core.game import Game, OptionSpec, Prompt, Request, State, Words, clone
from engine.core.rng import below, seed_state
from engine.haendler import (
    abilities,
    carts,
    describe,
    flow,
    moving,
    picture,
    prices,
    prompts,
    selling,
    status,
    summary,
)
from engine.haendler.board import Board, load_board
from engine.haendler.buying import BUY
from engine.haendler.components import components
from engine.haendler.context import copy_state, ctx_of, need, turn_order
from engine.haendler.decision import Decision
from engine.haendler.errors import ORDER_CODES
from engine.haendler.free import FREE_KEYS, apply_free, check_free
from engine.haendler.schema import order_properties
from engine.haendler.view import INFORMATION

DECISIONS: dict[str, Decision] = {
    d.kind: d
    for d in (
        abilities.NAME, abilities.BID, BUY, carts.BID, carts.MASTER, carts.LOAD,
        moving.ACHSBRUCH_WINDOW, moving.MOVE, prices.WHEEL, prices.KONTOR, prices.SALES,
        selling.BONUS, status.CREDIT, status.ADVANCE,
    )  # fmt: skip
}

#: Keys each order kind accepts: its own, the free actions, and an optional "kind".
ALLOWED_KEYS = {k: frozenset(d.keys) | frozenset(FREE_KEYS) | {"kind"} for k, d in DECISIONS.items()}

def _private_copy(orders: Mapping[int, Mapping[str, Any]]) -> dict[int, dict[str, Any]]:
    """A deep copy of the orders, so that nothing in the new state or its events is an
    object the caller still holds."""
    try:
        return cast("dict[int, dict[str, Any]]", clone(orders))
    except ValueError:  # marshal copies plain dicts and lists only, not other mappings
        return clone({seat: dict(o) for seat, o in orders.items()})


_CITES = ("(H-", "(R-")
#: The rule a refusal of each decision cites when its message cites none: the rule that
#: says what may be chosen there (a player's guide section is headed by it, and channels
#: link the citation to it). Decision ids such as D1-BUY are never shown to players.
CITE = {
    "name_card": "H-34", "card_bid": "H-34", "buy": "H-41", "cart_bid": "H-47", "master": "H-52",
    "load": "H-53", "achsbruch": "H-57", "move": "H-58", "wheel": "H-78", "kontor": "H-80",
    "sales": "H-81", "bonus": "H-86", "credit": "H-95", "advance": "H-92",
}  # fmt: skip


def _cited(exc: IllegalOrder, kind: str) -> IllegalOrder:
    """The refusal, citing the rule of its decision when it cites no rule yet, so a
    player can look it up in the player's guide."""
    if any(c in exc.message for c in _CITES):
        return exc
    return IllegalOrder(exc.code, f"{exc.message} ({CITE[kind]})", **exc.details)


class Haendler(Game):
    """Die Händler (Kramer & Ulrich, Queen Games 1999), 2–4 seats."""

    id = "haendler"
    name = "Die Händler"
    min_seats = 2
    max_seats = 4
    options = {
        "abilities": OptionSpec(
            "string", "pairs", "how the special ability cards are dealt (H-32)", ("pairs", "auction")
        ),
        "light": OptionSpec("boolean", False, "light variant: no Achsbruch, fixed tariffs 200/400 (H-104)"),
        "negotiation": OptionSpec("boolean", False, "negotiation variant: public binding transfers (H-105, H-106)"),
        "start_cities": OptionSpec("array|null", None, "start-cities variant: three cities for carts 1, 2, 3 (H-108)"),
        "messenger_start": OptionSpec("string|null", None, "start-cities variant: the messenger's start space (H-108)"),
        "board": OptionSpec(
            "string|object", "reconstructed-default", "a shipped board id, or a whole board document (rules §18)"
        ),
        "start_player": OptionSpec("integer|null", None, "the first start player; null draws one at random (H-25)"),
    }  # fmt: skip
    order_codes = ORDER_CODES
    information = INFORMATION
    #: Ruled reveals: a seat that cannot pay its upkeep has its money made public (H-91);
    #: a seat choosing an influence card sees the deck's composition (H-73), and its own
    #: `card_gained` event keeps it (the public one carries only the deck's size).
    reveals = {"upkeep_shortfall": ("money",), "card_gained": ("deck",)}
    words = Words(describe.describe_event, summary.describe_request, summary.summary, picture.picture,
                  summary.headline)

    # -- setup --------------------------------------------------------------------------
    def initial_state(self, seats: int, options: Mapping[str, Any] | None, seed: int | str) -> State:
        opts = self.normalize_options(seats, options)
        board = load_board(opts["board"])
        comp = components()
        starts = opts["start_cities"] or list(board.start_cities)
        if (
            not isinstance(starts, list)
            or len(starts) != comp.carts
            or len(set(starts)) != len(starts)
            or any(not isinstance(c, str) or not board.is_city(c) for c in starts)
        ):
            raise OptionsError(f"start_cities must name {comp.carts} distinct cities", field="start_cities")
        messenger = opts["messenger_start"] or board.messenger_start
        if not isinstance(messenger, str) or not board.is_space(messenger):
            raise OptionsError(f"{messenger!r} is not a road space", field="messenger_start")
        rng = seed_state(seed)
        start = opts["start_player"]
        if start is None:
            start, rng = below(rng, seats)
        elif not isinstance(start, int) or isinstance(start, bool) or not 0 <= start < seats:
            raise OptionsError("start_player must be a seat number", field="start_player")
        removed = {k: comp.influence[k] for k in comp.light_removed} if opts["light"] else {}
        s: State = {
            "title": self.id,
            "options": opts,
            "board": board.id if isinstance(opts["board"], str) else opts["board"],
            "board_key": board.key,
            "seats": seats,
            "rng": rng,
            "round": 1,
            "start": start,
            "step": 0,
            "over": False,
            "last_round": False,
            "players": [
                {"money": comp.start_money, "level": 1, "tiles": list(comp.tiles),
                 "abilities": [], "hand": {}, "credits": 0}
                for _ in range(seats)
            ],  # fmt: skip
            "stores": [{} for _ in range(seats)],
            "stock": {g: board.stock_per_type for g in board.goods},
            "prices": {g: 1 for g in board.goods},
            "bonus": {
                c: board.bonus_with_cart if c in starts else board.bonus_without_cart
                for c in board.cities
            },
            "arrivals": 0,
            "carts": [
                {"at": c, "master": None, "rows": [[] for _ in range(seats)], "arrived": False}
                for c in starts
            ],
            "blocks": [],
            "messenger": messenger,
            "deck": {k: n for k, n in comp.influence.items() if k not in removed},
            "played": {},
            "removed": removed,
            "credit_supply": comp.credit_cards,
            "tariffs": {},
            "pool": list(comp.abilities),
            "auction": None,
            "pending": None,
            "at": {"st": "auction", "i": 0},
        }
        ctx = ctx_of(s)
        ev: list[Event] = []
        if opts["abilities"] == "pairs":
            abilities.deal_pairs(ctx, s, ev)
            flow.goto(s, "buy", 0, buy_pass=1)
        flow.advance(ctx, s, ev)
        return s

    # -- the contract -------------------------------------------------------------------
    def requests(self, state: State) -> list[Request]:
        pending = state["pending"]
        if state["over"] or pending is None:
            return []
        ctx, d = ctx_of(state), DECISIONS[pending["kind"]]
        return [
            Request(seat, d.kind, state["step"], d.sealed, d.choices(ctx, state, seat))
            for seat in pending["seats"]
        ]

    def validate(self, state: State, seat: int, order: Mapping[str, Any]) -> None:
        # Plain `if`s rather than `need(...)`: this runs for every order, and the
        # messages should only be formatted for an order that is refused.
        if state["over"]:
            raise IllegalOrder("game_over", "the game has ended")
        pending = state["pending"]
        if pending is None or seat not in pending["seats"]:
            raise IllegalOrder("not_your_turn", f"seat {seat} has no open decision now (R-30)")
        d = DECISIONS[pending["kind"]]
        if type(order) is not dict:
            if not isinstance(order, Mapping):
                raise IllegalOrder("malformed_order", "an order is a JSON object")
            order = dict(order)
        kind = order.get("kind", d.kind)
        if kind != d.kind:
            raise IllegalOrder("wrong_kind", f"the open decision is to {summary.KIND_WORDS[d.kind]}, not {kind!r} "
                                             "(R-30)")
        extra = order.keys() - ALLOWED_KEYS[d.kind]
        if extra:
            raise IllegalOrder(
                "malformed_order",
                f"unknown field(s) {', '.join(sorted(extra))} for a {d.kind} order; it takes {', '.join(d.keys)}",
            )
        ctx = ctx_of(state)
        try:
            d.check(ctx, state, seat, order, check_free(ctx, state, seat, order))
        except IllegalOrder as exc:
            raise _cited(exc, d.kind) from None

    def resolve(self, state: State, orders: Mapping[int, Mapping[str, Any]]) -> tuple[State, list[Event]]:
        pending = state["pending"]
        if state["over"] or pending is None:
            raise IllegalOrder("game_over", "the game has ended")
        if set(orders) != set(pending["seats"]):
            raise IllegalOrder("not_your_turn", f"this step needs orders from seats {pending['seats']}")
        for seat, order in orders.items():
            self.validate(state, seat, order)
        return self.resolve_validated(state, orders)

    def resolve_validated(
        self, state: State, orders: Mapping[int, Mapping[str, Any]]
    ) -> tuple[State, list[Event]]:
        pending = state["pending"]
        ctx, d = ctx_of(state), DECISIONS[pending["kind"]]
        s = copy_state(state)
        mine = _private_copy(orders)
        ev: list[Event] = []
        for seat in turn_order(s):
            if seat in mine and ("repay" in mine[seat] or "transfers" in mine[seat]):
                apply_free(ctx, s, seat, mine[seat], ev)
        d.apply(ctx, s, mine, ev)
        s["step"] += 1
        flow.advance(ctx, s, ev)
        for e in ev:
            e.setdefault("step", state["step"])
        return s, ev

    def prompt(self, state: State, seat: int, picks: Sequence[Any] = ()) -> Prompt:
        """`seat`'s open decision in words and clicks (see `engine.haendler.prompts`),
        built from that seat's view only."""
        pending = state["pending"]
        if state["over"] or pending is None or seat not in pending["seats"]:
            raise IllegalOrder("not_your_turn", "you have no open decision now (R-30)")
        ctx, d = ctx_of(state), DECISIONS[pending["kind"]]
        request = Request(seat, d.kind, state["step"], d.sealed, d.choices(ctx, state, seat))
        return prompts.prompt(ctx, d, request, self.view(state, seat), picks)

    def order_schema(self, kind: str) -> dict[str, Any]:
        """The order schema on the default board (see `order_schema_for` for a game's own)."""
        return self._schema(load_board(str(self.options["board"].default)), kind)

    def order_schema_for(self, state: State, kind: str) -> dict[str, Any]:
        return self._schema(ctx_of(state).board, kind)

    def _schema(self, board: Board, kind: str) -> dict[str, Any]:
        props: dict[str, Any] = order_properties(board, components(), kind)
        props["kind"] = {"const": kind, "description": "optional; must match the open decision"}
        props["repay"] = {"type": "integer", "minimum": 1, "title": "Repay credits",
                          "description": f"credits to repay first, {components().credit_repay} each (H-96)"}
        props["transfers"] = {
            "type": "array", "title": "Gifts",
            "description": "negotiation variant: gifts to other seats (H-106)",
            "items": {"type": "object", "required": ["to"], "additionalProperties": False, "properties": {
                "to": {"type": "integer"}, "money": {"type": "integer", "minimum": 0},
                "cards": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 1}}}},
        }
        return {"type": "object", "title": summary.KIND_WORDS[kind].capitalize(), "properties": props,
                "additionalProperties": False}

    def default_order(self, state: State, seat: int) -> dict[str, Any]:
        pending = state["pending"]
        need(pending is not None and seat in pending["seats"], "not_your_turn", f"seat {seat} has no open decision")
        return DECISIONS[pending["kind"]].default(ctx_of(state), state, seat)

    def result(self, state: State) -> list[dict[str, Any]] | None:
        return status.ranking(state) if state["over"] else None

    def bots(self) -> dict[str, Any]:
        from engine.haendler.bots import BOTS  # the bots import the rules

        return dict(BOTS)
