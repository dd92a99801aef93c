"""A drain job makes and sends a commit's notices beside it (`service.jobs.tasks.Pipeline`):
it takes and resolves the next step while a commit's webhooks wait for their receiver, a
game's notices still go out in order, each delivery once, and the job ends only after
its sends; a worker killed in those sends leaves each delivery to be sent once after the
sweep. Waits poll with a bound; nothing asserts a timing."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from service.channels.contacts import set_contact
from service.config import Settings
from service.http.inweb import InWeb
from service.jobs import tasks
from service.jobs.sweep import sweep
from tests.service.channels import Hooks, payloads
from tests.service.conftest import domain_game, wait_until, work
from tests.service.jobs.test_inweb import held, on_the_list, put_orders, web_client
from tests.service.jobs.test_kill import env_of, killed
from tests.service.jobs.test_lease import committed


class Gate:
    """A webhook receiver on loopback that keeps every request and answers none (204)
    until `open` is set."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.received: list[tuple[str, dict[str, Any]]] = []  # (webhook-id, payload)
        self.lock = threading.Lock()
        gate = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with gate.lock:
                    gate.received.append((self.headers["webhook-id"], json.loads(body)))
                gate.open.wait(60)
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_port}{path}"

    def told(self) -> list[tuple[str, int]]:
        with self.lock:
            return [(p["type"], p["data"]["phase"]) for _, p in self.received]


@pytest.fixture
def gate() -> Iterator[Gate]:
    g = Gate()
    yield g
    g.open.set()
    g.server.shutdown()
    g.server.server_close()


def test_a_drain_resolves_the_next_step_while_a_commits_webhooks_wait_and_ends_after_them(
        notify_settings: Settings, gate: Gate) -> None:
    k, client = web_client(notify_settings, "on")
    k.jobs.here = InWeb(k, spawn=lambda fn, *args: fn(*args))
    gid, players = domain_game(k, seats=3)
    set_contact(k, gid, 0, {"webhook_url": gate.url("/seat0")})
    pid = put_orders(client, gid, players, k)  # resolved in the web: its notices on the ready list
    first = int(k.store.marks([gid])[gid].seq)
    assert on_the_list(k) == [f"{gid} -{first}"]
    # the drain waits a while for the next step; a webhook's answer is waited for longer than the test runs
    tasks.configure(replace(notify_settings, drain_linger=1.5, webhook_timeout=30.0))
    lease, ended = "drain-pipeline", []
    job = threading.Thread(target=lambda: ended.append(tasks.drain(lease)), daemon=True)
    job.start()
    wait_until(lambda: len(gate.received) == 1)  # the commit's first webhook, unanswered
    pid2 = put_orders(client, gid, players, k)  # the game's next step goes to the ready list
    wait_until(lambda: committed(k, gid, pid2))  # the drain resolved it meanwhile
    # ... and told nothing of it yet: the game's notices lock is the first commit's
    assert gate.told() == [("step.resolved", pid)]
    assert k.store.notified_through(gid) < first
    # the list is empty: the drain stopped taking (its lease dropped) and waits for its sends
    wait_until(lambda: k.rq.zscore(k.jobs.ready_keys[1], lease) is None)
    assert job.is_alive() and not ended
    assert held(k) == [f"{gid} -{first} {lease}"]  # (held until its notices are made)
    gate.open.set()
    job.join(30)
    assert ended == [2]
    # each commit's notices in order, each once, the second's after the first's
    assert gate.told() == [("step.resolved", pid), ("step.opened", pid + 1),
                           ("step.resolved", pid2), ("step.opened", pid2 + 1)]
    ids = [i for i, _ in gate.received]
    deliveries = k.store.deliveries(gid, 0, 100)
    assert sorted(ids) == sorted(d["id"] for d in deliveries) and len(set(ids)) == 4
    assert all(d["status"] == "sent" and d["attempts"] == 1 for d in deliveries)
    assert k.store.notified_through(gid) == int(k.store.marks([gid])[gid].seq)
    assert not on_the_list(k) and not held(k)


def test_a_worker_killed_in_a_drains_sends_leaves_each_delivery_sent_once_after_the_sweep(
        notify_settings: Settings, hooks: Hooks, tmp_path: Path) -> None:
    k, client = web_client(notify_settings, "on")
    k.jobs.here = InWeb(k, spawn=lambda fn, *args: fn(*args))
    gid, players = domain_game(k, seats=3)
    for seat in (0, 2):
        hooks.secrets[f"/seat{seat}"] = set_contact(
            k, gid, seat, {"webhook_url": hooks.url(f"/seat{seat}")})["webhook_secret"]
    pid = put_orders(client, gid, players, k)
    seq = int(k.store.marks([gid])[gid].seq)
    assert on_the_list(k) == [f"{gid} -{seq}"]
    log = tmp_path / "worker.log"
    with log.open("wb") as out:  # its drain job dies once the commit's webhooks went out
        proc = subprocess.Popen([sys.executable, "-m", "workers"], env=env_of(notify_settings, "after_send"),
                                stdout=out, stderr=subprocess.STDOUT)
        killed(proc, log)
    assert len(hooks.received) == 4 and k.store.notified_through(gid) < seq
    end = time.monotonic() + 120
    while k.store.notified_through(gid) < seq or any(
            d["status"] != "sent" for seat in (0, 2) for d in k.store.deliveries(gid, seat, 100)):
        assert time.monotonic() < end, (k.store.notified_through(gid), seq)
        k.jobs.reap()
        sweep(k)
        work(notify_settings)
        time.sleep(0.2)
    for seat in (0, 2):
        got = hooks.at(f"/seat{seat}")
        assert all(h.verified for h in got)
        told = [(p["type"], p["data"]["phase"]) for p in payloads(got)]
        assert told == [("step.resolved", pid), ("step.opened", pid + 1)], (seat, told)
        assert len({h.headers["webhook-id"] for h in got}) == 2
