"""Movement (rules §8): the dice values, legal paths, waiting, blocked trucks, and the
path the default move takes (§18.2).

Everything here reads only public facts plus the moving seat's own hand, through keys a
seat's own view also has, so bots can call it on their view.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from engine.aufachse.context import fail, markers, own_cities
from engine.aufachse.dataset import DataSet

S = dict[str, Any]
DIE_NAMES = ("A", "B")


def values(dice: list[int]) -> list[tuple[str, int]]:
    """Every (die, N) the roll allows (M7): a face 1–5 is N, a 6 is any N from 1 to 6."""
    out = []
    for name, face in zip(DIE_NAMES, dice, strict=True):
        out += [(name, v) for v in (range(1, 7) if face == 6 else (face,))]
    return out


def others_on(s: S, seat: int) -> dict[str, int]:
    """How many trucks of other seats stand on each space."""
    out: dict[str, int] = {}
    for q, pl in enumerate(s["players"]):
        if q != seat and pl["at"] is not None:
            out[pl["at"]] = out.get(pl["at"], 0) + 1
    return out


class Mover:
    """The facts a legality check of one seat's move needs, gathered once."""

    __slots__ = ("ctx", "board", "start", "marks", "occ", "oc", "limit")

    def __init__(self, ctx: DataSet, s: S, seat: int, oc: set[str] | None = None) -> None:
        pl = s["players"][seat]
        self.ctx = ctx
        self.board = ctx.board
        self.start: str = pl["at"]
        self.marks = markers(s)
        self.occ = others_on(s, seat)
        self.oc = own_cities(ctx, pl) if oc is None else oc
        self.limit = ctx.comp.road_space_limit

    def can_wait(self) -> bool:
        """M9 / AD4: waiting is legal only next to a marker."""
        return any(y in self.marks for y in self.board.adj[self.start])

    def end_ok(self, prev: str, end: str, k: int, n: int) -> bool:
        """M6 and M8 for a path of k ≥ 1 spaces ending on `end` after `prev`."""
        board = self.board
        if end in board.city_set:
            return k == n or end in self.oc
        if self.occ.get(end, 0) >= self.limit:
            return False
        if k == n:
            return True
        return any(y != prev and y in self.marks for y in board.adj[end])

    def paths(self, n: int) -> Iterator[list[str]]:
        """Every legal path (s1..sk) for value n, waiting ([]) first when allowed."""
        if self.can_wait():
            yield []
        adj, marks = self.board.adj, self.marks
        path = [self.start]
        seen = {self.start}

        def rec() -> Iterator[list[str]]:
            cur = path[-1]
            k = len(path) - 1
            if k >= 1 and self.end_ok(path[-2], cur, k, n):
                yield path[1:]
            if k == n:
                return
            for y in adj[cur]:
                if y in seen or y in marks:
                    continue
                path.append(y)
                seen.add(y)
                yield from rec()
                path.pop()
                seen.discard(y)

        yield from rec()

    def any_path(self, n: int) -> bool:
        return next(self.paths(n), None) is not None

    def check(self, n: int, path: list[str]) -> None:
        """Raise unless `path` is legal for value n (M4–M9)."""
        board = self.board
        if len(path) > n:
            fail("bad_path", f"the path has {len(path)} spaces but N is {n} (M8)")
        if not path:
            if not self.can_wait():
                fail("cannot_wait", "a truck may wait only when a marker stands next to it (M9, AD4)")
            return
        prev = self.start
        seen = {prev}
        for x in path:
            if not board.is_space(x):
                fail("no_such_space", f"{x!r} is not a space of the board")
            if x not in board.adj[prev]:
                fail("bad_path", f"{board.name(x)} is not next to {board.name(prev)} (M4)")
            if x in seen:
                fail("bad_path", f"the path visits {board.name(x)} twice (M4, R2)")
            if x in self.marks:
                fail("blocked_path", f"a marker stands on {board.name(x)} (M5, K4)")
            seen.add(x)
            prev = x
        end, k = path[-1], len(path)
        if end not in board.city_set and self.occ.get(end, 0) >= self.limit:
            fail("space_full", f"{board.name(end)} already holds {self.limit} trucks (M6, R3)")
        before = path[-2] if k >= 2 else self.start
        if not self.end_ok(before, end, k, n):
            fail("must_use_full_value",
                 f"stopping on {board.name(end)} after {k} of {n} pips forfeits pips where that is not allowed "
                 f"(M8: only in an own-order city, AD1, or in front of a marker, R23)")


def blocked(ctx: DataSet, s: S, seat: int, dice: list[int]) -> bool:
    """M11 / R26: no legal move for either die (a 6 as 1–6), waiting included."""
    m = Mover(ctx, s, seat)
    if m.can_wait():
        return False
    return not any(m.any_path(n) for n in sorted({v for _, v in values(dice)}))


def targets(ctx: DataSet, s: S, pl: dict[str, Any], room: int) -> set[str]:
    """§18: destinations of loaded orders and start cities of hand orders that fit now.

    Kids variant (an engine decision beyond §18, so that a game of defaults can end):
    a truck with no such city heads for the start cities of the displayed orders, which
    it takes on arrival (Y3)."""
    out = {ctx.orders[o].dest for o in pl["loaded"]}
    out.update(ctx.orders[o].start for o in list(pl.get("hand") or []) + list(pl["open"])
               if ctx.orders[o].goods <= room)
    if not out and s["options"]["kids"]:
        out = {ctx.orders[o].start for o in s["display"]}
    return out


def best_path(ctx: DataSet, s: S, seat: int, n: int, dist: dict[str, int], oc: set[str] | None = None
              ) -> list[str] | None:
    """§18.2 step 4: among the legal paths for n, the one the default takes."""
    m = Mover(ctx, s, seat, oc)
    rank = ctx.board.rank
    best: tuple[Any, ...] | None = None
    choice = None
    found = list(m.paths(n))
    if not found:
        return None
    numeric = [dist[p[-1] if p else m.start] for p in found if (p[-1] if p else m.start) in dist]
    top = min(numeric) if numeric else None
    for p in found:
        end = p[-1] if p else m.start
        d = dist.get(end)
        if top is not None and d != top:
            continue
        k = len(p) if top == 0 else -len(p)
        key = (k, [rank[x] for x in p])
        if best is None or key < best:
            best, choice = key, p
    return choice
