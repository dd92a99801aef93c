"""Every registered title plays through the service exactly like the first one.

For each title: a game over the HTTP API with one player holding a key (seat 0, whose
signed orders come from the title's random bot) and bots in the other seats, resolved
by a real RQ worker against the real store, to its end. Along the way the player reads
its view with words (`summary`, `headline`), the picture and what is asked; at the end
the published history verifies (seed against commitment, every step replayed).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from engine.core import registry
from engine.core.verify import verify_history
from service.core.kontor import Kontor
from tests.service.conftest import Player, create_game, join, start

TITLES = sorted(registry.titles())


def _asked(client: Any, player: Player) -> dict[str, Any] | None:
    r = client.get(f"/games/{player.game}/phases/current", headers=player.bearer())
    assert r.status_code == 200, r.json
    you = r.json.get("you") or {}
    return dict(r.json) if you.get("requested") and not you.get("answered") else None


def _all_events(client: Any, gid: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    after = 0
    while True:
        page = client.get(f"/games/{gid}/events?after={after}&limit=500").json
        out += page["items"]
        if not page["more"]:
            return out
        after = page["next"]


@pytest.mark.parametrize("tid", TITLES)
def test_a_title_plays_to_its_end_through_the_api(tid: str, client: Any, kontor: Kontor, worker: Any) -> None:
    game = registry.get(tid)
    seats = game.min_seats
    host = Player.new()
    gid = create_game(client, host, seats, title=tid, seed=f"every-title-{tid}")["id"]
    me = Player.new()
    join(client, gid, me, "Ada", 0)
    kinds = sorted(game.bots())
    for seat in range(1, seats):
        r = client.patch(f"/games/{gid}/seats/{seat}", json={"bot": kinds[seat % len(kinds)]}, headers=host.bearer())
        assert r.status_code == 200, r.json
    start(client, host)
    events = client.get(f"/games/{gid}/events").json["items"]
    started = next(e for e in events if e["type"] == "game_started")
    assert len(started["commitment"]) == 64 and client.get(f"/games/{gid}").json["commitment"] == started["commitment"]

    mine = game.bots()["random"](f"every-title/{tid}")
    looked = False
    for _ in range(5000):
        worker()
        if client.get(f"/games/{gid}").json["status"] == "finished":
            break
        current = _asked(client, me)
        if current is None:
            continue
        if not looked:  # once, while something is asked: the words and the picture
            view = client.get(f"/games/{gid}/view", headers=me.bearer()).json
            assert view["summary"].strip() and view["headline"].strip() and "Ada" in view["summary"]
            assert current["you"]["asked"].strip()
            svg = client.get(f"/games/{gid}/picture.svg", headers=me.bearer())
            assert svg.status_code == 200 and svg.mimetype == "image/svg+xml"
            assert ET.fromstring(svg.get_data(as_text=True)).find("{http://www.w3.org/2000/svg}title") is not None
            looked = True
        _, _, state = kontor.store.snapshot(gid)
        request = next(r for r in game.requests(state) if r.seat == 0)
        order = mine.order(game, state, request)
        token = me.order_token(current["id"], order)
        r = client.put(f"/games/{gid}/phases/{current['id']}/orders/0", json={"token": token})
        assert r.status_code == 202, r.json
    else:
        raise AssertionError(f"{tid}: the game did not finish")
    assert looked, f"{tid}: seat 0 was never asked anything"

    doc = client.get(f"/games/{gid}/history").json
    report = verify_history(json.loads(json.dumps(doc)))
    assert report.ok, report.lines
    finished = [e for e in _all_events(client, gid) if e["type"] == "game_finished"]
    assert finished and finished[0]["ranking"] == doc["result"]
