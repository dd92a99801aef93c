"""What every aggregate of the store builds on: the connection, the scripts, the clock.

`connect` is the one place the service makes its Redis clients (the web process, the
sweeper and the job bodies through `Kontor`), so every one of them has the same short
timeouts: a frozen store then fails a request in about `TIMEOUT` seconds instead of
hanging on the client's default of 5 s per call.
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
from collections.abc import Iterator
from importlib import resources
from typing import TYPE_CHECKING, Any, TypeAlias

import redis
from redis.cluster import key_slot
from redis.driver_info import DriverInfo

from service.config import is_cluster_url
from service.store.keys import Keys

if TYPE_CHECKING:
    from service.config import Settings

#: A Redis client, as callers outside the store may name it (without importing redis): one
#: server's, or a cluster's (the store on a Redis/Valkey Cluster).
Client: TypeAlias = redis.Redis | redis.RedisCluster

#: Seconds to connect to the store and to wait for an answer (both). A URL may still set
#: its own (`?socket_timeout=10&socket_connect_timeout=10`): its query wins.
TIMEOUT = 2.0

#: Connections one process may open to the store (opened only as needed, then pooled). A
#: gevent web worker serves up to `worker_connections` (3,000 by default: the stream cap
#: plus headroom) requests and open live streams at once, each of which may hold a
#: connection for a moment; redis-py's default of 100 made a burst of 200 streams fail
#: with `MaxConnectionsError` (503). Valkey takes 10,000 clients by default.
MAX_CONNECTIONS = 4096
#: The client's name and version it tells the store on connecting (CLIENT SETINFO), made
#: once: left to redis-py, every new connection reads the package's metadata from disk
#: (about 0.7 ms, and a busy web process opens connections at every burst).
DRIVER_INFO = DriverInfo()

#: What "the store is down" looks like to a caller: refused, reset, timed out, still
#: loading (a tuple, for `except` and for registering error handlers without importing redis).
STORE_DOWN: tuple[type[Exception], ...] = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)

#: The scripts that append events: they begin with the prelude numbering.lua (each
#: viewer's event ids, `service.store.numbering`).
NUMBERED = frozenset({"append", "act", "commit", "rematch_told", "clock", "rollback", "rollback_vote",
                      "absence_told"})


def lua(name: str) -> str:
    """The source of script `name` (`service/store/lua/<name>.lua`), behind its prelude."""
    src = resources.files("service.store.lua").joinpath(f"{name}.lua").read_text()
    return lua("numbering") + src if name in NUMBERED else src


#: Every Lua script of the store, by name (`service/store/lua/<name>.lua`).
LUA = {name: lua(name) for name in
       ("submit", "expire", "join", "seat", "intake", "append", "order", "press_rate", "archive",
        "step_state", "phase_now", "act", "create", "purge", "lobby_warn", "stream_lease", "event_find",
        "snapshot", "resolve_read", "credentials", "move_deadline", "clock", "rollback", "rollback_vote", "pause",
        "resume",
        # -- rematch (issue 25) --
        "rematch_claim", "rematch_create", "rematch_told",
        # -- absences (issue 25) --
        "absences", "absence_told", "policy_set")}


def connect(settings: Settings) -> tuple[Client, redis.Redis]:
    """The store's client (answers decoded to `str`; a cluster client for a
    `redis-cluster://` URL) and the job queue's (raw bytes, as RQ wants them, to
    `settings.queue`: always one server), with `TIMEOUT`. No connection is made until
    the first command (a cluster client asks its startup nodes for the slots at once)."""
    return store_client(settings.redis_url), redis.Redis.from_url(settings.queue, **_options())


def _options() -> dict[str, Any]:
    return {"socket_timeout": TIMEOUT, "socket_connect_timeout": TIMEOUT, "max_connections": MAX_CONNECTIONS,
            "driver_info": DRIVER_INFO}


def store_client(url: str, decode: bool = True) -> Client:
    """A client of the store at `url` (`Settings.redis_url`): a `redis.Redis`, or for
    `redis-cluster://h:p,h:p[?query]` (`rediss-cluster://` with TLS) a `redis.RedisCluster`
    over those startup nodes. The URL's query (`socket_timeout=...`) and credentials
    (`redis-cluster://user:pass@h:p,...`) apply to every node."""
    if not is_cluster_url(url):
        return redis.Redis.from_url(url, decode_responses=decode, **_options())
    from urllib.parse import parse_qsl, unquote

    from redis.cluster import ClusterNode

    scheme, rest = url.split("://", 1)
    rest, _, query = rest.partition("?")
    rest = rest.split("/", 1)[0]
    auth, _, hosts = rest.rpartition("@")
    opts: dict[str, Any] = _options()
    opts["max_connections"] = MAX_CONNECTIONS  # per node
    if auth:
        user, _, password = auth.partition(":")
        opts["username"], opts["password"] = unquote(user) or None, unquote(password) or None
    if scheme.lower().startswith("rediss"):
        opts["ssl"] = True
    for name, value in parse_qsl(query):
        opts[name] = float(value) if name.endswith("timeout") else value
    nodes = []
    for hostport in filter(None, hosts.split(",")):
        host, _, port = hostport.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"a cluster URL names nodes as host:port, not {hostport!r}")
        nodes.append(ClusterNode(host.strip("[]"), int(port)))
    if not nodes:
        raise ValueError("a cluster URL names at least one node: redis-cluster://host:port,host:port")
    return RoutedCluster(startup_nodes=nodes, decode_responses=decode, require_full_coverage=False, **opts)


#: The one-slot commands the store sends outside pipelines, routed straight to their node
#: by `RoutedCluster` (the script calls: their first key names the slot).
ROUTED = frozenset({
    "GET", "SET", "SETNX", "GETDEL", "INCR", "INCRBY", "DECR", "EXPIRE", "PEXPIRE", "TTL", "PTTL", "TYPE",
    "HGET", "HGETALL", "HMGET", "HSET", "HSETNX", "HDEL", "HINCRBY", "HEXISTS", "HLEN", "HKEYS", "HVALS",
    "LRANGE", "LLEN", "LINDEX", "RPUSH", "LPUSH", "LTRIM", "LPOP", "RPOP",
    "SADD", "SREM", "SMEMBERS", "SISMEMBER", "SMISMEMBER", "SCARD",
    "ZADD", "ZREM", "ZRANGE", "ZRANGEBYSCORE", "ZREVRANGE", "ZREVRANGEBYSCORE", "ZSCORE", "ZCARD", "ZCOUNT",
    "ZREMRANGEBYSCORE", "ZRANK",
    "XRANGE", "XREVRANGE", "XLEN", "XADD", "XDEL", "XTRIM",
    "EVALSHA", "EVAL", "EVALSHA_RO", "EVAL_RO"})


def _first_key(args: tuple[Any, ...]) -> Any:
    """The key that names the slot of a `ROUTED` command (None: not one of them)."""
    name = args[0]
    if name not in ROUTED or len(args) < 2:
        return None
    if name.startswith("EVAL"):
        return args[3] if len(args) >= 4 and int(args[2]) >= 1 else None
    return args[1]


class RoutedCluster(redis.RedisCluster):
    """The store's cluster client: a one-slot command (`ROUTED`) goes straight to the client
    of the node that serves its slot, as the slot map known to the client said when the
    slot was first used (kept per slot), without
    the cluster client's dispatch (a third of a command's client CPU: 44 against 30 us for an
    HGETALL on this machine class). A redirection (MOVED, ASK), a node that is down or
    busy, or a slot no node serves goes the cluster client's own way, which follows
    redirections, refreshes the map and retries as it always does."""

    def route(self, key: Any) -> redis.Redis:
        """The client of the node that serves `key`'s slot (kept per slot)."""
        slot = key_slot(key if isinstance(key, bytes) else str(key).encode())
        routes: dict[int, redis.Redis] = self.__dict__.setdefault("_routes", {})
        client = routes.get(slot)
        if client is None:
            node = self.nodes_manager.get_node_from_slot(slot)
            client = routes[slot] = node.redis_connection or self.get_redis_connection(node)
        return client

    def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        key = _first_key(args)
        if key is None or "target_nodes" in kwargs:
            return super().execute_command(*args, **kwargs)
        try:
            return self.route(key).execute_command(*args, **kwargs)
        except REROUTE:
            self.__dict__.get("_routes", {}).clear()  # the map changed: learn it again, the cluster client's way
            return super().execute_command(*args, **kwargs)

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> Any:
        """A cluster pipeline; without a transaction, one whose commands are all `ROUTED`
        and all served by one node runs as that node's plain pipeline (`RoutedPipeline`)."""
        pipe = super().pipeline(transaction=transaction, shard_hint=shard_hint)
        if not transaction:
            pipe.__class__ = RoutedPipeline
            pipe.routed_by = self
        return pipe


