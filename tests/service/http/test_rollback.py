"""`POST /games/{id}/rollback` and its consent (`service.core.rollback`): the host takes the
game back to an earlier step, at once when the steps undone revealed nothing hidden, else
only once every human seat agreed; step numbers are never reused; the history verifies
with the abandoned line replayed; nothing sealed leaks. Mostly with the test title Stall
(tests/service/stall.py: one seat asked per step, 4 steps; a hoard is an action with a
private event), and Die Händler for sealed steps and draws."""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from engine.core import registry
from engine.core.rollback import replay
from engine.core.verify import verify_history
from service.core.kontor import Kontor
from tests.playertext import problems
from tests.service.conftest import Player, create_game, join, new_game, problem
from tests.service.stall import registered

# Also with the store on a Valkey Cluster (issue 24): the rollback's scripts touch only the
# game's own slot.
pytestmark = pytest.mark.cluster


@pytest.fixture(autouse=True)
def stall() -> Iterator[Any]:
    with registered() as game:
        yield game


def buy(kontor: Kontor, worker: Any, gid: str, order: dict[str, Any]) -> None:
    """The open step's asked seat gives `order`; the worker resolves the step."""
    ph = kontor.current_phase(gid, "public")
    kontor.submit(gid, ph["id"], ph["requested"][0], order, via="test")
    worker()


def rollback(client: Any, host: Player, to: Any) -> Any:
    return client.post(f"/games/{host.game}/rollback", json={"to_phase": to}, headers=host.bearer())


def consent(client: Any, p: Player, agree: bool) -> Any:
    return client.post(f"/games/{p.game}/rollback/consent", json={"agree": agree}, headers=p.bearer())


def state_of(kontor: Kontor, gid: str) -> Any:
    return kontor.store.state(gid)


def texts(client: Any, p: Player | None, gid: str) -> list[tuple[str, str]]:
    """The events as `p` (None: the public) sees them, with their words."""
    from service import words

    headers = p.bearer() if p else {}
    items = client.get(f"/games/{gid}/events?limit=200", headers=headers).json["items"]
    names = [f"P{i}" for i in range(3)]
    return [(e["type"], words.describe(registry.get("stall"), e, names) or "") for e in items]


def test_rollback_applies_at_once_when_nothing_hidden_was_revealed(client: Any, kontor: Kontor, worker: Any) -> None:
    host, (a, b) = new_game(client, 2, title="stall")
    gid = host.game
    start = state_of(kontor, gid)
    buy(kontor, worker, gid, {"buy": "wein", "count": 2})  # step 1: seat 0
    after_one = state_of(kontor, gid)
    buy(kontor, worker, gid, {"buy": "tuch", "count": 1})  # step 2: seat 1
    assert kontor.current_phase(gid, "public")["id"] == 3
    old = a.order_token(3, {"buy": "wein", "count": 1})
    stale = b.order_token(2, {"buy": "tuch", "count": 1})
    listed = client.get(f"/games/{gid}/rollback").json
    assert [s["phase"] for s in listed["steps"]] == [2, 1] and listed["pending"] is None
    assert listed["steps"][0]["text"].startswith("Step 2: P1's turn")

    r = rollback(client, host, 2)
    assert r.status_code == 200, r.json
    assert (r.json["status"], r.json["to_phase"], r.json["at_phase"], r.json["new_phase"]) == ("applied", 2, 3, 4)
    # the state step 2 had when it opened (a replay of step 1), open again as a NEW step
    assert state_of(kontor, gid) == after_one != start
    ph = kontor.current_phase(gid, "public")
    assert (ph["id"], ph["requested"], ph["status"]) == (4, [1], "collecting")
    # no token signed for an old step is accepted: neither the abandoned open step's nor step 2's
    for p, token, phase in ((a, old, 3), (b, stale, 2)):
        r = client.put(f"/games/{gid}/phases/{phase}/orders/{p.seat}", json={"token": token})
        problem(r, 409, "stale_phase")
    # told in words, to everyone
    said = dict(texts(client, None, gid))
    assert said["game_rolled_back"].startswith("The host rolled the game back to step 2 (P1's turn")
    assert "it is open again as step 4" in said["game_rolled_back"]
    assert not problems(said["game_rolled_back"].replace("P1", "Ben"))  # (the test names look like rule ids)
    # the page's "What happened" marks what the rollback undid (step 2's purchase), not what stands
    from service.http.resources.play import sentences
    lines = [e["text"] for e in sentences(kontor, gid, "public", kontor._title("stall"),
                                          kontor.names(gid, kontor.store.meta(gid)))]
    undone = "(Undone: the host rolled the game back.)"
    assert [t for t in lines if "Tuch" in t and undone in t], lines
    assert [t for t in lines if "Wein" in t] and not [t for t in lines if "Wein" in t and undone in t], lines
    # the game goes on from there: step 4 asks seat 1 what step 2 asked
    buy(kontor, worker, gid, {"buy": "wein", "count": 1})
    assert state_of(kontor, gid)["stock"] == {"wein": 0, "tuch": 2}


