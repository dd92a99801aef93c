"""`python -m workers`: an RQ worker with the scheduler on the `resolve` and `notify`
queues, JSON serializer, configured by `KONTOR_REDIS_URL` (Procfile `worker`).

It is a `SimpleWorker` (no fork per job): jobs are our own short, trusted functions, and
a fork costs about 15 ms a job on this machine class (shared/reference). The engine
and service modules are imported once, before the first job.
"""

from __future__ import annotations

import sys

import redis
from rq import Queue, SimpleWorker
from rq.serializers import JSONSerializer

import service.jobs.tasks  # noqa: F401  (preload the engine and the service code)
from service import logs
from service.config import Settings
from service.jobs.queue import QUEUES


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    logs.setup()
    settings = Settings.from_env()
    conn = redis.Redis.from_url(settings.redis_url)
    queues = [Queue(name, connection=conn, serializer=JSONSerializer) for name in QUEUES]
    worker = SimpleWorker(queues, connection=conn, serializer=JSONSerializer)
    worker.work(with_scheduler=True, burst="--burst" in argv, logging_level="INFO")


if __name__ == "__main__":
    main()
