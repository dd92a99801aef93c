"""Properties over 200 seeded random-bot games per run (3–8 seats, every variant):

* crowns are conserved with the bank: every seat's crowns add up to the start money plus
  income, Subsidies and nothing else from the bank, minus what auctions paid to it; and
  nobody ever has fewer than 0;
* all 72 cards are always accounted for, each exactly once;
* replaying the accepted orders rebuilds the final state byte for byte;
* every finished game verifies with `engine.core.verify.verify_history`;
* across the run every one of the 13 special-card kinds is played.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from engine.core.bots import play_game
from engine.core.seed import state_digest
from engine.core.verify import record, verify_history
from engine.fantasy.components import components, kind_of
from tests.engine.fantasy.helpers import GAME

C = components()
GAMES = 200
VARIANTS: list[dict[str, Any]] = [{}, {"sole_bonus": True}, {"below_base": True}, {"trading": True},
                                  {"rounds": 3, "trading": True, "below_base": True, "sole_bonus": True}]


def cards_of(s: dict[str, Any]) -> Counter[str]:
    out: Counter[str] = Counter(s["deck"])
    out.update(d["card"] for d in s["display"] if d is not None and d["card"] is not None)
    out.update(s["facedown"].values())
    for p in s["players"]:
        out.update(p["hand"])
        out.update(p["items"])
    out.update(s["discard"])
    out.update(s["buried"])
    out.update(s["removed"])
    out.update(q["card"] for q in s["queue"])
    a = s["auction"]
    if a is not None and a["mode"] == "antitrust":
        out.update([a["card"], *a["left"]])
    return out


def test_properties_over_200_random_games() -> None:
    bots = GAME.bots()
    full = Counter(C.deck)
    kinds: set[str] = set()
    for g in range(GAMES):
        seats = 3 + g % 6
        options = VARIANTS[g % len(VARIANTS)]
        seed = f"prop-{g}"
        bank = {"total": C.start_crowns * seats}
        steps: list[dict[str, Any]] = []

        def check(s: dict[str, Any], orders: dict[int, Any], events: list[dict[str, Any]],
                  bank: dict[str, int] = bank, steps: list[dict[str, Any]] = steps, seed: str = seed) -> None:
            for e in events:
                if e["type"] == "income":
                    bank["total"] += e["amount"]
                elif e["type"] == "sold" and e["to"] is None:
                    bank["total"] -= e["price"]
                elif e["type"] == "played" and kind_of(e["card"]) == "SU":
                    bank["total"] += C.subsidies_amount
                if e["type"] == "window_closed":
                    kinds.update(kind_of(p["card"]) for p in e["plays"])
                elif e["type"] == "played":
                    kinds.add(kind_of(e["card"]))
            crowns = [p["crowns"] for p in s["players"]]
            assert sum(crowns) == bank["total"] and min(crowns) >= 0, (seed, crowns, bank)
            assert cards_of(s) == full, seed
            steps.append({"orders": orders, "state_sha256": state_digest(s), "events": events})

        out = play_game(GAME, seats, {i: bots["random"](f"{seed}/{i}") for i in range(seats)}, seed, options,
                        on_step=check)
        assert out.state["over"] and GAME.result(out.state) is not None
        doc = record("fantasy", seats, options, seed, steps, GAME.result(out.state))
        report = verify_history(json.loads(json.dumps(doc)))
        assert report.ok, (seed, report.problems)
    assert kinds == set(C.special_names), sorted(set(C.special_names) - kinds)


def test_trader_bots_play_whole_games_and_their_specials() -> None:
    bots = GAME.bots()
    kinds: set[str] = set()
    for g in range(6):
        seats = (4, 8, 5, 6, 7, 3)[g]

        def seen(s: dict[str, Any], o: Any, events: list[dict[str, Any]]) -> None:
            kinds.update(kind_of(e["card"]) for e in events if e["type"] == "played")

        out = play_game(GAME, seats, {i: bots["trader"](f"t{g}/{i}") for i in range(seats)}, f"trader-{g}",
                        {"trading": g % 2 == 1}, on_step=seen)
        assert out.state["over"]
    assert len(kinds) >= 9, kinds
