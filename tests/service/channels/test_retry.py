"""The one retry rule of mail and webhooks (`service.channels.retry`): which job acts,
the schedule, jitter, a receiver's longer wait, the give-up rule, and the record."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from service.channels import retry
from service.config import Settings


def test_only_a_pending_delivery_whose_attempt_is_not_made_yet_is_due() -> None:
    assert retry.is_due({"status": "queued", "attempts": 0}, 1)
    assert retry.is_due({"status": "retrying", "attempts": 2}, 3)
    assert not retry.is_due({"status": "retrying", "attempts": 3}, 3)  # a duplicate job
    assert not retry.is_due({"status": "sent", "attempts": 1}, 2)
    assert not retry.is_due(None, 1)


def test_the_schedule_jitters_each_wait_and_gives_up_after_the_last() -> None:
    waits = [10.0, 20.0]
    for _ in range(50):
        assert 8.0 <= retry.next_delay(waits, 1) <= 12.0  # type: ignore[operator]
        assert 16.0 <= retry.next_delay(waits, 2) <= 24.0  # type: ignore[operator]
    assert retry.next_delay(waits, 3) is None and retry.next_delay([], 1) is None
    assert retry.next_delay(waits, 1, at_least=100.0) == 100.0


def test_mail_and_webhooks_read_their_schedules_the_same_way() -> None:
    """`mail_retry` lists the waits; `webhook_schedule` the first attempt (at once), then the waits."""
    from service.channels.webhook.deliver import Answer, next_delay

    s = replace(Settings(), mail_retry="30,120", webhook_schedule="0,30,120")
    mail, hook = Settings.delays(s.mail_retry), Settings.delays(s.webhook_schedule)
    for attempt, wait in ((1, 30.0), (2, 120.0)):
        assert 0.8 * wait <= retry.next_delay(mail, attempt) <= 1.2 * wait  # type: ignore[operator]
        assert 0.8 * wait <= next_delay(hook, attempt, Answer(500), 0.0) <= 1.2 * wait  # type: ignore[operator]
    assert retry.next_delay(mail, 3) is None and next_delay(hook, 3, Answer(500), 0.0) is None


def test_a_retry_is_recorded_and_enqueued() -> None:
    calls: list[tuple[Any, ...]] = []
    store: dict[str, dict[str, Any]] = {"d1": {"status": "queued", "attempts": 0}}

    class FakeStore:
        def update_delivery(self, game: str, did: str, **fields: Any) -> None:
            store[did].update(fields)

    class FakeKontor:
        store = FakeStore()

        def now(self) -> float:
            return 1_900_000_000.0

    k: Any = FakeKontor()
    assert retry.retry_later(k, "g1", "d1", 1, 30.0, lambda *a, **kw: calls.append((*a, kw)) or True,
                             last_error="451") == "retrying"
    assert store["d1"] == {"status": "retrying", "attempts": 1, "last_error": "451",
                           "next_attempt_at": "2030-03-17T17:47:10.000+00:00",
                           "updated_at": "2030-03-17T17:46:40.000+00:00"}
    assert calls == [("g1", "d1", 2, {"delay": 30.0})]
    assert retry.mark(k, "g1", "d1", "sent", attempts=2, last_error=None) == "sent"
    assert store["d1"]["next_attempt_at"] is None and store["d1"]["status"] == "sent"
