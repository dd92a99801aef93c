"""Side effects that cannot be lost: a process killed with SIGKILL at each point between
a commit and its last enqueue (a worker resolving a step, and the web process starting
a game), or a notify job killed half-way, leaves nothing undone for good. After the
sweep and a fresh worker, every notice is sent exactly once per seat and channel, and
every game finishes.

The processes die at the crash points `service.jobs.queue.crash_point` names, chosen by
`KONTOR_CRASH_AT` in their environment. The games are all-bot Fantasy games of one
round (a dozen steps), so a commit always opens a step with a deadline and bot seats.
Waits poll with a bound; nothing asserts a timing.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import requests
from rq import Queue
from rq.serializers import JSONSerializer

import service.jobs.tasks
from service.channels.contacts import set_contact
from service.config import Settings
from service.core.kontor import Kontor
from service.jobs.queue import NOTIFY, RESOLVE, bot_id, deadline_id
from service.jobs.sweep import sweep
from tests.service.channels import Hooks, Mailbox, payloads, work_all
from tests.service.conftest import Player

#: Seat -> its channels: seat 0 mail and webhook, seat 1 mail only, seat 2 webhook only.
CHANNELS = {0: ("email", "webhook"), 1: ("email",), 2: ("webhook",)}

#: A web process like the Procfile's, on a free port it prints first.
WEB = textwrap.dedent("""
    from werkzeug.serving import make_server
    from service import create_app
    server = make_server("127.0.0.1", 0, create_app())
    print(server.server_port, flush=True)
    server.serve_forever()
""")


def env_of(settings: Settings, crash_at: str) -> dict[str, str]:
    """The environment of a service process with these settings that dies at `crash_at`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KONTOR_")}
    for f in dataclasses.fields(settings):
        value = getattr(settings, f.name)
        env[f"KONTOR_{f.name.upper()}"] = ("1" if value else "0") if isinstance(value, bool) else str(value)
    env["KONTOR_CRASH_AT"] = crash_at
    return env


def lobby(k: Kontor, hooks: Hooks) -> tuple[str, Player]:
    """An all-bot Fantasy game of one round in the lobby, every seat with its channels."""
    host = Player.new()
    gid = k.create_game("fantasy", 3, {"rounds": 1}, None, 11, host.key.public)["id"]
    host.game = gid
    for seat, channels in CHANNELS.items():
        k.update_seat(gid, seat, None, None, "random")
        body: dict[str, Any] = {"delivery": "every"}  # the start and the whole run at the end
        if "email" in channels:
            body["email"] = address(seat)
        if "webhook" in channels:
            body["webhook_url"] = hooks.url(f"/seat{seat}")
        out = set_contact(k, gid, seat, body)
        if "webhook" in channels:
            hooks.secrets[f"/seat{seat}"] = out["webhook_secret"]
    return gid, host


def address(seat: int) -> str:
    return f"seat{seat}@example.org"


def killed(proc: subprocess.Popen[bytes], log: Path) -> None:
    """Wait until `proc` killed itself at its crash point."""
    try:
        code = proc.wait(timeout=180)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(f"never reached its crash point:\n{log.read_text()}") from None
    assert code == -signal.SIGKILL, log.read_text()


def assert_planned(k: Kontor, gid: str) -> None:
    """Every effect of the last commit is planned again (or was never lost): the game is
    in the running set, its notices are made or a notify job for them waits, and the
    open step has its deadline job and a job for each bot seat it asks."""
    assert gid in k.store.active()
    meta = k.store.meta(gid)
    seq = int(meta["event_seq"])
    waiting = Queue(NOTIFY, connection=k.rq, serializer=JSONSerializer).get_job_ids()
    assert int(meta.get("notified_through") or 0) == seq or any(j.startswith(f"notify-{gid}-{seq}") for j in waiting)
    ph = k.store.phase(gid)
    assert ph["status"] == "collecting"
    pid = int(ph["id"])
    assert not k.jobs.missing([deadline_id(gid, pid, float(ph["deadline"]))])
    bots = Queue(RESOLVE, connection=k.rq, serializer=JSONSerializer).get_job_ids()
    for seat in json.loads(ph["expected"]):
        assert any(j.startswith(bot_id(gid, pid, seat)) for j in bots), (seat, bots)


