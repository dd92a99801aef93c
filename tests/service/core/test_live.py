"""The live stream (`GET /games/{id}/stream`): a new step reaches an open stream without
polling, a stream resumes after `Last-Event-ID`, it ends when its bearer token expires,
and problems come as problem+json before the first byte. (That each caller's stream holds
exactly what `/events` gives that caller is in `test_redaction.py`.)"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from service.core.kontor import Kontor
from tests.service.conftest import Player, new_game


def frames(resp: Any) -> Iterator[dict[str, Any]]:
    """The server-sent events of a streamed test-client answer, one dict per frame:
    `event`, `id`, `data` (parsed), or `comment` for a comment line."""
    buf = ""
    for chunk in resp.response:
        buf += chunk.decode() if isinstance(chunk, bytes) else chunk
        while "\n\n" in buf:
            block, buf = buf.split("\n\n", 1)
            frame: dict[str, Any] = {}
            for line in block.split("\n"):
                name, _, value = line.partition(":")
                if name == "":
                    frame["comment"] = value.strip()
                elif name == "data":
                    frame["data"] = json.loads(value.strip())
                else:
                    frame[name] = value.strip()
            yield frame


def read_until(resp: Any, done: Any, limit: float = 20.0) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = []
    end = time.monotonic() + limit
    for frame in frames(resp):
        got.append(frame)
        if done(got) or time.monotonic() > end:
            break
    return got


def play_step(client: Any, kontor: Kontor, players: list[Player], worker: Any) -> int:
    """Answer the open step with every requested seat's default order; resolve it."""
    ph = kontor.current_phase(players[0].game, "public")
    for seat in ph["requested"]:
        p = players[seat]
        you = client.get(f"/games/{p.game}/phases/current", headers=p.bearer()).json["you"]
        r = client.put(f"/games/{p.game}/phases/{ph['id']}/orders/{seat}",
                       json={"token": p.order_token(ph["id"], you["default_order"])})
        assert r.status_code == 202, r.json
    worker()
    return int(ph["id"])


@pytest.mark.cluster
def test_the_first_frame_is_the_step_then_the_events(client: Any, kontor: Kontor) -> None:
    host, players = new_game(client, 2)
    gid = host.game
    resp = client.get(f"/games/{gid}/stream", headers=players[0].bearer(), buffered=False)
    assert resp.status_code == 200 and resp.mimetype == "text/event-stream"
    assert resp.headers["Cache-Control"] == "no-store"
    events = kontor.events(gid, 0, 0, 500)["items"]
    got = read_until(resp, lambda g: [f.get("id") for f in g if f.get("event") == "game"][-1:]
                     == [str(events[-1]["id"])])
    resp.close()
    ph = kontor.current_phase(gid, "public")
    assert got[0] == {"event": "step", "data": {"phase": ph["id"], "status": "collecting"}}
    games = [f for f in got if f.get("event") == "game"]
    assert [int(f["id"]) for f in games] == [e["id"] for e in events]
    assert [f["data"] for f in games] == [{**e, "sentence": f["data"]["sentence"]}
                                          for e, f in zip(events, games, strict=True)]
    assert all(isinstance(f["data"]["sentence"], str) and f["data"]["sentence"] for f in games)


@pytest.mark.cluster
def test_a_new_step_reaches_an_open_stream_without_polling(client: Any, kontor: Kontor, worker: Any) -> None:
    host, players = new_game(client, 2)
    gid = host.game
    resp = client.get(f"/games/{gid}/stream", headers=players[1].bearer(), buffered=False)
    last = kontor.events(gid, 1, 0, 500)["items"][-1]["id"]
    it = frames(resp)
    first = [next(it)]
    while str(last) != first[-1].get("id"):
        first.append(next(it))
    # The stream is registered with the process's hub and suspended: the commit's message
    # wakes it, so the next read returns at once instead of after the 15 s keep-alive.
    played = [play_step(client, kontor, players, worker)]
    start = time.monotonic()
    nxt = next(it)
    took = time.monotonic() - start
    # Woken by the commit's message: long before the 15 s keep-alive would have read anyway.
    assert took < 10, took
    assert "comment" not in nxt
    rest = [nxt]
    while not any(f.get("event") == "step" and f["data"]["phase"] == played[0] + 1 for f in rest):
        rest.append(next(it))
    resp.close()
    steps = [f["data"] for f in rest if f.get("event") == "step"]
    assert steps[-1] == {"phase": played[0] + 1, "status": "collecting"}
    assert any(f.get("event") == "game" and f["data"]["type"] == "step_resolved" for f in rest)


