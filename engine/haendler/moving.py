"""Phase 3, moving carts and the messenger: D3-ACHSBRUCH and D3-MOVE (H-56 to H-77, R-8,
R-9, R-22 to R-27).

A movement turn is one order: keep/lift decisions for the seat's own Achsbruch cards,
then steps in sequence — optional messenger moves, exactly one tile step (a cart the
tile alone can move, plus optional Wagnerei points in one combined move; or a forfeit
when no eligible cart can move with the tile), then separate Wagnerei moves and the
remaining messenger moves. `Turn` replays the steps on a scratch copy of the positions,
so validation and resolution run the very same code.
"""

from __future__ import annotations

from typing import Any

from engine.core.errors import IllegalOrder
from engine.core.events import Event, event
from engine.haendler.context import Ctx, S, hand_add, need, own, play_card, private, shape, turn_order
from engine.haendler.decision import Decision, Order
from engine.haendler.describe import Words, join
from engine.haendler.free import Wallet
from engine.haendler.graph import cart_ends, messenger_ends

ACHSBRUCH = "achsbruch"


# -- D3-ACHSBRUCH -------------------------------------------------------------------------
def _ab_choices(ctx: Ctx, s: S, seat: int) -> dict[str, object]:
    cards = s["players"][seat]["hand"].get(ACHSBRUCH, 0)
    return {"cards": cards, "carts": list(range(1, len(s["carts"]) + 1))}


def _ab_check(ctx: Ctx, s: S, seat: int, order: Order, w: Wallet) -> None:
    carts = shape(order, "carts", list, [])
    for c in carts:
        need(isinstance(c, int) and 1 <= c <= len(s["carts"]), "malformed_order", f"no cart {c!r}")
    held = w.hand.get(ACHSBRUCH, 0)
    need(len(carts) <= held, "no_such_card", f"you hold {held} Achsbruch card(s)")


def _ab_apply(ctx: Ctx, s: S, orders: dict[int, Order], ev: list[Event]) -> None:
    plays = []
    for seat in turn_order(s):
        carts = (orders.get(seat) or {}).get("carts") or []
        if carts:
            play_card(s, seat, ACHSBRUCH, len(carts))
            s["blocks"] = [*s["blocks"], *({"cart": c, "by": seat} for c in carts)]  # shared: replace
        if seat in orders:
            plays.append({"seat": seat, "carts": carts})
    ev.append(event("achsbruch_played", plays=plays))


ACHSBRUCH_WINDOW = Decision(
    "achsbruch", "D3-ACHSBRUCH", True, ("carts",),
    _ab_choices, _ab_check, _ab_apply, lambda ctx, s, seat: {"carts": []},
)  # fmt: skip


