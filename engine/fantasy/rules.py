"""Fantasy Business as a Kontor title: setup, the one legality path, resolution and views.

The decision points (§14) live in `auction`, `pricing`, `specials.windows` and `trading`;
the order of play in `flow`. This module ties them to the engine contract of `engine.core`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.core.choices import Prompt
from engine.core.errors import IllegalOrder, OptionsError
from engine.core.events import Event
from engine.core.game import Game, OptionSpec, Request, State, Words
from engine.core.stream import draw, new_stream
from engine.fantasy import actions, auction, describe, flow, income, picture, pricing, prompts, summary, trading
from engine.fantasy.decision import Decision
from engine.fantasy.errors import ORDER_CODES
from engine.fantasy.flow import advance
from engine.fantasy.specials import windows
from engine.fantasy.state import C, order_from
from engine.fantasy.view import INFORMATION

DECISIONS: dict[str, Decision] = {
    d.kind: d
    for d in (windows.W_OPEN, auction.SELECT, auction.OPEN, auction.BID, auction.LONE, windows.W_CLOSE,
              pricing.PRICE, windows.W_SPY, pricing.SPY, windows.W_REVEAL, trading.ACCEPT)
}  # fmt: skip

#: Keys each order kind accepts: its own, the instants (FD12), a proposal (V4), "kind".
ALLOWED_KEYS = {k: frozenset(d.keys) | {"kind", "instants", "propose"} for k, d in DECISIONS.items()}
#: An order with only its kind's own keys skips the kind, instants and proposal checks.
OWN_KEYS = {k: frozenset(d.keys) for k, d in DECISIONS.items()}
#: The one key of the kinds that have one (bids, openings, a lone take, sheets, windows).
SOLE_KEY = {k: d.keys[0] for k, d in DECISIONS.items() if len(d.keys) == 1}
#: Each kind's check and apply, looked up by the open kind (one lookup per order or step).
CHECKS = {k: d.check for k, d in DECISIONS.items()}
APPLY = {k: d.apply for k, d in DECISIONS.items()}
#: The instants (FD12), playable with any order: Divination Spell and Subsidies.
INSTANTS = frozenset(c for c in C.deck if c[:2] in ("DS", "SU"))
#: The choices of the kinds that always ask one seat, sequentially, with no per-step
#: shared part (the auctions, D-SPY, D-ACCEPT): `requests` builds their one request directly.
SOLO_CHOICES = {k: d.choices for k, d in DECISIONS.items() if not d.sealed and d.shared is None}
_new_object = object.__new__

_PLAY = {"type": "object", "required": ["card"], "properties": {
    "card": {"type": "string"}, "target": {"type": "integer"}, "type": {"type": "string"},
    "item": {"type": "string"}, "give": {"type": "string"}, "trigger": {"type": "integer"}}}
_SCHEMA: dict[str, dict[str, Any]] = {
    "w_open": {"play": {"type": "array", "items": _PLAY}},
    "w_close": {"play": {"type": "array", "items": _PLAY}},
    "w_spy": {"play": {"type": "array", "items": _PLAY, "maxItems": 1}},
    "w_reveal": {"play": {"type": "array", "items": _PLAY}},
    "select": {"pos": {"type": "integer", "minimum": 1}, "bid": {"type": ["integer", "null"]},
               "preempt": {"type": "boolean"}},
    "open": {"bid": {"type": ["integer", "null"]}},
    "bid": {"bid": {"type": ["integer", "null"]}},
    "lone": {"take": {"type": ["integer", "null"]}},
    "price": {"prices": {"type": "object", "additionalProperties": {"type": "integer"}}},
    "spy": {"prices": {"type": ["object", "null"], "additionalProperties": {"type": "integer"}}},
    "accept": {"accept": {"type": "boolean"}, "specials": {"type": "array", "items": {"type": "string"}}},
}


def _plain_orders(orders: Mapping[Any, Mapping[str, Any]]) -> tuple[dict[int, dict[str, Any]], bool]:
    """Orders as a dict of dicts by int seat, and whether any carries instants or a proposal."""
    mine: dict[int, dict[str, Any]] = {}
    extras = False
    for seat, order in orders.items():
        plain = order if type(order) is dict else dict(order)
        if "instants" in plain or "propose" in plain:
            extras = True
        mine[seat if type(seat) is int else int(seat)] = plain
    return mine, extras


def _no_proposal_from(state: State, seat: int) -> bool:
    """V4: `seat` has no proposal open (so it may make one)."""
    return all(p["from"] != seat for p in state["proposals"])


def _later_looks(looks: list[dict[str, Any]], step: int) -> list[dict[str, Any]]:
    """The Divination looks (FD12) still to come after `step`."""
    return [look for look in looks if look["step"] > step]


class FantasyBusiness(Game):
    """Fantasy Business (Boelinger, Descartes/Eurogames 2002), 3–8 seats."""

    id = "fantasy"
    name = "Fantasy Business"
    min_seats = 3
    max_seats = 8
    options = {
        "rounds": OptionSpec("integer|null", None,
                             "a shorter game: 1 up to the standard rounds (10 with 3–6 seats, 8 with 7–8; R1, V3)"),
        "below_base": OptionSpec("boolean", False, "below-base variant: prices from 1 to twice base (V1)"),
        "sole_bonus": OptionSpec("boolean", False, "sole-bonus variant: +2 only to a sole lowest seller (V2)"),
        "trading": OptionSpec("boolean", False, "trading variant: public binding transfers (R9, V4)"),
    }
    order_codes = ORDER_CODES
    information = INFORMATION
    words = Words(describe.describe_event, summary.describe_request, summary.summary, picture.picture,
                  summary.headline)

    # -- setup (§6) -----------------------------------------------------------------------
    def initial_state(self, seats: int, options: Mapping[str, Any] | None, seed: int | str) -> State:
        opts = self.normalize_options(seats, options)
        standard = C.rounds[seats]
        rounds = opts["rounds"]
        if rounds is None:
            rounds = standard
        elif not isinstance(rounds, int) or isinstance(rounds, bool) or not 1 <= rounds <= standard:
            raise OptionsError(f"rounds must be from 1 to {standard} with {seats} seats (R1)", field="rounds")
        stream = new_stream(seed)
        first, stream = draw(stream, seats)  # FD1 step 1, S3
        s: State = {
            "title": self.id, "options": opts, "seats": seats, "rounds": rounds, "round": 1, "step": 0,
            "over": False, "phase": "offer", "at": "round", "marker": first, "afb": first, "rng": stream,
            "players": [{"crowns": C.start_crowns, "hand": [], "items": [], "sheet": None, "offered": []}
                        for _ in range(seats)],
            "deck": [], "display": [], "facedown": {}, "discard": [], "buried": [], "removed": [],
            "offer": {"bought": [], "nd": [], "preempt": None, "closed": False}, "auction": None,
            "queue": [], "spies": [], "reveal": {"os": [], "bc": [], "ra": []}, "prices": {}, "income": {},
            "pending": None, "looks": [], "proposals": [], "scores": None,
        }  # fmt: skip
        flow.deal(s)  # FD1 step 2, S4
        advance(s, [])
        return s

    # -- the contract ---------------------------------------------------------------------
    def requests(self, state: State) -> list[Request]:
        pending = state["pending"]
        if pending is None or state["over"]:
            return []
        kind = pending["kind"]
        seats = pending["seats"]
        if kind == "bid":  # `auction._bid_choices`, written out: most steps are bids (one seat asked)
            seat = seats[0]
            player = state["players"][seat]
            a = state["auction"]
            choices = {"pos": a["pos"], "card": a["card"], "high": a["high"], "bidder": a["bidder"],
                       "crowns": player["crowns"]}
        elif kind in SOLO_CHOICES and len(seats) == 1:  # one seat asked, sequentially (the auctions')
            seat = seats[0]
            player = state["players"][seat]
            if kind == "open":  # `auction._open_choices`, written out
                a = state["auction"]
                choices = {"pos": a.get("pos"), "card": a.get("card"), "min": a["min"], "crowns": player["crowns"]}
            else:
                choices = SOLO_CHOICES[kind](state, seat, None)
        else:
            return self._requests_of_seats(state, kind, seats)
        hand = player["hand"]
        if hand and not INSTANTS.isdisjoint(hand):
            choices["instants"] = [c for c in hand if c in INSTANTS]  # FD12: playable with any order
        if state["options"]["trading"] and state["phase"] == "offer" and _no_proposal_from(state, seat):
            choices["can_propose"] = True  # V4
        r: Request = _new_object(Request)  # `new_request(...)`, written out (no tuple of the values)
        r.seat = seat
        r.kind = kind
        r.step = state["step"]
        r.sealed = False
        r.choices = choices
        return [r]

    def _requests_of_seats(self, state: State, kind: str, seats: list[int]) -> list[Request]:
        """`requests` of a step that may ask several seats (windows, sheets), or a
        proposal's recipient."""
        may_propose = state["options"]["trading"] and state["phase"] == "offer"
        d = DECISIONS[kind]
        choices_of, step, sealed, players = d.choices, state["step"], d.sealed, state["players"]
        shared = None if d.shared is None else d.shared(state)
        out = []
        for seat in seats:
            choices = choices_of(state, seat, shared)
            hand = players[seat]["hand"]
            if hand and not INSTANTS.isdisjoint(hand):
                choices["instants"] = [c for c in hand if c in INSTANTS]  # FD12: playable with any order
            if may_propose and _no_proposal_from(state, seat):
                choices["can_propose"] = True  # V4
            r = _new_object(Request)  # `new_request(...)`, written out
            r.seat = seat
            r.kind = kind
            r.step = step
            r.sealed = sealed
            r.choices = choices
            out.append(r)
        return out

    def validate(self, state: State, seat: int, order: Mapping[str, Any]) -> None:
        pending = state["pending"]
        if state["over"]:
            raise IllegalOrder("game_over", "the game has ended (R24)")
        if pending is None or seat not in pending["seats"]:
            raise IllegalOrder("not_your_turn", f"seat {seat} has no open decision now")
        kind = pending["kind"]
        if type(order) is not dict:
            if not isinstance(order, Mapping):
                raise IllegalOrder("malformed_order", "an order is a JSON object")
            order = dict(order)
        # The common case: only the kind's own keys (no kind, instants or proposal), checked
        # cheaply for the kinds with one key (`order.keys() <= OWN_KEYS[kind]` otherwise).
        sole = SOLE_KEY.get(kind)
        if (len(order) == 1 and sole in order) if sole is not None else order.keys() <= OWN_KEYS[kind]:
            CHECKS[kind](state, seat, order, state["players"][seat])  # its wallet: the seat's own entry
            return
        d = DECISIONS[kind]
        kind = order.get("kind", d.kind)
        if kind != d.kind:
            raise IllegalOrder("wrong_kind", f"the open decision is {d.kind!r}, not {kind!r}")
        extra = order.keys() - ALLOWED_KEYS[d.kind]
        if extra:
            raise IllegalOrder("malformed_order", f"unknown field(s) {', '.join(sorted(map(str, extra)))} for a "
                               f"{d.kind} order; it takes {', '.join(d.keys)} (and instants, propose)")
        wallet = windows.check_instants(state, seat, order)
        trading.check_proposal(state, seat, order, wallet)
        d.check(state, seat, order, wallet)

    def resolve(self, state: State, orders: Mapping[int, Mapping[str, Any]]) -> tuple[State, list[Event]]:
        pending = state["pending"]
        if state["over"] or pending is None:
            raise IllegalOrder("game_over", "the game has ended (R24)")
        if set(orders) != set(pending["seats"]):
            raise IllegalOrder("not_your_turn", f"this step needs orders from seats {pending['seats']}")
        for seat, order in orders.items():
            self.validate(state, seat, order)
        return self.resolve_validated(state, orders)

    def resolve_validated(self, state: State, orders: Mapping[int, Mapping[str, Any]]) -> tuple[State, list[Event]]:
        apply = APPLY[state["pending"]["kind"]]
        s = state.copy()  # `copy_state`, written out: only the top level is copied
        ev: list[Event] = []
        step = s["step"]
        if s["looks"]:
            s["looks"] = _later_looks(s["looks"], step)
        # Orders are read, never changed, and nothing of an order is kept by reference
        # (plays, sheets and proposals are rebuilt as new objects where they are stored),
        # so a plain dict of plain dicts by int seat is used as it is; anything else is
        # copied to one (`_plain_orders`). Most steps: one plain order without extras.
        if type(orders) is dict and len(orders) == 1:
            for seat in orders:  # the one order, by key: no (seat, order) pair made
                order = orders[seat]
            if type(order) is dict and type(seat) is int:
                mine: dict[int, dict[str, Any]] = orders
                extras = "instants" in order or "propose" in order
            else:
                mine, extras = _plain_orders(orders)
        elif type(orders) is dict:
            mine, extras = orders, False  # checked just below
            for seat in orders:  # by key, then its order: no (seat, order) pairs made
                order = orders[seat]
                if type(order) is not dict or type(seat) is not int:
                    mine, extras = _plain_orders(orders)
                    break
                if "instants" in order or "propose" in order:
                    extras = True
        else:
            mine, extras = _plain_orders(orders)
        if extras:
            for seat in order_from(s, s["afb"]):
                o = mine.get(seat)
                if o is not None and o.get("instants"):
                    windows.apply_instants(s, seat, o["instants"], ev)
            apply(s, mine, ev)
            for seat in order_from(s, s["afb"]):
                o = mine.get(seat)
                if o is not None and "propose" in o:
                    trading.add_proposal(s, seat, o["propose"], ev)
            s["step"] = step + 1
            advance(s, ev)
        else:
            asked = apply(s, mine, ev)  # True: it asked the auction's next seat itself
            s["step"] = step + 1
            if asked is not True:
                advance(s, ev)
        for e in ev:
            e["step"] = step
        return s, ev

    def default_order(self, state: State, seat: int) -> dict[str, Any]:
        pending = state["pending"]
        if state["over"] or pending is None or seat not in pending["seats"]:
            raise IllegalOrder("not_your_turn", f"seat {seat} has no open decision")
        return DECISIONS[pending["kind"]].default(state, seat)

    def result(self, state: State) -> list[dict[str, Any]] | None:
        return income.ranking(state) if state["over"] else None

    def bots(self) -> dict[str, Any]:
        from engine.fantasy.bots import BOTS  # the bots import the rules

        return dict(BOTS)

    # -- in the player's terms, and actions at any time (off the fast paths) --------------------
    def prompt(self, state: State, seat: int, picks: Sequence[Any] = ()) -> Prompt | None:
        return prompts.decision_prompt(self.view(state, seat), seat, picks)

    def action_prompt(self, state: State, seat: int, picks: Sequence[Any] = ()) -> Prompt | None:
        """FD12 (Subsidies, Divination Spell) and V4 (propose, withdraw, accept, reject)."""
        if state["over"] or not (isinstance(seat, int) and 0 <= seat < state["seats"]):
            return None
        return prompts.action_prompt(self.view(state, seat), seat, picks)

    def act(self, state: State, seat: int, action: Mapping[str, Any],
            submitted: Mapping[int, Mapping[str, Any]] | None = None) -> tuple[State, list[Event]]:
        return actions.act(state, seat, action, submitted)

    def action_schema(self) -> dict[str, Any]:
        return dict(actions.SCHEMA)

    def order_schema(self, kind: str) -> dict[str, Any]:
        d = DECISIONS[kind]
        props: dict[str, Any] = dict(_SCHEMA.get(kind, {}))
        props["kind"] = {"const": kind, "description": "optional; must match the open decision"}
        props["instants"] = {"type": "array", "items": _PLAY,
                             "description": "Divination Spell / Subsidies played first (FD12)"}
        props["propose"] = {"type": "object", "description": "trading variant: a transfer proposal (V4)"}
        return {"type": "object", "title": f"{kind} order ({d.rule})", "properties": props,
                "additionalProperties": False}
