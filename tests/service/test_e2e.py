"""A whole 4-seat game of Die Händler played through a real HTTP server by four bot
clients that each know only their own key, against the real store and a real RQ worker.

Each client reads its choices from `/phases/current` and its `/view`, proposes orders with
the per-kind candidate makers of `RandomBot` (pure functions of the request's choices),
and signs them. At the end: the ranking, the event streams, replay determinism from the
published history, and no accepted order lost.
"""

from __future__ import annotations

import uuid
from typing import Any

import requests

from engine.core import registry
from engine.core.bots import replay
from engine.haendler.bots import RandomBot
from service.core.kontor import Kontor
from tests.service.conftest import Player

SEATS = 4


class BotClient:
    """One player: its key, its own HTTP session, its own seeded candidate maker."""

    def __init__(self, base: str, player: Player, seed: str) -> None:
        self.base = base
        self.player = player
        self.http = requests.Session()
        self.maker = RandomBot(seed)
        self.refusals = 0

    def get(self, path: str) -> dict[str, Any]:
        r = self.http.get(self.base + path, headers=self.player.bearer())
        assert r.status_code == 200, r.text
        return dict(r.json())

    def put(self, phase: int, order: dict[str, Any]) -> requests.Response:
        token = self.player.order_token(phase, order)
        return self.http.put(f"{self.base}/games/{self.player.game}/phases/{phase}/orders/{self.player.seat}",
                             json={"token": token})

    def candidate(self, you: dict[str, Any], view: dict[str, Any]) -> dict[str, Any]:
        make = getattr(self.maker, f"_{you['kind']}")
        order: dict[str, Any] = make(you["choices"], view, self.player.seat)
        return order

    def answer(self, phase: int, twice: bool = False) -> list[dict[str, Any]]:
        """Submit an order for `phase` (two, the second replacing the first, if `twice`);
        the accepted receipts."""
        g = self.player.game
        you = self.get(f"/games/{g}/phases/current")["you"]
        assert you["seat"] == self.player.seat and you["requested"] and not you["answered"]
        view = self.get(f"/games/{g}/view")["state"]
        receipts = []
        for _ in range(2 if twice else 1):
            for _attempt in range(3):
                r = self.put(phase, self.candidate(you, view))
                if r.status_code == 202:
                    break
                assert r.status_code == 422, r.text
                assert r.headers["Content-Type"].startswith("application/problem+json")
                self.refusals += 1
            else:
                r = self.put(phase, you["default_order"])
                assert r.status_code == 202, r.text
            receipts.append(r.json())
        return receipts


def _http_game(base: str) -> tuple[str, list[Player]]:
    http = requests.Session()
    host = Player.new()
    body = {"title": "haendler", "seats": SEATS, "host_key": host.key.public, "seed": 2024,
            "options": {"light": True}}
    r = http.post(f"{base}/games", json=body, headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 201, r.text
    gid = host.game = r.json()["id"]
    players = []
    for seat in range(SEATS):
        p = Player.new()
        r = http.post(f"{base}/games/{gid}/seats", json={"name": f"Bot {seat}", "public_key": p.key.public},
                      headers={"Idempotency-Key": uuid.uuid4().hex})
        assert r.status_code == 201, r.text
        p.game, p.seat = gid, r.json()["seat"]
        players.append(p)
    assert sorted(p.seat for p in players) == list(range(SEATS))
    r = http.patch(f"{base}/games/{gid}", json={"status": "running"}, headers=host.bearer())
    assert r.status_code == 200, r.text
    return gid, sorted(players, key=lambda p: p.seat or 0)


def test_four_bot_clients_play_a_whole_game_over_http(live_server: str, worker: Any, kontor: Kontor) -> None:
    base = live_server
    gid, players = _http_game(base)
    clients = [BotClient(base, p, f"e2e/{p.seat}") for p in players]
    public = requests.Session()
    receipts: list[dict[str, Any]] = []
    steps = 0
    while True:
        worker()
        ph = public.get(f"{base}/games/{gid}/phases/current").json()
        if ph["status"] == "finished":
            break
        assert ph["status"] == "collecting", ph
        assert ph["answered"] == []
        steps += 1
        assert steps < 1000, "the game does not end"
        seats = ph["requested"]
        for i, seat in enumerate(seats):
            # In a sealed step with several seats, the first one changes its mind once:
            # the replaced order must not reach the history, the new one must.
            got = clients[seat].answer(ph["id"], twice=ph["sealed"] and len(seats) > 1 and i == 0)
            last = i == len(seats) - 1
            assert [x["step_status"] for x in got] == ["collecting"] * (len(got) - 1) + [
                "resolving" if last else "collecting"]
            assert [x["replaced"] for x in got] == [False, True][: len(got)]
            receipts += got

    game = public.get(f"{base}/games/{gid}").json()
    assert game["status"] == "finished"
    ranking = game["result"]
    assert isinstance(ranking, list) and sorted(r["seat"] for r in ranking) == list(range(SEATS))

    for c in clients:
        items: list[dict[str, Any]] = []
        after = 0
        while True:
            page = c.get(f"/games/{gid}/events?after={after}&limit=200")
            items += page["items"]
            after = page["next"]
            if not page["more"]:
                break
        assert items[0]["type"] == "game_started"
        assert items[-1]["type"] == "game_finished" and items[-1]["ranking"] == ranking
        ids = [e["id"] for e in items]
        assert ids == sorted(set(ids))
        assert sum(e["type"] == "step_resolved" for e in items) == steps

    history = public.get(f"{base}/games/{gid}/history").json()
    entries = history["steps"]
    assert [e["phase"] for e in entries] == list(range(1, steps + 1))
    assert all(e["defaults"] == [] for e in entries)

    # No order lost: the last accepted receipt of every (phase, seat) is what the history holds;
    # every other receipt was replaced later by the same seat.
    last: dict[tuple[int, int], dict[str, Any]] = {}
    for rec in receipts:
        key = (rec["phase"], rec["seat"])
        assert (key in last) == rec["replaced"]
        last[key] = rec
    recorded = {(e["phase"], int(s)): o for e in entries for s, o in e["orders"].items()}
    assert recorded == {k: rec["order"] for k, rec in last.items()}

    engine = registry.get("haendler")
    state = replay(engine, SEATS, history["seed"], game["options"],
                   [{int(s): o for s, o in e["orders"].items()} for e in entries])
    assert engine.result(state) == ranking
    assert engine.view(state, "admin") == engine.view(kontor.store.state(gid), "admin")
    assert engine.view(state, "public") == public.get(f"{base}/games/{gid}/view").json()["state"]