# -- D3-MOVE ------------------------------------------------------------------------------
class Turn:
    """One movement turn played out on scratch positions (H-58 to H-72)."""

    def __init__(self, ctx: Ctx, s: S, seat: int, checked: bool = True) -> None:
        # checked=False replays an order that already passed `validate` on this state:
        # every effect is the same, only the searches for legal end nodes are skipped.
        self.ctx, self.s, self.seat, self.checked = ctx, s, seat, checked
        self.cities = ctx.board.produces  # the nodes that are cities
        self.pos = [c["at"] for c in s["carts"]]
        self.arrived = [c["arrived"] for c in s["carts"]]
        self.blocks = list(s["blocks"])  # lifting removes one; the block dicts are not changed
        self.messenger: str = s["messenger"]
        self.points = 0  # Wagnerei points (H-69)
        self.couriers: dict[str, tuple[int, ...]] = {}  # unused messenger cards (H-71)
        for card in s["players"][seat]["abilities"]:
            a = ctx.comp.abilities[card]
            if a.kind == "movement":
                self.points += a.points
            elif a.kind == "messenger":
                self.couriers[card] = a.spaces
        self.moved: set[int] = set()
        self.scored: set[int] = set()
        self.left_city: set[int] = set()
        self.gains = 0
        self.log: list[dict[str, Any]] = []

    # facts ---------------------------------------------------------------------------
    def blocked(self, c: int) -> bool:
        for b in self.blocks:
            if b["cart"] == c + 1:
                return True
        return False

    def eligible(self, c: int) -> bool:
        """H-60: not blocked, not arrived this round, not yet moved this turn."""
        return not self.blocked(c) and not self.arrived[c] and c not in self.moved

    def ends(self, c: int, value: int) -> list[str]:
        return cart_ends(self.ctx.board, self.pos[c], value, self.others(c))

    def others(self, c: int) -> list[str]:
        """Where the other carts stand."""
        return self.pos[:c] + self.pos[c + 1 :]

    def movable(self, value: int) -> list[int]:
        """Carts the tile alone can move with `value` (H-65)."""
        return [c for c in range(len(self.pos)) if self.eligible(c) and self.ends(c, value)]

    # actions -------------------------------------------------------------------------
    def lift(self, carts: list[Any]) -> None:
        for c in carts:
            mine = [b for b in self.blocks if b["cart"] == c and b["by"] == self.seat]
            need(bool(mine), "illegal_move", f"you have no active Achsbruch on cart {c!r} to lift")
            self.blocks.remove(mine[0])

    def move_cart(self, c: int, to: str, value: int, how: dict[str, Any]) -> None:
        if self.checked:
            legal = self.ends(c, value)
            if to not in legal:
                w = Words([], self.ctx.board)
                ends = join((w.place(e, inline=True) for e in legal), "or") or "nowhere"
                raise IllegalOrder("illegal_move", f"cart {c + 1} cannot end on {w.place(to, inline=True)} with a "
                                   f"move of {value}: it can end on {ends} (H-63)")  # fmt: skip
        start = self.pos[c]
        if start in self.cities:
            self.left_city.add(c)
        self.pos[c] = to
        self.moved.add(c)
        if to in self.cities:
            self.arrived[c] = True
        contact = to == self.messenger and c not in self.scored
        if contact:
            self.scored.add(c)
            self.gains += 1
        self.log.append({**how, "cart": c + 1, "from": start, "to": to, "card": contact})

    def move_messenger(self, card: str, to: str) -> None:
        if card not in self.couriers:
            raise IllegalOrder("no_such_card", "you have no unused messenger card of that name (H-71)")
        spaces = self.couriers.pop(card)
        if self.checked:
            legal = messenger_ends(self.ctx.board, self.messenger, spaces)
            if to not in legal:
                w = Words([], self.ctx.board)
                ends = join((w.place(e, inline=True) for e in legal), "or") or "nowhere"
                raise IllegalOrder("illegal_move", f"the messenger cannot end on {w.place(to, inline=True)}: it can "
                                   f"end on {ends} (H-71)")
        start, self.messenger = self.messenger, to
        hit = [c for c, p in enumerate(self.pos) if p == to and c not in self.scored]
        if hit:
            self.scored.add(hit[0])
            self.gains += 1
        self.log.append({"messenger": card, "from": start, "to": to, "card": bool(hit)})

    def play(self, order: Order) -> None:
        """Validate and play the whole order (H-61); raises `IllegalOrder`."""
        self.lift(shape(order, "lift", list, []))
        steps = shape(order, "steps", list, [])
        tiles_up = self.s["players"][self.seat]["tiles"]
        tile_seen = False
        for i, step in enumerate(steps):
            if not isinstance(step, dict):
                raise IllegalOrder("malformed_order", f"steps[{i}] must be an object")
            if "messenger" in step:
                self.move_messenger(shape(step, "messenger", str), shape(step, "to", str, ""))
            elif "tile" in step:
                if tile_seen:
                    raise IllegalOrder("illegal_move", "a movement turn flips exactly one tile")
                tile_seen = True
                self.tile_step(step, tiles_up)
            elif "points" in step:
                if not tile_seen:
                    raise IllegalOrder("illegal_move", "separate Wagnerei moves come after the tile move")
                self.points_step(step)
            else:
                raise IllegalOrder("malformed_order", f"steps[{i}] is not a messenger, tile or Wagnerei step")
        if not tile_seen:
            raise IllegalOrder("illegal_move", "a movement turn must flip one face-up tile")

    def tile_step(self, step: dict[str, Any], tiles_up: list[int]) -> None:
        v = shape(step, "tile", int)
        if v not in tiles_up:
            raise IllegalOrder("no_such_tile", f"tile {v!r} is not face up (face up: {tiles_up})")
        if not self.checked:
            if step.get("forfeit"):
                self.log.append({"tile": v, "forfeit": True})
            else:
                w = step.get("points") or 0
                self.points -= w
                self.move_cart(self._cart(step), step["to"], v + w, {"tile": v, "points": w})
            return
        if shape(step, "forfeit", bool, False):
            movable = self.movable(v)
            need(not movable, "must_move",
                 f"tile {v} can move cart(s) {[c + 1 for c in movable]}, so it cannot be forfeited")  # fmt: skip
            self.log.append({"tile": v, "forfeit": True})
            return
        c = self._cart(step)
        w = shape(step, "points", int, 0)
        if not (self.eligible(c) and self.ends(c, v)):
            raise IllegalOrder("illegal_move", f"the tile alone cannot move cart {c + 1}")
        if not 0 <= w <= self.points:
            raise IllegalOrder("illegal_move", f"you have {self.points} Wagnerei point(s)")
        self.points -= w
        self.move_cart(c, shape(step, "to", str, ""), v + w, {"tile": v, "points": w})

    def points_step(self, step: dict[str, Any]) -> None:
        c, w = self._cart(step), shape(step, "points", int, 0)
        if not 1 <= w <= self.points:
            raise IllegalOrder("illegal_move", f"you have {self.points} Wagnerei point(s) left")
        if not self.eligible(c):
            raise IllegalOrder(
                "illegal_move", f"cart {c + 1} cannot move now (blocked, arrived, or already moved this turn)"
            )
        self.points -= w
        self.move_cart(c, shape(step, "to", str, ""), w, {"points": w})

    def _cart(self, step: dict[str, Any]) -> int:
        c = shape(step, "cart", int)
        if c is None or not 1 <= c <= len(self.pos):
            raise IllegalOrder("malformed_order", f"no cart {c!r}")
        return int(c) - 1


