"""The Auf Achse board: cities, connections and the space graph (rules M1–M3).

The board is built from the `cities` and `edges` parts of a data set (see `dataset`).
Each connection of `pips` p contributes p − 1 road spaces `R<id>.<k>`, numbered from its
`from` end (M1); a space is an event space when its index is listed (M2). Spaces are
kept in canonical order (M3): cities in ASCII order of their ids, then road spaces by
(connection id, index).
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Board:
    """A validated space graph with display names."""

    cities: tuple[str, ...]
    city_names: dict[str, str]
    positions: dict[str, tuple[float, float]]
    #: (id, from, to, kind, pips, event indices) in file order.
    edges: tuple[tuple[int, str, str, str, int, tuple[int, ...]], ...]
    spaces: tuple[str, ...]
    rank: dict[str, int]
    adj: dict[str, tuple[str, ...]]
    events: frozenset[str]
    city_set: frozenset[str]
    road_of: dict[str, tuple[int, int]] = field(default_factory=dict)
    edge_by_id: dict[int, tuple[int, str, str, str, int, tuple[int, ...]]] = field(default_factory=dict)
    #: The road spaces, in canonical order.
    roads: tuple[str, ...] = ()
    _cache: dict[tuple[frozenset[str], frozenset[str]], dict[str, int]] = field(default_factory=dict, repr=False,
                                                                               compare=False)
    _reach: dict[tuple[frozenset[str], frozenset[str]], Reach] = field(default_factory=dict, repr=False,
                                                                       compare=False)
    _cities: dict[tuple[frozenset[str], frozenset[int]], tuple[int, ...]] = field(
        default_factory=dict, repr=False, compare=False)
    _rows: dict[tuple[str, frozenset[int]], tuple[int, ...]] = field(default_factory=dict, repr=False, compare=False)
    _graph: dict[str, list[tuple[str, int, int]]] = field(default_factory=dict, repr=False, compare=False)
    _paths: dict[tuple[str, int], tuple[Step, ...]] = field(default_factory=dict, repr=False, compare=False)
    _index: dict[str, int] = field(default_factory=dict, repr=False, compare=False)
    _tables: dict[tuple[str, int], MoveTable] = field(default_factory=dict, repr=False, compare=False)
    _tight_of: dict[str, frozenset[int]] = field(default_factory=dict, repr=False, compare=False)
    _ends: dict[int, tuple[int, int, int]] = field(default_factory=dict, repr=False, compare=False)
    _road_ends: dict[str, tuple[int, int, int, int, int]] = field(default_factory=dict, repr=False,
                                                                  compare=False)
    _quick: dict[tuple[str, frozenset[str]], int] = field(default_factory=dict, repr=False, compare=False)
    _near: dict[str, frozenset[str]] = field(default_factory=dict, repr=False, compare=False)
    _space_rows: dict[str, dict[str, int]] = field(default_factory=dict, repr=False, compare=False)
    _levels: dict[tuple[str, str], tuple[tuple[int, int], ...]] = field(default_factory=dict, repr=False,
                                                                              compare=False)

    def is_city(self, space: str) -> bool:
        return space in self.city_set

    def is_space(self, space: Any) -> bool:
        return isinstance(space, str) and space in self.rank

    def name(self, space: str) -> str:
        """A display name in words: "München", or "the road Hannover–Kassel, 1 space from
        Kassel" (counted from the nearer city; from the connection's first city when both
        are as near)."""
        if space in self.city_set:
            return self.city_names[space]
        where = self.road_of.get(space)
        if where is None:
            return space
        e = self.edge_by_id[where[0]]
        kind = "ferry" if e[3] == "ferry" else "road"
        k, pips = where[1], e[4]
        near, d = (e[1], k) if k <= pips - k else (e[2], pips - k)
        return (f"the {kind} {self.city_names[e[1]]}–{self.city_names[e[2]]}, {d} space{'s' if d != 1 else ''} "
                f"from {self.city_names[near]}")

    def distances(self, sources: list[str] | set[str] | frozenset[str],
                  blocked: frozenset[str] | set[str] = frozenset()) -> dict[str, int]:
        """Steps from the nearest source to every reachable space, avoiding `blocked`
        (cached: the same question is asked often; callers must not change the answer)."""
        key = (frozenset(sources), frozenset(blocked))
        cache = self._cache
        found = cache.get(key)
        if found is not None:
            return found
        if len(cache) > 4096:
            cache.clear()
        adj, rank = self.adj, self.rank
        seen = set(key[1])  # a blocked space is never reached
        dist: dict[str, int] = {}
        level = []
        for x in sources:
            if x in rank and x not in seen:
                seen.add(x)
                dist[x] = 0
                level.append(x)
        d = 0
        while level:
            d += 1
            nxt = []
            for x in level:
                for y in adj[x]:
                    if y not in seen:
                        seen.add(y)
                        dist[y] = d
                        nxt.append(y)
            level = nxt
        cache[key] = dist
        return dist

    def reach(self, sources: frozenset[str], blocked: frozenset[str]) -> Reach:
        """`distances(sources, blocked)` as a lookup (`Reach.get`) for when only a few
        spaces are asked about (the default move asks on every turn). From cities around
        road-space markers it is worked out on the city graph, see `Reach`; other
        questions go to `distances`. Cached like `distances`; the lookup without markers
        (asked for whatever the markers are) is shared by those that cut no shortest
        path between cities, for the spaces of the connections they leave alone."""
        key = (sources, blocked)
        cache = self._reach
        found = cache.get(key)
        if found is not None:
            return found
        if len(cache) > 1024:
            cache.clear()
        if not sources <= self.city_set or not blocked.isdisjoint(self.city_set):
            found = Reach(self, None, {}, dict(self.distances(sources, blocked)))
        else:
            uncut = (sources, _NONE)
            base = cache.get(uncut)
            if base is None:
                base = cache[uncut] = Reach(self, self._city_dist(sources, _NO_EDGES), {})
            cut: dict[int, list[int]] = {}
            for x in blocked:
                where = self.road_of.get(x)
                if where is not None:
                    cut.setdefault(where[0], []).append(where[1])
            cities = base.cities
            assert cities is not None  # a lookup of cities (`Reach`)
            if not cut:
                found = base
            elif any(self._tight(cities, eid) for eid in cut):
                found = Reach(self, self._city_dist(sources, frozenset(cut)), cut)
            else:
                found = Reach(self, cities, cut, base=base)
        cache[key] = found
        return found

    def _city_dist(self, sources: frozenset[str], edges: frozenset[int]) -> tuple[int, ...]:
        """The cities' distances from the nearest source over connections not in `edges`,
        in `cities` order (`_FAR` when unreachable; cached): the nearest source's
        distance, from each source's own (`_city_row`)."""
        key = (sources, edges)
        found = self._cities.get(key)
        if found is None:
            if len(self._cities) > 1024:
                self._cities.clear()
            if not sources:
                found = (_FAR,) * len(self.cities)
            else:
                rows = [self._city_row(c, edges) for c in sources]
                found = rows[0] if len(rows) == 1 else tuple(map(min, *rows))
            self._cities[key] = found
        return found

    def _city_row(self, city: str, cut: frozenset[int] = frozenset()) -> tuple[int, ...]:
        """Every city's distance from `city` over the connections not in `cut`, in `cities`
        order (`_FAR` when unreachable; cached: markers cut the same few connections for
        many turns). Cutting connections none of which lies on a shortest path from `city`
        (see `_tight`) changes no distance, so then the uncut row is the answer."""
        key = (city, cut)
        row = self._rows.get(key)
        if row is None:
            if len(self._rows) > 4096:
                self._rows.clear()
            if cut:
                uncut = self._city_row(city)
                if cut.isdisjoint(self._tight_edges(city, uncut)):
                    row = uncut
            if row is None:
                dist = _shortest(self._city_graph(), frozenset((city,)), cut)
                row = tuple(_FAR if (d := dist.get(c)) is None else d for c in self.cities)
            self._rows[key] = row
        return row

    def _tight_edges(self, city: str, uncut: tuple[int, ...]) -> frozenset[int]:
        """The connections that may lie on a shortest path from `city` (`_tight` of its
        uncut row `uncut`; memoised per city)."""
        found = self._tight_of.get(city)
        if found is None:
            found = self._tight_of[city] = frozenset(e[0] for e in self.edges if self._tight(uncut, e[0]))
        return found

    def _city_index(self) -> dict[str, int]:
        """city -> its place in `cities`."""
        index = self._index
        if not index:
            index.update((c, i) for i, c in enumerate(self.cities))
        return index

    def _tight(self, cities: tuple[int, ...], eid: int) -> bool:
        """Whether connection `eid` may lie on a shortest path of the city distances
        `cities` (in `cities` order): its ends' distances differ by its length. Cutting
        only connections that may not changes no distance."""
        ia, ib, pips = self._edge_ends()[eid]
        da, db = cities[ia], cities[ib]
        return da < _FAR and db < _FAR and abs(da - db) == pips

    def _edge_ends(self) -> dict[int, tuple[int, int, int]]:
        """connection id -> (its ends' places in `cities`, its pips)."""
        ends = self._ends
        if not ends:
            index = self._city_index()
            ends.update((e[0], (index[e[1]], index[e[2]], e[4])) for e in self.edges)
        return ends

    def road_ends(self) -> dict[str, tuple[int, int, int, int, int]]:
        """road space -> (connection id, its index k, the connection's ends' places in
        `cities`, its pips)."""
        found = self._road_ends
        if not found:
            ends = self._edge_ends()
            found.update((x, (eid, k, *ends[eid])) for x, (eid, k) in self.road_of.items())
        return found

    def _city_graph(self) -> dict[str, list[tuple[str, int, int]]]:
        """city -> (neighbour city, pips, connection id) for every connection."""
        graph = self._graph
        if not graph:
            graph.update({c: [] for c in self.cities})
            for eid, a, b, _kind, pips, _ev in self.edges:
                graph[a].append((b, pips, eid))
                graph[b].append((a, pips, eid))
        return graph

    def simple_paths(self, start: str, n: int) -> tuple[Step, ...]:
        """Every path of 1..n spaces from `start` that visits no space twice, in depth-first
        order (a path before its extensions, neighbours in canonical order), each as
        (path, end, end is a city, length, the end's neighbours but the space before it):
        the facts a legality check of the stop needs (memoised per board: moves ask this on
        every turn; markers are applied by the caller, see `Mover.paths`)."""
        key = (start, n)
        found = self._paths.get(key)
        if found is not None:
            return found
        adj, cities = self.adj, self.city_set
        out: list[Step] = []
        path = [start]

        def walk(cur: str, k: int) -> None:
            for y in adj[cur]:
                if y in path:
                    continue
                path.append(y)
                out.append((tuple(path[1:]), y, y in cities, k + 1, tuple(z for z in adj[y] if z != cur)))
                if k + 1 < n:
                    walk(y, k + 1)
                path.pop()

        walk(start, 0)
        found = self._paths[key] = tuple(out)
        return found

    def sure_moves(self, start: str, marks: frozenset[str]) -> int:
        """What a truck on `start` can surely do with markers on `marks`, whoever stands
        where, as bits: bit 0 when it may wait (a marker next to it, M9), bit n (1 to 6)
        when some path of n spaces ends in a city without entering a marker (always a
        legal stop, M5, M6), and bit 7 + n when some such path ends on a road space (a
        legal stop unless that space is full, M6). Every turn asks it
        (`movement.blocked`), so it is memoised
        per board (a pure fact of the board; bounded) by the start and the markers within
        six steps of it, the only ones that matter."""
        if marks:
            near = self._near.get(start)
            if near is None:
                near = self._near[start] = frozenset(x for x, d in self.distances([start]).items() if d <= 6)
            marks = _NONE if marks.isdisjoint(near) else marks & near
        key = (start, marks)
        found = self._quick.get(key)
        if found is None:
            if len(self._quick) > 8192:
                self._quick.clear()
            found = 1 if any(y in marks for y in self.adj[start]) else 0
            for n in range(1, 7):
                t = self.move_table(start, n)
                city, road = t.city_full, t.road_full
                for x in marks:
                    city &= ~t.by_space.get(x, 0)
                    road &= ~t.by_space.get(x, 0)
                if city:
                    found |= 1 << n
                if road:
                    found |= 1 << (7 + n)
            self._quick[key] = found
        return found

    def space_row(self, city: str) -> dict[str, int]:
        """Steps from `city` to every reachable space with no marker anywhere
        (`distances([city])`, kept per board: a pure fact of the board, and there are
        only as many as cities)."""
        found = self._space_rows.get(city)
        if found is None:
            found = self._space_rows[city] = dict(self.distances(frozenset((city,))))
        return found

    def levels(self, start: str, city: str) -> tuple[tuple[int, int], ...]:
        """The entries of the move tables of `start` (`move_table`: every n numbers its
        entries alike) by the distance of their path's end from `city` with no marker
        anywhere (`space_row`), as (distance, entries as bits) in increasing distance;
        ends `city` cannot reach are left out. A fact of the board, memoised per board
        (bounded): the default move asks it on most turns (`movement.Route`)."""
        key = (start, city)
        found = self._levels.get(key)
        if found is None:
            if len(self._levels) > 16384:
                self._levels.clear()
            row = self.space_row(city)
            groups: dict[int, int] = {}
            for i, end in enumerate(self.move_table(start, MAX_STEPS).end_of):
                d = row.get(end)
                if d is not None:
                    groups[d] = groups.get(d, 0) | 1 << i
            found = self._levels[key] = tuple(sorted(groups.items()))
        return found

    def tight_edges(self, city: str) -> frozenset[int]:
        """The connections that may lie on a shortest path from `city` to a city
        (`_tight_edges`): markers on other connections change no city's distance from
        `city` (see `_city_row`)."""
        return self._tight_edges(city, self._city_row(city))

    def move_table(self, start: str, n: int) -> MoveTable:
        """`simple_paths(start, n)` as a `MoveTable` (memoised per board, like it). Its
        entries are numbered as in `simple_paths(start, MAX_STEPS)`, which lists the
        same paths in the same order among the longer ones (a depth-first walk that goes
        deeper), so that the tables of one start for every n share their numbers (and
        `levels`)."""
        found = self._tables.get((start, n))
        if found is None:
            found = self._tables[start, n] = MoveTable(self.simple_paths(start, max(n, MAX_STEPS)), n, self.road_of)
        return found


