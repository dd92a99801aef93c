"""A commit's webhooks as one batch (issue 26): the notify job stores a commit's
deliveries in one script call and records the outcomes of their first attempts in
another; each delivery keeps its own record, retries and `webhook-id`, a record changed
meanwhile is not overwritten by the batch, and a notify job run again makes no second
delivery."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import redis
import redis.connection

import service.jobs.tasks
from service.channels.notify import Notifier
from service.channels.webhook import deliver as deliver_module
from service.channels.webhook.deliver import Answer, deliver_all
from service.config import Settings
from service.core.kontor import Kontor
from service.store.deliveries import Deliveries
from service.store.json import dumps
from tests.service.channels import Hooks, work_all
from tests.service.channels.test_webhooks import hook_up, webhooks_of
from tests.service.conftest import new_game

pytestmark = pytest.mark.cluster


def hooked_game(nclient: Any, nkontor: Kontor, hooks: Hooks) -> tuple[str, int]:
    """A started two-seat game whose seats both have a webhook, its notices not made
    yet (the mark back at 0, as if the notify job had not run): (game, its last event)."""
    host, players = new_game(nclient, 2)
    for p in players:
        hook_up(nclient, p, hooks, f"/s{p.seat}")
    gid = host.game
    nkontor.r.hset(nkontor.store.key(gid, "meta"), "notified_through", "0")
    return gid, int(nkontor.store.meta(gid)["event_seq"])


def all_hooks(k: Kontor, gid: str) -> list[dict[str, Any]]:
    return webhooks_of(k, gid, 0) + webhooks_of(k, gid, 1)


def test_webhook_first_attempts_are_recorded_by_the_batch(nclient: Any, nkontor: Kontor, hooks: Hooks,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    gid, seq = hooked_game(nclient, nkontor, hooks)

    def no_transaction(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a first attempt recorded by a transaction of its own")

    monkeypatch.setattr(Deliveries, "update_delivery", no_transaction)
    made = service.jobs.tasks.notices(nkontor, gid, seq)
    recs = all_hooks(nkontor, gid)
    assert made == len(recs) >= 2 and {r["seat"] for r in recs} == {0, 1}
    for rec in recs:
        assert (rec["status"], rec["attempts"], rec["last_status"], rec["last_error"], rec["next_attempt_at"]) == \
            ("sent", 1, 204, None, None), rec
        assert rec["payload"] and rec["updated_at"]
    got = hooks.at("/s0") + hooks.at("/s1")
    assert sorted(h.headers["webhook-id"] for h in got) == sorted(r["id"] for r in recs)
    assert all(h.verified for h in got)


def test_webhook_a_record_changed_meanwhile_is_not_overwritten_by_the_batch(
        nclient: Any, nkontor: Kontor, hooks: Hooks, monkeypatch: pytest.MonkeyPatch) -> None:
    gid, seq = hooked_game(nclient, nkontor, hooks)
    changed: list[str] = []
    real_post, lock = deliver_module.post, threading.Lock()

    def post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> Answer:
        """While the first delivery is in flight, another job changes its record."""
        with lock:
            if not changed:
                did = headers["webhook-id"]
                nkontor.store.update_delivery(gid, did, digest=True, last_error="marked by another job")
                changed.append(did)
        return real_post(url, body, headers, timeout)

    monkeypatch.setattr(deliver_module, "post", post)
    service.jobs.tasks.notices(nkontor, gid, seq)
    [did] = changed
    rec = nkontor.store.delivery(gid, did)
    assert rec is not None
    assert rec["digest"] is True  # the other job's change is kept: the batch did not write its text over it
    assert (rec["status"], rec["attempts"], rec["last_status"], rec["last_error"]) == ("sent", 1, 204, None)
    others = [r for r in all_hooks(nkontor, gid) if r["id"] != did]
    assert others and all((r["status"], r["attempts"], "digest" in r) == ("sent", 1, False) for r in others)


def test_webhook_the_batch_writes_only_records_still_as_read(nkontor: Kontor) -> None:
    gid = "0123456789abcdef"
    recs = [{"id": f"w_{gid}_{n}", "seat": n, "status": "queued", "attempts": 0, "types": [], "payload": [{}]}
            for n in range(2)]
    texts = [dumps(r) for r in recs]
    assert [o.new for o in nkontor.store.add_deliveries_once(gid, list(zip(recs, texts, strict=True)))] == [True, True]
    nkontor.store.update_delivery(gid, recs[1]["id"], status="skipped")  # changed since it was read
    marks = [(r["id"], t, dumps({**r, "status": "sent", "attempts": 1}))
             for r, t in zip(recs, texts, strict=True)]
    assert nkontor.store.mark_deliveries(gid, marks) == [True, False]
    assert nkontor.store.delivery(gid, recs[0]["id"]) == {**recs[0], "status": "sent", "attempts": 1}
    assert nkontor.store.delivery(gid, recs[1]["id"]) == {**recs[1], "status": "skipped"}
    # An empty list stays a list (the text is never decoded and encoded again in Lua).
    assert nkontor.r.hget(nkontor.store.key(gid, "delivery"), recs[0]["id"]).count('"types":[]') == 1


def test_webhook_a_failed_first_attempt_gets_its_retry_with_the_same_webhook_id(
        nclient: Any, nkontor: Kontor, notify_settings: Settings, hooks: Hooks) -> None:
    gid, seq = hooked_game(nclient, nkontor, hooks)
    hooks.answers["/s0"] = [500]
    service.jobs.tasks.notices(nkontor, gid, seq)
    [first] = hooks.at("/s0")
    did = first.headers["webhook-id"]
    rec = nkontor.store.delivery(gid, did)
    assert rec is not None
    assert (rec["status"], rec["attempts"], rec["last_status"], rec["last_error"]) == ("retrying", 1, 500, "HTTP 500")
    assert rec["next_attempt_at"]
    work_all(notify_settings)
    got = hooks.at("/s0")
    assert [h.headers["webhook-id"] for h in got] == [did, did] and all(h.verified for h in got)
    rec = nkontor.store.delivery(gid, did)
    assert rec is not None
    assert (rec["status"], rec["attempts"], rec["last_status"], rec["next_attempt_at"]) == ("sent", 2, 204, None)
    assert len(webhooks_of(nkontor, gid, 0)) == 1  # the same delivery, not a second one


def test_webhook_a_duplicate_notify_job_makes_no_second_delivery(nclient: Any, nkontor: Kontor, hooks: Hooks) -> None:
    gid, seq = hooked_game(nclient, nkontor, hooks)
    made = service.jobs.tasks.notices(nkontor, gid, seq)
    before = all_hooks(nkontor, gid)
    sent = sorted(h.headers["webhook-id"] for h in hooks.received)
    assert made == len(before) == len(sent) >= 2

    nkontor.r.hset(nkontor.store.key(gid, "meta"), "notified_through", "0")  # the mark lost: the job again
    assert service.jobs.tasks.notices(nkontor, gid, seq) == made  # the same deliveries, found again
    assert all_hooks(nkontor, gid) == before  # none made twice, none attempted again
    assert sorted(h.headers["webhook-id"] for h in hooks.received) == sent


def test_webhook_deliveries_stored_but_never_sent_are_sent_once_by_the_next_job(
        nclient: Any, nkontor: Kontor, hooks: Hooks) -> None:
    gid, seq = hooked_game(nclient, nkontor, hooks)

    class Killed(Exception):
        pass

    def killed(*args: Any) -> None:
        raise Killed  # the job dies once its deliveries are stored, before any request

    with pytest.raises(Killed):
        Notifier(nkontor, send=killed).catch_up(gid, seq)
    stored = all_hooks(nkontor, gid)
    assert stored and {(r["status"], r["attempts"]) for r in stored} == {("queued", 0)}
    assert hooks.received == []

    assert Notifier(nkontor, send=deliver_all).catch_up(gid, seq) == len(stored)
    recs = all_hooks(nkontor, gid)
    assert sorted(r["id"] for r in recs) == sorted(r["id"] for r in stored)
    assert {(r["status"], r["attempts"]) for r in recs} == {("sent", 1)}
    assert sorted(h.headers["webhook-id"] for h in hooks.received) == sorted(r["id"] for r in stored)


def _round_trips(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the writes of requests to the store (one per command, one per pipeline)."""
    count = [0]
    real = redis.connection.AbstractConnection.send_packed_command

    def send(self: Any, *args: Any, **kwargs: Any) -> None:
        count[0] += 1
        real(self, *args, **kwargs)

    monkeypatch.setattr(redis.connection.AbstractConnection, "send_packed_command", send)
    return count


