"""Sealed bid: the benchmark title of `bench/peer_bench.py`, a Kontor title plugin.

It has exactly the rules of the boardgame.io peer's game (`sealedbid.js` of the peer
harness), so both servers run the same workload:

* 4 seats. Each round is one sealed (simultaneous) step: every seat submits exactly one
  secret whole-number bid from 0 to 1,000,000, in any order.
* When all four bids are in, the round resolves: the highest bid wins a point; a tie goes
  to the lowest seat among the highest bidders. The round's bids are then revealed to all.
* The game ends after `rounds` rounds (default 20, from 1 to 10,000); the winner is the
  seat with the most points, a tie going to the lowest seat.

Hidden information: a seat's bid of the open round is its sealed order, which Kontor
keeps out of every other seat's sight until the step resolves (the peer's `playerView`
shows a player only its own pending bid). Everything in the state is public: the scores,
the rounds played and the last round's revealed bids.

Ruling (the peer does not say): a missed deadline bids 0 for the seat.

It ships as its own small distribution (`pyproject.toml`, entry point `kontor.titles`),
so it is not in a normal `make run`'s catalogue; `bench/peer_bench.py` loads it into the
stack's processes by putting this folder (which carries the entry point's metadata) on
their `PYTHONPATH`.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from engine.core.bots import Dice
from engine.core.errors import IllegalOrder, OptionsError, declare_codes
from engine.core.events import Event, event
from engine.core.game import Game, Names, OptionSpec, Request, State, Words, new_request
from engine.core.info import PUBLIC, Information

SEATS = 4
DEFAULT_ROUNDS = 20
MAX_ROUNDS = 10_000
MAX_BID = 1_000_000
KIND = "bid"

CODES = declare_codes({"bad_bid": f"A bid is a whole number from 0 to {MAX_BID:,}."})


def round_winner(bids: list[int]) -> int:
    """The seat with the highest bid; ties go to the lowest seat (strict >)."""
    winner = 0
    for seat in range(1, len(bids)):
        if bids[seat] > bids[winner]:
            winner = seat
    return winner


class RandomBidder:
    """A bot that bids a seeded random amount (the peer's clients bid from a seeded PRNG)."""

    def __init__(self, seed: int | str) -> None:
        self.dice = Dice(seed)

    def order(self, game: Game, state: State, request: Request) -> dict[str, Any]:
        return {"bid": self.dice.below(MAX_BID + 1)}


# -- words ------------------------------------------------------------------------------
def describe_event(ev: Event, names: Names) -> str:
    if ev["type"] == "round_resolved":
        bids = ", ".join(f"{names[s]} {b:,}" for s, b in enumerate(ev["bids"]))
        return f"Round {ev['round']}: {names[ev['winner']]} won the point with the highest bid ({bids})."
    if ev["type"] == "game_over":
        return f"The game is over after {ev['rounds']} rounds: {names[ev['winner']]} won with {ev['points']} points."
    return f"{ev['type']}."


def describe_request(request: Request, view: dict[str, Any], names: Names) -> str:
    return (f"{names[request.seat]}: your sealed bid for round {view['round'] + 1}, "
            f"a whole number from 0 to {MAX_BID:,}.")


def headline(view: dict[str, Any]) -> str:
    if view["round"] >= view["rounds"]:
        return f"over after {view['rounds']} rounds"
    return f"round {view['round'] + 1} of {view['rounds']}: sealed bids"


def summary(view: dict[str, Any], names: Names) -> str:
    lines = [f"Sealed bid, {headline(view)}."]
    lines += [f"{names[s]}: {p} point{'s' if p != 1 else ''}" for s, p in enumerate(view["scores"])]
    last = view.get("last_round")
    if last:
        lines.append(describe_event({"type": "round_resolved", **last}, names))
    return "\n".join(lines)


def picture(view: dict[str, Any], names: Names) -> str:
    rows = []
    top = max([*view["scores"], 1])
    for s, points in enumerate(view["scores"]):
        y = 40 + 30 * s
        width = int(200 * points / top)
        rows.append(f'<text x="10" y="{y + 15}">{escape(names[s])}</text>'
                    f'<rect x="120" y="{y}" width="{width}" height="20" fill="#4a7">'
                    f'<title>{escape(names[s])}: {points} points</title></rect>'
                    f'<text x="{125 + width}" y="{y + 15}">{points}</text>')
    title = escape(f"Sealed bid, {headline(view)}")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="380" height="170" role="img" '
            f'font-family="sans-serif" font-size="13"><title>{title}</title>'
            f'<text x="10" y="22" font-weight="bold">{title}</text>{"".join(rows)}</svg>')