#: The largest value a die gives (M7): the longest move.
MAX_STEPS = 6

#: One entry of `Board.simple_paths`: (path, end, end is a city, length, the end's
#: neighbours other than the space before it).
Step = tuple[tuple[str, ...], str, bool, int, tuple[str, ...]]


class MoveTable:
    """The entries of `Board.simple_paths(start, n)` as bit sets (bit i is entry i of
    `paths`, in that canonical order, among the longer paths of `Board.move_table`),
    sorted by what a legality check of a move's stop (M5, M6, M8) asks of them, so that
    the legal paths for given markers, own cities and full road spaces are a few
    operations on whole numbers (`movement.Mover.legal`) instead of a
    test of every path. Built once per (start, n) and board; never changed."""

    __slots__ = ("paths", "by_space", "city_full", "road_full", "short_city", "short_side", "road_end", "end_of",
                 "by_length", "edge_end")

    def __init__(self, steps: tuple[Step, ...], n: int, road_of: dict[str, tuple[int, int]]) -> None:
        """The table of the paths of up to n spaces among `steps`, an entry per step
        (the longer paths have no bit in any set)."""
        #: The paths, by entry.
        self.paths: tuple[tuple[str, ...], ...] = tuple(step[0] for step in steps)
        #: space -> the entries whose path enters it (a marker there blocks them, M5).
        self.by_space: dict[str, int] = {}
        #: Entries n spaces long ending in a city (always a legal stop).
        self.city_full = 0
        #: Entries n spaces long ending on a road space (legal unless it is full, M6).
        self.road_full = 0
        #: city -> the shorter entries ending there (legal when it is an own city, M8/AD1).
        self.short_city: dict[str, int] = {}
        #: space -> the shorter entries ending on a road space next to it, not coming
        #: from it (legal in front of a marker there, R23, unless full).
        self.short_side: dict[str, int] = {}
        #: road space -> the entries ending there (excluded when it is full, M6).
        self.road_end: dict[str, int] = {}
        #: The end of each entry's path.
        self.end_of: tuple[str, ...] = tuple(step[1] for step in steps)
        #: k -> the entries k spaces long (index 0 unused).
        self.by_length: list[int] = [0] * (n + 1)
        #: connection id -> the entries ending on one of its road spaces.
        self.edge_end: dict[int, int] = {}
        for i, (path, end, city, k, sides) in enumerate(steps):
            if k > n:
                continue
            bit = 1 << i
            for x in path:
                self.by_space[x] = self.by_space.get(x, 0) | bit
            if city:
                if k == n:
                    self.city_full |= bit
                else:
                    self.short_city[end] = self.short_city.get(end, 0) | bit
            else:
                self.road_end[end] = self.road_end.get(end, 0) | bit
                eid = road_of[end][0]
                self.edge_end[eid] = self.edge_end.get(eid, 0) | bit
                if k == n:
                    self.road_full |= bit
                else:
                    for z in sides:
                        self.short_side[z] = self.short_side.get(z, 0) | bit
            self.by_length[k] |= bit


