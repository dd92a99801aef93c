"""A step flipped by an order is resolved in the web process that took the order (the
setting `resolve_in_web`, service/http/inweb.py): once, with no worker running and no
hold taken; a web killed before its commit leaves the step to the sweep's orphan check,
and a worker then resolves it once; a resolution that raises puts the step on the ready
list; `off` (and `auto` outside gevent) keeps the
ready list. Waits poll with a bound; nothing asserts a timing."""

# ruff: noqa: F811  (test_lease's fixtures, imported for the kill test, share names with locals)
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from engine.core import registry
from service.channels.contacts import set_contact
from service.config import Settings
from service.core.kontor import Kontor
from service.dev import streamload
from service.dev.supervisor import read_procfile
from service.http.app import create_app
from service.http.inweb import InWeb, install
from service.jobs import queue
from service.store import effects
from tests.service.channels import Hooks, hooks, notify_settings, payloads  # noqa: F401  (fixtures)
from tests.service.conftest import Player, domain_game, wait_until, work
from tests.service.http.test_gunicorn import _free_port, serving
from tests.service.jobs.test_kill import WEB, env_of
from tests.service.jobs.test_lease import Procs, assert_once, committed, k, lset, procs, sweeper, until  # noqa: F401

ROOT = Path(__file__).resolve().parents[3]


def web_client(settings: Settings, mode: str) -> tuple[Kontor, Any]:
    """A Kontor and the test client of a web app with `resolve_in_web` = `mode`."""
    s = dataclasses.replace(settings, resolve_in_web=mode)
    kontor = Kontor(s)
    return kontor, create_app(s, kontor).test_client()


def put_orders(client: Any, gid: str, players: dict[int, Player], k: Kontor) -> int:
    """Every asked seat's default order for the open step, over HTTP (the fast path); its id."""
    ph = k.store.phase(gid)
    pid, state = int(ph["id"]), k.store.state(gid)
    for seat in json.loads(ph["expected"]):
        token = players[seat].order_token(pid, registry.get("haendler").default_order(state, seat))
        r = client.put(f"/games/{gid}/phases/{pid}/orders/{seat}", json={"token": token})
        assert r.status_code == 202, r.json
    return pid


def on_the_list(k: Kontor) -> list[str]:
    return [m.decode() for m in k.rq.lrange(k.jobs.ready_keys[0], 0, -1)]


def held(k: Kontor) -> list[str]:
    return [m.decode() for m in k.rq.zrange(k.jobs.ready_keys[2], 0, -1)]


def test_a_step_an_order_completes_is_resolved_once_by_the_web_alone(settings: Settings) -> None:
    k, client = web_client(settings, "on")
    gid, players = domain_game(k, seats=3)
    pid = put_orders(client, gid, players, k)
    wait_until(lambda: committed(k, gid, pid))
    assert_once(k, gid, pid)
    wait_until(lambda: not held(k))  # let go once resolved
    assert not on_the_list(k) and not k.jobs.queues["resolve"].count  # no worker was asked for anything
    assert k.store.phase(gid)["status"] == "collecting"
    # the next step's deadline check was handed on, as a worker's commit hands it on
    assert k.jobs.queues["resolve"].scheduled_job_registry.count == 1
    # a second resolution of the step (a worker after a reap, say) is a no-op
    assert InWeb(k).run(gid, pid) == "noop"
    assert_once(k, gid, pid)
    # and the next step too, stored through `Kontor.submit` (the route's code) this time
    pid2 = pid + 1
    state = k.store.state(gid)
    for seat in json.loads(k.store.phase(gid)["expected"]):
        k.submit(gid, pid2, seat, registry.get("haendler").default_order(state, seat), via="test")
    wait_until(lambda: committed(k, gid, pid2))
    assert len(k.store.history(gid)) == 2
    assert not on_the_list(k) and not k.jobs.queues["resolve"].count


