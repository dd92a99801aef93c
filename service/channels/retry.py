"""Retries of mail and webhook deliveries: the one rule both channels follow.

A delivery (`service.channels.notify`) is tried by one RQ job per attempt; a failed
attempt that is worth retrying enqueues the next one itself, after a wait taken from the
channel's schedule. This module holds what the two channels share:

* **Which job acts.** Only a `queued` or `retrying` delivery whose attempt `n` has not
  been made yet (`is_due`): a job for a settled delivery, or for an attempt already
  made, is a duplicate (a worker lost mid-job, a redelivered RQ job) and does nothing.
* **The schedule.** A list of waits in seconds: wait `i` (from 0) follows the failure of
  attempt `i + 1`. Mail's `mail_retry` is that list as it is; Standard Webhooks'
  `webhook_schedule` starts with the first attempt's own time (0, at once), so its waits
  are the entries after the first (`service.channels.webhook.deliver.next_delay`).
* **Jitter.** Every wait is stretched by a random factor of 0.8 to 1.2, so deliveries
  that failed together (a receiver down) do not all come back in the same second.
* **A receiver's own wait wins when longer** (`at_least`: a webhook's `Retry-After`).
* **The give-up rule.** When attempt `n` fails and the schedule has no wait `n - 1`, the
  delivery has failed for good (`next_delay` answers None); what that does to the
  seat's contact is the channel's own business (mail marks the address `failed`, a
  webhook is disabled).
* **The record.** Every change of status stamps `updated_at` and clears
  `next_attempt_at` unless a retry sets it (`mark`, `retry_later`).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from service.core.clock import iso

if TYPE_CHECKING:
    from service.core.kontor import Kontor

#: The delivery states a job still acts on (any other: the job is a duplicate).
PENDING = ("queued", "retrying")
#: Every wait is multiplied by a random factor in this range.
JITTER = (0.8, 1.2)

_random = secrets.SystemRandom()

#: Enqueue attempt `attempt` of a delivery after `delay` seconds (`Jobs.mail`, `Jobs.webhook`).
Enqueue = Callable[..., bool]


def is_due(rec: dict[str, Any] | None, attempt: int) -> bool:
    """Whether a job for attempt `attempt` of the delivery `rec` should act."""
    return rec is not None and rec["status"] in PENDING and int(rec.get("attempts") or 0) < attempt


def jitter(seconds: float) -> float:
    """`seconds` times a random factor of 0.8 to 1.2."""
    return seconds * _random.uniform(*JITTER)


def next_delay(waits: Sequence[float], attempt: int, at_least: float = 0.0) -> float | None:
    """Seconds until attempt `attempt + 1` once attempt `attempt` (from 1) has failed,
    or None when the schedule is used up (give up). The wait is jittered; `at_least`
    (what the receiver asked for) wins when it is longer."""
    if attempt < 1 or attempt > len(waits):
        return None
    return max(jitter(waits[attempt - 1]), at_least)


def changes(status: str, now: float, **fields: Any) -> dict[str, Any]:
    """The fields a delivery's record takes for its new `status` and `fields` at `now`:
    `updated_at` stamped, `next_attempt_at` cleared unless given (`mark`; a batch of
    first attempts writes them at once, `service.channels.webhook.deliver.record_all`)."""
    return {"next_attempt_at": None, **fields, "status": status, "updated_at": iso(now)}


def retrying(attempt: int, delay: float, now: float, **fields: Any) -> dict[str, Any]:
    """The fields of failed attempt `attempt` recorded as `retrying`, the next attempt
    due `delay` seconds after `now` (`retry_later`)."""
    return changes("retrying", now, attempts=attempt, next_attempt_at=iso(now + delay), **fields)


def mark(k: Kontor, gid: str, delivery_id: str, status: str, now: float | None = None, **fields: Any) -> str:
    """Record a delivery's new `status` and `fields` at `now` (default: the store's
    time); `next_attempt_at` is cleared unless given. Answers the status."""
    k.store.update_delivery(gid, delivery_id, **changes(status, k.now() if now is None else now, **fields))
    return status


def retry_later(k: Kontor, gid: str, delivery_id: str, attempt: int, delay: float, enqueue: Enqueue,
                now: float | None = None, **fields: Any) -> str:
    """Record failed attempt `attempt` as `retrying` (when the next one is due, and
    `fields`) and enqueue attempt `attempt + 1` after `delay` seconds. Answers `retrying`."""
    now = k.now() if now is None else now
    k.store.update_delivery(gid, delivery_id, **retrying(attempt, delay, now, **fields))
    enqueue(gid, delivery_id, attempt + 1, delay=delay)
    return "retrying"
