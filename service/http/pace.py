"""Pacing of repeated public polls of the open step (`GET /games/{id}/phases/current`
without a bearer token), as nginx's `limit_req ... delay` or a short long-poll would.

The ruling (docs/api.md, "Polling the open step"; the route's OpenAPI description):

* When one client address polls one game's open step again less than `poll_pace_ms`
  milliseconds (P) after it was last answered, and the answer would be the very one it
  was last given (the same ETag), the request is held until the game changes (its `live`
  message, `service.core.live.Hub`: a new step, a step resolving, a commit, events, a
  seat change) or until P ms have passed since that last answer, whichever comes first.
  Then the step is read again and answered as always: the answer is never stale, it is
  read after the wait. A changed answer is never held; a poll more than P ms after the
  last answer is never held. Another seat's order publishes nothing, so it does not end
  a hold: the `answered` list it changed is in the answer at the pace's end. (Publishing
  it was tried: every order then woke the game's held polls, which were polled again,
  0.35-0.40 more requests per move in the peer bench.)
* "Last answer" is per (client address, game): the address the request limits use
  (`REMOTE_ADDR`, which ProxyFix sets from `X-Forwarded-For` when proxies are trusted,
  `service/http/limits.py`). Clients behind one untrusted proxy share it, but pacing
  refuses nobody: a held poll is answered at most P ms after the address's last answer.
* Bounds: at most `poll_pace_max_held` polls are held per web process at once (beyond
  that a poll is answered at once); the last answers are remembered for at most
  `MEMORY` (address, game) pairs per process (least recently answered forgotten first,
  and a forgotten pair is simply not paced). A held poll holds no store connection and
  no CPU: it waits on its game's `Waiter` (a `threading.Event`, a gevent event in the
  monkey-patched web workers, as a stream's wait is).
* `poll_pace_ms = 0` turns pacing off. So does a process that gevent did not patch (a
  sync worker, `GUNICORN_CMD_ARGS="--worker-class sync"`): there a held poll would block
  a whole worker, so polls are answered at once (`Pacer.cooperative`).
* `poll_pace_max_held` stays below `stream_headroom` (`Settings.check`): held polls keep
  their connections, which count towards gunicorn's `worker_connections`.

Where: in the public poll's fast path (`FastPaths._poll`, service/http/fastpath.py), which
answers every public poll of a running game's open step while it is on. What it leaves to
the Flask route (a query, a bearer token, another `If-None-Match`, the lobby, the fast
path switched off with `KONTOR_FAST_POLLS`) is answered at once, as before: the same
answers, unpaced.

A change that comes between a poll's read and its hold ends the hold at once: while the
game is subscribed here (a game stays subscribed `Hub.linger` seconds after its last
waiter, so a client polling again and again keeps it so) by what the hub heard of it
since the read (`Hub.heard_of` before the read, `Hub.heard_since` once the poll waits);
when it was not, by the confirmation of the subscription the hold made (the hub wakes
a game's waiters with an empty note when its channel is subscribed), after which the
poll reads again (a change published before the subscription held is then in the store).
"""

from __future__ import annotations

import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

#: (address, game) pairs whose last answer each process remembers.
MEMORY = 10_000
#: Seconds a held poll waits for the read under way that it may take (`Pacer.read`)
#: before it reads for itself (a read is one store round trip: far less, but for a store
#: that stopped answering, whose read fails after its own timeout).
SHARED_WAIT = 5.0


class Read:
    """One read of a game's open step (`Pacer.read`): when it began (the pacer's clock)
    and the game's message count then (`Hub.heard_of`, None when not subscribed), its
    answer once `done` (`ok`: it did not fail)."""

    __slots__ = ("done", "got", "heard", "ok", "started")

    def __init__(self, started: float, heard: int | None) -> None:
        self.started, self.heard = started, heard
        self.done = threading.Event()
        self.got: Any = None
        self.ok = False


class Ended:
    """What ended a hold, for `Pacer.read`: when the hold began, and either the game's
    message count once a message ended it (`heard`, counted while the game was
    subscribed here, as it stays while a poll waits on it) or the pace's end (`deadline`);
    neither for the subscription's confirmation."""

    __slots__ = ("began", "deadline", "heard")

    def __init__(self, began: float, heard: int | None = None, deadline: float | None = None) -> None:
        self.began, self.heard, self.deadline = began, heard, deadline

    def served_by(self, other: Read) -> bool:
        """Whether `other` began after this hold ended, so after the poll came and after
        its wait, as its own read would: after the pace's end; or, for a message, with the
        same count of messages heard (so after the message that ended the hold, and none
        since) and after the hold began (the same subscription: counts start again on
        subscribing)."""
        if other.started < self.began:
            return False
        if self.deadline is not None:
            return other.started >= self.deadline
        return self.heard is not None and other.heard == self.heard