def test_rollback_refused_while_hidden_information_would_be_re_dealt_without_consent(
        client: Any, kontor: Kontor, worker: Any) -> None:
    # Stall: seat 1's hoard in step 1 told it privately what it has left (an event not everyone saw)
    host, (a, b) = new_game(client, 2, title="stall")
    gid = host.game
    kontor.act(gid, 1, {"hoard": "tuch"}, via="test")
    buy(kontor, worker, gid, {"buy": "wein", "count": 1})
    before, ph_before = state_of(kontor, gid), kontor.current_phase(gid, "public")
    r = rollback(client, host, 1)
    assert r.status_code == 200, r.json
    assert r.json["status"] == "pending" and r.json["new_phase"] is None
    assert r.json["pending"]["needs"] == [0, 1] and r.json["pending"]["waiting"] == [0, 1]
    assert "step 1 told some players what the others did not see" in r.json["pending"]["reasons"]
    # not applied: the same state, the same open step
    assert state_of(kontor, gid) == before
    assert kontor.current_phase(gid, "public")["id"] == ph_before["id"] == 2
    # one agreement of two is not enough
    assert consent(client, a, True).json["status"] == "agreed"
    assert state_of(kontor, gid) == before and kontor.current_phase(gid, "public")["id"] == 2
    # a second proposal while this one waits is refused
    problem(rollback(client, host, 1), 409, "rollback_pending")


def test_rollback_refused_without_consent_in_die_haendler(client: Any, kontor: Kontor, worker: Any) -> None:
    """Die Händler seals its cart bids (step 5 of a light game for two; the four buys before
    it reveal nothing): a rollback over a sealed step waits for consent and changes nothing
    meanwhile; one over the buys alone would apply at once."""
    host, players = new_game(client, 2, options={"light": True})
    gid = host.game
    for _ in range(6):
        ph = kontor.current_phase(gid, "public")
        for seat in ph["requested"]:
            kontor.submit(gid, ph["id"], seat, kontor.current_phase(gid, seat)["you"]["default_order"], via="test")
        worker()
    meta = kontor.store.meta(gid)
    game = registry.get("haendler")
    steps, _ = kontor.store.history_and_open(gid)
    line = replay(game, 2, json.loads(meta["options"]), json.loads(meta["seed"]), steps)
    assert line.state == state_of(kontor, gid)  # the replay rebuilds the stored state
    before, at = state_of(kontor, gid), kontor.current_phase(gid, "public")["id"]
    assert at == 7
    r = rollback(client, host, 5)
    assert r.status_code == 200, r.json
    assert r.json["status"] == "pending", r.json
    assert r.json["pending"]["reasons"] == "step 5 was sealed: its orders were secret until it resolved"
    assert state_of(kontor, gid) == before and kontor.current_phase(gid, "public")["id"] == at
    # one refusal drops it, and the game goes on untouched
    r = consent(client, players[1], False)
    assert r.json["status"] == "refused" and r.json["pending"] is None
    assert state_of(kontor, gid) == before and kontor.current_phase(gid, "public")["id"] == at
    problem(consent(client, players[0], True), 409, "no_rollback_pending")
    said = dict(texts(client, None, gid))
    assert said["rollback_refused"] == "P1 refused to go back to step 5, so the game goes on as it is."


def test_rollback_applies_after_every_human_seat_agrees(client: Any, kontor: Kontor, worker: Any) -> None:
    host, (a, b) = new_game(client, 3, bots={2: "passer"}, title="stall")
    gid = host.game
    start = state_of(kontor, gid)
    kontor.act(gid, 1, {"hoard": "wein"}, via="test")
    buy(kontor, worker, gid, {"buy": "tuch", "count": 1})
    r = rollback(client, host, 1)
    assert r.json["status"] == "pending" and r.json["pending"]["needs"] == [0, 1]  # not the bot
    assert consent(client, b, True).json["status"] == "agreed"
    problem(client.post(f"/games/{gid}/rollback/consent", json={"agree": "yes"}, headers=a.bearer()),
            422, "invalid_request")
    r = consent(client, a, True)
    assert r.status_code == 200, r.json
    assert (r.json["status"], r.json["new_phase"]) == ("applied", 3)
    assert state_of(kontor, gid) == start
    assert kontor.current_phase(gid, "public")["id"] == 3
    said = dict(texts(client, None, gid))
    assert "with every player's consent" in said["game_rolled_back"]
    assert ("rollback_agreed", "P1 agrees to go back to step 1.") in texts(client, None, gid)


