"""Default orders for a missed deadline (rules §18, R16, R31).

Each default is built from the seat's own view of the state only (public facts and its
own hand), and is legal by construction; `default_order` in `rules` returns it.
"""

from __future__ import annotations

from typing import Any

from engine.aufachse import effects, flow
from engine.aufachse.board import Reach
from engine.aufachse.context import capacity, copy_seat, fork, load, markers, own_cities
from engine.aufachse.dataset import DataSet
from engine.aufachse.movement import DIE_NAMES, Route, targets

S = dict[str, Any]


def default_loads(ctx: DataSet, pl: dict[str, Any], city: str, room: int, only: list[str] | None = None
                  ) -> list[str]:
    """18.2 step 2: hand orders starting in `city`, highest payment first (ties: lowest
    id), skipping any that does not fit."""
    orders = ctx.orders
    cards = [c for c in (only if only is not None else list(pl.get("hand") or []) + list(pl["open"]))
             if orders[c].start == city]
    if not cards:
        return []
    cards.sort(key=lambda c: (-orders[c].pay, c))
    out = []
    for c in cards:
        if ctx.orders[c].goods <= room:
            out.append(c)
            room -= ctx.orders[c].goods
    return out


def dist_map(ctx: DataSet, s: S, pl: dict[str, Any], room: int) -> Reach:
    """Dist of §18: steps to the nearest target city, around the markers."""
    return ctx.board.reach(frozenset(targets(ctx, s, pl, room)), markers(s))


def place(ctx: DataSet, s: S, seat: int) -> dict[str, Any]:
    """18.1: the start city of the best-paying hand order (ties: lowest id)."""
    pl = s["players"][seat]
    cards = sorted(list(pl.get("hand") or []) + list(pl["open"]), key=lambda c: (-ctx.orders[c].pay, c))
    return {"space": ctx.orders[cards[0]].start if cards else ctx.board.cities[0]}


def move(ctx: DataSet, s: S, seat: int, extra: bool) -> dict[str, Any]:
    """18.2: load, take the higher die at face value, the best path by Dist (R31: then
    the other die, then a 6 as 5..1), the first allowed roadworks space, and the
    arrival default."""
    pl = s["players"][seat]
    order: dict[str, Any] = {}
    room = capacity(ctx, pl) - load(ctx, pl)
    at = pl["at"]
    wpl = pl  # the seat as the default sees it after loading (a copy once loading changes it)
    if not extra and at in ctx.board.city_set:
        loads = default_loads(ctx, pl, at, room)
        if loads:
            order["load"] = loads
            wpl = copy_seat(pl)
            for c in loads:
                (wpl["hand"] if c in wpl["hand"] else wpl["open"]).remove(c)
                wpl["loaded"].append(c)
            room -= sum(ctx.orders[c].goods for c in loads)
    dice = s["dice"]
    hi = 0 if dice[0] >= dice[1] else 1
    # Loading changes neither where the truck stands nor anything else of `s` these read.
    # The route is `best_path` on `dist_map(ctx, s, wpl, room)`, which it builds only when
    # it needs it (`Route`).
    route = Route(ctx, s, seat, frozenset(targets(ctx, s, wpl, room)), own_cities(ctx, wpl))
    i, n, path = hi, dice[hi], route.path(dice[hi])
    if path is None:  # the other die, then a 6 as 5..1 (R31)
        tries = [(1 - hi, dice[1 - hi])] + [(i, v) for i in (hi, 1 - hi) if dice[i] == 6 for v in range(5, 0, -1)]
        i, n, path = 0, dice[0], []  # only kept if R26 was not honoured: wait with die A
        for di, dn in tries:
            found = route.path(dn)
            if found is not None:
                i, n, path = di, dn, found
                break
    order.update({"die": DIE_NAMES[i], "n": n, "path": path})
    end = path[-1] if path else at
    if n == 1:
        order["roadworks"] = effects.first_roadworks_target(ctx, s, end)
    if path and end in ctx.board.city_set and not extra:
        ws = dict(s)  # the state as the default sees it after loading and moving
        players = ws["players"] = list(s["players"])
        players[seat] = {**wpl, "at": end}
        order["arrive"] = arrive_at(ctx, ws, seat, end, len(path) == n)
    return order


def arrive_at(ctx: DataSet, s: S, seat: int, city: str, full: bool) -> dict[str, Any]:
    """18.2 step 7 / 18.3: after delivery (and kids taking), load as in step 2, and
    decline when eligible (on a copy of `s`).

    Outside the kids variant the arrival only delivers (`flow._arrival`), which takes
    the orders bound for `city` off the truck and changes nothing else this reads (money
    and the discard pile are not read; the end check does not run on a copy): so the
    seat is then `s`'s with those orders unloaded, and the display is unchanged."""
    if not s["options"]["kids"]:
        pl = s["players"][seat]
        pl = {**pl, "loaded": [c for c in pl["loaded"] if ctx.orders[c].dest != city]}
        w_s = s
    else:
        w = fork(ctx, s, dry=True)
        flow._arrival(w, seat, city)
        pl = w.s["players"][seat]
        w_s = w.s
    part: dict[str, Any] = {}
    loads = default_loads(ctx, pl, city, capacity(ctx, pl) - load(ctx, pl))
    if loads:
        part["load"] = loads
    if full and flow.eligible_now(w_s):
        part["decline"] = True
    return part


def arrive(ctx: DataSet, s: S, seat: int, pending: dict[str, Any]) -> dict[str, Any]:
    pl = s["players"][seat]
    part: dict[str, Any] = {}
    loads = default_loads(ctx, pl, pl["at"], capacity(ctx, pl) - load(ctx, pl))
    if loads:
        part["load"] = loads
    if pending["eligible"] and flow.eligible_now(s):
        part["decline"] = True
    return part


def load_won(ctx: DataSet, s: S, seat: int, pending: dict[str, Any]) -> dict[str, Any]:
    """18.3: the won card first if it fits; then, for the active player, step 2."""
    pl = s["players"][seat]
    room = capacity(ctx, pl) - load(ctx, pl)
    out = []
    card = pending["card"]
    if ctx.orders[card].goods <= room:
        out.append(card)
        room -= ctx.orders[card].goods
    if pending["active"]:
        rest = [c for c in list(pl.get("hand") or []) + list(pl["open"]) if c != card]
        out += default_loads(ctx, pl, pl["at"], room, rest)
    return {"load": out}


def event_space(ctx: DataSet, s: S, seat: int, pending: dict[str, Any]) -> dict[str, Any]:
    """18.4: the first allowed space in canonical order."""
    if pending["mode"] == "roadworks":
        return {"space": effects.roadworks_targets(ctx, s, pending["owner"])[0]}
    return {"space": effects.jam_targets(ctx, s, pending["owner"], pending["by"])[0]}


def shortcut(ctx: DataSet, s: S, seat: int, pending: dict[str, Any]) -> dict[str, Any]:
    """18.5: the reachable city with the smallest Dist, if nearer than the truck now."""
    pl = s["players"][seat]
    dist = dist_map(ctx, s, pl, capacity(ctx, pl) - load(ctx, pl))
    here = dist.get(pl["at"])
    best = None
    for c in effects.shortcut_cities(ctx, s, seat, pending["reach"]):
        d = dist.get(c)
        if d is not None and (best is None or d < best[0]):
            best = (d, c)
    if best is not None and (here is None or best[0] < here):
        return {"city": best[1]}
    return {"decline": True}
