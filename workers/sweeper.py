"""The sweeper (Procfile `clock`): every few seconds, make again what a lost job or a
killed process would otherwise leave undone for good (`service.jobs.sweep`): overdue
deadlines, steps stuck in `resolving`, bot seats that never answered, and every effect
of a commit (running set, notices, deadline and bot jobs) a process died before making.
Run as `python -m workers.sweeper`."""

from __future__ import annotations

import logging
import signal
import threading

from service import logs
from service.config import Settings
from service.core.kontor import Kontor
from service.jobs.sweep import sweep

log = logging.getLogger("kontor.sweeper")


def run(settings: Settings, stop: threading.Event) -> None:
    k = Kontor(settings)
    log.info("sweeper: every %.1f s on %s", settings.sweep_interval, settings.redis_url)
    while not stop.is_set():
        try:
            stats = sweep(k)
            if any(v for key, v in stats.items() if key != "games"):
                log.info("sweep: %s", stats)
        except Exception:  # keep sweeping: a store hiccup must not stop deadlines for good
            log.exception("sweep failed; retrying in %.1f s", settings.sweep_interval)
        stop.wait(settings.sweep_interval)


def main() -> None:
    logs.setup()
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    run(Settings.from_env(), stop)


if __name__ == "__main__":
    main()