def _heard(hub: Any, gid: str) -> int | None:
    """The game's message count while it is subscribed here, else None."""
    subscribed, heard = hub.heard_of(gid)
    return heard if subscribed else None


def gevent_patched() -> bool:
    """Whether gevent patched this process (gunicorn's gevent worker does, before it loads
    the app): a wait then parks one greenlet, not a thread of a sync worker."""
    monkey = sys.modules.get("gevent.monkey")
    return monkey is not None and bool(monkey.is_module_patched("socket"))


class Pacer:
    """One web process's memory of the last public answers and its held polls."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.lock = threading.Lock()
        #: (address, game) -> (ETag last answered, when), least recently answered first.
        self.last: OrderedDict[tuple[str, str], tuple[str, float]] = OrderedDict()
        #: Polls held now.
        self.held = 0
        #: Polls held so far (for tests and measurements).
        self.holds = 0
        #: Per game, its latest read (`read`), and how many held polls took another's read.
        self.reads: dict[str, Read] = {}
        self.shared = 0

    @staticmethod
    def cooperative() -> bool:
        """Whether polls may be held here: only in a gevent-patched process (replaceable in tests)."""
        return gevent_patched()

    def hold_for(self, address: str, gid: str, etag: str, pace: float) -> float:
        """Seconds a poll about to be answered `etag` should be held (0: none)."""
        if pace <= 0:
            return 0.0
        with self.lock:
            seen = self.last.get((address, gid))
        if seen is None or seen[0] != etag:
            return 0.0
        return max(0.0, seen[1] + pace - self.clock())

    def given(self, address: str, gid: str, etag: str) -> None:
        """Remember that `address` was answered `etag` for `gid` now."""
        key = (address, gid)
        with self.lock:
            self.last[key] = (etag, self.clock())
            self.last.move_to_end(key)
            while len(self.last) > MEMORY:
                self.last.popitem(last=False)

    def held_until(self, hub: Any, gid: str, seconds: float, cap: int,
                   before: tuple[bool, int] = (False, 0)) -> Ended | None:
        """Wait until `gid` changes (a message of the game on `hub`) or `seconds` pass, and
        say what ended the wait (for `read`); None at once (not held) when `cap` polls are
        held already. `before`: what the hub had heard of the game before the caller's
        read (`Hub.heard_of`): a message since then (the change came between the read and
        the wait) ends the hold at once."""
        with self.lock:
            if self.held >= cap:
                return None
            self.held += 1
            self.holds += 1
        try:
            began = self.clock()
            end = began + seconds
            with hub.watch(gid) as woken:
                if hub.heard_since(gid, before):
                    return Ended(began, heard=_heard(hub, gid))
                while True:
                    left = end - self.clock()
                    if left <= 0 or not self.wait(woken, left):
                        return Ended(began, deadline=end)
                    # A message of the game; or, when it was not subscribed here at the
                    # caller's read, the confirmation of the subscription this hold made:
                    # whatever came before it is read now.
                    if any(hub.take(woken)):
                        return Ended(began, heard=_heard(hub, gid) if before[0] else None)
                    if not before[0]:
                        return Ended(began)
        finally:
            with self.lock:
                self.held -= 1

    def read(self, hub: Any, gid: str, ended: Ended | None, read: Callable[[], Any]) -> Any:
        """`read()` (the store's answer for `gid`), or, after a hold (`ended`), the answer
        of a read of the game that began after that hold had ended (see `Ended.served_by`;
        waiting for it if it is under way): the polls that one message (or one pace) ends
        read the store once, not once each. Every read is offered to the polls after it."""
        if ended is not None:
            with self.lock:
                other = self.reads.get(gid)
            if other is not None and ended.served_by(other) and other.done.wait(SHARED_WAIT) and other.ok:
                self.shared += 1
                return other.got
        mine = Read(self.clock(), _heard(hub, gid))
        with self.lock:
            if len(self.reads) >= MEMORY and gid not in self.reads:
                self.reads.clear()
            self.reads[gid] = mine
        try:
            mine.got = read()
            mine.ok = True
            return mine.got
        finally:
            mine.done.set()

    @staticmethod
    def wait(woken: Any, seconds: float) -> bool:
        """Whether the game's waiter was set within `seconds` (replaceable in tests)."""
        return bool(woken.wait(seconds))
