"""Beyond one host (issue 24): every process refuses a store on a cluster without a job
queue of its own (one sentence, exit status 2, no traceback), and the drain jobs at once
are the setting `drainers`, not the pushing host's cores."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from service.config import Settings, settings_for
from service.core.kontor import Kontor
from service.jobs import queue
from service.jobs.queue import default_drainers

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parents[3]
#: A cluster nobody runs: the processes must refuse before they try to reach it.
CLUSTER = "redis-cluster://127.0.0.1:1,127.0.0.1:2"

#: Every long-running process of the Procfile, as it is started there.
ENTRY_POINTS = {
    "the worker": [sys.executable, "-m", "workers", "--count", "2"],
    "the sweeper": [sys.executable, "-m", "workers.sweeper"],
    "mail-in": [sys.executable, "-m", "workers.mailin", "--port", "0"],
    "the web process": [sys.executable, "-m", "gunicorn", "-c", "python:service.http.gunicorn_conf", "-w", "1",
                        "-b", "127.0.0.1:0", "service:create_app()"],
}


def _env(**settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KONTOR_")}
    env.update(settings)
    return env


@pytest.mark.parametrize("what", sorted(ENTRY_POINTS))
def test_a_cluster_store_without_a_queue_url_refuses_to_start(what: str) -> None:
    done = subprocess.run(ENTRY_POINTS[what], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env=_env(KONTOR_REDIS_URL=CLUSTER))
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert lines == [f"{what} refuses to start: the store is a cluster (KONTOR_REDIS_URL): set KONTOR_QUEUE_URL "
                     "to a Redis/Valkey server of its own for the job queue"], done.stderr


def test_other_settings_no_process_can_run_on_are_refused_the_same_way(capsys: pytest.CaptureFixture[str]) -> None:
    for env, said in [({"KONTOR_REDIS_URL": CLUSTER, "KONTOR_QUEUE_URL": CLUSTER},
                       "KONTOR_QUEUE_URL names a cluster: the job queue needs one Redis/Valkey server"),
                      ({"KONTOR_REDIS_URL": "redis-cluster://a:1,b", "KONTOR_QUEUE_URL": "redis://q:2"},
                       "KONTOR_REDIS_URL names a cluster's nodes as host:port,host:port, not 'a:1,b'"),
                      ({"KONTOR_REDIS_URL": "redis-cluster:///0", "KONTOR_QUEUE_URL": "redis://q:2"},
                       "KONTOR_REDIS_URL names a cluster's nodes as host:port,host:port, not ''"),
                      ({"KONTOR_DRAINERS": "many"}, "KONTOR_DRAINERS is 'many', not a whole number"),
                      ({"KONTOR_DRAINERS": "-1"}, "KONTOR_DRAINERS is -1: 0 (one host's cores) or the number of "
                                                  "drain jobs the installation's workers run at once")]:
        with pytest.raises(SystemExit) as stopped:
            settings_for("the sweeper", env)
        assert stopped.value.code == 2
        assert capsys.readouterr().err == f"the sweeper refuses to start: {said}\n"


def test_the_queue_is_its_own_server_or_the_single_stores() -> None:
    one = Settings(redis_url="redis://s:1/0")
    assert one.queue == "redis://s:1/0" and settings_for("x", {"KONTOR_REDIS_URL": "redis://s:1/0"}) == one
    both = settings_for("x", {"KONTOR_REDIS_URL": "redis-cluster://u:p@[::1]:7000,h:7001?socket_timeout=5",
                              "KONTOR_QUEUE_URL": "redis://q:2/0", "KONTOR_DRAINERS": "7"})
    assert (both.store_is_cluster, both.queue, both.drainers) == (True, "redis://q:2/0", 7)


def _drain_leases(k: Kontor, steps: int) -> tuple[int, int]:
    """Push `steps` ready steps with no worker running: (drain leases held, drain jobs queued)."""
    for i in range(steps):
        k.jobs.ready(f"g{i}", 1)
    return int(k.rq.zcard(k.jobs.ready_keys[1])), int(k.jobs.queues["resolve"].count)


@pytest.mark.parametrize("drainers", [1, 3])
def test_the_drain_jobs_at_once_are_the_setting(settings: Settings, drainers: int) -> None:
    """Whatever the cores of the pushing host, at most `drainers` drain jobs hold a lease
    over the whole installation (the leases are in the queue's Valkey); the sweeper's
    check (`reap`) keeps to it too."""
    k = Kontor(Settings(**{**settings.__dict__, "drainers": drainers}))
    assert k.jobs.drainers == drainers
    assert _drain_leases(k, 6) == (drainers, drainers)
    k.jobs.queues["resolve"].empty()
    k.rq.delete(k.jobs.ready_keys[1])  # the leases gone (their jobs died): the check starts `drainers` again
    for _ in range(drainers + 2):
        k.jobs.reap()
    assert k.rq.zcard(k.jobs.ready_keys[1]) == drainers and k.jobs.queues["resolve"].count == drainers


def test_drainers_0_is_this_hosts_cores_at_least_2(settings: Settings) -> None:
    k = Kontor(settings)
    assert settings.drainers == 0
    assert k.jobs.drainers == default_drainers() == max(2, os.cpu_count() or 1)
    assert _drain_leases(k, default_drainers() + 3) == (default_drainers(), default_drainers())
    assert not hasattr(queue, "DRAINERS")  # no module-wide figure left for a process to use instead
