"""A commit's webhooks as one batch (issue 26): the notify job stores a commit's
deliveries in one script call and records the outcomes of their first attempts in
another; each delivery keeps its own record, retries and `webhook-id`, a record changed
meanwhile is not overwritten by the batch, and a notify job run again makes no second
delivery."""

from __future__ import annotations

import threading
from typing import Any

import pytest

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
