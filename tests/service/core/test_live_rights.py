"""The live stream re-checks its caller's rights (issue 23): a seat's stream ends at once
(`event: closed`, `seat_changed`) when the host gives the seat another key or a bot, and
never carries the new holder's private events; the caps per process, client address and
game (429 `too_many_streams` with `Retry-After`; leases in the store end by themselves
when a process dies); a public stream ends after an idle time."""

from __future__ import annotations

import time
import uuid
from dataclasses import replace
from typing import Any

import pytest

from service import create_app
from service.config import Settings
from service.core.kontor import Kontor
from service.core.live import Live, closed
from tests.service.conftest import Player, new_game, problem
from tests.service.core.test_live import frames

# Also with the store on a Valkey Cluster and the queue on a Valkey of its own (issue 24).
pytestmark = pytest.mark.cluster


def message(client: Any, who: Player, to: list[int], text: str) -> None:
    headers = {**who.bearer(), "Idempotency-Key": uuid.uuid4().hex}
    r = client.post(f"/games/{who.game}/messages", json={"to": to, "text": text}, headers=headers)
    assert r.status_code == 201, r.json


def opened(client: Any, gid: str, headers: dict[str, str], **kw: Any) -> tuple[Any, Any]:
    """An open stream whose first write (the step and the events so far) was read."""
    resp = client.get(f"/games/{gid}/stream", headers=headers, buffered=False, **kw)
    assert resp.status_code == 200, resp.json
    it = frames(resp)
    next(it)
    return resp, it


def rest(it: Any, limit: float = 20.0) -> list[dict[str, Any]]:
    """Every frame until the stream ends (or `limit` seconds)."""
    got: list[dict[str, Any]] = []
    end = time.monotonic() + limit
    for frame in it:
        got.append(frame)
        if time.monotonic() > end:
            break
    return got


# -- rights --------------------------------------------------------------------------------
@pytest.mark.parametrize("change", ["key", "bot"])
def test_a_seat_stream_closes_when_the_seat_changes_hands_and_never_shows_the_new_holder(
        client: Any, kontor: Kontor, change: str) -> None:
    host, (p0, p1) = new_game(client, 2)
    gid = host.game
    message(client, p0, [1], "before: for the old seat 1")
    other, other_it = opened(client, gid, p0.bearer(ttl=300))  # seat 0's stream: it stays open
    resp, it = opened(client, gid, p1.bearer(ttl=300))
    newcomer = Player.new()
    body = {"public_key": newcomer.key.public} if change == "key" else {"bot": "greedy"}
    r = client.patch(f"/games/{gid}/seats/1", json=body, headers=host.bearer())
    assert r.status_code == 200, r.json
    changed = time.monotonic()
    # Right behind the change, before the stream could look: private to the new seat 1.
    message(client, p0, [1], "after: for the new seat 1")
    got = rest(it)
    took = time.monotonic() - changed
    resp.close()
    texts = [f["data"].get("text") for f in got if f.get("event") == "game"]
    assert "after: for the new seat 1" not in texts, got
    assert got[-1]["event"] == "closed", got
    assert got[-1]["data"]["code"] == "seat_changed"
    assert "host gave this seat" in got[-1]["data"]["detail"]
    assert took < 5, took
    theirs = []
    for frame in other_it:
        theirs.append(frame)
        if frame.get("event") == "closed" or "after: for" in str(frame.get("data")):
            break
    other.close()
    assert theirs[-1]["event"] == "game" and theirs[-1]["data"]["text"] == "after: for the new seat 1", theirs
    # The seat's new holder (a key) sees the message on a stream of its own.
    if change == "key":
        newcomer.game = gid
        r2 = client.get(f"/games/{gid}/events?limit=500", headers=newcomer.bearer())
        assert "after: for the new seat 1" in [e.get("text") for e in r2.json["items"]]