class Reach:
    """Steps from the nearest source city to a space, avoiding road-space markers: exactly
    the breadth-first `Board.distances`, read off the city graph. A road space lies on
    one connection; a path enters it from one end city through the spaces between, and
    a marker on a connection cuts it. So a city's distance is its shortest distance
    over the connections no marker cuts (`cities`), and a road space's is the nearer of
    its ends' distances plus the spaces to walk from there, counting only an end with
    no marker in between."""

    __slots__ = ("board", "cities", "index", "cut", "known", "base")

    def __init__(self, board: Board, cities: tuple[int, ...] | None, cut: dict[int, list[int]],
                 known: dict[str, int | None] | None = None, base: Reach | None = None) -> None:
        #: cities: the cities' distances in `Board.cities` order (`_FAR` when unreachable),
        #: or None when `known` holds every reachable space's; cut: connection id -> the
        #: indices of its marked spaces; known: the road spaces' distances asked so far
        #: (None when unreachable); base: the same sources' lookup without markers, when
        #: the markers change no city's distance (it answers for the uncut connections).
        self.board, self.cities, self.cut, self.base = board, cities, cut, base
        self.index = board._city_index()
        self.known: dict[str, int | None] = {} if known is None else known

    def get(self, space: str) -> int | None:
        cities = self.cities
        if cities is None:
            return self.known.get(space)
        i = self.index.get(space)
        if i is not None:
            d = cities[i]
            return d if d < _FAR else None
        known = self.known
        if space in known:
            return known[space]
        road = known[space] = self._road(space)  # remembered (None too): the same spaces are asked again
        return road

    def _road(self, space: str) -> int | None:
        where = self.board.road_ends().get(space)
        if where is None:
            return None
        eid, k, ia, ib, pips = where
        marks = self.cut.get(eid)
        if marks is None:
            if self.base is not None:
                return self.base.get(space)
        elif k in marks:
            return None
        assert self.cities is not None
        best = None
        da = self.cities[ia]
        if da < _FAR and (marks is None or min(marks) > k):
            best = da + k
        db = self.cities[ib]
        if db < _FAR and (marks is None or max(marks) < k) and (best is None or db + pips - k < best):
            best = db + pips - k
        return best


