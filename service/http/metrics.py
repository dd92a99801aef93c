"""`/metrics` in the Prometheus text format: gauges read from the store at scrape time,
so every web process reports the same figures (no per-process counters to merge)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from service.core.kontor import Kontor


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
        for name, states in self.k.jobs.depths().items():
            for state, n in states.items():
                depth.add_metric([name, state], n)
        yield depth
        yield GaugeMetricFamily("kontor_workers", "RQ workers alive", value=self.k.jobs.workers())


def render(kontor: Kontor) -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(StoreCollector(kontor))
    return bytes(generate_latest(registry))
