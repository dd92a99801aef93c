"""The special-card windows (R3): W-OPEN (O1–O6), W-CLOSE (O19–O23), W-SPY (P4) and
W-REVEAL (P6), and the instants Divination Spell and Subsidies (FD12).

Every window asks **every** seat holding any special card when it opens (R3, R25), and a
pass (`{"play": []}`) is the default, so being asked reveals nothing about what a seat
holds. A window's plays are sealed and revealed together when it closes (§4).

An instant rides on any order at any decision point (`"instants": [...]`): it is applied
before the order's main action, so crowns from Subsidies can pay for the bid in the same
order (FB-13).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.core.events import Event, event
from engine.fantasy.components import kind_of
from engine.fantasy.decision import Decision, Order, Wallet
from engine.fantasy.specials import KINDS
from engine.fantasy.specials.antitrust import monopolies
from engine.fantasy.state import (
    C,
    S,
    add_hand,
    drop_hand,
    fail,
    holds_types,
    order_from,
    owner_of,
)

WINDOW_KINDS = {w: tuple(k for k, kind in KINDS.items() if kind.window == w)
                for w in ("open", "close", "spy", "reveal", "instant")}


# -- checking plays ---------------------------------------------------------------------
def check_plays(s: S, seat: int, plays: Any, window: str, hand: Sequence[str], key: str = "play") -> list[str]:
    """Each play names a card in `hand` of this window's kinds, with valid targets (FD6)."""
    # `need(...)` written out: the messages are built only for a refusal.
    if not isinstance(plays, list):
        fail("malformed_order", f"{key} is a list of card plays")
    used: list[str] = []
    for i, play in enumerate(plays):
        if not isinstance(play, dict):
            fail("malformed_order", f"{key}[{i}] is an object with a card")
        card = play.get("card")
        if not (isinstance(card, str) and card in hand and card not in used):
            fail("no_such_card", f"{key}[{i}]: you do not hold {card!r}, or name it twice")
        kind = KINDS[kind_of(card)]
        if kind.window != window:
            fail("no_such_card", f"{key}[{i}]: {C.special_names[kind.id]} is not played {_window_words(window)}")
        if not play.keys() <= kind.keys:
            extra = sorted(set(play) - kind.keys)
            fail("malformed_order", f"{key}[{i}]: {C.special_names[kind.id]} takes "
                 f"{', '.join(kind.fields) or 'no target'}, not {', '.join(extra)}")
        kind.check(s, seat, play)
        used.append(card)
    return used


def _window_words(window: str) -> str:
    return {"open": "as the offer begins", "close": "as the offer ends", "spy": "in the Spy window",
            "reveal": "before the price sheets are revealed", "instant": "as an instant"}[window]


def check_instants(s: S, seat: int, order: Order) -> Wallet:
    """The seat's wallet after the instants its order carries (FD12)."""
    p = s["players"][seat]
    if "instants" not in order:
        return {"crowns": p["crowns"], "hand": tuple(p["hand"])}
    used = check_plays(s, seat, order["instants"], "instant", tuple(p["hand"]), "instants")
    gain = C.subsidies_amount * sum(1 for c in used if kind_of(c) == "SU")
    return {"crowns": p["crowns"] + gain, "hand": tuple(c for c in p["hand"] if c not in used)}


def apply_instants(s: S, seat: int, plays: list[dict[str, Any]], ev: list[Event]) -> None:
    for play in plays:
        card = play["card"]
        drop_hand(s, seat, [card])
        s["discard"] = [*s["discard"], card]
        ev.append(event("played", seat=seat, card=card, window="instant", play={"seat": seat, **play}))
        KINDS[kind_of(card)].effect(s, seat, play, ev)  # type: ignore[misc]


# -- the window decisions ----------------------------------------------------------------------
#: The cards of each window's kinds (a hand holds only cards of the deck).
_PLAYABLE = {w: frozenset(c for c in C.deck if kind_of(c) in kinds) for w, kinds in WINDOW_KINDS.items()}


#: OTHERS[n][seat]: (key, seat) of every other seat of n, in seat order (choices' object keys).
OTHERS = tuple(tuple(tuple((str(p), p) for p in range(n) if p != seat) for seat in range(n)) for n in range(9))
#: The same as two tuples: OTHER_KEYS[n][seat] (the keys) and OTHER_SEATS[n][seat] (the seats).
OTHER_KEYS = tuple(tuple(tuple(k for k, p in others) for others in per_n) for per_n in OTHERS)
OTHER_SEATS = tuple(tuple(tuple(p for k, p in others) for others in per_n) for per_n in OTHERS)
_copy = list.copy


def _close_shared(s: S) -> tuple[list[list[str]], list[list[Any]]]:
    """W-CLOSE's public targets, once for every asked seat: each seat's items, the monopolies."""
    return [p["items"] for p in s["players"]], monopolies(s)


def _reveal_shared(s: S) -> list[list[str]]:
    """W-REVEAL's public targets, once for every asked seat: the types each seat owns."""
    return [holds_types(s, p) for p in range(s["seats"])]


def _choices(window: str) -> Any:
    cards = _PLAYABLE[window]

    def choices(s: S, seat: int, shared: Any) -> dict[str, Any]:
        n = s["seats"]
        out: dict[str, Any] = {"window": window, "playable": [c for c in s["players"][seat]["hand"] if c in cards],
                               "opponents": list(OTHER_SEATS[n][seat])}  # every seat but `seat`
        if window == "close":
            items, monos = shared
            # {key: a copy of that seat's items} for every other seat, built in C
            others = OTHER_SEATS[n][seat]
            out["opponent_items"] = dict(zip(OTHER_KEYS[n][seat], map(_copy, map(items.__getitem__, others)),
                                             strict=True))
            out["own_items"] = items[seat].copy()
            out["antitrust"] = [m.copy() for m in monos if m[0] != seat]
        elif window == "reveal":
            out["types"] = list(C.types)
            others = OTHER_SEATS[n][seat]
            out["owned_types"] = dict(zip(OTHER_KEYS[n][seat], map(_copy, map(shared.__getitem__, others)),
                                          strict=True))
        return out

    return choices


