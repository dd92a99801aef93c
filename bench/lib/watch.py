"""Waiting for the store by keyspace notifications, for the benches that time how soon a
step moves on: a thread listens to the notifications of some key patterns and hands each
key, time-stamped on arrival, to `seen` (the subclass decides what it waits for)."""

from __future__ import annotations

import threading
import time

import redis


class KeyspaceWatcher:
    def __init__(self, url: str, *patterns: str) -> None:
        self.r = redis.Redis.from_url(url, decode_responses=True)
        self.r.config_set("notify-keyspace-events", "Kh")
        self.pubsub = self.r.pubsub(ignore_subscribe_messages=True)
        self.pubsub.psubscribe(*patterns)
        self.lock = threading.Lock()
        self.stopping = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stopping:
            msg = self.pubsub.get_message(timeout=0.2)
            if msg is None:
                continue
            at = time.perf_counter()
            self.seen(msg["channel"].split(":", 1)[1], at)

    def seen(self, key: str, at: float) -> None:
        """A notification for `key` arrived at `at` (perf_counter)."""
        raise NotImplementedError

    def close(self) -> None:
        self.stopping = True
        self.thread.join(timeout=2)
        self.pubsub.close()
        self.r.config_set("notify-keyspace-events", "")
