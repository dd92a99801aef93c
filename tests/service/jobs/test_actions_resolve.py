"""An unprompted action against a step's resolution (test title Stall,
tests/service/stall.py): neither overwrites the other, whichever commits second, and a
stored order an action made illegal is replaced by the default and its seat told alone."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from engine.core.verify import verify_history
from service.store.effects import Effects
from service.store.games import Games
from tests.service.conftest import Player
from tests.service.stall import registered

# Also with the store on a Valkey Cluster and the queue on a Valkey of its own (issue 24).
pytestmark = pytest.mark.cluster


@pytest.fixture(autouse=True)
def stall() -> Iterator[Any]:
    with registered() as game:
        yield game


def stall_game(kontor: Any) -> str:
    host = Player.new()
    gid: str = kontor.create_game("stall", 2, None, None, 3, host.key.public)["id"]
    for seat in range(2):
        kontor.join(gid, f"P{seat}", Player.new().key.public, seat)
    kontor.start(gid)
    return gid


def test_an_action_between_the_resolvers_read_and_its_commit_is_kept(kontor: Any, monkeypatch: Any) -> None:
    gid = stall_game(kontor)
    kontor.submit(gid, 1, 0, {"buy": "wein", "count": 1}, via="test")  # the step flips to resolving
    real = Effects.commit_step
    calls: list[str] = []

    def commit_after_an_action(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not calls:  # the resolver has read the state; an action commits before it does
            calls.append("act")
            kontor.act(gid, 1, {"hoard": "wein"}, via="test")
        calls.append("commit")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Effects, "commit_step", commit_after_an_action)
    assert kontor.resolve(gid, 1) == "committed"
    assert calls == ["act", "commit", "commit"]  # the first commit found the state moved
    state = kontor.store.state(gid)
    assert state["stock"] == {"wein": 1, "tuch": 2}  # both the hoard and the purchase
    assert [p["goods"]["wein"] for p in state["players"]] == [1, 1]
    assert state["step"] == 2
    steps = kontor.store.history(gid)
    assert steps[0]["actions"][0]["action"] == {"hoard": "wein"}
    assert steps[0]["orders"] == {"0": {"buy": "wein", "count": 1}}


def test_a_resolution_between_the_actions_read_and_its_commit_is_kept(kontor: Any, monkeypatch: Any) -> None:
    gid = stall_game(kontor)
    kontor.submit(gid, 1, 0, {"buy": "tuch", "count": 1}, via="test")
    real = Games.act
    calls: list[str] = []

    def act_after_a_resolution(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not calls:  # the action was validated on step 1's state; step 1 commits first
            calls.append("resolve")
            assert kontor.resolve(gid, 1) == "committed"
        calls.append("act")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Games, "act", act_after_a_resolution)
    out = kontor.act(gid, 1, {"hoard": "tuch"}, via="test")
    assert calls == ["resolve", "act", "act"]
    assert out["phase"] == 2  # validated again, and taken, in the step now open
    state = kontor.store.state(gid)
    assert state["stock"]["tuch"] == 0
    assert [p["goods"]["tuch"] for p in state["players"]] == [1, 1]
    assert [x["phase"] for x in kontor.store.history(gid)] == [1]
    assert "actions" not in kontor.store.history(gid)[0]  # taken in step 2, not step 1
    # and the hoard that no longer fits is refused on the second try, changing nothing
    from service.core.errors import Problem
    with pytest.raises(Problem) as exc:
        kontor.act(gid, 0, {"hoard": "tuch"}, via="test")
    assert exc.value.code == "sold_out"


def test_two_actions_and_a_resolution_in_threads(kontor: Any, settings: Any) -> None:
    """Real concurrency: many actions race a resolution; no update is lost."""
    import threading

    from service.core.kontor import Kontor

    gid = stall_game(kontor)
    kontor.submit(gid, 1, 0, {"buy": "wein", "count": 1}, via="test")
    errors: list[BaseException] = []

    def run(fn: Any) -> None:
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    others = [Kontor(settings) for _ in range(3)]
    threads = [threading.Thread(target=run, args=(lambda k=others[0]: k.resolve(gid, 1),)),
               threading.Thread(target=run, args=(lambda k=others[1]: k.act(gid, 1, {"hoard": "tuch"}, via="t"),)),
               threading.Thread(target=run, args=(lambda k=others[2]: k.act(gid, 0, {"hoard": "wein"}, via="t"),))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors
    state = kontor.store.state(gid)
    assert state["step"] == 2
    assert state["stock"] == {"wein": 1, "tuch": 1}
    assert state["players"][0]["goods"] == {"wein": 2, "tuch": 0}
    assert state["players"][1]["goods"] == {"wein": 0, "tuch": 1}
    assert (state["players"][0]["coins"], state["players"][1]["coins"]) == (2, 3)


def test_an_order_an_action_made_illegal_gets_the_default_and_its_seat_is_told(kontor: Any) -> None:
    gid = stall_game(kontor)
    kontor.submit(gid, 1, 0, {"buy": "tuch", "count": 2}, via="test")  # stored, the step resolving
    kontor.act(gid, 1, {"hoard": "tuch"}, via="test")  # now only 1 Tuch is left
    assert kontor.resolve(gid, 1) == "committed"
    state = kontor.store.state(gid)
    assert state["players"][0]["goods"] == {"wein": 0, "tuch": 0}  # the default: pass
    assert state["stock"] == {"wein": 3, "tuch": 1}
    steps = kontor.store.history(gid)
    assert steps[0]["orders"] == {"0": {"pass": True}} and steps[0]["defaults"] == [0]
    mine = [e for e in kontor.events(gid, 0, 0, 100)["items"] if e["type"] == "order_replaced"]
    assert [(e["seat"], e["phase"], e["code"], e["order"]) for e in mine] == [
        (0, 1, "sold_out", {"buy": "tuch", "count": 2})]
    assert not [e for e in kontor.events(gid, 1, 0, 100)["items"] if e["type"] == "order_replaced"]
    assert not [e for e in kontor.events(gid, "public", 0, 100)["items"] if e["type"] == "order_replaced"]
    resolved = [e for e in kontor.events(gid, "public", 0, 100)["items"] if e["type"] == "step_resolved"]
    assert resolved[0]["defaults"] == []  # it did answer: not told as a seat that did not


def test_replay_after_actions_from_the_service(kontor: Any, worker: Any) -> None:
    gid = stall_game(kontor)
    kontor.act(gid, 1, {"hoard": "wein"}, via="test")
    kontor.submit(gid, 1, 0, {"buy": "wein", "count": 2}, via="test")
    worker()
    kontor.act(gid, 0, {"hoard": "tuch"}, via="test")
    for step in range(2, 5):
        kontor.submit(gid, step, (step - 1) % 2, {"pass": True}, via="test")
        worker()
    assert kontor.game(gid)["status"] == "finished"
    doc = kontor.published_history(gid)
    assert verify_history(doc).ok
    meta, state = kontor.state_at(gid, 1)  # rebuilt from the seed, the actions and the orders
    assert state["stock"] == {"wein": 0, "tuch": 2}