def test_notify_a_commit_is_told_in_few_store_round_trips(nclient: Any, nkontor: Kontor, hooks: Hooks,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The notify job of one commit: the lock, the mark, the contacts, the former
    contacts, the seats, the clock, the events and the game's state in one round trip
    (`open_notices`); the deliveries stored, and the contacts and the clock for the
    sends read, in one; the outcomes in one; the last mark moved with the lock's release."""
    gid, seq = hooked_game(nclient, nkontor, hooks)
    if isinstance(nkontor.store.r, redis.RedisCluster):
        pytest.skip("the store is a cluster: a pipeline goes to each node")
    count = _round_trips(monkeypatch)
    made = service.jobs.tasks.notices(nkontor, gid, seq)
    used = count[0]
    monkeypatch.undo()
    assert made >= 2 and all(r["status"] == "sent" for r in all_hooks(nkontor, gid))
    assert used <= 4, used  # 15 before (issue 26, round 2), 8 before round 3
    print("ROUNDTRIPS", used)


def test_notify_a_job_with_nothing_to_do_lets_go_of_the_lock(nclient: Any, nkontor: Kontor, hooks: Hooks) -> None:
    gid, seq = hooked_game(nclient, nkontor, hooks)
    assert service.jobs.tasks.notices(nkontor, gid, seq) >= 2
    sent = len(hooks.received)
    assert service.jobs.tasks.notices(nkontor, gid, seq) == 0  # told already
    assert not nkontor.r.exists(nkontor.store.key(gid, "notifying"))
    assert len(hooks.received) == sent


def test_notify_a_job_that_finds_the_lock_held_leaves_it_and_sends_nothing(nclient: Any, nkontor: Kontor,
                                                                           hooks: Hooks) -> None:
    gid, seq = hooked_game(nclient, nkontor, hooks)
    key = nkontor.store.key(gid, "notifying")
    assert nkontor.store.lock_notices(gid, "other", 30.0)
    assert service.jobs.tasks.notices(nkontor, gid, seq) == 0
    assert nkontor.r.get(key) == "other" and hooks.received == [] and all_hooks(nkontor, gid) == []
    assert nkontor.store.notified_through(gid) == 0
    nkontor.store.unlock_notices(gid, "other")
    assert service.jobs.tasks.notices(nkontor, gid, seq) >= 2  # the holder let go: the next job tells them


def test_notify_the_lock_is_taken_before_the_mark_is_read(nkontor: Kontor) -> None:
    gid = "0123456789abcdef"
    store = nkontor.store
    nkontor.r.hset(store.key(gid, "meta"), mapping={"notified_through": "7", "event_seq": "7"})
    store.set_contact(gid, 1, {"webhook_url": "https://example.org/h"})
    got = store.open_notices(gid, "a", 30.0, 7)
    assert (got.locked, got.mark, got.contacts) == (True, 7, {1: {"webhook_url": "https://example.org/h"}})
    assert got.head is None  # nothing after the mark
    assert store.open_notices(gid, "b", 30.0, 7).locked is False  # held by "a"
    assert nkontor.r.get(store.key(gid, "notifying")) == "a"


def test_notify_the_opening_read_is_what_the_reads_it_stands_for_answer(nclient: Any, nkontor: Kontor,
                                                                        hooks: Hooks) -> None:
    """`open_notices` takes the lock and reads, in one command, the mark, the contacts,
    the former contacts, the seats, the clock, and what `tagged_events` and `snapshot`
    read; nothing past the mark when there is nothing to tell, nor when the lock is held
    by another."""
    gid, seq = hooked_game(nclient, nkontor, hooks)
    store = nkontor.store
    got = store.open_notices(gid, "a", 30.0, seq)
    assert nkontor.r.get(store.key(gid, "notifying")) == "a"
    assert (got.locked, got.mark, got.contacts) == (True, 0, store.contacts(gid))
    assert got.head is not None and got.snapshot is not None and got.tagged is not None
    assert (got.head.mark, got.head.gone, got.head.seats) == (0, store.gone(gid), store.seats(gid))
    assert abs(got.head.now - store.now()) < 5
    assert got.tagged == store.tagged_events(gid, 1, seq) and len(got.tagged) == seq
    assert got.snapshot == store.snapshot(gid)
    other = store.open_notices(gid, "b", 30.0, seq)
    assert (other.locked, other.mark, other.head, other.tagged) == (False, 0, None, None)
    store.unlock_notices(gid, "a", seq)
    done = store.open_notices(gid, "c", 30.0, seq)
    assert (done.locked, done.mark, done.head, done.snapshot) == (True, seq, None, None)
    store.unlock_notices(gid, "c")


def test_webhook_storing_a_commits_deliveries_reads_the_contacts_and_clock_after_them(nclient: Any,
                                                                                     nkontor: Kontor,
                                                                                     hooks: Hooks) -> None:
    """`add_deliveries_once_and_read`: the records stored once, as `add_deliveries_once`
    stores them, and the contacts and the clock as `contacts_and_time` reads them."""
    gid, _ = hooked_game(nclient, nkontor, hooks)
    store = nkontor.store
    recs = [{"id": f"w_{gid}_{n}", "seat": n, "status": "queued", "attempts": 0} for n in (0, 1)]
    texts = [dumps(r) for r in recs]
    onces, contacts, now = store.add_deliveries_once_and_read(gid, list(zip(recs, texts, strict=True)))
    assert [o.new for o in onces] == [True, True]
    assert contacts == store.contacts(gid) and set(contacts) == {0, 1} and abs(now - store.now()) < 5
    again, _, _ = store.add_deliveries_once_and_read(gid, list(zip(recs, texts, strict=True)))
    assert [(o.new, o.stored) for o in again] == [(False, t) for t in texts]
    assert [o.new for o in store.add_deliveries_once(gid, list(zip(recs, texts, strict=True)))] == [False, False]
    assert [store.delivery(gid, r["id"]) for r in recs] == recs


def test_notify_the_lock_lets_go_with_the_mark_moved_never_back_nor_past_the_last_event(nkontor: Kontor) -> None:
    gid = "0123456789abcdef"
    meta = nkontor.store.key(gid, "meta")
    nkontor.r.hset(meta, mapping={"notified_through": "3", "event_seq": "9"})
    assert nkontor.store.lock_notices(gid, "a", 30.0)
    assert nkontor.store.unlock_notices(gid, "a", 6) == (9, 6)
    assert not nkontor.r.exists(nkontor.store.key(gid, "notifying"))
    assert nkontor.store.unlock_notices(gid, "a", 2) == (9, 6)  # never back
    assert nkontor.store.unlock_notices(gid, "b", 20) == (9, 9)  # never past the last event
    assert nkontor.store.unlock_notices(gid, "b") == (9, 9)


def message_while_held(monkeypatch: pytest.MonkeyPatch, nkontor: Kontor, gid: str) -> tuple[list[int], list[int]]:
    """Make the next job that opens the game's notices, while it holds the lock, append
    a message whose own notify job then finds the lock taken: (the event each opening
    was asked to tell, in order; the message's event number, once appended)."""
    real = nkontor.store.open_notices
    opened: list[int] = []
    left: list[int] = []

    def meanwhile(game: str, token: str, lease: float, through: int) -> Any:
        opened.append(through)
        out = real(game, token, lease, through)
        if not left:  # while this job holds it: a new event, whose own job finds the lock taken
            new = nkontor.store.append_events(gid, [{"type": "message", "visible_to": "all", "from": "host",
                                                     "text": "Back in five minutes."}])
            left.append(int(new.extra))
            assert service.jobs.tasks.notices(nkontor, gid, left[0]) == 0
        return out

    monkeypatch.setattr(nkontor.store, "open_notices", meanwhile)
    return opened, left


def test_notify_a_job_with_nothing_to_do_takes_on_the_events_left_to_it_while_it_held_the_lock(
        nclient: Any, nkontor: Kontor, hooks: Hooks, monkeypatch: pytest.MonkeyPatch) -> None:
    """A job with nothing to do holds the lock for a moment; a job for a new event that
    finds it held leaves its event to the holder, which must take it on as it lets go."""
    gid, seq = hooked_game(nclient, nkontor, hooks)
    assert service.jobs.tasks.notices(nkontor, gid, seq) >= 2
    sent = len(hooks.received)
    _, left = message_while_held(monkeypatch, nkontor, gid)
    assert service.jobs.tasks.notices(nkontor, gid, seq) >= 2  # nothing of its own; the message's
    assert nkontor.store.notified_through(gid) == left[0]
    assert len(hooks.received) > sent
    assert not nkontor.r.exists(nkontor.store.key(gid, "notifying"))


def test_webhook_what_was_sent_is_recorded_though_another_seats_sending_failed(
        nclient: Any, nkontor: Kontor, hooks: Hooks, monkeypatch: pytest.MonkeyPatch) -> None:
    """A seat's sending that raises (a bug, the job stopped) does not lose the records of
    what the other seat's deliveries came to: they are not made again by the next job."""
    gid, seq = hooked_game(nclient, nkontor, hooks)
    real = deliver_module.post

    def post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> Answer:
        if url.endswith("/s1"):
            raise RuntimeError("seat 1's sender broke")
        return real(url, body, headers, timeout)

    monkeypatch.setattr(deliver_module, "post", post)
    with pytest.raises(RuntimeError, match="seat 1's sender broke"):
        service.jobs.tasks.notices(nkontor, gid, seq)
    sent = webhooks_of(nkontor, gid, 0)
    assert sent and {(r["status"], r["attempts"]) for r in sent} == {("sent", 1)}
    assert len(hooks.received) == len(sent)


@pytest.mark.parametrize("value", ["\u00b2", "\u0663", "1\u00b2"])
def test_webhook_retry_after_of_digits_that_are_not_ascii_is_unreadable(value: str) -> None:
    assert deliver_module.retry_after(value, 1_000.0) == 0.0


@pytest.mark.parametrize("notice", [
    {"type": "step.opened", "game": "g1", "at": "2026-12-06T17:00:00Z", "view": {"bid": [1, 2.5, None, True]},
     "sentences": ["You bid 3."]},
    {"type": "step.resolved", "phase": 4, "events": [{"payload": [1], "x": ',"payload":['}]},
    {"type": "game.finished", "title_name": "Die Händler", "names": ["Ørjan", "Zoë"]},
    {"type": "message.received", "message": {"text": 'a "quote", a \\ backslash, a \\u0041, a\ttab\nline'}},
    {"type": "step.opened", "sentences": ["\u2028 and \U0001f600"]},
    {"type": "step.opened"},
    {"game": "g1", "type": "step.opened"},
    {"type": "step.opened", "view": {"big": "x" * 30_000}},
])
def test_webhook_a_body_made_from_the_stored_record_is_the_payload_byte_for_byte(notice: dict[str, Any]) -> None:
    """The batch takes a delivery's body from its record's stored text when that gives
    the same bytes as encoding its notice (`payload`), and encodes it otherwise."""
    rec = {"id": "w_g1_0123", "seat": 0, "channel": "webhook", "type": notice["type"], "target": "https://x.org/h",
           "status": "queued", "attempts": 0, "last_error": None, "created_at": "2026-12-06T17:00:01Z",
           "payload": [notice]}
    expected = deliver_module.payload(notice, rec["id"], rec["created_at"])
    assert deliver_module.body_of(rec, dumps(rec)) == expected
    assert deliver_module.body_of(rec) == expected
    reused = deliver_module.reused(notice, dumps(rec), rec["created_at"])
    plain = notice.get("sentences") == ["You bid 3."] or "events" in notice
    assert (reused is not None) == plain  # taken from the text where it is the same, encoded otherwise
    changed = {**rec, "status": "sent"}
    assert deliver_module.body_of(changed, deliver_module.changed_text(rec, dumps(rec), {"status": "sent"})) == expected


def test_notify_every_round_reads_through_its_opening(nclient: Any, nkontor: Kontor, hooks: Hooks,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A holder that finds, as it lets go, events left to it takes them in its next round
    with the lock and what it reads in one command (`open_notices`), as its first round
    did: no read of the lock, the contacts or the former contacts of its own."""
    gid, seq = hooked_game(nclient, nkontor, hooks)
    opened, left = message_while_held(monkeypatch, nkontor, gid)

    def no_read(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a round read apart from its opening")

    for name in ("contacts", "gone", "lock_notices"):
        monkeypatch.setattr(nkontor.store, name, no_read)
    assert service.jobs.tasks.notices(nkontor, gid, seq) >= 4  # two seats, its commit's and the message's
    assert opened == [seq, left[0], left[0]]  # its own, the left job's, its second round's
    assert nkontor.store.notified_through(gid) == left[0]
