"""`make run` for the benches that measure the whole service as a player meets it
(`peer_bench.py`, `scale.py`): `python -m service.dev.devstack` (embedded Valkey with AOF,
the Procfile's web, workers, sweeper and mail-in) in a session of its own, on the ports
`port` (web), `port + 1` (Valkey), `port + 2` (mail-in) and `port + 3` (the outbox).

With `store="cluster"` (issue 24) the game store is an embedded 3-master Valkey Cluster
(`service.dev.cluster.start_cluster`, masters on `port + 4` to `port + 6`) and the job
queue a Valkey of its own on `port + 1` (and on a Unix socket, which the stack's
processes use, as `make run`'s Valkey): the stack gets `KONTOR_REDIS_URL=redis-cluster://...`
and `KONTOR_QUEUE_URL`, so devstack starts no Valkey of its own. Every node runs with the
settings `make run`'s Valkey has (AOF, the `appendfsync` of `KONTOR_DURABILITY`, the
memory settings `VALKEY_MEMORY`); the queue's with `appendfsync everysec`, as `make
run-cluster` runs it.

`start()` returns once the web answers `/readyz` and a worker has registered, or raises
with the tail of the stack's log; `stop()` stops it as Ctrl-C would and removes its data;
`kill()` is the time limit's last resort.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import redis
import requests

from lib.load import tree
from lib.stack import lift_limits
from service.config import Settings
from service.dev.devstack import MAX_SOCKET_PATH, VALKEY_MEMORY
from service.store.durable import valkey_fsync

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
#: Where the store can be: `single` (make run's one Valkey, over its Unix socket),
#: `single-tcp` (one Valkey as `single`, over loopback TCP: what a store on another host
#: costs, the control that tells a cluster's own cost from TCP's), `cluster` (3 masters
#: over TCP, the queue on a Valkey of its own).
STORES = ("single", "single-tcp", "cluster")
MASTERS = 3


class Devstack:
    def __init__(self, port: int, var: Path, *, log_path: Path | None = None, source: Path = ROOT,
                 pythonpath: Sequence[Path] = (), web_args: str = "", ready_timeout: float = 120.0,
                 store: str = "single") -> None:
        if store not in STORES:
            raise ValueError(f"store: {' or '.join(STORES)}, not {store!r}")
        self.port, self.var, self.source, self.store = port, var, source, store
        self.log_path = log_path or var / "stack.log"
        self.pythonpath, self.web_args, self.ready_timeout = list(pythonpath), web_args, ready_timeout
        self.url = f"http://{HOST}:{port}"
        #: The Valkey on `port + 1`: the store and the queue (single), the queue (cluster).
        self.redis_url = f"redis://{HOST}:{port + 1}/0"
        #: The store as the service names it (`KONTOR_REDIS_URL`).
        self.store_url = self.redis_url
        #: The store's servers, as plain URLs: the one Valkey, or the cluster's masters.
        self.store_nodes = [self.redis_url]
        self.cluster: Any = None
        self.queue: Any = None
        self.tcp: Any = None  # single-tcp's Valkey
        self.proc: subprocess.Popen[bytes] | None = None

    def _start_cluster(self, env: dict[str, str]) -> None:
        """The store's cluster and the queue's Valkey, with `make run`'s Valkey settings."""
        from service.dev.cluster import start_cluster
        from service.dev.valkey import start_valkey

        fsync = valkey_fsync(Settings.from_env(env).durability)
        config: dict[str, Any] = {"appendonly": "yes", "appendfsync": fsync, **VALKEY_MEMORY}
        ports = [self.port + 4 + i for i in range(MASTERS)]
        self.cluster = start_cluster(self.var / "cluster", masters=MASTERS, ports=ports, **config)
        self.store_url = self.cluster.url
        self.store_nodes = [f"redis://{s.host}:{s.port}/0" for s in self.cluster.masters]
        sock = self.var / "queue" / "valkey.sock"
        unix = len(str(sock).encode()) <= MAX_SOCKET_PATH
        # The queue's Valkey as `make run-cluster` runs it: `appendfsync everysec` (the
        # sweeper makes again what a crash loses of the queue).
        self.queue = start_valkey(self.var / "queue", self.port + 1, unix_socket_path=sock if unix else None,
                                  **{**config, "appendfsync": "everysec"})
        env.update(KONTOR_REDIS_URL=self.store_url,
                   KONTOR_QUEUE_URL=f"unix://{sock}" if unix else self.redis_url)

    def _start_tcp(self, env: dict[str, str]) -> None:
        """One Valkey as devstack starts it (its settings and `appendfsync`), reached over
        loopback TCP: the stack gets `KONTOR_REDIS_URL=redis://...`."""
        from service.dev.valkey import start_valkey

        fsync = valkey_fsync(Settings.from_env(env).durability)
        config: dict[str, Any] = {"appendonly": "yes", "appendfsync": fsync, **VALKEY_MEMORY}
        self.tcp = start_valkey(self.var / "valkey", self.port + 1, **config)
        env["KONTOR_REDIS_URL"] = self.redis_url

    def start(self) -> None:
        shutil.rmtree(self.var, ignore_errors=True)
        self.var.mkdir(parents=True)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if k not in ("KONTOR_REDIS_URL", "KONTOR_QUEUE_URL")}
        path = [str(self.source), *map(str, self.pythonpath), env.get("PYTHONPATH", "")]
        env.update(KONTOR_PORT=str(self.port), KONTOR_VALKEY_PORT=str(self.port + 1),
                   KONTOR_MAILIN_PORT=str(self.port + 2), KONTOR_DEVMAIL_PORT=str(self.port + 3),
                   KONTOR_VAR_DIR=str(self.var / "var"), KONTOR_WEBHOOK_ALLOW_LOOPBACK="1",
                   PYTHONPATH=os.pathsep.join(filter(None, path)))
        lift_limits(env)  # the bench's players all come from loopback
        if self.store == "cluster":
            self._start_cluster(env)
        elif self.store == "single-tcp":
            self._start_tcp(env)
        if self.web_args:
            env["GUNICORN_CMD_ARGS"] = self.web_args
        log = open(self.log_path, "wb")  # noqa: SIM115  (the child writes it)
        self.proc = subprocess.Popen([sys.executable, "-m", "service.dev.devstack"], cwd=self.source, env=env,
                                     stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        end = time.monotonic() + self.ready_timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the stack exited: {self.log_tail()}")
            try:
                if (requests.get(self.url + "/readyz", timeout=2).status_code == 200
                        and redis.Redis.from_url(self.redis_url).scard("rq:workers")):
                    return
            except (requests.RequestException, redis.RedisError):
                pass
            time.sleep(0.2)
        raise RuntimeError(f"the stack did not get ready: {self.log_tail()}")

    @property
    def servers(self) -> list[str]:
        """Every Valkey of the stack (plain URLs): the store's, then the queue's if apart."""
        return self.store_nodes + ([self.redis_url] if self.store == "cluster" else [])  # single-tcp: one

    def commands(self) -> int:
        """Valkey commands served so far (INFO commandstats), summed over every server."""
        total = 0
        for url in self.servers:
            info: dict[str, Any] = redis.Redis.from_url(url).info("commandstats")
            total += sum(int(v["calls"]) for k, v in info.items() if k.startswith("cmdstat_"))
        return total

    def used_memory(self) -> int:
        """The store's `used_memory`, summed over its servers (the cluster's masters)."""
        return sum(int(redis.Redis.from_url(url).info("memory")["used_memory"]) for url in self.store_nodes)

    def pids(self) -> list[int]:
        """Every process of the stack: devstack's tree and the Valkeys started beside it."""
        assert self.proc is not None
        return tree(self.proc.pid) + self.valkey_pids()

    def valkey_pids(self) -> list[int]:
        """The pids of the Valkeys the bench started (the cluster's and the queue's);
        devstack's own Valkey is in its process tree."""
        if self.store == "single":
            return []
        return [int(redis.Redis.from_url(url).info("server")["process_id"]) for url in self.servers]

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"

    def log_errors(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return "(no log)"
        return "\n".join([x for x in text if '"WARNING"' in x or '"ERROR"' in x or "Traceback" in x][-lines:])

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.kill()
                self.proc.wait()
        self.proc = None
        for server in (self.queue, self.tcp):
            if server is not None:
                server.stop()
        self.queue = self.tcp = None
        if self.cluster is not None:
            self.cluster.stop()
            self.cluster = None
        shutil.rmtree(self.var, ignore_errors=True)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for server in [*(self.cluster.nodes if self.cluster is not None else []), self.queue, self.tcp]:
            if server is not None:
                server.terminate()
