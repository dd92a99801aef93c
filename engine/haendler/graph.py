"""Where carts and the messenger can go: H-62 to H-64, H-71 and H-76 on the board graph.

Functions take the board and plain positions and return legal end nodes in board order
(the depth-first order of H-76), so the first entry of `cart_ends` is the end of "the
first route in board order that yields a move" (the D3-MOVE default).

Both searches depend only on the board and a start, so their board-only part is
computed once per process and board (`board.key`): every movement request lists the
ends of each cart for every value it could move, and every movement order is checked
against them.
"""

from __future__ import annotations

from collections.abc import Collection

from engine.haendler.board import Board

_REACHES: dict[tuple[str, str, int], tuple[tuple[str, ...], ...]] = {}
_MESSENGER: dict[tuple[str, str, tuple[int, ...]], tuple[str, ...]] = {}


def reaches(board: Board, start: str, value: int) -> tuple[tuple[str, ...], ...]:
    """Every route's reach from `start` for a move of `value`, in board order (H-63, H-76).

    A reach is the route's first `value` nodes, cut at the first city. It depends only on
    the board, so it is computed once per (board, start, value)."""
    key = (board.key, start, value)
    found = _REACHES.get(key)
    if found is not None:
        return found
    out: list[tuple[str, ...]] = []
    path: list[str] = []

    def walk(node: str) -> None:
        for nxt in board.succ[node]:
            path.append(nxt)
            if len(path) == value or board.is_city(nxt):
                out.append(tuple(path))
            else:
                walk(nxt)
            path.pop()

    if value > 0:
        walk(start)
    _REACHES[key] = found = tuple(out)
    return found


def cart_ends(board: Board, start: str, value: int, occupied: Collection[str]) -> list[str]:
    """Legal end nodes of a cart move of `value` from `start` (H-63), in board order.

    Along each route the cart ends on the furthest node of its reach that no other cart
    holds; a reach with no free node yields no move. `occupied` holds the other carts'
    positions."""
    found = _REACHES.get((board.key, start, value))  # `reaches`, without a call when known
    if found is None:
        found = reaches(board, start, value)
    ends: list[str] = []
    for reach in found:
        for node in reversed(reach):
            if node not in occupied:
                if node not in ends:
                    ends.append(node)
                break
    return ends


def messenger_ends(board: Board, start: str, spaces: tuple[int, ...]) -> list[str]:
    """Spaces the messenger can end on moving exactly k spaces, k in `spaces` (H-71).

    Every step of one move goes the same way: all with the road direction or all
    against it. It never enters a city and must end off its start space.
    """
    key = (board.key, start, spaces)
    found = _MESSENGER.get(key)
    if found is None:
        ends: list[str] = []
        for graph in (board.succ, board.pred):
            frontier = [start]
            for k in range(1, max(spaces, default=0) + 1):
                frontier = [n for f in frontier for n in graph[f] if not board.is_city(n)]
                if k in spaces:
                    ends.extend(n for n in frontier if n != start and n not in ends)
        _MESSENGER[key] = found = tuple(ends)
    return list(found)
