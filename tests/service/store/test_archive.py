"""A game's closed events packed in compressed chunks (`service.store.archive`), and its
history records riding on its steps' first events: every event is still served, paged,
resumed and tagged as before, and the published history still replays."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.core import verify
from service.core.kontor import Kontor
from service.store import archive
from service.store.effects import _without_events
from service.store.idempotency import PACKED
from service.store.json import dumps
from tests.service.conftest import Player, domain_game, footprint, raw_store, work

# Also with the store on a Valkey Cluster and the queue on a Valkey of its own (issue 24).
pytestmark = pytest.mark.cluster


def finished_game(kontor: Kontor, worker: Any) -> str:
    """A 2-seat light Die Händler game of bots, played out (a few hundred events)."""
    gid, _ = domain_game(kontor, 2, bots={0: "greedy", 1: "greedy"}, options={"light": True},
                         deadlines={"sealed_seconds": 86400, "sequential_seconds": 86400})
    for _ in range(50):
        worker()
        if kontor.store.meta(gid)["status"] == "finished":
            return gid
    raise AssertionError("the bot game did not finish")


@pytest.fixture
def played(kontor: Kontor, worker: Any) -> str:
    return finished_game(kontor, worker)


def test_closed_chunks_are_packed_and_the_stream_keeps_only_the_rest(kontor: Kontor, played: str) -> None:
    r, gid = raw_store(kontor), played
    seq = int(kontor.store.meta(gid)["event_seq"])
    packed = r.llen(kontor.store.key(gid, "archive"))
    assert seq >= 3 * archive.CHUNK and packed == seq // archive.CHUNK
    ids = [int(i.split(b"-")[0]) for i, _ in r.xrange(kontor.store.key(gid, "events"))]
    assert ids == list(range(packed * archive.CHUNK + 1, seq + 1))  # never both, never neither
    assert not r.exists(kontor.store.key(gid, "history"))  # records ride on the events
    assert kontor.store.compact_events(gid) == 0  # nothing left to pack: a second run changes nothing


def test_every_event_is_served_in_order_whole_and_in_pages(client: Any, kontor: Kontor, played: str) -> None:
    gid = played
    seq = int(kontor.store.meta(gid)["event_seq"])
    every = kontor.store.events(gid, 0, 10 * seq)
    assert [n for n, _, _ in every] == list(range(1, seq + 1))
    assert [e["type"] for _, e, _ in every][:2] == ["game_started", "step_opened"]
    # Any window, across chunk boundaries and into the stream, is the same slice.
    for after, count in ((0, 5), (archive.CHUNK - 3, 7), (archive.CHUNK, 1), (2 * archive.CHUNK - 1, 40),
                         (seq - 4, 10), (seq, 5)):
        assert kontor.store.events(gid, after, count) == every[after:after + count]
        live = kontor.store.live_read(gid, after, count)[2]
        assert [row[:3] for row in live] == every[after:after + count]
        # each with the counts behind every viewer's ids, packed or not (`service.store.numbering`)
        assert [row[3] for row in live] == [row[3] for row in kontor.store.numbered_between(
            gid, after + 1, min(seq, after + count))]
        assert all(row[3] is not None for row in live)
    assert kontor.store.events_between(gid, archive.CHUNK - 1, archive.CHUNK + 2) == every[archive.CHUNK - 2:
                                                                                         archive.CHUNK + 2]
    # GET /events pages through all of it as one long read.
    whole = client.get(f"/games/{gid}/events?limit=500").json["items"]
    paged, after = [], 0
    while True:
        page = client.get(f"/games/{gid}/events?after={after}&limit=9").json
        paged += page["items"]
        after = page["next"]
        if not page["more"]:
            break
    assert paged == whole and len(whole) > 2 * archive.CHUNK
    assert [item["id"] for item in whole] == sorted({item["id"] for item in whole})


def test_a_chunk_packed_between_the_two_reads_is_read_once(kontor: Kontor, played: str) -> None:
    """A reader reads the stream, then the archive's length: a chunk packed in between has
    its events in both answers, and each is served once."""
    gid = played
    every = kontor.store.events(gid, 0, 10 ** 6)
    key = kontor.store.key(gid, "archive")
    packed = kontor.r.llen(key)
    lo = (packed - 1) * archive.CHUNK + 1  # the last packed chunk, as the stream held it before
    rows = archive.read(kontor.r, kontor.store.key(gid, "events"), key, lo, None, None)
    before = [(f"{n}-1", {"e": dumps(ev), **f}) for n, ev, f in rows]
    for count in (None, 5, archive.CHUNK + 3):
        got = archive.merge(kontor.r, key, packed, lo, None, count, before[:count])
        assert [(n, ev, f["at"]) for n, ev, f in got] == every[lo - 1:][:count]


def test_packed_events_keep_their_commit_tags(kontor: Kontor, played: str) -> None:
    gid = played
    seq = int(kontor.store.meta(gid)["event_seq"])
    tagged = kontor.store.tagged_events(gid, 1, seq)
    assert [t.number for t in tagged] == list(range(1, seq + 1))
    for t in tagged:
        if t.event["type"] == "step_resolved":
            assert t.closing == t.event["phase"]
        if t.event["type"] == "step_opened":
            assert t.closing == t.event["phase"] - 1 and float(t.deadline) > 0
    # A notified mark inside a packed chunk: the first event without notices is found there.
    kontor.r.hset(kontor.store.key(gid, "meta"), "notified_through", 1)
    assert kontor.store.marks([gid])[gid].since == float(tagged[1].at)


def test_the_published_history_replays_with_every_step_s_events(client: Any, kontor: Kontor, played: str) -> None:
    gid = played
    doc = client.get(f"/games/{gid}/history").json
    report = verify.verify_history(doc)
    assert report.ok, report.as_dict()
    assert doc["steps"] and all("events" in s and "ev" not in s for s in doc["steps"])
    assert sum(len(s["events"]) for s in doc["steps"]) > archive.CHUNK
    # Orders only, without unpacking their events again: the same records less `events`.
    light = kontor.store.history(gid, events=False)
    assert light == [{k: v for k, v in s.items() if k != "events"} for s in doc["steps"]]
    # Any changed packed event shows: the replay no longer matches.
    steps = json.loads(json.dumps(doc["steps"]))
    steps[3]["events"] = steps[3]["events"][:-1] or [{"type": "made_up"}]
    assert not verify.verify_history({**doc, "steps": steps}).ok


def test_a_record_keeps_engine_events_the_commit_cannot_give_back() -> None:
    made = [{"type": "x", "visible_to": "all", "n": 1}]
    events = [{"type": "step_resolved", "phase": 4}, {**made[0], "phase": 4}, {"type": "step_opened", "phase": 5}]
    assert _without_events({"phase": 4, "orders": {}, "events": made}, events) == {"phase": 4, "orders": {}, "ev": 1}
    own = [{"type": "x", "phase": "theirs"}]  # an engine event with a `phase` of its own
    events = [{"type": "step_resolved", "phase": 4}, {**own[0], "phase": 4}]
    assert _without_events({"phase": 4, "events": own}, events) == {"phase": 4, "events": own}


def test_a_game_with_a_history_list_keeps_its_records_there(kontor: Kontor, worker: Any) -> None:
    """A game stored before records rode on the events adds its next ones to its list."""
    gid, players = domain_game(kontor, 2)
    old = {"phase": 0, "orders": {}, "defaults": []}
    kontor.r.rpush(kontor.store.key(gid, "history"), json.dumps(old))
    game = kontor._title("haendler")
    ph = kontor.store.phase(gid)
    state = kontor.store.state(gid)
    for seat in json.loads(ph["expected"]):
        kontor.submit(gid, int(ph["id"]), seat, game.default_order(state, seat), via="api")
    work(kontor.settings)
    steps = kontor.store.history(gid)
    assert len(steps) == 2 and steps[0] == old and steps[1]["phase"] == int(ph["id"]) and "events" in steps[1]
    assert not any(b"h" in f for _, f in raw_store(kontor).xrange(kontor.store.key(gid, "events")))


def test_the_archive_script_packs_a_chunk_once(kontor: Kontor, worker: Any) -> None:
    gid = finished_game(kontor, worker)
    before = footprint(kontor, gid)
    keys = [kontor.store.key(gid, "events"), kontor.store.key(gid, "archive")]
    # A compaction that read the archive before another packed the chunk changes nothing.
    assert kontor.store.scripts["archive"](keys=keys, args=[0, 1, archive.CHUNK, b"\x01junk"]) == 0
    seq = int(kontor.store.meta(gid)["event_seq"])
    k = seq // archive.CHUNK  # the next chunk: not full
    assert kontor.store.scripts["archive"](keys=keys, args=[k, k * archive.CHUNK + 1, (k + 1) * archive.CHUNK,
                                                             b"\x01junk"]) == 0
    assert footprint(kontor, gid) == before


def test_unpacking_refuses_an_unknown_format() -> None:
    with pytest.raises(ValueError):
        archive.unpack(b"\x07abc")
    rows = [(1, {"type": "a"}, {"at": "1.5", "c": "0", "d": "", "h": '{"phase":1}'}), (2, {"type": "b"}, {"at": "2"})]
    assert archive.unpack(archive.pack(rows)) == rows


def test_a_finished_idempotency_record_is_stored_packed(client: Any, kontor: Kontor) -> None:
    host = Player.new()
    body = {"title": "haendler", "seats": 2, "host_key": host.key.public, "seed": 3}
    first = client.post("/games", json=body, headers={"Idempotency-Key": "k-1"})
    (key,) = [k for k in raw_store(kontor).scan_iter(match=f"{kontor.settings.key_prefix}:idem:*")]
    raw = raw_store(kontor).get(key)
    assert raw[:1] == PACKED and len(raw) < len(json.dumps(first.json))
    again = client.post("/games", json=body, headers={"Idempotency-Key": "k-1"})
    assert again.json == first.json and again.headers["Idempotent-Replayed"] == "true"