def _check(window: str) -> Any:
    def check(s: S, seat: int, o: Order, w: Wallet) -> None:
        plays = o.get("play", [])
        used = check_plays(s, seat, plays, window, w["hand"])
        if window == "spy" and len(used) > 1:
            fail("one_spy", "you may play at most one Spy in this window (R13)")

    return check


def _gather(s: S, orders: dict[int, Order]) -> list[dict[str, Any]]:
    """O21: player by player in turn order from the AFB, each in listed order."""
    out = []
    for seat in order_from(s, s["afb"]):
        o = orders.get(seat)
        if o is not None:
            plays = o.get("play")
            if plays:
                for play in plays:
                    out.append({"seat": seat, **play})
    return out


def _spend(s: S, play: dict[str, Any], ev: list[Event], window: str) -> None:
    s["discard"] = [*s["discard"], play["card"]]
    ev.append(event("played", seat=play["seat"], card=play["card"], window=window, play=play))


def _return(s: S, play: dict[str, Any], ev: list[Event], why: str) -> None:
    add_hand(s, play["seat"], [play["card"]])
    ev.append(event("returned", seat=play["seat"], card=play["card"], why=why))


def _open_apply(s: S, orders: dict[int, Order], ev: list[Event]) -> None:
    plays = _gather(s, orders)
    for p in plays:
        drop_hand(s, p["seat"], [p["card"]])
    ev.append(event("window_closed", window="open", plays=plays))
    s["at"] = "reveal"
    if any(kind_of(p["card"]) == "MC" for p in plays):  # O2
        for p in plays:
            if kind_of(p["card"]) == "MC":
                _spend(s, p, ev, "open")
            else:
                _return(s, p, ev, "market_closed")
        s["offer"] = {**s["offer"], "closed": True}
        s["at"] = "w_close"
        return
    fb_done = False
    for p in plays:  # O3
        if kind_of(p["card"]) == "FB":
            if fb_done:
                _return(s, p, ev, "second_first_buyer")
                continue
            fb_done = True
            _spend(s, p, ev, "open")
            s["afb"] = p["seat"]
            s["offer"] = {**s["offer"], "preempt": p["seat"]}
    for p in plays:  # O4
        if kind_of(p["card"]) == "ND":
            _spend(s, p, ev, "open")
            s["offer"] = {**s["offer"], "nd": [*s["offer"]["nd"], p["target"]]}


def _close_apply(s: S, orders: dict[int, Order], ev: list[Event]) -> None:
    plays = _gather(s, orders)
    for p in plays:
        drop_hand(s, p["seat"], [p["card"]])
        if "item" in p:
            p["owner"] = owner_of(s, p["item"])
    ev.append(event("window_closed", window="close", plays=plays))
    s["queue"] = plays
    s["at"] = "queue"


def run_queue(s: S, ev: list[Event]) -> None:
    """O21–O22: resolve the W-CLOSE plays one by one; an Antitrust auction interrupts."""
    while s["queue"]:
        play, s["queue"] = s["queue"][0], s["queue"][1:]
        if "item" in play and owner_of(s, play["item"]) != play["owner"]:  # R12, R16
            _return(s, play, ev, "target_moved")
            continue
        kind = KINDS[kind_of(play["card"])]
        body = {k: v for k, v in play.items() if k not in ("seat", "owner")}
        mark = len(ev)
        if not kind.effect(s, play["seat"], {**body, "owner": play.get("owner")}, ev):  # type: ignore[misc]
            _return(s, play, ev, "invalid")
            continue
        s["discard"] = [*s["discard"], play["card"]]
        ev.insert(mark, event("played", seat=play["seat"], card=play["card"], window="close", play=play))
        if s["auction"] is not None:
            return
    s["at"] = "prices"


def _spy_apply(s: S, orders: dict[int, Order], ev: list[Event]) -> None:
    plays = _gather(s, orders)
    ev.append(event("window_closed", window="spy", plays=plays))
    for p in plays:
        drop_hand(s, p["seat"], [p["card"]])
        _spend(s, p, ev, "spy")
        KINDS["SP"].effect(s, p["seat"], p, ev)  # type: ignore[misc]
    s["at"] = "spy"


def _reveal_apply(s: S, orders: dict[int, Order], ev: list[Event]) -> None:
    plays = _gather(s, orders)
    ev.append(event("window_closed", window="reveal", plays=plays))
    for p in plays:
        drop_hand(s, p["seat"], [p["card"]])
        _spend(s, p, ev, "reveal")
        body = {k: v for k, v in p.items() if k != "seat"}
        KINDS[kind_of(p["card"])].effect(s, p["seat"], body, ev)  # type: ignore[misc]
    s["at"] = "income"


def _decision(window: str, rule: str, apply: Any, shared: Any = None) -> Decision:
    return Decision(f"w_{window}", rule, True, ("play",), _choices(window), _check(window), apply,
                    lambda s, seat: {"play": []}, shared)


W_OPEN = _decision("open", "D-W-OPEN", _open_apply)
W_CLOSE = _decision("close", "D-W-CLOSE", _close_apply, _close_shared)
W_SPY = _decision("spy", "D-W-SPY", _spy_apply)
W_REVEAL = _decision("reveal", "D-W-REVEAL", _reveal_apply, _reveal_shared)