#: What sends a routed command or batch the cluster client's own way instead.
REROUTE = (redis.exceptions.MovedError, redis.exceptions.AskError, redis.exceptions.TryAgainError,
           redis.exceptions.ClusterDownError, redis.exceptions.SlotNotCoveredError, *STORE_DOWN)


class RoutedPipeline(redis.cluster.ClusterPipeline):
    """A cluster batch (no transaction) from `RoutedCluster.pipeline`: when every command
    is `ROUTED`, it is sent as one plain pipeline per node that serves its commands (the
    usual case: one game's keys, one node), without the cluster pipeline's per-command
    dispatch. A command a node redirects (MOVED, ASK) or could not take (down, busy), and
    every command of a batch that is not all `ROUTED`, goes the cluster client's own way."""

    routed_by: RoutedCluster

    def execute(self, raise_on_error: bool = True) -> list[Any]:
        queue = getattr(self._execution_strategy, "_command_queue", None)
        if not queue:
            return super().execute(raise_on_error)
        groups: dict[int, tuple[Any, list[int]]] = {}
        try:
            for i, cmd in enumerate(queue):
                key = _first_key(cmd.args)
                if key is None or "target_nodes" in cmd.options:
                    return super().execute(raise_on_error)
                client = self.routed_by.route(key)
                groups.setdefault(id(client), (client, []))[1].append(i)
        except REROUTE:
            return super().execute(raise_on_error)
        out: list[Any] = [None] * len(queue)
        again: list[int] = []
        for client, positions in groups.values():
            plain = client.pipeline(transaction=False)
            for i in positions:
                plain.execute_command(*queue[i].args, **queue[i].options)
            try:
                answers = plain.execute(raise_on_error=False)
            except REROUTE:
                again += positions
                continue
            for i, answer in zip(positions, answers, strict=True):
                out[i] = answer
                if isinstance(answer, REROUTE):
                    again.append(i)
        self.reset()
        if again:
            self.routed_by.__dict__.get("_routes", {}).clear()
        for i in sorted(again):
            try:
                out[i] = redis.RedisCluster.execute_command(self.routed_by, *queue[i].args, **queue[i].options)
            except redis.exceptions.RedisError as exc:
                out[i] = exc
        if raise_on_error:
            for i, answer in enumerate(out):
                if isinstance(answer, Exception):
                    self.annotate_exception(answer, i + 1, queue[i].args)
                    raise answer
        return out


