"""Properties over many random bot games (both bot kinds, every seat count, both
variants): money is conserved with the bank and the debts, capacity is never exceeded,
no road space ever ends a step with more than two trucks, every card is in exactly one
place, a replay rebuilds the game byte for byte, and every finished game verifies."""

from __future__ import annotations

import json
from typing import Any

from engine.aufachse.context import capacity, ctx_of, final_money, load
from engine.core.bots import play_game, replay
from engine.core.seed import state_digest
from engine.core.verify import record, verify_history
from tests.engine.aufachse.helpers import GAME

GAMES = 200


def check_invariants(s: dict[str, Any]) -> None:
    ctx = ctx_of(s)
    n = s["seats"]
    ps = s["players"]
    # money: every player's cash comes from the start cash and the bank's net payments
    assert sum(p["cash"] for p in ps) == n * ctx.comp.start_cash + s["bank"]
    assert all(p["cash"] >= 0 for p in ps)
    assert all(d["amount"] > 0 and (d["to"] is None or 0 <= d["to"] < n) for p in ps for d in p["debts"])
    # capacity and trailers
    for p in ps:
        assert load(ctx, p) <= capacity(ctx, p)
    for size in ("small", "large"):
        total = s["supply"][size] + sum(p["trailers"][size] for p in ps)
        assert total == (0 if s["options"]["kids"] else ctx.comp.trailers[size].count)
    # the two-truck limit on road spaces
    where: dict[str, int] = {}
    for p in ps:
        if p["at"] is not None and not ctx.board.is_city(p["at"]):
            where[p["at"]] = where.get(p["at"], 0) + 1
    assert all(v <= ctx.comp.road_space_limit for v in where.values()), where
    # every order card is in exactly one place
    cards = s["display"] + s["deck"] + s["reserve"] + s["discard"]
    for p in ps:
        cards += p["hand"] + p["open"] + p["loaded"]
    assert sorted(cards) == sorted(ctx.order_ids)
    assert len(s["events"]) + len(s["used_events"]) == len(ctx.event_ids)
    # markers never share a space, and stand on road spaces
    if s["roadworks"]:
        assert not ctx.board.is_city(s["roadworks"])
    if s["jam"]:
        assert not ctx.board.is_city(s["jam"]["at"]) and s["jam"]["at"] != s["roadworks"]


def test_properties_over_many_random_bot_games() -> None:
    bots = GAME.bots()
    kinds = sorted(bots)
    verified = 0
    for g in range(GAMES):
        seats = 2 + g % 5
        kids = g % 4 == 3
        options = {"kids": kids}
        seed = f"prop-{g}"
        history: list[dict[str, Any]] = []
        record_it = g % 20 == 0

        def on_step(s: dict[str, Any], o: dict[int, Any], e: list[dict[str, Any]],
                    keep: list[dict[str, Any]] = history, rec: bool = record_it) -> None:
            check_invariants(s)
            if rec:
                keep.append({"orders": o, "state_sha256": state_digest(s), "events": e})

        out = play_game(GAME, seats, {i: bots[kinds[(i + g) % 2]](f"{seed}/{i}") for i in range(seats)}, seed,
                        options, on_step=on_step)
        s = out.state
        assert s["over"]
        ranking = GAME.result(s)
        assert ranking is not None and sorted(r["seat"] for r in ranking) == list(range(seats))
        assert [r["money"] for r in ranking] == sorted((final_money(s, p) for p in range(seats)), reverse=True)
        if record_it:
            assert json.dumps(replay(GAME, seats, seed, options, out.steps), sort_keys=True) == \
                json.dumps(s, sort_keys=True)
            report = verify_history(record("aufachse", seats, options, seed, history, ranking))
            assert report.ok, report.problems
            verified += 1
    assert verified == GAMES // 20
