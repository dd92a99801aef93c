"""Putting work on the RQ queues: deterministic job ids, JSON arguments only.

Jobs are referred to by dotted path, so the web tier never imports `workers`.
A duplicate enqueue of the same id is refused by RQ (`unique=True`) and is harmless.
"""

from __future__ import annotations

import math
import secrets
from datetime import UTC, datetime, timedelta

import redis
from rq import Queue, Retry, get_current_job
from rq.exceptions import DuplicateJobError
from rq.serializers import JSONSerializer

RESOLVE = "resolve"
NOTIFY = "notify"
QUEUES = (RESOLVE, NOTIFY)


class Jobs:
    def __init__(self, connection: redis.Redis, resolve_timeout: int = 60) -> None:
        self.connection = connection
        self.resolve_timeout = resolve_timeout
        self.queue = Queue(RESOLVE, connection=connection, serializer=JSONSerializer)
        self.notify_queue = Queue(NOTIFY, connection=connection, serializer=JSONSerializer)

    def _enqueue(self, func: str, *args: object, job_id: str, retry: Retry | None = None) -> bool:
        try:
            self.queue.enqueue(func, *args, job_id=job_id, unique=True, retry=retry,
                               job_timeout=self.resolve_timeout, result_ttl=300, failure_ttl=7 * 86400)
        except DuplicateJobError:
            return False
        return True

    def resolve(self, game: str, phase: int, attempt: int = 0) -> bool:
        """Resolve a step that has flipped to `resolving`; `attempt` > 0 for the sweeper's
        re-enqueues (a new id, since the lost job's id may still be held)."""
        suffix = f"-r{attempt}" if attempt else ""
        return self._enqueue("workers.jobs.resolve", game, phase, job_id=f"resolve-{game}-{phase}{suffix}",
                             retry=Retry(max=3, interval=[2, 10, 30]))

    def deadline(self, game: str, phase: int, at: float) -> bool:
        """Check the step's deadline one second after it (RQ's scheduler has whole-second
        granularity and may fire early; the check re-reads the server clock anyway)."""
        when = math.ceil(at) + 1
        job_id = f"deadline-{game}-{phase}-{when}"
        current = get_current_job()
        if current is not None and current.id.startswith(job_id):
            # This very job fired early (a scheduler clock ahead of the store's) and still
            # holds the id: a duplicate would be refused and the check lost until a sweep.
            job_id = f"{job_id}-e{secrets.token_hex(3)}"
        try:
            self.queue.enqueue_at(datetime.fromtimestamp(when, UTC), "workers.jobs.deadline", game, phase,
                                  job_id=job_id, unique=True, result_ttl=300)
        except DuplicateJobError:
            return False
        return True

    def bot(self, game: str, phase: int, seat: int, attempt: int = 0) -> bool:
        suffix = f"-r{attempt}" if attempt else ""
        return self._enqueue("workers.jobs.bot_order", game, phase, seat, job_id=f"bot-{game}-{phase}-{seat}{suffix}",
                             retry=Retry(max=3, interval=[2, 10, 30]))

    # -- notifications (the `notify` queue) ---------------------------------------------
    def _notify(self, func: str, *args: object, job_id: str, delay: float = 0) -> bool:
        """Enqueue on `notify` now, or `delay` seconds from now (by RQ's scheduler)."""
        try:
            if delay > 0:
                self.notify_queue.enqueue_in(timedelta(seconds=delay), func, *args, job_id=job_id, unique=True,
                                             job_timeout=120, result_ttl=300, failure_ttl=7 * 86400)
            else:
                self.notify_queue.enqueue(func, *args, job_id=job_id, unique=True, job_timeout=120,
                                          result_ttl=300, failure_ttl=7 * 86400)
        except DuplicateJobError:
            return False
        return True

    def notify_commit(self, game: str, closing: int, first_event: int, last_event: int, deadline: str) -> bool:
        """Tell every seat with a contact what a committed step changed (one job per commit);
        `deadline`: the opened step's (epoch seconds as text, '' when the game is over)."""
        return self._notify("workers.jobs.notify_commit", game, closing, first_event, last_event, deadline,
                            job_id=f"notify-{game}-{closing}")

    def notify_events(self, game: str, first_event: int, last_event: int) -> bool:
        """Tell the seats concerned about events outside a commit (in-game messages)."""
        return self._notify("workers.jobs.notify_events", game, first_event, last_event,
                            job_id=f"notify-{game}-e{first_event}")

    def mail(self, game: str, delivery: str, attempt: int = 1, delay: float = 0) -> bool:
        return self._notify("workers.jobs.send_mail", game, delivery, attempt, job_id=f"mail-{delivery}-{attempt}",
                            delay=delay)

    def webhook(self, game: str, delivery: str, attempt: int = 1, delay: float = 0) -> bool:
        return self._notify("workers.jobs.send_webhook", game, delivery, attempt,
                            job_id=f"webhook-{delivery}-{attempt}", delay=delay)

    def inbound(self, mail_id: str) -> bool:
        """Process one inbound mail kept in the store under `mail_id`."""
        return self._notify("workers.jobs.inbound_mail", mail_id, job_id=f"inbound-{mail_id}")
