"""The one process supervisor (`service.dev.supervisor`) with tiny `python -c` children,
not the real stack: Procfile parsing and expansion, a child that dies brings the others
down, SIGTERM stops them all in the stop order, a child that ignores SIGTERM is killed
with its process group, output is forwarded with a prefix."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from service.dev.supervisor import (
    PROCFILE,
    Process,
    ProcfileError,
    StackError,
    Supervisor,
    parse_procfile,
    read_procfile,
)

ROOT = Path(__file__).resolve().parents[3]
#: Bounds for things that must happen, not timings: generous on a busy machine.
BOUND = 30.0

#: Records its pid in $OUT/<name>.pid once its SIGTERM handler is in place, and its name
#: in $OUT/stopped when SIGTERM comes.
SLEEPER = ("import os,signal,sys,time; n=sys.argv[1]; d=os.environ[\"OUT\"]; "
           "signal.signal(signal.SIGTERM, lambda *_: (open(d+\"/stopped\",\"a\").write(n+chr(10)), sys.exit(0))); "
           "open(d+\"/tmp-\"+n,\"w\").write(str(os.getpid())); os.rename(d+\"/tmp-\"+n, d+\"/\"+n+\".pid\"); "
           "time.sleep(300)")
#: Exits with code 3 once a and b are up.
DIES = ("import os,sys,time; d=os.environ[\"OUT\"]; "
        "up=lambda: os.path.exists(d+\"/a.pid\") and os.path.exists(d+\"/b.pid\"); "
        "[time.sleep(0.05) for _ in iter(up, True)]; sys.exit(3)")


# -- the Procfile -------------------------------------------------------------------------
def test_procfile_lines_expand_variables_like_a_shell() -> None:
    text = """
# a comment, then a blank line

