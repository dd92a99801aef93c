"""Request limits, counted in the store so that they hold across web processes and hosts.

The counting is the `limits` library's (its limit items and their fixed-window counter,
`incr_expire.lua`) on the store's own client (`Settings.redis_url`: one server or a
cluster), with one difference: every limit a request meets (its client address's and its
key's) is counted in ONE round trip, not one per limit, so that the web fast paths stay
cheap. The counters of one client address or key share a hash tag,
`<key_prefix>:limits:{a:<address>}:LIMITER/<kind>/<count>/<n>/<period>` (`{k:<key>}` for a
key's), so one script call (`RESERVE_ALL`: the library's count over every key of
the call, with their TTLs) counts each within one slot: two calls (the address's, the
key's), pipelined on one connection on one server, one batch per node on a cluster.

A limit is a `limits` string from the settings (`"600/minute"`, several as
`"20/minute;300/hour"`); each kind of request has one for its client address and one for
its key (`Settings.limit_<kind>_address`, `..._key`). Over any of them, the request is
refused and `hit` says in how many seconds to try again; a refused request still counts
(a client that keeps hammering stays refused until it waits).

Counted ahead, per process (issue 26). A round trip per request was most of what a
public poll cost (and a write the store fsyncs). So a process does not ask the store for
every request: it takes a few counts of a limit at once (`RESERVE`: one eighth of what
is left of the limit in its window, at most `RESERVE_MAX`, at least one) and grants its
next requests of that client from them, without a round trip, until they are used up or
the window they were taken in ends (the counter's remaining time, measured from before
the call: never later than the store's window). One request at a time per counter takes
ahead; the requests that miss while its call is under way (a burst) take one count each,
so a process never holds more than `RESERVE_MAX` of a counter. The store's counter is the sum of the
counts taken, so the ruling is:

* **a limit is never exceeded**: across every process, at most the limit's count of
  requests is granted per window and client address or key (counts are taken before
  they are granted, and never more than is left);
* **a refusal may come early, by a bounded margin**: a process refuses when the store says
  nothing is left, while another process may still hold counts it took and has not used:
  at most `RESERVE_MAX` per other process, and at most an eighth of what was left when it
  took them (so one at a time while fewer than 16 are left: small limits, such as the
  senders', are counted exactly, one a request); a client whose requests all reach one
  process is refused exactly at its limit;
* a refused request still counts (one), as before; counts a process held when it exits
  are simply lost (they count, unused, until the window ends).

If the store does not answer, `hit` lets the request through (the request itself then
meets the store's failure and is answered as such).
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
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


#: Counts taken ahead at most: of what is left of a limit, this share (1/8)...
RESERVE = 8
#: ... and at most this many (the margin by which a refusal may come early, per other process).
RESERVE_MAX = 64
#: Counters a process keeps its counts of before it forgets the spent ones.
HELD_MAX = 10_000

#: `limits`' fixed-window count (as its `incr_expire.lua`: the first count of a window
#: starts the window's expiry), taking several counts at once, for every key at once:
#: ARGV per key: its limit, its window (seconds), the share of what is left to take, the
#: most to take. Answers per key the counts granted (0: nothing was left, the request is
#: refused and counted as one) and the counter's remaining time in ms: one command.
RESERVE_ALL = """
local out = {}
for i, key in ipairs(KEYS) do
    local limit = tonumber(ARGV[4 * i - 3])
    local room = limit - tonumber(redis.call("get", key) or "0")
    local take = 1
    if room > 0 then
        take = math.max(1, math.min(tonumber(ARGV[4 * i]), math.floor(room / tonumber(ARGV[4 * i - 1]))))
    end
    if redis.call("incrby", key, take) == take then
        redis.call("expire", key, ARGV[4 * i - 2])
    end
    out[2 * i - 1] = room > 0 and take or 0
    out[2 * i] = redis.call("pttl", key)
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
        self.script = client.register_script(RESERVE_ALL)
        # The count is on every limited request, the web fast paths' too: on connections
        # of its own, as the fast order's script (`Direct`).
        self.direct = Direct(client)
        #: The counts this process took ahead (see the module's doc): counter -> [counts
        #: left, until when (monotonic) they may be granted]. Never inherited by a fork.
        self.held: dict[str, list[float]] = {}
        #: The counters a request of this process is taking counts ahead of, now.
        self.taking: set[str] = set()
        self.pid = os.getpid()
        self.lock = threading.Lock()

    def hit(self, kind: str, address: str | None, key: str | None = None) -> Refusal | None:
        """Count one request of `kind` from `address` with `key` (either may be None: not
        counted by it): from the counts this process holds, else in one round trip; the
        limit it went over, if any."""
        if not self.on:
            return None
        # Per limit met: (by, item, counter, window).
        met: list[tuple[str, RateLimitItem, str, int]] = []
        for by, who in (("address", address), ("key", key)):
            items = self.rules[kind][by] if who else None
            if items:
                names, ttls = self.names[kind][by]
                tag = f"{self.prefix}:{{{by[0]}:{(who or '')[:MAX_WHO]}}}:"
                met += [(by, item, tag + name, ttl) for item, name, ttl in zip(items, names, ttls, strict=True)]
        if not met:
            return None
        now = time.monotonic()
        with self.lock:
            if self.pid != os.getpid():  # forked: the parent's counts are the parent's
                self.held, self.taking, self.pid = {}, set(), os.getpid()
            held = self.held
            missing = [m for m in met if not ((h := held.get(m[2])) and h[0] >= 1 and h[1] > now)]
            if not missing:  # every limit has a count in hand: granted here, no round trip
                for m in met:
                    held[m[2]][0] -= 1
                return None
            for m in met:  # the others' counts are taken now (a refused request counts too)
                if m not in missing:
                    held[m[2]][0] -= 1
            # One taking ahead per counter at a time: requests that miss while another's
            # call is under way take their own one count (else every request of a burst
            # would take up to RESERVE_MAX, and one process would hold far more than that).
            ahead = {m[2] for m in missing if m[2] not in self.taking}
            self.taking |= ahead
        try:
            return self._take(kind, missing, ahead, now)
        finally:
            if ahead:
                with self.lock:
                    self.taking -= ahead

    def _take(self, kind: str, missing: list[tuple[str, RateLimitItem, str, int]], ahead: set[str],
              now: float) -> Refusal | None:
        """Count `missing` in the store (taking ahead for the counters in `ahead`, one
        count for the others); the limit gone over, if any."""
        groups: dict[str, list[tuple[str, RateLimitItem, str, int]]] = {}
        for m in missing:  # one call per hash tag (client address or key)
            groups.setdefault(m[2][:m[2].index("}") + 1], []).append(m)
        calls = [([m[2] for m in group],
                  [x for m in group for x in (m[1].amount, m[3], RESERVE, RESERVE_MAX if m[2] in ahead else 1)])
                 for group in groups.values()]
        try:
            answers = self.direct.run_each(self.script, calls)
        except COUNT_FAILED as exc:  # the request meets the store's failure itself
            log.debug("limits not counted (%s)", type(exc).__name__)
            return None
        if answers is None:  # the connection failed: as above
            log.debug("limits not counted (the connection failed)")
            return None
        refusal = None
        kept: list[tuple[str, int, float]] = []
        for group, answer in zip(groups.values(), answers, strict=True):
            for i, (by, item, name, _) in enumerate(group):
                granted, pttl = int(answer[2 * i]), int(answer[2 * i + 1])
                if granted > 1 and pttl > 0:  # the rest for later requests, within this window
                    kept.append((name, granted - 1, now + pttl / 1000))
                if not granted:
                    ttl = (pttl + 500) // 1000 if pttl > 0 else 0  # as TTL rounds it
                    wait = max(1, ttl if ttl > 0 else item.get_expiry())
                    if refusal is None or wait > refusal.retry_after:
                        refusal = Refusal(kind, by, item, wait)
        if kept:
            with self.lock:
                if len(self.held) >= HELD_MAX:  # forget the spent and the ended; if that is not enough, all
                    self.held = {k: h for k, h in self.held.items() if h[0] >= 1 and h[1] > now}
                    if len(self.held) >= HELD_MAX:
                        self.held = {}
                for name, left, until in kept:  # with what another request took meanwhile, if any
                    h = self.held.get(name)
                    if h and h[0] >= 1 and h[1] > now:  # both granted only while the earlier window lasts
                        left, until = left + int(h[0]), min(until, h[1])
                    self.held[name] = [left, until]
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
