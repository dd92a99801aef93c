"""Auf Achse bots: `random` (a random legal order) and `planner` (heads for its orders'
cities, picks and bids for public orders that pay well).

Both see only their seat's request and view (public facts plus their own hand), and
keep an order only when `validate` accepts it (`first_legal`), falling back to the
default order. The random bot builds only the parts of its view it reads, and only when
a decision needs them, and takes the game's default order (always legal) unchecked.
"""

from __future__ import annotations

from typing import Any

from engine.aufachse import defaults
from engine.aufachse.context import capacity, ctx_of, load
from engine.aufachse.movement import Mover, values
from engine.core.bots import Dice, first_legal
from engine.core.errors import IllegalOrder
from engine.core.game import Game, Order, Request, State
from engine.core.info import Fields, Information, Part, Seats, strip


class _View:
    """What a bot may look at for one request, each part built on first use (most random
    decisions need only the request's choices): the seat's view, the data set, and the
    default order."""

    __slots__ = ("game", "state", "seat", "_view", "last_default")

    def __init__(self, game: Game, state: State, seat: int) -> None:
        self.game, self.state, self.seat = game, state, seat
        self._view: dict[str, Any] | None = None
        #: The default order last returned by `default`.
        self.last_default: Order | None = None

    #: The parts of a view the random bot reads, and the fields of a seat's entry it reads.
    READS = ("over", "options", "players", "display", "roadworks", "jam")
    SEAT_READS = ("hand", "open", "loaded", "trailers", "at")

    @property
    def view(self) -> dict[str, Any]:
        """The seat's view (`engine.core.info.strip` of the title's declaration), of the
        parts in `READS` only, and of the seats' entries the fields in `SEAT_READS`
        only (`reads`): the whole view costs more than the rest of a decision. It shares
        the state's values (`share`): the bots only read it."""
        if self._view is None:
            self._view = strip(reads(self.game.information), self.state, self.seat, share=True)
        return self._view

    @property
    def ctx(self) -> Any:
        return ctx_of(self.state)  # the data set is public (`data_key`)

    def default(self) -> Order:
        """The default order (rules §18): built from this seat's view only, so the game
        may be asked for it directly."""
        self.last_default = self.game.default_order(self.state, self.seat)
        return self.last_default


def reads(info: Information) -> Information:
    """The title's declaration `info` cut to the parts the random bot reads (`_View.READS`,
    and of each seat's entry `_View.SEAT_READS`): an allow-list of declared parts, as
    declared (remembered per declaration)."""
    found = _READS.get(id(info))
    if found is None or found[0] is not info:
        fields: dict[str, Part] = {}
        for key, part in info.fields.items():
            if key not in _View.READS:
                continue
            if isinstance(part, Seats) and isinstance(part.each, Fields):
                part = Seats(Fields({k: p for k, p in part.each.fields.items() if k in _View.SEAT_READS}))
            fields[key] = part
        found = _READS[id(info)] = (info, Information(fields, info.is_over))
    return found[1]


_READS: dict[int, tuple[Information, Information]] = {}


#: Decision kind -> the name of the random bot's method that makes its order.
_MAKER = {kind: f"_{kind}" for kind in ("place", "move", "arrive", "bid", "load_won", "event_space", "shortcut")}


