"""A commit's live message carries what the streams woken by it need (commit.lua,
`service.core.live.Commit`): the step it opened and its events as stored, so a stream
that has sent everything before the commit sends the commit's frames without reading
the store, the very frames a read would have given it (cut for its caller as a read's
are). Anything that does not follow on what a stream sent is read as before: the first
wake after subscribing, a gap in the event numbers, a seat change, a commit too big for
the message (which then says just `commit`)."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from engine.core.events import ALL
from service.core.kontor import Kontor
from service.core.live import BATCH, Commit, Live, Note, Waiter, closed
from service.store.json import dumps
from tests.service.conftest import Player, new_game, wait_until
from tests.service.core.test_live import frames, play_step
from tests.service.core.test_redaction import bot_step

#: A seed whose random bots draw a card (an event only its seat sees) in the first round.
SEED = "redaction-random-B3"

# Also with the store on a Valkey Cluster and the queue on a Valkey of its own (issue 24).
pytestmark = pytest.mark.cluster


class Reads:
    """Counts the store reads of the streams (`Store.live_read`, which `Hub.read` calls too)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, kontor: Kontor) -> None:
        self.count = 0
        plain = kontor.store.live_read

        def counted(*args: Any, **kw: Any) -> Any:
            self.count += 1
            return plain(*args, **kw)

        monkeypatch.setattr(kontor.store, "live_read", counted)


def subscribed(hub: Any, woken: Waiter) -> None:
    """Wait for the subscription's confirmation (its wake reads: taken here)."""
    wait_until(woken.is_set)
    assert hub.take(woken) == [""]


def commits(hub: Any, woken: Waiter, n: int = 1) -> list[str]:
    """The messages the game's streams are woken by, until `n` commits came."""
    notes: list[str] = []
    end = time.monotonic() + 10
    while sum(getattr(x, "commit", None) is not None for x in notes) < n:
        assert time.monotonic() < end, notes
        woken.wait(0.1)
        notes += hub.take(woken)
    return notes


def bot_steps(kontor: Kontor, gid: str, worker: Any) -> Any:
    """Steps answered by random bots (so seats get events the others may not see), each
    resolved; yields after each."""
    for _ in range(60):
        bot_step(kontor, gid, SEED, "random")
        worker()
        yield


def hidden(notes: list[str]) -> int:
    """How many events the commits of `notes` carried that some seat may not see."""
    return sum(isinstance(ev["visible_to"], list) for n in notes if getattr(n, "commit", None) is not None
               for _, ev, _, _ in n.commit.rows)


def viewers(host: Player, players: list[Player]) -> list[tuple[Any, str | None]]:
    return [*((p.seat, p.key.kid) for p in players), ("public", None), ("host", host.key.kid)]