def _move_choices(ctx: Ctx, s: S, seat: int) -> dict[str, object]:
    t = Turn(ctx, s, seat)
    tiles = s["players"][seat]["tiles"]
    values = sorted({v + w for v in tiles for w in range(t.points + 1)} | set(range(1, t.points + 1)))
    return {
        "tiles": list(tiles),
        "points": t.points,
        "messenger": t.messenger,
        "messenger_cards": {
            k: messenger_ends(ctx.board, t.messenger, sp) for k, sp in t.couriers.items()
        },
        "my_blocks": [b["cart"] for b in t.blocks if b["by"] == seat],
        "carts": [
            {
                "cart": c + 1,
                "at": t.pos[c],
                "blocked": t.blocked(c),
                "arrived": t.arrived[c],
                "ends": _ends_by_value(t, c, values),
            }
            for c in range(len(t.pos))
        ],
        "deck_size": sum(s["deck"].values()),
    }


def _ends_by_value(t: Turn, c: int, values: list[int]) -> dict[str, list[str]]:
    """The legal ends of cart `c` for each move value. A cart that arrived, or that
    another seat's Achsbruch blocks, cannot move in this turn whatever the order says
    (H-60): its ends are not listed."""
    if t.arrived[c] or any(b["cart"] == c + 1 and b["by"] != t.seat for b in t.blocks):
        return {str(v): [] for v in values}
    board, start, others = t.ctx.board, t.pos[c], t.others(c)
    return {str(v): cart_ends(board, start, v, others) for v in values}