def test_the_notices_of_a_step_resolved_in_the_web_go_to_a_worker_through_the_ready_list(
        notify_settings: Settings, hooks: Hooks) -> None:
    """A commit the web made with a seat to tell: the notices go on the ready list as
    `<game> -<through>`, and a worker's drain job sends them, each once; the game's later
    steps are resolved in the web too, their notices again through the ready list."""
    k, client = web_client(notify_settings, "on")
    k.jobs.here = InWeb(k, spawn=lambda fn, *args: fn(*args))
    gid, players = domain_game(k, seats=3)
    hooks.secrets["/seat0"] = set_contact(k, gid, 0, {"webhook_url": hooks.url("/seat0")})["webhook_secret"]
    pid = put_orders(client, gid, players, k)
    assert committed(k, gid, pid) and not held(k)
    last = int(k.store.marks([gid])[gid].seq)
    assert on_the_list(k) == [f"{gid} -{last}"] and not hooks.at("/seat0")  # nothing sent from the web
    work(notify_settings)
    told = [(p["type"], p["data"]["phase"]) for p in payloads(hooks.at("/seat0"))]
    assert told.count(("step.resolved", pid)) == 1 and told.count(("step.opened", pid + 1)) == 1, told
    assert all(h.verified for h in hooks.at("/seat0"))
    assert not on_the_list(k) and not held(k)
    assert_once(k, gid, pid)
    # the game's next step is resolved here too, and a worker tells it
    pid2 = put_orders(client, gid, players, k)
    assert committed(k, gid, pid2) and on_the_list(k) == [f"{gid} -{int(k.store.marks([gid])[gid].seq)}"]
    work(notify_settings)
    told = [(p["type"], p["data"]["phase"]) for p in payloads(hooks.at("/seat0"))]
    assert told.count(("step.resolved", pid2)) == 1 and told.count(("step.resolved", pid)) == 1, told
    assert [h["phase"] for h in k.store.history(gid)] == [pid, pid2] and not on_the_list(k)
    resolved = [e["phase"] for _, e, _ in k.store.events(gid, 0, 1000) if e["type"] == "step_resolved"]
    assert resolved == [pid, pid2]  # each committed once
    # a game with nobody to tell keeps being resolved here
    other, others = domain_game(k, seats=3)
    for _ in range(2):
        step = put_orders(client, other, others, k)
        assert committed(k, other, step) and not on_the_list(k)


