"""Event cards (rules §10): drawing the top card and carrying out its effect."""

from __future__ import annotations

from typing import Any

from engine.aufachse.context import Run, credit, end_check, event_payment, load, markers

S = dict[str, Any]


def free_road_spaces(ctx: Any, s: S) -> list[str]:
    """AD6 / K3: road spaces with no truck and no roadworks (the jam's own space counts
    as free, R25), in canonical order."""
    taken = {pl["at"] for pl in s["players"]}
    taken.add(s.get("roadworks"))
    return [x for x in ctx.board.roads if x not in taken]


def roadworks_targets(ctx: Any, s: S, seat: int) -> list[str]:
    """K1: road spaces, not the mover's own space, not the jam, not the current roadworks."""
    return roadworks_targets_at(ctx, s, s["players"][seat]["at"])


def roadworks_targets_at(ctx: Any, s: S, at: str | None) -> list[str]:
    """`roadworks_targets` for a mover standing on `at`."""
    out = list(ctx.board.roads)
    for x in {at, s["jam"]["at"] if s.get("jam") else None, s.get("roadworks")}:
        if x in ctx.board.road_of:
            out.remove(x)
    return out


def first_roadworks_target(ctx: Any, s: S, at: str | None) -> str:
    """`roadworks_targets_at(ctx, s, at)[0]`, without listing the rest."""
    jam = s.get("jam")
    taken = {at, jam["at"] if jam else None, s.get("roadworks")}
    for x in ctx.board.roads:
        if x not in taken:
            return str(x)
    raise IndexError("no road space is free for the roadworks")


def roadworks_allowed(ctx: Any, s: S, seat: int, space: Any) -> bool:
    """Whether `space` is one of `roadworks_targets` (without listing them)."""
    return (isinstance(space, str) and space in ctx.board.road_of and space != s["players"][seat]["at"]
            and space != (s["jam"]["at"] if s.get("jam") else None) and space != s.get("roadworks"))


def jam_targets(ctx: Any, s: S, owner: int, by: str) -> list[str]:
    free = free_road_spaces(ctx, s)
    if by == "drawer":
        return free
    near = set(ctx.board.adj[s["players"][owner]["at"]])
    return [x for x in free if x in near]


def shortcut_cities(ctx: Any, s: S, seat: int, reach: int) -> list[str]:
    """E13: cities within `reach` spaces of the truck, ignoring markers and trucks."""
    dist = ctx.board.distances([s["players"][seat]["at"]])
    return [c for c in ctx.board.cities if dist.get(c, reach + 1) <= reach]


def ask(run: Run, pending: dict[str, Any]) -> None:
    run.own("queue").insert(0, {"t": "ask", "pending": pending})


def draw_event(run: Run, seat: int) -> None:
    """V1–V4: draw the top event card, resolve it at once, remove it from the game."""
    s, ctx = run.s, run.ctx
    if not s["events"]:
        run.say("event_deck_empty", seat=seat)
        return
    cid = run.own("events").pop(0)
    run.own("used_events").append(cid)
    card = ctx.events[cid]
    eff = card.effect
    kind = eff["type"]
    pl = run.player(seat)
    run.say("event_card", seat=seat, card=cid, effect=kind)
    if kind == "gain":
        run.say("gain", seat=seat, amount=eff["amount"], card=cid)
        credit(run, seat, eff["amount"], cid)
    elif kind == "gain_per_goods":
        amount = max(eff["min"], eff["per"] * load(ctx, pl))
        run.say("gain", seat=seat, amount=amount, card=cid)
        credit(run, seat, amount, cid)
    elif kind == "pay":
        event_payment(run, seat, eff["amount"], None, cid)
    elif kind == "pay_per_goods":
        event_payment(run, seat, max(eff["min"], eff["per"] * load(ctx, pl)), None, cid)
    elif kind == "collect_from_each":
        n = s["seats"]
        for i in range(1, n):
            event_payment(run, (seat + i) % n, eff["amount"], seat, cid)
    elif kind == "extra_move":
        run.own("queue").insert(0, {"t": "extra_move", "seat": seat})
    elif kind == "clear_markers":
        if markers(s):
            run.say("markers_cleared", seat=seat, card=cid)
        s["roadworks"] = None
        s["jam"] = None
    elif kind == "move_roadworks":
        if roadworks_targets(ctx, s, seat):
            ask(run, {"kind": "event_space", "seat": seat, "mode": "roadworks", "owner": seat, "by": "drawer",
                    "card": cid})
    elif kind == "place_jam":
        chooser = seat if eff["by"] == "drawer" else (seat + 1) % s["seats"]
        if jam_targets(ctx, s, seat, eff["by"]):
            ask(run, {"kind": "event_space", "seat": chooser, "mode": "jam", "owner": seat, "by": eff["by"],
                    "card": cid})
        else:
            run.say("no_jam_space", seat=seat, card=cid)
    elif kind == "free_trailer":
        size = eff["size"]
        if s["options"]["kids"] or s["supply"][size] <= 0:
            run.say("gain", seat=seat, amount=eff["fallback"], card=cid)
            credit(run, seat, eff["fallback"], cid)
        else:
            run.own("supply")[size] -= 1
            pl["trailers"][size] += 1
            run.say("trailer_free", seat=seat, size=size, card=cid)
    elif kind == "draw_reserve_order":
        if s["reserve"]:
            order = run.own("reserve").pop(0)
            pl["hand"].append(order)
            run.say("reserve_drawn", seat=seat, card=cid)
            run.say("reserve_card", [seat], seat=seat, order=order)
            end_check(run)
        else:
            run.say("reserve_empty", seat=seat, card=cid)
    elif kind == "shortcut":
        ask(run, {"kind": "shortcut", "seat": seat, "reach": eff["max_pips"], "card": cid})
    elif kind == "skip_turn":
        pl["skips"] += 1
        run.say("skip_pending", seat=seat, card=cid)
