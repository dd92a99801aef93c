"""Movement (rules §8): the dice values, legal paths, waiting, blocked trucks, and the
path the default move takes (§18.2).

Everything here reads only public facts plus the moving seat's own hand, through keys a
seat's own view also has, so bots can call it on their view.
"""

from __future__ import annotations

from collections.abc import Iterator
from operator import itemgetter
from typing import Any

from engine.aufachse.board import MoveTable, Reach
from engine.aufachse.context import fail, markers, own_cities
from engine.aufachse.dataset import DataSet

S = dict[str, Any]
DIE_NAMES = ("A", "B")


def values_by_die(dice: list[int]) -> dict[str, list[int]]:
    """`values` as die -> its values: {"A": [...], "B": [...]}."""
    a, b = dice
    return {"A": [1, 2, 3, 4, 5, 6] if a == 6 else [a], "B": [1, 2, 3, 4, 5, 6] if b == 6 else [b]}


def values(dice: list[int]) -> tuple[tuple[str, int], ...]:
    """Every (die, N) the roll allows (M7): a face 1–5 is N, a 6 is any N from 1 to 6."""
    a, b = dice
    found = _VALUES.get((a, b))
    if found is None:
        out: list[tuple[str, int]] = []
        for name, face in zip(DIE_NAMES, dice, strict=True):
            out += [(name, v) for v in (range(1, 7) if face == 6 else (face,))]
        found = _VALUES[a, b] = tuple(out)
    return found


#: `values` by roll (a plain memo of the few rolls there are).
_VALUES: dict[tuple[int, int], tuple[tuple[str, int], ...]] = {}


def others_on(s: S, seat: int) -> dict[str, int]:
    """How many trucks of other seats stand on each space."""
    out: dict[str, int] = {}
    for q, pl in enumerate(s["players"]):
        at = pl["at"]
        if at is not None and q != seat:
            out[at] = out.get(at, 0) + 1
    return out


_AT = itemgetter("at")


class Mover:
    """The facts a legality check of one seat's move needs, each gathered once, when
    first needed."""

    __slots__ = ("ctx", "board", "start", "marks", "limit", "_s", "_seat", "_occ", "_oc")

    def __init__(self, ctx: DataSet, s: S, seat: int, oc: set[str] | None = None) -> None:
        self.ctx = ctx
        self.board = ctx.board
        self.start: str = s["players"][seat]["at"]
        self.marks = markers(s)
        self.limit = ctx.comp.road_space_limit
        self._s, self._seat = s, seat
        self._occ: dict[str, int] | None = None
        self._oc = oc

    @property
    def occ(self) -> dict[str, int]:
        """How many trucks of other seats stand on each space."""
        if self._occ is None:
            self._occ = others_on(self._s, self._seat)
        return self._occ

    @property
    def oc(self) -> set[str]:
        """OC of the moving seat (AD1)."""
        if self._oc is None:
            self._oc = own_cities(self.ctx, self._s["players"][self._seat])
        return self._oc

    def can_wait(self) -> bool:
        """M9 / AD4: waiting is legal only next to a marker."""
        return not self.marks.isdisjoint(self.board.adj[self.start])

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
        """Every legal path (s1..sk) for value n, waiting ([]) first when allowed, in
        depth-first order, each a fresh list."""
        if self.can_wait():
            yield []
        for path in self.moves(n):
            yield list(path)

    def legal(self, n: int) -> int:
        """The entries of `Board.move_table(start, n)` that are legal moves (as bits): the
        board's simple paths that enter no marker (M5) and may stop where they end (M6,
        M8; `end_ok`, on whole sets of paths at once)."""
        t = self.board.move_table(self.start, n)
        legal = t.city_full | t.road_full
        if t.short_city:
            short = t.short_city
            for c in self.oc:
                legal |= short.get(c, 0)
        marks = self.marks
        if marks:
            side, by_space = t.short_side, t.by_space
            for x in marks:
                legal |= side.get(x, 0)
            for x in marks:
                legal &= ~by_space.get(x, 0)
        for y in self.full():
            legal &= ~t.road_end.get(y, 0)
        return legal

    def full(self) -> list[str]:
        """The spaces on which trucks of other seats leave no room (M6): none when no
        two of them share a space and two may (the usual case, found without counting)."""
        if self._occ is None:
            ats = list(map(_AT, self._s["players"]))
            del ats[self._seat]
            if self.limit > 1 and len(set(ats)) == len(ats):
                return []
        limit = self.limit
        return [y for y, count in self.occ.items() if count >= limit]

    def moves(self, n: int) -> list[tuple[str, ...]]:
        """`paths(n)` without waiting, as shared tuples, in canonical order (`legal`)."""
        legal = self.legal(n)
        paths = self.board.move_table(self.start, n).paths
        out = []
        while legal:
            low = legal & -legal
            out.append(paths[low.bit_length() - 1])
            legal ^= low
        return out

    def any_path(self, n: int) -> bool:
        """Whether `paths(n)` yields anything."""
        return self.can_wait() or self.any_move(n)

    def any_move(self, n: int) -> bool:
        """Whether `moves(n)` has any path: first whether a path of the whole value ends
        in a city (always a legal stop) without entering a marker, the usual answer."""
        t = self.board.move_table(self.start, n)
        full = t.city_full
        if full:
            by_space = t.by_space
            for x in self.marks:
                full &= ~by_space.get(x, 0)
            if full:
                return True
        return bool(self.legal(n))

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
        rank = board.rank
        for x in path:
            if not (isinstance(x, str) and x in rank):  # `board.is_space`, inlined
                fail("no_such_space", "the path names a space that is not on the board (M4)")
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
    """M11 / R26: no legal move for either die (a 6 as 1–6), waiting included.

    Asked on every turn, so first the usual cases, facts of the board alone
    (`Board.sure_moves`): the truck may wait, or can stop after the full value of an
    allowed N in a city (always a legal stop) without entering a marker; or on a road
    space, when no two other trucks share a space (so none is full)."""
    a, b = dice
    need = 0b1111110 if a == 6 or b == 6 else (1 << a) | (1 << b)
    marks = markers(s)
    players = s["players"]
    start = players[seat]["at"]
    sure = ctx.board.sure_moves(start, marks)
    if sure & (need | 1):
        return False
    if sure & (need << 7) and ctx.comp.road_space_limit > 1:
        ats = list(map(_AT, players))
        del ats[seat]
        if len(set(ats)) == len(ats):
            return False
    m = Mover(ctx, s, seat)
    return not any(m.legal(n) for n in range(1, 7) if need >> n & 1)