def run_batch(client: Client, script: Any, calls: list[tuple[list[str], list[Any]]]) -> list[Any]:
    """Run `script` once per (keys, args) of `calls`, each call's keys within one slot,
    batched without a transaction (the calls are independent): one pipeline on one
    server; on a cluster, whose client refuses a script in a pipeline, EVALSHA in a
    cluster pipeline (one batch per node), then, for the calls a node refused for want of
    the script (a node restarted or promoted), the script loaded on every node and those
    calls again. The answers, in order."""
    if not isinstance(client, redis.RedisCluster):
        pipe = client.pipeline(transaction=False)
        for keys, args in calls:
            script(keys=keys, args=args, client=pipe)
        return pipe.execute()  # type: ignore[no-any-return]
    batch = client.pipeline(transaction=False)
    for keys, args in calls:
        batch.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
    out: list[Any] = batch.execute(raise_on_error=False)
    missing = [i for i, x in enumerate(out) if isinstance(x, redis.exceptions.NoScriptError)]
    if missing:  # only those again: the others ran
        client.script_load(script.script)
        for i in missing:
            keys, args = calls[i]
            out[i] = client.evalsha(script.sha, len(keys), *keys, *args)
    for x in out:
        if isinstance(x, Exception):
            raise x
    return out


class Base(Keys):
    """The part of `Store` every aggregate mixin uses: `r`, `scripts`, `_run`, the clock."""

    def __init__(self, client: Client, prefix: str = "kontor") -> None:
        self.r = client
        self.prefix = prefix
        #: The scripts' calls on connections of their own (`Lean`).
        self.lean = Direct(client)
        self.scripts = {name: Lean(client.register_script(src), self.lean) for name, src in LUA.items()}
        self._secret: str | None = None

    def now(self) -> float:
        """The store's clock (one clock for every process)."""
        sec, micro = self.r.time()
        return float(sec) + micro / 1e6

    def ping(self) -> None:
        """Raise unless the store answers (readiness)."""
        self.r.ping()

    def secret(self) -> str:
        """The server secret kept in the store (made once, by whichever process asks
        first; read once per process: it never changes)."""
        if self._secret is None:
            self.r.set(self.secret_key, secrets.token_urlsafe(32), nx=True)
            self._secret = self.r.get(self.secret_key)  # type: ignore[assignment]
        return self._secret  # type: ignore[return-value]

    def settle(self, settings: Settings) -> None:
        """Acknowledged means durable: return once this request's writes are on the
        store's disk as `settings.durability` promises (`service.store.durable.settle`);
        raises `NotDurable` (a `STORE_DOWN` error) when the store does not confirm it."""
        from service.store import durable

        durable.settle(self.r, settings)

    def durability_problem(self, settings: Settings) -> str | None:
        """Why the store cannot keep what `settings.durability` promises (None: it can)."""
        from service.store import durable

        return durable.problem(self.r, settings)

    def _run(self, name: str, keys: list[str], args: list[Any]) -> list[str]:
        """Run script `name`; its answer as a list of text."""
        out = self.scripts[name](keys=keys, args=args)
        return [x.decode() if isinstance(x, bytes) else str(x) for x in out]


