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
    # held until its notices are made; the second commit's item, whose job found the
    # notices lock taken, is made and let go of by the drain's next take or as it ends
    second = f"{gid} -{int(k.store.marks([gid])[gid].seq)} {lease}"
    assert f"{gid} -{first} {lease}" in held(k) and set(held(k)) <= {f"{gid} -{first} {lease}", second}
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


def test_a_drain_lets_go_of_the_commits_whose_notices_it_made_with_its_next_take(
        notify_settings: Settings, hooks: Hooks, monkeypatch: pytest.MonkeyPatch) -> None:
    """A commit's item is let go of in the drain's next take, in the take's own script
    call (the ones left as the job ends, in one call), never by a release of its own."""
    k, client = web_client(notify_settings, "on")
    k.jobs.here = InWeb(k, spawn=lambda fn, *args: fn(*args))
    games = [domain_game(k, seats=3) for _ in range(2)]
    for gid, _ in games:
        set_contact(k, gid, 0, {"webhook_url": hooks.url(f"/{gid}")})
    lease, dropped_by_take, released = "drain-made", [], []
    real_take, real_release_held = type(k.jobs).take, type(k.jobs).release_held

    def take(self: Any, lease: str, linger: float | None = None, done: Any = None, also: Any = ()) -> Any:
        if also:  # (let go of in this very call: still held as it starts)
            assert set(also) <= set(held(k)), (also, held(k))
        dropped_by_take.extend(also)
        return real_take(self, lease, linger, done, also)

    def release(self: Any, *args: Any) -> None:
        raise AssertionError(f"a hold let go of by a call of its own: {args}")

    def release_held(self: Any, members: Any) -> None:
        released.append(list(members))
        real_release_held(self, members)

    monkeypatch.setattr(type(k.jobs), "take", take)
    monkeypatch.setattr(type(k.jobs), "release", release)
    monkeypatch.setattr(type(k.jobs), "release_held", release_held)
    tasks.configure(replace(notify_settings, drain_linger=1.5))
    items = []

    def commit(gid: str, players: Any) -> None:
        put_orders(client, gid, players, k)  # resolved in the web: its notices on the ready list
        items.append(f"{gid} -{int(k.store.marks([gid])[gid].seq)} {lease}")

    commit(*games[0])
    ended: list[int] = []
    job = threading.Thread(target=lambda: ended.append(tasks.drain(lease)), daemon=True)
    job.start()
    first = games[0][0]
    wait_until(lambda: k.store.notified_through(first) >= int(k.store.marks([first])[first].seq))
    assert held(k) == [items[0]]  # its notices made: still held, the drain waiting for its next item
    commit(*games[1])  # the drain takes it, then takes again: the first is let go of then
    job.join(30)
    assert ended == [2]
    assert dropped_by_take == [items[0]] and released == [[items[1]]]  # the second, as the job ended
    assert not held(k) and not on_the_list(k)
    for gid, _ in games:
        sent = k.store.deliveries(gid, 0, 100)
        assert sent and all(d["status"] == "sent" and d["attempts"] == 1 for d in sent)
        assert sorted(h.headers["webhook-id"] for h in hooks.at(f"/{gid}")) == sorted(d["id"] for d in sent)


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