@pytest.mark.cluster
def test_a_stream_resumes_after_last_event_id_or_after(client: Any, kontor: Kontor, worker: Any) -> None:
    host, players = new_game(client, 2)
    gid = host.game
    play_step(client, kontor, players, worker)
    events = kontor.events(gid, 0, 0, 500)["items"]
    assert len(events) >= 3
    cut = events[1]["id"]
    want = [str(e["id"]) for e in events if e["id"] > cut]
    for how in ({"headers": {**players[0].bearer(), "Last-Event-ID": str(cut)}},
                {"headers": players[0].bearer(), "query_string": {"after": cut}},
                # The header wins over the query.
                {"headers": {**players[0].bearer(), "Last-Event-ID": str(cut)}, "query_string": {"after": 0}}):
        resp = client.get(f"/games/{gid}/stream", buffered=False, **how)
        got = read_until(resp, lambda g: [f.get("id") for f in g if "id" in f][-1:] == want[-1:])
        resp.close()
        assert got[0]["event"] == "step"
        assert [f["id"] for f in got if f.get("event") == "game"] == want, how


@pytest.mark.cluster
def test_the_stream_ends_when_the_token_expires(client: Any, kontor: Kontor) -> None:
    host, players = new_game(client, 2)
    resp = client.get(f"/games/{host.game}/stream", headers=players[0].bearer(ttl=2), buffered=False)
    start = time.monotonic()
    got = list(frames(resp))  # runs until the server ends the stream
    took = time.monotonic() - start
    assert got[0]["event"] == "step"
    assert took < 8, took
    # A fresh token and the last id go on where it stopped: nothing is sent twice.
    last = [f["id"] for f in got if "id" in f][-1]
    resp = client.get(f"/games/{host.game}/stream", headers={**players[0].bearer(), "Last-Event-ID": last},
                      buffered=False)
    again = read_until(resp, lambda g: True)
    resp.close()
    assert again == [got[0]]


# (not on the cluster leg: slow, and the same store calls as the tests above)
def test_a_finished_game_streams_its_end_and_closes(client: Any, kontor: Kontor, worker: Any) -> None:
    host, players = new_game(client, 2)
    gid = host.game
    for _ in range(400):
        if kontor.current_phase(gid, "public")["status"] == "finished":
            break
        play_step(client, kontor, players, worker)
    else:
        raise AssertionError("the game did not end in 400 steps")
    resp = client.get(f"/games/{gid}/stream", buffered=False)
    got = list(frames(resp))
    assert got[0]["event"] == "step" and got[0]["data"]["status"] == "finished"
    assert got[-1]["event"] == "game" and got[-1]["data"]["type"] == "game_finished"


@pytest.mark.cluster
def test_problems_come_before_the_stream(client: Any, kontor: Kontor) -> None:
    host, players = new_game(client, 2)
    gid = host.game
    now = int(time.time())
    expired = {"Authorization": "Bearer " + players[0].key.sign({"game": gid, "iat": now - 300, "exp": now - 200})}
    cases = [
        ("/games/nosuchgame/stream", {}, 404, "game_not_found"),
        (f"/games/{gid}/stream", {"Last-Event-ID": "12x"}, 422, "invalid_request"),
        (f"/games/{gid}/stream", {"Last-Event-ID": "-1"}, 422, "invalid_request"),
        (f"/games/{gid}/stream?after=-3", {}, 422, "invalid_request"),
        (f"/games/{gid}/stream", {"Authorization": "Bearer nonsense"}, 401, "malformed_token"),
        (f"/games/{gid}/stream", {"Authorization": "Basic abc"}, 401, "authentication_required"),
        (f"/games/{gid}/stream", expired, 401, "token_expired"),
        (f"/games/{gid}/stream", Player.new().bearer(game=gid), 401, "unknown_key"),
    ]
    for path, headers, status, code in cases:
        r = client.get(path, headers=headers)
        assert r.status_code == status, (path, headers, r.data[:300])
        assert r.mimetype == "application/problem+json", (path, headers)
        assert r.json["code"] == code, (path, headers, r.json)