class _ReadinessPoll:
    """`select.poll` for redis-py's readiness checks (`redis._parsers.hiredis`) in a gevent
    process: a zero timeout (the check a pool makes on every connection it hands out,
    and `_socket_is_closed`) asks the OS directly, since it cannot block; any other
    timeout (a pub/sub wait) goes through gevent's cooperative poll as before."""

    def __init__(self, native: Any, cooperative: Any) -> None:
        self._native, self._cooperative = native, cooperative
        self._registered: list[tuple[Any, int]] = []

    def register(self, fd: Any, mask: int = 0) -> None:
        self._registered.append((fd, mask))

    def poll(self, timeout: float | None = None) -> list[tuple[int, int]]:
        poller = self._native() if timeout == 0 else self._cooperative()
        for fd, mask in self._registered:
            poller.register(fd, mask)
        out: list[tuple[int, int]] = poller.poll(timeout)
        return out


def quick_readiness_checks() -> None:
    """In a gevent-patched process (the web workers): make redis-py's check that a pooled
    connection holds no stale data, run before every command, a plain non-blocking
    `poll(2)` instead of a round through gevent's hub (gevent's `poll` builds and starts
    a watcher and a timer per call: a tenth of a web worker's CPU under load). Idempotent;
    does nothing where `select` is not patched."""
    import select
    import types

    from gevent import monkey
    from redis._parsers import hiredis

    if not monkey.is_module_patched("select") or isinstance(getattr(hiredis.select, "poll", None), functools.partial):
        return
    native = monkey.get_original("select", "poll")
    shim = types.SimpleNamespace(**{name: getattr(select, name) for name in dir(select) if not name.startswith("__")})
    shim.poll = functools.partial(_ReadinessPoll, native, select.poll)
    hiredis.select = shim  # type: ignore[assignment]


