"""The games aggregate: a game's meta, seats and keys, the open step, orders, the
commit of a resolved step, events and history, the set of running games, and the
fast order path's intake (with its per-process caches of parsed states and seat keys).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import redis

from service.store import archive, numbering
from service.store.base import Base, Client
from service.store.json import dumps, loads
from service.store.keys import INDEX_BUCKETS, INDEXES
from service.store.numbering import Counts, Numbered, Start

#: Parsed engine states kept per process for the order path, by game (see `Store.intake`).
STATE_CACHE_GAMES = 256
#: Resolution reads a flip answered and no resolution took yet, kept per process (`Store.primed`).
PRIMED_STEPS = 256

#: The fields of a step hash `Store.public_step` reads, in its order (`phase_now.lua`).
PUBLIC_STEP_FIELDS = ("id", "status", "kind", "sealed", "expected", "opened_at", "deadline", "extended",
                      "paused_at")

#: Seconds a registry entry may wait for its game (`Games.create` writes it before the
#: game's script): after that, a registered game without a meta is forgotten by the
#: repair (a creation that died half-way; a lobby expiry cut short). Far above any
#: creation's time, far below the lobby's life.
REGISTRY_GRACE = 300

#: Seat keys kept per process for the fast order path, by (game, kid) (see `Store.order_key`).
KEY_CACHE_SIZE = 4096


@dataclass(frozen=True)
class Outcome:
    """What a script answered: a status word and up to two values."""

    status: str
    value: str = ""
    extra: str = ""


@dataclass(frozen=True)
class OrderKey:
    """A seat's key as the order path last verified it (see `Store.order_key`)."""

    seat: int
    x: str  # the public key text in the seat's record
    key: Any  # its parsed form (`service.protocol.crypto.PublicKey`)
    title: str  # the game's title


@dataclass(frozen=True)
class Intake:
    """One atomic read for an order (`Store.intake`)."""

    holder: str | None  # who holds the key: a seat number as text, "host", or None
    seat: dict[str, Any] | None  # that seat's record
    meta: dict[str, str]  # status, title, host_key; empty when there is no such game
    phase: dict[str, str]
    state: Any  # never to be mutated: shared between requests
    now: float



def _newer(held: str, version: str) -> bool:
    """Whether state version `held` is newer than `version` (of the same step: versions
    count the actions within a step)."""
    try:
        return int(held or 0) > int(version or 0)
    except ValueError:
        return False


def _text(x: Any) -> str:
    return x.decode() if isinstance(x, bytes) else str(x)


def _flat(pairs: list[Any]) -> dict[str, str]:
    """A flat field/value list (HGETALL inside a script) as a dict of text."""
    it = iter(pairs)
    return {_text(f): _text(v) for f, v in zip(it, it, strict=True)}