def test_stream_reads_after_the_start_leave_out_the_meta_and_still_redact_and_close(
        client: Any, kontor: Kontor, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the game has begun a stream's reads leave the meta out (`Live.meta` keeps the
    fields it uses), while the seats are still read on every wake: seat 0's stream shows
    its own private event, never one between seats 1 and 2, and ends with `seat_changed`, showing
    nothing the new holder of seat 0 may see, when the host replaces its key mid-stream."""
    asked: list[bool] = []
    plain = kontor.store.live_read

    def counted(game: str, after: int, count: int, meta: bool = True) -> Any:
        asked.append(meta)
        return plain(game, after, count, meta)

    monkeypatch.setattr(kontor.store, "live_read", counted)
    host, (p0, p1, p2) = new_game(client, 3)
    gid = host.game
    resp, it = opened(client, gid, p0.bearer(ttl=300))
    message(client, p2, [1], "private to seat 1")
    message(client, p1, [0], "private to seat 0")
    got = []
    for frame in it:
        got.append(frame)
        if "private to seat 0" in str(frame.get("data")):
            break
    assert "private to seat 1" not in str(got), got
    assert False in asked, asked  # reads after a wake, without the meta
    newcomer = Player.new()
    r = client.patch(f"/games/{gid}/seats/0", json={"public_key": newcomer.key.public}, headers=host.bearer())
    assert r.status_code == 200, r.json
    message(client, p1, [0], "private to the new seat 0")
    got = rest(it)
    resp.close()
    assert "private to the new seat 0" not in str(got), got
    assert got[-1]["event"] == "closed" and got[-1]["data"]["code"] == "seat_changed", got


def test_stream_of_a_purged_game_ends_with_game_not_found_though_its_reads_left_the_meta_out(
        client: Any, kontor: Kontor) -> None:
    host, (p0, _p1) = new_game(client, 2)
    gid = host.game
    live = Live(kontor, gid, 0, 0, time.time() + 60, kid=p0.key.kid)
    assert live.meta is not None and live.meta["seats"] == "2"  # kept: the game has begun
    kontor.store.r.delete(*kontor.store.game_keys(gid, 2))  # every key of the game gone
    assert live.read(shared=True) == [closed("game_not_found")] and live.ended == "game_not_found"


def test_a_stream_whose_key_lost_its_rights_before_the_first_read_sends_only_closed(
        client: Any, kontor: Kontor) -> None:
    host, (p0, p1) = new_game(client, 2)
    gid = host.game
    until = time.time() + 60
    # A seat stream signed by a key the seat no longer holds; the host's by a key that is not the host's.
    seat = Live(kontor, gid, 1, 0, until, kid="former-key")
    hosting = Live(kontor, gid, "host", 0, until, kid="not-the-host-key")
    for live, code in ((seat, "seat_changed"), (hosting, "not_host")):
        assert live.ended == code
        got = list(frames(type("R", (), {"response": live.frames(keepalive=0.1)})()))
        assert [f["event"] for f in got] == ["closed"] and got[0]["data"]["code"] == code


# -- caps ----------------------------------------------------------------------------------
def capped(settings: Settings, **caps: Any) -> tuple[Any, Kontor]:
    """A client of its own process (Kontor and app) on the shared store, with these caps."""
    s = replace(settings, **caps)
    k = Kontor(s)
    app = create_app(s, k)
    app.config["TESTING"] = True
    return app.test_client(), k


def refused(resp: Any, why: str) -> None:
    body = problem(resp, 429, "too_many_streams")
    assert resp.headers["Retry-After"] == "30"
    assert why in body["detail"], body


def test_the_per_process_cap(settings: Settings) -> None:
    client, _ = capped(settings, stream_max_per_process=2)
    host, (p0, p1) = new_game(client, 2)
    gid = host.game
    a, _ = opened(client, gid, {})
    b, _ = opened(client, gid, p0.bearer(), environ_base={"REMOTE_ADDR": "10.0.0.2"})
    refused(client.get(f"/games/{gid}/stream", environ_base={"REMOTE_ADDR": "10.0.0.3"}), "this server")
    b.close()  # (the test client's streams close last first)
    c, _ = opened(client, gid, {})  # a closed stream gives its place back
    c.close()
    a.close()


@pytest.mark.cluster  # the address's and the game's leases in two slots (issue 24)
def test_the_per_address_cap_counts_over_every_process(settings: Settings) -> None:
    one, _ = capped(settings, stream_max_per_address=2)
    two, _ = capped(settings, stream_max_per_address=2)
    host, (p0, p1) = new_game(one, 2)
    gid = host.game
    a, _ = opened(one, gid, {})
    b, _ = opened(two, gid, {})
    refused(one.get(f"/games/{gid}/stream"), "your address")
    refused(two.get(f"/games/{gid}/stream", headers=p0.bearer()), "your address")
    c, _ = opened(two, gid, {}, environ_base={"REMOTE_ADDR": "10.0.0.9"})  # another address
    c.close()  # (the test client's streams close last first)
    b.close()
    d, _ = opened(one, gid, {})
    for resp in (d, a):
        resp.close()


@pytest.mark.cluster  # the address's and the game's leases in two slots (issue 24)
def test_the_per_game_cap(settings: Settings) -> None:
    client, _ = capped(settings, stream_max_per_game=2)
    host, (p0, p1) = new_game(client, 2)
    other, _ = new_game(client, 2)
    gid = host.game
    a, _ = opened(client, gid, {}, environ_base={"REMOTE_ADDR": "10.0.1.1"})
    b, _ = opened(client, gid, {}, environ_base={"REMOTE_ADDR": "10.0.1.2"})
    refused(client.get(f"/games/{gid}/stream", environ_base={"REMOTE_ADDR": "10.0.1.3"}), "this game")
    c, _ = opened(client, other.game, {}, environ_base={"REMOTE_ADDR": "10.0.1.3"})
    for resp in (c, b, a):
        resp.close()


@pytest.mark.cluster  # the address's and the game's leases in two slots (issue 24)
def test_a_dead_process_streams_stop_counting_once_their_lease_ends(settings: Settings) -> None:
    client, k = capped(settings, stream_max_per_address=1, stream_lease=2)
    host, _ = new_game(client, 2)
    gid = host.game
    # A process that admitted a stream and died: its lease is never renewed nor given back.
    dead, _ = capped(settings, stream_max_per_address=1, stream_lease=2)
    Kontor(replace(settings, stream_lease=2)).live_hub().admit(gid, "127.0.0.1", replace(
        settings, stream_max_per_address=1, stream_lease=2))
    refused(client.get(f"/games/{gid}/stream"), "your address")
    time.sleep(2.2)
    a, _ = opened(client, gid, {})
    # A living stream renews its lease: after two lease times it still counts.
    time.sleep(4.5)
    refused(dead.get(f"/games/{gid}/stream"), "your address")
    a.close()
    b, _ = opened(dead, gid, {})
    b.close()
    assert k.store.r.zcard(k.store.stream_address_key("127.0.0.1")) == 0


# -- idle ----------------------------------------------------------------------------------
def test_an_idle_public_stream_ends_saying_so_and_a_seat_stream_does_not(settings: Settings) -> None:
    client, _ = capped(settings, stream_idle_timeout=1)
    host, (p0, p1) = new_game(client, 2)
    gid = host.game
    public, it = opened(client, gid, {})
    start = time.monotonic()
    got = rest(it, limit=10)
    public.close()
    assert got[-1]["event"] == "closed" and got[-1]["data"]["code"] == "idle", got
    assert "Nothing happened" in got[-1]["data"]["detail"]
    assert 0.9 < time.monotonic() - start < 5
    # A seat's stream lasts as long as its token (3 s), idle or not.
    seat, seat_it = opened(client, gid, p0.bearer(ttl=3))
    start = time.monotonic()
    mine = rest(seat_it, limit=10)
    seat.close()
    assert mine[-1]["event"] == "closed" and mine[-1]["data"]["code"] == "token_expired", mine
    assert time.monotonic() - start > 1.5
