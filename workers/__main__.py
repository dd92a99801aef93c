"""`python -m workers`: RQ workers on the `resolve` and `notify` queues, JSON serializer,
on the job queue's Valkey (`KONTOR_QUEUE_URL`, or the store's `KONTOR_REDIS_URL` when that
is one server; a cluster store without a queue URL refuses to start, exit status 2), the
jobs reaching the store through `KONTOR_REDIS_URL` (Procfile `worker`).

    python -m workers [--count N|auto] [--burst]

Each is a `SimpleWorker` (no fork per job): jobs are our own short, trusted functions, and
a fork costs about 15 ms a job on this machine class. The engine and service modules are
imported once, before the first job.

`--count` (default 1; the Procfile passes `${WORKERS:-auto}`, `auto` being this host's
cores, a per-host figure: over several worker hosts, set `KONTOR_DRAINERS` to their sum):
with more than one, this process starts that many workers as child processes
(`python -m workers --count 1`), passes SIGTERM/SIGINT on to them, starts again one that
died (after a second), and ends when all have ended after a stop. Every worker is started
with the scheduler, and RQ lets exactly one of them, over every host, run it at a time (a
lock per queue in the queue's Valkey, taken over by another worker when its holder dies).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time

import redis
from rq import Queue, SimpleWorker
from rq.serializers import JSONSerializer

import service.jobs.tasks  # noqa: F401  (preload the engine and the service code)
from service import logs
from service.config import Settings, settings_for
from service.jobs.queue import QUEUES
from service.store import DRIVER_INFO


def count_of(text: str) -> int:
    """`auto` (the machine's cores) or a whole number from 1."""
    if text == "auto":
        return max(1, os.cpu_count() or 1)
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError("--count is at least 1")
    return n


def work(burst: bool) -> None:
    """One RQ worker in this process, until it is stopped (or, `burst`, out of jobs)."""
    settings = Settings.from_env()
    conn = redis.Redis.from_url(settings.queue, driver_info=DRIVER_INFO)
    queues = [Queue(name, connection=conn, serializer=JSONSerializer) for name in QUEUES]
    worker = SimpleWorker(queues, connection=conn, serializer=JSONSerializer)
    worker.work(with_scheduler=True, burst=burst, logging_level="INFO")


def supervise(count: int, burst: bool) -> int:
    """Run `count` workers as children until stopped; restart one that dies meanwhile."""
    argv = [sys.executable, "-m", "workers", "--count", "1", *(["--burst"] if burst else [])]
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True
        for proc in children:
            if proc.poll() is None:
                proc.send_signal(signum)

    children = [subprocess.Popen(argv) for _ in range(count)]
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)
    while True:
        live = [p for p in children if p.poll() is None]
        if not live and (stopping or burst):
            return 0
        if not stopping and not burst:
            for i, proc in enumerate(children):
                if proc.poll() is not None:
                    print(f"workers: worker {proc.pid} ended with {proc.returncode}; starting another",
                          file=sys.stderr, flush=True)
                    time.sleep(1)
                    if not stopping:
                        children[i] = subprocess.Popen(argv)
        time.sleep(0.2)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m workers", description="Kontor's RQ workers")
    parser.add_argument("--count", type=count_of, default=1, help="how many workers: a number or auto (cores)")
    parser.add_argument("--burst", action="store_true", help="stop once the queues are empty")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    settings_for("the worker")  # before any child: a configuration error is not restarted
    logs.setup()
    if args.count == 1:
        work(args.burst)
    else:
        sys.exit(supervise(args.count, args.burst))


if __name__ == "__main__":
    main()
