"""The order of play (rules §6, §7) and the decisions (§17): each decision's check-and-
apply function, and `advance`, which runs the queued steps until a decision is open or
the game is over.

A decision's `apply` is the one legality path: `validate` runs it on a private copy of
the state with `dry=True` (which stops before anything random or hidden), `resolve` runs
it for real. The queue (`state["queue"]`) holds the rest of the turn as plain tasks.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import repeat
from typing import Any

from engine.aufachse import cargo, effects, public
from engine.aufachse.context import GameOver, Run, end_check, fail
from engine.aufachse.describe import order_words
from engine.aufachse.dice import roll
from engine.aufachse.movement import DIE_NAMES, Mover, blocked
from engine.core.events import ALL

S = dict[str, Any]

#: The keys each decision kind takes (besides an optional "kind").
KEYS: dict[str, frozenset[str]] = {
    "place": frozenset({"space"}),
    "move": frozenset({"trailers", "load", "die", "n", "path", "roadworks", "arrive"}),
    "arrive": frozenset({"trailers", "load", "pick", "decline"}),
    "bid": frozenset({"bid", "pass"}),
    "load_won": frozenset({"trailers", "load"}),
    "event_space": frozenset({"space"}),
    "shortcut": frozenset({"city", "decline"}),
}
ARRIVE_KEYS = frozenset({"trailers", "load", "deliver", "pick", "decline"})
RULE = {"place": "S6", "move": "T3", "arrive": "T5", "bid": "A3", "load_won": "A8", "event_space": "V3",
        "shortcut": "E13"}


# -- decisions ---------------------------------------------------------------------------------
def apply_place(run: Run, seat: int, order: dict[str, Any], pending: dict[str, Any]) -> None:
    """S6: place the truck on any space, at most two per road space."""
    s, board = run.s, run.ctx.board
    space = order.get("space")
    if not isinstance(space, str) or not board.is_space(space):
        fail("no_such_space", "that is not a space of the board")
    if space_full(run.ctx, s, space):
        fail("space_full", f"{board.name(space)} already holds two trucks (S6)")
    run.player(seat)["at"] = space
    run.say("placed", seat=seat, space=space)


def _space(ctx: Any, space: Any) -> str:
    """A space a refusal names: by its name, or "that space" when it is none."""
    return ctx.board.name(space) if ctx.board.is_space(space) else "that space"


def space_full(ctx: Any, s: S, space: str) -> bool:
    """S6: a road space that already holds as many trucks as it may (a city never is)."""
    return not ctx.board.is_city(space) and sum(pl["at"] == space for pl in s["players"]) >= ctx.comp.road_space_limit


def _arrival(run: Run, seat: int, city: str, listed: Any = None) -> None:
    """T5 steps 1–2: deliveries, then the kids' automatic taking."""
    cargo.deliver(run, seat, city, listed)
    public.kids_take(run, seat, city)


def arrival_actions(run: Run, seat: int, part: dict[str, Any], eligible: bool) -> None:
    """T5 step 3: trailers, loads, then exactly one of pick or decline when eligible."""
    cargo.trailer_actions(run, seat, part.get("trailers"))
    cargo.load_orders(run, seat, part.get("load"))
    picks, declines = "pick" in part, part.get("decline") is True
    if "decline" in part and part["decline"] is not True:
        fail("malformed_order", 'decline is written "decline": true')
    if not eligible:
        if picks or declines:
            fail("cannot_pick", "no public order may be picked here: the move did not end in a city with its full "
                                "value, or the truck was moved by an event, or the display is empty (P1, AD13)")
        return
    if picks == declines:
        fail("pick_required", "this arrival must pick one public order (\"pick\": slot) or decline (P2)")
    if declines:
        public.decline(run, seat)
    else:
        public.pick(run, seat, part["pick"])


def eligible_now(s: S) -> bool:
    return bool(s["display"]) and not s["options"]["kids"]


