"""`make run` end to end: `python -m service.dev.devstack` starts Valkey (AOF on) and the
Procfile's web, worker, clock and mail-in; a game can be created over real HTTP; SIGINT
stops it all with exit code 0 and leaves the AOF behind. `make run-cluster` (`--cluster`)
the same with the store on a 3-master cluster and the queue on a Valkey of its own; SIGTERM
stops every node. The test starts the devstack through the same supervisor
(`service.dev.supervisor`), which also cleans up after a failed test."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import requests

from service.dev.cluster import start_cluster
from service.dev.devstack import BUS_OFFSET, cluster_ports, port_is_free, valkey_health
from service.dev.supervisor import Process, Supervisor
from service.protocol.crypto import SigningKey

ROOT = Path(__file__).resolve().parents[3]
READY_BOUND = 30.0
STOP_BOUND = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def devstack_env(var_dir: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KONTOR_")}
    env.update(KONTOR_VAR_DIR=str(var_dir), KONTOR_PORT=str(port))
    return env


@pytest.fixture
def stack(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Supervisor, str, Path]]:
    port = free_port()
    var_dir = tmp_path / "var"
    options = getattr(request, "param", ())
    env = devstack_env(var_dir, port)
    if options:  # the cluster's stack on one worker and one web worker: the test's machine is shared
        env.update(WORKERS="1", WEB_CONCURRENCY="1")
    sup = Supervisor([Process("devstack", (sys.executable, "-m", "service.dev.devstack", *options))], cwd=ROOT,
                     env=env, grace=STOP_BOUND)
    # On a failed test, stop() sends SIGTERM, then SIGKILL to the devstack's group; its
    # children, in groups of their own, get SIGTERM from the kernel (PR_SET_PDEATHSIG).
    with sup:
        yield sup, f"http://127.0.0.1:{port}", var_dir


def serve_a_game(sup: Supervisor, url: str) -> str:
    """Wait until the started stack is ready, then create a game over real HTTP and read it
    back (in the lobby); its id."""
    sup.wait_ready(f"{url}/readyz", timeout=READY_BOUND)
    host = SigningKey.generate()
    r = requests.post(f"{url}/games", json={"title": "haendler", "seats": 2, "host_key": host.public},
                      headers={"Idempotency-Key": uuid.uuid4().hex}, timeout=10)
    assert r.status_code == 201, r.text
    game = str(r.json()["id"])
    assert requests.get(f"{url}/games/{game}", timeout=10).json()["status"] == "lobby"
    return game


def test_make_run_serves_games_and_stops_cleanly_on_sigint(stack: tuple[Supervisor, str, Path]) -> None:
    sup, url, var_dir = stack
    game = serve_a_game(sup, url)
    # The stack's processes talk to Valkey over its Unix socket (TCP stays open for tools).
    sock = var_dir / "valkey" / "valkey.sock"
    assert sock.is_socket()
    assert redis.Redis.from_url(f"unix://{sock}").exists(f"kontor:{{g:{game}}}:meta")

    sup.send_signal("devstack", signal.SIGINT)
    assert sup.wait("devstack", timeout=STOP_BOUND) == 0

    aof = var_dir / "valkey" / "appendonlydir"
    assert (aof / "appendonly.aof.manifest").is_file()
    incr = list(aof.glob("appendonly.aof.*.incr.aof"))
    assert incr and any(game.encode() in f.read_bytes() for f in incr)


def test_a_busy_web_port_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert not port_is_free(port)
        done = subprocess.run([sys.executable, "-m", "service.dev.devstack"], cwd=ROOT, capture_output=True,
                              env=devstack_env(tmp_path / "var", port), timeout=STOP_BOUND)
    assert done.returncode == 1
    assert f"port {port}" in done.stderr.decode() and "already in use" in done.stderr.decode()
    assert not (tmp_path / "var").exists()  # it gave up before starting anything


def processes_under(folder: Path) -> list[str]:
    """The running processes that work in `folder` or below (a Valkey runs in its data
    folder) or name it (the outbox its mail folder): `<pid>: <command line>`."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(proc / "cwd")
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if str(folder) in cmdline or Path(cwd).is_relative_to(folder):
            found.append(f"{proc.name}: {cmdline}")
    return found


