"""Phase 3, income (§10, R6, FD9–FD11, R17), and the end of a round (§11, R7).

Credits are paid type by type in canonical order, and within a type in turn order from
the acting First Buyer; after each positive credit a pending Racketeering whose trigger
player was credited resolves at once (FD9). Income has no decision point (R24).
"""

from __future__ import annotations

from typing import Any

from engine.core.events import Event, event
from engine.fantasy.components import kind_of
from engine.fantasy.state import C, S, credit, order_from


def rates(sheets: dict[int, int], sole_bonus: bool) -> dict[int, int]:
    """I2: the rate per card of each seller of one type, from its price."""
    low, high = min(sheets.values()), max(sheets.values())
    lowest = sum(1 for p in sheets.values() if p == low)
    out: dict[int, int] = {}
    for seat, price in sheets.items():
        if low == high or price == low:
            bonus = C.lowest_bonus if (not sole_bonus or lowest == 1) else 0
            out[seat] = price + bonus
        elif price == high:
            out[seat] = 0
        else:
            out[seat] = price
    return out


def run_income(s: S, ev: list[Event]) -> None:
    sheets = {i: p["sheet"] for i, p in enumerate(s["players"]) if p["sheet"] is not None}
    ev.append(event("sheets_revealed", sheets={str(i): sh for i, sh in sheets.items()}))
    s["prices"] = {str(i): sh for i, sh in sheets.items()}
    rv = s["reveal"]
    racket: list[dict[str, Any]] = [dict(r) for r in rv["ra"]]
    paid: dict[str, dict[str, int]] = {}
    turn = order_from(s, s["afb"])
    counts: dict[str, dict[int, int]] = {}
    for p in turn:
        for c in s["players"][p]["items"]:
            per = counts.setdefault(kind_of(c), {})
            per[p] = per.get(p, 0) + 1
    for t in C.types:
        have = counts.get(t)
        if not have:
            continue
        sellers = list(have)
        if t in rv["os"]:
            ev.append(event("out_of_season_applied", item_type=t))
            continue
        rate = rates({p: sheets[p][t] for p in sellers}, s["options"]["sole_bonus"])
        for p in sellers:
            n = have[p]
            amount = rate[p] * n
            checked = [p, t] in rv["bc"]
            if checked:
                amount = 0
            credit(s, p, amount)
            paid.setdefault(str(p), {})[t] = amount
            ev.append(event("income", seat=p, item_type=t, price=sheets[p][t], cards=n, amount=amount,
                            bad_check=checked))
            if amount > 0:
                for r in racket:
                    if not r["fired"] and r["y"] == p:
                        _fire(s, r, ev)
    for r in racket:  # I3
        if not r["fired"]:
            _fire(s, r, ev)
    s["income"] = paid
    s["reveal"] = {"os": [], "bc": [], "ra": []}


def _fire(s: S, r: dict[str, Any], ev: list[Event]) -> None:
    r["fired"] = True
    x, by = r["x"], r["by"]
    amount = min(C.racketeering_amount, s["players"][x]["crowns"])
    credit(s, x, -amount)
    credit(s, by, amount)
    ev.append(event("racketeering_paid", seat=by, target=x, trigger=r["y"], amount=amount))


def score(s: S, seat: int) -> int:
    """E2: crowns plus the base values of owned items."""
    p = s["players"][seat]
    return int(p["crowns"]) + sum(C.base[c.rstrip("0123456789")] for c in p["items"])


def ranking(s: S) -> list[dict[str, Any]]:
    """E3: highest score first; tied players share a place (R7)."""
    scores = {p: score(s, p) for p in range(s["seats"])}
    order = sorted(scores, key=lambda p: (-scores[p], p))
    return [{"place": 1 + sum(1 for q in scores if scores[q] > scores[p]), "seat": p, "score": scores[p],
             "crowns": s["players"][p]["crowns"], "items": len(s["players"][p]["items"])} for p in order]