def targets(ctx: DataSet, s: S, pl: dict[str, Any], room: int) -> set[str]:
    """§18: destinations of loaded orders and start cities of hand orders that fit now.

    Kids variant (an engine decision beyond §18, so that a game of defaults can end):
    a truck with no such city heads for the start cities of the displayed orders, which
    it takes on arrival (Y3)."""
    orders = ctx.orders
    out = set()
    for o in pl["loaded"]:
        out.add(orders[o].dest)
    for cards in (pl.get("hand") or (), pl["open"]):
        for o in cards:
            card = orders[o]
            if card.goods <= room:
                out.add(card.start)
    if not out and s["options"]["kids"]:
        out = {ctx.orders[o].start for o in s["display"]}
    return out


def best_path(ctx: DataSet, s: S, seat: int, n: int, dist: Reach, oc: set[str] | None = None
              ) -> list[str] | None:
    """§18.2 step 4: among the legal paths for n, the one the default takes: the smallest
    Dist at the end (when any end has one), then the longest path (the shortest when that
    Dist is 0), then the first in canonical order of its spaces.

    The candidates (waiting, then `Mover.moves`) come in that canonical order already:
    `Board.simple_paths` walks depth first through neighbours in canonical order, which
    lists paths in lexicographic order of their spaces' ranks, a path before its
    extensions (and waiting, the empty path, first of all). So the first candidate with
    the best Dist and length is the one to take: found on the bit sets of the board's
    `MoveTable` (the legal paths to the ends with the best Dist, then of each length),
    asking Dist only of the ends of legal paths (a third of them, usually)."""
    return _best_path(Mover(ctx, s, seat, oc), n, dist)


def _best_path(m: Mover, n: int, dist: Reach) -> list[str] | None:
    """`best_path` with the mover's facts gathered already."""
    legal = m.legal(n)
    wait = m.can_wait()
    get = dist.get
    wait_d = get(m.start) if wait else None
    if not legal:
        return [] if wait else None
    t = m.board.move_table(m.start, n)
    end_of = t.end_of
    top, best = _nearest(legal, get, end_of, wait_d, 0)
    return _pick(t, n, legal, wait, wait_d, top, best)


def _nearest(bits: int, dist: Any, end_of: Any, top: int | None, best: int) -> tuple[int | None, int]:
    """Fold the paths of the bit set `bits` into (`top`, `best`): the smallest Dist of
    their ends so far (`dist(end)`; an end with none is skipped) and the bit set of the
    paths whose end has it."""
    while bits:
        low = bits & -bits
        bits ^= low
        d = dist(end_of[low.bit_length() - 1])
        if d is None:
            continue
        if top is None or d < top:
            top, best = d, low
        elif d == top:
            best |= low
    return top, best


def _pick(t: MoveTable, n: int, legal: int, wait: bool, wait_d: int | None, top: int | None, best: int
          ) -> list[str] | None:
    """The end of `best_path`: `top` is the smallest Dist of a legal end or of waiting
    (None when none has one) and `best` the legal entries whose end has it."""
    if top is None:  # no Dist anywhere: every candidate counts
        best, wait_ok = legal, wait
    else:
        wait_ok = wait and wait_d == top
    if top == 0:  # the shortest path, waiting (the empty one) first
        if wait_ok:
            return []
        lengths = range(1, n + 1)
    else:  # the longest path, waiting last
        lengths = range(n, 0, -1)
    by_length = t.by_length
    for k in lengths:
        hit = best & by_length[k]
        if hit:
            return list(t.paths[(hit & -hit).bit_length() - 1])
    return [] if wait_ok else None


