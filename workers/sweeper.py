"""The sweeper (Procfile `clock`): every few seconds, make again what a lost job or a
killed process would otherwise leave undone for good (`service.jobs.sweep`): overdue
deadlines, steps stuck in `resolving` (and, every `lease_check` seconds, steps whose
resolving worker died: `Jobs.reap`), bot seats that never answered, and every effect
of a commit (running set, notices, deadline and bot jobs) a process died before making.
Run as `python -m workers.sweeper`."""

from __future__ import annotations

import logging
import signal
import threading
import time

from service import logs
from service.config import Settings, settings_for
from service.core.kontor import Kontor
from service.jobs.sweep import sweep

log = logging.getLogger("kontor.sweeper")


def run(settings: Settings, stop: threading.Event) -> None:
    """Sweep every `sweep_interval` seconds (or, after a long sweep, `sweep_rest` times its
    length later: `next_sweep`) and, between sweeps, every `lease_check` seconds, put
    back the steps whose resolving worker died (`Jobs.reap`: one script)."""
    k = Kontor(settings)
    log.info("sweeper: every %.1f s, leases every %.1f s, store %s, queue %s", settings.sweep_interval,
             settings.lease_check, _shown(settings.redis_url), _shown(settings.queue))
    due = time.monotonic()
    while not stop.is_set():
        try:
            back = k.jobs.reap()
            if back:
                log.warning("sweep: %d step(s) whose resolving worker stopped answering put back on the ready list",
                            back)
        except Exception:
            log.exception("lease check failed; retrying in %.1f s", settings.lease_check)
        if time.monotonic() >= due:
            began = time.monotonic()
            try:
                stats = sweep(k)
                if any(v for key, v in stats.items() if key != "games"):
                    log.info("sweep: %s", stats)
            except Exception:  # keep sweeping: a store hiccup must not stop deadlines for good
                log.exception("sweep failed; retrying in %.1f s", settings.sweep_interval)
            due = next_sweep(settings, began, time.monotonic())
        stop.wait(max(0.05, min(settings.lease_check, due - time.monotonic())))


def next_sweep(settings: Settings, began: float, ended: float) -> float:
    """When the next sweep is due (monotonic clock) after one from `began` to `ended`:
    `sweep_interval` after it began, and at least `sweep_rest` times its own length after
    it ended (a sweep over very many games keeps the sweeper under a share of a core)."""
    return max(began + settings.sweep_interval, ended + settings.sweep_rest * (ended - began))


def _shown(url: str) -> str:
    """A store or queue URL for the log, without its password."""
    scheme, sep, rest = url.partition("://")
    auth, at, hosts = rest.rpartition("@")
    return f"{scheme}{sep}{auth.partition(':')[0]}:***@{hosts}" if at and ":" in auth else url


def main() -> None:
    settings = settings_for("the sweeper")
    logs.setup()
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    run(settings, stop)


if __name__ == "__main__":
    main()
