"""Phase 3, income (§10, R6, FD9–FD11, R17), and the end of a round (§11, R7).

Credits are paid type by type in canonical order, and within a type in turn order from
the acting First Buyer; after each positive credit a pending Racketeering whose trigger
player was credited resolves at once (FD9). Income has no decision point (R24).
"""

from __future__ import annotations

from typing import Any

from engine.core.events import ALL, Event, event
from engine.fantasy.components import kind_of
from engine.fantasy.state import CARD_KIND, C, S, order_from

#: "0", "1", ...: seat numbers as object keys.
SEAT_KEYS = tuple(str(i) for i in range(9))


def rates(sheets: dict[int, int], sole_bonus: bool) -> dict[int, int]:
    """I2: the rate per card of each seller of one type, from its price."""
    prices = list(sheets.values())
    low, high = min(prices), max(prices)
    lowest = prices.count(low)
    out: dict[int, int] = {}
    for seat in sheets:  # by seat, then its price: no (seat, price) pairs made
        price = sheets[seat]
        if low == high or price == low:
            bonus = C.lowest_bonus if (not sole_bonus or lowest == 1) else 0
            out[seat] = price + bonus
        elif price == high:
            out[seat] = 0
        else:
            out[seat] = price
    return out


def run_income(s: S, ev: list[Event]) -> None:
    # Income writes the crowns of most seats, several times: every seat gets its own
    # entry once (see `copy_state`), which is then written in place.
    players = s["players"] = [p.copy() for p in s["players"]]
    keys = SEAT_KEYS if len(players) <= len(SEAT_KEYS) else [str(i) for i in range(len(players))]
    sheets = {i: sh for i, p in enumerate(players) if (sh := p["sheet"]) is not None}
    shown = {keys[i]: sh for i, sh in sheets.items()}
    ev.append({"type": "sheets_revealed", "visible_to": ALL, "sheets": shown})  # `event(...)`, written out
    s["prices"] = shown.copy()
    rv = s["reveal"]
    racket: list[dict[str, Any]] = [dict(r) for r in rv["ra"]]
    bad_checks = {(x, t) for x, t in rv["bc"]}
    out_of_season = rv["os"]
    sole_bonus = s["options"]["sole_bonus"]
    paid: dict[str, dict[str, int]] = {}
    # type -> seat -> cards of the type, seats in turn order from the AFB (as income pays)
    counts: dict[str, dict[int, int]] = {}
    for p in order_from(s, s["afb"]):
        for c in players[p]["items"]:
            t = CARD_KIND.get(c)
            if t is None:  # a card outside the deck (a hand-made state)
                t = kind_of(c)
            per = counts.get(t)
            if per is None:
                counts[t] = {p: 1}
            elif p in per:
                per[p] += 1
            else:
                per[p] = 1
    for t in C.types:
        have = counts.get(t)
        if not have:
            continue
        if t in out_of_season:
            ev.append(event("out_of_season_applied", item_type=t))
            continue
        prices = {p: sheets[p][t] for p in have}
        rate = rates(prices, sole_bonus)
        for p in have:  # by seat, then its count: no (seat, count) pairs made
            n = have[p]
            checked = (p, t) in bad_checks if bad_checks else False
            amount = 0 if checked else rate[p] * n
            players[p]["crowns"] += amount
            key = keys[p]
            if key in paid:
                paid[key][t] = amount
            else:
                paid[key] = {t: amount}
            ev.append({"type": "income", "visible_to": ALL, "seat": p, "item_type": t, "price": prices[p],
                       "cards": n, "amount": amount, "bad_check": checked})  # `event(...)`, written out
            if amount > 0 and racket:
                for r in racket:
                    if not r["fired"] and r["y"] == p:
                        _fire(players, r, ev)
    for r in racket:  # I3
        if not r["fired"]:
            _fire(players, r, ev)
    s["income"] = paid
    s["reveal"] = {"os": [], "bc": [], "ra": []}


def _fire(players: list[dict[str, Any]], r: dict[str, Any], ev: list[Event]) -> None:
    """Racketeering (FD9) on the seat entries `run_income` owns."""
    r["fired"] = True
    x, by = r["x"], r["by"]
    amount = min(C.racketeering_amount, players[x]["crowns"])
    players[x]["crowns"] -= amount
    players[by]["crowns"] += amount
    ev.append(event("racketeering_paid", seat=by, target=x, trigger=r["y"], amount=amount))


def score(s: S, seat: int) -> int:
    """E2: crowns plus the base values of owned items."""
    p = s["players"][seat]
    return int(p["crowns"]) + sum(C.base[c.rstrip("0123456789")] for c in p["items"])


def ranking(s: S) -> list[dict[str, Any]]:
    """E3: highest score first; tied players share a place (R7)."""
    scores = {p: score(s, p) for p in range(s["seats"])}
    order = sorted(scores, key=lambda p: (-scores[p], p))
    out = []
    place, last = 0, None
    for i, p in enumerate(order):
        if scores[p] != last:  # 1 + the seats with a higher score: those ranked before it
            place, last = i + 1, scores[p]
        out.append({"place": place, "seat": p, "score": scores[p], "crowns": s["players"][p]["crowns"],
                    "items": len(s["players"][p]["items"])})
    return out