def apply_move(run: Run, seat: int, order: dict[str, Any], pending: dict[str, Any]) -> None:
    """T3 / T4 / T5 for D-MOVE (and the move-only D-MOVE of E06)."""
    s, ctx = run.s, run.ctx
    board = ctx.board
    start = s["players"][seat]["at"]  # (neither trailers nor loading move the truck)
    extra = bool(pending.get("extra"))
    if extra and any(k in order for k in ("trailers", "load", "arrive")):
        fail("not_allowed_here", "the extra move of an event card is move-only: no trailers, loads or arrival part "
                                 "(T4)")
    arrive = order.get("arrive")
    if arrive is not None and (not isinstance(arrive, dict) or set(arrive) - ARRIVE_KEYS):
        fail("malformed_order", f"arrive is an object with some of {', '.join(sorted(ARRIVE_KEYS))}")
    if not extra:
        cargo.trailer_actions(run, seat, order.get("trailers"))
        if order.get("load"):
            if start not in board.city_set:
                fail("wrong_city", "loading before the move needs the truck in a city (AD2)")
            cargo.load_orders(run, seat, order.get("load"))
    die, n, path = order.get("die"), order.get("n"), order.get("path")
    if die not in DIE_NAMES:
        fail("bad_die", 'die is "A" or "B"')
    face = s["dice"][DIE_NAMES.index(die)]
    if n is None:
        n = face
    if isinstance(n, bool) or not isinstance(n, int) or not (n == face or (face == 6 and 1 <= n <= 6)):
        fail("bad_die", f"die {die} shows {face}; N must be {face}" + (" or any of 1–6" if face == 6 else "") + " (M7)")
    if not isinstance(path, list) or not all(map(isinstance, path, repeat(str))):
        fail("malformed_order", "path is a list of space ids (the spaces entered, in order)")
    if not run.checked:  # the path check only rejects (M4–M9)
        Mover(ctx, s, seat).check(n, path)
    end = path[-1] if path else start
    k = len(path)
    if k:
        run.move_to(seat, end)
        if s["fresh"]:  # (only the kids variant has any)
            s["fresh"] = [f for f in s["fresh"] if f[0] != seat]
    if not run.dry:  # (nothing a validation checks reads them)
        s["last_move"] = {"seat": seat, "die": die, "n": n, "from": start, "path": list(path), "full": k == n}
        # `run.say("moved", ...)`, built in place: every move records one
        run.ev.append({"type": "moved", "visible_to": ALL, "seat": seat, "die": die, "n": n, "start": start,
                       "path": list(path), "forfeited": n - k})
    if n == 1:
        target = order.get("roadworks")
        if not effects.roadworks_allowed(ctx, s, seat, target):
            fail("bad_roadworks", f"with N = 1 the roadworks must go on a road space that is not yours, not the jam's "
                                  f"and not where it stands now; {_space(ctx, target)} is not allowed (K1, AD5)")
        s["roadworks"] = target
        run.say("roadworks", seat=seat, space=target)
    elif "roadworks" in order:
        fail("bad_roadworks", "the roadworks is placed only when N = 1 (K1)")
    in_city = k >= 1 and end in board.city_set
    if arrive is not None and (extra or not in_city):
        fail("not_allowed_here", "an arrival part is only for a move that ends in a city (T3 step 4)")
    if k >= 1 and k == n and end in board.events:
        if not run.dry:
            effects.draw_event(run, seat)
    elif in_city:
        part = arrive or {}
        _arrival(run, seat, end, part.get("deliver"))
        if extra:
            run.own("queue").insert(0, {"t": "ask", "pending": {"kind": "arrive", "seat": seat,
                                                               "eligible": k == n and eligible_now(s)}})
        else:
            arrival_actions(run, seat, part, k == n and eligible_now(s))


def apply_arrive(run: Run, seat: int, order: dict[str, Any], pending: dict[str, Any]) -> None:
    """D-ARRIVE (R17): after an arrival caused by an event card."""
    arrival_actions(run, seat, order, bool(pending["eligible"]) and eligible_now(run.s))


def apply_bid(run: Run, seat: int, order: dict[str, Any], pending: dict[str, Any]) -> None:
    public.bid(run, seat, order)


def apply_load_won(run: Run, seat: int, order: dict[str, Any], pending: dict[str, Any]) -> None:
    """A8: load the won card (and, for the active player, trailers and other loads)."""
    loads = cargo.strings(order.get("load"), "load")
    if not pending["active"]:
        if order.get("trailers"):
            fail("no_trailers", "only the active player may buy or sell trailers (H1, A8)")
        if any(c != pending["card"] for c in loads):
            won = order_words(run.ctx, pending["card"], "")
            fail("not_allowed_here", f"here you may load only the won order, {won} (A8)")
    cargo.trailer_actions(run, seat, order.get("trailers"))
    cargo.load_orders(run, seat, loads)


def apply_event_space(run: Run, seat: int, order: dict[str, Any], pending: dict[str, Any]) -> None:
    """D-EVENT-SPACE: place the roadworks (K1) or the jam (K3, AD6)."""
    s, ctx = run.s, run.ctx
    space = order.get("space")
    owner = pending["owner"]
    if pending["mode"] == "roadworks":
        if not effects.roadworks_allowed(ctx, s, owner, space):
            fail("bad_space", f"{_space(ctx, space)} is not allowed for the roadworks (K1, AD5)")
        s["roadworks"] = space
        run.say("roadworks", seat=seat, space=space)
        return
    if space not in effects.jam_targets(ctx, s, owner, pending["by"]):
        where = "a free road space" if pending["by"] == "drawer" else "a free road space next to the drawer's truck"
        fail("bad_space", f"{_space(ctx, space)} is not allowed: the jam goes on {where} (K3, AD6)")
    s["jam"] = {"at": space, "owner": owner, "turn": s["turn_no"]}
    run.say("jam", seat=seat, space=space, owner=owner)


