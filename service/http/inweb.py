"""Resolving a step in the web process that flipped it (the setting `resolve_in_web`).

Without it, the web process that stores a step's last order pushes `<game> <step>` on the
ready list (`Jobs.ready`), and a worker's drain job takes it, holds it, resolves it, makes
the commit's notices and lets it go: a push here, a take (and RQ's own work) there, and
the step's store reads made again by another process. With it, `Jobs.resolve` hands the
step to `InWeb` (`Jobs.here`), which, once the order's answer is on its way (a greenlet
of its own under gevent, a thread otherwise), does what the worker's drain job does for
one step, with the same code:

* takes no hold (`Jobs.holding`, the lease a worker's `resolve` job takes and its
  heartbeat renews: two round trips on the queue's Valkey a step, a quarter of the
  resolution's CPU here in the stream bench's profile). A web process that dies between its answer and its commit
  (a SIGKILL, a lost host) leaves the step `resolving` on no list and held by nobody,
  as one that died before its push: the sweep's `Jobs.orphaned` check puts it on the
  ready list once `resolve_lease` seconds have passed since the flip (`flipped_at`),
  and a worker resolves it: within `resolve_lease` + `sweep_interval` seconds of the
  flip, against `resolve_lease` + `lease_check` with a hold. A live web whose
  resolution takes longer than that may see a worker resolve the step too: one of
  them commits (below), as with a hold that ran out;
* resolves it (`Kontor.resolve`, in `Jobs.deferring` as a job does): commit.lua's
  compare-and-set commits it once, whoever else resolves it too (a duplicate is a
  no-op); the commit's own after-work (the running set and listing indexes, the deadline
  hand-on, bot jobs) is made by `Orders._commit` as in a worker;
* then hands the commit's notices (when anyone is to be told) to the workers
  through the ready list (`Jobs.notices_ready`): a drain job makes them and sends the
  webhooks, as the worker that resolved the step would have. (Sent from here, they cost
  more CPU and doubled the webhook bench's round time: the web's one loop waited on the
  receivers.) A process killed first leaves them to the sweep (the notified mark lags).
  The game's later steps are resolved here too: its resolutions run side by side in the
  web's greenlets, where a drain job resolves one step after another, each waiting on
  the store's writes (the webhook bench, alternated in one sitting: 662–681 moves/s
  against 599–607, 2.20–2.29 ms of server CPU a move against 2.32–2.38).

When the resolution raises, the step goes on the ready list
(`Jobs.ready`): a worker resolves it (or finds it resolved). A trigger is never dropped.
This module never runs an RQ job: it calls the resolution itself.

`auto` (the default) resolves here only under gevent (gunicorn's gevent workers, where a
resolution is a greenlet beside the requests); `on` also in other servers (in a thread);
`off` keeps every resolution in the workers.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Callable
from typing import Any

from service.core.kontor import Kontor
from service.http.pace import gevent_patched
from service.jobs import queue
from service.logs import game_id

log = logging.getLogger("kontor.jobs")

Spawn = Callable[..., Any]


def _thread(fn: Callable[..., Any], *args: Any) -> None:
    threading.Thread(target=fn, args=args, name="kontor-inweb", daemon=True).start()


#: Resolutions started here and not ended, and the condition `finish` waits on.
_running = 0
_idle = threading.Condition()


def _started(change: int) -> None:
    global _running
    with _idle:
        _running += change
        if not _running:
            _idle.notify_all()


def finish(timeout: float) -> bool:
    """Wait (at most `timeout` seconds) for the resolutions this process started to end:
    a worker that stops gracefully lets them commit (gunicorn's `worker_exit`) rather
    than leave their steps to the sweep's orphan check; whether none is left."""
    with _idle:
        return _idle.wait_for(lambda: _running == 0, timeout)


def spawner() -> Spawn:
    """How a resolution starts beside the request: a greenlet under gevent, else a thread."""
    if gevent_patched():
        import gevent

        return gevent.spawn
    return _thread


class InWeb:
    """`Jobs.here` of a web process: resolve a step flipped here, here (module docstring)."""

    def __init__(self, k: Kontor, spawn: Spawn | None = None) -> None:
        self.k = k
        self.spawn = spawn

    def __call__(self, game: str, phase: int) -> None:
        """Start resolving the step beside the request; the ready list if it cannot start."""
        _started(1)
        try:
            if self.spawn is None:
                self.spawn = spawner()
            self.spawn(contextvars.copy_context().run, self._counted, game, phase)
        except Exception:
            _started(-1)
            log.exception("game %s phase %d: could not start resolving it here; put on the ready list", game, phase)
            self.k.jobs.ready(game, phase)

    def _counted(self, game: str, phase: int) -> str:
        try:
            return self.run(game, phase)
        finally:
            _started(-1)

    def run(self, game: str, phase: int) -> str:
        """Resolve (unheld) and hand on the notices (the module docstring); what
        `Kontor.resolve` answered, or `ready` when the step went on the ready list."""
        k = self.k
        game_id.set(game)
        later: list[queue.Call] = []
        try:
            k.jobs.crash_point("inweb_resolving")
            with k.jobs.deferring() as later:
                out = k.resolve(game, phase)
        except Exception:
            log.exception("game %s phase %d: resolving it here failed; put on the ready list", game, phase)
            try:
                k.jobs.ready(game, phase)
            except Exception:  # the store is away: the sweep's orphan check is the net
                log.exception("game %s phase %d: could not put it on the ready list either", game, phase)
            self._enqueue(later)
            return "ready"
        while later:
            call = later.pop(0)
            try:
                if call.task is queue.resolve:
                    k.jobs.ready(*call.args)
                else:
                    k.jobs.notices_ready(*call.args)
            except Exception:
                log.exception("%s%s could not go on the ready list; enqueued", call.task.name, call.args)
                self._enqueue([call])
        return out

    def _enqueue(self, calls: list[queue.Call]) -> None:
        for call in calls:
            try:
                if call.task is queue.resolve:
                    self.k.jobs.ready(*call.args)
                else:
                    self.k.jobs.notify(*call.args)
            except Exception:  # the sweep makes it again
                log.exception("%s%s could not be enqueued", call.task.name, call.args)


def install(k: Kontor) -> bool:
    """Make `k` resolve the steps it flips here when the setting `resolve_in_web` says
    so (`auto`: under gevent, decided at the first step, since a server may patch the
    process after it loaded the app); False when it never will (`off`)."""
    mode = k.settings.resolve_in_web
    if mode == "off":
        k.jobs.here = None
        return False
    if mode == "auto":
        k.jobs.here = _Auto(k)
        return True
    k.jobs.here = InWeb(k)
    return True


class _Auto:
    """`auto`: decides at the first step whether this process runs under gevent (a
    gunicorn gevent worker patches it before it loads the app, or after, with
    preloading), then resolves here or hands every step to the ready list."""

    def __init__(self, k: Kontor) -> None:
        self.k = k

    def __call__(self, game: str, phase: int) -> None:
        here: Callable[[str, int], None] | None = InWeb(self.k) if gevent_patched() else None
        if self.k.jobs.here is self:
            self.k.jobs.here = here
        if here is None:
            self.k.jobs.ready(game, phase)
        else:
            here(game, phase)
