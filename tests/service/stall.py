"""A small test title with choices and unprompted actions: "Stall", 2-3 seats.

The service's choices and actions (`service.core.choices`) are tested with it until the
real titles have them. A market stall holds Wein and Tuch; the seats take turns, one
seat asked per step (4 steps), to buy 1 to 3 of a good for 1 coin each, or to pass. At
any time, asked or not, a seat may hoard one good (an unprompted action): it takes one
from the stall for 2 coins at once. A hoard may leave too little in the stall for an
order already stored: the service then plays the asked seat's default (pass) and tells
it privately. Each seat's coins are its own to see.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from engine.core import registry
from engine.core.choices import Ask, Number, Option, Prompt, walk
from engine.core.errors import IllegalOrder, declare_codes
from engine.core.events import Event, event
from engine.core.game import Game, Names, Request, State
from engine.core.info import PUBLIC, Fields, Information, Own, Seats

CODES = declare_codes({
    "sold_out": "The stall has not that many of that good.",
    "short_of_coins": "Not enough coins for that.",
})
GOODS = {"wein": "Wein", "tuch": "Tuch"}
STEPS = 4
HOARD_PRICE = 2


class PassBot:
    def __init__(self, seed: int | str) -> None:
        pass

    def order(self, game: Game, state: State, request: Request) -> dict[str, Any]:
        return {"pass": True}


class Stall(Game):
    id = "stall"
    name = "Stall"
    min_seats = 2
    max_seats = 3
    options: dict[str, Any] = {}
    order_codes = CODES
    information = Information({
        "step": PUBLIC, "seats": PUBLIC, "stock": PUBLIC,
        "players": Seats(Fields({"coins": Own(), "goods": PUBLIC})),
    }, is_over=lambda s: s["step"] > STEPS)  # fmt: skip

    def initial_state(self, seats: int, options: Mapping[str, Any] | None, seed: int | str) -> State:
        self.normalize_options(seats, options)
        return {"step": 1, "seats": seats, "stock": {"wein": 3, "tuch": 2},
                "players": [{"coins": 5, "goods": {"wein": 0, "tuch": 0}} for _ in range(seats)]}

    @staticmethod
    def asked(state: State) -> int | None:
        return None if state["step"] > STEPS else (state["step"] - 1) % state["seats"]

    def requests(self, state: State) -> list[Request]:
        seat = self.asked(state)
        if seat is None:
            return []
        return [Request(seat, "buy", state["step"], False, {"good": sorted(GOODS), "count": {"min": 1, "max": 3}})]

    def validate(self, state: State, seat: int, order: Mapping[str, Any]) -> None:
        if self.asked(state) is None:
            raise IllegalOrder("game_over", "the game has ended")
        if seat != self.asked(state):
            raise IllegalOrder("not_your_turn", "it is another seat's turn")
        if dict(order) == {"pass": True}:
            return
        if set(order) != {"buy", "count"} or order["buy"] not in GOODS or type(order["count"]) is not int \
                or not 1 <= order["count"] <= 3:
            raise IllegalOrder("malformed_order", "an order buys 1 to 3 of a good, or passes")
        if state["stock"][order["buy"]] < order["count"]:
            raise IllegalOrder("sold_out", f"the stall has {state['stock'][order['buy']]} {GOODS[order['buy']]}")
        if state["players"][seat]["coins"] < order["count"]:
            raise IllegalOrder("short_of_coins", "not enough coins")

    def resolve(self, state: State, orders: Mapping[int, Mapping[str, Any]]) -> tuple[State, list[Event]]:
        (seat, order), = orders.items()
        self.validate(state, seat, order)
        state = _copy(state)
        events: list[Event] = []
        if "buy" in order:
            good, n = order["buy"], order["count"]
            state["stock"][good] -= n
            state["players"][seat]["coins"] -= n
            state["players"][seat]["goods"][good] += n
            events.append(event("bought", seat=seat, good=good, count=n))
        else:
            events.append(event("passed", seat=seat))
        state["step"] += 1
        return state, events

    def order_schema(self, kind: str) -> dict[str, Any]:
        return {"type": "object", "properties": {
            "buy": {"enum": sorted(GOODS), "x-labels": GOODS}, "count": {"type": "integer", "minimum": 1, "maximum": 3},
            "pass": {"const": True}}}

    def default_order(self, state: State, seat: int) -> dict[str, Any]:
        return {"pass": True}

    def result(self, state: State) -> list[dict[str, Any]] | None:
        if self.asked(state) is not None:
            return None
        score = [sum(p["goods"].values()) for p in state["players"]]
        ranked = sorted(range(state["seats"]), key=lambda s: -score[s])
        return [{"place": 1 + sum(score[o] > score[s] for o in ranked), "seat": s, "score": score[s]}
                for s in ranked]

    def bots(self) -> dict[str, Any]:
        return {"passer": PassBot}

    # -- words ----------------------------------------------------------------------------
    def describe_event(self, event: Event, names: Names) -> str:
        who = names[event["seat"]] if isinstance(event.get("seat"), int) else "Someone"
        if event["type"] == "bought":
            return f"{who} bought {event['count']} {GOODS[event['good']]}."
        if event["type"] == "hoarded":
            return f"{who} hoarded 1 {GOODS[event['good']]}."
        if event["type"] == "purse":
            return f"{who} has {event['coins']} coins left."
        return f"{who} passed."

    def describe_request(self, request: Request, view: dict[str, Any], names: Names) -> str:
        return f"{names[request.seat]}: buy 1 to 3 of a good, or pass."

    def summary(self, view: dict[str, Any], names: Names) -> str:
        return f"The stall has {view['stock']['wein']} Wein and {view['stock']['tuch']} Tuch."

    def picture(self, view: dict[str, Any], names: Names) -> str:
        return ('<svg xmlns="http://www.w3.org/2000/svg"><title>Stall</title>'
                '<rect id="good-wein"/><rect id="good-tuch"/></svg>')

    # -- choices and actions --------------------------------------------------------------
    def prompt(self, state: State, seat: int, picks: Sequence[Any] = ()) -> Prompt | None:
        if self.asked(state) != seat:
            raise IllegalOrder("not_your_turn", "nothing is asked of you now")
        coins = state["players"][seat]["coins"]

        def asks(prefix: tuple[Any, ...]) -> Ask | None:
            if not prefix:
                opts = [Option(g, label, place=f"good-{g}") for g, label in GOODS.items()
                        if state["stock"][g] > 0 and coins > 0]
                return Ask("good", "What do you buy?", options=(*opts, Option("pass", "Pass", ("nothing",))))
            if len(prefix) == 1 and prefix[0] != "pass":
                top = min(3, state["stock"][prefix[0]], coins)
                return Ask("count", f"How many {GOODS[prefix[0]]}?", number=Number("How many", 1, top))
            return None

        chosen, ask = walk(picks, asks)
        order: dict[str, Any] | None = None
        sentence = ""
        if list(picks) == ["pass"]:
            order, sentence = {"pass": True}, "Pass"
        elif len(picks) == 2:
            order = {"buy": picks[0], "count": picks[1]}
            sentence = f"Buy {picks[1]} {GOODS[picks[0]]}"
        elif picks:
            sentence = f"Buy {GOODS[picks[0]]}"
        return Prompt("Buy 1 to 3 of a good, or pass.", tuple(picks), ask, order, sentence, tuple(chosen))

    def action_prompt(self, state: State, seat: int, picks: Sequence[Any] = ()) -> Prompt | None:
        opts = self._hoardable(state, seat)
        if not opts:
            return None

        def asks(prefix: tuple[Any, ...]) -> Ask | None:
            if not prefix:
                return Ask("hoard", "Which good do you hoard?", options=tuple(opts))
            return None

        chosen, ask = walk(picks, asks)
        order = {"hoard": picks[0]} if picks else None
        sentence = f"Hoard 1 {GOODS[picks[0]]} for {HOARD_PRICE} coins" if picks else ""
        return Prompt("You may hoard a good at any time.", tuple(picks), ask, order, sentence, tuple(chosen))

    def _hoardable(self, state: State, seat: int) -> list[Option]:
        if self.asked(state) is None or state["players"][seat]["coins"] < HOARD_PRICE:
            return []
        return [Option(g, f"Hoard 1 {label}", (label,), place=f"good-{g}") for g, label in GOODS.items()
                if state["stock"][g] > 0]

    def act(self, state: State, seat: int, action: Mapping[str, Any],
            submitted: Mapping[int, Mapping[str, Any]] | None = None) -> tuple[State, list[Event]]:
        if self.asked(state) is None:
            raise IllegalOrder("game_over", "the game has ended")
        if not isinstance(action, Mapping) or set(action) != {"hoard"} or action["hoard"] not in GOODS:
            raise IllegalOrder("no_action", "an action hoards one good")
        good = action["hoard"]
        if state["stock"][good] < 1:
            raise IllegalOrder("sold_out", f"the stall has no {GOODS[good]} left")
        if state["players"][seat]["coins"] < HOARD_PRICE:
            raise IllegalOrder("short_of_coins", f"hoarding costs {HOARD_PRICE} coins")
        state = _copy(state)
        state["stock"][good] -= 1
        state["players"][seat]["coins"] -= HOARD_PRICE
        state["players"][seat]["goods"][good] += 1
        return state, [event("hoarded", seat=seat, good=good),
                       event("purse", [seat], seat=seat, coins=state["players"][seat]["coins"])]

    def action_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": {"hoard": {"enum": sorted(GOODS)}}, "required": ["hoard"]}


def _copy(state: State) -> State:
    return {**state, "stock": dict(state["stock"]),
            "players": [{"coins": p["coins"], "goods": dict(p["goods"])} for p in state["players"]]}


GAME = Stall()


@contextmanager
def registered() -> Iterator[Game]:
    """Stall in the registry for the duration (every process part in the test shares it)."""
    registry.titles()  # load the built-in titles first, so a later load does not drop Stall
    registry.register(GAME)
    try:
        yield GAME
    finally:
        registry._TITLES.pop(GAME.id, None)
