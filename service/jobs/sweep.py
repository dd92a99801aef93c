"""The sweep (run by the `clock` process every few seconds): make again whatever a lost
job or a killed process left undone, from the committed state alone; send due reminders
and digests. Safe to run anywhere, any number of times.

What a commit leaves to do outside its script (`Orders._commit`), and how the sweep
derives it again when the process died first:

* the running set: `reconcile_active` puts back every game of the registry that runs
  (or is finished with notices still to make) and is not in it, a batch per sweep (a
  slice of every bucket: the running set and the registry are bucketed, `service.store.keys`);
* the notices: a game whose `notified_through` mark lags behind its `event_seq` by
  events older than `effects_grace` gets a notify job for the gap (a younger gap is the
  commit's own work under way); under the gap's own id, which RQ refuses while that job
  exists; once the gap is `stuck_after` old, under a new id per `stuck_after` window,
  since a killed job's id stays held. Deliveries have derived ids, so a second job
  sends nothing twice. A game where nobody has a contact just has its mark moved on;
* a step the host paused (`paused_at`, `service.core.hosting`) is passed by: its
  deadline is neither checked nor planned again while paused (the resume plans it);
  its bot seats are asked as any step's;
* the deadline job and the bot jobs of a step opened less than `stuck_after` ago (and at
  least `effects_grace` ago) are planned again when RQ has no job of their ids (an
  overdue deadline is checked here in any case; unanswered bot seats of older steps are
  asked again every `stuck_after`);
* a finished game leaves the running set once its notices are all made;
* an absence that has ended and was not told (its job lost) is told (issue 25,
  `service.core.absence`: once, whichever comes first);
* lobby games are told a day before they expire and removed once expired (a removal cut
  short after the game's script is finished by the next), and the registry and the
  listing indexes are repaired, a batch per sweep (`service.jobs.expiry`): an index entry
  a crash after a creation's or a commit's script left out is added, a registry entry
  whose game never came to be is dropped;
* a rematch begun and not finished (its intent older than `REMATCH_GRACE`: a crash
  between its writes) is finished: its game made and started, the finished game told
  (`service.core.rematch`).
"""

from __future__ import annotations

import json
import logging

from service.channels.mail.send import send_digests
from service.channels.reminders import remind
from service.core.kontor import Kontor
from service.jobs.expiry import expire_lobbies, repair_indexes
from service.jobs.queue import bot_id, deadline_id

log = logging.getLogger("kontor.sweeper")

#: How often the sweeper re-enqueues one stuck step before leaving it to an operator
#: (a resolution that keeps failing is a bug to look at, not to retry forever).
MAX_SWEEP_ATTEMPTS = 5

#: How many games of the games index one sweep checks against the running set.
RECONCILE_BATCH = 1000


