"""The pacing of repeated public polls (`service/http/pace.py`, in `FastPaths._poll`):
a poll that would repeat the answer its address was last given, within `poll_pace_ms`,
is held until the game changes or the pace has passed, then read and answered; a
changed answer is never held; pace 0 holds nothing; beyond `poll_pace_max_held` held
polls a poll is answered at once.

The waits are observed through the pacer's clock and wait (injected), or released by the
game's change while the pace is a minute long: no test measures a duration.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Any

import pytest

from service.config import Settings
from service.core.kontor import Kontor
from service.http.fastpath import FastPaths
from service.http.pace import Pacer
from tests.service.conftest import new_game, play_to, wait_until

#: A pace no test waits out: a poll held that long would fail the test.
MINUTE = 60_000


@pytest.fixture
def settings(settings: Settings, request: pytest.FixtureRequest) -> Settings:
    """The tests' settings with pacing on (a minute, or the test's parameters)."""
    return dataclasses.replace(settings, **getattr(request, "param", {"poll_pace_ms": MINUTE}))


def paced(param: dict[str, int]) -> Any:
    return pytest.mark.parametrize("settings", [param], indirect=True)


@pytest.fixture(autouse=True)
def gevent_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Polls are held only in a gevent-patched process (a gevent worker): the tests' app is taken for one."""
    monkeypatch.setattr(Pacer, "cooperative", staticmethod(lambda: True))


def pacer_of(client: Any) -> Pacer:
    fast = client.application.wsgi_app
    assert isinstance(fast, FastPaths)
    return fast.pacer


