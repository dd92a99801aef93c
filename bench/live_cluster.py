"""Benchmark: the live streams' pub/sub on a Valkey Cluster, classic against sharded
(issue 24, item 4).

Starts an embedded 3-master cluster (`service.dev.cluster`), makes `--games` game ids
(no game state: only their `live` channels matter here) and `--webs` web processes'
subscribers, each game watched by `--spread` of them (its streams' viewers on different
web hosts), then publishes `--messages` messages per game from a Lua script in the
game's slot, as the store's scripts do (`commit.lua` and the others), one after another,
in both ways:

* `classic`: `PUBLISH` in the script; every web process holds one pattern subscription
  (`PSUBSCRIBE <prefix>:{g:*}:live`, as the hub did before issue 24, through the cluster
  client's pub/sub: on the node of the pattern's slot);
* `sharded`: `SPUBLISH` in the script; every web process is the service's own hub
  (`service.core.live.Hub` on a `Store` of the cluster client) with a stream open on each
  game it watches: one `SSUBSCRIBE` per game, on the game's node.

Per node (INFO stats and CLUSTER INFO, counters reset before each way): commands
processed, bytes out to clients, CPU seconds (INFO cpu, user + sys), publish messages
sent over the cluster bus, channels held; per subscriber (web process): messages
received; and the latency from the publish call to the subscriber's wake (p50, p99,
max), each message stamped with its send time.
Human-readable lines, then one JSON line per way:
{"bench":"live_cluster","mode":…,"games":…,"webs":…,"spread":…,"messages":…,"per_node":[…],
 "per_web_received":[…],"wake_p50_ms":…,"wake_p99_ms":…,"wake_max_ms":…}

    PYTHONPATH=$PWD .venv/bin/python bench/live_cluster.py [--games 300] [--webs 4]
        [--spread 2] [--messages 5]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import threading
import time
import uuid
from contextlib import ExitStack
from typing import Any

import redis

from service.core.live import Hub
from service.dev.cluster import start_cluster
from service.store import Store
from service.store.base import store_client

PREFIX = "kontor"
#: The publish of the store's scripts, with the send time as the message (for the latency).
SCRIPT = "redis.call('{cmd}', (string.gsub(KEYS[1], ':phase$', ':live')), ARGV[1]) return 1"


class Received:
    """Arrivals at one subscriber: their count and latencies (seconds)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.count = 0
        self.delays: list[float] = []

    def got(self, note: str) -> None:
        at = time.perf_counter()
        _, _, sent = note.partition(" ")
        with self.lock:
            self.count += 1
            if sent:
                self.delays.append(at - float(sent))


class CountingHub(Hub):
    """The service's hub, counting the messages that woke a stream."""

    def __init__(self, store: Any, received: Received) -> None:
        super().__init__(store)
        self.received = received

    def wake(self, gid: str | None, note: str = "") -> None:
        if note:  # a message (a subscription's confirmation wakes with no note)
            self.received.got(note)
        super().wake(gid, note)


def classic_listener(url: str, received: Received, stop: threading.Event, ready: threading.Event) -> None:
    """One web process's subscription before issue 24: a pattern over every game's channel."""
    r = store_client(url)
    pubsub = r.pubsub(ignore_subscribe_messages=True)
    pubsub.psubscribe(f"{PREFIX}:{{g:*}}:live")
    ready.set()
    while not stop.is_set():
        msg = pubsub.get_message(timeout=0.2)
        if msg is not None and msg.get("type") == "pmessage":
            received.got(str(msg["data"]))
    pubsub.close()


def node_stats(cluster: Any) -> list[dict[str, Any]]:
    out = []
    for s in cluster.masters:
        r = redis.Redis(host=s.host, port=s.port, decode_responses=True)
        stats, info, cpu = r.info("stats"), r.execute_command("CLUSTER", "INFO"), r.info("cpu")
        if isinstance(info, str):
            info = dict(line.split(":", 1) for line in info.strip().splitlines() if ":" in line)
        out.append({"node": f"{s.host}:{s.port}", "commands": int(stats["total_commands_processed"]),
                    "net_out_bytes": int(stats["total_net_output_bytes"]),
                    "bus_publish_sent": int(info.get("cluster_stats_messages_publish_sent", 0)),
                    "bus_publishshard_sent": int(info.get("cluster_stats_messages_publishshard_sent", 0)),
                    "cpu_s": float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"]),
                    "pubsub_patterns": int(stats.get("pubsub_patterns", 0)),
                    "shard_channels": int(stats.get("pubsubshard_channels", 0))})
        r.close()
    return out