web: gunicorn -w ${WORKERS:-4} -b ${HOST:-0.0.0.0}:${PORT:-8000} 'service:create_app()'
worker: python -m workers --name $NAME --empty "${EMPTY:-fallback}" --dash ${EMPTY-kept}
quoted: echo '${NOT_EXPANDED}' "$SPACED" $SPACED
"""
    env = {"PORT": "9000", "NAME": "w1", "EMPTY": "", "SPACED": "two words"}
    table = parse_procfile(text, env)
    assert list(table) == ["web", "worker", "quoted"]
    assert table["web"].argv == ("gunicorn", "-w", "4", "-b", "0.0.0.0:9000", "service:create_app()")
    assert table["worker"].argv == ("python", "-m", "workers", "--name", "w1", "--empty", "fallback", "--dash")
    # (`${EMPTY-kept}`: set, so no default; empty and unquoted, so no word at all)
    # Single quotes keep the text; a value stays one word in double quotes, splits outside.
    assert table["quoted"].argv == ("echo", "${NOT_EXPANDED}", "two words", "two", "words")


def test_a_value_with_quotes_is_taken_literally() -> None:
    table = parse_procfile("""x: run "$V" $V""", {"V": "it's \"q\""})
    assert table["x"].argv == ("run", "it's \"q\"", "it's", "\"q\"")


@pytest.mark.parametrize(("text", "message"), [
    ("web: run $MISSING", "$MISSING is not set"),
    ("web: run ${MISSING}", "$MISSING is not set"),
    ("web run", "expected `name: command`"),
    ("web: a\nweb: b", "web is declared twice"),
    ("web: echo 'open", "line 1 (web)"),
])
def test_a_bad_procfile_is_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(ProcfileError, match=message.replace("$", r"\$").replace("(", r"\(").replace(")", r"\)")):
        parse_procfile(text, {})


def test_the_project_procfile_declares_the_four_processes() -> None:
    table = read_procfile({"PATH": os.defpath}, PROCFILE)
    assert {"web", "worker", "clock", "mailin"} <= set(table)
    assert table["worker"].argv[:3] == ("python", "-m", "workers")
    assert "service:create_app()" in table["web"].argv


def test_replace_arg_swaps_one_argument() -> None:
    p = Process("web", ("gunicorn", "-b", "x", "service:create_app()"))
    assert p.replace_arg("service:create_app()", "--pythonpath", "bench", "hello_app:create_app()").argv == (
        "gunicorn", "-b", "x", "--pythonpath", "bench", "hello_app:create_app()")
    with pytest.raises(ProcfileError):
        p.replace_arg("nope", "x")


# -- running it ---------------------------------------------------------------------------
def write_procfile(tmp_path: Path, lines: dict[str, str]) -> Path:
    path = tmp_path / "Procfile"
    path.write_text("".join(f"{name}: {cmd}\n" for name, cmd in lines.items()))
    return path


def sleeper(name: str) -> str:
    return f"python -c '{SLEEPER}' {name}"


def read_pid(out: Path, name: str, proc: subprocess.Popen[bytes] | None = None) -> int:
    until = time.monotonic() + BOUND
    path = out / f"{name}.pid"
    while not path.exists():
        assert time.monotonic() < until, f"{name} never started"
        assert proc is None or proc.poll() is None, f"the supervisor exited with {proc.returncode}"
        time.sleep(0.05)
    return int(path.read_text())


def gone(pid: int) -> bool:
    """Whether `pid` has ended (a zombie counts: it runs no more), within the bound."""
    until = time.monotonic() + BOUND
    while time.monotonic() < until:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def run_supervisor(procfile: Path, out: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "OUT": str(out)}
    return subprocess.Popen([sys.executable, "-m", "service.dev.supervisor", "-f", str(procfile), "--grace", "10"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_a_child_that_dies_brings_the_others_down(tmp_path: Path) -> None:
    procfile = write_procfile(tmp_path, {"a": sleeper("a"), "b": sleeper("b"), "c": f"python -c '{DIES}'"})
    proc = run_supervisor(procfile, tmp_path)
    try:
        stdout, stderr = proc.communicate(timeout=BOUND)
    finally:
        proc.kill()
    assert proc.returncode == 1, stderr.decode()
    assert "c exited unexpectedly with code 3" in stderr.decode()
    pids = [read_pid(tmp_path, n) for n in ("a", "b")]
    assert all(gone(pid) for pid in pids)
    # They were asked to stop (SIGTERM), in the reverse order of the Procfile.
    assert (tmp_path / "stopped").read_text().split() == ["b", "a"]


def test_sigterm_stops_every_child_in_the_stop_order_and_exits_0(tmp_path: Path) -> None:
    procfile = write_procfile(tmp_path, {n: sleeper(n) for n in ("a", "b", "c")})
    proc = run_supervisor(procfile, tmp_path)
    try:
        pids = [read_pid(tmp_path, n, proc) for n in ("a", "b", "c")]
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=BOUND)
    finally:
        proc.kill()
    assert proc.returncode == 0, stderr.decode()
    assert all(gone(pid) for pid in pids)
    assert (tmp_path / "stopped").read_text().split() == ["c", "b", "a"]


def test_a_child_ignoring_sigterm_is_killed_with_its_group(tmp_path: Path) -> None:
    # It starts a grandchild in its own process group, then ignores SIGTERM: after the
    # grace period both get SIGKILL.
    stubborn = ("import os,signal,subprocess,sys,time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                "g=subprocess.Popen([sys.executable,'-c','import time; time.sleep(300)']); "
                "print(os.getpid(), g.pid, flush=True); time.sleep(300)")
    lines = io.StringIO()
    said: list[str] = []
    sup = Supervisor([Process("stubborn", (sys.executable, "-c", stubborn))], output=lines, grace=0.5,
                     say=said.append)
    with sup:
        until = time.monotonic() + BOUND
        while "stubborn | " not in lines.getvalue():
            assert time.monotonic() < until, "the child printed nothing"
            sup.check()
            time.sleep(0.05)
    child, grandchild = (int(x) for x in lines.getvalue().split("|", 1)[1].split())
    assert gone(child) and gone(grandchild)
    assert said == ["stubborn did not stop within 0.5 s; killing it"]


def test_output_is_forwarded_line_by_line_with_the_name(tmp_path: Path) -> None:
    lines = io.StringIO()
    sup = Supervisor([Process("one", (sys.executable, "-c", "print('first'); print('second', end='')")),
                      Process("longer", (sys.executable, "-c", "import sys; sys.stderr.write('oops\\n')"))],
                     output=lines)
    with sup:
        for name in ("one", "longer"):
            assert sup.wait(name, timeout=BOUND) == 0
    out = lines.getvalue().splitlines()
    assert sorted(out) == sorted(["one    | first", "one    | second", "longer | oops"])


def test_wait_ready_fails_early_when_a_child_dies(tmp_path: Path) -> None:
    sup = Supervisor([Process("web", (sys.executable, "-c", "import sys; sys.exit(7)"))], output=io.StringIO())
    with sup, pytest.raises(StackError, match="web exited with code 7 during startup"):
        sup.wait_ready("http://127.0.0.1:9/readyz", timeout=BOUND)


def test_wait_ready_returns_once_the_url_answers_200(tmp_path: Path) -> None:
    (tmp_path / "readyz").write_text("ok")
    port_file = tmp_path / "port"
    serve = ("import http.server,functools,sys; "
             "h=functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1]); "
             "s=http.server.HTTPServer(('127.0.0.1',0),h); "
             "open(sys.argv[2],'w').write(str(s.server_port)); s.serve_forever()")
    sup = Supervisor([Process("web", (sys.executable, "-c", serve, str(tmp_path), str(port_file)))],
                     output=io.StringIO())
    with sup:
        until = time.monotonic() + BOUND
        while not port_file.exists() or not port_file.read_text():
            assert time.monotonic() < until
            sup.check()
            time.sleep(0.05)
        sup.wait_ready(f"http://127.0.0.1:{port_file.read_text()}/readyz", timeout=BOUND)


def test_an_unknown_process_type_is_refused(tmp_path: Path) -> None:
    procfile = write_procfile(tmp_path, {"a": "python -c pass"})
    done = subprocess.run([sys.executable, "-m", "service.dev.supervisor", "-f", str(procfile), "nope"],
                          cwd=ROOT, capture_output=True, timeout=BOUND)
    assert done.returncode == 2
    assert "not in" in done.stderr.decode() and "nope" in done.stderr.decode()