class Games(Base):
    """Mixin of `Store`: every key of a game but its channels' (see `Deliveries`)."""

    def __init__(self, client: Client, prefix: str = "kontor") -> None:
        super().__init__(client, prefix)
        # game -> ('<step id>.<state version>', parsed state). Safe to share: a step's
        # state changes only with its version (commit.lua writes state and step id
        # together; an action, act.lua, bumps the step's `v` with the state), and the
        # engine never mutates a state it is given.
        self._states: dict[str, tuple[str, Any]] = {}
        # game -> (step id, state version, state text): the open step's state as a live
        # stream's read last found it (`live_read`, with step_state.lua: atomically), parsed
        # only when an order of that step needs it (`step_state`), so a process that serves
        # a game's streams takes its orders without a read of their own.
        self._offered: dict[str, tuple[str, str, Any]] = {}
        # (game, kid) -> OrderKey: a seat's key as a verified order last found it. Only a
        # hint: `submit_signed` re-checks it inside the store before it stores anything.
        self._order_keys: dict[tuple[str, str], OrderKey] = {}
        # (game, step) -> what `resolve_read` answers, as the order that flipped the step
        # found it (`submit_signed` with `resolving`), for the resolution here to take
        # (once) instead of reading it again.
        self._primed: dict[tuple[str, int], tuple[dict[str, str], dict[str, str], Any,
                                                  dict[int, dict[str, Any]]]] = {}
        # The fast order path's own connections (see `_direct`): the scripts' (`Base.lean`).
        self._fast = self.lean
        # The registries of before the buckets were found empty (`migrate_registries`).
        self._migrated = False

    # -- games and seats ----------------------------------------------------------------
    def create(self, game: str, meta: dict[str, str], host_kid: str) -> bool:
        """Create a game's meta record (create.lua; False if the id exists already), with its
        entries in the registry and the listing indexes. Those are other slots than the
        game's, so each is a call of its own, in an order that leaves nothing the sweep
        cannot find: the registry entry first (an intent: an entry whose game never came
        to be is dropped by `repair_indexes` after `REGISTRY_GRACE`), then the game's
        script, then the listing indexes (`repair_indexes` adds what a crash left out).
        One round trip on one server (a pipeline keeps its order there), three on a cluster."""
        created = meta["created_at"]
        keys = [self.key(game, "meta"), self.key(game, "keys")]
        flat = [x for kv in meta.items() for x in kv]
        script = self.scripts["create"]
        index = [(self.index_key(i, game), {game: float(created)}) for i in ("all", "lobby")]
        if self._cluster:
            self.r.zadd(self.games_key(game), {game: float(created)}, nx=True)
            if not script(keys=keys, args=[game, host_kid, *flat]):
                return False
            pipe = self.r.pipeline(transaction=False)
            for key, entry in index:
                pipe.zadd(key, entry)
            pipe.execute()
            return True
        for _ in range(2):
            pipe = self.r.pipeline(transaction=False)
            pipe.zadd(self.games_key(game), {game: float(created)}, nx=True)
            pipe.evalsha(script.sha, len(keys), *keys, game, host_kid, *flat)
            for key, entry in index:
                pipe.zadd(key, entry, nx=True)
            out = pipe.execute(raise_on_error=False)
            if not isinstance(out[1], redis.exceptions.NoScriptError):
                break
            self.r.script_load(script.script)  # a restarted store: load it, and again
        for x in out:
            if isinstance(x, Exception):
                raise x
        # An id taken already (an existing game's: ids are 40 random bits, so hardly ever):
        # NX changed none of its entries; a `lobby` entry added for a game that has moved on
        # is taken out by the repair, and a listing skips it until then (its status differs).
        return bool(out[1])

    @property
    def _cluster(self) -> bool:
        return isinstance(self.r, redis.RedisCluster)

    def listing(self, limit: int, before: float | None, status: str | None = None
                ) -> tuple[list[tuple[str, dict[str, str], int]], float | None]:
        """The newest games of index `status` (None: every game) created before `before`:
        (id, meta, seats taken) each, and the next page's cursor (the last entry's
        creation time; None when there is no more). See `top`; then the metas of the
        page's games (a second round trip)."""
        merged = self.top(status or "all", limit, before)
        pipe = self.r.pipeline(transaction=False)
        fields = ("title", "name", "status", "seats", "created_at")
        for g, _ in merged:
            pipe.hmget(self.key(g, "meta"), *fields)
            pipe.hlen(self.key(g, "seats"))
        out = pipe.execute()
        rows = [(g, dict(zip(fields, out[2 * i], strict=True)), int(out[2 * i + 1])) for i, (g, _) in enumerate(merged)]
        # An entry whose game vanished (or moved on) in between is skipped: the sweeper
        # repairs the index (`repair_indexes`).
        cursor = float(merged[-1][1]) if len(merged) == limit else None
        kept = [(g, m, n) for g, m, n in rows if m["status"] is not None and status in (None, m["status"])]
        return kept, cursor

    def top(self, index: str, limit: int, before: float | None) -> list[tuple[str, float]]:
        """The first `limit` entries of listing index `index` below `before` (newest
        first; ties by id, descending), merged from its buckets: one round trip reads
        the top `per` of each bucket (about twice a bucket's share of the page), and only
        a bucket whose last entry read still falls inside the page is read again, deeper.
        So a page costs the same however many games are stored."""
        top = f"({before!r}" if before is not None else "+inf"
        keys = [self.bucket_key(index, b) for b in range(INDEX_BUCKETS)]
        per = min(limit, 2 * -(-limit // INDEX_BUCKETS) + 2)
        got: list[list[tuple[str, float]]] = [[] for _ in keys]
        todo = list(range(INDEX_BUCKETS))
        while todo:
            pipe = self.r.pipeline(transaction=False)
            for b in todo:
                pipe.zrevrangebyscore(keys[b], top, "-inf", start=len(got[b]), num=per, withscores=True)
            full = []
            for b, entries in zip(todo, pipe.execute(), strict=True):
                got[b] += [(g, float(sc)) for g, sc in entries]
                if len(entries) == per:
                    full.append(b)  # may hold more
            merged = sorted((e for bucket in got for e in bucket), key=lambda e: (e[1], e[0]), reverse=True)[:limit]
            if len(merged) < limit:
                todo = full  # the page is not full yet: every bucket that may hold more
            else:
                cut = (merged[-1][1], merged[-1][0])
                todo = [b for b in full if (got[b][-1][1], got[b][-1][0]) >= cut]
            per = limit
        return merged

    def meta(self, game: str) -> dict[str, str]:
        return self.r.hgetall(self.key(game, "meta"))  # type: ignore[return-value]

    def seats(self, game: str) -> dict[int, dict[str, Any]]:
        raw: dict[str, str] = self.r.hgetall(self.key(game, "seats"))  # type: ignore[assignment]
        return seats_of(raw)

    def holder(self, game: str, kid: str) -> str | None:
        """Who a key belongs to in this game: a seat number as text, "host", or None."""
        return self.r.hget(self.key(game, "keys"), kid)  # type: ignore[return-value]

    def outline(self, game: str) -> tuple[dict[str, str], set[int], int]:
        """The game's meta (empty when there is no such game), its taken seats and the
        open step's number (0 before the start), in one round trip."""
        pipe = self.r.pipeline(transaction=False)
        pipe.hgetall(self.key(game, "meta"))
        pipe.hkeys(self.key(game, "seats"))
        pipe.hget(self.key(game, "phase"), "id")
        meta, seats, phase = pipe.execute()
        return meta, {int(s) for s in seats}, int(phase or 0)

    def credentials(self, game: str, kid: str) -> tuple[str | None, dict[str, Any] | None, str | None, float]:
        """What checking a signed read needs, in one round trip: who holds `kid` (a seat
        number as text, "host", or None), the seat records' entry for it, the host's
        public key (None when there is no such game), and the server clock."""
        keys = [self.key(game, "keys"), self.key(game, "seats"), self.key(game, "meta")]
        holder, rec, host_key, (sec, micro) = self.scripts["credentials"](keys=keys, args=[kid])
        return holder, loads(rec) if rec else None, host_key, float(sec) + int(micro) / 1e6

    def intake(self, game: str, kid: str) -> Intake:
        """What an order needs, in one round trip (one script): `credentials` for `kid`
        (only the holder's seat record), the meta fields the order path reads, the open
        step, the server clock, and the engine state (parsed once per step and process)."""
        cached = self._states.get(game)
        keys = [self.key(game, p) for p in ("keys", "seats", "meta", "phase", "state")]
        held = cached[0] if cached else ""
        holder, seat, meta, flat, (sec, micro), raw = self.scripts["intake"](keys=keys, args=[kid, held])
        phase = dict(zip(flat[::2], flat[1::2], strict=True))
        version = f"{phase.get('id')}.{phase.get('v', '0')}"
        if raw is None and cached is not None and version == cached[0]:
            state = cached[1]
        else:
            state = loads(raw) if raw else None
            if state is not None and phase.get("id"):
                if len(self._states) >= STATE_CACHE_GAMES:
                    self._states.clear()
                self._states[game] = (version, state)
        return Intake(holder, loads(seat) if seat else None,
                      {k: v for k, v in zip(("status", "title", "host_key"), meta, strict=True) if v is not None},
                      phase, state, float(sec) + int(micro) / 1e6)

    # -- the fast order path (service/http/fastpath.py) --------------------------------------
    def remember_key(self, game: str, kid: str, entry: OrderKey) -> None:
        """Keep a seat's key that just verified an order (per process, bounded)."""
        if len(self._order_keys) >= KEY_CACHE_SIZE:
            self._order_keys.clear()
        self._order_keys[(game, kid)] = entry

    def order_key(self, game: str, kid: str) -> OrderKey | None:
        """The seat key kept for `kid` in this game, if any: a hint, never trusted alone."""
        return self._order_keys.get((game, kid))

    def cached_state(self, game: str, step: str) -> Any:
        """The parsed engine state of step `step` if this process holds one (of some
        version of the step: an action may have changed it since), else None."""
        cached = self._states.get(game)
        return cached[1] if cached is not None and cached[0].split(".")[0] == step else None

    def step_state(self, game: str, step: str) -> tuple[Any, str] | None:
        """The parsed engine state of step `step` and its version (`v`, bumped by each
        action): the one this process holds, else the one a live stream's read of the
        game found (`live_read`, by the same script), else read (one round trip: the
        state, the open step's id and version, atomically) and held, when `step` is the
        open step; else None. Live games move on every few seconds, so the fast order path reads a
        new step's state here rather than going the full way; a held state an action has
        changed since is refused by order.lua (its version differs), and the full path
        then reads the new one."""
        cached = self._states.get(game)
        if cached is not None:
            held, _, version = cached[0].partition(".")
            if held == step:
                return cached[1], version
        offered = self._offered.get(game)
        if offered is not None and offered[0] == step:  # as a stream's read found it (`_offer`)
            self._offered.pop(game, None)
            _, version, raw = offered
        else:
            out = self._direct("step_state", [self.key(game, "phase"), self.key(game, "state")], [])
            if out is None:  # the connection failed: the full path answers
                return None
            current, version, raw = (x.decode() if isinstance(x, bytes) else x for x in out)
            if current != step or not raw:
                return None
        state = loads(raw)
        if len(self._states) >= STATE_CACHE_GAMES:
            self._states.clear()
        self._states[game] = (f"{step}.{version}", state)
        return state, version

    def public_step(self, game: str) -> tuple[str, tuple[str | None, ...], tuple[int, ...]] | None:
        """The open step as the public sees it, in one atomic command (`phase_now.lua`):
        the game's status, the step's summary fields (`PUBLIC_STEP_FIELDS`, None where
        unset; the script names them in that order) and the seats that answered it,
        sorted. None when there is no such game or no step yet, or the connection failed:
        the full path answers then."""
        out = self._direct("phase_now", [self.key(game, "meta"), self.key(game, "phase")], [])
        if not out or len(out) < 3:
            return None
        status, fields, answered = out

        def text(x: Any) -> Any:
            return x.decode() if isinstance(x, bytes) else x

        return (text(status), tuple(text(x) for x in fields), tuple(sorted(int(text(s)) for s in answered)))

    def submit_signed(self, game: str, phase: int, seat: int, kid: str, entry: OrderKey, iat: str, exp: str,
                      jti: str, head: str, tail: str, skew: int, max_age: int,
                      version: str = "0", resolving: Any = None) -> tuple[str, bool, float] | None:
        """Store a verified order in one script (order.lua) after re-checking, inside the
        store, everything the web process took from its caches: the kid still holds the
        seat with that key, the game (of that title) runs, the step is open and asks the
        seat, iat/exp are in bounds on the server clock, the one-time id is unused. The
        stored record is `head + receipt time + tail`; `version`: the state version the
        order was validated against (`step_state`). `resolving`: that very state, when
        this process resolves the steps it flips (`service/http/inweb.py`): an order that
        flips the step then has the script answer the rest of what resolving it reads,
        kept for this process's `resolve_read` of the step (`prime`). Returns (status
        'stored' or 'trigger', replaced, server time), or None when anything is off
        (nothing changed)."""
        keys = [self.key(game, "keys"), self.key(game, "seats"), self.key(game, "meta"), self.key(game, "phase"),
                self.key(game, "orders", phase), self.key(game, "jti", phase)]
        out = self._direct("order", keys, [kid, seat, entry.x, entry.title, phase, iat, exp, skew, max_age,
                                           max_age + skew, head, tail, jti, version,
                                           "" if resolving is None else "1"])
        if out is None:
            return None
        if len(out) > 4 and resolving is not None:  # the flip's read (order.lua, ARGV[15])
            self.prime(game, phase, _flat(out[4]), _flat(out[5]), resolving, out[6])
        out = [_text(x) for x in out[:4]]
        if out[0] == "refused":
            return None
        return str(out[0]), int(out[1]) == 1, float(out[2]) + int(out[3]) / 1e6

    def prime(self, game: str, phase: int, meta: dict[str, str], ph: dict[str, str], state: Any,
              orders: list[Any]) -> None:
        """Keep what the next `resolve_read` of step `phase` answers, as a flip found it
        atomically (the meta, the step's hash after the flip, its orders, flat from the
        script) with the state of the step's version `ph["v"]`, which the flip checked.
        Read once: a resolution that must start again (an action moved the state: its
        commit is refused) reads the store. Kept at most `PRIMED_STEPS` at a time."""
        o = iter(orders)
        if len(self._primed) >= PRIMED_STEPS:
            self._primed.clear()
        self._primed[(game, phase)] = (meta, ph, state, {int(_text(s)): loads(v) for s, v in zip(o, o, strict=True)})

    def _direct(self, name: str, keys: list[str], args: list[Any]) -> Any:
        """Run a script on a connection the fast path keeps for itself (`Direct`); None
        when the connection failed (the caller leaves the order to the full path)."""
        return self._fast.run(self.scripts[name], keys, args)

    def join(self, game: str, seat: int | None, record: dict[str, Any], kid: str, ttl: int) -> Outcome:
        """Take a seat in the lobby, unless the lobby's `ttl` (seconds from creation) is over."""
        keys = [self.key(game, "meta"), self.key(game, "seats"), self.key(game, "keys")]
        out = self._run("join", keys, ["" if seat is None else seat, dumps(record), kid, ttl])
        return Outcome(*out)

    def set_seat(self, game: str, seat: int, record: dict[str, Any], kid: str | None) -> Outcome:
        """Give `seat` the holder of `record` (`kid`: its player key, none for a bot). When
        the holder changes, the seat's contact leaves with the former holder (seat.lua):
        a former contact of a running game (`Deliveries.gone`), dropped in the lobby."""
        keys = [self.key(game, "seats"), self.key(game, "keys"), self.key(game, "formers"),
                self.key(game, "contact"), self.key(game, "gone"), self.key(game, "meta")]
        return Outcome(*self._run("seat", keys, [seat, dumps(record), kid or ""]))

    def former(self, game: str, kid: str) -> dict[str, Any] | None:
        """A former seat key of the game ({seat, public_key}): it held a seat until the
        host gave the seat to a bot or another key; None for any other key."""
        raw = self.r.hget(self.key(game, "formers"), kid)
        return loads(raw) if raw else None  # type: ignore[arg-type]

    def formers(self, game: str) -> dict[str, dict[str, Any]]:
        """Every former seat key of the game: kid -> {seat, public_key}."""
        raw: dict[str, str] = self.r.hgetall(self.key(game, "formers"))  # type: ignore[assignment]
        return {kid: loads(v) for kid, v in raw.items()}

    # -- the open step ------------------------------------------------------------------
    def snapshot(self, game: str) -> tuple[dict[str, str], dict[str, str], Any]:
        """meta, phase and state, read in one round trip."""
        meta, phase, state, _ = self.snapshot_at(game)
        return meta, phase, state

    def snapshot_at(self, game: str) -> tuple[dict[str, str], dict[str, str], Any, float]:
        """As `snapshot`, plus the server clock, still in one round trip (an order's
        receipt time, without a round trip of its own): one script (snapshot.lua), which
        reads the store's clock inside the game's slot."""
        keys = [self.key(game, "meta"), self.key(game, "phase"), self.key(game, "state")]
        meta, phase, state, (sec, micro) = self.scripts["snapshot"](keys=keys, args=[])
        m, p = iter(meta), iter(phase)
        return dict(zip(m, m, strict=True)), dict(zip(p, p, strict=True)), (loads(state) if state else None), \
            float(sec) + int(micro) / 1e6

    def resolve_read(self, game: str, phase: int) -> tuple[dict[str, str], dict[str, str], Any,
                                                           dict[int, dict[str, Any]]]:
        """What resolving step `phase` reads, in one round trip (resolve_read.lua): meta,
        phase and state as `snapshot`, and the step's stored orders as `orders`; none
        when the order that flipped the step in this process answered it (`prime`)."""
        primed = self._primed.pop((game, phase), None)
        if primed is not None:  # as the flip in this process answered it (`prime`)
            return primed
        keys = [self.key(game, "meta"), self.key(game, "phase"), self.key(game, "state"),
                self.key(game, "orders", phase)]
        meta, ph, state, orders = self.scripts["resolve_read"](keys=keys, args=[])
        m, p, o = iter(meta), iter(ph), iter(orders)
        return (dict(zip(m, m, strict=True)), dict(zip(p, p, strict=True)), (loads(state) if state else None),
                {int(s): loads(v) for s, v in zip(o, o, strict=True)})

    def phase(self, game: str) -> dict[str, str]:
        return self.r.hgetall(self.key(game, "phase"))  # type: ignore[return-value]

    def state(self, game: str) -> Any:
        raw = self.r.get(self.key(game, "state"))
        return loads(raw) if raw else None  # type: ignore[arg-type]

    def orders(self, game: str, phase: int) -> dict[int, dict[str, Any]]:
        raw: dict[str, str] = self.r.hgetall(self.key(game, "orders", phase))  # type: ignore[assignment]
        return {int(s): loads(v) for s, v in raw.items()}

    def answered(self, game: str, phase: int) -> list[int]:
        return sorted(int(s) for s in self.r.hkeys(self.key(game, "orders", phase)))  # type: ignore[union-attr]

    def submit(self, game: str, phase: int, seat: int, record: dict[str, Any],
               jti: str | None, ttl: int, resolving: tuple[Any, int] | None = None) -> Outcome:
        """Store an order (submit.lua). `resolving`: the state the order was validated
        against and its version, when this process resolves the steps it flips
        (`service/http/inweb.py`): a flip then answers the rest of what resolving the step
        reads, kept for this process's `resolve_read` (`prime`) when the step's version
        is still that state's."""
        keys = [self.key(game, "phase"), self.key(game, "orders", phase), self.key(game, "jti", phase)]
        args: list[Any] = [phase, seat, dumps(record), ttl if jti else 0, jti or ""]
        if resolving is not None:
            keys.append(self.key(game, "meta"))
            args.append("1")
        out = self.scripts["submit"](keys=keys, args=args)
        if len(out) > 4 and resolving is not None:  # the flip's read
            ph = _flat(out[5])
            if int(ph.get("v") or 0) == resolving[1]:  # else an action moved the state: read it
                self.prime(game, phase, _flat(out[4]), ph, resolving[0], out[6])
        out = [_text(x) for x in out[:4]]
        # The script answers {status, phase id, phase status[, replaced]}: `extra` is the replaced flag.
        return Outcome(out[0], out[1], out[3] if len(out) > 3 else "")

    def expire(self, game: str, phase: int, mode: str, extension: int) -> Outcome:
        return Outcome(*self._run("expire", [self.key(game, "phase")], [phase, mode, extension]))

    def move_deadline(self, game: str, phase: int, deadline: float, read: float | None = None,
                      **fields: str) -> Outcome:
        """Move the open step `phase`'s deadline to `deadline` (move_deadline.lua): a
        compare-and-set on the step, still collecting, and on the deadline as `read`
        (None: whatever it is), setting `fields` of the step hash in the same write.
        Outcome('moved', new deadline) or ('stale', why). The caller plans the new
        deadline's check (`Jobs.deadline`)."""
        args: list[Any] = [phase, f"{deadline:.6f}", "" if read is None else f"{read:.6f}"]
        for name, value in fields.items():
            args += [name, value]
        return Outcome(*self._run("move_deadline", [self.key(game, "phase")], args))

    def clock_order(self, game: str, phase: int, seat: int, record: dict[str, Any], due: float,
                    events: list[dict[str, Any]], read: tuple[str, str] = ("", "")) -> Outcome:
        """Store the order a time bank's clock made for `seat`, out of time since `due`, with
        its `events`, when the seat has no order yet (clock.lua). Outcome('stored' or
        'trigger', '', last event number), or 'answered' (the seat's own order stands),
        'early', 'paused', 'stale' (nothing changed; 'stale' also when the step's
        `banks` or `pauses` differ from `read`, as the deadline was worked out from)."""
        keys = [self.key(game, "phase"), self.key(game, "orders", phase), self.key(game, "meta"),
                self.key(game, "events")]
        out = self._run("clock", keys, [phase, seat, dumps(record), f"{due:.6f}", *read,
                                        *(dumps(e) for e in events)])
        if out[0] in ("stored", "trigger") and archive.filled(int(out[1]), len(events)):
            self.compact_events(game)
        return Outcome(out[0], "", out[1])
    def pause(self, game: str) -> list[str]:
        """Stop the open step's clock (pause.lua): ['ok', step id, paused_at, deadline],
        ['paused', step id, paused_at] (paused already), ['locked', step id]
        (resolving), or the game's status ('no_game', 'lobby', 'finished')."""
        return self._run("pause", [self.key(game, "meta"), self.key(game, "phase")], [])

    def resume(self, game: str, phase: int) -> list[str]:
        """Start the paused step `phase`'s clock again (resume.lua): its deadline moves on
        by exactly the time paused, the pause joins the step's `pauses`, and the step
        flips to `resolving` when every asked seat has answered meanwhile: ['ok', step
        id, new deadline, shift, paused_at, now, 'trigger' or 'collecting'],
        ['not_paused', id], ['stale', id] or the game's status."""
        keys = [self.key(game, "meta"), self.key(game, "phase"), self.key(game, "orders", phase)]
        return self._run("resume", keys, [phase])

    def append_events(self, game: str, events: list[dict[str, Any]]) -> Outcome:
        """Append events outside a commit (messages): Outcome('ok', first, last) or
        'no_game' / 'finished'."""
        out = self._run("append", [self.key(game, "meta"), self.key(game, "events")], [dumps(e) for e in events])
        if out[0] == "ok" and archive.filled(int(out[2]), len(events)):
            self.compact_events(game)
        return Outcome(out[0], out[1] if len(out) > 1 else "", out[2] if len(out) > 2 else "")

    def state_version(self, phase: dict[str, str]) -> int:
        """The state version of an open step as read (`phase` hash): how many actions
        changed its state since it opened."""
        return int(phase.get("v") or 0)

    def act(self, game: str, phase: int, version: int, state: Any, record: dict[str, Any],
            events: list[dict[str, Any]], jti: str | None, ttl: int) -> Outcome:
        """Commit an unprompted action in one script (act.lua): compare-and-set on the
        open step `phase` and its state `version`, the one-time id `jti` recorded at
        once, the new state, the history `record` and the `events` appended.
        Outcome('ok', first, last), or 'moved' (read again), 'replayed', 'no_game',
        'lobby', 'finished'."""
        keys = [self.key(game, "meta"), self.key(game, "phase"), self.key(game, "state"), self.key(game, "events"),
                self.key(game, "actjti")]
        out = self._run("act", keys, [phase, version, dumps(state), jti or "", ttl, dumps(record),
                                      *(dumps(e) for e in events)])
        if out[0] == "ok" and archive.filled(int(out[2]), len(events)):
            self.compact_events(game)
        return Outcome(out[0], out[1] if len(out) > 1 else "", out[2] if len(out) > 2 else "")

    def bump_attempt(self, game: str, now: float) -> int:
        """Count one more re-enqueue of a stuck step and restart its stuck clock."""
        pipe = self.r.pipeline(transaction=True)
        pipe.hincrby(self.key(game, "phase"), "attempt", 1)
        pipe.hset(self.key(game, "phase"), "flipped_at", f"{now:.6f}")
        return int(pipe.execute()[0])

    # -- history and events -------------------------------------------------------------
    def history(self, game: str, events: bool = True) -> list[dict[str, Any]]:
        """The resolved steps' records, in the published form (`kontor-history/1` steps):
        each rides on its step's first event (field `h`; a game stored before that keeps
        them in its `history` list). A record stored without its engine events (`ev`: how
        many; they are the step's commit events after `step_resolved`) gets them back from
        the events; `events=False` leaves them out of such records (orders only needed).
        A step in which seats took unprompted actions has them, in order, as `actions`
        ({seat, action, submitted, state_sha256, events}: applied before its orders).
        Actions of the open step (not resolved yet) are in no record yet.

        A rollback (rollback.lua) is an entry of its own where it happened, `{"rollback":
        {"to_phase", "at_phase", "new_phase", "orders": {seat: order discarded unresolved},
        "actions": [the open step's undone actions], "at": time}}`, and every step it
        undid is marked `"abandoned": true` (`engine.core.rollback`)."""
        return self.history_and_open(game, events)[0]

    def history_and_open(self, game: str, events: bool = True) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """`history`, and the unprompted actions of the open step so far (in no record yet)."""
        legacy = self.r.lrange(self.key(game, "history"), 0, -1)
        rows = self._event_rows(game, 1, None, None)
        steps = [loads(x) for x in legacy] if legacy else [loads(f["h"]) for _, _, f in rows if "h" in f]  # type: ignore[union-attr]
        acts: dict[int, list[dict[str, Any]]] = {}
        for _, _, f in rows:  # the actions taken in each step, in order (act.lua's `x`)
            if "x" in f:
                rec = loads(f["x"])
                acts.setdefault(int(rec.pop("phase")), []).append(rec)
        standing: list[dict[str, Any]] = []
        for step in steps:
            if "rollback" in step:
                rb = step["rollback"]
                rb["orders"] = {s: rec["order"] for s, rec in sorted(step.pop("discarded", {}).items(),
                                                                    key=lambda kv: int(kv[0]))}
                rb["at"] = step.pop("at", None)
                if rb["at_phase"] in acts:
                    rb["actions"] = acts.pop(rb["at_phase"])
                for undone in standing:
                    if undone["phase"] >= rb["to_phase"]:
                        undone["abandoned"] = True
                standing = [x for x in standing if x["phase"] < rb["to_phase"]]
                continue
            standing.append(step)
            if step["phase"] in acts:
                step["actions"] = acts.pop(step["phase"])
        by_commit: dict[str, list[dict[str, Any]]] = {}
        for _, ev, f in rows:
            if "c" in f:
                by_commit.setdefault(f["c"], []).append(ev)
        for step in steps:
            n = step.pop("ev", None)
            if n is not None and events:
                made = by_commit.get(str(step["phase"]), [])[1:1 + int(n)]
                step["events"] = [{k: v for k, v in ev.items() if k != "phase"} for ev in made]
        still = [a for acted in acts.values() for a in acted]
        return steps, still

    def rollback(self, game: str, phase: int, version: int | None, no_sealed_orders: bool, proposal: str,
                 state: Any, record: dict[str, Any], nxt: dict[str, Any], events: list[dict[str, Any]]) -> Outcome:
        """Apply a rollback in one script (rollback.lua, which says the rulings): a
        compare-and-set on the open step `phase`, collecting, its state `version` (None:
        any) and the pending `proposal` ('' for none); the restored `state`, the open
        step's orders discarded into the history `record`, the new step `nxt` ({id,
        expected, kind, sealed, seconds, and `fields`: more fields of its step hash, a
        time bank's opening banks}) opened and the `events` appended.
        Outcome('ok', deadline, '<last event> <told> <paused>') or ('refused', why)."""
        keys = [self.key(game, p) for p in ("phase", "state")] + [
            self.key(game, "orders", phase), self.key(game, "events"), self.key(game, "history"),
            self.key(game, "meta"), self.key(game, "contact"), self.key(game, "jti", phase)]
        args = [phase, "" if version is None else version, "1" if no_sealed_orders else "0", proposal,
                dumps(state), dumps(record), nxt["id"], dumps(nxt["expected"]), nxt["kind"],
                "1" if nxt["sealed"] else "0", nxt["seconds"], dumps(nxt["fields"]) if nxt.get("fields") else "",
                *(dumps(e) for e in events)]
        out = self._run("rollback", keys, args)
        if out[0] != "ok":
            return Outcome(out[0], out[1])
        if archive.filled(int(out[2]), len(events)):
            self.compact_events(game)
        return Outcome("ok", out[1], " ".join(out[2:5]))

    def rollback_vote(self, game: str, op: str, phase: int, proposal: str, seat: int | None, needed: list[int],
                      events: list[dict[str, Any]], expires: float = 0.0,
                      record: dict[str, Any] | None = None) -> Outcome:
        """Propose, agree to, refuse or withdraw a rollback that asks for consent, with its
        events, in one script (rollback_vote.lua, which says the rulings).
        Outcome('ok', outcome, last event number) or ('refused', why)."""
        keys = [self.key(game, "meta"), self.key(game, "phase"), self.key(game, "events")]
        args = [op, phase, proposal, "" if seat is None else seat, ",".join(map(str, needed)),
                f"{expires:.6f}", dumps(record or {}), *(dumps(e) for e in events)]
        out = self._run("rollback_vote", keys, args)
        if out[0] == "ok" and out[2] and archive.filled(int(out[2]), len(events)):
            self.compact_events(game)
        return Outcome(*out)

    def _event_rows(self, game: str, lo: int, hi: int | None, count: int | None) -> list[archive.Row]:
        """Events `lo` to `hi` (None: to the last), at most `count`, from the archive and
        the stream (`service.store.archive`)."""
        return archive.read(self.r, self.key(game, "events"), self.key(game, "archive"), lo, hi, count)

    def compact_events(self, game: str) -> int:
        """Pack the game's full chunks of events not packed yet (`service.store.archive`);
        how many were packed now."""
        return archive.compact(self.r, self.scripts["archive"], self.key(game, "events"),
                               self.key(game, "archive"), self.key(game, "meta"), self.key(game, "chunkids"))

    def events(self, game: str, after: int, count: int) -> list[tuple[int, dict[str, Any], str]]:
        """Up to `count` events numbered above `after`: (number, event, time stamp)."""
        return [(n, ev, f["at"]) for n, ev, f in self._event_rows(game, after + 1, None, count)]

    def live_read(self, game: str, after: int, count: int, meta: bool = True) -> tuple[
            dict[str, str], dict[str, str] | None, list[tuple[int, dict[str, Any], str, Counts | None]],
            dict[str, str]]:
        """What a live stream reads when woken, in one round trip (two when it reads
        packed events): the step, the meta (None when `meta` is false: a stream that has
        what it needs of it), up to `count` events numbered above `after` (as `events`,
        each with its stored counts: `service.store.numbering`) and the seats (raw JSON).
        The seats are read after the events, so a seat change before any event read is in
        them (the stream re-checks its caller's key on them before it sends those events).
        The archive's length is read (a second round trip, `service.store.archive.merge`,
        with the seats again, read after it) only when the stream's events do not begin
        right after `after`: none there, or a gap, so some may have been packed (the
        archive holds events 1..k*CHUNK, the stream every later one, so a stream that
        begins with event `after + 1` holds them all). In the same round trip, on the fast
        path's own connections, the open step's state for the order path (`_offer`)."""
        keys = [self.key(game, "phase"), *([self.key(game, "meta")] if meta else []), self.key(game, "events"),
                self.key(game, "seats")]
        commands: list[tuple[Any, ...]] = [("HGETALL", k) for k in keys]
        commands[-2] = ("XRANGE", keys[-2], f"({after}-1", "+", "COUNT", count)
        # On the fast path's own connections (`Direct`: a stream reads after every commit),
        # else through the client. Last, the open step's state as `step_state` reads it
        # (step_state.lua: id, version and state at one moment), offered to the order path.
        script = self.scripts["step_state"]
        commands.append(("EVALSHA", script.sha, 2, keys[0], self.key(game, "state")))
        try:
            answers = self._fast.commands(keys, commands)
        except redis.exceptions.NoScriptError:  # not loaded yet, or the store forgot it (restarted)
            self.r.script_load(script.script)
            try:
                answers = self._fast.commands(keys, commands)
            except redis.exceptions.NoScriptError:  # still not there: read without it
                answers = None
        if answers is not None:
            self._offer(game, answers.pop())
        if answers is None:
            pipe = self.r.pipeline(transaction=False)
            for key in keys[:-2]:
                pipe.hgetall(key)
            pipe.xrange(keys[-2], min=f"({after}-1", max="+", count=count)
            pipe.hgetall(keys[-1])
            answers = pipe.execute()
        else:
            answers = [_mapping(a) for a in answers[:-2]] + [_entries(answers[-2]), _mapping(answers[-1])]
        if meta:
            phase, info, raw, seats = answers
        else:
            (phase, raw, seats), info = answers, None
        if raw and raw[0][0] == f"{after + 1}-1":
            rows = archive.stream_rows(raw)
        else:
            # After the stream, as `merge` needs; the seats again, after whatever it adds.
            again = self.r.pipeline(transaction=False)
            again.llen(self.key(game, "archive"))
            again.hgetall(self.key(game, "seats"))
            packed, seats = again.execute()
            rows = archive.merge(self.r, self.key(game, "archive"), int(packed), after + 1, None, count, raw)
        return phase, info, numbering.rows_of(rows), seats

    def offer_step_state(self, game: str, step: str, version: str, raw: str) -> None:
        """Keep a step's state as a commit's live message carried it (the step it opened,
        the state version and the state's text as the commit wrote them) for `step_state`,
        as a stream's read offers it (`_offer`)."""
        self._offer(game, (step, version, raw))

    def _offer(self, game: str, out: Any) -> None:
        """Keep step_state.lua's answer (id, version, state text) of a live read for
        `step_state`, unless this process holds that step's state already."""
        current, version, raw = (x.decode() if isinstance(x, bytes) else x for x in out)
        if not current or not raw:
            return
        cached = self._states.get(game)
        if cached is not None:
            if cached[0] == f"{current}.{version}":
                return
            step, _, held = cached[0].partition(".")
            if step == current:
                if _newer(held, version):  # a newer version held already (an offer that came late)
                    return
                del self._states[game]  # an older version of this step (an action changed it): the offer is the newer
        offered = self._offered.get(game)
        if offered is not None and offered[0] == current and _newer(offered[1], version):
            return
        if len(self._offered) >= STATE_CACHE_GAMES and game not in self._offered:
            self._offered.clear()
        self._offered[game] = (current, version, raw)

    def event_start(self, game: str, viewer: int | str, after: int) -> Start | None:
        """Where viewer `viewer`'s events after its id `after` begin (None: no such game):
        one script (event_find.lua); a game stored before the counts is counted here."""
        keys = [self.key(game, p) for p in ("meta", "events", "chunkids", "archive")]
        place = numbering.slot(viewer)
        out = self._run("event_find", keys, [place, after, archive.CHUNK])
        if out[0] == "no_game":
            return None
        if out[0] == "ok":
            return Start(int(out[1]), *(numbering.parse(x) or () for x in out[2:4]), int(out[4]))  # type: ignore[arg-type]
        rows = self.numbered(game, 1, None, numbering.zeros(int(self.r.hget(self.key(game, "meta"), "seats") or 0)))
        now = rows[-1][3] if rows else numbering.zeros(0)
        lo, before = 1, numbering.zeros(len(now) - 1)
        for n, _, _, counts in rows:
            if counts[place] > after:
                break
            lo, before = n + 1, counts
        return Start(lo, before, now, len(rows))

    def numbered(self, game: str, lo: int, count: int | None, before: Counts) -> list[Numbered]:
        """Up to `count` events from number `lo` on (None: all), each with its counts
        (`before`: the counts before event `lo`; `service.store.numbering`)."""
        return numbering.count(numbering.rows_of(self._event_rows(game, lo, None, count)), before)

    def numbered_between(self, game: str, first: int, last: int) -> list[Numbered]:
        """Events `first` to `last` (inclusive), each with its counts."""
        return [(n, ev, f["at"], ids) for n, ev, f, ids in numbering.counted(
            self.r, self.key(game, "events"), self.key(game, "archive"), self.key(game, "meta"), first, last)]

    def live_node(self, game: str) -> str:
        """Which server holds the game's `live` channel (sharded pub/sub: the master of
        the game's slot, by the client's map of the cluster): its name, "" on one server."""
        if isinstance(self.r, redis.RedisCluster):
            return str(self.r.get_node_from_key(self.live_channel(game)).name)
        return ""

    def live_pubsub(self, node: str) -> Any:
        """A pub/sub connection to the server `live_node` named (the live streams' hub,
        `service.core.live`, subscribes it to the `live` channels of the games it holds)."""
        if isinstance(self.r, redis.RedisCluster):
            from types import MethodType

            from redis.cluster import ClusterPubSub

            server = self.r.get_node(node_name=node)
            if server is None:
                raise redis.ConnectionError(f"{node} is no longer in the cluster")
            pubsub = self.r.get_redis_connection(server).pubsub()
            # On reconnecting, redis-py subscribes again in one command per slot (as its
            # own cluster pub/sub does): one command for channels of several slots fails.
            # (Without that hook, in another redis-py, a failed resubscription makes the hub
            # subscribe again itself.)
            per_slot = getattr(ClusterPubSub, "_resubscribe_shard_channels", None)
            if per_slot is not None:
                pubsub._resubscribe_shard_channels = MethodType(per_slot, pubsub)
            return pubsub
        return self.r.pubsub()

    def live_refresh(self) -> None:
        """Read the cluster's map again (after a subscription's server went away or moved
        a slot: a failover); nothing on one server."""
        if isinstance(self.r, redis.RedisCluster):
            self.r.nodes_manager.initialize()

    # -- running games (for the sweeper) ------------------------------------------------
    def activate(self, game: str, on: bool = True) -> None:
        (self.r.sadd if on else self.r.srem)(self.active_key(game), game)

    def active(self) -> list[str]:
        """Every game of the running set: every bucket, in one pipelined round trip (on a
        cluster, one batch per node, sent together)."""
        pipe = self.r.pipeline(transaction=False)
        for b in range(INDEX_BUCKETS):
            pipe.smembers(self.active_bucket(b))
        return sorted(g for members in pipe.execute() for g in members)

    def place(self, game: str, status: str, before: str, created: float) -> None:
        """After a commit (`Effects.commit_step`), in one round trip: a game whose status
        changed (`before` -> `status`) into the listing index of its new status and out of
        the others, and, running now, into the running set. Nothing when the status did
        not change (a step of a running game: the commit that made it run put it in the
        set, and only the sweep takes a finished game out). Other slots than the game's,
        so not in its script: a crash before this is repaired by the sweep
        (`Effects.reconcile_active`, `repair_indexes`)."""
        if status == before:
            return
        pipe = self.r.pipeline(transaction=False)
        if status == "running":
            pipe.sadd(self.active_key(game), game)
        for index in INDEXES[:-1]:  # the statuses ("all" holds every game anyway)
            if index == status:
                pipe.zadd(self.index_key(index, game), {game: created})
            else:
                pipe.zrem(self.index_key(index, game), game)
        pipe.execute()

    def phases(self, games: list[str]) -> dict[str, dict[str, str]]:
        pipe = self.r.pipeline(transaction=False)
        for g in games:
            pipe.hgetall(self.key(g, "phase"))
        return dict(zip(games, pipe.execute(), strict=True))

    def events_between(self, game: str, first: int, last: int) -> list[tuple[int, dict[str, Any], str]]:
        """Events `first` to `last` (inclusive)."""
        return [(n, ev, f["at"]) for n, ev, f in self._event_rows(game, first, last, None)]

    # -- the lobby's expiry and the listing indexes (for the sweeper) ---------------------
    def lobby_due(self, before: float, limit: int) -> list[tuple[str, float]]:
        """Games of the lobby index created at or before `before`, with their creation
        times (oldest first per bucket, at most `limit` per bucket): the candidates for
        the expiry notice and the expiry."""
        pipe = self.r.pipeline(transaction=False)
        for b in range(INDEX_BUCKETS):
            pipe.zrangebyscore(self.bucket_key("lobby", b), "-inf", repr(before), start=0, num=limit, withscores=True)
        return [(g, float(score)) for bucket in pipe.execute() for g, score in bucket]

    def lobby_told(self, games: list[str]) -> list[bool]:
        """Whether each game was given its day-before notice (`warn_lobby`)."""
        pipe = self.r.pipeline(transaction=False)
        for g in games:
            pipe.hexists(self.key(g, "meta"), "closing_told")
        return [bool(x) for x in pipe.execute()]

    def warn_lobby(self, game: str, ttl: int, lead: int, event: dict[str, Any]) -> Outcome:
        """Append the day-before `event` (`lobby_closing`) once, when the lobby has `lead`
        seconds or less to live (lobby_warn.lua): Outcome('told', number) or ('kept', why)."""
        out = self._run("lobby_warn", [self.key(game, "meta"), self.key(game, "events")], [ttl, lead, dumps(event)])
        return Outcome(*out)

    def purge_expired(self, game: str, ttl: int) -> Outcome:
        """Remove a lobby game `ttl` seconds after its creation: every key of the game in
        one script (purge.lua), then its entries outside its slot (`forget`).
        Outcome('expired') or ('kept', why). A game already gone ('no_game': a sweep that
        died between the two) is forgotten again, so the next sweep finishes it."""
        seats = int(self.r.hget(self.key(game, "meta"), "seats") or 0)  # type: ignore[arg-type]
        meta, idem = self.key(game, "meta"), self.key(game, "idem")
        keys = [meta, idem, *(k for k in self.game_keys(game, seats) if k not in (meta, idem))]
        out = Outcome(*self._run("purge", keys, [ttl]))
        if out.status == "expired" or out.value == "no_game":
            self.forget(game, seats)
        return out

    def forget(self, game: str, seats: int = 0) -> None:
        """Take a game that is gone (or never came to be) out of everything outside its
        slot: the Idempotency-Key records whose answer is about it (named by its `idem`
        set, deleted with them), the running set, its `seats` seats' digest schedule
        entries (without: they go when due), the listing indexes, and the registry entry
        last, so a crash on the way leaves the registry entry that has the sweep finish it."""
        records: list[str] = list(self.r.smembers(self.key(game, "idem")))  # type: ignore[arg-type]
        pipe = self.r.pipeline(transaction=False)
        for record in records:
            pipe.delete(record)
        pipe.delete(self.key(game, "idem"))
        pipe.srem(self.active_key(game), game)
        for seat in range(seats):
            pipe.zrem(self.digests_key(game), f"{game}:{seat}")
        for key in self.index_keys(game):
            pipe.zrem(key, game)
        pipe.execute()
        self.r.zrem(self.games_key(game), game)

    def migrate_registries(self, batch: int) -> int:
        """Move up to `batch` games each from the running set and the registry of before the
        buckets (one key each: `<prefix>:active`, `<prefix>:games`) into their buckets;
        how many moved. Once a call finds both empty, this process never looks again. A
        crash between the pop and the add loses nothing for good: the reconcile and the
        repair put back what they find missing."""
        if self._migrated:
            return 0
        pipe = self.r.pipeline(transaction=False)
        pipe.spop(f"{self.prefix}:active", batch)
        pipe.zpopmin(f"{self.prefix}:games", batch)
        running, registered = pipe.execute()
        if not running and not registered:
            self._migrated = True
            return 0
        fix = self.r.pipeline(transaction=False)
        for g in running or []:
            fix.sadd(self.active_key(g), g)
        for g, created in registered:
            fix.zadd(self.games_key(g), {g: created}, nx=True)
        fix.execute()
        return len(running or []) + len(registered)

    def registered(self) -> int:
        """How many games the registry holds (every bucket)."""
        pipe = self.r.pipeline(transaction=False)
        for b in range(INDEX_BUCKETS):
            pipe.zcard(self.registry_bucket(b))
        return sum(int(n) for n in pipe.execute())

    def registry_slice(self, key: str, batch: int) -> tuple[list[int], list[list[tuple[str, float]]]]:
        """The next entries of every registry bucket on a walk whose place is kept in `key`
        (one offset per bucket): about `batch` in all, `batch / INDEX_BUCKETS` of each
        bucket (one pipelined round trip), so a walk of every game takes as many passes
        as one registry key did. (The offsets, the entries of each bucket.)"""
        raw = str(self.r.get(key) or "").split()
        offsets = [int(x) for x in raw] if len(raw) == INDEX_BUCKETS else [0] * INDEX_BUCKETS
        per = max(1, -(-batch // INDEX_BUCKETS))
        pipe = self.r.pipeline(transaction=False)
        for b, offset in enumerate(offsets):
            pipe.zrange(self.registry_bucket(b), offset, offset + per - 1, withscores=True)
        return offsets, [[(g, float(sc)) for g, sc in entries] for entries in pipe.execute()]

    def walked(self, key: str, offsets: list[int], got: list[list[tuple[str, float]]], batch: int,
               removed: dict[int, int] | None = None) -> None:
        """Keep the walk's place (`registry_slice`): each bucket on by what was read
        (less what was removed from it), or back to its start once it ran out."""
        per = max(1, -(-batch // INDEX_BUCKETS))
        nxt = [o + len(g) - (removed or {}).get(b, 0) if len(g) == per else 0
               for b, (o, g) in enumerate(zip(offsets, got, strict=True))]
        self.r.set(key, " ".join(map(str, nxt)))

    def repair_indexes(self, batch: int, now: float) -> tuple[list[str], list[str]]:
        """One step of the registry's and the listing indexes' repair (walks whose places
        are kept in the store go round): the next `batch` games of the registry each put
        into the index of its status and into `all` (and out of the others) where it was
        not, and a registered game without a meta, `REGISTRY_GRACE` after its creation
        time (a creation that never came to be, or a lobby expiry cut short), forgotten
        (`forget`); then the next `batch` entries of one index bucket whose game has
        vanished taken out, and each whose game exists but is not registered registered.
        (added or re-registered, removed)."""
        raw = str(self.r.get(self.index_check_key) or "").split()
        bucket, offset = (int(raw[0]), int(raw[1])) if len(raw) == 2 else (0, 0)
        offsets, got = self.registry_slice(self.registry_check_key, batch)
        ids = [(b, g, created) for b, entries in enumerate(got) for g, created in entries]
        added: list[str] = []
        removed: list[str] = []
        dropped: dict[int, int] = {}
        if ids:
            pipe = self.r.pipeline(transaction=False)
            for _, g, _ in ids:
                pipe.hmget(self.key(g, "meta"), "status", "created_at")
                for index in INDEXES:
                    pipe.zscore(self.index_key(index, g), g)
            out = pipe.execute()
            step = 1 + len(INDEXES)
            fix = self.r.pipeline(transaction=False)
            for i, (b, g, registered_at) in enumerate(ids):
                (status, created), scores = out[i * step], out[i * step + 1:(i + 1) * step]
                if status is None:
                    if registered_at < now - REGISTRY_GRACE:
                        self.forget(g)
                        removed.append(g)
                        dropped[b] = dropped.get(b, 0) + 1
                    continue
                wrong = False
                for index, score in zip(INDEXES, scores, strict=True):
                    if index in (status, "all") and score is None:
                        fix.zadd(self.index_key(index, g), {g: float(created)})
                        wrong = True
                    elif index not in (status, "all") and score is not None:
                        fix.zrem(self.index_key(index, g), g)
                        wrong = True
                if wrong:
                    added.append(g)
            fix.execute()
        self.walked(self.registry_check_key, offsets, got, batch, dropped)
        index = INDEXES[bucket // INDEX_BUCKETS]
        key = self.bucket_key(index, bucket % INDEX_BUCKETS)
        entries: list[tuple[str, float]] = self.r.zrange(key, offset, offset + batch - 1, withscores=True)  # type: ignore[assignment]
        gone: list[str] = []
        if entries:
            names = [g for g, _ in entries]
            pipe = self.r.pipeline(transaction=False)
            for g in names:
                pipe.hget(self.key(g, "meta"), "status")
            pipe.zmscore(self.registry_bucket(bucket % INDEX_BUCKETS), names)  # the same bucket
            *statuses, known = pipe.execute()
            gone = [g for g, st in zip(names, statuses, strict=True) if st is None]
            lost = {g: sc for (g, sc), st, k in zip(entries, statuses, known, strict=True)
                    if st is not None and k is None}
            if gone:
                self.r.zrem(key, *gone)
                removed += gone
            if lost:  # a game the registry lost (a creation slower than the grace): back in
                self.r.zadd(self.registry_bucket(bucket % INDEX_BUCKETS), lost, nx=True)
                added += list(lost)
        if len(entries) == batch:
            offset += batch - len(gone)
        else:
            bucket, offset = (bucket + 1) % (INDEX_BUCKETS * len(INDEXES)), 0
        self.r.set(self.index_check_key, f"{bucket} {offset}")
        return added, removed


def _mapping(raw: Any) -> dict[str, str]:
    """An HGETALL's raw answer (a flat list under RESP2) as the client's callback gives it."""
    if isinstance(raw, dict):
        return raw
    it = iter(raw)
    return dict(zip(it, it, strict=True))


def _entries(raw: Any) -> list[tuple[str, dict[str, str]]]:
    """An XRANGE's raw answer as the client's callback gives it: (id, fields) per entry."""
    return [(eid, _mapping(fields)) for eid, fields in raw]


def seats_of(raw: dict[str, str]) -> dict[int, dict[str, Any]]:
    """The seats hash as read (`Games.seats`), by seat in order."""
    return {int(s): loads(v) for s, v in sorted(raw.items(), key=lambda kv: int(kv[0]))}