def reset(cluster: Any) -> None:
    for s in cluster.masters:
        r = redis.Redis(host=s.host, port=s.port)
        r.config_resetstat()
        r.close()


def run(cluster: Any, mode: str, games: list[str], webs: int, spread: int, messages: int) -> dict[str, Any]:
    rng = random.Random(7)
    watchers = {gid: rng.sample(range(webs), spread) for gid in games}
    received = [Received() for _ in range(webs)]
    client = store_client(cluster.url)
    script = client.register_script(SCRIPT.format(cmd="PUBLISH" if mode == "classic" else "SPUBLISH"))
    stop = threading.Event()
    with ExitStack() as held:
        threads: list[threading.Thread] = []
        if mode == "classic":
            for w in range(webs):
                ready = threading.Event()
                t = threading.Thread(target=classic_listener, args=(cluster.url, received[w], stop, ready), daemon=True)
                t.start()
                ready.wait(10)
                threads.append(t)
        else:
            hubs = [CountingHub(Store(store_client(cluster.url), PREFIX), received[w]) for w in range(webs)]
            for gid, ws in watchers.items():
                for w in ws:
                    held.enter_context(hubs[w].watch(gid))
            want = len(games) * spread
            end = time.monotonic() + 30
            while time.monotonic() < end:
                held_now = sum(s["shard_channels"] for s in node_stats(cluster))
                if held_now >= len(games):  # every game's channel subscribed somewhere
                    break
                time.sleep(0.1)
            time.sleep(0.5)  # the last confirmations in
            assert all(len(h.routes) for h in hubs), "a hub holds no subscription"
            assert sum(len(h.routes) for h in hubs) == want
        time.sleep(0.2)
        reset(cluster)
        cpu = [n["cpu_s"] for n in node_stats(cluster)]
        before = [r.count for r in received]
        start = time.perf_counter()
        for _ in range(messages):
            for gid in games:
                script(keys=[f"{PREFIX}:{{g:{gid}}}:phase"], args=[f"commit {time.perf_counter():.6f}"])
        took = time.perf_counter() - start
        expect = [len(games) * messages if mode == "classic" else
                  sum(messages for ws in watchers.values() if w in ws) for w in range(webs)]
        end = time.monotonic() + 30
        while time.monotonic() < end and any(r.count - b < e for r, b, e in zip(received, before, expect, strict=True)):
            time.sleep(0.05)
        stats = node_stats(cluster)
        for n, c in zip(stats, cpu, strict=True):
            n["cpu_s"] = round(n["cpu_s"] - c, 3)
        stop.set()
        for t in threads:
            t.join(timeout=2)
    delays = sorted(d for r in received for d in r.delays)
    q = statistics.quantiles(delays, n=100) if len(delays) > 1 else [0.0] * 99
    return {"bench": "live_cluster", "mode": mode, "games": len(games), "webs": webs, "spread": spread,
            "messages": messages, "publishes": len(games) * messages, "publish_s": round(took, 3),
            "per_node": stats, "per_web_received": [r.count - b for r, b in zip(received, before, strict=True)],
            "per_web_expected": expect,
            "wake_p50_ms": round(q[49] * 1000, 3), "wake_p99_ms": round(q[98] * 1000, 3),
            "wake_max_ms": round(delays[-1] * 1000, 3) if delays else None}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--webs", type=int, default=4)
    parser.add_argument("--spread", type=int, default=2)
    parser.add_argument("--messages", type=int, default=5)
    args = parser.parse_args(argv)
    cluster = start_cluster(masters=3)
    try:
        games = [uuid.uuid4().hex[:10] for _ in range(args.games)]
        for mode in ("classic", "sharded"):
            row = run(cluster, mode, games, args.webs, args.spread, args.messages)
            print(f"{mode}: {row['publishes']} publishes in {row['publish_s']} s; wake p50 {row['wake_p50_ms']} ms, "
                  f"p99 {row['wake_p99_ms']} ms, max {row['wake_max_ms']} ms")
            print(f"  received per web process: {row['per_web_received']} (expected {row['per_web_expected']})")
            for n in row["per_node"]:
                print(f"  {n['node']}: {n['commands']} commands, {n['net_out_bytes']} bytes out, "
                      f"{n['cpu_s']} s CPU, bus publish {n['bus_publish_sent']} / shard {n['bus_publishshard_sent']}, "
                      f"patterns {n['pubsub_patterns']}, shard channels {n['shard_channels']}")
            print(json.dumps(row, separators=(",", ":")))
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
