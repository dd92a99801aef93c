"""A short path through the API: create, join, start, play a few steps with defaults."""

from __future__ import annotations

from typing import Any

from tests.service.conftest import new_game


def test_create_join_start_and_play_some_steps(client: Any, worker: Any) -> None:
    host, players = new_game(client, 3, bots={2: "greedy"})
    game = host.game
    played = 0
    while played < 20:
        worker()
        ph = client.get(f"/games/{game}/phases/current").json
        assert ph["status"] == "collecting"
        for seat in ph["requested"]:
            if seat == 2:
                continue
            p = players[seat]
            you = client.get(f"/games/{game}/phases/current", headers=p.bearer()).json["you"]
            token = p.order_token(ph["id"], you["default_order"])
            r = client.put(f"/games/{game}/phases/{ph['id']}/orders/{seat}", json={"token": token})
            assert r.status_code == 202, r.json
            played += 1
    worker()
    events = client.get(f"/games/{game}/events").json
    assert events["items"][0]["type"] == "game_started"