class FakeTime:
    """The pacer's clock, and its wait: a wait records how long it was asked to wait, runs
    `during` (a change made while the poll is held) and moves the clock on by that much."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, pacer: Pacer) -> None:
        self.now = 1000.0
        self.asked: list[float] = []
        self.during: Any = None
        monkeypatch.setattr(pacer, "clock", lambda: self.now)
        monkeypatch.setattr(pacer, "wait", self.wait)

    def wait(self, woken: Any, seconds: float) -> bool:
        self.asked.append(seconds)
        if self.during is not None:
            self.during()
        self.now += seconds
        return False


def bid_step(client: Any, kontor: Kontor, worker: Any) -> tuple[str, dict[str, Any]]:
    host, _ = new_game(client, 3)
    return host.game, play_to(kontor, worker, host.game, "cart_bid")


def submit(kontor: Kontor, gid: str, ph: dict[str, Any], seat: int) -> None:
    kontor.submit(gid, ph["id"], seat, kontor.current_phase(gid, seat)["you"]["default_order"], via="test")


@paced({"poll_pace_ms": 300})
def test_poll_pace_a_repeated_unchanged_poll_is_held_until_the_pace_has_passed(
        client: Any, kontor: Kontor, worker: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    gid, _ = bid_step(client, kontor, worker)
    pacer = pacer_of(client)
    t = FakeTime(monkeypatch, pacer)
    path = f"/games/{gid}/phases/current"
    first = client.get(path)
    answered_at = t.now
    t.now += 0.05
    second = client.get(path)
    assert t.asked == [pytest.approx(0.25)]  # held for what was left of the pace
    assert t.now >= answered_at + 0.3  # answered no earlier than the pace after the first answer
    assert second.status_code == 200 and second.get_data() == first.get_data()
    assert second.headers["ETag"] == first.headers["ETag"] and pacer.holds == 1
    # That hold subscribed this process to the game; its confirmation, a message of the game,
    # comes on the hub's own thread. Heard between a later poll's read and its hold, it would
    # (rightly) end that hold at once: the polls below come after it.
    hub = kontor.live_hub()
    wait_until(lambda: hub.heard_of(gid)[0] and hub.heard_of(gid)[1] >= 1)
    # The pace counts from the latest answer: once it has passed, a poll is answered at once.
    t.now += 0.3
    assert client.get(path).status_code == 200 and len(t.asked) == 1
    # Another address was not given that answer: it is not held.
    assert client.get(path, environ_base={"REMOTE_ADDR": "192.0.2.7"}).status_code == 200
    assert len(t.asked) == 1
    # A conditional poll that repeats its answer (304) is paced alike.
    t.now += 0.1
    etag = first.headers["ETag"]
    assert client.get(path, headers={"If-None-Match": etag}).status_code == 304 and len(t.asked) == 2


@paced({"poll_pace_ms": 300})
def test_poll_pace_a_held_poll_is_answered_what_the_store_says_after_the_wait(
        client: Any, kontor: Kontor, worker: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    gid, ph = bid_step(client, kontor, worker)
    t = FakeTime(monkeypatch, pacer_of(client))
    path = f"/games/{gid}/phases/current"
    first = client.get(path)
    assert first.json["answered"] == []
    t.during = lambda: submit(kontor, gid, ph, 1)  # a seat answers while the poll is held
    second = client.get(path)
    assert len(t.asked) == 1
    assert second.json["answered"] == [1] and second.headers["ETag"] != first.headers["ETag"]


@paced({"poll_pace_ms": 300})
def test_poll_pace_a_different_answer_is_never_held(
        client: Any, kontor: Kontor, worker: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    gid, ph = bid_step(client, kontor, worker)
    t = FakeTime(monkeypatch, pacer_of(client))
    path = f"/games/{gid}/phases/current"
    assert client.get(path).json["answered"] == []
    for seat in (0, 1):
        submit(kontor, gid, ph, seat)
        assert client.get(path).json["answered"] == list(range(seat + 1))
    assert t.asked == [] and pacer_of(client).holds == 0


@paced({"poll_pace_ms": 0})
def test_poll_pace_0_holds_nothing(client: Any, kontor: Kontor, worker: Any,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    gid, _ = bid_step(client, kontor, worker)
    pacer = pacer_of(client)
    t = FakeTime(monkeypatch, pacer)
    path = f"/games/{gid}/phases/current"
    answers = {client.get(path).get_data() for _ in range(3)}
    assert len(answers) == 1 and t.asked == [] and pacer.holds == 0 and not pacer.last


def test_poll_pace_a_commit_releases_a_held_poll_at_once_with_the_new_step(
        client: Any, app: Any, kontor: Kontor, worker: Any) -> None:
    gid, ph = bid_step(client, kontor, worker)
    for seat in range(3):
        submit(kontor, gid, ph, seat)
    path = f"/games/{gid}/phases/current"
    first = client.get(path)  # every seat answered: the step is resolving until the worker commits it
    assert first.json["id"] == ph["id"] and first.json["status"] == "resolving"
    pacer, hub = pacer_of(client), kontor.live_hub()
    # The game was not subscribed here at this poll's read: the hold subscribes, and the
    # subscription's confirmation ends it (what came before is read again: still resolving).
    again = client.get(path)
    assert again.status_code == 200 and again.json["status"] == "resolving" and pacer.holds == 1
    assert hub.heard_of(gid)[0]  # subscribed, lingering after its last waiter
    got: list[Any] = []
    held = threading.Thread(target=lambda: got.append(app.test_client().get(path)), daemon=True)
    held.start()
    deadline = time.monotonic() + 20
    while not (pacer.held == 1 and gid in hub.waiters) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert pacer.held == 1 and held.is_alive()
    worker()  # resolves and commits the step: its `live` message releases the poll
    held.join(30)  # far below the minute's pace
    assert not held.is_alive() and got
    assert got[0].status_code == 200 and int(got[0].json["id"]) > int(ph["id"])
    assert got[0].json["status"] == "collecting" and pacer.held == 0 and pacer.holds == 2


@paced({"poll_pace_ms": MINUTE, "poll_pace_max_held": 1})
def test_poll_pace_the_cap_answers_at_once(client: Any, app: Any, kontor: Kontor, worker: Any,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    gid, _ = bid_step(client, kontor, worker)
    pacer = pacer_of(client)
    entered, go = threading.Event(), threading.Event()
    asked: list[float] = []

    def wait(woken: Any, seconds: float) -> bool:
        asked.append(seconds)
        entered.set()
        go.wait(20)
        return False

    monkeypatch.setattr(pacer, "wait", wait)
    path = f"/games/{gid}/phases/current"
    first = client.get(path)
    got: list[Any] = []
    held = threading.Thread(target=lambda: got.append(app.test_client().get(path)), daemon=True)
    held.start()
    try:
        assert entered.wait(20) and pacer.held == 1
        again = client.get(path)  # the cap is reached: answered without being held
        assert again.status_code == 200 and again.get_data() == first.get_data()
        assert len(asked) == 1 and held.is_alive()
    finally:
        go.set()
        held.join(20)
    assert got and got[0].get_data() == first.get_data() and pacer.held == 0


@paced({"poll_pace_ms": 300})
def test_poll_pace_is_off_under_a_sync_worker(client: Any, kontor: Kontor, worker: Any,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Without gevent's patching (a sync worker) a hold would block the whole worker: none."""
    from service.http import pace

    assert not pace.gevent_patched()  # the tests' process is not patched
    monkeypatch.setattr(Pacer, "cooperative", staticmethod(pace.gevent_patched))
    gid, _ = bid_step(client, kontor, worker)
    pacer = pacer_of(client)
    t = FakeTime(monkeypatch, pacer)
    path = f"/games/{gid}/phases/current"
    first = client.get(path)
    t.now += 0.05
    second = client.get(path)
    assert second.status_code == 200 and second.get_data() == first.get_data()
    assert t.asked == [] and pacer.holds == 0 and not pacer.last