def test_a_raise_while_resolving_puts_the_step_on_the_ready_list(settings: Settings,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    k, client = web_client(settings, "on")
    k.jobs.here = InWeb(k, spawn=lambda fn, *args: fn(*args))  # at once, in the request
    gid, players = domain_game(k, seats=3)

    def broken(gid: str, phase: int) -> str:
        raise RuntimeError("a bug")
    monkeypatch.setattr(k, "resolve", broken)
    pid = put_orders(client, gid, players, k)  # the answer is not the resolution's business
    assert on_the_list(k) == [f"{gid} {pid}"] and not held(k)
    assert k.store.phase(gid)["status"] == "resolving"
    monkeypatch.undo()
    work(settings)  # a worker resolves it
    assert committed(k, gid, pid)
    assert_once(k, gid, pid)


def test_the_web_resolves_a_step_without_holding_it(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """No hold (`Jobs.holding`) and no other write on the queue's ready list and held
    steps while the web resolves: the step is in neither while it resolves, and is
    committed once."""
    k, client = web_client(settings, "on")
    k.jobs.here = InWeb(k, spawn=lambda fn, *args: fn(*args))
    gid, players = domain_game(k, seats=3)
    seen: list[tuple[list[str], list[str]]] = []
    real = k.resolve

    def hold(gid: str, phase: int) -> Any:
        raise AssertionError("the web took a hold")
    monkeypatch.setattr(k.jobs, "holding", hold)
    monkeypatch.setattr(k, "resolve", lambda g, p: seen.append((held(k), on_the_list(k))) or real(g, p))
    pid = put_orders(client, gid, players, k)
    assert seen == [([], [])]
    assert committed(k, gid, pid) and not held(k) and not on_the_list(k)
    assert_once(k, gid, pid)


def test_a_step_that_cannot_be_started_here_goes_on_the_ready_list(settings: Settings) -> None:
    k, client = web_client(settings, "on")

    def spawn(fn: Any, *args: Any) -> None:
        raise RuntimeError("can't start new thread")
    k.jobs.here = InWeb(k, spawn=spawn)
    gid, players = domain_game(k, seats=3)
    pid = put_orders(client, gid, players, k)
    assert on_the_list(k) == [f"{gid} {pid}"]
    work(settings)
    assert_once(k, gid, pid)


@pytest.mark.parametrize("mode", ["off", "auto"])
def test_off_and_auto_outside_gevent_keep_the_ready_list(settings: Settings, mode: str) -> None:
    k, client = web_client(settings, mode)
    assert install(k) is (mode == "auto")
    gid, players = domain_game(k, seats=3)
    pid = put_orders(client, gid, players, k)
    assert on_the_list(k) == [f"{gid} {pid}"] and k.store.phase(gid)["status"] == "resolving"
    assert k.jobs.here is None  # auto: decided at the first step, not under gevent
    work(settings)
    assert_once(k, gid, pid)


def test_resolve_in_web_takes_auto_on_or_off() -> None:
    for mode in ("auto", "on", "off"):
        Settings(resolve_in_web=mode).check()
    with pytest.raises(ValueError, match="KONTOR_RESOLVE_IN_WEB"):
        Settings(resolve_in_web="yes").check()


def test_a_web_killed_before_its_commit_leaves_the_step_to_a_worker(
        lset: Settings, k: Kontor, procs: Procs, sweeper: None) -> None:
    """The web (resolving here: `on`, in a thread of a werkzeug server) dies as it is to
    resolve the step (crash point `inweb_resolving`), holding nothing: the step is on no
    list and held by nobody; the sweep's orphan check puts it on the ready list once
    `resolve_lease` seconds have passed since its flip, and a worker resolves it once."""
    web = _web(procs, dataclasses.replace(lset, resolve_in_web="on", durability="none"))
    port = int(web.stdout.readline())  # type: ignore[union-attr]
    gid, players = domain_game(k, seats=3)
    ph = k.store.phase(gid)
    pid, state = int(ph["id"]), k.store.state(gid)
    seats = json.loads(ph["expected"])
    for seat in seats:
        token = players[seat].order_token(pid, registry.get("haendler").default_order(state, seat))
        try:
            r = requests.put(f"http://127.0.0.1:{port}/games/{gid}/phases/{pid}/orders/{seat}", json={"token": token},
                             timeout=10)
            assert r.status_code == 202, r.text
        except requests.ConnectionError:  # the last one's answer may be lost with the web
            assert seat == seats[-1], (procs.tmp / "web.log").read_text()
    assert web.wait(timeout=20) == -9, (procs.tmp / "web.log").read_text()  # it reached the crash point
    assert k.store.phase(gid)["status"] == "resolving" and not committed(k, gid, pid)
    assert not held(k)  # the web held nothing
    # on no list (or, once the orphan check ran, on the ready list)
    assert on_the_list(k) in ([], [f"{gid} {pid}"]), on_the_list(k)
    procs.worker("worker")
    until(lambda: committed(k, gid, pid), 30, "the step was not resolved by a worker", procs.tmp)
    assert_once(k, gid, pid)
    until(lambda: not held(k) and not on_the_list(k), 10, "the step still held or listed", procs.tmp)


def _web(procs: Procs, settings: Settings) -> subprocess.Popen[bytes]:
    """The web process of `WEB` with `settings`, dying at `inweb_resolving`; its port is its first line."""
    proc = subprocess.Popen([sys.executable, "-c", WEB], env=env_of(settings, "inweb_resolving"),
                            stdout=subprocess.PIPE, stderr=(procs.tmp / "web.log").open("ab"))
    procs.procs.append(proc)
    return proc


@pytest.fixture
def gunicorn_web(valkey: Any, tmp_path: Path) -> Iterator[tuple[int, Settings]]:
    """The Procfile's web (gunicorn, a gevent worker) with the default `resolve_in_web`, alone."""
    port = _free_port()
    prefix = f"inweb{uuid.uuid4().hex[:6]}"
    env = {**os.environ, "KONTOR_REDIS_URL": valkey.connection_url, "KONTOR_KEY_PREFIX": prefix, "PORT": str(port),
           "WEB_HOST": "127.0.0.1", "WEB_CONCURRENCY": "1", "KONTOR_DURABILITY": "none",
           "GUNICORN_CMD_ARGS": "--no-control-socket --log-level warning"}
    env.pop("KONTOR_RESOLVE_IN_WEB", None)
    argv = read_procfile(env)["web"].argv
    log = tmp_path / "log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", *argv], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        with serving(proc, log, lambda: streamload.request("127.0.0.1", port, "GET", "/healthz")[0], timeout=60):
            yield port, Settings(redis_url=valkey.connection_url, key_prefix=prefix, durability="none")


def test_the_procfile_web_resolves_the_steps_its_orders_complete_with_no_worker(
        gunicorn_web: tuple[int, Settings]) -> None:
    port, settings = gunicorn_web
    k = Kontor(settings)
    gid, players = domain_game(k, seats=2)
    for _ in range(3):
        ph = k.store.phase(gid)
        pid, state = int(ph["id"]), k.store.state(gid)
        for seat in json.loads(ph["expected"]):
            token = players[seat].order_token(pid, registry.get("haendler").default_order(state, seat))
            status, answer = streamload.request("127.0.0.1", port, "PUT", f"/games/{gid}/phases/{pid}/orders/{seat}",
                                                {"token": token})
            assert status == 202, answer[:300]
        wait_until(lambda pid=pid: committed(k, gid, pid))  # no worker runs
    assert len(k.store.history(gid)) == 3
    assert not on_the_list(k) and not k.jobs.queues["resolve"].count


def test_a_stopping_worker_waits_for_the_steps_it_is_resolving(settings: Settings,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """`inweb.finish` (gunicorn's `worker_exit`) waits until the resolutions started here
    have ended, and says when some are still running at its bound."""
    import threading

    from service.http import inweb

    k, client = web_client(settings, "on")
    k.jobs.here = InWeb(k)  # a thread per resolution (no gevent here)
    gid, players = domain_game(k, seats=3)
    let_go = threading.Event()
    real = k.resolve
    monkeypatch.setattr(k, "resolve", lambda g, p: let_go.wait(10) and real(g, p))
    pid = put_orders(client, gid, players, k)
    assert inweb.finish(0.2) is False  # still resolving
    let_go.set()
    assert inweb.finish(10) is True
    assert committed(k, gid, pid)
    assert_once(k, gid, pid)
    assert inweb._running == 0


def test_the_flip_answers_what_resolving_the_step_reads(settings: Settings) -> None:
    """The order that flips a step the web resolves has order.lua answer the meta, the
    step and its orders (`Store.prime`), equal to what resolve_read.lua reads, with the
    state the web validated the order against; the resolution takes it once."""
    k, client = web_client(settings, "on")
    started: list[tuple[Any, ...]] = []
    k.jobs.here = InWeb(k, spawn=lambda fn, *args: started.append(args))  # not run yet
    gid, players = domain_game(k, seats=3)
    pid = put_orders(client, gid, players, k)
    assert k.store.phase(gid)["status"] == "resolving" and len(started) == 1
    primed = k.store._primed[(gid, pid)]
    k.store._primed.clear()
    assert primed == k.store.resolve_read(gid, pid)  # read from the store this time
    k.store._primed[(gid, pid)] = primed
    assert InWeb(k).run(gid, pid) == "committed"
    assert (gid, pid) not in k.store._primed
    assert_once(k, gid, pid)
    # the route's code (`Kontor.submit`, submit.lua) answers it too
    pid = pid + 1
    state = k.store.state(gid)
    for seat in json.loads(k.store.phase(gid)["expected"]):
        k.submit(gid, pid, seat, registry.get("haendler").default_order(state, seat), via="test")
    assert started[-1][-2:] == (gid, pid) and k.store.phase(gid)["status"] == "resolving"
    primed = k.store._primed.pop((gid, pid))
    assert primed == k.store.resolve_read(gid, pid)
    k.store._primed[(gid, pid)] = primed
    assert InWeb(k).run(gid, pid) == "committed" and not k.store._primed
    assert committed(k, gid, pid) and [h["phase"] for h in k.store.history(gid)] == [pid - 1, pid]
    # a process that resolves nothing here (`resolve_in_web` off) primes nothing
    k.jobs.here = None
    pid2 = put_orders(client, gid, players, k)
    assert not k.store._primed and on_the_list(k) == [f"{gid} {pid2}"]


def test_the_web_resolves_a_step_it_flipped_in_two_round_trips(settings: Settings,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """What the web sends the store to resolve a step its order flipped, the order's
    answer given (a running game with nobody to tell): the commit (commit.lua) and the
    deadline check handed on (`_HAND_ON`), two scripts; no read, no hold, no release."""
    import redis.connection

    k, client = web_client(settings, "on")
    started: list[tuple[Any, ...]] = []
    k.jobs.here = InWeb(k, spawn=lambda fn, *args: started.append(args))
    gid, players = domain_game(k, seats=3)
    pid = put_orders(client, gid, players, k)
    sent: list[bytes] = []
    real = redis.connection.AbstractConnection.send_packed_command

    def counted(self: Any, command: Any, check_health: bool = True) -> None:
        packed = command if isinstance(command, (bytes, str)) else b"".join(
            c if isinstance(c, bytes) else bytes(c) for c in command)
        sent.append(packed if isinstance(packed, bytes) else packed.encode())
        real(self, command, check_health)
    # the two scripts known to the store already (a store that has not seen one loads it once)
    k.r.script_load(effects.LUA["commit"])
    k.rq.script_load(queue._HAND_ON)
    monkeypatch.setattr(redis.connection.AbstractConnection, "send_packed_command", counted)
    assert InWeb(k).run(gid, pid) == "committed"
    monkeypatch.undo()
    # (a connection's own set-up, once per connection it makes: CLIENT SETINFO, HELLO)
    commands = [c.split(b"\r\n")[2] for c in sent]
    assert [c for c in commands if c not in (b"CLIENT", b"HELLO")] == [b"EVALSHA", b"EVALSHA"], commands
    assert_once(k, gid, pid)