#: `Direct._run`'s answer when the connection failed (a script may answer None itself).
_FAILED = object()


class Lean:
    """A registered script (`client.register_script`) called through `Direct.call`: on a
    connection of its own, without the client's pool and retry machinery (a third of a
    script call's client-side CPU), the client's own call when that connection fails.
    Called with `client=` (a pipeline), it is the script as registered."""

    __slots__ = ("raw", "direct", "sha", "script")

    def __init__(self, raw: Any, direct: Direct) -> None:
        self.raw, self.direct = raw, direct
        self.sha, self.script = raw.sha, raw.script

    def __call__(self, keys: Any = (), args: Any = (), client: Any = None) -> Any:
        if client is not None:
            return self.raw(keys=keys, args=args, client=client)
        return self.direct.call(self.raw, list(keys), list(args))


def lean_scripts(client: Any) -> Any:
    """What makes a script registered on `client` a `Lean` one (its calls on connections
    kept for them): for the job queue's hot scripts (`Jobs`)."""
    return functools.partial(Lean, direct=Direct(client))


class Direct:
    """Scripts run on connections kept apart from a client's pool, without the pool's
    and the retry machinery's cost (a third of an order's client-side cost): the web fast
    paths' store calls (the order's script, the request limits' count) and, through
    `Lean` (`call`), every store script and the job queue's hot ones. On a cluster
    client, on connections of the node that serves the first key's slot (made like the
    client's own to that node; kept per node). Falls back to the client's own call where
    the pool is not a plain one (a client-side cache) and where a cluster node answers
    that the slot moved (MOVED, ASK: the script did not run there; the client follows the
    redirection and learns the new layout). `run` answers None when the connection
    failed: whether the script ran is then unknown, and the caller leaves the request to
    the full path, as a retry of the client would."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.cluster = isinstance(client, redis.RedisCluster)
        self.idle: dict[str, list[Any]] = {}  # node ("" for one server) -> connections
        self.pid = os.getpid()

    def _node(self, keys: list[str]) -> tuple[Any, str] | None:
        """The pool of the node serving `keys[0]`'s slot, and the node's name (None: not known)."""
        if not keys:
            return None
        if isinstance(self.client, RoutedCluster):  # the route it keeps per slot
            try:
                pool = self.client.route(keys[0]).connection_pool
            except (redis.exceptions.RedisClusterException, *REROUTE):
                return None
            return pool, f"{pool.connection_kwargs.get('host')}:{pool.connection_kwargs.get('port')}"
        try:
            node = self.client.get_node_from_key(keys[0])
        except redis.exceptions.RedisClusterException:  # no node known for the slot (yet)
            return None
        if node is None:
            return None
        return self.client.get_redis_connection(node).connection_pool, node.name

    @staticmethod
    def _plain(pool: Any) -> bool:
        """Whether `pool` is a plain pool (not a client-side cache's): only then are its
        connections borrowed directly."""
        return type(pool) is redis.ConnectionPool and getattr(pool, "cache", None) is None

    @contextlib.contextmanager
    def _borrowed(self, pool: Any, name: str) -> Iterator[Any]:
        """A connection to node `name` (one of ours left idle, else a new one made like
        `pool`'s), given back when the block ends. A block that raises drops it
        (disconnects); one that fails on the connection (ConnectionError, TimeoutError)
        ends there without an error, so what the caller set beforehand (None: whether the
        script ran is unknown) is its answer."""
        if self.pid != os.getpid():  # forked: the parent's connections are not ours
            self.idle, self.pid = {}, os.getpid()
        idle = self.idle.setdefault(name, [])
        try:  # (threads share the idle connections: a worker's notices beside its drain)
            conn = idle.pop()
        except IndexError:
            conn = pool.connection_class(**pool.connection_kwargs)
        try:
            yield conn
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError):
            conn.disconnect()
            return
        except redis.exceptions.ResponseError:  # an error answer, read whole: the connection is fine
            idle.append(conn)
            raise
        except BaseException:
            conn.disconnect()
            raise
        idle.append(conn)

    def run(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        out = self._run(script, keys, args)
        return None if out is _FAILED else out

    def call(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        """`script(keys=keys, args=args)` as the client answers it, on a connection of our
        own (`run`); when that connection fails, the client's own call (with its retries),
        as the client's retry would have sent the script again (`Lean`)."""
        out = self._run(script, keys, args)
        return script(keys=keys, args=args) if out is _FAILED else out

    def _run(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        """`run`'s answer, `_FAILED` when the connection failed."""
        if self.cluster:
            found = self._node(keys)
            if found is None:
                return script(keys=keys, args=args)
            pool, name = found
        else:
            pool, name = self.client.connection_pool, ""
        if not self._plain(pool):
            return script(keys=keys, args=args)
        out, moved = _FAILED, False
        with self._borrowed(pool, name) as conn:
            try:
                try:
                    conn.send_command("EVALSHA", script.sha, len(keys), *keys, *args)
                    out = conn.read_response()
                except redis.exceptions.NoScriptError:
                    conn.send_command("SCRIPT", "LOAD", script.script)
                    conn.read_response()
                    conn.send_command("EVALSHA", script.sha, len(keys), *keys, *args)
                    out = conn.read_response()
            except (redis.exceptions.MovedError, redis.exceptions.AskError, redis.exceptions.TryAgainError,
                    redis.exceptions.ClusterDownError):
                moved = True  # the connection is fine (kept); the slot is elsewhere (or moving)
        return script(keys=keys, args=args) if moved else out

    def commands(self, keys: list[str], commands: list[tuple[Any, ...]]) -> list[Any] | None:
        """Plain commands on `keys`' slot (reads: safe to send again) in one round trip on a
        connection of our own, their raw answers (no response callbacks: an HGETALL is a
        flat list, or a dict under RESP3); None where they cannot go this way (not a plain
        pool, no node known for the slot, the slot moved) or the connection failed: the
        caller then sends them through the client, which retries. An error answer raises."""
        if self.cluster:
            found = self._node(keys)
            if found is None:
                return None
            pool, name = found
        else:
            pool, name = self.client.connection_pool, ""
        if not self._plain(pool):
            return None
        out: list[Any] | None = None
        with self._borrowed(pool, name) as conn:
            conn.send_packed_command(conn.pack_commands(commands))
            answers, moved = [], False
            for _ in commands:
                try:
                    answers.append(conn.read_response())
                except (redis.exceptions.MovedError, redis.exceptions.AskError, redis.exceptions.TryAgainError,
                        redis.exceptions.ClusterDownError):
                    moved = True  # every answer read; the connection is fine (kept)
            out = None if moved else answers
        return out

    def run_each(self, script: Any, calls: list[tuple[list[str], list[Any]]]) -> list[Any] | None:
        """`script` once per (keys, args) of `calls` (each call's keys within one slot), in
        one round trip: the commands pipelined on one connection of a plain pool; else
        `run_batch` (a cluster: one batch per node). None when the connection failed, as
        `run`."""
        pool = None if self.cluster else self.client.connection_pool
        if not self._plain(pool):
            return run_batch(self.client, script, calls)
        out: list[Any] | None = None
        with self._borrowed(pool, "") as conn:
            commands = [("EVALSHA", script.sha, len(keys), *keys, *args) for keys, args in calls]
            conn.send_packed_command(conn.pack_commands(commands))
            answers: list[Any] = []
            missing = []
            for i in range(len(commands)):
                try:
                    answers.append(conn.read_response())
                except redis.exceptions.NoScriptError:
                    missing.append(i)
                    answers.append(None)
            if missing:  # the store forgot the script (restarted): load it, send those again
                self.client.script_load(script.script)
                conn.send_packed_command(conn.pack_commands([commands[i] for i in missing]))
                for i in missing:
                    answers[i] = conn.read_response()
            out = answers
        return out
