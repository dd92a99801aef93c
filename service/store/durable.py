"""Acknowledged means durable (issue 23, item 8): what the setting `durability` promises
about a player's write once it is acknowledged (a 202 or any other success answer of a
write, a receipt, SMTP's 250), and the checks that keep the promise.

- `"fsync-always"`: Valkey runs with `appendonly yes` and `appendfsync always`, so it
  writes and fsyncs its append-only file before it answers any write command; once
  Kontor has the store's answer, the write is on disk. Kontor adds nothing per request;
  it checks the store's configuration when a process starts (`problem`).
- `"waitaof"`: whatever the store's fsync policy, every acknowledged write is followed,
  before the answer, by `settle`: a small write and `WAITAOF 1 0 <timeout>` on one
  connection (one round trip). The store executes commands in order and fsyncs its
  append-only file as a whole, so once that write is on disk every write this request
  made before it is too. With `appendfsync everysec` this waits for the next fsync (up
  to a second); with `always` it costs a second fsync per write.
- `"none"`: no promise: with `appendfsync everysec` a host crash may lose the writes of
  the last second or two (a crash of the store's process alone loses nothing it
  answered: its writes are in the operating system's cache).

On a Valkey Cluster every primary is a store of its own: the start check reads each
primary's configuration, and `settle` writes its marker and waits on every primary (the
request's writes may be on any of them: a game's keys, a bucket, a global key), one
round trip each, in turn. Replication stays asynchronous: `WAITAOF 1 0` is the primary's
own disk, so a failover to a replica that had not received a write loses it (an
acknowledged one too), unless `durability_replicas` asks for replicas to have received
each acknowledged write as well (`WAIT <n>`, with either durable mode): then a failover
to one of them keeps it, unless that replica's host fails too.

`docs/operations.md` ("Durability", "Durability on a cluster") says the same for operators.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import redis

if TYPE_CHECKING:
    from service.config import Settings

log = logging.getLogger("kontor")

#: The values of the setting `durability`.
MODES = ("waitaof", "fsync-always", "none")


def valkey_fsync(mode: str) -> str:
    """The `appendfsync` a Valkey started for `durability = mode` runs with (`make run`,
    the benches): `always` for `fsync-always`, else Valkey's default `everysec`."""
    return "always" if mode == "fsync-always" else "everysec"


class NotDurable(redis.exceptions.ConnectionError):
    """The store did not confirm a write on disk (WAITAOF refused, or timed out). A
    `ConnectionError`, so that every caller answers it as a store that is not reachable
    (503 `store_unavailable` with `Retry-After`): the write is not acknowledged."""


def barrier_key(settings: Settings) -> str:
    """The counter `settle` writes (one small key per installation)."""
    return f"{settings.key_prefix}:durable"


def settle(client: Any, settings: Settings) -> None:
    """Return once every write this process's request made before the call is on the
    store's disk, as `settings.durability` promises, and received by
    `durability_replicas` replicas; raise `NotDurable` if the store does not confirm it
    within `durability_timeout`. Does nothing unless there is something to wait for: the
    mode is `waitaof` (with `fsync-always` the store's answer to the write was the
    confirmation) or replicas are asked for. On a cluster: on every primary at once
    (`_settle_cluster`)."""
    commands = waits(settings)
    if not commands:
        return
    if isinstance(client, redis.RedisCluster):
        _settle_cluster(client, settings, commands)
        return
    pipe = client.pipeline(transaction=False)
    pipe.incr(barrier_key(settings))
    for command in commands:
        pipe.execute_command(*command)
    try:
        _, *answers = pipe.execute()
    except redis.exceptions.ResponseError as exc:  # appendonly off (turned off since the start)
        raise NotDurable(f"the store refused WAITAOF: {exc}") from None
    _confirmed(commands, answers, settings)


def waits(settings: Settings) -> list[tuple[Any, ...]]:
    """The commands `settle` sends after its marker write: `WAITAOF 1 0` (`waitaof`: the
    primary's own disk), `WAIT <n>` (`durability_replicas`: received by n replicas);
    none: nothing to wait for. (Not `WAITAOF 1 <n>`: a replica tells its primary what it
    has fsynced once a second, so each acknowledged write waited about a second.)"""
    if settings.durability == "none":
        return []
    ms = max(1, int(settings.durability_timeout * 1000))
    out: list[tuple[Any, ...]] = [("WAITAOF", 1, 0, ms)] if settings.durability == "waitaof" else []
    if settings.durability_replicas > 0:
        out.append(("WAIT", settings.durability_replicas, ms))
    return out


def _confirmed(commands: list[tuple[Any, ...]], answers: list[Any], settings: Settings) -> None:
    for command, answer in zip(commands, answers, strict=True):
        if command[0] == "WAITAOF" and int(answer[0]) < 1:
            raise NotDurable(f"the store did not confirm the write on disk within {settings.durability_timeout:g} s")
        if command[0] == "WAIT" and int(answer) < command[1]:
            raise NotDurable(f"{int(answer)} of the {command[1]} replicas asked for received the write within "
                             f"{settings.durability_timeout:g} s")


