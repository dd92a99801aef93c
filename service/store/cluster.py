"""Forming and emptying a Valkey Cluster (the store's admin commands, for the embedded
cluster of `service.dev.cluster`: `make run-cluster`, the `cluster` tests and benches).

Only the store speaks Redis (`tests/service/store/test_store_layout.py`); the processes are
started by `service.dev.cluster`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import redis
from redis.cluster import ClusterNode

#: The slots of a Redis/Valkey Cluster.
SLOTS = 16384

Address = tuple[str, int]


def form(nodes: Sequence[Address], masters: int, replicas: int, timeout: float = 20.0) -> None:
    """Make a cluster of `nodes` (started with `cluster-enabled yes`; masters first, then
    `replicas` replicas per master in master order): give each master an even share of the
    slots (`CLUSTER ADDSLOTSRANGE`) and its own config epoch, introduce every node to the
    first (`CLUSTER MEET`), attach the replicas (`CLUSTER REPLICATE`), and wait until every
    node says `cluster_state:ok`. Nodes restarted from their `nodes.conf` form again by
    themselves: then it only waits."""
    host0, port0 = nodes[0]
    conns = [redis.Redis(host=h, port=p, decode_responses=True) for h, p in nodes]
    if not conns[0].execute_command("CLUSTER SLOTS"):
        per = SLOTS // masters
        for i, conn in enumerate(conns[:masters]):
            low, high = i * per, (SLOTS - 1 if i == masters - 1 else (i + 1) * per - 1)
            conn.execute_command("CLUSTER ADDSLOTSRANGE", low, high)
            # Distinct epochs at once (as `valkey-cli --cluster create` does): else the
            # nodes settle their collision by gossip first.
            conn.execute_command("CLUSTER SET-CONFIG-EPOCH", i + 1)
        for conn in conns[1:]:
            conn.execute_command("CLUSTER MEET", host0, port0)
        _wait(lambda: all(len(_known(c)) == len(nodes) for c in conns), timeout, "the nodes to meet")
        for r in range(replicas):
            for m in range(masters):
                master_id = conns[m].execute_command("CLUSTER MYID")
                replica = conns[masters + r * masters + m]
                _wait(lambda rep=replica, mid=master_id: mid in _known(rep), timeout, "a replica to see its master")
                replica.execute_command("CLUSTER REPLICATE", master_id)
    _wait(lambda: all(_ok(c, masters) for c in conns), timeout, "the cluster to be ready")


def client(masters: Sequence[Address], **kwargs: Any) -> redis.RedisCluster:
    """A cluster client over `masters` (redis-py's own options in `kwargs`)."""
    return redis.RedisCluster(startup_nodes=[ClusterNode(h, p) for h, p in masters], **kwargs)


def flush(masters: Sequence[Address]) -> None:
    """Empty every node of `masters` that is still a master (replicas follow)."""
    for h, p in masters:
        try:
            redis.Redis(host=h, port=p, socket_timeout=5).flushall()
        except (redis.ResponseError, redis.ConnectionError):  # now a replica, or gone
            pass


def _known(conn: redis.Redis) -> set[str]:
    """The ids of the nodes `conn` knows (redis-py parses CLUSTER NODES into a dict)."""
    return {node["node_id"] for node in conn.execute_command("CLUSTER NODES").values()}


def _ok(conn: redis.Redis, masters: int) -> bool:
    fields = {k: str(v) for k, v in conn.execute_command("CLUSTER INFO").items()}
    return (fields.get("cluster_state") == "ok" and fields.get("cluster_slots_ok") == str(SLOTS)
            and int(fields.get("cluster_size", 0)) == masters)


def _wait(predicate: Any, timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.05)
