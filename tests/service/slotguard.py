"""The slot guard: every transaction (MULTI) and script the store runs touches keys of one
cluster slot, on the single-node suite too (issue 24). A Valkey Cluster refuses a script
whose keys span slots (CROSSSLOT), and `RedisCluster.pipeline()` without a transaction is a
plain batch: a multi-slot MULTI that passes on one server would fail or silently stop being
atomic on a cluster. The guard makes both fail every test that reaches them.

Installed for the whole session by `tests/service/conftest.py`. The job queue's keys
(`rq:*`, RQ's own transactions) are not checked: the queue is one server by design.
"""

from __future__ import annotations

from typing import Any

import redis
from redis.cluster import key_slot
from redis.commands.core import Script

#: Commands of a transaction whose keys are named by RQ (the queue, one server): not checked.
QUEUE_PREFIXES = ("rq:",)


class CrossSlot(AssertionError):
    """A transaction or script of the store whose keys span cluster slots."""


def slots_of(keys: list[Any]) -> set[int]:
    out = set()
    for k in keys:
        raw = k if isinstance(k, bytes) else str(k).encode()
        if raw.decode(errors="replace").startswith(QUEUE_PREFIXES):
            return set()
        out.add(key_slot(raw))
    return out


def check(what: str, keys: list[Any]) -> None:
    if len(slots_of(keys)) > 1:
        raise CrossSlot(f"{what} spans cluster slots: {[k.decode() if isinstance(k, bytes) else k for k in keys]}")


#: Commands whose keys are all their arguments (DEL k1 k2 ...), or the first (most).
ALL_KEYS = {"DEL", "UNLINK", "EXISTS", "TOUCH", "MGET", "WATCH", "SINTER", "SUNION", "SDIFF", "PFCOUNT"}
#: Commands with no key.
NO_KEY = {"MULTI", "EXEC", "DISCARD", "TIME", "PING", "UNWATCH", "ECHO", "INFO", "DBSIZE", "CLIENT", "SCRIPT",
          "PUBLISH", "SPUBLISH", "WAITAOF", "WAIT", "SELECT", "CONFIG", "FLUSHALL", "FLUSHDB"}


def command_keys(args: tuple[Any, ...]) -> list[Any]:
    """The keys of one command (`args[0]` its name), for the commands the store pipelines."""
    name = (args[0].decode() if isinstance(args[0], bytes) else str(args[0])).upper()
    if name in NO_KEY:
        return []
    if name in ("EVAL", "EVALSHA"):
        n = int(args[2])
        return list(args[3:3 + n])
    if name in ALL_KEYS:
        return list(args[1:])
    if name in ("MSET", "MSETNX"):
        return list(args[1::2])
    if name in ("RENAME", "RENAMENX", "SMOVE", "LMOVE", "RPOPLPUSH", "COPY", "ZRANGESTORE"):
        return list(args[1:3])
    if name in ("ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"):
        return [args[1], *args[3:3 + int(args[2])]]
    if name in ("SUNIONSTORE", "SINTERSTORE", "SDIFFSTORE"):
        return list(args[1:])
    return [args[1]] if len(args) > 1 else []


_installed: list[tuple[Any, str, Any]] = []


def install() -> None:
    """Wrap redis-py's script call and transaction execution (idempotent)."""
    if _installed:
        return
    script_call = Script.__call__

    def guarded_script(self: Script, keys: Any = None, args: Any = None, client: Any = None) -> Any:
        check(f"script {self.sha[:8]}", list(keys or []))
        return script_call(self, keys=keys, args=args, client=client)

    execute = redis.client.Pipeline.execute

    def guarded_execute(self: Any, raise_on_error: bool = True) -> Any:
        if self.transaction or self.explicit_transaction:
            keys = [k for cmd in self.command_stack for k in command_keys(cmd[0])]
            if self.watching and getattr(self, "_watched", None):
                keys += self._watched
            check("transaction (MULTI)", keys)
        else:  # a batch: each script in it still runs on one node
            for cmd in self.command_stack:
                name = cmd[0][0].decode() if isinstance(cmd[0][0], bytes) else str(cmd[0][0])
                if name.upper() in ("EVAL", "EVALSHA"):
                    check("script in a pipeline", command_keys(cmd[0]))
        return execute(self, raise_on_error)

    watch = redis.client.Pipeline.watch

    def guarded_watch(self: Any, *names: Any) -> Any:
        self._watched = [*getattr(self, "_watched", []), *names]
        return watch(self, *names)

    reset = redis.client.Pipeline.reset

    def guarded_reset(self: Any) -> None:
        self._watched = []
        reset(self)

    from service.store import base

    direct_run = base.Direct._run  # (`run`, and `call`: every `Lean` script's)

    def guarded_direct(self: Any, script: Any, keys: list[str], args: list[Any]) -> Any:
        check(f"script {script.sha[:8]} (direct)", keys)
        return direct_run(self, script, keys, args)

    direct_each = base.Direct.run_each

    def guarded_each(self: Any, script: Any, calls: list[tuple[list[str], list[Any]]]) -> Any:
        for keys, _ in calls:
            check(f"script {script.sha[:8]} (direct, batched)", keys)
        return direct_each(self, script, calls)

    for owner, name, new in ((Script, "__call__", guarded_script), (redis.client.Pipeline, "execute", guarded_execute),
                             (base.Direct, "_run", guarded_direct), (base.Direct, "run_each", guarded_each),
                             (redis.client.Pipeline, "watch", guarded_watch),
                             (redis.client.Pipeline, "reset", guarded_reset)):
        _installed.append((owner, name, getattr(owner, name)))
        setattr(owner, name, new)
