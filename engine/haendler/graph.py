"""Where carts and the messenger can go: H-62 to H-64, H-71 and H-76 on the board graph.

Functions take the board and plain positions and return legal end nodes in board order
(the depth-first order of H-76), so the first entry of `cart_ends` is the end of "the
first route in board order that yields a move" (the D3-MOVE default).
"""

from __future__ import annotations

from collections.abc import Collection

from engine.haendler.board import Board

_ENDS: dict[tuple[str, str, int, frozenset[str]], list[str]] = {}


def cart_ends(board: Board, start: str, value: int, occupied: Collection[str]) -> list[str]:
    """`_cart_ends`, memoised: the answer depends only on the board and the arguments."""
    key = (board.key, start, value, frozenset(occupied))
    found = _ENDS.get(key)
    if found is None:
        if len(_ENDS) > 200_000:
            _ENDS.clear()
        found = _ENDS[key] = _cart_ends(board, start, value, key[3])
    return list(found)


def _cart_ends(board: Board, start: str, value: int, occupied: Collection[str]) -> list[str]:
    """Legal end nodes of a cart move of `value` from `start` (H-63), in board order.

    Along each route the reach is its first `value` nodes, cut at the first city. The
    cart ends on the furthest node of the reach that no other cart holds; a reach with
    no free node yields no move. `occupied` holds the other carts' positions.
    """
    ends: list[str] = []
    if value <= 0:
        return ends
    path: list[str] = []

    def walk(node: str) -> None:
        for nxt in board.succ[node]:
            path.append(nxt)
            if len(path) == value or board.is_city(nxt):
                for k in range(len(path) - 1, -1, -1):
                    if path[k] not in occupied:
                        if path[k] not in ends:
                            ends.append(path[k])
                        break
            else:
                walk(nxt)
            path.pop()

    walk(start)
    return ends


def messenger_ends(board: Board, start: str, spaces: Collection[int]) -> list[str]:
    """Spaces the messenger can end on moving exactly k spaces, k in `spaces` (H-71).

    Every step of one move goes the same way: all with the road direction or all
    against it. It never enters a city and must end off its start space.
    """
    ends: list[str] = []
    for graph in (board.succ, board.pred):
        frontier = [start]
        for k in range(1, max(spaces, default=0) + 1):
            frontier = [n for f in frontier for n in graph[f] if not board.is_city(n)]
            if k in spaces:
                ends.extend(n for n in frontier if n != start and n not in ends)
    return ends