def recover(k: Kontor, settings: Settings, gid: str, timeout: float = 180) -> None:
    """Sweep and run a fresh worker until the game is over and every notice is made and
    settled."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        sweep(k)
        work_all(settings)
        if settled(k, gid):
            return
        time.sleep(0.2)
    raise AssertionError(f"game {gid} not finished and told within {timeout} s: {k.store.meta(gid)}")


def settled(k: Kontor, gid: str) -> bool:
    meta = k.store.meta(gid)
    if meta["status"] != "finished" or int(meta.get("notified_through") or 0) < int(meta["event_seq"]):
        return False
    return all(d["status"] == "sent" for seat in CHANNELS for d in k.store.deliveries(gid, seat, 1000))


def assert_told_once(k: Kontor, gid: str, mailbox: Mailbox, hooks: Hooks) -> None:
    """Every seat got its mails once (`every` mode: the start, then the run in one mail at
    the end) and one webhook per notice, on each of its channels, and nothing else."""
    steps = len(k.store.history(gid))
    assert k.store.meta(gid)["status"] == "finished" and steps > 3
    expected = {("step.opened", 1)}
    for closing in range(1, steps + 1):
        expected |= {("step.resolved", closing),
                     ("game.finished", closing) if closing == steps else ("step.opened", closing + 1)}
    for seat, channels in CHANNELS.items():
        mails = mailbox.to(address(seat))
        if "email" in channels:
            # `every` mode, a seat a bot plays: the start at once, then the whole run of
            # steps in one mail at the end, each step told once.
            assert len(mails) == 2, (seat, len(mails), steps)
            assert len({m.message["Message-ID"] for m in mails}) == len(mails)
            last = k.store.delivery(gid, str(mails[-1].message["X-Kontor-Delivery"]))["payload"]
            held = [(n["type"], n["phase"]) for n in last if n.get("held")]
            assert held and len(held) == len(set(held)) and ("game.finished", steps) in [
                (n["type"], n["phase"]) for n in last]
        else:
            assert mails == []
        got = hooks.at(f"/seat{seat}")
        if "webhook" in channels:
            assert all(h.verified for h in got)
            told = [(p["type"], p["data"]["phase"]) for p in payloads(got)]
            assert sorted(told) == sorted(expected), (seat, sorted(told))
        else:
            assert got == []


def assert_quiet(k: Kontor, gid: str) -> None:
    """Once everything is made, a sweep finds nothing to do and lets the game go."""
    stats = sweep(k)
    assert (stats["reconciled"], stats["notices"], stats["replanned"]) == (0, 0, 0), stats
    assert gid not in k.store.active()


@pytest.mark.parametrize("crash_at", ["after_commit", "after_activate", "after_notify", "after_deadline",
                                      "after_delivery", "after_send"])
def test_a_worker_killed_after_a_commit_loses_no_effect(crash_at: str, nkontor: Kontor, notify_settings: Settings,
                                                         mailbox: Mailbox, hooks: Hooks, tmp_path: Path) -> None:
    k = nkontor
    gid, _ = lobby(k, hooks)
    k.start(gid)
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "workers"], env=env_of(notify_settings, crash_at),
                                stdout=out, stderr=subprocess.STDOUT)
        killed(proc, log)
    if crash_at == "after_delivery":  # killed in a notify job, between a delivery and its send job
        assert any(d["status"] == "queued" for seat in CHANNELS for d in k.store.deliveries(gid, seat, 1000))
    elif crash_at == "after_send":  # killed making notices, once its webhooks went out, before the mark moved
        assert any(d["status"] == "sent" for seat in CHANNELS for d in k.store.deliveries(gid, seat, 1000))
        assert k.store.notified_through(gid) < int(k.store.meta(gid)["event_seq"])
    else:  # killed in the first resolution's commit: the step is committed, what follows is not
        assert len(k.store.history(gid)) == 1
        sweep(k)
        assert_planned(k, gid)

    recover(k, notify_settings, gid)
    assert_told_once(k, gid, mailbox, hooks)
    assert_quiet(k, gid)


@pytest.mark.parametrize("crash_at", ["after_commit", "after_activate", "after_notify", "after_deadline"])
def test_a_web_process_killed_starting_a_game_loses_no_effect(crash_at: str, nkontor: Kontor,
                                                               notify_settings: Settings, mailbox: Mailbox,
                                                               hooks: Hooks, tmp_path: Path) -> None:
    k = nkontor
    gid, host = lobby(k, hooks)
    log = tmp_path / "web.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-c", WEB], env=env_of(notify_settings, crash_at),
                                stdout=subprocess.PIPE, stderr=out)
        try:
            assert proc.stdout is not None
            port = int(proc.stdout.readline() or 0)
            assert port, log.read_text()
            with pytest.raises(requests.ConnectionError):
                requests.patch(f"http://127.0.0.1:{port}/games/{gid}", json={"status": "running"},
                               headers={**host.bearer(), "Idempotency-Key": uuid.uuid4().hex}, timeout=60)
        finally:
            killed(proc, log)
    assert k.store.meta(gid)["status"] == "running"
    if crash_at == "after_commit":
        assert gid not in k.store.active()  # the running set lives in another hash slot than the commit
        assert sweep(k)["reconciled"] == 1
    else:
        sweep(k)
    assert_planned(k, gid)

    recover(k, notify_settings, gid)
    assert_told_once(k, gid, mailbox, hooks)
    assert_quiet(k, gid)


def test_a_notify_job_run_twice_sends_nothing_twice(nkontor: Kontor, notify_settings: Settings, mailbox: Mailbox,
                                                   hooks: Hooks) -> None:
    k = nkontor
    gid, _ = lobby(k, hooks)
    k.start(gid)
    recover(k, notify_settings, gid)
    seq = int(k.store.meta(gid)["event_seq"])
    before = {seat: len(k.store.deliveries(gid, seat, 1000)) for seat in CHANNELS}

    # The mark lost (as if every notify job had died just before moving it), then the
    # job run twice over the whole game.
    k.r.hset(k.store.key(gid, "meta"), "notified_through", "0")
    assert service.jobs.tasks.notify(gid, seq) == sum(before.values())  # the same deliveries, found again
    assert service.jobs.tasks.notify(gid, seq) == 0  # the mark moved: nothing left to do
    assert k.store.notified_through(gid) == seq
    work_all(notify_settings)
    assert {seat: len(k.store.deliveries(gid, seat, 1000)) for seat in CHANNELS} == before
    assert_told_once(k, gid, mailbox, hooks)


def test_digest_notices_are_kept_once(nkontor: Kontor, hooks: Hooks) -> None:
    k = nkontor
    gid, _ = lobby(k, hooks)
    set_contact(k, gid, 1, {"delivery": "digest"})
    k.start(gid)
    seq = int(k.store.meta(gid)["event_seq"])
    service.jobs.tasks.notify(gid, seq)
    k.r.hset(k.store.key(gid, "meta"), "notified_through", "0")
    service.jobs.tasks.notify(gid, seq)
    kept = k.store.take_digest(gid, 1)
    # The start tells seat 1 of a step that asks it something (urgent: mailed at once)
    # or not (kept for the digest): either way once.
    mailed = [d for d in k.store.deliveries(gid, 1, 100) if d["channel"] == "email"]
    assert len(kept) + len(mailed) == 1, (kept, mailed)


def test_a_game_outside_the_running_set_is_put_back(kontor: Kontor) -> None:
    host = Player.new()
    gid = kontor.create_game("fantasy", 3, {"rounds": 1}, None, 11, host.key.public)["id"]
    for seat in CHANNELS:
        kontor.update_seat(gid, seat, None, None, "random")
    kontor.start(gid)
    kontor.store.activate(gid, False)
    assert sweep(kontor)["reconciled"] == 1
    assert gid in kontor.store.active()
    assert sweep(kontor)["reconciled"] == 0


def test_a_game_made_before_the_mark_is_not_told_its_old_events_again(nkontor: Kontor, notify_settings: Settings,
                                                                      mailbox: Mailbox, hooks: Hooks) -> None:
    """A game stored before the notified mark existed has no mark: its earlier events
    were told then. The sweep finds no gap in it, and its next step's notices (commit or
    message) start after its last event, not at event 1."""
    k = nkontor
    gid, _ = lobby(k, hooks)
    k.start(gid)
    recover(k, notify_settings, gid)
    k.r.hdel(k.store.key(gid, "meta"), "notified_through")
    seq = int(k.store.meta(gid)["event_seq"])
    before = {seat: len(k.store.deliveries(gid, seat, 1000)) for seat in CHANNELS}
    assert k.store.marks([gid])[gid].mark == seq
    sweep(k)
    work_all(notify_settings)
    assert {seat: len(k.store.deliveries(gid, seat, 1000)) for seat in CHANNELS} == before
