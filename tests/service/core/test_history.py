"""Dice and cards anyone can check: the server's seed (32 bytes from the OS), its public
commitment from the first event on, the seed kept from every reader while the game
runs, and the published history (`kontor-history/1`) that replays step by step to the
recorded state digests and events."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import pytest

from engine.core import registry
from engine.core.seed import commitment, state_digest
from service.core.kontor import Kontor
from tests.service.conftest import Player, join, problem, start

# Also with the store on a Valkey Cluster and the queue on a Valkey of its own (issue 24).
pytestmark = pytest.mark.cluster

HEX64 = re.compile(r"^[0-9a-f]{64}$")


def bot_game(client: Any, seats: int = 2, **body: Any) -> tuple[Player, str]:
    """A game created over HTTP without a seed (the server makes one), every seat a bot; started."""
    host = Player.new()
    payload = {"title": "haendler", "seats": seats, "host_key": host.key.public, "options": {"light": True}, **body}
    r = client.post("/games", json=payload, headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 201, r.json
    gid = host.game = r.json["id"]
    assert r.json["commitment"] is None  # nothing is committed in the lobby
    for seat in range(seats):
        r = client.patch(f"/games/{gid}/seats/{seat}", json={"bot": "greedy", "name": f"Bot {seat}"},
                         headers=host.bearer())
        assert r.status_code == 200, r.json
    start(client, host)
    return host, gid


def play_out(kontor: Kontor, worker: Any, gid: str, limit: int = 50) -> None:
    """Let the worker run the bots' jobs until the game is over."""
    for _ in range(limit):
        worker()
        if kontor.store.meta(gid)["status"] == "finished":
            return
    raise AssertionError("the bot game did not finish")


@pytest.fixture
def finished(client: Any, kontor: Kontor, worker: Any) -> dict[str, Any]:
    host, gid = bot_game(client)
    first_event = client.get(f"/games/{gid}/events?limit=1").json["items"][0]
    running = client.get(f"/games/{gid}").json
    play_out(kontor, worker, gid)
    r = client.get(f"/games/{gid}/history")
    assert r.status_code == 200, r.json
    return {"gid": gid, "host": host, "doc": r.json, "first_event": first_event, "running": running}


def test_the_server_makes_a_32_byte_seed_and_commits_to_it(client: Any, kontor: Kontor) -> None:
    host, gid = bot_game(client)
    seed = json.loads(kontor.store.meta(gid)["seed"])
    assert isinstance(seed, str) and HEX64.match(seed), seed
    # ... a fresh one per game.
    _, other = bot_game(client)
    assert json.loads(kontor.store.meta(other)["seed"]) != seed
    promised = commitment(seed)
    assert client.get(f"/games/{gid}").json["commitment"] == promised
    first = client.get(f"/games/{gid}/events?limit=1").json["items"][0]
    assert first["type"] == "game_started" and first["commitment"] == promised
    assert client.get(f"/games/{gid}/view").json["state"]["commitment"] == promised
    assert kontor.store.state(gid)["commitment"] == promised


def test_a_given_seed_still_makes_a_reproducible_game(client: Any, kontor: Kontor) -> None:
    for seed in (12345, "table-seven"):
        _, gid = bot_game(client, seed=seed)
        assert json.loads(kontor.store.meta(gid)["seed"]) == seed
        assert client.get(f"/games/{gid}").json["commitment"] == commitment(seed)
        game = registry.get("haendler")
        assert kontor.store.state(gid) == game.setup(2, game.normalize_options(2, {"light": True}), seed)


def test_the_history_document(finished: dict[str, Any], client: Any, kontor: Kontor) -> None:
    doc, gid = finished["doc"], finished["gid"]
    game = client.get(f"/games/{gid}").json
    assert doc["format"] == "kontor-history/1"
    assert (doc["game"], doc["title"], doc["seats"], doc["options"]) == (gid, "haendler", 2, game["options"])
    assert doc["seed"] == json.loads(kontor.store.meta(gid)["seed"]) and HEX64.match(doc["seed"])
    # The commitment published at the start (event and game) is the seed's.
    assert commitment(doc["seed"]) == doc["commitment"]
    assert finished["first_event"]["commitment"] == doc["commitment"] == finished["running"]["commitment"]
    assert game["commitment"] == doc["commitment"]
    assert doc["result"] == game["result"] and doc["result"]
    steps = doc["steps"]
    assert [s["phase"] for s in steps] == list(range(1, len(steps) + 1))
    for step in steps:
        assert set(step) == {"phase", "orders", "defaults", "state_sha256", "events"}, step
        assert HEX64.match(step["state_sha256"]) and step["defaults"] == []
        assert all(isinstance(e, dict) and "phase" not in e for e in step["events"])
    # The engine's events of each step are those the stream holds for it (less the
    # service's own and the phase numbers).
    stream = kontor.store.events(gid, 0, 100_000)
    service_events = {"game_started", "step_opened", "step_resolved", "game_finished"}
    for step in steps:
        mine = [{k: v for k, v in ev.items() if k != "phase"} for _, ev, _ in stream
                if ev.get("phase") == step["phase"] and ev["type"] not in service_events]
        assert mine == step["events"], step["phase"]


