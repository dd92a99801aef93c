"""Live streams of a game (`GET /games/{id}/stream`): a new step or event reaches the
caller as it is committed, with no polling.

How a stream learns of a change: the store's scripts that change a game's step (an order
that completes a step, a deadline, a commit) or append events publish one short message
on the game's channel `<game prefix>:live`, inside the same script (no extra round
trip): `resolving <step>`, `commit` or `events`. The channel is a sharded one (SPUBLISH,
Valkey 7+): on a cluster a message stays on the shard of the game's slot instead of
being copied to every node and every subscriber. A stream told only that its step is
resolving sends that step frame without reading anything.

Each process has one `Hub`, which subscribes to the channels of the games it has
streams open on (SSUBSCRIBE when the first stream of a game opens here, SUNSUBSCRIBE
`LINGER` seconds after its last one ended unless another came back meanwhile, so held
polls that come and go do not churn it), on the server that holds the game's slot (`Store.live_node`;
one server: all on one). Per server one `Shard`: a connection and a thread (a greenlet
under gunicorn's gevent workers) reading it, which wakes the streams open on a game
when its message comes. Every confirmation of a game's subscription wakes its streams
too, so a stream reads after its game's subscription holds (nothing committed between
its read and the subscription is missed) and reads again after a resubscription. When a
shard's connection fails (the store restarted, the connection was killed, a failover),
its thread reads the cluster's map again, moves the games whose slot now lives
elsewhere to that server's shard and subscribes again (backing off while the server is
gone); a slot that moves away (the server says `sunsubscribe` unasked) does the same. A
woken stream reads what changed in one round trip (`Store.live_read`) and sends it (one
write per read). With no message for `KEEPALIVE` seconds it sends a comment line and
reads anyway, so a lost message (while the subscription was away) delays a frame by at
most that long, never loses it. The streams of one game that a message woke share one
read (`Hub.read`): the first reads the store, the others at the same place in the game
take its answer, unless another message came meanwhile.

What a stream shows is cut for its caller by the one redaction point of `/events`
(`Reading.visible_items`): a seat sees the events it may see, the public the public ones,
each with the caller's own id (`service.store.numbering`: a viewer's events are numbered
1, 2, 3, ... with no gaps, as `/events` numbers them). A stream follows the store's own
numbers (its cursor) and the counts behind the caller's ids; `Last-Event-ID` (or
`after`) is the caller's id, turned into a place in the store once, on connecting.

Frames (server-sent events, `text/event-stream`):

* `event: step`, `data: {"phase": <step number or null in the lobby>, "status": ...}`:
  first on connecting, then whenever the step's number or status changes (a `resolving`
  status that lasts less than `COALESCE` seconds is passed over: the next step's frame
  comes instead);
* `event: game`, `id: <the caller's event id>`, `data: <the item /events lists, plus "sentence">`
  (`service.words.describe`: null for an event that says nothing new, such as a step
  that resolved as everyone asked);
* `: keep-alive` at least every `KEEPALIVE` seconds.

* `event: closed`, `data: {"code": ..., "detail": <why, in words>}`: the last frame of a
  stream the server ends (see below).

The stream ends when the caller's bearer token expires (code `token_expired`: the client
reconnects with a fresh one and `Last-Event-ID`), and when the game is over and
everything was sent (no `closed` frame).

Rights are re-checked, not kept from the connection: every read holds the seat records
(`Store.live_read`; the meta's host key, which never changes, is kept from the first read
once the game has begun), and before a stream sends anything it read it checks
that its caller's key still holds what it held on connecting: a seat stream that its
seat's key (`seats[seat].kid`), the host's that the game's host key. When the host gives
a seat to another key or a bot, `seat.lua` publishes `seat <n>`: every stream of the
game reads at once, and a stream whose key no longer holds its seat sends `closed`
(`seat_changed`) and ends, having sent nothing that read showed. Since the read takes
the seats after the events, an event appended after the change is never sent on the old
stream (a stream whose read missed the change saw no event after it). A game that is
gone ends its streams likewise (`game_not_found`).

A stream without a bearer token (the public's) ends after `stream_idle_timeout` seconds
with no event for it (`idle`); the page reconnects when the person comes back.

Caps (`Hub.admit`, before the first byte): open streams per process (counted here),
per client address and per game (leases in the store, `service.store.streams`, renewed
by the hub while the stream is open, so those of a killed process stop counting once
their lease ends). Over a cap: 429 `too_many_streams` with `Retry-After`.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from engine.core.events import ALL
from service import words
from service.core.base import Caller
from service.core.errors import Problem
from service.store.numbering import count

log = logging.getLogger("kontor")

#: Longest silence on an open stream, seconds (a comment line then).
KEEPALIVE = 15.0
#: Seconds the hub holds back a game's `resolving` message for the commit that usually
#: comes right behind it (`Hub.wake`): when the commit comes first, its streams wake once
#: and write once, the commit's events and the new step, and the step's short `resolving`
#: status is never shown (a stream shows the step as it is when it writes, as a re-read
#: would). A longer resolution shows `resolving` after this delay.
COALESCE = 0.05
#: Events read per round trip.
BATCH = 100
#: Seconds a game's subscription is kept after its last waiter here left (`Hub.watch`),
#: so that waiters that come and go (the held public polls of `service/http/pace.py`,
#: each a few hundred ms) do not subscribe and unsubscribe the game each time; and the
#: most games kept so (beyond, the longest idle is unsubscribed at once).
LINGER = 3.0
LINGER_MAX = 1000
#: Seconds a stream refused by a cap is told to wait (`Retry-After`).
RETRY_AFTER = 30

#: Why the server ended a stream: the `closed` frame's code and words.
CLOSED = {
    "seat_changed": "The host gave this seat to another player or to a bot, so this stream no longer shows "
                    "it. Reconnect to follow the game as everyone sees it.",
    "not_host": "This key is no longer the game's host key. Reconnect to follow the game as everyone sees it.",
    "game_not_found": "The game is gone.",
    "token_expired": "The bearer token of this stream has expired. Reconnect with a fresh one.",
    "idle": "Nothing happened in this game for {minutes}, so the stream ended. Reconnect to follow it again.",
}


def closed(code: str, **words: Any) -> str:
    """The last frame of a stream the server ends: why, as a stable code and in words."""
    return sse("closed", {"code": code, "detail": CLOSED[code].format(**words)})


class Ticket:
    """One admitted stream's place under the caps (`Hub.admit`): given back once, when
    the stream ends or its answer is closed before it began."""

    def __init__(self, hub: Hub, member: str, keys: list[str]) -> None:
        self.hub, self.member, self.keys = hub, member, keys
        self.done = False

    def release(self) -> None:
        self.hub.release(self)


class Waiter(threading.Event):
    """One open stream's wake-up: set when its game changed; `notes` are the messages
    since it last looked (at most `NOTES`; more, and it reads everything anyway)."""

    def __init__(self) -> None:
        super().__init__()
        self.notes: list[str] = []


#: Messages kept per stream between two looks.
NOTES = 16


class Hub:
    """The process's subscriptions to the `live` channels of the games it streams (one
    `Shard` per server), and the streams waiting on them: `watch(gid)` gives a stream the
    `Waiter` that a change of that game sets."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.lock = threading.Lock()
        self.waiters: dict[str, set[Waiter]] = {}
        #: The subscriptions: per server (`Store.live_node`) its shard, and per game the
        #: shard that holds its subscription.
        self.shards: dict[str, Shard] = {}
        self.routes: dict[str, Shard] = {}
        self.pid = 0
        #: Per game: how many times its streams were woken, and the last read made after
        #: the latest wake (that count, the events cursor it read from, what it read).
        self.wakes: dict[str, int] = {}
        #: Per subscribed game: the messages heard since it was subscribed (kept while it
        #: is, with or without waiters: a held poll asks whether one came between its read
        #: and its wait, `heard_since`).
        self.messages: dict[str, int] = {}
        self.reads: dict[str, tuple[int, int, Any]] = {}
        #: Per game, the `resolving` messages held back (`wake`) and until when; and the
        #: games in the order they were held (each `COALESCE` seconds, so by deadline).
        self.held: dict[str, tuple[float, list[str]]] = {}
        self.held_order: deque[tuple[float, str]] = deque()
        #: The games still subscribed though no waiter is left, until when (`LINGER`;
        #: the soonest first), and how long they linger (0: unsubscribed at once).
        self.idle: OrderedDict[str, float] = OrderedDict()
        self.linger = LINGER
        #: The admitted streams (`admit`): their number (the per-process cap), their
        #: leases in the store (renewed by the shards' threads), and when those were last renewed.
        self.open = 0
        self.tickets: set[Ticket] = set()
        self.lease = 60.0
        self.renewed = time.monotonic()

    def admit(self, gid: str, address: str, settings: Any) -> Ticket:
        """A place for one more stream of `gid` from `address` under the caps (per process,
        per address, per game), or 429 `too_many_streams`."""
        with self.lock:
            if self.open >= settings.stream_max_per_process:
                raise Problem("too_many_streams", f"this server follows {settings.stream_max_per_process} live "
                              "streams at once, its most; poll the game or try again shortly",
                              retry_after=RETRY_AFTER)
            self.open += 1
            self.lease = float(settings.stream_lease)
        member = f"{os.getpid()}-{uuid.uuid4().hex}"
        keys = [self.store.stream_address_key(address), self.store.stream_game_key(gid)]
        try:
            refused = self.store.take_stream_leases(member, self.lease, [
                (keys[0], settings.stream_max_per_address), (keys[1], settings.stream_max_per_game)])
        except BaseException:
            with self.lock:
                self.open -= 1
            raise
        if refused is not None:
            with self.lock:
                self.open -= 1
            if refused == keys[0]:
                detail = (f"your address has {settings.stream_max_per_address} live streams open, the most one "
                          "address may; close one (another tab) or try again shortly")
            else:
                detail = (f"this game has {settings.stream_max_per_game} live streams open, the most one game "
                          "may; poll the game or try again shortly")
            raise Problem("too_many_streams", detail, retry_after=RETRY_AFTER)
        ticket = Ticket(self, member, keys)
        with self.lock:
            self.tickets.add(ticket)
        return ticket

    def release(self, ticket: Ticket) -> None:
        """Give back an admitted stream's place (once; later calls do nothing)."""
        with self.lock:
            if ticket.done:
                return
            ticket.done = True
            self.open -= 1
            self.tickets.discard(ticket)
        try:
            self.store.give_back_stream_leases(ticket.member, ticket.keys)
        except Exception as exc:  # the store went away: the leases end by themselves
            log.warning("live streams: a lease was not given back (%s: %s)", type(exc).__name__, exc)

    def renew(self, force: bool = False) -> None:
        """Renew the leases of the admitted streams, every third of a lease (one round trip)."""
        now = time.monotonic()
        with self.lock:
            if not force and now - self.renewed < self.lease / 3:
                return
            self.renewed = now
            leases = [(key, t.member) for t in self.tickets for key in t.keys]
        try:
            self.store.renew_stream_leases(leases, self.lease)
        except Exception as exc:  # the store went away: try again next time (leases last 3 times as long)
            log.warning("live streams: their leases were not renewed (%s: %s)", type(exc).__name__, exc)

    @contextmanager
    def watch(self, gid: str) -> Iterator[Waiter]:
        woken = Waiter()
        with self.lock:
            if self.pid != os.getpid():  # a forked child has none of its parent's threads
                self.pid = os.getpid()
                self.shards, self.routes, self.idle, self.messages = {}, {}, OrderedDict(), {}
            first = gid not in self.waiters
            self.idle.pop(gid, None)  # still subscribed (`routes`): `_join` keeps it
            self.waiters.setdefault(gid, set()).add(woken)
        if first:
            self._join(gid)
        try:
            yield woken
        finally:
            with self.lock:
                group = self.waiters.get(gid)
                last = False
                if group is not None:
                    group.discard(woken)
                    if not group:
                        last = True
                        del self.waiters[gid]
                        self.wakes.pop(gid, None)
                        self.reads.pop(gid, None)
                        self.held.pop(gid, None)
                        if self.linger > 0 and gid in self.routes:  # unsubscribed later (`release_idle`)
                            self.idle[gid] = time.monotonic() + self.linger
                            self.idle.move_to_end(gid)
                            last = len(self.idle) > LINGER_MAX
                            if last:
                                gid = self.idle.popitem(last=False)[0]
            if last:
                self._leave(gid)

    def heard_of(self, gid: str) -> tuple[bool, int]:
        """Whether this process is subscribed to the game's messages, and how many it has
        heard of it since (compare two answers with `heard_since`)."""
        with self.lock:
            return gid in self.routes, self.messages.get(gid, 0)

    def heard_since(self, gid: str, before: tuple[bool, int]) -> bool:
        """Whether a message of the game came since `before` (`heard_of`), as far as this
        process can know: only while it was subscribed all along."""
        subscribed, count = before
        now = self.heard_of(gid)
        return subscribed and now[0] and now[1] != count

    def release_idle(self) -> float:
        """Unsubscribe from the games no waiter came back to within `linger` seconds;
        seconds until the next is due (at most 1)."""
        now = time.monotonic()
        due: list[str] = []
        with self.lock:
            while self.idle:
                gid, until = next(iter(self.idle.items()))
                if until > now:
                    break
                del self.idle[gid]
                due.append(gid)
            wait = min(1.0, next(iter(self.idle.values())) - now) if self.idle else 1.0
        for gid in due:
            self._leave(gid)
        return wait

    def _join(self, gid: str) -> None:
        """Subscribe to the game's channel (its first stream here opened), on its server."""
        try:
            node = self.store.live_node(gid)
        except Exception as exc:  # the game's slot has no server now: the keep-alive reads
            log.warning("live streams: no server for %s's channel (%s: %s)", gid, type(exc).__name__, exc)
            return
        with self.lock:
            if gid not in self.waiters or gid in self.routes:
                return
            shard = self._shard(node)
            shard.games.add(gid)
            self.routes[gid] = shard
        shard.sync(gid)

    def _leave(self, gid: str) -> None:
        """Unsubscribe from the game's channel (its last stream here ended)."""
        with self.lock:
            if gid in self.waiters or gid in self.idle:  # another stream of the game opened meanwhile
                return
            shard = self.routes.pop(gid, None)
            self.messages.pop(gid, None)
            if shard is None:
                return
            shard.games.discard(gid)
        shard.sync(gid)

    def _shard(self, node: str) -> Shard:
        """The shard of a server, started if there is none (under the lock)."""
        shard = self.shards.get(node)
        if shard is None or shard.done:
            shard = self.shards[node] = Shard(self, node)
            shard.start()
        return shard

    def reroute(self, shard: Shard) -> None:
        """Move the games of `shard` whose channel now lives on another server (the map
        was read again after a failure) to that server's shard."""
        with self.lock:
            games = list(shard.games)
        moves: dict[str, str] = {}
        for gid in games:
            try:
                node = self.store.live_node(gid)
            except Exception:  # noqa: S112  (no server for the slot yet: stay, try again later)
                continue
            if node != shard.node:
                moves[gid] = node
        moved: list[tuple[Shard, str]] = []
        with self.lock:
            for gid, node in moves.items():
                if self.routes.get(gid) is not shard:
                    continue
                shard.games.discard(gid)
                target = self._shard(node)
                target.games.add(gid)
                self.routes[gid] = target
                moved.append((target, gid))
        for target, gid in moved:
            target.sync(gid)

    def wake(self, gid: str | None, note: str = "") -> None:
        """Wake the streams of `gid` (None: of every game, to read everything). A
        `resolving` message is held back for `COALESCE` seconds (`release_held`): the commit
        that usually comes right behind it wakes the streams once, with both."""
        with self.lock:
            if gid is not None and note.startswith("resolving ") and gid in self.waiters:
                held = self.held.get(gid)
                if held is None:
                    due = time.monotonic() + COALESCE
                    self.held[gid] = (due, [note])
                    self.held_order.append((due, gid))
                else:
                    held[1].append(note)
                return
            self._wake(list(self.waiters) if gid is None else [gid], note)

    def _wake(self, games: list[str], note: str) -> None:
        """(Under the lock.) Wake the streams of `games` with the notes held back for them and `note`."""
        for g in games:
            self.wakes[g] = self.wakes.get(g, 0) + 1
            if g in self.routes:
                self.messages[g] = self.messages.get(g, 0) + 1
            held = self.held.pop(g, None)
            notes = [*held[1], note] if held is not None else [note]
            for woken in self.waiters.get(g, ()):
                for n in notes:
                    woken.notes.append(n if len(woken.notes) < NOTES else "")
                woken.set()

    def release_held(self) -> float:
        """Wake the streams of the games whose `resolving` message was held back for
        `COALESCE` seconds with no commit behind it; seconds until the next is due (at most 1)."""
        now = time.monotonic()
        with self.lock:
            while self.held_order and self.held_order[0][0] <= now:
                due, gid = self.held_order.popleft()
                held = self.held.get(gid)
                if held is not None and held[0] == due:
                    del self.held[gid]
                    self.wakes[gid] = self.wakes.get(gid, 0) + 1
                    if gid in self.routes:
                        self.messages[gid] = self.messages.get(gid, 0) + 1
                    for woken in self.waiters.get(gid, ()):
                        for n in held[1]:
                            woken.notes.append(n if len(woken.notes) < NOTES else "")
                        woken.set()
            return min(1.0, self.held_order[0][0] - now) if self.held_order else 1.0

    def read(self, gid: str, after: int, count: int, meta: bool = True) -> Any:
        """`Store.live_read` for a stream a message woke, plus a dict of the frames of its
        public events by stored number and id (made once, by the first stream that sends
        them with that id: streams whose callers number them alike): the answer
        another stream of the game read from the same cursor since the latest wake, else
        a read of its own (kept for the others unless a wake came while it read). The
        read is read-only for callers; the dict only ever gains the frame of an event
        that every viewer sees alike. `meta`: whether the caller needs the meta (a read
        without it answers None there, and serves only callers that need none)."""
        with self.lock:
            wakes = self.wakes.get(gid, 0)
            hit = self.reads.get(gid)
        if hit is not None and hit[0] == wakes and hit[1] == after and (not meta or hit[2][1] is not None):
            return hit[2]
        # With the read, a place for the frames of the events every viewer sees alike.
        out = (*self.store.live_read(gid, after, count, meta), {})
        with self.lock:
            if self.wakes.get(gid, 0) == wakes and gid in self.waiters:
                self.reads[gid] = (wakes, after, out)
        return out

    def take(self, woken: Waiter) -> list[str]:
        """The messages a stream was woken by (and clear it)."""
        with self.lock:
            notes, woken.notes = woken.notes, []
            woken.clear()
            return notes