@pytest.mark.parametrize("stack", [("--cluster",)], indirect=True)
def test_make_run_cluster_serves_games_on_a_cluster_and_stops_every_node(stack: tuple[Supervisor, str, Path]) -> None:
    sup, url, var_dir = stack
    game = serve_a_game(sup, url)
    ports = [int(p) for p in (var_dir / "cluster" / "ports").read_text().split()]
    assert len(ports) == 3 and len(processes_under(var_dir / "cluster")) == 3
    # The game is in the cluster (on the node of its slot), the queue in the Valkey of its own.
    cluster = redis.RedisCluster(host="127.0.0.1", port=ports[0])
    assert cluster.exists(f"kontor:{{g:{game}}}:meta")
    queue = redis.Redis.from_url(f"unix://{var_dir / 'queue' / 'valkey.sock'}")
    until = time.monotonic() + 10
    while not queue.scard("rq:workers") and time.monotonic() < until:  # the worker registers itself
        time.sleep(0.1)
    assert queue.scard("rq:workers") == 1 and not queue.keys("kontor:{g:*")
    cluster.close()

    sup.send_signal("devstack", signal.SIGTERM)
    assert sup.wait("devstack", timeout=STOP_BOUND) == 0
    assert processes_under(var_dir) == []  # every node, the queue's Valkey, the outbox
    for i in range(3):  # each node keeps its slots (nodes.conf) and its data (AOF) for the next start
        node = var_dir / "cluster" / f"node{i}"
        assert (node / "nodes.conf").is_file() and (node / "appendonlydir").is_dir()
    # Started again from its folders, the cluster is the same: the game is still there.
    again = start_cluster(data_dir=var_dir / "cluster", masters=3, ports=ports, appendonly="yes")
    try:
        assert again.client(decode_responses=True).hget(f"kontor:{{g:{game}}}:meta", "title") == "haendler"
    finally:
        again.stop()


def test_make_run_cluster_refuses_a_store_url_of_its_own(tmp_path: Path) -> None:
    env = devstack_env(tmp_path / "var", free_port())
    env["KONTOR_REDIS_URL"] = "redis://127.0.0.1:1/0"
    done = subprocess.run([sys.executable, "-m", "service.dev.devstack", "--cluster"], cwd=ROOT, capture_output=True,
                          text=True, env=env, timeout=STOP_BOUND)
    assert done.returncode == 2
    assert done.stderr == ("devstack: make run-cluster starts a cluster of its own: unset KONTOR_REDIS_URL, or use "
                           "`make run` with it\n")
    assert not (tmp_path / "var").exists()


def test_the_clusters_ports_are_kept_for_its_next_start(tmp_path: Path) -> None:
    """A restarted cluster must come back on its ports (each node's nodes.conf names the
    others by address): the first start's are kept, and a busy one is a clear error."""
    data = tmp_path / "cluster"
    first = cluster_ports(data, 3, base=21000)
    assert len(set(first)) == 3 and all(port_is_free(p) and port_is_free(p + BUS_OFFSET) for p in first)
    assert (data / "ports").read_text() == " ".join(map(str, first)) + "\n"
    assert cluster_ports(data, 3, base=25000) == first
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", first[1]))
        busy.listen()
        with pytest.raises(OSError, match=rf"{first[1]} \(or its bus port, 10000 above\) is in use"):
            cluster_ports(data, 3)


def test_the_health_check_names_the_node_that_stopped_answering() -> None:
    class Node:
        def __init__(self, name: str) -> None:
            self.up, self.log_path = True, Path(f"/var/{name}/valkey.log")

        def is_running(self) -> bool:
            return self.up

    nodes = [("cluster node 0 (port 7000)", Node("node0")), ("cluster node 1 (port 7001)", Node("node1")),
             ("the queue's Valkey", Node("queue"))]
    check = valkey_health(nodes)
    assert check is not None and valkey_health([]) is None
    assert check() is None
    nodes[1][1].up = False
    assert check() is None  # one missed PING is a slow answer, not a death
    assert check() == "cluster node 1 (port 7001) stopped answering (log: /var/node1/valkey.log)"


def test_a_setting_that_is_not_a_number_stops_the_stack_before_it_starts(tmp_path: Path) -> None:
    env = devstack_env(tmp_path / "var", free_port())
    env["KONTOR_DRAINERS"] = "all"
    done = subprocess.run([sys.executable, "-m", "service.dev.devstack", "--cluster"], cwd=ROOT, capture_output=True,
                          text=True, env=env, timeout=STOP_BOUND)
    assert (done.returncode, done.stderr) == (2, "devstack: KONTOR_DRAINERS is 'all', not a whole number\n")
    assert not (tmp_path / "var").exists()