def _move_check(ctx: Ctx, s: S, seat: int, order: Order, w: Wallet) -> None:
    Turn(ctx, s, seat).play(order)
    prefer = shape(order, "prefer", list, [])
    nested = bool(prefer) and isinstance(prefer[0], list)
    for p in prefer:
        if isinstance(p, list) != nested:
            raise IllegalOrder("malformed_order",
                               "prefer is one ranking of card kinds, or a list of rankings (one per gain)")  # fmt: skip
        for kind in p if nested else [p]:
            if not isinstance(kind, str) or kind not in ctx.comp.influence:
                raise IllegalOrder("malformed_order", f"{kind!r} is not an influence card")


def _move_apply(ctx: Ctx, s: S, orders: dict[int, Order], ev: list[Event]) -> None:
    (seat, order), = orders.items()
    t = Turn(ctx, s, seat, checked=False)
    t.play(order)
    tile = next(step["tile"] for step in order["steps"] if "tile" in step)
    player = s["players"][seat]
    player["tiles"] = [t for t in player["tiles"] if t != tile]  # shared between states: replace
    for c, cart in enumerate(s["carts"]):
        cart["at"], cart["arrived"] = t.pos[c], t.arrived[c]
        if c in t.left_city:
            cart["master"] = None
    s["blocks"], s["messenger"] = t.blocks, t.messenger
    lifted = shape(order, "lift", list, [])
    ev.append(event("moved", seat=seat, lifted=lifted, steps=t.log, gains=t.gains))
    for k in range(t.gains):
        _gain_card(ctx, s, seat, _ranking(order, k), ev)


def _ranking(order: Order, k: int) -> list[str]:
    prefer = order.get("prefer") or []
    if prefer and isinstance(prefer[0], list):
        return list(prefer[k]) if k < len(prefer) else []
    return list(prefer)


def _gain_card(ctx: Ctx, s: S, seat: int, ranking: list[str], ev: list[Event]) -> None:
    """H-72, H-73: the gainer takes the highest-ranked kind left in the deck."""
    deck = own(s, "deck")
    if not any(deck.values()):
        ev.append(event("card_gain_missed", seat=seat, reason="deck empty"))
        return
    kind = next(k for k in [*ranking, *ctx.comp.default_ranking] if deck.get(k))
    ev.append(event("card_gained", private(seat), seat=seat, kind=kind, deck=dict(deck)))
    ev.append(event("card_gained", seat=seat, deck_size=sum(deck.values()) - 1))
    deck[kind] -= 1
    hand_add(s, seat, kind, 1)


def _move_default(ctx: Ctx, s: S, seat: int) -> Order:
    """D3-MOVE DEFAULT: keep every Achsbruch; lowest tile; lowest-numbered cart it can
    move, to the end of the first route in board order; else forfeit (R-28, H-76)."""
    t = Turn(ctx, s, seat)
    v = min(s["players"][seat]["tiles"])
    for c in t.movable(v):
        return {"steps": [{"tile": v, "cart": c + 1, "to": t.ends(c, v)[0]}]}
    return {"steps": [{"tile": v, "forfeit": True}]}


MOVE = Decision(
    "move", "D3-MOVE", False, ("lift", "steps", "prefer"),
    _move_choices, _move_check, _move_apply, _move_default,
)  # fmt: skip


def end_of_phase(ctx: Ctx, s: S, ev: list[Event]) -> None:
    """H-77: Achsbruch cards still on carts are removed; spent tile sets turn face up."""
    s["blocks"] = []
    for seat, player in enumerate(s["players"]):
        if not player["tiles"]:
            player["tiles"] = list(ctx.comp.tiles)
            ev.append(event("tiles_reset", seat=seat))