def test_replaying_the_history_gives_every_recorded_digest(finished: dict[str, Any], kontor: Kontor) -> None:
    doc = finished["doc"]
    game = registry.get(doc["title"])
    state = game.setup(doc["seats"], doc["options"], doc["seed"])
    assert state["commitment"] == doc["commitment"]
    for step in doc["steps"]:
        state, events = game.resolve(state, {int(s): o for s, o in step["orders"].items()})
        assert state_digest(state) == step["state_sha256"], step["phase"]
        assert json.loads(json.dumps(events)) == step["events"], step["phase"]
    assert game.requests(state) == [] and game.result(state) == doc["result"]
    assert state == kontor.store.state(finished["gid"])


def test_the_engine_verifier_accepts_the_history_and_catches_a_change(finished: dict[str, Any]) -> None:
    verify = pytest.importorskip("engine.core.verify")
    doc = finished["doc"]
    report = verify.verify_history(doc)
    assert report.ok, report.lines
    # Another seed does not match the commitment.
    assert not verify.verify_history({**doc, "seed": "0" * 64}).ok
    # A recorded state that differs from the replay shows at its step.
    steps = json.loads(json.dumps(doc["steps"]))
    steps[-1]["state_sha256"] = "0" * 64
    assert not verify.verify_history({**doc, "steps": steps}).ok


def test_history_steps_recorded_before_digests_still_publish(client: Any, kontor: Kontor, worker: Any) -> None:
    """A step stored before digests and events were kept is published as it is stored (a
    game of those days keeps its records in its history list)."""
    _, gid = bot_game(client)
    play_out(kontor, worker, gid)
    steps = client.get(f"/games/{gid}/history").json["steps"]
    old = {k: steps[0][k] for k in ("phase", "orders", "defaults")}
    kontor.r.rpush(kontor.store.key(gid, "history"), json.dumps(old), *(json.dumps(s) for s in steps[1:]))
    doc = client.get(f"/games/{gid}/history").json
    assert doc["steps"][0] == old and "state_sha256" in doc["steps"][1]
    assert doc["steps"][1:] == steps[1:]


# -- the seed stays secret while the game runs ---------------------------------------------
def read_everything(client: Any, gid: str, headers: dict[str, str], seats: int) -> str:
    """Every read route's answer for a caller, as one text."""
    paths = ["/catalog", "/games", "/games?status=running", f"/games/{gid}", f"/games/{gid}/seats",
             f"/games/{gid}/phases/current", f"/games/{gid}/view", f"/games/{gid}/events?limit=500",
             f"/games/{gid}/picture.svg", f"/games/{gid}/messages"]
    paths += [f"/games/{gid}/seats/{s}" for s in range(seats)]
    out = []
    for path in paths:
        r = client.get(path, headers=headers)
        assert r.status_code == 200, (path, r.status_code, r.get_data(as_text=True)[:300])
        out.append(r.get_data(as_text=True))
    return "\n".join(out)


@pytest.mark.parametrize("seed", [None, "seed-Zq81-not-for-readers"], ids=["server-seed", "given-seed"])
def test_the_seed_is_never_shown_before_the_game_is_over(client: Any, kontor: Kontor, worker: Any,
                                                        seed: str | None) -> None:
    host = Player.new()
    body: dict[str, Any] = {"title": "haendler", "seats": 2, "host_key": host.key.public}
    if seed is not None:
        body["seed"] = seed
    r = client.post("/games", json=body, headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 201
    gid = host.game = r.json["id"]
    players = [Player.new(), Player.new()]
    for i, p in enumerate(players):
        join(client, gid, p, f"P{i}", i)
    secret = json.loads(kontor.store.meta(gid)["seed"])
    assert seed is None or secret == seed
    lobby = [("public", {}), ("host", host.bearer()), *((f"seat {i}", p.bearer()) for i, p in enumerate(players))]
    for label, headers in lobby:  # in the lobby: no picture or view yet, but the rest
        for path in ("", "/seats"):
            assert str(secret) not in client.get(f"/games/{gid}{path}", headers=headers).get_data(as_text=True), label
    start(client, host)
    # Play a few steps, so the events, views and orders have something in them.
    for _ in range(3):
        ph = kontor.current_phase(gid, "public")
        for s in ph["requested"]:
            kontor.submit(gid, ph["id"], s, kontor.current_phase(gid, s)["you"]["default_order"], via="test")
        worker()
    callers = [("public", {}), ("host", host.bearer()), *((f"seat {i}", p.bearer()) for i, p in enumerate(players))]
    for label, headers in callers:
        text = read_everything(client, gid, headers, 2)
        assert str(secret) not in text, label
        assert commitment(secret) in text, label  # the commitment is public
        problem(client.get(f"/games/{gid}/history", headers=headers), 403, "forbidden")
