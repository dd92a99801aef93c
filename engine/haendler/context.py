"""Shared helpers of the Die Händler rules: the data a state refers to, seats and money.

`Ctx` bundles the board and components a state was set up with; `ctx_of(state)` finds
it (cached per process by the board's content key). The small helpers here are used by
every phase module so each rule is written once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.core.errors import IllegalOrder
from engine.haendler.board import Board, load_board
from engine.haendler.components import Components, components

S = dict[str, Any]


@dataclass(frozen=True)
class Ctx:
    board: Board
    comp: Components


_CTX: dict[str, Ctx] = {}


def ctx_of(s: S) -> Ctx:
    ctx = _CTX.get(s["board_key"])
    if ctx is None:
        ctx = Ctx(load_board(s["board"]), components())
        _CTX[s["board_key"]] = ctx
    return ctx


_TURNS = {(n, start): tuple((start + k) % n for k in range(n)) for n in range(1, 9) for start in range(n)}


def turn_order(s: S) -> tuple[int, ...]:
    """The start player, then the following seats clockwise (glossary)."""
    return _TURNS[s["seats"], s["start"]]


def has(s: S, seat: int, ability: str) -> bool:
    return ability in s["players"][seat]["abilities"]


def hand_size(s: S, seat: int) -> int:
    return sum(s["players"][seat]["hand"].values())


def all_played(ctx: Ctx, s: S, kind: str) -> bool:
    """Whether every card of `kind` is out of the deck and the hands (public: H-13)."""
    gone: int = s["played"].get(kind, 0) + s["removed"].get(kind, 0)
    return gone >= ctx.comp.influence[kind]


def buy_price(ctx: Ctx, s: S, good: str) -> int:
    return ctx.board.price_rows[int(s["prices"][good]) - 1][0]


def sell_price(ctx: Ctx, s: S, good: str) -> int:
    return ctx.board.price_rows[int(s["prices"][good]) - 1][1]


def level_price(ctx: Ctx, s: S) -> int:
    return ctx.board.arrival_level_price[s["arrivals"]]


def need(cond: bool, code: str, message: str, **details: Any) -> None:
    """Raise `IllegalOrder(code, message)` unless `cond` holds.

    The message is built even when `cond` holds, so the checks that every order of a
    bot game runs are written `if ...: raise IllegalOrder(...)` instead."""
    if not cond:
        raise IllegalOrder(code, message, **details)


def shape(order: Any, key: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
    """`order[key]` checked to be of `kind` (bools are not ints); the default if absent."""
    if type(order) is not dict:
        # `shape` also reads the entries of lists (each good of a buy, each step of a
        # move), so say what was expected where, not just "an order is an object".
        got = {list: "an array", str: "a string", bool: "true/false", int: "a number", float: "a number"}
        raise IllegalOrder("malformed_order",
                           f"expected a JSON object with a {key!r} field, got {got.get(type(order), 'null')}",
                           field=key)
    value = order.get(key)
    if value is None:
        return default
    if not isinstance(value, kind) or (value is True or value is False) and kind is int:
        name = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise IllegalOrder("malformed_order", f"{key!r} must be a {name}", field=key)
    return value


def amount(ctx: Ctx, value: Any, field: str) -> int:
    """A money amount chosen by a player: an integer >= 0 in steps of the money step."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise IllegalOrder("malformed_order", f"{field} must be an integer", field=field)
    step = ctx.comp.money_step
    if value < 0 or value % step:
        raise IllegalOrder("bad_amount", f"{field} must be 0 or more in steps of {step}", field=field)
    return int(value)


def pay(s: S, seat: int, value: int) -> None:
    s["players"][seat]["money"] -= value
    assert s["players"][seat]["money"] >= 0, "money went negative: a validation gap"


def gain(s: S, seat: int, value: int) -> None:
    s["players"][seat]["money"] += value


def store_add(s: S, seat: int, city: str, good: str, k: int) -> None:
    """Add k (or remove -k) goods to seat's warehouse in city. `copy_state` shares the
    warehouses between states, so this, their only writer, copies on write."""
    store = dict(s["stores"][seat])
    stock = store[city] = dict(store.get(city, {}))
    stock[good] = stock.get(good, 0) + k
    if stock[good] == 0:
        del stock[good]
        if not stock:
            del store[city]
    s["stores"][seat] = store


def store_count(s: S, seat: int, city: str, good: str) -> int:
    return int(s["stores"][seat].get(city, {}).get(good, 0))


def own(s: S, key: str) -> dict[str, Any]:
    """Give the state a private copy of the shared map `s[key]` before writing to it.

    `copy_state` shares `stock`, `prices`, `bonus`, `deck` and `played` with the state a
    resolve started from; their writers call this first (copy on write)."""
    mine: dict[str, Any] = dict(s[key])
    s[key] = mine
    return mine


def hand_add(s: S, seat: int, kind: str, k: int) -> None:
    """Add k (or remove -k) influence cards of `kind` to seat's hand. `copy_state` shares
    the hands between states, so this, their only writer, copies on write."""
    player = s["players"][seat]
    hand = player["hand"] = dict(player["hand"])
    hand[kind] = hand.get(kind, 0) + k
    if not hand[kind]:
        del hand[kind]


def play_card(s: S, seat: int, kind: str, k: int = 1) -> None:
    hand_add(s, seat, kind, -k)
    played = own(s, "played")
    played[kind] = played.get(kind, 0) + k


def counts(items: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return out


def private(seat: int) -> list[int]:
    """The audience of an event only `seat` may see."""
    return [seat]



def copy_state(s: S) -> S:
    """A copy of a Die Händler state for resolve to work on, written for its layout.

    Resolve runs it on every step, so it copies only what is changed in place: each
    seat's and each cart's own fields, the list of warehouses, the flow cursor `at` and
    the ability auction. Everything else is shared with the input and never changed in
    place; its writers replace it: `options`, `board`, `removed`, `tariffs`, `pending`,
    `blocks`, `pool`, each seat's `tiles`, `abilities` and `hand` (`hand_add` copies on
    write), each seat's warehouses (`store_add` copies on write), each cart's `rows`
    (`load_row` copies on write), and the maps `stock`, `prices`, `bonus`, `deck` and
    `played` (writers call `own` first). A field added to the state must be listed
    here; the contract tests check that nothing a resolve was given ever changes."""
    c = s.copy()
    c["players"] = [p.copy() for p in s["players"]]
    c["stores"] = s["stores"].copy()
    c["at"] = s["at"].copy()
    c["carts"] = [cart.copy() for cart in s["carts"]]
    if s["auction"] is not None:
        c["auction"] = {**s["auction"], "passed": list(s["auction"]["passed"])}
    return c