class Route:
    """`best_path` of one seat toward the target cities `sources` (Dist of §18 is the
    distance to the nearest of them around the markers) for any n, without asking Dist
    of every legal end.

    Dist is the smallest of the distances from each target city c, and a marker never
    makes a distance shorter. The board keeps the entries of each (start, n) grouped by
    the distance of their end from c with no marker anywhere (`Board.levels`), so the
    groups are read in increasing distance, and a group farther than the best Dist found
    so far ends the search for c. Without markers a group's distance is the Dist from c.
    A marker changes the distance from c only to the road spaces of its own connection,
    and to other spaces only when its connection may lie on a shortest path from c to a
    city (`Board.tight_edges`); there the distance from c is asked of the entries of the
    group one by one (`Reach` of c's distances around the markers, exact like
    `Board.distances`). Other questions (a source that is not a city, a marker on a
    city) go to `best_path` on the whole lookup (tests/engine/aufachse/test_fast_paths.py
    compares the two)."""

    __slots__ = ("m", "sources", "marks", "cut", "edges", "_reach", "_rows")

    def __init__(self, ctx: DataSet, s: S, seat: int, sources: frozenset[str], oc: set[str] | None = None) -> None:
        m = self.m = Mover(ctx, s, seat, oc)
        self.sources = sources
        marks = self.marks = m.marks
        board = m.board
        self._reach: Reach | None = None
        self._rows: list[tuple[str, Reach | None]] | None = None
        #: connection id -> the indices of its marked spaces (None: ask the whole lookup).
        self.cut: dict[int, list[int]] | None = {}
        self.edges: frozenset[int] = frozenset()
        if not sources <= board.city_set:
            self.cut = None
        elif marks:
            cut: dict[int, list[int]] = {}
            road_of = board.road_of
            for x in marks:
                where = road_of.get(x)
                if where is None:
                    self.cut = None
                    return
                cut.setdefault(where[0], []).append(where[1])
            self.cut, self.edges = cut, frozenset(cut)

    def reach(self) -> Reach:
        """The whole Dist lookup (`Board.reach`), built on first use."""
        if self._reach is None:
            self._reach = self.m.board.reach(self.sources, self.marks)
        return self._reach

    def rows(self) -> list[tuple[str, Reach | None]]:
        """(target city, None when no marker changes its distance to any space off the
        marked connections, else the lookup of its distances around the markers)."""
        rows = self._rows
        if rows is None:
            board, cut, edges = self.m.board, self.cut, self.edges
            if not edges:
                rows = self._rows = [(c, None) for c in self.sources]
                return rows
            rows = self._rows = []
            tight = board._tight_of  # `board.tight_edges`, when known
            for c in self.sources:
                if edges.isdisjoint(tight.get(c) or board.tight_edges(c)):
                    rows.append((c, None))
                else:
                    assert cut is not None
                    rows.append((c, Reach(board, board._city_row(c, edges), cut)))
        return rows

    def path(self, n: int) -> list[str] | None:
        """`best_path(ctx, s, seat, n, Board.reach(sources, markers), oc)`."""
        cut = self.cut
        m = self.m
        if cut is None:
            return _best_path(m, n, self.reach())
        legal = m.legal(n)
        wait = m.can_wait()
        board = m.board
        start = m.start
        rows = self.rows()
        wait_d = None
        if wait:  # (only next to a marker)
            for c, exact in rows:
                d = (exact if exact is not None else Reach(board, board._city_row(c), cut)).get(start)
                if d is not None and (wait_d is None or d < wait_d):
                    wait_d = d
        if not legal:
            return [] if wait else None
        t = board.move_table(start, n)
        top = wait_d
        best = 0  # the legal entries whose end has the smallest Dist so far (`top`)
        odd = 0  # the legal entries ending on a marked connection
        if cut:
            edge_end = t.edge_end
            for eid in cut:
                odd |= edge_end.get(eid, 0)
            odd &= legal
        levels = board.levels
        end_of = t.end_of
        for c, exact in rows:
            ask = legal if exact is not None else odd  # the entries whose distance may differ
            for d, bits in levels(start, c):
                if top is not None and d > top:
                    break
                hit = bits & legal
                if not hit:
                    continue
                sure = hit & ~ask
                if sure:  # the group's distance is theirs
                    if top is None or d < top:
                        top, best = d, sure
                    else:
                        best |= sure
                hit &= ask
                if hit:
                    get = (exact if exact is not None else Reach(board, board._city_row(c), cut)).get
                    top, best = _nearest(hit, get, end_of, top, best)
        return _pick(t, n, legal, wait, wait_d, top, best)