class CountingStore:
    """A stand-in store for the hub: counts `live_read` calls (answers are their number)."""

    def __init__(self) -> None:
        self.reads = 0

    def live_read(self, gid: str, after: int, count: int, meta: bool = True) -> Any:
        self.reads += 1
        return ("read", self.reads, gid, after)


@pytest.mark.cluster
def test_streams_woken_together_share_one_read_and_a_new_wake_reads_again() -> None:
    from service.core.live import Hub

    store = CountingStore()
    hub = Hub(store)
    hub._join = hub._leave = lambda gid: None  # type: ignore[method-assign]  (no subscription in this test)
    with hub.watch("g") as a, hub.watch("g") as b, hub.watch("h") as c:
        hub.wake("g", "commit")
        assert hub.take(a) == ["commit"] and hub.take(b) == ["commit"] and not c.is_set()
        first = hub.read("g", 5, 100)
        assert hub.read("g", 5, 100) is first and store.reads == 1  # b takes a's answer
        assert hub.read("g", 7, 100) != first and store.reads == 2  # another cursor reads itself
        assert hub.read("h", 5, 100) != first and store.reads == 3  # another game too
        hub.wake("g", "commit")  # a new change: the next read goes to the store again
        assert hub.read("g", 7, 100)[1] == 4 and store.reads == 4
        hub.wake(None)  # everything (the subscription came back): every game reads again
        assert hub.read("g", 7, 100)[1] == 5 and hub.read("h", 5, 100)[1] == 6
    assert hub.reads == {} and hub.wakes == {}  # nothing kept once the streams have gone


def test_stream_hub_holds_a_resolving_message_for_the_commit_behind_it() -> None:
    """A `resolving` message wakes nobody at once: the commit that comes within `COALESCE`
    seconds wakes the game's streams once, with both messages (one read, one write); with
    no commit behind it, the streams are woken with it once it is due (`Hub.release_held`)."""
    import time as clock

    from service.core.live import COALESCE, Hub

    hub = Hub(CountingStore())
    hub._join = hub._leave = lambda gid: None  # type: ignore[method-assign]  (no subscription in this test)
    with hub.watch("g") as a, hub.watch("g") as b, hub.watch("h") as c:
        hub.wake("g", "resolving 3")
        assert not a.is_set() and not b.is_set() and hub.release_held() <= COALESCE
        hub.wake("g", "commit")
        assert hub.take(a) == ["resolving 3", "commit"] and hub.take(b) == ["resolving 3", "commit"]
        hub.wake("h", "resolving 7")
        assert not c.is_set()
        clock.sleep(COALESCE * 1.5)
        assert hub.release_held() == 1.0  # nothing held any more
        assert hub.take(c) == ["resolving 7"] and not a.is_set()
        hub.wake("g", "resolving 4")
        hub.wake(None)  # everything (the subscription came back): the held message with it
        assert hub.take(a) == ["resolving 4", ""] and hub.take(c) == [""]
    assert hub.held == {} and hub.reads == {} and hub.wakes == {}


@pytest.mark.cluster
def test_stream_shows_resolving_when_no_commit_comes_right_behind(client: Any, kontor: Kontor, worker: Any) -> None:
    """The step's `resolving` status, held back for the commit behind it (`COALESCE`), is
    shown once no commit came: here none can until the worker runs."""
    host, players = new_game(client, 2)
    gid = host.game
    resp = client.get(f"/games/{gid}/stream", headers=players[1].bearer(ttl=300), buffered=False)
    last = kontor.events(gid, 1, 0, 500)["items"][-1]["id"]
    it = frames(resp)
    first = [next(it)]
    while str(last) != first[-1].get("id"):
        first.append(next(it))
    phase = play_step(client, kontor, players, lambda: None)  # every order in, nothing resolves it yet
    nxt = next(it)
    assert nxt == {"event": "step", "data": {"phase": phase, "status": "resolving"}}, nxt
    worker()
    rest = [next(it)]
    while not any(f.get("event") == "step" for f in rest):
        rest.append(next(it))
    resp.close()
    assert rest[-1]["data"] == {"phase": phase + 1, "status": "collecting"}
    assert any(f.get("event") == "game" and f["data"]["type"] == "step_resolved" for f in rest)


