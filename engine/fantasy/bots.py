"""Bots for Fantasy Business. They see only their request (with its choices) and their
seat's view, and every order is one `validate` accepts: it passes `validate`
(`first_legal`) before it is used, or, for the random bot's plain bids, openings and
selections, it is legal as built (`_LEGAL_AS_BUILT`).

* `random`: a random legal order; plays specials now and then.
* `trader`: values items by base value, the rounds left and its holdings; bids up to that
  value, prices high as a sole seller and at base against competition, and plays its
  specials with sensible targets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.core.bots import Dice, first_legal
from engine.core.errors import IllegalOrder
from engine.core.game import Game, Order, Request, State
from engine.fantasy.components import kind_of
from engine.fantasy.state import C


def _instants(dice: Dice, ch: dict[str, Any], opponents: list[int], p: float) -> list[dict[str, Any]]:
    out = []
    for card in ch.get("instants", []):
        if dice.chance(p):
            out.append({"card": card, "target": dice.pick(opponents)} if kind_of(card) == "DS" else {"card": card})
    return out


def _play_for(card: str, ch: dict[str, Any], dice: Dice, seat: int) -> dict[str, Any] | None:
    kind = kind_of(card)
    opp = ch.get("opponents", [])
    if kind in ("MC", "FB", "SP"):
        return {"card": card}
    if kind == "ND":
        return {"card": card, "target": dice.pick(opp)}
    if kind == "AL":
        cands = ch.get("antitrust", [])
        return {"card": card, "target": cands[0][0], "type": cands[0][1]} if cands else None
    if kind in ("DI", "ST", "TR"):
        # every opponent's item card, seat by seat, with its owner
        items = [(int(k), c) for k, v in ch.get("opponent_items", {}).items() for c in v]
        if kind == "TR":
            own = ch.get("own_items", [])
            if not (own and items):
                return None
            give = dice.pick(own)
            x, item = dice.pick(items)
            return {"card": card, "give": give, "target": x, "item": item}
        if not items:
            return None
        x, item = dice.pick(items)
        return {"card": card, "target": x, "item": item}
    if kind == "OS":
        return {"card": card, "type": dice.pick(ch.get("types", list(C.types)))}
    if kind == "BC":
        cands = [(int(k), t) for k, v in ch.get("owned_types", {}).items() for t in v]
        if not cands:
            return None
        x, t = dice.pick(cands)
        return {"card": card, "target": x, "type": t}
    if kind == "RA":
        return {"card": card, "target": dice.pick(opp), "trigger": dice.pick([*opp, seat])}
    return None


class RandomBot:
    def __init__(self, seed: int | str) -> None:
        self.dice = Dice(seed)

    def order(self, game: Game, state: State, request: Request) -> Order:
        d = self.dice
        ch = request.choices
        kind = request.kind
        o: Order
        if kind == "bid":  # `_random_bid`, written out: most orders are bids
            high = ch["high"]
            o = {"bid": high + 1} if d.chance(0.3) and ch["crowns"] > high else {"bid": None}
            if "instants" not in ch and "can_propose" not in ch and "bid" in _LEGAL_AS_BUILT:
                return o  # legal as built: no `validate` call
        elif kind in _RANDOM_MAIN:
            o = _RANDOM_MAIN[kind](d, ch, request.seat, kind)
            if kind in _LEGAL_AS_BUILT and "instants" not in ch and "can_propose" not in ch \
                    and "preempt" not in o and not o.get("play"):
                return o  # legal as built: no `validate` call
        else:
            o = {}
        seat = request.seat
        if "instants" in ch:
            opponents = [p for p in range(state["seats"]) if p != seat]
            inst = _instants(d, ch, opponents, 0.3)
            if inst:
                o = {**o, "instants": inst}
        if "can_propose" in ch and d.chance(0.05):
            opponents = [p for p in range(state["seats"]) if p != seat]
            o = {**o, "propose": self._proposal(d, game, state, seat, opponents)}
            # Without the proposal if that is what `validate` refuses.
            return first_legal(game, state, seat, (o, {k: v for k, v in o.items() if k != "propose"}))
        try:  # `first_legal(game, state, seat, (o,))`, written out: a bot orders on every step
            game.validate(state, seat, o)
        except IllegalOrder:
            return game.default_order(state, seat)
        return o

    def _proposal(self, d: Dice, game: Game, state: State, seat: int, opponents: list[int]) -> dict[str, Any]:
        view = game.view(state, seat)
        to = d.pick(opponents)
        theirs = view["players"][to]["items"]
        if view["players"][to]["hand_size"] and d.chance(0.2):
            return {"to": to, "give": {"crowns": 1 + d.below(3)}, "get": {"specials": 1}}
        if theirs and d.chance(0.7):
            return {"to": to, "give": {"crowns": d.below(4)}, "get": {"items": [d.pick(theirs)]}}
        mine = view["players"][seat]["items"]
        return {"to": to, "give": {"items": [d.pick(mine)]} if mine else {"crowns": 1}, "get": {"crowns": d.below(5)}}



# -- the random bot's main order, by kind ---------------------------------------------------
#: The kinds whose main order the random bot builds legal from its request's choices alone,
#: so that `validate` would accept it as it is, when it carries no instants or proposal, no
#: pre-emption (a selection) and no play (a window): a pass; a bid from the minimum (an
#: opening, a selection) or above the high bid (a raise) up to the seat's crowns, at a
#: displayed position; a lone take the seat can pay; a sheet pricing exactly the types
#: the choices list, each within its range. The bot returns those without the `validate`
#: call; `tests/engine/fantasy/test_fast_paths.py` checks every such order of many games
#: against `validate`, and whole games against the bot that validates every order.
_LEGAL_AS_BUILT = frozenset({"bid", "open", "select", "lone", "price", "spy", "w_open", "w_close", "w_spy",
                             "w_reveal"})


def _random_window(d: Dice, ch: dict[str, Any], seat: int, kind: str) -> Order:
    plays: list[dict[str, Any]] = []
    for card in ch.get("playable", []):
        if d.chance(0.45):
            play = _play_for(card, ch, d, seat)
            if play is not None:
                plays.append(play)
                if kind == "w_spy":
                    break
    return {"play": plays}


def _random_select(d: Dice, ch: dict[str, Any], seat: int, kind: str) -> Order:
    positions = ch["positions"]
    pos = positions[d.below(len(positions))]  # `d.pick(positions)`, without the call
    if ch.get("preempt") and d.chance(0.5):
        return {"pos": pos["pos"], "preempt": True}
    if d.chance(0.6) and ch["crowns"] >= pos["min"]:
        return {"pos": pos["pos"], "bid": pos["min"] + d.below(min(3, ch["crowns"] - pos["min"] + 1))}
    return {"pos": pos["pos"], "bid": None}


def _random_open(d: Dice, ch: dict[str, Any], seat: int, kind: str) -> Order:
    if d.chance(0.4) and ch["crowns"] >= ch["min"]:
        return {"bid": ch["min"]}
    return {"bid": None}


def _random_bid(d: Dice, ch: dict[str, Any], seat: int, kind: str) -> Order:
    if d.chance(0.3) and ch["crowns"] > ch["high"]:
        return {"bid": ch["high"] + 1}
    return {"bid": None}


def _random_lone(d: Dice, ch: dict[str, Any], seat: int, kind: str) -> Order:
    cands = [p for p in ch["positions"] if p["min"] <= ch["crowns"]]
    return {"take": d.pick(cands)["pos"]} if cands and d.chance(0.6) else {"take": None}


def _random_prices(d: Dice, ch: dict[str, Any], seat: int, kind: str) -> Order:
    if kind == "spy" and d.chance(0.5):
        return {"prices": None}
    return {"prices": {t: lo + d.below(hi - lo + 1) for t, (lo, hi) in ch["types"].items()}}


def _random_accept(d: Dice, ch: dict[str, Any], seat: int, kind: str) -> Order:
    n = ch["proposal"]["get"]["specials"]
    if n and d.chance(0.5) and len(ch["hand"]) >= n:
        return {"accept": True, "specials": ch["hand"][:n]}
    return {"accept": d.chance(0.5)}


_RANDOM_MAIN: dict[str, Callable[[Dice, dict[str, Any], int, str], Order]] = {
    "w_open": _random_window, "w_close": _random_window, "w_spy": _random_window, "w_reveal": _random_window,
    "select": _random_select, "open": _random_open, "bid": _random_bid, "lone": _random_lone,
    "price": _random_prices, "spy": _random_prices, "accept": _random_accept,
}


class TraderBot:
    """Values items by base value, rounds left and holdings; plays its specials."""

    def __init__(self, seed: int | str) -> None:
        self.dice = Dice(seed)

    def value(self, view: dict[str, Any], seat: int, card: str | None) -> int:
        left = max(1, view["rounds"] - view["round"] + 1)
        if card is None:
            return 2 + (1 if left > 3 else 0)
        t = kind_of(card)
        base = C.base[t]
        mine = sum(1 for c in view["players"][seat]["items"] if kind_of(c) == t)
        others = sum(1 for i, p in enumerate(view["players"]) if i != seat for c in p["items"] if kind_of(c) == t)
        per_round = base + 2 if others == 0 else base // 2
        if mine and not others:
            per_round += 1
        return int(base + min(left - 1, 4) * per_round // 2)

    def order(self, game: Game, state: State, request: Request) -> Order:
        ch, seat, kind = request.choices, request.seat, request.kind
        view = game.view(state, seat)
        opponents = [p for p in range(state["seats"]) if p != seat]
        o = self._main(view, ch, seat, kind, opponents)
        inst = [({"card": c} if kind_of(c) == "SU" else {"card": c, "target": self._richest(view, opponents)})
                for c in ch.get("instants", [])]
        if inst:
            o = {**o, "instants": inst}
        return first_legal(game, state, seat, [o, {k: v for k, v in o.items() if k != "instants"}])

    def _richest(self, view: dict[str, Any], opponents: list[int]) -> int:
        players = view["players"]
        return int(max(opponents, key=lambda p: (len(players[p]["items"]), players[p]["hand_size"], -p)))

    def _main(self, view: dict[str, Any], ch: dict[str, Any], seat: int, kind: str, opponents: list[int]) -> Order:
        crowns = view["players"][seat]["crowns"]
        if kind == "select":
            best = max(ch["positions"], key=lambda p: (self.value(view, seat, p["card"]) - p["min"], -p["pos"]))
            if ch.get("preempt") and crowns >= best["min"]:
                return {"pos": best["pos"], "preempt": True}
            if self.value(view, seat, best["card"]) >= best["min"] and crowns >= best["min"]:
                return {"pos": best["pos"], "bid": best["min"]}
            return {"pos": best["pos"], "bid": None}
        if kind == "open":
            ok = self.value(view, seat, ch["card"]) >= ch["min"] and crowns >= ch["min"]
            return {"bid": ch["min"] if ok else None}
        if kind == "bid":
            q = ch["high"] + 1
            return {"bid": q if q <= min(crowns, self.value(view, seat, ch["card"])) else None}
        if kind == "lone":
            cands = [p for p in ch["positions"] if p["min"] <= crowns]
            if not cands:
                return {"take": None}
            return {"take": max(cands, key=lambda p: (self.value(view, seat, p["card"]) - p["min"], -p["pos"]))["pos"]}
        if kind in ("price", "spy"):
            sheets = ch.get("sheets", {})
            out = {}
            for t, (lo, hi) in ch["types"].items():
                others = [i for i in opponents if any(kind_of(c) == t for c in view["players"][i]["items"])]
                if not others:
                    out[t] = hi
                elif sheets:
                    theirs = [sh[t] for k, sh in sheets.items() if int(k) != seat and t in sh]
                    out[t] = max(lo, min(theirs) - 1) if theirs else lo
                else:
                    out[t] = lo
            return {"prices": out}
        if kind == "accept":
            prop = ch["proposal"]
            gain = prop["give"]["crowns"] - prop["get"]["crowns"] + 3 * (prop["give"]["specials"]
                                                                          - prop["get"]["specials"])
            gain += sum(C.base[kind_of(c)] for c in prop["give"]["items"])
            gain -= sum(C.base[kind_of(c)] for c in prop["get"]["items"])
            n = prop["get"]["specials"]
            if n:
                return {"accept": gain > 0 and len(ch["hand"]) >= n, "specials": ch["hand"][:n]}
            return {"accept": gain > 0}
        if kind.startswith("w_"):
            return {"play": self._plays(view, ch, seat, kind, opponents)}
        return {}

    def _plays(self, view: dict[str, Any], ch: dict[str, Any], seat: int, kind: str,
               opponents: list[int]) -> list[dict[str, Any]]:
        plays: list[dict[str, Any]] = []
        items = [(int(k), c) for k, v in ch.get("opponent_items", {}).items() for c in v]
        best_items = sorted(items, key=lambda x: (-C.base[kind_of(x[1])], x[1]))
        taken: set[str] = set()
        for card in ch.get("playable", []):
            k = kind_of(card)
            if k in ("FB", "SP"):
                plays.append({"card": card})
            elif k == "MC" and len(view["players"][seat]["items"]) > 3:
                plays.append({"card": card})
            elif k == "ND":
                plays.append({"card": card, "target": self._richest(view, opponents)})
            elif k == "AL" and ch.get("antitrust"):
                x, t = ch["antitrust"][0]
                plays.append({"card": card, "target": x, "type": t})
            elif k in ("DI", "ST", "TR"):
                free = [x for x in best_items if x[1] not in taken]
                if not free:
                    continue
                if k == "TR":
                    own = sorted(ch.get("own_items", []), key=lambda c: (C.base[kind_of(c)], c))
                    if own and C.base[kind_of(own[0])] < C.base[kind_of(free[0][1])]:
                        plays.append({"card": card, "give": own[0], "target": free[0][0], "item": free[0][1]})
                        taken.add(free[0][1])
                    continue
                plays.append({"card": card, "target": free[0][0], "item": free[0][1]})
                taken.add(free[0][1])
            elif k == "OS":
                mine = {kind_of(c) for c in view["players"][seat]["items"]}
                theirs = [t for t in C.types if t not in mine
                          and any(kind_of(c) == t for p in opponents for c in view["players"][p]["items"])]
                if theirs:
                    plays.append({"card": card, "type": max(theirs, key=lambda t: (C.base[t], t))})
            elif k == "BC":
                cands = [(int(x), t) for x, ts in ch.get("owned_types", {}).items() for t in ts]
                if cands:
                    x, t = max(cands, key=lambda c: (C.base[c[1]], -c[0]))
                    plays.append({"card": card, "target": x, "type": t})
            elif k == "RA":
                x = self._richest(view, opponents)
                plays.append({"card": card, "target": x, "trigger": x})
        return plays


BOTS = {"random": RandomBot, "trader": TraderBot}
