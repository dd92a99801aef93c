"""The sweep (run by the `clock` process every few seconds): find overdue steps, steps
stuck in `resolving` and bot seats nobody answered, and enqueue them again; send due
reminders and digests. Safe to run anywhere, any number of times."""

from __future__ import annotations

import json
import logging

from service.channels.mail.send import send_digests
from service.channels.reminders import remind
from service.core.kontor import Kontor

log = logging.getLogger("kontor.sweeper")

#: How often the sweeper re-enqueues one stuck step before leaving it to an operator
#: (a resolution that keeps failing is a bug to look at, not to retry forever).
MAX_SWEEP_ATTEMPTS = 5


def sweep(k: Kontor) -> dict[str, int]:
    """Find overdue steps, steps stuck in `resolving` and bot seats nobody answered,
    and enqueue them again. Safe to run anywhere, any number of times."""
    games = k.store.active()
    now = k.now()
    stats = {"games": len(games), "deadlines": 0, "stuck": 0, "bots": 0, "reminders": 0, "digests": 0}
    for gid, ph in k.store.phases(games).items():
        if not ph:
            continue
        pid, status = int(ph["id"]), ph["status"]
        if status == "finished":
            k.store.activate(gid, False)
        elif status == "collecting" and float(ph["deadline"]) <= now:
            stats["deadlines"] += 1
            k.deadline(gid, pid)
        elif status == "resolving" and now - float(ph.get("flipped_at") or 0) > k.settings.stuck_after:
            if int(ph.get("attempt") or 0) >= MAX_SWEEP_ATTEMPTS:
                log.error("game %s phase %d: still unresolved after %d re-enqueues; see the failed jobs",
                          gid, pid, MAX_SWEEP_ATTEMPTS)
                continue
            stats["stuck"] += 1
            attempt = k.store.bump_attempt(gid, now)
            log.warning("game %s phase %d: stuck in resolving, re-enqueued (attempt %d)", gid, pid, attempt)
            k.jobs.resolve(gid, pid, attempt)
        elif status == "collecting" and now - float(ph["opened_at"]) > k.settings.stuck_after:
            seats = k.store.seats(gid)
            answered = set(k.store.answered(gid, pid))
            for seat in json.loads(ph["expected"]):
                if seat not in answered and (seats.get(seat) or {}).get("bot"):
                    stats["bots"] += 1
                    k.jobs.bot(gid, pid, seat, attempt=int(now) // max(1, k.settings.stuck_after))
    stats["reminders"] = remind(k, now)
    stats["digests"] = send_digests(k, now)
    return stats
