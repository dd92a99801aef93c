"""A tiny third-party title for the registry and stripper tests: "Guess", 2-3 seats.

Each round every seat secretly writes a number 0-9 (sealed); the seat closest to the
round's hidden target (drawn from the seed) scores a point. Three rounds. Hidden: each
seat's notes (own), the targets (secret), the RNG (never).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.core.errors import IllegalOrder, declare_codes
from engine.core.events import Event, event
from engine.core.game import Game, Names, Request, State
from engine.core.info import NEVER, PUBLIC, Fields, Information, Own, Seats, Secret
from engine.core.rng import below, seed_state

CODES = declare_codes({"bad_guess": "A guess is a whole number from 0 to 9."})


class GuessBot:
    def __init__(self, seed: int | str) -> None:
        self.n = seed_state(seed) % 10

    def order(self, game: Game, state: State, request: Request) -> dict[str, Any]:
        return {"guess": self.n}


class Guess(Game):
    id = "guess"
    name = "Guess"
    min_seats = 2
    max_seats = 3
    options: dict[str, Any] = {}
    order_codes = CODES
    information = Information({
        "round": PUBLIC, "seats": PUBLIC, "over": PUBLIC, "scores": PUBLIC,
        "rng": NEVER,
        "targets": Secret(count_as="targets_left", count="len"),
        "players": Seats(Fields({"notes": Own(count_as="notes_count", count="len"), "name": PUBLIC})),
    })  # fmt: skip

    def initial_state(self, seats: int, options: Mapping[str, Any] | None, seed: int | str) -> State:
        self.normalize_options(seats, options)
        rng, targets = seed_state(seed), []
        for _ in range(3):
            t, rng = below(rng, 10)
            targets.append(t)
        return {"round": 1, "seats": seats, "over": False, "scores": [0] * seats, "rng": rng,
                "targets": targets, "players": [{"notes": [], "name": f"p{i}"} for i in range(seats)]}

    def requests(self, state: State) -> list[Request]:
        if state["over"]:
            return []
        choices = {"guess": {"min": 0, "max": 9}}
        return [Request(s, "guess", state["round"], True, choices) for s in range(state["seats"])]

    def validate(self, state: State, seat: int, order: Mapping[str, Any]) -> None:
        if state["over"]:
            raise IllegalOrder("game_over", "the game has ended")
        if not isinstance(seat, int) or not 0 <= seat < state["seats"]:
            raise IllegalOrder("not_your_turn", f"no seat {seat}")
        if not isinstance(order, Mapping) or set(order) != {"guess"}:
            raise IllegalOrder("malformed_order", "a guess order is {\"guess\": n}")
        g = order["guess"]
        if not isinstance(g, int) or isinstance(g, bool) or not 0 <= g <= 9:
            raise IllegalOrder("bad_guess", f"{g!r} is not a number from 0 to 9")

    def resolve(self, state: State, orders: Mapping[int, Mapping[str, Any]]) -> tuple[State, list[Event]]:
        for seat, order in orders.items():
            self.validate(state, seat, order)
        target = state["targets"][state["round"] - 1]
        best = min(abs(o["guess"] - target) for o in orders.values())
        winners = sorted(s for s, o in orders.items() if abs(o["guess"] - target) == best)
        s = {**state, "scores": [v + (i in winners) for i, v in enumerate(state["scores"])],
             "players": [{**p, "notes": [*p["notes"], orders[i]["guess"]]} for i, p in enumerate(state["players"])],
             "round": state["round"] + 1, "over": state["round"] == 3}
        ev = [event("guessed", guesses={str(k): o["guess"] for k, o in orders.items()}, target=target, winners=winners)]
        return s, ev

    def default_order(self, state: State, seat: int) -> dict[str, Any]:
        return {"guess": 0}

    def result(self, state: State) -> list[dict[str, Any]] | None:
        if not state["over"]:
            return None
        order = sorted(range(state["seats"]), key=lambda s: -state["scores"][s])
        return [{"place": 1 + sum(state["scores"][o] > state["scores"][s] for o in order), "seat": s,
                 "score": state["scores"][s]} for s in order]

    def bots(self) -> dict[str, Any]:
        return {"fixed": GuessBot}

    def describe_event(self, event: Event, names: Names) -> str:
        who = " and ".join(names[w] for w in event.get("winners", []))
        return f"The target was {event.get('target')}; {who or 'nobody'} scored."

    def describe_request(self, request: Request, view: dict[str, Any], names: Names) -> str:
        return f"{names[request.seat]}: guess a number from 0 to 9."

    def summary(self, view: dict[str, Any], names: Names) -> str:
        return "\n".join(f"{names[i]}: {sc} points" for i, sc in enumerate(view["scores"]))

    def picture(self, view: dict[str, Any], names: Names) -> str:
        return f'<svg xmlns="http://www.w3.org/2000/svg"><title>Guess, round {view["round"]}</title></svg>'


GAME = Guess()