def _settle_cluster(client: Any, settings: Settings, commands: list[tuple[Any, ...]]) -> None:
    """`settle` on a cluster: the request's writes may be on any primary (a game's keys,
    a bucket, a global key), so the marker write and the waits go to every primary, on a
    connection of each, all sent before any answer is read: the wait is the slowest
    primary's, not their sum."""
    sent: list[tuple[Any, Any]] = []
    try:
        for node in client.get_primaries():
            pool = client.get_redis_connection(node).connection_pool
            conn = pool.get_connection()
            sent.append((pool, conn))
            marker = node_barrier_key(client, node, settings)
            conn.send_packed_command(conn.pack_commands([("INCR", marker), *commands]))
        for _, conn in sent:
            try:
                answers = [conn.read_response() for _ in range(1 + len(commands))][1:]
            except redis.exceptions.ResponseError as exc:  # appendonly off; a slot that moved
                raise NotDurable(f"the store refused WAITAOF: {exc}") from None
            _confirmed(commands, answers, settings)
    except BaseException:  # answers left unread: those connections are not used again
        for _, conn in sent:
            conn.disconnect()
        raise
    finally:
        for pool, conn in sent:
            pool.release(conn)


def node_barrier_key(client: Any, node: Any, settings: Settings) -> str:
    """A marker key that a cluster's primary `node` serves (its slot is one of the node's,
    by the client's view of the slots): `<prefix>:durable:{<n>}`, the first such n."""
    slots = client.nodes_manager.slots_cache
    for n in range(100_000):
        key = f"{barrier_key(settings)}:{{{n}}}"
        owners = slots.get(client.keyslot(key))
        if owners and owners[0].name == node.name:
            return key
    raise NotDurable(f"no slot of the store's node {node.name} found")  # a node that serves no slot


def _primaries(client: Any) -> list[tuple[str, Any]]:
    """(name, client) of each server whose configuration counts: the one server, or every
    primary of a cluster."""
    if isinstance(client, redis.RedisCluster):
        return [(node.name, client.get_redis_connection(node)) for node in client.get_primaries()]
    return [("", client)]


def problem(client: Any, settings: Settings) -> str | None:
    """Why the store cannot keep what `settings.durability` promises, in words; None when
    it can (or the mode promises nothing). Reads the store's configuration (`CONFIG GET`;
    where that command is refused, `INFO persistence`), of every primary on a cluster.
    Raises what the client raises when the store does not answer."""
    mode = settings.durability
    if mode not in MODES:
        return f"durability must be one of {', '.join(MODES)}, not {mode!r}"
    if settings.durability_replicas < 0:
        return f"durability_replicas must be 0 or more, not {settings.durability_replicas}"
    if mode == "none":
        return None
    for name, node in _primaries(client):
        what = f"the store's node {name}" if name else "the store"
        why = _node_problem(node, mode, what) or _replica_problem(node, settings.durability_replicas, what)
        if why:
            return why
    return None


def _replica_problem(node: Any, replicas: int, what: str) -> str | None:
    """Why `node` cannot have `replicas` replicas confirm a write (too few connected)."""
    if not replicas:
        return None
    connected = int(node.info("replication").get("connected_slaves", 0))
    if connected < replicas:
        return (f"durability_replicas is {replicas} but {what} has {connected} replica{'s' if connected != 1 else ''} "
                f"connected: no write could be acknowledged. Add replicas (each with `appendonly yes`), or lower "
                f"KONTOR_DURABILITY_REPLICAS")
    return None


def _node_problem(node: Any, mode: str, what: str) -> str | None:
    try:
        conf = node.config_get("append*")
        aof, fsync = str(conf.get("appendonly", "")).lower(), str(conf.get("appendfsync", "")).lower()
    except redis.exceptions.ResponseError:  # CONFIG renamed or refused (a managed store)
        aof = "yes" if int(node.info("persistence").get("aof_enabled", 0)) else "no"
        fsync = "unknown"
    if aof != "yes":
        return (f"durability is {mode!r} but {what} runs without its append-only file (appendonly "
                f"{aof or 'unknown'}): acknowledged writes would not be on disk. Set `appendonly yes` "
                f"(and, for fsync-always, `appendfsync always`){' on every primary' if ':' in what else ''}, or "
                f"KONTOR_DURABILITY=none to run without")
    if mode == "fsync-always" and fsync != "always":
        return (f"durability is 'fsync-always' but {what}'s appendfsync is {fsync!r}: a host crash could "
                f"lose acknowledged writes. Set `appendfsync always`{' on every primary' if ':' in what else ''}, or "
                f"KONTOR_DURABILITY=waitaof")
    return None


def check_at_start(store: Any, settings: Settings, what: str) -> None:
    """A process that acknowledges writes (web, mail-in) calls this when it starts:
    raises `SystemExit` with the reason when the store cannot keep the promise (the
    process refuses to start); when the store does not answer yet, logs that it could
    not check and goes on (`settle` still refuses what it cannot confirm)."""
    try:
        why = store.durability_problem(settings)
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
        log.warning("%s: could not check the store's durability (%s); going on", what, type(exc).__name__)
        return
    if why:
        log.critical("%s refuses to start: %s", what, why)
        raise SystemExit(f"{what} refuses to start: {why}")
    log.info("%s: durability %s confirmed by the store", what, settings.durability)
