"""The store's scripts, and the job queue's hot ones, are called on connections kept for
them (`service.store.base.Lean` over `Direct`), without the client's pool and retry
machinery: a third of a script call's client-side CPU. What a call answers and does must
be what the client's own call answers and does; a connection that fails falls back to
the client's call (with its retries), as the client's retry would send the script again."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from service.core.kontor import Kontor
from service.store.base import Direct, Lean

pytestmark = pytest.mark.cluster

#: Counts its calls in the key, answers what it is told to (nil, a number, a list, an error).
SCRIPT = """
redis.call('INCR', KEYS[1])
if ARGV[1] == 'nil' then return nil end
if ARGV[1] == 'error' then return redis.error_reply('refused: ' .. ARGV[2]) end
if ARGV[1] == 'list' then return {ARGV[2], redis.call('GET', KEYS[1])} end
return tonumber(ARGV[2])
"""


def _lean(kontor: Kontor) -> tuple[Lean, Any, str]:
    r = kontor.store.r
    key = kontor.store.key("leantest", "calls")
    r.delete(key)
    return Lean(r.register_script(SCRIPT), Direct(r)), r, key


def test_a_lean_call_answers_as_the_clients_call_and_runs_once(kontor: Kontor) -> None:
    lean, r, key = _lean(kontor)
    raw = r.register_script(SCRIPT)
    for args in (["nil", ""], ["number", "7"], ["list", "x"]):
        before = int(r.get(key) or 0)
        ours = lean(keys=[key], args=args)
        assert int(r.get(key)) == before + 1, "run once"
        theirs = raw(keys=[key], args=args)
        if args[0] == "list":  # (the count it read differs by the one call between)
            assert ours[0] == theirs[0] == "x" and int(theirs[1]) == int(ours[1]) + 1
        else:
            assert ours == theirs
    assert lean(keys=[key], args=["nil", ""]) is None  # a nil answer is an answer, not a failure: not run again
    assert int(r.get(key)) == 7


def test_a_lean_calls_error_answer_raises_as_the_clients_and_keeps_the_connection(kontor: Kontor) -> None:
    lean, r, key = _lean(kontor)
    with pytest.raises(redis.exceptions.ResponseError, match="refused: no"):
        lean(keys=[key], args=["error", "no"])
    idle = [c for conns in lean.direct.idle.values() for c in conns]
    assert len(idle) == 1 and idle[0]._sock is not None, "an error answer leaves the connection fine"
    assert lean(keys=[key], args=["number", "3"]) == 3
    assert [c for conns in lean.direct.idle.values() for c in conns] == idle, "and it is used again"
    assert int(r.get(key)) == 2


def test_a_lean_call_whose_connection_failed_is_the_clients_call(kontor: Kontor,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The kept connection fails as the script is sent: the client's call sends it (once
    more, as its retry would); the broken connection is dropped, not kept."""
    lean, r, key = _lean(kontor)
    assert lean(keys=[key], args=["number", "1"]) == 1
    (conn,) = [c for conns in lean.direct.idle.values() for c in conns]

    def broken(*args: Any, **kwargs: Any) -> None:
        raise redis.exceptions.ConnectionError("the store went away")

    monkeypatch.setattr(conn, "send_command", broken)
    assert lean(keys=[key], args=["number", "2"]) == 2
    assert int(r.get(key)) == 2
    assert conn not in [c for conns in lean.direct.idle.values() for c in conns]


def test_a_lean_call_after_the_store_forgot_its_script_loads_it_again(kontor: Kontor) -> None:
    lean, r, key = _lean(kontor)
    assert lean(keys=[key], args=["number", "5"]) == 5
    r.script_flush()
    assert lean(keys=[key], args=["number", "6"]) == 6
    assert int(r.get(key)) == 2


def test_a_lean_script_in_a_pipeline_is_the_registered_script(kontor: Kontor, store_kind: str) -> None:
    if store_kind == "cluster":
        pytest.skip("a cluster client's pipelines take no scripts (redis-py refuses EVALSHA there)")
    lean, r, key = _lean(kontor)
    r.script_load(SCRIPT)
    pipe = r.pipeline(transaction=False)
    lean(keys=[key], args=["number", "4"], client=pipe)
    assert pipe.execute() == [4]
    assert not lean.direct.idle, "sent with the pipeline, not on a connection of its own"


def test_the_stores_scripts_and_the_queues_hot_scripts_are_lean(kontor: Kontor) -> None:
    assert all(isinstance(s, Lean) for s in kontor.store.scripts.values())
    for name in ("_take", "_reap", "_orphaned", "_hand_on"):
        assert isinstance(getattr(kontor.jobs, name), Lean), name
