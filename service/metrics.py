"""`/metrics` in the Prometheus text format: gauges read from the store at scrape time,
so every web process reports the same figures (no per-process counters to merge)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from rq import Queue, Worker
from rq.registry import FailedJobRegistry, ScheduledJobRegistry, StartedJobRegistry

from service.games import Kontor
from service.jobs import QUEUES


class StoreCollector(Collector):
    def __init__(self, kontor: Kontor) -> None:
        self.k = kontor

    def collect(self) -> Iterator[GaugeMetricFamily]:
        games = self.k.store.active()
        steps = GaugeMetricFamily("kontor_steps", "Open steps of running games by status", labels=["status"])
        counts: dict[str, int] = {"collecting": 0, "resolving": 0}
        for ph in self.k.store.phases(games).values():
            if ph.get("status") in counts:
                counts[ph["status"]] += 1
        for status, n in counts.items():
            steps.add_metric([status], n)
        yield GaugeMetricFamily("kontor_games_running", "Games being played", value=len(games))
        yield steps
        depth = GaugeMetricFamily("kontor_queue_jobs", "RQ jobs by queue and state", labels=["queue", "state"])
        for name in QUEUES:
            q = Queue(name, connection=self.k.rq)
            depth.add_metric([name, "queued"], q.count)
            depth.add_metric([name, "started"], StartedJobRegistry(queue=q).count)
            depth.add_metric([name, "scheduled"], ScheduledJobRegistry(queue=q).count)
            depth.add_metric([name, "failed"], FailedJobRegistry(queue=q).count)
        yield depth
        yield GaugeMetricFamily("kontor_workers", "RQ workers alive", value=Worker.count(connection=self.k.rq))


def render(kontor: Kontor) -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(StoreCollector(kontor))
    return bytes(generate_latest(registry))