class RandomBot:
    """Random legal orders; half of its moves are the default move, so games end."""

    def __init__(self, seed: int | str) -> None:
        self.dice = Dice(seed)

    def order(self, game: Game, state: State, request: Request) -> Order:
        make = getattr(self, _MAKER[request.kind])
        look = _View(game, state, request.seat)
        # `first_legal`, except that the game's default order is taken as it comes: it is
        # always legal (the contract; `first_legal` falls back to it unchecked too)
        for _ in range(2):
            order: Order = make(look, request)
            if order is look.last_default:
                return order
            try:
                game.validate(state, request.seat, order)
            except IllegalOrder:
                continue
            return order
        return game.default_order(state, request.seat)

    def _place(self, look: _View, r: Request) -> Order:
        return {"space": self.dice.pick(list(look.ctx.board.cities))}

    def _loads(self, ctx: Any, pl: dict[str, Any], city: str) -> list[str]:
        room = capacity(ctx, pl) - load(ctx, pl)
        out = []
        for c in list(pl.get("hand") or []) + list(pl["open"]):
            o = ctx.orders[c]
            if o.start == city and o.goods <= room and self.dice.chance(0.9):
                out.append(c)
                room -= o.goods
        return out

    def _move(self, look: _View, r: Request) -> Order:
        if self.dice.chance(0.5):
            return look.default()
        ctx, view = look.ctx, look.view
        seat = r.seat
        pl = view["players"][seat]
        vals = values(r.choices["dice"])
        die, n = vals[self.dice.below(len(vals))]  # `self.dice.pick(vals)`
        m = Mover(ctx, view, seat)
        # `self.dice.pick(list(m.paths(n)))`, read off the bit set of the legal moves
        legal, wait = m.legal(n), m.can_wait()
        count = wait + legal.bit_count()
        if not count:
            return look.default()
        i = self.dice.below(count) - wait
        if i < 0:
            path = []
        else:
            for _ in range(i):
                legal &= legal - 1  # drop the lowest legal entry
            path = list(ctx.board.move_table(m.start, n).paths[(legal & -legal).bit_length() - 1])
        order: dict[str, Any] = {"die": die, "n": n, "path": path}
        end = path[-1] if path else pl["at"]
        if n == 1:
            from engine.aufachse.effects import roadworks_targets_at

            order["roadworks"] = self.dice.pick(roadworks_targets_at(ctx, view, end))
        if path and ctx.board.is_city(end) and not r.choices["extra"]:
            part: dict[str, Any] = {}
            after = {**pl, "loaded": [c for c in pl["loaded"] if ctx.orders[c].dest != end], "at": end}
            loads = self._loads(ctx, after, end)
            if loads:
                part["load"] = loads
            if len(path) == n and view["display"] and not view["options"]["kids"]:
                if self.dice.chance(0.25):
                    part["pick"] = 1 + self.dice.below(len(view["display"]))
                else:
                    part["decline"] = True
            order["arrive"] = part
        return order

    def _arrive(self, look: _View, r: Request) -> Order:
        ctx, view = look.ctx, look.view
        pl = view["players"][r.seat]
        part: dict[str, Any] = {"load": self._loads(ctx, pl, pl["at"])}
        if r.choices["eligible"]:
            if self.dice.chance(0.25):
                part["pick"] = 1 + self.dice.below(len(view["display"]))
            else:
                part["decline"] = True
        return part

    def _bid(self, look: _View, r: Request) -> Order:
        allowed = r.choices["allowed"]
        if allowed and self.dice.chance(0.3):
            return {"bid": self.dice.pick(allowed[:2])}
        return {"pass": True}

    def _load_won(self, look: _View, r: Request) -> Order:
        return defaults.load_won(look.ctx, look.view, r.seat, {"card": r.choices["card"], "active": False})

    def _event_space(self, look: _View, r: Request) -> Order:
        return {"space": self.dice.pick(r.choices["spaces"])}

    def _shortcut(self, look: _View, r: Request) -> Order:
        cities = r.choices["cities"]
        if cities and self.dice.chance(0.7):
            return {"city": self.dice.pick(cities)}
        return {"decline": True}