def test_poll_pace_the_cap_stays_below_the_headroom() -> None:
    """Held polls keep their connections: a cap not below `stream_headroom` is refused at start."""
    assert Settings().poll_pace_max_held * 4 <= Settings().stream_headroom  # a quarter by default
    Settings(poll_pace_max_held=999, stream_headroom=1000).check()
    for cap in (1000, 1500):
        with pytest.raises(ValueError, match="KONTOR_POLL_PACE_MAX_HELD is .*KONTOR_STREAM_HEADROOM"):
            Settings(poll_pace_max_held=cap, stream_headroom=1000).check()
    Settings(poll_pace_max_held=1000, stream_headroom=1000, poll_pace_ms=0).check()  # pacing off: no matter


def test_poll_pace_a_change_between_the_read_and_the_hold_ends_the_hold_at_once() -> None:
    """The poll read the old step; the game's message came before the poll began to wait:
    it is not held for the pace (the hub heard the game since the read)."""
    from contextlib import contextmanager

    from service.core.live import Hub, Waiter

    hub = Hub(store=None)
    hub.routes["g1"] = object()  # type: ignore[assignment]  # subscribed here (lingering after a poll)
    before = hub.heard_of("g1")
    hub.wake("g1", "commit 7")  # the commit, between the poll's read and its hold
    assert before == (True, 0) and hub.heard_since("g1", before)
    assert not hub.heard_since("g2", hub.heard_of("g2"))  # not subscribed: nothing to tell

    @contextmanager
    def watch(gid: str) -> Any:
        yield Waiter()

    hub.watch = watch  # type: ignore[method-assign]  # (no subscription in this test)
    pacer = Pacer()

    def wait(woken: Any, seconds: float) -> bool:
        raise AssertionError("held though the game had changed since the read")

    pacer.wait = wait  # type: ignore[method-assign]
    assert pacer.held_until(hub, "g1", 60.0, 10, before) is not None and pacer.held == 0
    waited: list[float] = []

    def times_out(woken: Any, seconds: float) -> bool:
        waited.append(seconds)
        return False

    pacer.wait = times_out  # type: ignore[method-assign]
    assert pacer.held_until(hub, "g1", 60.0, 10, hub.heard_of("g1")) is not None  # nothing since this read: it waits
    assert len(waited) == 1 and 0 < waited[0] <= 60.0


class CountingHub:
    """What `Pacer.read` asks of the hub: whether the game is subscribed here and how many
    of its messages were heard."""

    def __init__(self) -> None:
        self.heard = 0
        self.subscribed = True

    def heard_of(self, gid: str) -> tuple[bool, int]:
        return self.subscribed, self.heard


