"""Waiting for the store by keyspace notifications, for the benches that time how soon a
step moves on: a thread listens to the notifications of some key patterns and hands each
key, time-stamped on arrival, to `seen` (the subclass decides what it waits for).

A Valkey Cluster node notifies only of its own keys, so on a cluster the watcher listens
to every master (`url` a list of the nodes' plain URLs), one thread each."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import redis


class KeyspaceWatcher:
    def __init__(self, url: str | Sequence[str], *patterns: str) -> None:
        urls = [url] if isinstance(url, str) else list(url)
        self.nodes = [redis.Redis.from_url(u, decode_responses=True) for u in urls]
        self.r = self.nodes[0]
        self.lock = threading.Lock()
        self.stopping = False
        self.pubsubs = []
        for node in self.nodes:
            node.config_set("notify-keyspace-events", "Kh")
            pubsub = node.pubsub(ignore_subscribe_messages=True)
            pubsub.psubscribe(*patterns)
            self.pubsubs.append(pubsub)
        self.threads = [threading.Thread(target=self._run, args=(p,), daemon=True) for p in self.pubsubs]
        for t in self.threads:
            t.start()

    def _run(self, pubsub: redis.client.PubSub) -> None:
        while not self.stopping:
            msg = pubsub.get_message(timeout=0.2)
            if msg is None:
                continue
            at = time.perf_counter()
            self.seen(msg["channel"].split(":", 1)[1], at)

    def seen(self, key: str, at: float) -> None:
        """A notification for `key` arrived at `at` (perf_counter)."""
        raise NotImplementedError

    def close(self) -> None:
        self.stopping = True
        for t in self.threads:
            t.join(timeout=2)
        for pubsub, node in zip(self.pubsubs, self.nodes, strict=True):
            pubsub.close()
            node.config_set("notify-keyspace-events", "")