class ChannelStore:
    """A store for the hub's subscriptions only: one server, a channel per game."""

    def live_channel(self, gid: str) -> str:
        return f"{gid}:live"

    def live_game(self, channel: str) -> str | None:
        return channel.removesuffix(":live") if channel.endswith(":live") else None

    def live_node(self, gid: str) -> str:
        return ""


class SentPubSub:
    """A subscription connection that records what was sent on it."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def ssubscribe(self, channel: str) -> None:
        self.sent.append(("ssubscribe", channel))

    def sunsubscribe(self, channel: str) -> None:
        self.sent.append(("sunsubscribe", channel))


def hub_with_shard() -> tuple[Any, Any, SentPubSub]:
    """A hub whose one shard is connected to a `SentPubSub` (no thread: confirmations are
    handed to `Shard._heard` by the test)."""
    from service.core.live import Hub, Shard

    hub = Hub(ChannelStore())
    shard, pubsub = Shard(hub, ""), SentPubSub()
    shard.pubsub = pubsub
    hub._shard = lambda node: shard  # type: ignore[method-assign]
    return hub, shard, pubsub


def test_stream_a_late_unsubscribe_confirmation_after_a_quick_resubscribe_keeps_the_connection() -> None:
    """A game unsubscribed and subscribed again before the server confirmed the
    unsubscription: the late confirmation was asked for (no `Moved`, no reconnection that
    would wake every stream for a full read); an unasked one still is `Moved`."""
    from service.core.live import Moved

    hub, shard, pubsub = hub_with_shard()
    hub.linger = 0  # unsubscribed as the last waiter leaves
    with hub.watch("other") as other:
        with hub.watch("g"):
            pass
        with hub.watch("g") as again:
            assert pubsub.sent == [("ssubscribe", "other:live"), ("ssubscribe", "g:live"),
                                   ("sunsubscribe", "g:live"), ("ssubscribe", "g:live")]
            assert shard.leaving == {"g": 1} and "g" in shard.sent
            shard._heard({"type": "sunsubscribe", "channel": "g:live"})  # late: no Moved
            assert shard.leaving == {} and not other.is_set()
            shard._heard({"type": "ssubscribe", "channel": "g:live"})  # the new subscription holds
            assert hub.take(again) == [""] and not other.is_set()
            with pytest.raises(Moved):  # now unasked: the slot moved
                shard._heard({"type": "sunsubscribe", "channel": "g:live"})


def test_stream_a_game_stays_subscribed_a_while_after_its_last_waiter() -> None:
    """Waiters that come and go (held polls) do not subscribe and unsubscribe each time:
    the subscription is kept `linger` seconds after the last one left (`Hub.release_idle`)."""
    import time as clock

    hub, shard, pubsub = hub_with_shard()
    for _ in range(3):
        with hub.watch("g"):
            pass
    assert pubsub.sent == [("ssubscribe", "g:live")] and "g" in hub.idle and hub.routes["g"] is shard
    assert 0 < hub.release_idle() <= 1.0 and pubsub.sent == [("ssubscribe", "g:live")]  # not due yet
    hub.idle["g"] = clock.monotonic() - 1  # due
    assert hub.release_idle() == 1.0
    assert pubsub.sent == [("ssubscribe", "g:live"), ("sunsubscribe", "g:live")]
    assert not hub.idle and "g" not in hub.routes and not shard.games
    # A waiter that comes back before it is due keeps the subscription as it is.
    with hub.watch("h"):
        pass
    with hub.watch("h"):
        assert "h" not in hub.idle
        hub.release_idle()
    hub.idle["h"] = clock.monotonic() - 1
    hub.release_idle()
    assert pubsub.sent[2:] == [("ssubscribe", "h:live"), ("sunsubscribe", "h:live")]