def test_rollback_dropped_on_refusal_or_withdrawal_and_lapses_when_a_step_commits(
        client: Any, kontor: Kontor, worker: Any) -> None:
    host, (a, b) = new_game(client, 2, title="stall")
    gid = host.game
    kontor.act(gid, 0, {"hoard": "wein"}, via="test")
    buy(kontor, worker, gid, {"pass": True})
    before = state_of(kontor, gid)
    # the host withdraws it
    assert rollback(client, host, 1).json["status"] == "pending"
    problem(client.delete(f"/games/{gid}/rollback", headers=a.bearer()), 403, "not_host")
    r = client.delete(f"/games/{gid}/rollback", headers=host.bearer())
    assert r.json["status"] == "withdrawn"
    problem(client.delete(f"/games/{gid}/rollback", headers=host.bearer()), 409, "no_rollback_pending")
    # it lapses when the step commits
    assert rollback(client, host, 1).json["status"] == "pending"
    buy(kontor, worker, gid, {"pass": True})  # step 2 resolves
    assert client.get(f"/games/{gid}/rollback").json["pending"] is None
    problem(consent(client, a, True), 409, "no_rollback_pending")
    said = dict(texts(client, None, gid))
    assert said["rollback_lapsed"] == "The proposal to go back to step 1 lapsed: the game moved on to the next step."
    assert said["rollback_withdrawn"].startswith("The host withdrew the proposal to go back to step 1")
    assert state_of(kontor, gid) != before and kontor.current_phase(gid, "public")["id"] == 3


