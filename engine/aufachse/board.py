"""The Auf Achse board: cities, connections and the space graph (rules M1–M3).

The board is built from the `cities` and `edges` parts of a data set (see `dataset`).
Each connection of `pips` p contributes p − 1 road spaces `R<id>.<k>`, numbered from its
`from` end (M1); a space is an event space when its index is listed (M2). Spaces are
kept in canonical order (M3): cities in ASCII order of their ids, then road spaces by
(connection id, index).
"""

from __future__ import annotations

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
    _cache: dict[tuple[frozenset[str], frozenset[str]], dict[str, int]] = field(default_factory=dict, repr=False,
                                                                               compare=False)
    _nbr: list[list[int]] = field(default_factory=list, repr=False, compare=False)

    def is_city(self, space: str) -> bool:
        return space in self.city_set

    def is_space(self, space: Any) -> bool:
        return isinstance(space, str) and space in self.rank

    def name(self, space: str) -> str:
        """A display name: "München", or "the road Hannover–Kassel, space 2"."""
        if space in self.city_set:
            return self.city_names[space]
        where = self.road_of.get(space)
        if where is None:
            return space
        e = self.edge_by_id[where[0]]
        kind = "ferry" if e[3] == "ferry" else "road"
        return f"{space} ({kind} {self.city_names[e[1]]}–{self.city_names[e[2]]}, space {where[1]})"

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
        nbr = self._nbr
        if not nbr:
            nbr.extend([self.rank[y] for y in self.adj[x]] for x in self.spaces)
        blk = {self.rank[b] for b in blocked if b in self.rank}
        level = [self.rank[s] for s in sources if s in self.rank and self.rank[s] not in blk]
        far = [-1] * len(self.spaces)
        for x in level:
            far[x] = 0
        d = 0
        while level:
            d += 1
            nxt = []
            for x in level:
                for y in nbr[x]:
                    if far[y] < 0 and y not in blk:
                        far[y] = d
                        nxt.append(y)
            level = nxt
        spaces = self.spaces
        dist = {spaces[i]: v for i, v in enumerate(far) if v >= 0}
        cache[key] = dist
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
        edge_by_id={t[0]: t for t in etuples},
    )
