"""Request limits, counted in the store so that they hold across web processes and hosts.

The counting is the `limits` library's (its limit items and their fixed-window counter,
`incr_expire.lua`) on the store's own client (`Settings.redis_url`: one server or a
cluster), with one difference: every limit a request meets (its client address's and its
key's) is counted in ONE round trip, not one per limit, so that the web fast paths stay
cheap. The counters of one client address or key share a hash tag,
`<key_prefix>:limits:{a:<address>}:LIMITER/<kind>/<count>/<n>/<period>` (`{k:<key>}` for a
key's), so one script call (`INCR_EXPIRE_ALL`: the library's script over every key of
the call, with their TTLs) counts each within one slot: two calls (the address's, the
key's), pipelined on one connection on one server, one batch per node on a cluster.

A limit is a `limits` string from the settings (`"600/minute"`, several as
`"20/minute;300/hour"`); each kind of request has one for its client address and one for
its key (`Settings.limit_<kind>_address`, `..._key`). Over any of them, the request is
refused and `hit` says in how many seconds to try again; a refused request still counts
(a client that keeps hammering stays refused until it waits).

If the store does not answer, `hit` lets the request through (the request itself then
meets the store's failure and is answered as such).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import redis
from limits import RateLimitItem, parse_many

from service.config import Settings
from service.store.base import STORE_DOWN, Direct, store_client

log = logging.getLogger("kontor")

#: The kinds of limited requests, and what their settings are called.
KINDS = ("create", "join", "read", "stream", "order", "message", "mail")
#: Longest client address or key id kept in a counter's name (longer ones are cut).
MAX_WHO = 100


#: `limits`' fixed-window count (its `incr_expire.lua`: add one; the first of a window
#: starts the window's expiry) for every key at once, with each key's TTL: one command.
INCR_EXPIRE_ALL = """
local out = {}
for i, key in ipairs(KEYS) do
    local current = redis.call("incrby", key, 1)
    if current == 1 then
        redis.call("expire", key, ARGV[i])
    end
    out[2 * i - 1] = current
    out[2 * i] = redis.call("ttl", key)
end
return out
"""


@dataclass(frozen=True)
class Refusal:
    """A request over a limit: which one, and when to try again."""

    kind: str
    by: str  # "address" or "key"
    item: RateLimitItem
    retry_after: int


#: What a failed count looks like besides `STORE_DOWN`: a cluster without a master for the
#: counter's slot (a failover under way), a topology the client could not read.
COUNT_FAILED = (*STORE_DOWN, redis.exceptions.ClusterError, redis.exceptions.RedisClusterException)


class RateLimits:
    """The counters of `Settings.limit_*`, in the store under `<key_prefix>:limits`.
    `on` is False when `Settings.limits` turns them off."""

    def __init__(self, settings: Settings) -> None:
        self.on = settings.limits
        self.rules: dict[str, dict[str, list[RateLimitItem]]] = {
            kind: {by: _parse(getattr(settings, f"limit_{kind}_{by}")) for by in ("address", "key")}
            for kind in KINDS}
        #: Each limit's counter name after its client's hash tag, and its TTL.
        self.names = {kind: {by: ([item.key_for(kind) for item in items], [item.get_expiry() for item in items])
                             for by, items in rules.items()} for kind, rules in self.rules.items()}
        self.prefix = f"{settings.key_prefix}:limits"
        client = store_client(settings.redis_url)
        self.script = client.register_script(INCR_EXPIRE_ALL)
        # The count is on every limited request, the web fast paths' too: on connections
        # of its own, as the fast order's script (`Direct`).
        self.direct = Direct(client)

    def hit(self, kind: str, address: str | None, key: str | None = None) -> Refusal | None:
        """Count one request of `kind` from `address` with `key` (either may be None: not
        counted by it), in one round trip; the limit it went over, if any."""
        if not self.on:
            return None
        counted: list[tuple[str, RateLimitItem]] = []
        calls: list[tuple[list[str], list[int]]] = []
        for by, who in (("address", address), ("key", key)):
            items = self.rules[kind][by] if who else None
            if items:
                counted += [(by, item) for item in items]
                names, ttls = self.names[kind][by]
                tag = f"{self.prefix}:{{{by[0]}:{(who or '')[:MAX_WHO]}}}:"
                calls.append(([tag + name for name in names], ttls))
        if not calls:
            return None
        try:
            answers = self.direct.run_each(self.script, calls)
        except COUNT_FAILED as exc:  # the request meets the store's failure itself
            log.debug("limits not counted (%s)", type(exc).__name__)
            return None
        if answers is None:  # the connection failed: as above
            log.debug("limits not counted (the connection failed)")
            return None
        out = [x for answer in answers for x in answer]
        refusal = None
        for i, (by, item) in enumerate(counted):
            count, ttl = int(out[2 * i]), int(out[2 * i + 1])
            if count > item.amount:
                wait = max(1, ttl if ttl > 0 else item.get_expiry())
                if refusal is None or wait > refusal.retry_after:
                    refusal = Refusal(kind, by, item, wait)
        return refusal


def _parse(text: str) -> list[RateLimitItem]:
    return parse_many(text) if text.strip() else []


#: What a refusal says about each kind (in words, for people).
WHAT = {"create": "new games", "join": "joins", "read": "reads", "stream": "stream connections",
        "order": "orders", "message": "messages", "mail": "mails"}
WHO = {"address": "from one address", "key": "with one key"}
WHO_MAIL = {"address": "from one mail server", "key": "from one sender"}
PERIOD = {"second": "a second", "minute": "a minute", "hour": "an hour", "day": "a day", "month": "a month",
          "year": "a year"}


def words(refusal: Refusal) -> str:
    """`at most 600 orders a minute with one key; try again in 12 seconds`."""
    item = refusal.item
    unit = item.GRANULARITY.name
    per = PERIOD.get(unit, unit) if item.multiples == 1 else f"every {item.multiples} {unit}s"
    who = (WHO_MAIL if refusal.kind == "mail" else WHO)[refusal.by]
    wait = refusal.retry_after
    later = f"{wait} second{'s' if wait != 1 else ''}" if wait < 120 else f"{math.ceil(wait / 60)} minutes"
    return f"too many {WHAT[refusal.kind]}: at most {item.amount} {per} {who}; try again in {later}"
