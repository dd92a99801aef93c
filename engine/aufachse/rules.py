"""Auf Achse as a Kontor title: setup, the one legality path, resolution and views.

The decisions (D-PLACE … D-SHORTCUT) are checked and carried out in `flow`; their
defaults are in `defaults`; randomness is in `dice`. This module ties them to the engine
contract of `engine.core`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.aufachse import defaults, describe, effects, flow, picture, prompts, public, summary
from engine.aufachse.context import GameOver, Run, ctx_of, fork, ranking_of
from engine.aufachse.dataset import DEFAULT, load_data
from engine.aufachse.dice import setup_draws
from engine.aufachse.errors import ORDER_CODES
from engine.aufachse.movement import values_by_die
from engine.aufachse.view import INFORMATION
from engine.core.choices import Prompt
from engine.core.errors import IllegalOrder
from engine.core.events import Event
from engine.core.game import Game, OptionSpec, Request, State, Words, new_request


class AufAchse(Game):
    """Auf Achse (Wolfgang Kramer, Schmidt Spiele 2007), 2–6 seats."""

    id = "aufachse"
    name = "Auf Achse"
    min_seats = 2
    max_seats = 6
    options = {
        "kids": OptionSpec("boolean", False, "the simplified 'kids' variant: 5 orders each, a public pile of 10, "
                                             "no trailers, no auctions; public orders are taken on arrival (§16)"),
        "data": OptionSpec("string|object", DEFAULT, "a shipped data set id, or a whole data set document (§19)"),
    }
    order_codes = ORDER_CODES
    information = INFORMATION
    words = Words(describe.describe_event, summary.describe_request, summary.summary, picture.picture,
                  summary.headline)

    # -- setup (§6) -----------------------------------------------------------------------
    def initial_state(self, seats: int, options: Mapping[str, Any] | None, seed: int | str) -> State:
        opts = self.normalize_options(seats, options)
        ctx = load_data(opts["data"])
        kids = opts["kids"]
        comp = ctx.comp
        first, shuffled, events, rng = setup_draws(ctx, seats, seed)
        hand = ctx.hand(kids)
        players: list[dict[str, Any]] = [{"cash": comp.start_cash, "debts": [], "hand": [], "open": [], "loaded": [],
                    "trailers": {"small": 0, "large": 0}, "skips": 0, "at": None} for _ in range(seats)]
        for k in range(seats):
            players[(first + k) % seats]["hand"] = shuffled[hand * k:hand * k + hand]
        pile = ctx.pile(seats, kids)
        rest = shuffled[hand * seats:]
        slots = comp.display_slots
        s: State = {
            "title": self.id,
            "options": opts,
            "data_key": ctx.key,
            "seats": seats,
            "rng": rng,
            "step": 0,
            "over": False,
            "phase": "place",
            "first": first,
            "turn": first,
            "turn_no": 0,
            "round": 0,
            "dice": None,
            "rolls": "",
            "players": players,
            "display": rest[:slots],
            "deck": rest[slots:pile],
            "reserve": rest[pile:],
            "events": events,
            "used_events": [],
            "discard": [],
            "supply": {k: (0 if kids and not comp.kids_trailers else t.count) for k, t in comp.trailers.items()},
            "roadworks": None,
            "jam": None,
            "auction": None,
            "pending": None,
            "queue": [{"t": "place", "seat": (first + k) % seats} for k in range(seats)]
            + [{"t": "turn", "seat": first}],
            "fresh": [],
            "bank": 0,
            "last_move": None,
        }
        flow.advance(Run(ctx, s))
        return s

    # -- the contract -----------------------------------------------------------------------
    def requests(self, state: State) -> list[Request]:
        pending = state["pending"]
        if state["over"] or pending is None:
            return []
        seat = pending["seat"]
        return [new_request(seat, pending["kind"], state["step"], False, self._choices(state, pending))]

    def _choices(self, s: State, pending: dict[str, Any]) -> dict[str, Any]:
        kind, seat = pending["kind"], pending["seat"]
        pl = s["players"][seat]
        if kind == "move":  # (most steps; it needs no data set)
            dice = s["dice"]
            return {"dice": list(dice), "values": values_by_die(dice), "at": pl["at"], "extra": bool(pending["extra"])}
        ctx = ctx_of(s)
        if kind == "place":
            full = sorted({p["at"] for p in s["players"] if p["at"] and flow.space_full(ctx, s, p["at"])})
            return {"full": full}
        if kind == "arrive":
            return {"city": pl["at"], "eligible": bool(pending["eligible"]) and flow.eligible_now(s)}
        if kind == "bid":
            a = s["auction"]
            return {"card": a["card"], "step": a["step"], "holder": a["holder"], "picker": a["picker"],
                    "allowed": public.allowed_bids(ctx, s, seat)}
        if kind == "load_won":
            return {"card": pending["card"], "active": pending["active"]}
        if kind == "event_space":
            spaces = (effects.roadworks_targets(ctx, s, pending["owner"]) if pending["mode"] == "roadworks"
                      else effects.jam_targets(ctx, s, pending["owner"], pending["by"]))
            return {"mode": pending["mode"], "owner": pending["owner"], "spaces": spaces}
        return {"cities": effects.shortcut_cities(ctx, s, seat, pending["reach"]), "reach": pending["reach"]}

    def _check_shape(self, state: State, seat: Any, order: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        if state["over"]:
            raise IllegalOrder("game_over", "the game has ended")
        pending = state["pending"]
        if pending is None or seat != pending["seat"] or isinstance(seat, bool):
            raise IllegalOrder("not_your_turn", f"seat {seat} has no open decision now")
        if type(order) is not dict and not isinstance(order, Mapping):
            raise IllegalOrder("malformed_order", "an order is a JSON object")
        order = dict(order)
        kind = order.pop("kind", pending["kind"])
        if kind != pending["kind"]:
            raise IllegalOrder("wrong_kind", f"the open decision is {pending['kind']!r}, not {kind!r}")
        if not flow.KEYS[kind].issuperset(order):
            extra = set(order) - flow.KEYS[kind]
            raise IllegalOrder("malformed_order", f"unknown field(s) {', '.join(sorted(map(str, extra)))} for a "
                                                  f"{kind} order; it takes {', '.join(sorted(flow.KEYS[kind]))}")
        return order, pending

    def validate(self, state: State, seat: int, order: Mapping[str, Any]) -> None:
        plain, pending = self._check_shape(state, seat, order)
        ctx = ctx_of(state)
        run = fork(ctx, state, dry=True)
        try:
            flow.APPLY[pending["kind"]](run, seat, plain, pending)  # apply never changes an order
        except (KeyError, TypeError, ValueError, AttributeError):
            raise IllegalOrder("malformed_order", f"the {pending['kind']} order does not have the expected shape"
                               ) from None

    def resolve(self, state: State, orders: Mapping[int, Mapping[str, Any]]) -> tuple[State, list[Event]]:
        pending = state["pending"]
        if state["over"] or pending is None:
            raise IllegalOrder("game_over", "the game has ended")
        if set(orders) != {pending["seat"]}:
            raise IllegalOrder("not_your_turn", f"this step needs an order from seat {pending['seat']}")
        for seat, order in orders.items():
            self.validate(state, seat, order)
        return self.resolve_validated(state, orders)

    def resolve_validated(self, state: State, orders: Mapping[int, Mapping[str, Any]]
                          ) -> tuple[State, list[Event]]:
        ctx = ctx_of(state)
        run = fork(ctx, state)
        run.checked = True
        s = run.s
        pending = s["pending"]
        seat = pending["seat"]
        # The order as a dict of its own: resolution pops "kind" (it never changes an
        # order's values, and the state keeps copies of the lists it takes from one).
        order = dict(orders[seat])
        order.pop("kind", None)
        s["pending"] = None
        try:
            flow.APPLY[pending["kind"]](run, seat, order, pending)
        except GameOver:
            pass
        if pending["kind"] == "place" and not s["over"] and s["queue"] and s["queue"][0]["t"] == "turn":
            s["phase"] = "play"
        s["step"] += 1
        flow.advance(run)
        for e in run.ev:
            e.setdefault("step", state["step"])
        return s, run.ev

    def order_schema(self, kind: str) -> dict[str, Any]:
        sizes = {"enum": ["small", "large"], "type": "string",
                 "x-labels": {"small": "small (+4)", "large": "large (+6)"}}
        trailers = {"type": "array", "title": "Trailers", "description": "trailer buys and sells, in order (H1–H3)",
                    "items": {"type": "object", "minProperties": 1, "maxProperties": 1, "additionalProperties": False,
                              "properties": {"buy": {**sizes, "title": "Buy", "description": "buy a trailer"},
                                             "sell": {**sizes, "title": "Sell", "description": "sell one back"}}}}

        def ids(title: str, description: str) -> dict[str, Any]:
            return {"type": "array", "title": title, "description": description,
                    "items": {"type": "string", "title": "Order card", "description": "an order card id, e.g. O14"}}

        def flag(title: str, description: str) -> dict[str, Any]:
            return {"type": "boolean", "const": True, "title": title, "description": description}

        def space(title: str, description: str) -> dict[str, Any]:
            return {"type": "string", "title": title, "description": description}

        arrive = {"type": "object", "title": "On arrival", "description": "what you do in the city you reach (T5)",
                  "additionalProperties": False, "properties": {
            "trailers": trailers, "load": ids("Load", "order cards to load in this city (L2)"),
            "deliver": ids("Deliver", "the order of deliveries in this city (R27)"),
            "pick": {"type": "integer", "minimum": 1, "maximum": 4, "title": "Pick",
                     "description": "a public order's slot (1 to 4) for auction (P1)"},
            "decline": flag("Decline", "decline the public orders (P3)")}}
        props: dict[str, dict[str, Any]] = {
            "place": {"space": space("Space", "a city or road space id (S6)")},
            "move": {"trailers": trailers, "load": ids("Load", "order cards to load before the move (L2)"),
                     "die": {"enum": ["A", "B"], "type": "string", "title": "Die", "x-labels": {"A": "die A",
                             "B": "die B"}, "description": "the die used (T3)"},
                     "n": {"type": "integer", "minimum": 1, "maximum": 6, "title": "Value",
                           "description": "the value taken for a 6 (needed only for a 6)"},
                     "path": {**ids("Path", "the spaces entered, in order; [] to wait (M4, M9)"),
                              "items": {"type": "string", "title": "Space", "description": "a city or road space"}},
                     "roadworks": space("Roadworks", "where the roadworks goes when N = 1 (K1)"),
                     "arrive": arrive},
            "arrive": dict(arrive["properties"]),  # type: ignore[call-overload]
            "bid": {"bid": {"type": "integer", "minimum": 1, "maximum": 5, "title": "Bid",
                            "description": "a step of the card (1 to 5, A3)"},
                    "pass": flag("Pass", "pass (final, A4)")},
            "load_won": {"trailers": trailers, "load": ids("Load", "order cards to load here (A8)")},
            "event_space": {"space": space("Space", "where the roadworks (E09) or the jam (E08, N08) goes")},
            "shortcut": {"city": space("City", "a city in range (E13)"),
                         "decline": flag("Decline", "do not use the shortcut")},
        }
        chosen = dict(props.get(kind, {}))
        chosen.pop("deliver", None) if kind == "arrive" else None
        chosen["kind"] = {"const": kind, "description": "optional; must match the open decision"}
        return {"type": "object", "title": f"{kind} order ({flow.RULE.get(kind, '§17')})", "properties": chosen,
                "additionalProperties": False}

    def prompt(self, state: State, seat: int, picks: Sequence[Any] = ()) -> Prompt:
        """The open decision in the player's words and clicks (`prompts`)."""
        return prompts.prompt(self, state, seat, picks)

    def default_order(self, state: State, seat: int) -> dict[str, Any]:
        pending = state["pending"]
        if state["over"] or pending is None or seat != pending["seat"]:
            raise IllegalOrder("not_your_turn", f"seat {seat} has no open decision")
        ctx = ctx_of(state)
        kind = pending["kind"]
        if kind == "place":
            return defaults.place(ctx, state, seat)
        if kind == "move":
            return defaults.move(ctx, state, seat, bool(pending["extra"]))
        if kind == "arrive":
            return defaults.arrive(ctx, state, seat, pending)
        if kind == "bid":
            return {"pass": True}
        if kind == "load_won":
            return defaults.load_won(ctx, state, seat, pending)
        if kind == "event_space":
            return defaults.event_space(ctx, state, seat, pending)
        return defaults.shortcut(ctx, state, seat, pending)

    def result(self, state: State) -> list[dict[str, Any]] | None:
        return ranking_of(state) if state["over"] else None

    def bots(self) -> dict[str, Any]:
        from engine.aufachse.bots import BOTS

        return dict(BOTS)
