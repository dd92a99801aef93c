"""The one process supervisor: `make run` (`service.dev.devstack`), the benchmarks
(`bench/lib/stack.py`) and the tests start Kontor's processes through it, from the
`Procfile`, so the command lines a deployment runs are the ones development runs.

    python -m service.dev.supervisor [-f Procfile] [web worker ...]   # like `honcho start`

What it does:

- reads the `Procfile` (`name: command` lines, `#` comments) and expands `$VAR`,
  `${VAR}`, `${VAR:-default}` and `${VAR-default}` from the children's environment as a
  POSIX shell would, except that an unset variable without a default is an error rather
  than an empty word, and no shell runs (so a signal reaches the program itself);
- starts each process in its own session, so a Ctrl-C in the terminal reaches only the
  supervisor, which then stops them in order; on Linux a child also gets SIGTERM if the
  supervisor itself is killed (PR_SET_PDEATHSIG), so nothing is orphaned;
- puts the interpreter's own `bin/` first on the children's PATH (as an activated venv
  does), so `python` and `gunicorn` in the Procfile are the project's, however the
  supervisor was started;
- forwards each child's output line by line, prefixed with its name;
- stops them all on SIGINT/SIGTERM or when one of them dies: one at a time in the stop
  order (by default the reverse of the start order: the ones taking input before the
  workers, the workers before what they write to), SIGTERM to the process, then SIGKILL
  to its whole process group after a grace period;
- `wait_ready` polls the web's `/readyz` until it answers 200, failing early when a
  child dies meanwhile.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import re
import selectors
import shlex
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

#: The Procfile at the root of the source tree (the project is installed editable).
PROCFILE = Path(__file__).resolve().parents[2] / "Procfile"
GRACE_SECONDS = 10.0
READY_TIMEOUT = 30.0

_NAME = re.compile(r"^(?P<name>[A-Za-z0-9_-]+):\s*(?P<command>\S.*)$")
_VAR = re.compile(r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?-)(?P<default>[^}]*))?\}"
                  r"|(?P<plain>[A-Za-z_][A-Za-z0-9_]*))")


class ProcfileError(ValueError):
    """A Procfile line that cannot be read, or a variable it needs that is not set."""


class StackError(RuntimeError):
    """A supervised process died, or the stack did not become ready."""


@dataclass(frozen=True)
class Process:
    """One process type: its name (prefix of its output) and its expanded command line."""

    name: str
    argv: tuple[str, ...]

    def replace_arg(self, old: str, *new: str) -> Process:
        """The same command with the argument `old` replaced by `new` (one or more)."""
        if old not in self.argv:
            raise ProcfileError(f"{self.name}: {old!r} is not an argument of {shlex.join(self.argv)}")
        i = self.argv.index(old)
        return Process(self.name, (*self.argv[:i], *new, *self.argv[i + 1:]))


def expand(command: str, env: Mapping[str, str]) -> str:
    """`command` with its variables replaced, ready for `shlex.split`. Single-quoted text
    is left alone; a value is quoted so that it stays one word inside double quotes and
    is split only at its white space outside them, as a shell does."""
    out: list[str] = []
    quote = ""
    i = 0
    while i < len(command):
        c = command[i]
        if quote == "'":
            quote = "" if c == "'" else quote
        elif c == "\\" and i + 1 < len(command):
            out.append(command[i:i + 2])
            i += 2
            continue
        elif c in "'\"" and (not quote or quote == c):
            quote = "" if quote else c
        elif c == "$" and (m := _VAR.match(command, i)):
            out.append(_value(m, env, quote))
            i = m.end()
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _value(m: re.Match[str], env: Mapping[str, str], quote: str) -> str:
    name = m["braced"] or m["plain"]
    value = env.get(name)
    if m["op"] is not None and (value is None or (m["op"] == ":-" and value == "")):
        return m["default"]  # source text: its quotes count, as in a shell
    if value is None:
        raise ProcfileError(f"${name} is not set and has no default (write ${{{name}:-default}})")
    if quote == '"':
        return re.sub(r'(["\\])', r"\\\1", value)
    return re.sub(r"""(["'\\])""", r"\\\1", value)


def parse_procfile(text: str, env: Mapping[str, str]) -> dict[str, Process]:
    """The processes of a Procfile, in file order, their commands expanded with `env`."""
    out: dict[str, Process] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _NAME.match(line)
        if m is None:
            raise ProcfileError(f"line {n}: expected `name: command`, got {line!r}")
        name = m["name"]
        if name in out:
            raise ProcfileError(f"line {n}: {name} is declared twice")
        try:
            argv = tuple(shlex.split(expand(m["command"], env)))
        except ProcfileError as exc:
            raise ProcfileError(f"line {n} ({name}): {exc}") from None
        except ValueError as exc:  # shlex: an unclosed quote
            raise ProcfileError(f"line {n} ({name}): {exc}") from None
        out[name] = Process(name, argv)
    return out


def read_procfile(env: Mapping[str, str], path: Path = PROCFILE) -> dict[str, Process]:
    return parse_procfile(path.read_text(), env)


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` (default: ours) with this interpreter's bin/ first on PATH."""
    out = dict(os.environ if env is None else env)
    bin_dir = str(Path(sys.executable).parent)
    path = out.get("PATH", os.defpath)
    if path.split(os.pathsep)[0] != bin_dir:
        out["PATH"] = os.pathsep.join([bin_dir, path])
    out.setdefault("PYTHONUNBUFFERED", "1")  # lines appear as they are written
    return out


def _die_with_parent() -> Callable[[], None] | None:
    """A `preexec_fn` asking Linux to SIGTERM the child when the thread that started it
    ends (the supervisor starts them from its main thread, so: when it dies)."""
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


class DetachedPopen(subprocess.Popen[bytes]):
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

    def install(self) -> StopFlag:
        """Catch SIGINT and SIGTERM (main thread only)."""
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self)
        return self

    def is_set(self) -> bool:
        return self.signal is not None

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`, waking early once set; returns whether it is set."""
        until = time.monotonic() + seconds
        while not self.is_set() and time.monotonic() < until:
            time.sleep(0.05)
        return self.is_set()


class Supervisor:
    """Starts `processes` in order, forwards their output, stops them in `stop_order`.

    `output` receives each child's lines prefixed `name | ` (default: our stdout at the
    time of writing). `say` receives the supervisor's own messages (default: stderr,
    prefixed with `label`). Also a context manager: start on entry, stop on exit."""

    def __init__(self, processes: Iterable[Process], *, env: Mapping[str, str] | None = None,
                 cwd: Path | None = None, output: TextIO | None = None, grace: float = GRACE_SECONDS,
                 stop_order: Sequence[str] | None = None, label: str = "supervisor",
                 say: Callable[[str], None] | None = None) -> None:
        self.processes = list(processes)
        names = [p.name for p in self.processes]
        if len(set(names)) != len(names):
            raise ValueError(f"two processes share a name: {names}")
        self.stop_order = list(stop_order) if stop_order is not None else names[::-1]
        if sorted(self.stop_order) != sorted(names):
            raise ValueError(f"stop order {self.stop_order} does not name each of {names} once")
        self.env = child_env(env)
        self.cwd = cwd
        self.output = output
        self.grace = grace
        self.label = label
        self._say = say
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self._pump: threading.Thread | None = None
        self._write_lock = threading.Lock()
        self._width = max((len(n) for n in names), default=0)

    # -- starting -------------------------------------------------------------------------
    def start(self) -> None:
        """Start every process, in order; if one cannot be started, stop those that were
        and raise StackError. The output pump (a thread) starts after the last child, so
        no child is forked while it runs."""
        for p in self.processes:
            try:
                self.procs[p.name] = DetachedPopen(list(p.argv), env=self.env, cwd=self.cwd,
                                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                                   stderr=subprocess.STDOUT)
            except OSError as exc:  # e.g. no gunicorn next to this python: not installed with make
                self.stop()
                raise StackError(f"could not start {p.name} ({shlex.join(p.argv)}): {exc}") from exc
        self._pump = threading.Thread(target=self._forward, name="supervisor-output", daemon=True)
        self._pump.start()

    def __enter__(self) -> Supervisor:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- output ---------------------------------------------------------------------------
    def _forward(self) -> None:
        sel = selectors.DefaultSelector()
        partial: dict[str, bytes] = {}
        for name, proc in self.procs.items():
            assert proc.stdout is not None
            os.set_blocking(proc.stdout.fileno(), False)
            sel.register(proc.stdout, selectors.EVENT_READ, name)
            partial[name] = b""
        while sel.get_map():
            for key, _ in sel.select(timeout=0.5):
                name = key.data
                try:
                    chunk = os.read(key.fd, 65536)
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                if not chunk:  # EOF: the process and everything it started closed the pipe
                    sel.unregister(key.fileobj)
                    if partial[name]:
                        self._emit(name, [partial[name]])
                    continue
                *lines, partial[name] = (partial[name] + chunk).split(b"\n")
                self._emit(name, lines)
        sel.close()

    def _emit(self, name: str, lines: list[bytes]) -> None:
        if not lines:
            return
        prefix = f"{name:<{self._width}} | "
        text = "".join(prefix + line.decode(errors="replace").rstrip("\r") + "\n" for line in lines)
        with self._write_lock:
            out = self.output or sys.stdout
            try:
                out.write(text)
                out.flush()
            except (OSError, ValueError):  # our stdout is gone (closed terminal or pipe)
                pass

    def say(self, text: str) -> None:
        if self._say is not None:
            self._say(text)
        else:
            print(f"{self.label}: {text}", file=sys.stderr, flush=True)

    # -- watching -------------------------------------------------------------------------
    def pid(self, name: str) -> int:
        return self.procs[name].pid

    def pids(self, name: str) -> list[int]:
        """Every live process of `name`'s process group (a gunicorn: master and workers).
        Linux /proc; just the leader elsewhere."""
        leader = self.procs[name].pid
        proc = Path("/proc")
        if not proc.is_dir():
            return [leader]
        out = [leader]
        for d in proc.iterdir():
            if d.name.isdigit() and int(d.name) != leader:
                try:
                    if int((d / "stat").read_text().rsplit(")", 1)[1].split()[2]) == leader:
                        out.append(int(d.name))
                except (OSError, IndexError, ValueError):
                    continue
        return out

    def exited(self) -> tuple[str, int] | None:
        """The first process (in start order) that has ended, with its exit code."""
        for name, proc in self.procs.items():
            code = proc.poll()
            if code is not None:
                return name, code
        return None

    def check(self) -> None:
        """Raise StackError if any process has ended."""
        dead = self.exited()
        if dead is not None:
            raise StackError(f"{dead[0]} exited with code {dead[1]}")

    def wait_ready(self, url: str, timeout: float = READY_TIMEOUT, stop: StopFlag | None = None) -> None:
        """Poll `url` until it answers 200. Raises StackError if a process dies first,
        if `stop` is set, or after `timeout` seconds."""
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy
        until = time.monotonic() + timeout
        while time.monotonic() < until:
            if stop is not None and stop.is_set():
                raise StackError(f"interrupted ({stop.signal}) during startup")
            dead = self.exited()
            if dead is not None:
                raise StackError(f"{dead[0]} exited with code {dead[1]} during startup")
            try:
                with opener.open(url, timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError):  # not listening yet, or still booting
                pass
            time.sleep(0.2)
        raise StackError(f"{url} did not answer 200 within {timeout:.0f} s")

    def run(self, stop: StopFlag, health: Callable[[], str | None] | None = None) -> int:
        """Wait for a stop signal (returns 0), or for a process to die or `health` to
        answer a reason (returns 1, having said why). Does not stop the processes."""
        while not stop.wait(0.5):
            dead = self.exited()
            if dead is not None:
                self.say(f"{dead[0]} exited unexpectedly with code {dead[1]}; stopping the rest")
                return 1
            problem = health() if health is not None else None
            if problem:
                self.say(f"{problem}; stopping the rest")
                return 1
        return 0

    # -- stopping -------------------------------------------------------------------------
    def send_signal(self, name: str, sig: int) -> None:
        self.procs[name].send_signal(sig)

    def wait(self, name: str, timeout: float | None = None) -> int:
        """Wait for `name` to end; its exit code (raises subprocess.TimeoutExpired)."""
        return self.procs[name].wait(timeout=timeout)

    def stop(self) -> None:
        """Stop every process in the stop order: SIGTERM, wait up to the grace period,
        then SIGKILL its process group. Whatever the leader leaves behind in its group
        (a stray grandchild) is killed too. Idempotent."""
        for name in self.stop_order:
            proc = self.procs.get(name)
            if proc is None:
                continue
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=self.grace)
                except subprocess.TimeoutExpired:
                    self.say(f"{name} did not stop within {self.grace:g} s; killing it")
            self._kill_group(proc)
        if self._pump is not None:
            self._pump.join(timeout=2)
        for proc in self.procs.values():
            if proc.stdout is not None and (self._pump is None or not self._pump.is_alive()):
                proc.stdout.close()

    def kill(self) -> None:
        """SIGKILL every process group at once (a last resort: no clean shutdown)."""
        for proc in self.procs.values():
            self._kill_group(proc)

    @staticmethod
    def _kill_group(proc: subprocess.Popen[bytes]) -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the child leads its own session and group
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # unkillable (D state): nothing more we can do
            pass


def main(argv: list[str] | None = None) -> int:
    """Run Procfile processes until Ctrl-C/SIGTERM (exit 0) or until one dies (exit 1)."""
    parser = argparse.ArgumentParser(prog="python -m service.dev.supervisor",
                                     description="Run the Procfile's processes (all, or the ones named).")
    parser.add_argument("-f", "--procfile", type=Path, default=PROCFILE)
    parser.add_argument("--grace", type=float, default=GRACE_SECONDS,
                        help="seconds between SIGTERM and SIGKILL, per process")
    parser.add_argument("names", nargs="*", help="process types to run (default: every one)")
    args = parser.parse_args(argv)
    stop = StopFlag().install()
    env = child_env()
    try:
        table = read_procfile(env, args.procfile)
        unknown = [n for n in args.names if n not in table]
        if unknown:
            raise ProcfileError(f"not in {args.procfile}: {', '.join(unknown)}")
    except (OSError, ProcfileError) as exc:
        print(f"supervisor: {args.procfile}: {exc}", file=sys.stderr)
        return 2
    chosen = [table[n] for n in args.names] if args.names else list(table.values())
    sup = Supervisor(chosen, env=env, cwd=args.procfile.resolve().parent, grace=args.grace)
    code = 1
    try:
        sup.start()
        code = sup.run(stop)
    except StackError as exc:
        sup.say(str(exc))
    finally:
        sup.say(f"stopping ({stop.signal})" if stop.is_set() else "stopping")
        sup.stop()
    return code


if __name__ == "__main__":
    sys.exit(main())