class Reads:
    """The store's reads of the open step, counted; each answers its own number."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> int:
        self.count += 1
        return self.count


def test_poll_pace_the_polls_one_pace_ends_read_the_store_once_after_it() -> None:
    from service.http.pace import Ended

    pacer, hub, reads = Pacer(), CountingHub(), Reads()
    now = [10.0]
    pacer.clock = lambda: now[0]  # type: ignore[method-assign]
    early = pacer.read(hub, "g1", None, reads)  # a poll answered at once: read during the holds below
    ended = [Ended(9.9, deadline=10.2) for _ in range(3)]  # three polls held until the same pace's end
    now[0] = 10.2
    answers = [pacer.read(hub, "g1", e, reads) for e in ended]
    assert early == 1 and answers == [2, 2, 2] and reads.count == 2 and pacer.shared == 2
    # Not a read that began before the pace's end, nor one of another game.
    assert pacer.read(hub, "g1", Ended(10.1, deadline=10.3), reads) == 3
    assert pacer.read(hub, "g2", Ended(9.9, deadline=10.2), reads) == 4
    # A poll that was not held always reads.
    assert pacer.read(hub, "g1", None, reads) == 5 and reads.count == 5


def test_poll_pace_the_polls_one_message_ends_read_the_store_once_after_it() -> None:
    from service.http.pace import Ended

    pacer, hub, reads = Pacer(), CountingHub(), Reads()
    now = [10.0]
    pacer.clock = lambda: now[0]  # type: ignore[method-assign]
    hub.heard = 4
    assert pacer.read(hub, "g1", None, reads) == 1  # read before the message
    hub.heard, now[0] = 5, 10.1  # the commit's message: it ends the holds begun at 9.9 and 10.0
    assert pacer.read(hub, "g1", Ended(9.9, heard=5), reads) == 2  # the first reads
    assert pacer.read(hub, "g1", Ended(10.0, heard=5), reads) == 2  # the second takes it
    # A hold that ended on an earlier message, or that began after that read (counts
    # start again on subscribing), or that the subscription's confirmation ended: reads.
    assert pacer.read(hub, "g1", Ended(9.9, heard=4), reads) == 3
    assert pacer.read(hub, "g1", Ended(10.2, heard=5), reads) == 4
    assert pacer.read(hub, "g1", Ended(9.9), reads) == 5
    hub.heard = 6  # another message since the latest read: a hold it ended reads again
    assert pacer.read(hub, "g1", Ended(9.9, heard=6), reads) == 6
    hub.subscribed = False  # a read while not subscribed serves no hold a message ended
    assert pacer.read(hub, "g1", None, reads) == 7
    assert pacer.read(hub, "g1", Ended(9.9, heard=0), reads) == 8 and pacer.shared == 1


@pytest.mark.parametrize(("first", "expected"), [("answer", "answer"), (ConnectionError("store down"), "own")])
def test_poll_pace_a_held_poll_waits_for_the_read_under_way_and_reads_itself_if_it_fails(
        first: Any, expected: str) -> None:
    from service.http.pace import Ended

    pacer, hub = Pacer(), CountingHub()
    pacer.clock = lambda: 10.5  # type: ignore[method-assign]
    started, go = threading.Event(), threading.Event()
    calls: list[str] = []
    got: list[Any] = []
    other: list[Any] = []

    def read() -> Any:
        calls.append("read")
        started.set()
        assert go.wait(20)
        if isinstance(first, Exception):
            raise first
        return first

    def poll() -> None:
        try:
            got.append(pacer.read(hub, "g1", Ended(10.0, deadline=10.4), read))
        except ConnectionError as exc:
            got.append(exc)

    t = threading.Thread(target=poll, daemon=True)
    t.start()
    assert started.wait(20)
    t2 = threading.Thread(target=lambda: other.append(pacer.read(hub, "g1", Ended(10.0, deadline=10.4),
                                                                lambda: "own")), daemon=True)
    t2.start()
    time.sleep(0.05)  # (the second poll is waiting on the first one's read, or takes it once done)
    go.set()
    t.join(20), t2.join(20)
    assert other == [expected] and calls == ["read"] and got == [first]