class SealedBid(Game):
    id = "sealedbid"
    name = "Sealed bid"
    min_seats = SEATS
    max_seats = SEATS
    options = {"rounds": OptionSpec("integer", DEFAULT_ROUNDS, f"rounds to play, 1 to {MAX_ROUNDS:,}")}
    order_codes = CODES
    information = Information({
        "rounds": PUBLIC, "round": PUBLIC, "scores": PUBLIC, "last_round": PUBLIC, "accepted": PUBLIC,
    }, is_over=lambda s: s["round"] >= s["rounds"])  # fmt: skip
    words = Words(describe_event, describe_request, summary, picture, headline)

    def normalize_options(self, seats: int, options: Mapping[str, Any] | None) -> dict[str, Any]:
        out = super().normalize_options(seats, options)
        r = out["rounds"]
        if not isinstance(r, int) or isinstance(r, bool) or not 1 <= r <= MAX_ROUNDS:
            raise OptionsError(f"option rounds must be a whole number from 1 to {MAX_ROUNDS:,}", field="rounds")
        return out

    def initial_state(self, seats: int, options: Mapping[str, Any] | None, seed: int | str) -> State:
        opts = self.normalize_options(seats, options)
        return {"rounds": opts["rounds"], "round": 0, "scores": [0] * seats, "last_round": None, "accepted": 0}

    def requests(self, state: State) -> list[Request]:
        if state["round"] >= state["rounds"]:
            return []
        step = state["round"] + 1
        return [new_request(s, KIND, step, True, {"bid": {"min": 0, "max": MAX_BID}}) for s in range(SEATS)]

    def validate(self, state: State, seat: int, order: Mapping[str, Any]) -> None:
        if state["round"] >= state["rounds"]:
            raise IllegalOrder("game_over", "The game has ended.")
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < SEATS:
            raise IllegalOrder("not_your_turn", f"there is no seat {seat!r}")
        if not isinstance(order, Mapping) or set(order) != {"bid"}:
            raise IllegalOrder("malformed_order", 'a bid order is {"bid": <whole number>}')
        bid = order["bid"]
        if not isinstance(bid, int) or isinstance(bid, bool) or not 0 <= bid <= MAX_BID:
            raise IllegalOrder("bad_bid", f"{bid!r} is not a whole number from 0 to {MAX_BID:,}")

    def resolve(self, state: State, orders: Mapping[int, Mapping[str, Any]]) -> tuple[State, list[Event]]:
        if set(orders) != set(range(SEATS)):
            raise IllegalOrder("not_your_turn", f"a round needs a bid from every seat, got {sorted(orders)}")
        for seat, order in orders.items():
            self.validate(state, seat, order)
        return self.resolve_validated(state, orders)

    def resolve_validated(self, state: State, orders: Mapping[int, Mapping[str, Any]]) -> tuple[State, list[Event]]:
        bids = [int(orders[s]["bid"]) for s in range(SEATS)]
        winner = round_winner(bids)
        scores = list(state["scores"])
        scores[winner] += 1
        last = {"round": state["round"] + 1, "bids": bids, "winner": winner}
        new = {**state, "round": state["round"] + 1, "scores": scores, "last_round": last,
               "accepted": state["accepted"] + SEATS}
        events = [event("round_resolved", **last)]
        if new["round"] >= new["rounds"]:
            best = round_winner(scores)
            events.append(event("game_over", rounds=new["rounds"], winner=best, points=scores[best]))
        return new, events

    def default_order(self, state: State, seat: int) -> dict[str, Any]:
        return {"bid": 0}

    def result(self, state: State) -> list[dict[str, Any]] | None:
        if state["round"] < state["rounds"]:
            return None
        scores = state["scores"]
        ranked = sorted(range(SEATS), key=lambda s: (-scores[s], s))
        return [{"place": 1 + ranked.index(s), "seat": s, "score": scores[s]} for s in ranked]

    def bots(self) -> dict[str, Any]:
        return {"random": RandomBidder}

    def order_schema(self, kind: str) -> dict[str, Any]:
        return {"type": "object", "required": ["bid"], "additionalProperties": False,
                "properties": {"bid": {"type": "integer", "minimum": 0, "maximum": MAX_BID}}}


GAME = SealedBid()