class Moved(Exception):
    """A server dropped a subscription unasked (its slot moved: a failover, a reshard)."""


class Shard:
    """The hub's subscription connection to one server (`Store.live_pubsub`): the games
    whose `live` channel it holds, and a thread (a greenlet under gevent) that reads it,
    wakes their streams, renews the streams' leases, and subscribes again after a
    failure. It ends once it holds no game."""

    def __init__(self, hub: Hub, node: str) -> None:
        self.hub, self.node = hub, node
        #: The games it should hold (under the hub's lock).
        self.games: set[str] = set()
        #: Under `send`: the connection while it is up, the games subscribed on it, and
        #: per game the unsubscriptions sent whose confirmation has not come yet (a game
        #: may be subscribed again before then: its late confirmation is still expected).
        self.send = threading.RLock()
        self.pubsub: Any = None
        self.sent: set[str] = set()
        self.leaving: dict[str, int] = {}
        self.done = False
        self.thread = threading.Thread(target=self._run, name=f"kontor-live {node or 'store'}", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def sync(self, gid: str) -> None:
        """Subscribe to or unsubscribe from the game's channel as `games` now says (with
        no connection up, the thread subscribes to every game when it connects)."""
        with self.send:
            if self.pubsub is None:
                return
            with self.hub.lock:
                want = gid in self.games
            channel = self.hub.store.live_channel(gid)
            try:
                if want and gid not in self.sent:
                    self.pubsub.ssubscribe(channel)
                    self.sent.add(gid)
                elif not want and gid in self.sent:
                    self.pubsub.sunsubscribe(channel)
                    self.sent.discard(gid)
                    self.leaving[gid] = self.leaving.get(gid, 0) + 1
            except Exception as exc:  # the connection failed: the thread subscribes again
                log.warning("live streams: (un)subscribing %s failed (%s: %s)", gid, type(exc).__name__, exc)

    def _connect(self) -> None:
        with self.send:
            self._close()
            pubsub = self.hub.store.live_pubsub(self.node)
            with self.hub.lock:
                games = set(self.games)
            try:
                for gid in games:  # one a command: on a cluster, several must share a slot
                    pubsub.ssubscribe(self.hub.store.live_channel(gid))
            except BaseException:
                pubsub.close()
                raise
            self.pubsub, self.sent, self.leaving = pubsub, games, {}

    def _close(self) -> None:
        with self.send:
            pubsub, self.pubsub = self.pubsub, None
            self.sent, self.leaving = set(), {}
        try:
            if pubsub is not None:
                pubsub.close()
        except Exception:  # noqa: S110  (closing a broken connection)
            pass

    def _ended(self) -> bool:
        """Whether it holds no game: then it ends (under the hub's lock, so a game joining
        meanwhile gets a new shard)."""
        with self.hub.lock:
            if self.games:
                return False
            self.done = True
            if self.hub.shards.get(self.node) is self:
                del self.hub.shards[self.node]
            return True

    def _run(self) -> None:
        hub, failures = self.hub, 0
        try:
            while not self._ended():
                try:
                    self._connect()
                    while True:
                        hub.renew()
                        wait = hub.release_held()  # the held `resolving` messages that are due
                        wait = min(wait, hub.release_idle())  # the subscriptions no waiter came back to
                        msg = self.pubsub.get_message(timeout=max(0.0, min(wait, hub.lease / 3)))
                        if msg is None:
                            if self._ended():
                                return
                            continue
                        failures = 0
                        self._heard(msg)
                except Exception as exc:  # the server went away, or moved a slot: subscribe again
                    if not failures:
                        log.warning("live streams: the subscription to %s failed (%s: %s); subscribing again",
                                    self.node or "the store", type(exc).__name__, exc)
                    failures += 1
                    self._close()
                    if failures > 1 or not isinstance(exc, Moved):
                        time.sleep(min(0.2 * failures, 2.0))
                    hub.renew()  # the other servers' leases still count the streams
                    hub.release_held()
                    hub.release_idle()
                    try:
                        hub.store.live_refresh()
                    except Exception:  # noqa: S110  (the cluster is still failing over: next time)
                        pass
                    hub.reroute(self)
        finally:
            self._close()

    def _heard(self, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        gid = self.hub.store.live_game(str(msg.get("channel")))
        if gid is None:
            return
        if kind == "smessage":
            self.hub.wake(gid, str(msg["data"]))
        elif kind == "ssubscribe":  # subscribed (again): whatever changed before is read now
            self.hub.wake(gid, "")
        elif kind == "sunsubscribe":
            with self.send:
                left = self.leaving.get(gid, 0)
                if left:  # asked (perhaps subscribed again since: then this is the earlier one's)
                    if left > 1:
                        self.leaving[gid] = left - 1
                    else:
                        del self.leaving[gid]
                    return
                unasked = gid in self.sent
            if unasked:
                raise Moved(gid)


#: Compact JSON, as `json.dumps(..., ensure_ascii=False, separators=(",", ":"))` gives it
#: (one encoder made once instead of one per frame).
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def sse(kind: str, data: Any, event_id: int | None = None) -> str:
    """One server-sent event frame."""
    if event_id is None:
        return f"event: {kind}\ndata: {_encode(data)}\n\n"
    return f"id: {event_id}\nevent: {kind}\ndata: {_encode(data)}\n\n"


class Live:
    """A stream's reads and frames: made before the first byte (problems are answered as
    usual), then `frames` yields until the token expires or the server ends the stream.
    `kid`: the key the caller's bearer token was signed with (its rights are re-checked on
    every read); `idle`: seconds without a frame after which the stream ends (None: never)."""

    def __init__(self, k: Any, gid: str, caller: Caller, after: int, until: float | None,
                 kid: str | None = None, idle: float | None = None) -> None:
        self.k, self.gid, self.caller, self.until, self.kid, self.idle = k, gid, caller, until, kid, idle
        self.viewer: int | str = caller if isinstance(caller, int) else "public"
        # Where the caller's events after its id `after` begin (problems, such as no such
        # game, before the first byte): the store's number read through (the cursor), the
        # counts after it, and the caller's last id sent.
        start = k.event_start(gid, caller, after)
        self.cursor, self.counts, self.seen = start.lo - 1, start.before, after
        self.step: tuple[Any, str] | None = None
        #: Why the stream ends (the `closed` frame sent last), once it must.
        self.ended: str | None = None
        #: What the stream uses of the meta once the game has begun (`STEADY`: fields no
        #: script changes after the start), so a read after a wake leaves the meta out.
        self.meta: dict[str, str] | None = None
        #: The seat records as read (raw JSON) and as parsed: parsed once per change.
        self.seat_records: dict[str, dict[str, Any]] = {}
        self.first = self.read()

    #: The meta fields a stream uses that never change once the game has begun (the title,
    #: the number of seats, the host's key); the status is taken from the step then.
    STEADY = ("title", "seats", "host_kid")

    def seat(self, raw: str) -> dict[str, Any]:
        """A seat record (raw JSON as read), parsed once."""
        record = self.seat_records.get(raw)
        if record is None:
            if len(self.seat_records) > 64:
                self.seat_records.clear()
            record = self.seat_records[raw] = json.loads(raw)
        return record

    def holds(self, meta: dict[str, str], seats: dict[str, str]) -> str | None:
        """Why the caller's key no longer holds what it held on connecting (a `CLOSED`
        code), or None while it does."""
        if self.kid is None:
            return None
        if isinstance(self.caller, int):
            raw = seats.get(str(self.caller))
            return None if raw and self.seat(raw).get("kid") == self.kid else "seat_changed"
        if self.caller == "host":
            return None if meta.get("host_kid") == self.kid else "not_host"
        return None

    def read(self, shared: bool = False) -> list[str]:
        """What changed since the last read, as frames (one round trip; `shared`: after a
        wake, through the hub, so the game's streams woken together read once). The meta
        is read until the game has begun (then `self.meta` holds what the stream uses of
        it), and again whenever the step or the seats read empty (a game in its lobby, or
        gone)."""
        kept = self.meta
        if shared:
            phase, meta, batch, seats, public = self.k.live_hub().read(self.gid, self.cursor, BATCH, kept is None)
        else:
            (phase, meta, batch, seats), public = self.k.store.live_read(self.gid, self.cursor, BATCH,
                                                                         kept is None), {}
        if meta is None:
            if not phase or not seats or "status" not in phase:  # the lobby, or gone: read with the meta
                self.meta = None
                return self.read()
            meta = kept
        elif phase and seats and "status" in phase:
            self.meta = {k: meta[k] for k in self.STEADY if k in meta}
        if not meta:
            if self.step is None:  # on connecting: answered as a problem
                raise Problem("game_not_found", f"no game {self.gid!r}")
            self.ended = "game_not_found"
            return [closed("game_not_found")]
        lost = self.holds(meta, seats)
        if lost is not None:  # nothing this read showed is sent
            self.ended = lost
            return [closed(lost)]
        out: list[str] = []
        step = (int(phase["id"]) if phase.get("id") else None, phase.get("status") or meta.get("status", "lobby"))
        first = self.step is None
        if batch:
            rows = count(batch, self.counts)
            self.cursor, self.counts = rows[-1][0], rows[-1][3]
            items = self.k.visible_items(rows, self.viewer, self.seen)
            if items:
                self.seen = items[-1][1]["id"]
                game = self.k._title(meta["title"])
                names = words.names_of(int(meta["seats"]), {int(s): self.seat(r).get("name")
                                                            for s, r in seats.items()})
                for seq, item in items:
                    # the same frame for every viewer that numbers it alike
                    alike = (seq, item["id"]) if item["visible_to"] == ALL else None
                    frame = public.get(alike) if alike else None
                    if frame is None:
                        frame = sse("game", {**item, "sentence": words.describe(game, item, names)}, item["id"])
                        if alike:
                            public[alike] = frame
                    out.append(frame)
        # The step first on connecting; after that, a commit's events before its new step
        # (a client that re-reads the step on a step frame has seen how it came about).
        if step != self.step:
            self.step = step
            frame = sse("step", {"phase": step[0], "status": step[1]})
            out.insert(0 if first else len(out), frame)
        if len(batch) == BATCH:  # more to come: read on at once
            more = self.read()
            if self.ended:
                return more
            out += more
        return out

    def told(self, notes: list[str]) -> list[str] | None:
        """The frames for messages that need no read (only `resolving` of the step this
        stream shows), else None."""
        out: list[str] = []
        for note in notes:
            kind, _, step = note.partition(" ")
            if kind != "resolving" or self.step is None or str(self.step[0]) != step:
                return None
            if self.step[1] != "resolving":
                self.step = (self.step[0], "resolving")
                out.append(sse("step", {"phase": self.step[0], "status": "resolving"}))
        return out

    def frames(self, keepalive: float = KEEPALIVE, ticket: Ticket | None = None) -> Iterator[str]:
        """The stream's writes; `ticket`, its place under the caps, is given back at the end."""
        try:
            yield from self._frames(keepalive)
        finally:
            if ticket is not None:
                ticket.release()

    def _frames(self, keepalive: float) -> Iterator[str]:
        hub = self.k.live_hub()
        with hub.watch(self.gid) as woken:
            # Anything committed since the first read is read again; what comes before the
            # game's subscription holds is read once its confirmation wakes this stream.
            # Each read's frames go out as one write.
            if self.ended:
                yield "".join(self.first)
                return
            yield "".join(self.first + self.read())
            shown = time.monotonic()  # when the viewer was last sent a frame (the idle timeout)
            while not self.ended and (self.step is None or self.step[1] != "finished"):
                wait = keepalive
                if self.until is not None:
                    wait = min(wait, self.until - time.time())
                    if wait <= 0:  # the token expired: the client reconnects with a fresh one
                        yield closed("token_expired")
                        return
                if self.idle is not None:
                    wait = min(wait, shown + self.idle - time.monotonic())
                    if wait <= 0:
                        minutes = max(1, round(self.idle / 60))
                        yield closed("idle", minutes="a minute" if minutes == 1 else f"{minutes} minutes")
                        return
                if not woken.wait(wait):
                    yield ": keep-alive\n\n"
                # (A `resolving` message comes here `COALESCE` seconds late, or with the
                # commit behind it: `Hub.wake`.)
                notes = hub.take(woken)
                before = self.step
                told = self.told(notes) if notes else None
                if told is None:  # a read says where the step is now
                    self.step = before
                out = "".join(told if told is not None else self.read(shared=bool(notes)))
                if out:
                    if not self.ended:
                        shown = time.monotonic()
                    yield out