def apply_shortcut(run: Run, seat: int, order: dict[str, Any], pending: dict[str, Any]) -> None:
    """D-SHORTCUT (E13): move to a city within range, or decline."""
    s, ctx = run.s, run.ctx
    if order.get("decline") is True and "city" not in order:
        run.say("shortcut_declined", seat=seat)
        return
    city = order.get("city")
    if "decline" in order or city not in ctx.board.city_set:
        fail("malformed_order", 'a shortcut order is {"city": id} or {"decline": true}')
    if city not in effects.shortcut_cities(ctx, s, seat, pending["reach"]):
        fail("out_of_range", f"{ctx.board.city_names[city]} is more than {pending['reach']} spaces away (V3)")
    pl = run.player(seat)
    if pl["at"] != city and s["fresh"]:
        s["fresh"] = [f for f in s["fresh"] if f[0] != seat]
    start = pl["at"]
    pl["at"] = city
    run.say("shortcut", seat=seat, start=start, city=city)
    _arrival(run, seat, city)
    run.own("queue").insert(0, {"t": "ask", "pending": {"kind": "arrive", "seat": seat, "eligible": False}})


APPLY: dict[str, Callable[[Run, int, dict[str, Any], dict[str, Any]], None]] = {
    "place": apply_place, "move": apply_move, "arrive": apply_arrive, "bid": apply_bid,
    "load_won": apply_load_won, "event_space": apply_event_space, "shortcut": apply_shortcut,
}


# -- the queue ---------------------------------------------------------------------------------
def advance(run: Run) -> None:
    """Run queued steps until a decision is open or the game is over."""
    s = run.s
    try:
        while not s["over"] and s["pending"] is None:
            task = run.own("queue").pop(0) if s["queue"] else {"t": "turn", "seat": (s["turn"] + 1) % s["seats"]}
            TASKS[task["t"]](run, task)
    except GameOver:
        pass


def _ask(run: Run, task: dict[str, Any]) -> None:
    run.s["pending"] = task["pending"]


def _turn(run: Run, task: dict[str, Any]) -> None:
    """T1, T2, T7 and R26: start a turn."""
    s, ctx = run.s, run.ctx
    p = task["seat"]
    s["turn"] = p
    s["turn_no"] += 1
    if p == s["first"]:
        s["round"] += 1
    s["dice"] = None
    s["last_move"] = None
    pl = s["players"][p]
    run.own("queue").insert(0, {"t": "end_turn", "seat": p})
    if pl["skips"] > 0:
        pl = run.player(p)
        pl["skips"] -= 1
        run.say("skipped", seat=p)
        return
    if s["options"]["kids"] and ctx.board.is_city(pl["at"]):  # only the kids variant takes (Y3)
        public.kids_take(run, p, pl["at"])
    _roll_and_ask(run, p, extra=False)


def _roll_and_ask(run: Run, p: int, extra: bool) -> None:
    s, ctx = run.s, run.ctx
    dice = roll(s, p)
    if not run.dry:  # `run.say("rolled", ...)`, built in place: every turn records one
        run.ev.append({"type": "rolled", "visible_to": ALL, "seat": p, "dice": dice, "extra": extra})
    if blocked(ctx, s, p, dice):
        run.say("blocked", seat=p)
        return
    s["pending"] = {"kind": "move", "seat": p, "extra": extra}


def _extra_move(run: Run, task: dict[str, Any]) -> None:
    _roll_and_ask(run, task["seat"], extra=True)


def _end_turn(run: Run, task: dict[str, Any]) -> None:
    """T8: the jam's expiry, the end check, and the turn passes left."""
    s = run.s
    p = task["seat"]
    jam = s["jam"]
    if jam and jam["owner"] == p and jam["turn"] < s["turn_no"]:
        s["jam"] = None
        run.say("jam_removed", space=jam["at"], owner=p)
    s["dice"] = None
    end_check(run)
    run.own("queue").insert(0, {"t": "turn", "seat": (p + 1) % s["seats"]})


def _auction(run: Run, task: dict[str, Any]) -> None:
    q = public.next_bidder(run)
    if q is None:
        public.end_auction(run)
        return
    a = run.s["auction"]
    run.s["pending"] = {"kind": "bid", "seat": q, "card": a["card"]}


def _load_won(run: Run, task: dict[str, Any]) -> None:
    """A8: offered when the winner's truck stands in the card's start city (and, for a
    winner who is not active, when the card fits)."""
    s, ctx = run.s, run.ctx
    h, card = task["seat"], ctx.orders[task["card"]]
    pl = s["players"][h]
    if pl["at"] != card.start or card.id not in pl["open"]:
        return
    active = h == s["turn"]
    if not active:
        from engine.aufachse.context import capacity, load

        if load(ctx, pl) + card.goods > capacity(ctx, pl):
            return
    s["pending"] = {"kind": "load_won", "seat": h, "card": card.id, "active": active}


def _slide(run: Run, task: dict[str, Any]) -> None:
    """A9: the display slides and refills after the won card left it; the end check."""
    public.refill(run)
    end_check(run)


def _place(run: Run, task: dict[str, Any]) -> None:
    run.s["pending"] = {"kind": "place", "seat": task["seat"]}


TASKS: dict[str, Callable[[Run, dict[str, Any]], None]] = {
    "ask": _ask, "turn": _turn, "extra_move": _extra_move, "end_turn": _end_turn, "auction": _auction,
    "load_won": _load_won, "slide": _slide, "place": _place,
}
