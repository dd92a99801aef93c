"""Event ids reveal nothing a viewer may not see (issue 23, item 6): each viewer (the
public, the host as the public, each seat) numbers the events it may see 1, 2, 3, ...
with no gaps, the same in `/events`, the stream, a resume from any id, a message's and an
action's answer and a seat's notices; a public viewer's ids are the same whether or not
private events happened (`service.store.numbering`)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.core.events import visible_to
from service.core import press
from service.core.kontor import Kontor
from service.store import archive, numbering
from tests.service.conftest import Player, domain_game, raw_store
from tests.service.core.test_live import read_until

# Also with the store on a Valkey Cluster and the queue on a Valkey of its own (issue 24).
pytestmark = pytest.mark.cluster

SEATS = 3
#: A message: (writer: a seat or "host", to: "all" or the seats it is for).
Message = tuple[int | str, str | list[int]]


@st.composite
def messages(draw: Any, most: int = 12) -> list[Message]:
    """A run of public and private messages (at most `most`, each writer under the rate
    limit)."""
    out: list[Message] = []
    for _ in range(draw(st.integers(0, most))):
        writer: int | str = draw(st.sampled_from([*range(SEATS), "host"]))
        if writer == "host" or draw(st.booleans()):
            out.append((writer, "all"))
        else:
            others = [s for s in range(SEATS) if s != writer]
            out.append((writer, sorted(draw(st.sets(st.sampled_from(others), min_size=1)))))
    return out


def viewers(host: Player, players: dict[int, Player]) -> list[tuple[Any, dict[str, str]]]:
    """(the viewer the engine cuts for, headers) of the public, the host and each seat."""
    return [("public", {}), ("public", host.bearer()),
            *((seat, p.bearer()) for seat, p in sorted(players.items()))]


def play(kontor: Kontor, run: list[Message], public_only: bool = False) -> tuple[str, Player, dict[int, Player]]:
    """A started 3-seat game with the messages of `run` written, in order (`public_only`:
    its public ones only, each with the text it has in the whole run)."""
    host = Player.new()
    gid = kontor.create_game("haendler", SEATS, None, None, 7, host.key.public)["id"]
    host.game = gid
    players: dict[int, Player] = {}
    for seat in range(SEATS):
        p = Player.new()
        kontor.join(gid, f"P{seat}", p.key.public, seat)
        p.game, p.seat = gid, seat
        players[seat] = p
    kontor.start(gid)
    for i, (writer, to) in enumerate(run):
        if to == "all" or not public_only:
            press.post(kontor, gid, writer, to, f"message {i}")
    return gid, host, players


def pages(client: Any, gid: str, headers: dict[str, str], after: int = 0, limit: int = 3) -> list[dict[str, Any]]:
    """Every event after `after` through `/events`, `limit` at a time."""
    out: list[dict[str, Any]] = []
    for _ in range(500):
        page = client.get(f"/games/{gid}/events?after={after}&limit={limit}", headers=headers).json
        out += page["items"]
        assert page["next"] == (out[-1]["id"] if out else after) or not page["items"]
        after = page["next"]
        if not page["more"]:
            assert after == page["last"]
            return out
    raise AssertionError("no end of the events")


def streamed(client: Any, gid: str, headers: dict[str, str], after: int, last: int) -> list[dict[str, Any]]:
    """The `game` frames of a stream resumed after id `after`, through id `last`."""
    resp = client.get(f"/games/{gid}/stream", headers={**headers, "Last-Event-ID": str(after)}, buffered=False)
    assert resp.status_code == 200
    if after >= last:
        got = read_until(resp, lambda g: True)  # the step frame, and nothing more to send
    else:
        got = read_until(resp, lambda g: any(f.get("id") == str(last) for f in g))
    resp.close()
    return [f for f in got if f.get("event") == "game"]


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(run=messages(), cut=st.integers(0, 40))
def test_each_viewer_numbers_its_events_one_by_one_everywhere(client: Any, kontor: Kontor, run: list[Message],
                                                              cut: int) -> None:
    gid, host, players = play(kontor, run)
    stored = kontor.store.events(gid, 0, 10_000)
    for viewer, headers in viewers(host, players):
        mine = [ev for _, ev, _ in stored if visible_to(ev, viewer)]
        got = pages(client, gid, headers)
        # exactly the events the viewer may see, numbered 1..n with no gaps
        assert [item["id"] for item in got] == list(range(1, len(mine) + 1)), viewer
        assert [{k: v for k, v in item.items() if k not in ("id", "at")} for item in got] == mine
        # the stream numbers them alike, from the start and resumed after any id
        after = min(cut, len(got))
        frames_ = streamed(client, gid, headers, after, len(got))
        assert [int(f["id"]) for f in frames_] == [item["id"] for item in got[after:]], (viewer, after)
        assert [{k: v for k, v in f["data"].items() if k != "sentence"} for f in frames_] == got[after:]
        assert pages(client, gid, headers, after=after, limit=2) == got[after:]
        # the messages list numbers them alike
        said = client.get(f"/games/{gid}/messages?after=0&limit=500", headers=headers).json["items"]
        assert [m["id"] for m in said] == [item["id"] for item in got if item["type"] == "message"]


@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(run=messages())
def test_a_public_viewer_s_ids_are_the_same_whether_or_not_private_events_happened(
        client: Any, kontor: Kontor, run: list[Message]) -> None:
    with_private, host, players = play(kontor, run)
    without, _, _ = play(kontor, run, public_only=True)

    def public(gid: str, headers: dict[str, str]) -> list[dict[str, Any]]:
        return [{k: v for k, v in item.items() if k != "at"} for item in pages(client, gid, headers)]

    seen = public(with_private, {})
    assert seen == public(without, {})
    assert public(with_private, host.bearer()) == seen  # the host reads as the public
    last = client.get(f"/games/{with_private}/events?after=0&limit=1").json["last"]
    assert last == client.get(f"/games/{without}/events?after=0&limit=1").json["last"] == len(seen)
    # the stream's ids too
    assert [f["id"] for f in streamed(client, with_private, {}, 0, last)] == [str(item["id"]) for item in seen]


def test_a_message_s_answer_carries_its_writer_s_id(client: Any, kontor: Kontor) -> None:
    gid, host, players = play(kontor, [(0, [1]), (1, [2]), (2, [0])])
    public_last = client.get(f"/games/{gid}/events?after=0&limit=1").json["last"]
    r = client.post(f"/games/{gid}/messages", json={"to": "all", "text": "hello"},
                    headers={**host.bearer(), "Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 201, r.json
    assert r.json["id"] == public_last + 1  # the host's id is the public's: nothing private counted
    seat_last = client.get(f"/games/{gid}/events?after=0&limit=1", headers=players[2].bearer()).json["last"]
    r = client.post(f"/games/{gid}/messages", json={"to": [1], "text": "psst"},
                    headers={**players[2].bearer(), "Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 201, r.json
    assert r.json["id"] == seat_last + 1
    # seat 0 never saw seat 2's note to seat 1: its next id follows its own
    page = client.get(f"/games/{gid}/events?after=0&limit=500", headers=players[0].bearer()).json
    assert [item["id"] for item in page["items"]] == list(range(1, page["last"] + 1))


def test_a_seat_s_notices_carry_its_own_ids(kontor: Kontor) -> None:
    gid, _, _ = play(kontor, [(0, [1]), ("host", "all")])
    seq = int(kontor.store.meta(gid)["event_seq"])
    tagged = kontor.store.tagged_events(gid, 1, seq)
    for seat in range(SEATS):
        mine = [t.id_for(seat) for t in tagged if visible_to(t.event, seat)]
        assert mine == list(range(1, len(mine) + 1))
    assert [t.id_for(2) for t in tagged][-1] == len(tagged) - 1  # seat 2 saw all but the private note


# -- the store: packed chunks, every resume, games stored before the counts ------------------
def audience(choice: int) -> str | list[int]:
    """0: everyone; 1..7: a non-empty set of the three seats (bits)."""
    return "all" if choice == 0 else [s for s in range(SEATS) if choice >> s & 1]


def expected(events: list[dict[str, Any]], viewer: int | str) -> list[int]:
    """The stored numbers (1-based) of the events `viewer` may see, in order."""
    return [n for n, ev in enumerate(events, 1) if visible_to(ev, viewer)]


def check_every_resume(kontor: Kontor, gid: str) -> None:
    """For every viewer and every id it has, a read after that id gives the rest exactly."""
    stored = [ev for _, ev, _ in kontor.store.events(gid, 0, 100_000)]
    for viewer in ("public", *range(SEATS)):
        seen = expected(stored, viewer)
        whole = kontor.events(gid, viewer if viewer != "public" else "public", 0, 500)
        assert [item["id"] for item in whole["items"]] == list(range(1, len(seen) + 1))
        assert whole["last"] == len(seen) and not whole["more"]
        for after in range(len(seen) + 1):
            start = kontor.store.event_start(gid, viewer, after)
            assert start is not None
            # the read begins at or before the event after the viewer's `after`-th, never past it
            nxt = seen[after] if after < len(seen) else len(stored) + 1
            assert start.lo <= nxt and start.before[numbering.slot(viewer)] <= after
            page = kontor.events(gid, viewer, after, 7)
            assert [item["id"] for item in page["items"]] == list(range(after + 1, min(after + 7, len(seen)) + 1))
            assert [{k: v for k, v in item.items() if k not in ("id", "at")} for item in page["items"]] == \
                [stored[n - 1] for n in seen[after:after + 7]]


def append(kontor: Kontor, gid: str, choices: list[int]) -> None:
    for i, choice in enumerate(choices):
        assert kontor.store.append_events(gid, [{"type": "note", "visible_to": audience(choice),
                                                 "phase": 1, "i": i}]).status == "ok"


@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(choices=st.lists(st.sampled_from([0, 0, 1, 2, 4, 3, 5, 6, 7]), min_size=70, max_size=110))
def test_resume_from_any_id_across_packed_chunks(kontor: Kontor, choices: list[int]) -> None:
    gid, _ = domain_game(kontor, SEATS)
    append(kontor, gid, choices)
    packed = kontor.r.llen(kontor.store.key(gid, "archive"))
    assert packed >= 2 and kontor.r.llen(kontor.store.key(gid, "chunkids")) == packed
    check_every_resume(kontor, gid)


def strip_counts(kontor: Kontor, gid: str) -> None:
    """Make `gid` a game stored before the counts: no `v` on its events (packed or not),
    no `event_ids`, no chunk ids."""
    r = kontor.r
    meta, events, packed = (kontor.store.key(gid, p) for p in ("meta", "events", "archive"))
    r.hdel(meta, "event_ids")
    r.delete(kontor.store.key(gid, "chunkids"))
    entries = r.xrange(events)
    r.delete(events)
    for eid, fields in entries:
        r.xadd(events, {k: v for k, v in fields.items() if k != "v"}, id=eid)
    raw = raw_store(kontor)
    chunks = raw.lrange(packed, 0, -1)
    if chunks:
        raw.delete(packed)
        for blob in chunks:
            rows = [(n, ev, {k: v for k, v in f.items() if k != "v"}) for n, ev, f in archive.unpack(blob)]
            raw.rpush(packed, archive.pack(rows))


def test_a_game_stored_before_the_counts_is_counted_on_the_fly(client: Any, kontor: Kontor) -> None:
    gid, players = domain_game(kontor, SEATS)
    choices = [0, 1, 2, 0, 4, 3, 0, 7, 5, 6] * 4
    append(kontor, gid, choices[:36])  # a packed chunk and a stream
    before = {v: kontor.events(gid, v, 0, 500) for v in ("public", *range(SEATS))}
    strip_counts(kontor, gid)
    assert all("v" not in f for _, f in kontor.r.xrange(kontor.store.key(gid, "events")))
    assert {v: kontor.events(gid, v, 0, 500) for v in ("public", *range(SEATS))} == before
    # it goes on without counts, and reads still number every viewer's events 1, 2, 3, ...
    append(kontor, gid, choices[36:])
    assert "event_ids" not in kontor.store.meta(gid)
    check_every_resume(kontor, gid)
    tagged = kontor.store.tagged_events(gid, 30, int(kontor.store.meta(gid)["event_seq"]))
    counted = kontor.store.numbered_between(gid, 1, int(kontor.store.meta(gid)["event_seq"]))
    assert [t.ids for t in tagged] == [row[3] for row in counted[29:]]
    # and its stream resumes alike
    seat = players[1]
    last = kontor.events(gid, 1, 0, 500)["last"]
    got = streamed(client, gid, seat.bearer(), 5, last)
    assert [int(f["id"]) for f in got] == list(range(6, last + 1))


@pytest.mark.parametrize("raw", ["all", [0], [2, 0], [], [0, 0, 1]])
def test_the_scripts_count_as_the_readers_do(kontor: Kontor, raw: Any) -> None:
    """numbering.lua (in the scripts) and `numbering.step` agree on every audience."""
    gid, _ = domain_game(kontor, SEATS)
    before = numbering.parse(kontor.store.meta(gid)["event_ids"])
    assert before is not None
    ev = {"type": "note", "visible_to": raw, "phase": 1}
    assert kontor.store.append_events(gid, [ev]).status == "ok"
    ((_, f),) = kontor.r.xrevrange(kontor.store.key(gid, "events"), count=1)
    assert numbering.parse(f["v"]) == numbering.step(before, ev) == numbering.parse(
        kontor.store.meta(gid)["event_ids"])
    assert json.loads(f["e"]) == ev


def test_a_seat_s_webhooks_carry_its_own_ids(kontor: Kontor) -> None:
    """The notices of messages (and of a commit) give each seat its own ids."""
    from service.channels.notify import Notifier

    gid, _, _ = play(kontor, [])
    contacts = {seat: {"webhook_url": f"https://example.net/hook/{seat}", "webhook_status": "active"}
                for seat in range(SEATS)}
    start = int(kontor.store.meta(gid)["event_seq"])
    for writer, to in ((0, [1]), (1, [0]), ("host", "all")):
        press.post(kontor, gid, writer, to, "hello")
    seq = int(kontor.store.meta(gid)["event_seq"])
    made = Notifier(kontor).events(gid, kontor.store.tagged_events(gid, start + 1, seq), contacts)
    assert made
    for seat in range(SEATS):
        last = kontor.events(gid, seat, 0, 1)["last"]
        got = [n["message"]["id"] for rec in kontor.store.deliveries(gid, seat, 50)[::-1]
               for n in rec["payload"] if n["type"] == "message.received"]
        mine = [item["id"] for item in kontor.events(gid, seat, 0, 100)["items"]
                if item["type"] == "message" and item["from"] != seat]
        assert got == mine and got[-1] == last, seat
    # seat 2 saw neither note: the host's announcement is its next id after the start's events
    assert kontor.events(gid, 2, 0, 100)["last"] == start + 1