def sweep(k: Kontor) -> dict[str, int]:
    """Reconcile the running set, make the notices a lost notify job did not, find
    overdue steps, steps stuck in `resolving`, missing deadline and bot jobs and bot
    seats nobody answered, and enqueue them again; send reminders and digests."""
    stats = {"games": 0, "reconciled": 0, "notices": 0, "deadlines": 0, "replanned": 0, "stuck": 0, "orphans": 0,
             "bots": 0, "reminders": 0, "digests": 0, "paused": 0, "lobby_told": 0, "lobby_expired": 0,
             "index_added": 0, "index_removed": 0, "rematches": 0, "absences_told": 0}
    moved = k.store.migrate_registries(RECONCILE_BATCH)
    if moved:
        log.warning("%d games moved from the registries of before the buckets", moved)
    for gid in k.store.reconcile_active(RECONCILE_BATCH):
        log.warning("game %s: running but not in the running set; added", gid)
        stats["reconciled"] += 1
    games = k.store.active()
    stats["games"] = len(games)
    now = k.now()
    marks = k.store.marks(games)
    collecting: dict[str, dict[str, str]] = {}
    for gid, ph in k.store.phases(games).items():
        mark = marks[gid]
        if mark.gap:
            stats["notices"] += notices(k, gid, mark.seq, mark.contacts, mark.since, now)
        if not ph:
            continue
        pid, status = int(ph["id"]), ph["status"]
        if status == "finished":
            if not mark.gap:
                k.store.activate(gid, False)
        elif status == "collecting" and float(ph["deadline"]) <= now and not ph.get("paused_at"):
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
        elif (status == "resolving" and not int(ph.get("attempt") or 0)
              and now - float(ph.get("flipped_at") or 0) > k.settings.resolve_lease and k.jobs.orphaned(gid, pid)):
            # Its trigger was lost (the web that flipped it died before it pushed it, or a
            # drainer between its pop and its hold): back on the ready list now, not after
            # `stuck_after`; counted as the first re-enqueue, so a step that keeps failing
            # still ends in `stuck_after`'s bounded attempts.
            stats["orphans"] += 1
            k.store.bump_attempt(gid, now)
            log.warning("game %s phase %d: resolving, but on no list and held by nobody; put on the ready list",
                        gid, pid)
            k.jobs.ready(gid, pid)
        elif status == "collecting":
            collecting[gid] = ph
            stats["paused"] += bool(ph.get("paused_at"))
            if now - float(ph["opened_at"]) > k.settings.stuck_after:
                stats["bots"] += bots(k, gid, ph, attempt=int(now) // max(1, k.settings.stuck_after))
    stats["replanned"] = replan(k, collecting, now)
    stats["reminders"] = remind(k, now)
    stats["digests"] = send_digests(k, now)
    stats["absences_told"] = k.tell_due_absences(now)  # issue 25: an absence's lost end job
    stats["lobby_told"], stats["lobby_expired"] = expire_lobbies(k, now)
    stats["index_added"], stats["index_removed"] = repair_indexes(k, now)
    stats["rematches"] = k.finish_rematches(now)  # rematches a crash left half made (issue 25)
    return stats


def notices(k: Kontor, gid: str, seq: int, contacts: int, since: float | None, now: float) -> int:
    """Enqueue the notices of a game's events after its notified mark (through `seq`);
    1 if a job was enqueued. Nobody to tell: the mark just moves on."""
    if not contacts:
        k.store.mark_nobody_to_tell(gid)
        return 0
    if since is not None and now - since < k.settings.effects_grace:
        return 0  # under way: the commit's own work is making them (else a job each sweep, for nothing)
    if since is not None and now - since > k.settings.stuck_after:
        attempt = int(now) // max(1, k.settings.stuck_after)
        if k.jobs.notify(gid, seq, attempt):
            log.warning("game %s: notices after event %d not made; re-enqueued", gid, seq)
            return 1
        return 0
    return int(k.jobs.notify(gid, seq))


def unchanged(k: Kontor, steps: dict[str, dict[str, str]], games: list[str]) -> set[str]:
    """Those of `games` whose open step is still the one `steps` read: the same step,
    collecting, with the same deadline (one round trip)."""
    now = k.store.phases(games)
    return {gid for gid in games
            if (ph := now.get(gid) or {}).get("id") == steps[gid]["id"] and ph.get("status") == "collecting"
            and ph.get("deadline") == steps[gid]["deadline"]}


def bots(k: Kontor, gid: str, ph: dict[str, str], attempt: int = 0, only: set[int] | None = None) -> int:
    """Enqueue the bot job of every bot seat the open step asks that has not answered
    (of `only`, when given); how many."""
    pid = int(ph["id"])
    seats = k.store.seats(gid)
    answered = set(k.store.answered(gid, pid))
    n = 0
    for seat in json.loads(ph["expected"]):
        if seat not in answered and (seats.get(seat) or {}).get("bot") and (only is None or seat in only):
            n += 1
            k.jobs.bot(gid, pid, seat, attempt=attempt)
    return n


def replan(k: Kontor, steps: dict[str, dict[str, str]], now: float) -> int:
    """Plan again the deadline job and the bot jobs of every young open step (opened less
    than `stuck_after` ago; deadline ahead) that RQ has no job for: a process died
    between the commit and its enqueues, and the sweep after it finds the step young. A
    step opened less than `effects_grace` ago is left to its commit, whose enqueues follow
    it (else a sweep planned the check a commit was about to hand on, and said it was lost).
    (An older step is not looked up in RQ on every sweep, which would cost a round trip
    per running game: should its deadline job be lost after all, the overdue check
    above resolves it on time to a sweep's interval.) How many jobs were planned.

    A step read as open may have closed since (a live game closes one in milliseconds, a
    sweep over many games reads them well before it looks them up in RQ), and its commit
    took its deadline check back: missing, but not lost. So a job found missing is planned
    only for a step still open as it was read (`unchanged`, read again), and a deadline
    check planned for a step that is no longer so (closed, resolving, its deadline moved:
    whatever follows plans its own check) is taken back at once (its commit may have
    handed on before the check was planned): else every sweep of fast games left
    checks of closed steps scheduled, each held until its deadline, a day later."""
    young = [gid for gid, ph in steps.items()
             if k.settings.effects_grace <= now - float(ph["opened_at"]) <= k.settings.stuck_after]
    played = k.store.bot_seats(young)
    wanted: dict[str, tuple[str, int | None]] = {}
    for gid in young:
        ph = steps[gid]
        pid = int(ph["id"])
        if not ph.get("paused_at"):  # a paused step's check is planned by the resume
            wanted[deadline_id(gid, pid, float(ph["deadline"]))] = (gid, None)
        for seat in set(json.loads(ph["expected"])) & played.get(gid, set()):
            wanted[bot_id(gid, pid, seat)] = (gid, seat)
    if not wanted:
        return 0
    missing = sorted(k.jobs.missing(list(wanted)))
    if not missing:
        return 0
    still = unchanged(k, steps, sorted({wanted[job_id][0] for job_id in missing}))
    n = 0
    lost_bots: dict[str, set[int]] = {}
    planned: list[str] = []
    for job_id in missing:
        gid, seat = wanted[job_id]
        if gid not in still:
            continue
        ph = steps[gid]
        if seat is None:
            log.warning("game %s phase %s: deadline job missing; planned again", gid, ph["id"])
            if k.jobs.deadline(gid, int(ph["id"]), float(ph["deadline"])):
                n += 1
                planned.append(gid)
        else:
            lost_bots.setdefault(gid, set()).add(seat)
    if planned:
        for gid in sorted(set(planned) - unchanged(k, steps, planned)):
            k.jobs.cancel_deadline(gid, int(steps[gid]["id"]), float(steps[gid]["deadline"]))
            n -= 1
    for gid, seats in lost_bots.items():
        made = bots(k, gid, steps[gid], only=seats)
        if made:
            log.warning("game %s phase %s: %d bot job(s) missing; planned again", gid, steps[gid]["id"], made)
        n += made
    return n