def test_a_commit_message_gives_every_viewer_what_a_read_gives_it_without_reading(
        client: Any, kontor: Kontor, worker: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    host, players = new_game(client, 4, seed=SEED)
    gid = host.game
    hub = kontor.live_hub()
    until = time.time() + 300
    # Per viewer two streams at the same place: one is told the commit, the other reads.
    pairs = [(Live(kontor, gid, who, 0, until, kid=kid), Live(kontor, gid, who, 0, until, kid=kid))
             for who, kid in viewers(host, players)]
    private = steps = 0
    with hub.watch(gid) as woken:
        subscribed(hub, woken)
        reads = Reads(monkeypatch, kontor)
        for _ in bot_steps(kontor, gid, worker):
            notes = commits(hub, woken)
            private += hidden(notes)
            steps += 1
            for told, twin in pairs:
                got = told.told(notes)
                assert reads.count == 0  # nothing read
                assert got is not None and got[-1].startswith("event: step\n")
                assert got == twin.read(), told.viewer  # byte for byte what a read sends
                reads.count = 0
                assert (told.cursor, told.counts, told.seen, told.step) == (twin.cursor, twin.counts, twin.seen,
                                                                            twin.step)
            if private and steps >= 3:
                break
    assert private  # the commits had events that some seat may not see


def test_each_seat_is_told_only_what_it_may_see(client: Any, kontor: Kontor, worker: Any) -> None:
    """The message carries every event of the commit (as stored); each seat's frames are
    cut for it, as `/events` cuts them: another seat's hidden events never reach it."""
    host, players = new_game(client, 4, seed=SEED)
    gid = host.game
    hub = kontor.live_hub()
    until = time.time() + 300
    streams = [Live(kontor, gid, who, 0, until, kid=kid) for who, kid in viewers(host, players)]
    sent: list[list[str]] = [[] for _ in streams]
    cut = [s.seen for s in streams]
    private = 0
    with hub.watch(gid) as woken:
        subscribed(hub, woken)
        for _ in bot_steps(kontor, gid, worker):
            notes = commits(hub, woken)
            private += hidden(notes)
            for i, s in enumerate(streams):
                got = s.told(notes)
                assert got is not None
                sent[i] += got
            if private:
                break
    assert private  # the commits had events that some seat may not see
    for i, s in enumerate(streams):
        want = kontor.events(gid, s.viewer, cut[i], 500)["items"]
        games = [f for f in frames(type("R", (), {"response": sent[i]})()) if f.get("event") == "game"]
        assert [f["data"]["id"] for f in games] == [e["id"] for e in want], s.viewer
        assert [{k: v for k, v in f["data"].items() if k != "sentence"} for f in games] == want, s.viewer
        for f in games:
            vis = f["data"]["visible_to"]
            assert vis == ALL or (isinstance(s.viewer, int) and s.viewer in vis), (s.viewer, f)
    seat_private = [[f for f in frames(type("R", (), {"response": sent[i]})()) if f.get("event") == "game"
                     and f["data"]["visible_to"] != ALL] for i in range(len(streams))]
    assert any(seat_private[:4]) and seat_private[4:] == [[], []]  # the seats' own; none to the public or host


def test_a_gap_a_first_wake_or_a_bare_commit_is_read(client: Any, kontor: Kontor, worker: Any) -> None:
    host, players = new_game(client, 2)
    gid = host.game
    hub = kontor.live_hub()
    until = time.time() + 300
    with hub.watch(gid) as woken:
        subscribed(hub, woken)
        live = Live(kontor, gid, 0, 0, until, kid=players[0].key.kid)
        twin = Live(kontor, gid, 0, 0, until, kid=players[0].key.kid)
        play_step(client, kontor, players, worker)
        first = commits(hub, woken)
        play_step(client, kontor, players, worker)
        second = commits(hub, woken)
        place = (live.cursor, live.counts, live.seen, live.step)
        assert live.told(second) is None  # the first commit's events were never sent: a gap
        assert live.told([""]) is None  # a first wake after (re)subscribing
        assert live.told(["commit"]) is None  # a commit whose events did not fit
        assert live.told([*first, "seat 1", *second]) is None  # a seat changed
        assert live.told([*first, "events", *second]) is None  # events of another script
        # More events than a read takes at once (a read would send the step after its first BATCH).
        many = Note.of(f"commit {live.cursor} {live.step[0] + 1} collecting 0\n1.0\n" + "".join(
            '\n\n{"type":"x","visible_to":"all"}' for _ in range(BATCH + 1)))
        assert len(many.commit.rows) == BATCH + 1 and live.told([many]) is None
        assert (live.cursor, live.counts, live.seen, live.step) == place  # nothing taken from them
        assert live.told([*first, *second]) == twin.read()  # in order, both commits
        assert live.told(first) is None  # already sent: read


def test_a_stream_woken_by_a_commit_reads_nothing(client: Any, kontor: Kontor, worker: Any,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    host, players = new_game(client, 2)
    gid = host.game
    resp = client.get(f"/games/{gid}/stream", headers=players[1].bearer(ttl=300), buffered=False)
    it = frames(resp)
    next(it)
    wait_until(lambda: kontor.live_hub().wakes.get(gid, 0) >= 1)  # subscribed: its wake is pending
    r = client.post(f"/games/{gid}/messages", json={"to": [1], "text": "hello"},
                    headers={**players[0].bearer(), "Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 201, r.json
    while "hello" not in str(next(it).get("data")):
        pass
    reads = Reads(monkeypatch, kontor)
    step = play_step(client, kontor, players, worker)
    got = [next(it)]
    while got[-1].get("event") != "step":
        got.append(next(it))
    resp.close()
    assert got[-1]["data"] == {"phase": step + 1, "status": "collecting"}
    assert any(f.get("event") == "game" and f["data"]["type"] == "step_resolved" for f in got)
    assert reads.count == 0


def seat_stream(client: Any, kontor: Kontor) -> tuple[Player, list[Player], str, Any, Live]:
    """A two-seat game and seat 1's stream (by its key): host, players, game, hub, stream."""
    host, players = new_game(client, 2)
    gid = host.game
    return host, players, gid, kontor.live_hub(), Live(kontor, gid, 1, 0, time.time() + 300,
                                                        kid=players[1].key.kid)


def test_a_seat_change_before_a_commit_is_read_and_ends_the_seat_stream(
        client: Any, kontor: Kontor, worker: Any) -> None:
    host, players, gid, hub, live = seat_stream(client, kontor)
    with hub.watch(gid) as woken:
        subscribed(hub, woken)
        newcomer = Player.new()
        r = client.patch(f"/games/{gid}/seats/1", json={"public_key": newcomer.key.public}, headers=host.bearer())
        assert r.status_code == 200, r.json
        newcomer.game, newcomer.seat = gid, 1
        play_step(client, kontor, [players[0], newcomer], worker)
        notes = commits(hub, woken)
    assert "seat 1" in notes
    assert live.told(notes) is None  # read: the seat is no longer this key's
    assert live.read(shared=True) == [closed("seat_changed")] and live.ended == "seat_changed"


def test_a_seat_stream_is_never_told_a_commit_once_its_key_lost_the_seat(
        client: Any, kontor: Kontor, worker: Any) -> None:
    """Even told a commit alone (its seat's message left out), a stream whose last read
    found its key gone from the seat sends nothing of it."""
    host, players, gid, hub, live = seat_stream(client, kontor)
    with hub.watch(gid) as woken:
        subscribed(hub, woken)
        r = client.patch(f"/games/{gid}/seats/1", json={"bot": "greedy"}, headers=host.bearer())
        assert r.status_code == 200, r.json
        assert live.read(shared=True) == [closed("seat_changed")]
        live.seats = kontor.store.r.hgetall(kontor.store.key(gid, "seats"))  # (as a read now finds them)
        play_step(client, kontor, [players[0]], worker)
        notes = [n for n in commits(hub, woken) if getattr(n, "commit", None) is not None]
    assert live.told(notes) is None


def test_the_message_is_bounded(kontor: Kontor) -> None:
    """A commit's message carries its events and the new step's state when they fit the
    bound; a state that does not is left out; events that do not make it say just
    `commit`; a commit with no events too."""
    hub = kontor.live_hub()
    big = "x" * 20000
    event = {"type": "note", "visible_to": ALL, "text": "small"}
    cases = [([event], {"s": 1}, True, True), ([event], {"s": big}, True, False),
             ([{**event, "text": big}], {"s": 1}, False, False), ([], {"s": 1}, False, False)]
    for events, state, carried, with_state in cases:
        gid = f"push{uuid.uuid4().hex[:8]}"
        kontor.store.r.hset(kontor.store.key(gid, "meta"), mapping={"status": "lobby", "seats": "2"})
        with hub.watch(gid) as woken:
            subscribed(hub, woken)
            committed = kontor.store.commit_step(gid, 0, state, None, {"id": 1, "expected": [0, 1], "kind": "bid",
                                                                       "seconds": 60}, "running", events)
            assert committed.committed
            wait_until(woken.is_set)
            (note,) = hub.take(woken)
        commit = getattr(note, "commit", None)
        assert (commit is not None) == carried, note[:80]
        if not carried:
            assert note == "commit"
            continue
        assert commit.before == 0 and commit.step == (1, "collecting")
        assert [(n, ev) for n, ev, _, _ in commit.rows] == [(1, event)]
        assert commit.state == (dumps(state) if with_state else "") and commit.version == "0"


def test_a_commit_message_offers_the_new_steps_state_to_the_order_path(
        client: Any, kontor: Kontor, worker: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    host, players = new_game(client, 2)
    gid = host.game
    hub, store = kontor.live_hub(), kontor.store
    with hub.watch(gid) as woken:
        subscribed(hub, woken)
        step = play_step(client, kontor, players, worker)
        commits(hub, woken)
    count = 0
    real = store._direct

    def direct(name: str, keys: list[str], args: list[Any]) -> Any:
        nonlocal count
        count += name == "step_state"
        return real(name, keys, args)

    monkeypatch.setattr(store, "_direct", direct)
    state, version = store.step_state(gid, str(step + 1))
    assert count == 0 and version == "0"
    assert state == kontor.store.snapshot(gid)[2]


def test_a_message_this_process_cannot_read_as_a_commit_carries_nothing() -> None:
    for text in ("commit", "commit 3 4 collecting 0", "commit x 4 collecting 0\n1.0\n\n\n{}",
                 "commit 3 4 collecting 0\n1.0\n\n\nnot json", "events\n1\n2\n3\n4"):
        note = Note.of(text)
        assert getattr(note, "commit", None) is None and note == text
    note = Note.of('commit 3 4 collecting 0\n1.5\n{"s":1}\n1,1,1\n{"type":"x","visible_to":"all"}')
    assert isinstance(note.commit, Commit) and note.commit.before == 3 and note.commit.step == (4, "collecting")
    assert note.commit.rows == [(4, {"type": "x", "visible_to": "all"}, "1.5", (1, 1, 1))]
    assert note.startswith("commit ")


def test_a_late_message_never_offers_an_older_state_version_than_the_process_holds(kontor: Kontor) -> None:
    """A commit's message may come after an action moved the new step's state on (its
    version counts the actions) and an order read that: the older state is not offered."""
    store, gid = kontor.store, f"late{uuid.uuid4().hex[:8]}"
    store._states[gid] = ("5.1", {"moved": True})
    store.offer_step_state(gid, "5", "0", '{"moved":false}')
    assert store._states[gid] == ("5.1", {"moved": True}) and gid not in store._offered
    store._states.pop(gid)
    store.offer_step_state(gid, "5", "2", '{"v":2}')
    store.offer_step_state(gid, "5", "1", '{"v":1}')
    assert store._offered[gid] == ("5", "2", '{"v":2}')
    store.offer_step_state(gid, "6", "0", '{"v":0}')  # the next step: taken
    assert store._offered[gid] == ("6", "0", '{"v":0}')
    store._offered.pop(gid)
