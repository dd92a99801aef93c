"""The order of play (H-39, H-40): from one decision point to the next.

`advance` runs automatic steps (upkeep, sales, clean-ups, skipped windows) until a
decision is open (`state["pending"]`) or the game is over. The cursor `state["at"]` names
the station and its position; each station either opens a decision and returns True, or
moves the cursor on. Whether a decision is asked or a window skipped depends on public
facts only (H-16, R-29).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from engine.core.events import Event, event
from engine.haendler import abilities, carts, moving, prices, selling, status
from engine.haendler.buying import BUY
from engine.haendler.context import Ctx, S, all_played, hand_size, has, turn_order
from engine.haendler.decision import Decision

Station = Callable[[Ctx, S, list[Event]], bool]


def open_decision(s: S, d: Decision, seats: Sequence[int], **extra: object) -> bool:
    s["pending"] = {"kind": d.kind, "seats": list(seats), "sealed": d.sealed, **extra}
    return True


def goto(s: S, station: str, i: int = 0, **extra: object) -> bool:
    s["at"] = {"st": station, "i": i, **extra}
    return False


def walk_turn(s: S) -> Iterator[int]:
    """Seats in turn order from the cursor on; the cursor moves past each seat yielded,
    so a station that opens a decision for a seat resumes after it next time."""
    order = turn_order(s)
    while s["at"]["i"] < len(order):
        s["at"]["i"] += 1
        yield order[s["at"]["i"] - 1]


def advance(ctx: Ctx, s: S, ev: list[Event]) -> None:
    s["pending"] = None
    while not s["over"]:
        if STATIONS[s["at"]["st"]](ctx, s, ev):
            return


# -- setup: the ability-card auction (H-34) -------------------------------------------------
def _auction(ctx: Ctx, s: S, ev: list[Event]) -> bool:
    a = s["auction"]
    n = s["seats"]
    if a is None:
        chooser = next((p for p in turn_order(s) if len(s["players"][p]["abilities"]) < 2), None)
        if chooser is None:
            if s["pool"]:
                ev.append(event("abilities_removed", cards=list(s["pool"])))
            s["pool"] = []
            return goto(s, "buy", 0, buy_pass=1)
        if not abilities.affordable(ctx, s, chooser):
            abilities.forced_take(ctx, s, chooser, ev)
            return False
        return open_decision(s, abilities.NAME, [chooser])
    for k in range(n):
        p = (a["next"] + k) % n
        if p != a["bidder"] and p not in a["passed"] and len(s["players"][p]["abilities"]) < 2:
            return open_decision(s, abilities.BID, [p])
    abilities.take_card(s, a["bidder"], a["card"], a["high"], ev)
    return False


# -- phase 1 ---------------------------------------------------------------------------
def _buy(ctx: Ctx, s: S, ev: list[Event]) -> bool:
    for p in walk_turn(s):
        return open_decision(s, BUY, [p])
    if s["round"] == 1 and s["at"]["buy_pass"] == 1:
        return goto(s, "buy", 0, buy_pass=2)
    return goto(s, "carts", 0, sub="bid")


# -- phase 2 ---------------------------------------------------------------------------
def _carts(ctx: Ctx, s: S, ev: list[Event]) -> bool:
    at = s["at"]
    if at["i"] >= len(s["carts"]):
        s["tariffs"] = {}
        return goto(s, "achsbruch")
    number = at["i"] + 1
    cart = s["carts"][at["i"]]
    if not ctx.board.is_city(cart["at"]):
        return goto(s, "carts", at["i"] + 1, sub="bid")
    if at["sub"] == "bid":
        at["sub"] = "master"
        if cart["master"] is None:
            return open_decision(s, carts.BID, turn_order(s), cart=number)
    if at["sub"] == "master":
        at["sub"] = "load"
        return open_decision(s, carts.MASTER, [cart["master"]], cart=number)
    goto(s, "carts", at["i"] + 1, sub="bid")
    seats = carts.load_eligible(ctx, s, cart)
    if seats:
        return open_decision(s, carts.LOAD, seats, cart=number)
    return False


# -- phase 3 ---------------------------------------------------------------------------
def _achsbruch(ctx: Ctx, s: S, ev: list[Event]) -> bool:
    goto(s, "move")
    if s["options"]["light"] or all_played(ctx, s, moving.ACHSBRUCH):
        return False
    seats = [p for p in turn_order(s) if hand_size(s, p)]
    return bool(seats) and open_decision(s, moving.ACHSBRUCH_WINDOW, seats)


def _move(ctx: Ctx, s: S, ev: list[Event]) -> bool:
    for p in walk_turn(s):
        return open_decision(s, moving.MOVE, [p])
    moving.end_of_phase(ctx, s, ev)
    return goto(s, "wheel")


# -- phase 4 ---------------------------------------------------------------------------
def _wheel(ctx: Ctx, s: S, ev: list[Event]) -> bool:
    goto(s, "kontor")
    return open_decision(s, prices.WHEEL, turn_order(s))


def _kontor(ctx: Ctx, s: S, ev: list[Event]) -> bool:
    for p in walk_turn(s):
        if prices.kontor_cards(ctx, s, p):
            return open_decision(s, prices.KONTOR, [p])
    return goto(s, "sales")


def _sales(ctx: Ctx, s: S, ev: list[Event]) -> bool:
    goto(s, "bonus")
    sonder = not all_played(ctx, s, prices.SONDER)
    seats = [p for p in turn_order(s) if has(s, p, "lagerverkauf") or (sonder and hand_size(s, p))]
    return bool(seats) and open_decision(s, prices.SALES, seats)


# -- phase 5 ---------------------------------------------------------------------------
def _bonus(ctx: Ctx, s: S, ev: list[Event]) -> bool:
    goto(s, "sell")
    selling.advance_track(ctx, s, ev)
    seats = selling.bonus_eligible(ctx, s)
    return bool(seats) and open_decision(s, selling.BONUS, seats)


def _sell(ctx: Ctx, s: S, ev: list[Event]) -> bool:
    selling.sell_and_update(ctx, s, ev)
    return goto(s, "upkeep")


# -- phase 6 ---------------------------------------------------------------------------
def _upkeep(ctx: Ctx, s: S, ev: list[Event]) -> bool:
    for p in walk_turn(s):
        if status.pay_upkeep(ctx, s, p, ev) and s["credit_supply"] > 0:
            return open_decision(s, status.CREDIT, [p])
    return goto(s, "advance")


def _advance(ctx: Ctx, s: S, ev: list[Event]) -> bool:
    for p in walk_turn(s):
        if s["players"][p]["level"] < ctx.board.top_level:
            return open_decision(s, status.ADVANCE, [p])
    if s["last_round"]:
        s["over"] = True
        ev.append(event("game_over", ranking=status.ranking(s),
                        money={str(p): pl["money"] for p, pl in enumerate(s["players"])},
                        hands={str(p): pl["hand"] for p, pl in enumerate(s["players"])}))  # fmt: skip
        return True
    s["start"] = (s["start"] + 1) % s["seats"]
    s["round"] += 1
    ev.append(event("round_started", round=s["round"], start=s["start"]))
    return goto(s, "buy", 0, buy_pass=1)


STATIONS: dict[str, Station] = {
    "auction": _auction,
    "buy": _buy,
    "carts": _carts,
    "achsbruch": _achsbruch,
    "move": _move,
    "wheel": _wheel,
    "kontor": _kontor,
    "sales": _sales,
    "bonus": _bonus,
    "sell": _sell,
    "upkeep": _upkeep,
    "advance": _advance,
}