def test_rollback_lapses_after_its_time(client: Any, kontor: Kontor, worker: Any,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    host, (a, b) = new_game(client, 2, title="stall")
    gid = host.game
    kontor.act(gid, 0, {"hoard": "wein"}, via="test")
    buy(kontor, worker, gid, {"pass": True})
    monkeypatch.setattr(kontor, "settings", replace(kontor.settings, rollback_consent_seconds=0))
    assert rollback(client, host, 1).json["status"] == "pending"
    problem(consent(client, a, True), 409, "no_rollback_pending")
    said = dict(texts(client, None, gid))
    assert said["rollback_lapsed"] == "The proposal to go back to step 1 lapsed: its time ran out."
    assert kontor.current_phase(gid, "public")["id"] == 2


def test_rollback_history_verifies(client: Any, kontor: Kontor, worker: Any) -> None:
    host, (a, b) = new_game(client, 2, title="stall")
    gid = host.game
    buy(kontor, worker, gid, {"buy": "wein", "count": 1})  # step 1
    buy(kontor, worker, gid, {"buy": "tuch", "count": 2})  # step 2
    buy(kontor, worker, gid, {"buy": "wein", "count": 2})  # step 3
    assert rollback(client, host, 2).json["status"] == "applied"  # at step 4, to step 2: step 5 opens
    problem(client.get(f"/games/{gid}/history"), 403, "forbidden")  # not published while it runs
    for order in ({"buy": "wein", "count": 1}, {"pass": True}, {"pass": True}):  # steps 5, 6, 7
        buy(kontor, worker, gid, order)
    assert kontor.store.meta(gid)["status"] == "finished"
    doc = client.get(f"/games/{gid}/history").json
    assert all(e["rollback"]["at"].endswith("+00:00") for e in doc["steps"] if "rollback" in e)  # ISO 8601
    shape = [("rollback", e["rollback"]["to_phase"], e["rollback"]["at_phase"], e["rollback"]["new_phase"])
             if "rollback" in e else (e["phase"], e.get("abandoned", False)) for e in doc["steps"]]
    assert shape == [(1, False), (2, True), (3, True), ("rollback", 2, 4, 5), (5, False), (6, False), (7, False)]
    report = verify_history(doc)
    assert report.ok, report.lines
    assert report.steps == 4 and report.abandoned == 2
    assert report.lines[-1] == ("Verified: 4 steps of the game that stands; 2 steps rolled back at step 4 to "
                                "step 2 replayed as well; every draw, state and event matches.")
    # a tampered abandoned step fails
    bad = copy.deepcopy(doc)
    bad["steps"][2]["orders"]["0"] = {"buy": "wein", "count": 1}
    report = verify_history(bad)
    assert not report.ok and any("step 3" in p for p in report.problems), report.problems
    # so does an abandoned step passed off as standing, or a rollback moved
    bad = copy.deepcopy(doc)
    del bad["steps"][1]["abandoned"]
    assert not verify_history(bad).ok
    bad = copy.deepcopy(doc)
    bad["steps"][3]["rollback"]["to_phase"] = 1
    assert not verify_history(bad).ok


def test_rollback_leaks_no_sealed_order_of_the_discarded_step(client: Any, kontor: Kontor, worker: Any) -> None:
    """Die Händler: a seat's sealed order stored for the open step is discarded by the
    rollback unseen: no event, view, step answer or history (until the end) shows it."""
    host, players = new_game(client, 2, options={"light": True})
    gid = host.game
    for _ in range(8):
        ph = kontor.current_phase(gid, "public")
        if ph["sealed"] and len(ph["requested"]) > 1:
            break
        for seat in ph["requested"]:
            kontor.submit(gid, ph["id"], seat, kontor.current_phase(gid, seat)["you"]["default_order"], via="test")
        worker()
    else:
        pytest.fail("no sealed step for both seats")
    at = ph["id"]
    seat = ph["requested"][0]
    order = kontor.current_phase(gid, seat)["you"]["default_order"]
    kontor.submit(gid, at, seat, order, via="test")
    meta = kontor.store.meta(gid)
    steps, _ = kontor.store.history_and_open(gid)
    line = replay(registry.get("haendler"), 2, json.loads(meta["options"]), json.loads(meta["seed"]), steps)
    r = rollback(client, host, at - 1)
    assert r.json["status"] == "pending"
    assert "sealed orders are already given for the open step" in r.json["pending"]["reasons"]
    for p in players:
        assert consent(client, p, True).status_code == 200
    assert kontor.current_phase(gid, "public")["id"] == at + 1
    assert kontor.store.orders(gid, at) == {} and kontor.store.orders(gid, at + 1) == {}
    # each seat's view is the restored state's view
    restored = line.openings[at - 1]
    assert kontor.store.state(gid) == restored
    for p in players:
        mine = client.get(f"/games/{gid}/view", headers=p.bearer()).json["state"]
        assert mine == registry.get("haendler").view(restored, p.seat)
    other = players[1 - seat]
    for who in (None, other):
        headers = who.bearer() if who else {}
        events = client.get(f"/games/{gid}/events?limit=500", headers=headers).json["items"]
        assert all(e.get("type") not in ("order_submitted",) for e in events)
        discarded = [e for e in events if e.get("phase") == at and e["type"] not in (
            "step_opened", "game_rolled_back", "rollback_proposed", "rollback_agreed")]
        assert discarded == [], discarded
        ph_now = client.get(f"/games/{gid}/phases/current", headers=headers).json
        assert ph_now["answered"] == []
    problem(client.get(f"/games/{gid}/history"), 403, "forbidden")
    # the store keeps it for the published history only
    rec = [e for e in kontor.store.history(gid) if "rollback" in e]
    assert rec and rec[0]["rollback"]["orders"] == {str(seat): order}


def test_rollback_refusals(client: Any, kontor: Kontor, worker: Any) -> None:
    host, (a, b) = new_game(client, 2, title="stall")
    gid = host.game
    problem(rollback(client, host, 1), 409, "bad_rollback_step")  # the open step itself
    buy(kontor, worker, gid, {"pass": True})
    problem(client.post(f"/games/{gid}/rollback", json={"to_phase": 1}, headers=a.bearer()), 403, "not_host")
    problem(client.post(f"/games/{gid}/rollback", json={"to_phase": 1}), 401, "authentication_required")
    for bad in (0, 2, 3, 99):
        problem(rollback(client, host, bad), 409, "bad_rollback_step")
    for bad in ("1", 1.0, True, None):
        problem(rollback(client, host, bad), 422, "invalid_request")
    problem(client.post(f"/games/{gid}/rollback", json={"to_phase": 1, "x": 1}, headers=host.bearer()),
            422, "invalid_request")
    problem(consent(client, a, True), 409, "no_rollback_pending")
    problem(client.post(f"/games/{gid}/rollback/consent", json={"agree": True}, headers=host.bearer()),
            403, "forbidden")
    # nothing changed by any of it
    assert kontor.current_phase(gid, "public")["id"] == 2
    # a step rolled back cannot be gone back to again: it is not part of the game that stands
    buy(kontor, worker, gid, {"pass": True})
    assert rollback(client, host, 2).json["status"] == "applied"  # at 3: step 4 opens
    problem(rollback(client, host, 3), 409, "bad_rollback_step")  # abandoned
    problem(rollback(client, host, 2), 409, "bad_rollback_step")  # abandoned too (reopened as 4)
    # a game in the lobby
    lobby = Player.new()
    create_game(client, lobby, 2, title="stall")
    join(client, lobby.game, Player.new(), "P0")
    problem(rollback(client, lobby, 1), 409, "game_not_started")
    assert client.get(f"/games/{lobby.game}/rollback").json == {"game": lobby.game, "phase": None, "steps": [],
                                                                 "pending": None}
    problem(client.post("/games/nosuchgame/rollback", json={"to_phase": 1}, headers=lobby.bearer(game="nosuchgame")),
            404, "game_not_found")


def test_rollback_exactly_once_under_a_concurrent_resolve(client: Any, kontor: Kontor, worker: Any) -> None:
    host, (a, b) = new_game(client, 2, title="stall")
    gid = host.game
    buy(kontor, worker, gid, {"buy": "wein", "count": 1})
    # the step being resolved cannot be rolled back: the resolution wins
    kontor.submit(gid, 2, 1, {"buy": "tuch", "count": 1}, via="test")  # flips step 2 to resolving
    problem(rollback(client, host, 1), 409, "step_locked")
    worker()
    assert kontor.current_phase(gid, "public")["id"] == 3
    # a rollback applied first: a late resolution of the abandoned step does nothing
    assert rollback(client, host, 2).json["new_phase"] == 4
    assert kontor.resolve(gid, 3) == "noop"
    assert kontor.current_phase(gid, "public")["id"] == 4
    # racing: an order that closes the step and a rollback, many times over
    for _ in range(4):
        ph = kontor.current_phase(gid, "public")
        if ph["status"] != "collecting" or kontor.store.meta(gid)["status"] != "running":
            break
        seat = ph["requested"][0]
        results: dict[str, Any] = {}

        def order(ph: dict[str, Any] = ph, seat: int = seat, results: dict[str, Any] = results) -> None:
            try:
                kontor.submit(gid, ph["id"], seat, {"pass": True}, via="test")
                results["order"] = kontor.resolve(gid, ph["id"])
            except Exception as exc:  # noqa: BLE001 - a refusal is one of the outcomes
                results["order"] = getattr(exc, "code", repr(exc))

        def back(results: dict[str, Any] = results) -> None:
            results["rollback"] = rollback(client, host, 1).json

        threads = [threading.Thread(target=order), threading.Thread(target=back)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        worker()
        opened = ph["id"] + 1
        # the step was either resolved or rolled back, never both, and the next step opened once
        assert kontor.current_phase(gid, "public")["id"] in (opened, opened + 1)
    steps = kontor.store.history(gid)
    ids = [e["phase"] for e in steps if "phase" in e]
    assert len(ids) == len(set(ids))
    ends = [e["rollback"]["at_phase"] for e in steps if "rollback" in e]
    assert not set(ends) & set(ids)  # no step both resolved and rolled back


def test_rollback_script_refuses_what_was_not_judged(client: Any, kontor: Kontor, worker: Any) -> None:
    """rollback.lua, the one write: the at-once path refuses a sealed step that holds orders
    (they arrived after the judgement) and a state an action moved; the consent path needs
    its proposal; a paused step opens paused (the pause helper's `paused_at`)."""
    host, players = new_game(client, 2, options={"light": True})
    gid = host.game
    for _ in range(4):  # four buys: step 5 is the sealed cart bid
        ph = kontor.current_phase(gid, "public")
        for seat in ph["requested"]:
            kontor.submit(gid, ph["id"], seat, kontor.current_phase(gid, seat)["you"]["default_order"], via="test")
        worker()
    ph = kontor.current_phase(gid, "public")
    assert ph["id"] == 5 and ph["sealed"] and ph["requested"] == [0, 1]
    meta = kontor.store.meta(gid)
    game = registry.get("haendler")
    steps, _ = kontor.store.history_and_open(gid)
    line = replay(game, 2, json.loads(meta["options"]), json.loads(meta["seed"]), steps)
    restored = line.openings[4]
    nxt = {"id": 6, "expected": [0], "kind": "buy", "sealed": False, "seconds": 60}
    record = {"to_phase": 4, "at_phase": 5, "new_phase": 6, "consented": False}
    events = [{"type": "game_rolled_back", "visible_to": "all", "phase": 5, "to_phase": 4, "new_phase": 6}]
    kontor.submit(gid, 5, 0, kontor.current_phase(gid, 0)["you"]["default_order"], via="test")
    before = (kontor.store.phase(gid), kontor.store.state(gid), kontor.store.orders(gid, 5))
    out = kontor.store.rollback(gid, 5, 0, True, "", restored, record, nxt, events)
    assert (out.status, out.value) == ("refused", "sealed_orders")
    assert kontor.store.rollback(gid, 5, 7, False, "", restored, record, nxt, events).value == "version"
    assert kontor.store.rollback(gid, 5, None, False, "someproposal", restored, record, nxt, events).value \
        == "no_proposal"
    assert kontor.store.rollback(gid, 4, None, False, "", restored, record, nxt, events).value == "moved"
    assert (kontor.store.phase(gid), kontor.store.state(gid), kontor.store.orders(gid, 5)) == before
    # a paused step: the new one opens paused (from now), its deadline to be shifted on resume
    kontor.r.hset(kontor.store.key(gid, "phase"), "paused_at", "1.0")
    out = kontor.store.rollback(gid, 5, None, False, "", restored, record, nxt, events)
    assert out.status == "ok" and out.extra.split()[2] == "1"
    opened = kontor.store.phase(gid)
    assert opened["id"] == "6" and float(opened["paused_at"]) == float(opened["opened_at"])
    assert opened["pauses"] == "[]" and kontor.store.state(gid) == restored
    assert kontor.store.orders(gid, 5) == {}


def test_rollback_replays_actions_whose_events_were_packed(client: Any, kontor: Kontor, worker: Any) -> None:
    """An unprompted action's history record rides on its first event (`x`); once the
    events are packed (`service.store.archive`) it is still there, so a rollback (and the
    published history) replays it: the state a rollback restores is the one played."""
    host, (a, b) = new_game(client, 2, title="stall")
    gid = host.game
    kontor.act(gid, 1, {"hoard": "wein"}, via="test")  # step 1: an action, then seat 0 buys
    buy(kontor, worker, gid, {"buy": "tuch", "count": 1})
    after_one = state_of(kontor, gid)
    for i in range(40):  # enough events to pack the action's events away
        kontor.store.append_events(gid, [{"type": "message", "visible_to": "all", "phase": 2, "from": "host",
                                          "to": "all", "text": f"note {i}"}])
    kontor.store.compact_events(gid)
    assert kontor.r.llen(kontor.store.key(gid, "archive")) >= 1
    steps = kontor.store.history(gid)
    assert steps[0]["actions"][0]["action"] == {"hoard": "wein"}
    buy(kontor, worker, gid, {"pass": True})  # step 2
    assert rollback(client, host, 2).json["status"] == "applied"  # step 3 opens with step 2's state
    assert state_of(kontor, gid) == after_one


def test_rollback_of_a_game_of_bots_needs_no_consent(client: Any, kontor: Kontor, worker: Any) -> None:
    """Only human seats are asked: once every seat is a bot, a rollback over a sealed step
    (a sealed order stored for the open step too) applies at once."""
    host, players = new_game(client, 2, options={"light": True})
    gid = host.game
    for _ in range(6):  # four buys, the sealed cart bid (step 5), the master: step 7 is sealed again
        ph = kontor.current_phase(gid, "public")
        for seat in ph["requested"]:
            kontor.submit(gid, ph["id"], seat, kontor.current_phase(gid, seat)["you"]["default_order"], via="test")
        worker()
    ph = kontor.current_phase(gid, "public")
    assert ph["id"] == 7 and ph["sealed"], ph
    kontor.submit(gid, 7, 0, kontor.current_phase(gid, 0)["you"]["default_order"], via="test")
    for seat in (0, 1):
        r = client.patch(f"/games/{gid}/seats/{seat}", json={"bot": "greedy"}, headers=host.bearer())
        assert r.status_code == 200, r.json
    r = rollback(client, host, 5)
    assert r.status_code == 200, r.json
    assert (r.json["status"], r.json["new_phase"]) == ("applied", 8)
