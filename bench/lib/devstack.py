"""`make run` for the benches that measure the whole service as a player meets it
(`peer_bench.py`, `scale.py`): `python -m service.dev.devstack` (embedded Valkey with AOF,
the Procfile's web, workers, sweeper and mail-in) in a session of its own, on the ports
`port` (web), `port + 1` (Valkey), `port + 2` (mail-in) and `port + 3` (the outbox).

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

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"


class Devstack:
    def __init__(self, port: int, var: Path, *, log_path: Path | None = None, source: Path = ROOT,
                 pythonpath: Sequence[Path] = (), web_args: str = "", ready_timeout: float = 120.0) -> None:
        self.port, self.var, self.source = port, var, source
        self.log_path = log_path or var / "stack.log"
        self.pythonpath, self.web_args, self.ready_timeout = list(pythonpath), web_args, ready_timeout
        self.url = f"http://{HOST}:{port}"
        self.redis_url = f"redis://{HOST}:{port + 1}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        shutil.rmtree(self.var, ignore_errors=True)
        self.var.mkdir(parents=True)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if k != "KONTOR_REDIS_URL"}
        path = [str(self.source), *map(str, self.pythonpath), env.get("PYTHONPATH", "")]
        env.update(KONTOR_PORT=str(self.port), KONTOR_VALKEY_PORT=str(self.port + 1),
                   KONTOR_MAILIN_PORT=str(self.port + 2), KONTOR_DEVMAIL_PORT=str(self.port + 3),
                   KONTOR_VAR_DIR=str(self.var / "var"), KONTOR_WEBHOOK_ALLOW_LOOPBACK="1",
                   PYTHONPATH=os.pathsep.join(filter(None, path)))
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

    def commands(self) -> int:
        """Valkey commands served so far (INFO commandstats)."""
        info: dict[str, Any] = redis.Redis.from_url(self.redis_url).info("commandstats")
        return sum(int(v["calls"]) for k, v in info.items() if k.startswith("cmdstat_"))

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
        shutil.rmtree(self.var, ignore_errors=True)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
