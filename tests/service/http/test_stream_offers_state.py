"""A live stream's read offers the open step's state to the order path (`Games.live_read`,
`Games.step_state`): read by the same script as the order path's own read (step id,
version and state at one moment), parsed only when an order of that step needs it, so a
process that serves a game's streams takes its orders without a read of their own."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from service.store.effects import opened_version
from service.store.json import loads
from tests.service.conftest import default_step, new_game, raw_store
from tests.service.http.test_actions import act
from tests.service.stall import registered

# Also with the store on a Valkey Cluster and the queue on a Valkey of its own (issue 24).
pytestmark = pytest.mark.cluster


@pytest.fixture(autouse=True)
def stall() -> Iterator[Any]:
    with registered() as game:
        yield game


class Reads:
    """Counts the order path's own reads of a step's state (`step_state.lua` run alone)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, store: Any) -> None:
        self.count = 0
        real = store._direct

        def direct(name: str, keys: list[str], args: list[Any]) -> Any:
            self.count += name == "step_state"
            return real(name, keys, args)

        monkeypatch.setattr(store, "_direct", direct)


def stored_state(kontor: Any, game: str) -> Any:
    return loads(raw_store(kontor).get(kontor.store.key(game, "state")))


def test_stream_read_offers_the_steps_state_to_the_order_path(client: Any, kontor: Any,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    _, (a, _b) = new_game(client, 2, title="stall")
    store = kontor.store
    store._states.clear()
    store._offered.clear()
    reads = Reads(monkeypatch, store)
    store.live_read(a.game, 0, 50)
    held = store.step_state(a.game, "1")
    assert held == (stored_state(kontor, a.game), "0")
    assert reads.count == 0  # the stream's read served it
    assert a.game not in store._offered  # parsed once, then held as the order path's own
    assert store.step_state(a.game, "1") == held and reads.count == 0


def test_stream_read_offers_a_state_only_for_its_own_step(client: Any, kontor: Any,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    _, (a, _b) = new_game(client, 2, title="stall")
    store = kontor.store
    store._states.clear()
    store._offered.clear()
    reads = Reads(monkeypatch, store)
    store.live_read(a.game, 0, 50)
    assert store.step_state(a.game, "2") is None  # not the open step: read, and refused
    assert reads.count == 1
    assert store.step_state(a.game, "1") is not None and reads.count == 1  # the offer is still there


def test_stream_read_offers_the_version_an_action_left(client: Any, kontor: Any,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The state and its version come from one moment: after an action the offer is the
    new state with the new version (order.lua compares it), never the old state labelled new."""
    _, (a, b) = new_game(client, 2, title="stall")
    store = kontor.store
    assert store.step_state(a.game, "1")[1] == "0"
    assert act(client, b, {"hoard": "tuch"}).status_code == 200
    reads = Reads(monkeypatch, store)
    store._states.clear()
    store.live_read(a.game, 0, 50)
    state, version = store.step_state(a.game, "1")
    assert version == "1" and state == stored_state(kontor, a.game)
    assert state["stock"]["tuch"] == 1 and reads.count == 0


def test_stream_read_offers_nothing_the_process_holds_already(client: Any, kontor: Any) -> None:
    _, (a, _b) = new_game(client, 2, title="stall")
    store = kontor.store
    held = store.step_state(a.game, "1")
    store._offered.clear()
    store.live_read(a.game, 0, 50)
    assert a.game not in store._offered
    assert store.step_state(a.game, "1") == held


def test_stream_read_answers_alike_when_the_store_forgot_its_scripts(client: Any, kontor: Any,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A store that restarted without its scripts: the read answers as before, the script
    is loaded again, and the read offers the state."""
    _, (a, _b) = new_game(client, 2, title="stall")
    store = kontor.store
    before = store.live_read(a.game, 0, 50)
    raw_store(kontor).script_flush()  # (on a cluster: on every primary)
    store._states.clear()
    store._offered.clear()
    reads = Reads(monkeypatch, store)
    assert store.live_read(a.game, 0, 50) == before
    assert store.step_state(a.game, "1") is not None and reads.count == 0


def test_stream_read_offers_a_newer_version_over_an_older_one_the_process_holds(
        client: Any, kontor: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process holding the step's state from before an action takes the stream's newer
    offer, not its own older copy (which order.lua would refuse, sending the order the
    full way)."""
    _, (a, b) = new_game(client, 2, title="stall")
    store = kontor.store
    assert store.step_state(a.game, "1")[1] == "0"  # held, version 0
    assert act(client, b, {"hoard": "tuch"}).status_code == 200
    reads = Reads(monkeypatch, store)
    store.live_read(a.game, 0, 50)
    state, version = store.step_state(a.game, "1")
    assert version == "1" and state == stored_state(kontor, a.game) and reads.count == 0


def test_a_commit_offers_the_step_it_opened_to_its_own_processs_order_path(
        client: Any, kontor: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that resolves a step (a web resolving in the web, for a game nobody
    follows by stream) takes the next step's orders without reading its state: the
    commit offers the state it wrote, at the version commit.lua gave the step."""
    _, (a, _b) = new_game(client, 2)
    store = kontor.store
    default_step(kontor, a.game)
    phase = int(store.phase(a.game)["id"])
    store._states.clear()
    store._offered.clear()
    reads = Reads(monkeypatch, store)
    assert kontor.resolve(a.game, phase) == "committed"
    assert int(store.phase(a.game)["id"]) == phase + 1
    assert store.step_state(a.game, str(phase + 1)) == (stored_state(kontor, a.game), "0")
    assert reads.count == 0


def test_a_commit_offers_no_state_for_a_step_it_did_not_open_as_usual() -> None:
    assert opened_version({"id": 5}, None) == "0"
    assert opened_version({"id": 5}, {"step": {"banks": "{}"}}) == "0"
    assert opened_version({"id": 5}, {"step": {"v": "3"}}) == "3"
    assert opened_version({}, None) is None  # the game is over: no step opened
    assert opened_version({"id": 5}, {"step": {"status": "resolving"}}) is None