class PlannerBot:
    """Drives toward its orders' cities (the §18 distance rule), loads whatever fits,
    picks a public order when it has little to do, and bids while the order still
    leaves a good margin and enough cash."""

    def __init__(self, seed: int | str) -> None:
        self.dice = Dice(seed)

    def order(self, game: Game, state: State, request: Request) -> Order:
        view = game.view(state, request.seat)
        ctx = ctx_of(view)
        seat = request.seat
        kind = request.kind
        cands: list[Order] = []
        if kind == "place":
            cands.append(defaults.place(ctx, view, seat))
        elif kind == "move":
            o = defaults.move(ctx, view, seat, bool(request.choices["extra"]))
            part = o.get("arrive")
            if part and part.get("decline"):
                j = self._want(ctx, view, seat)
                if j:
                    cands.append({**o, "arrive": {k: v for k, v in part.items() if k != "decline"} | {"pick": j}})
            self._trailer(ctx, view, seat, o, cands)
            cands.append(o)
        elif kind == "arrive":
            o = defaults.arrive(ctx, view, seat, {"eligible": request.choices["eligible"]})
            if o.get("decline"):
                j = self._want(ctx, view, seat)
                if j:
                    cands.append({k: v for k, v in o.items() if k != "decline"} | {"pick": j})
            cands.append(o)
        elif kind == "bid":
            cands.append(self._bid(ctx, view, seat, request.choices))
        elif kind == "load_won":
            cands.append(defaults.load_won(ctx, view, seat, {"card": request.choices["card"],
                                                             "active": request.choices["active"]}))
        elif kind == "event_space":
            spaces = request.choices["spaces"]
            cands.append({"space": self._hinder(ctx, view, seat, spaces)})
        else:
            cands.append(defaults.shortcut(ctx, view, seat, {"reach": request.choices["reach"]}))
        return first_legal(game, state, seat, cands)

    def _busy(self, view: dict[str, Any], seat: int) -> int:
        pl = view["players"][seat]
        return len(pl.get("hand") or []) + len(pl["open"]) + len(pl["loaded"])

    def _want(self, ctx: Any, view: dict[str, Any], seat: int) -> int | None:
        """The slot of the best-paying displayed order, if worth an auction."""
        if self._busy(view, seat) > 2:
            return None
        best = None
        for j, c in enumerate(view["display"], 1):
            o = ctx.orders[c]
            if o.pay - o.cost(1) >= 1200 and (best is None or o.pay > best[0]):
                best = (o.pay, j)
        return best[1] if best else None

    def _bid(self, ctx: Any, view: dict[str, Any], seat: int, ch: dict[str, Any]) -> Order:
        o = ctx.orders[ch["card"]]
        cash = view["players"][seat]["cash"]
        if self._busy(view, seat) > 3:
            return {"pass": True}
        for b in ch["allowed"]:
            if o.pay - o.cost(b) >= 1000 and cash - o.cost(b) >= 1000:
                return {"bid": b}
        return {"pass": True}

    def _trailer(self, ctx: Any, view: dict[str, Any], seat: int, o: Order, cands: list[Order]) -> None:
        """Buy a small trailer before the move when a hand order here does not fit."""
        pl = view["players"][seat]
        if view["options"]["kids"] or pl["cash"] < 4500 or view["supply"]["small"] <= 0:
            return
        room = capacity(ctx, pl) - load(ctx, pl)
        here = [c for c in list(pl.get("hand") or []) + list(pl["open"])
                if ctx.orders[c].start == pl["at"] and ctx.orders[c].goods > room
                and ctx.orders[c].goods <= room + 4 and c not in o.get("load", [])]
        if here and not o.get("load"):
            cands.append({**o, "trailers": [{"buy": "small"}], "load": [here[0]]})

    def _hinder(self, ctx: Any, view: dict[str, Any], seat: int, spaces: list[str]) -> Any:
        """Put a marker next to the richest other truck if allowed, else the first space."""
        others = sorted((p["cash"], -q) for q, p in enumerate(view["players"]) if q != seat)
        allowed = set(spaces)
        for _cash, negq in reversed(others):
            at = view["players"][-negq]["at"]
            for y in ctx.board.adj.get(at, ()):
                if y in allowed:
                    return y
        return spaces[0]


BOTS = {"random": RandomBot, "planner": PlannerBot}
