"""Builders for Fantasy Business rules tests: a table in a chosen situation, one step.

Tests set up a real game, edit the plain-JSON state to the situation a rule or worked
example describes (items, hands, crowns, the deck's top cards, the marker), let the real
flow run to the next decision (`table`, `run_to`), and resolve orders through the real
`validate`/`resolve` path (`act`, `window`).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.core import IllegalOrder, get
from engine.fantasy import flow
from engine.fantasy.components import components
from engine.fantasy.state import sort_cards

GAME = get("fantasy")
C = components()
# Miranda, Christopher, Henry, Jack, Courtney, Helen (rules §15)
MIR, CHR, HEN, JAC, COU, HEL = 0, 1, 2, 3, 4, 5
S = dict[str, Any]


def table(seats: int = 4, marker: int = 0, *, crowns: dict[int, int] | None = None,
          hands: dict[int, list[str]] | None = None, items: dict[int, list[str]] | None = None,
          deck: list[str] | None = None, options: dict[str, Any] | None = None, at: str = "round",
          rnd: int = 1) -> S:
    """A game at the start of round `rnd` (or at cursor `at`) with the given holdings; the
    deck's top cards are `deck`, the rest follow in canonical order."""
    s = GAME.setup(seats, options or {}, 1)
    s["marker"] = s["afb"] = marker
    s["round"] = rnd
    placed: list[str] = []
    for seat, cards in (items or {}).items():
        s["players"][seat]["items"] = sort_cards(list(cards))
        placed += cards
    for seat, cards in (hands or {}).items():
        s["players"][seat]["hand"] = sort_cards(list(cards))
        placed += cards
    for seat, n in (crowns or {}).items():
        s["players"][seat]["crowns"] = n
    top = list(deck or [])
    rest = [c for c in C.deck if c not in placed and c not in top]
    s["deck"] = top + rest
    s["at"], s["pending"], s["auction"] = at, None, None
    s["phase"] = {"prices": "prices", "income": "income"}.get(at, "offer")
    flow.advance(s, [])
    return s


def run_to(s: S, at: str) -> list[dict[str, Any]]:
    """Put the cursor on `at` and let the real flow run to the next decision."""
    ev: list[dict[str, Any]] = []
    if at != "queue":
        s["auction"] = None
    s["at"], s["pending"] = at, None
    flow.advance(s, ev)
    return ev


def act(s: S, seat: int, order: dict[str, Any]) -> tuple[S, list[dict[str, Any]]]:
    """One sequential step by `seat`."""
    assert s["pending"]["seats"] == [seat], (s["pending"], seat)
    return GAME.step(s, {seat: order})


def window(s: S, plays: dict[int, list[dict[str, Any]]] | None = None,
           extra: dict[int, dict[str, Any]] | None = None) -> tuple[S, list[dict[str, Any]]]:
    """Close a sealed step: the given plays, a pass (default order) for every other asked seat."""
    orders = {seat: GAME.default_order(s, seat) for seat in s["pending"]["seats"]}
    for seat, p in (plays or {}).items():
        orders[seat] = {"play": p}
    for seat, o in (extra or {}).items():
        orders[seat] = o
    return GAME.step(s, orders)


def pass_all(s: S, until: str | None = None, limit: int = 500) -> tuple[S, list[dict[str, Any]]]:
    """Default orders until the pending kind is `until` (or the game ends)."""
    events: list[dict[str, Any]] = []
    for _ in range(limit):
        if s["over"] or (until is not None and s["pending"]["kind"] == until):
            return s, events
        s, ev = GAME.step(s, {seat: GAME.default_order(s, seat) for seat in s["pending"]["seats"]})
        events += ev
    raise AssertionError("did not get there")


def finish_round(s: S, limit: int = 500) -> tuple[S, list[dict[str, Any]]]:
    """Default orders until the next round has begun (or the game is over)."""
    events: list[dict[str, Any]] = []
    r0 = s["round"]
    for _ in range(limit):
        if s["over"] or s["round"] != r0:
            return s, events
        s, ev = GAME.step(s, {seat: GAME.default_order(s, seat) for seat in s["pending"]["seats"]})
        events += ev
    raise AssertionError("the round did not end")


def illegal(s: S, seat: int, order: dict[str, Any], code: str) -> IllegalOrder:
    """`order` is refused with `code` and the state is untouched."""
    before = json.dumps(s, sort_keys=True)
    with pytest.raises(IllegalOrder) as info:
        GAME.validate(s, seat, order)
    assert info.value.code == code, (info.value.code, info.value.message)
    assert json.dumps(s, sort_keys=True) == before
    return info.value


def of(events: list[dict[str, Any]], type_: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == type_]


def crowns(s: S) -> list[int]:
    return [p["crowns"] for p in s["players"]]


def income_round(seats: int, items: dict[int, list[str]], sheets: dict[int, dict[str, int]], afb: int = 0,
                 options: dict[str, Any] | None = None, start: dict[int, int] | None = None,
                 reveal: dict[str, Any] | None = None) -> tuple[S, list[int], list[dict[str, Any]]]:
    """Run one income phase (§10) with these items and final sheets; returns the state,
    each seat's income (crown change) and the events."""
    s = table(seats, afb, items=items, options=options, crowns=start or {p: 0 for p in range(seats)})
    s["rounds"] = 10
    for seat, sheet in sheets.items():
        s["players"][seat]["sheet"] = sheet
    if reveal:
        s["reveal"] = {"os": [], "bc": [], "ra": [], **reveal}
    before = crowns(s)
    s["phase"] = "income"
    ev = run_to(s, "income")
    return s, [a - b for a, b in zip(crowns(s), before, strict=True)], ev


def names(n: int) -> list[str]:
    return ["Miranda", "Christopher", "Henry", "Jack", "Courtney", "Helen", "Gus", "Ida"][:n]


def describe(events: list[dict[str, Any]], n: int) -> list[str]:
    return [GAME.describe_event(e, names(n)) for e in events]