#: A distance standing for "not reachable" in `Board._city_row`.
_FAR = 1 << 30
_NONE: frozenset[str] = frozenset()
_NO_EDGES: frozenset[int] = frozenset()


def _shortest(graph: dict[str, list[tuple[str, int, int]]], sources: frozenset[str], cut: Container[int]
              ) -> dict[str, int | None]:
    """Shortest distances from the nearest source over the connections not in `cut`
    (Dijkstra with a bucket per distance: the weights are small whole numbers)."""
    dist: dict[str, int | None] = {}
    buckets: list[list[str]] = [list(sources)]
    d = 0
    while d < len(buckets):
        for c in buckets[d]:
            if c in dist:
                continue
            dist[c] = d
            for y, w, eid in graph[c]:
                if y not in dist and eid not in cut:
                    while len(buckets) <= d + w:
                        buckets.append([])
                    buckets[d + w].append(y)
        d += 1
    return dist


def road_id(edge: int, k: int) -> str:
    return f"R{edge}.{k}"


def build_board(cities: list[dict[str, Any]], edges: list[dict[str, Any]]) -> Board:
    """The space graph of already-checked city and edge entries."""
    city_ids = sorted(c["id"] for c in cities)
    names = {c["id"]: str(c.get("name") or c["id"]) for c in cities}
    positions = {c["id"]: (float(c["x"]), float(c["y"])) for c in cities}
    adj: dict[str, list[str]] = {c: [] for c in city_ids}
    roads: list[tuple[int, int, str]] = []
    events: set[str] = set()
    road_of: dict[str, tuple[int, int]] = {}
    etuples = []
    for e in edges:
        eid, a, b, p = int(e["id"]), e["from"], e["to"], int(e["pips"])
        chain = [a] + [road_id(eid, k) for k in range(1, p)] + [b]
        for k in range(1, p):
            sid = road_id(eid, k)
            roads.append((eid, k, sid))
            adj[sid] = []
            road_of[sid] = (eid, k)
            if k in e["event_spaces"]:
                events.add(sid)
        for x, y in zip(chain, chain[1:], strict=False):
            adj[x].append(y)
            adj[y].append(x)
        etuples.append((eid, a, b, str(e.get("kind", "road")), p, tuple(e["event_spaces"])))
    spaces = tuple(city_ids) + tuple(s for _, _, s in sorted(roads))
    rank = {s: i for i, s in enumerate(spaces)}
    return Board(
        cities=tuple(city_ids), city_names=names, positions=positions, edges=tuple(etuples), spaces=spaces,
        rank=rank, adj={s: tuple(sorted(set(v), key=rank.__getitem__)) for s, v in adj.items()},
        events=frozenset(events), city_set=frozenset(city_ids), road_of=road_of,
        edge_by_id={t[0]: t for t in etuples}, roads=spaces[len(city_ids):],
    )
