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

`docs/operations.md` ("Durability") says the same for operators.
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
    store's disk, as `settings.durability` promises; raise `NotDurable` if the store
    does not confirm it within `durability_timeout`. Does nothing unless the mode is
    `waitaof` (with `fsync-always` the store's answer to the write was the confirmation)."""
    if settings.durability != "waitaof":
        return
    pipe = client.pipeline(transaction=False)
    pipe.incr(barrier_key(settings))
    pipe.execute_command("WAITAOF", 1, 0, max(1, int(settings.durability_timeout * 1000)))
    try:
        _, synced = pipe.execute()
    except redis.exceptions.ResponseError as exc:  # appendonly off (turned off since the start)
        raise NotDurable(f"the store refused WAITAOF: {exc}") from None
    if int(synced[0]) < 1:
        raise NotDurable(f"the store did not confirm the write on disk within {settings.durability_timeout:g} s")


def problem(client: Any, settings: Settings) -> str | None:
    """Why the store cannot keep what `settings.durability` promises, in words; None when
    it can (or the mode promises nothing). Reads the store's configuration (`CONFIG GET`;
    where that command is refused, `INFO persistence`). Raises what the client raises
    when the store does not answer."""
    mode = settings.durability
    if mode not in MODES:
        return f"durability must be one of {', '.join(MODES)}, not {mode!r}"
    if mode == "none":
        return None
    try:
        conf = client.config_get("append*")
        aof, fsync = str(conf.get("appendonly", "")).lower(), str(conf.get("appendfsync", "")).lower()
    except redis.exceptions.ResponseError:  # CONFIG renamed or refused (a managed store)
        aof = "yes" if int(client.info("persistence").get("aof_enabled", 0)) else "no"
        fsync = "unknown"
    if aof != "yes":
        return (f"durability is {mode!r} but the store runs without its append-only file (appendonly "
                f"{aof or 'unknown'}): acknowledged writes would not be on disk. Set `appendonly yes` "
                f"(and, for fsync-always, `appendfsync always`), or KONTOR_DURABILITY=none to run without")
    if mode == "fsync-always" and fsync != "always":
        return (f"durability is 'fsync-always' but the store's appendfsync is {fsync!r}: a host crash could "
                f"lose acknowledged writes. Set `appendfsync always`, or KONTOR_DURABILITY=waitaof")
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
