"""A step the fast order path flips is pushed on the ready list on a connection the
process keeps for it (`Jobs._pushed`), not through the client's pool and retries; the
client takes over where that connection fails, and a server that forgot the script gets
it again."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import redis.commands.core

from service.core.kontor import Kontor


class ClientCalls:
    """Counts the pushes run through the client (redis-py's `Script.__call__` of `_PUSH`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, k: Kontor) -> None:
        self.count = 0
        real = redis.commands.core.Script.__call__

        def call(script: Any, *a: Any, **kw: Any) -> Any:
            self.count += script is k.jobs._push
            return real(script, *a, **kw)

        monkeypatch.setattr(redis.commands.core.Script, "__call__", call)


def listed(k: Kontor, item: str) -> int:
    return [x.decode() if isinstance(x, bytes) else x for x in k.rq.lrange(k.jobs.ready_keys[0], 0, -1)].count(item)


def test_order_flipped_steps_are_pushed_on_a_kept_connection(kontor: Kontor,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    gid = uuid.uuid4().hex[:12]
    calls = ClientCalls(monkeypatch, kontor)
    assert kontor.jobs.resolve(gid, 3) and kontor.jobs.resolve(gid, 4)
    assert listed(kontor, f"{gid} 3") == 1 and listed(kontor, f"{gid} 4") == 1
    assert calls.count == 0
    assert len(kontor.jobs._kept[1]) == 1  # one connection, kept and used again


def test_order_push_goes_through_the_client_when_the_kept_connection_failed(kontor: Kontor,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    gid = uuid.uuid4().hex[:12]
    kontor.jobs.resolve(gid, 1)
    (conn,) = kontor.jobs._kept[1]
    conn.send_command("CLIENT", "ID")
    kontor.rq.client_kill_filter(_id=conn.read_response())
    calls = ClientCalls(monkeypatch, kontor)
    assert kontor.jobs.resolve(gid, 2)
    assert listed(kontor, f"{gid} 2") == 1  # pushed once, by the client
    assert calls.count == 1 and kontor.jobs._kept[1] == []
    assert kontor.jobs.resolve(gid, 3) and listed(kontor, f"{gid} 3") == 1 and calls.count == 1


def test_order_push_loads_the_script_a_server_forgot(kontor: Kontor, monkeypatch: pytest.MonkeyPatch) -> None:
    gid = uuid.uuid4().hex[:12]
    kontor.jobs.resolve(gid, 1)
    kontor.rq.script_flush()
    calls = ClientCalls(monkeypatch, kontor)
    assert kontor.jobs.resolve(gid, 2) and listed(kontor, f"{gid} 2") == 1 and calls.count == 0
