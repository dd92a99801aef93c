"""The Redis store: every key of a game, the Lua scripts, and nothing about the rules.

All keys of one game share the hash tag `{g:<id>}` (`kontor:{g:ab12}:state`, ...), so the
scripts and transactions that touch several of them also run on a Redis Cluster.

Per game:
  meta     HASH   title, seats, options, policy, host key, status, seed (never shown), ...
  seats    HASH   seat -> JSON record (name, public key, kid, bot)
  keys     HASH   kid -> seat number, or "host"
  state    STRING the engine state (JSON)
  phase    HASH   the open step: id, status collecting|resolving|finished, expected seats,
                  kind, sealed, deadline (epoch seconds, server clock), extended, ...
  orders:N HASH   seat -> JSON record of the order stored for step N
  history  LIST   per resolved step: {phase, orders, defaults, state_sha256, events} (the
                  digest of the state after the step and the engine's events of it, as the
                  engine made them); with the seed it replays and is checked
  events   STREAM entry id `<n>-1` for event n; field `e` is the event JSON
  jti:X    STRING a one-time token id, kept until the token could no longer be accepted
  idem:C:K STRING an Idempotency-Key record of client C
  contact  HASH   seat -> JSON contact settings (email, webhook, reminder lead, digest,
                  time zone; the webhook secret, never shown after it was made)
  delivery HASH   delivery id -> JSON record of one mail or webhook (status, attempts, ...)
  deliveries:S LIST  seat S's delivery ids, newest first (capped)
  reminded HASH   "<phase>:<seat>" -> time a reminder was sent (once per seat and step)
  digest:S LIST   notices kept for seat S's next digest mail
  press:W  ZSET   times of writer W's recent in-game messages (seat or "host"; the rate
                  limit, `service.core.press`)
Global: `kontor:active` (SET of running games, scanned by the sweeper), `kontor:secret`
(the server secret when none is configured), `kontor:unsubscribed` (SET of addresses).
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass
from importlib import resources
from typing import Any

import redis

from service.store.effects import Effects

LUA = {name: resources.files("service.store.lua").joinpath(f"{name}.lua").read_text() for name in
       ("submit", "expire", "commit", "join", "seat", "intake", "append", "order")}

#: How many delivery records are kept per seat (the oldest are dropped).
DELIVERIES_KEPT = 500

#: Parsed engine states kept per process for the order path, by game (see `Store.intake`).
STATE_CACHE_GAMES = 256

#: Seat keys kept per process for the fast order path, by (game, kid) (see `Store.order_key`).
KEY_CACHE_SIZE = 4096


_COMPACT = json.JSONEncoder(separators=(",", ":"))


def dumps(data: Any) -> str:
    """Compact JSON, as `json.dumps(data, separators=(",", ":"))` writes it."""
    return _COMPACT.encode(data)


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


class Store(Effects):
    def __init__(self, client: redis.Redis, prefix: str = "kontor") -> None:
        self.r = client
        self.prefix = prefix
        self.scripts = {name: client.register_script(src) for name, src in LUA.items()}
        # game -> (step id, parsed state). Safe to share: a step's state never changes once
        # committed (commit.lua writes state and step id together), and the engine never
        # mutates a state it is given.
        self._states: dict[str, tuple[str, Any]] = {}
        self._secret: str | None = None
        # (game, kid) -> OrderKey: a seat's key as a verified order last found it. Only a
        # hint: `submit_signed` re-checks it inside the store before it stores anything.
        self._order_keys: dict[tuple[str, str], OrderKey] = {}
        # The fast order path's own connections (see `_direct`), and the process they belong to.
        self._idle: list[Any] = []
        self._pid = os.getpid()

    def now(self) -> float:
        """The store's clock (one clock for every process)."""
        sec, micro = self.r.time()  # type: ignore[misc]
        return float(sec) + micro / 1e6

    # -- keys ---------------------------------------------------------------------------
    def key(self, game: str, *parts: str | int) -> str:
        return ":".join([f"{self.prefix}:{{g:{game}}}", *map(str, parts)])

    @property
    def active_key(self) -> str:
        return f"{self.prefix}:active"

    def _run(self, name: str, keys: list[str], args: list[Any]) -> list[str]:
        out = self.scripts[name](keys=keys, args=args)
        return [x.decode() if isinstance(x, bytes) else str(x) for x in out]

    # -- games and seats ----------------------------------------------------------------
    def create(self, game: str, meta: dict[str, str], host_kid: str) -> bool:
        """Create a game's meta record; False if the id exists already."""
        if not self.r.hsetnx(self.key(game, "meta"), "id", game):
            return False
        pipe = self.r.pipeline()
        pipe.hset(self.key(game, "meta"), mapping=meta)
        pipe.hset(self.key(game, "keys"), host_kid, "host")
        pipe.zadd(self.games_key, {game: float(meta["created_at"])})
        pipe.execute()
        return True

    @property
    def games_key(self) -> str:
        return f"{self.prefix}:games"

    def listing(self, limit: int, before: float | None) -> list[tuple[str, dict[str, str], int]]:
        """The newest games (created before `before`): id, meta, seats taken."""
        ids = self.r.zrevrangebyscore(self.games_key, f"({before}" if before else "+inf", "-inf",
                                      start=0, num=limit)
        pipe = self.r.pipeline(transaction=False)
        for g in ids:  # type: ignore[union-attr]
            pipe.hmget(self.key(g, "meta"), "title", "name", "status", "seats", "created_at")
            pipe.hlen(self.key(g, "seats"))
        out = pipe.execute()
        fields = ("title", "name", "status", "seats", "created_at")
        return [(g, dict(zip(fields, out[2 * i], strict=True)), out[2 * i + 1]) for i, g in enumerate(ids)]  # type: ignore[arg-type]

    def meta(self, game: str) -> dict[str, str]:
        return self.r.hgetall(self.key(game, "meta"))  # type: ignore[return-value]

    def seats(self, game: str) -> dict[int, dict[str, Any]]:
        raw: dict[str, str] = self.r.hgetall(self.key(game, "seats"))  # type: ignore[assignment]
        return {int(s): json.loads(v) for s, v in sorted(raw.items(), key=lambda kv: int(kv[0]))}

    def holder(self, game: str, kid: str) -> str | None:
        """Who a key belongs to in this game: a seat number as text, "host", or None."""
        return self.r.hget(self.key(game, "keys"), kid)  # type: ignore[return-value]

    def credentials(self, game: str, kid: str) -> tuple[str | None, dict[str, Any] | None, str | None, float]:
        """What checking a signed read needs, in one round trip: who holds `kid` (a seat
        number as text, "host", or None), the seat records' entry for it, the host's
        public key (None when there is no such game), and the server clock."""
        pipe = self.r.pipeline(transaction=True)
        pipe.hget(self.key(game, "keys"), kid)
        pipe.hgetall(self.key(game, "seats"))
        pipe.hget(self.key(game, "meta"), "host_key")
        pipe.time()
        holder, raw, host_key, (sec, micro) = pipe.execute()
        rec = raw.get(holder) if holder not in (None, "host") else None
        return holder, json.loads(rec) if rec else None, host_key, float(sec) + micro / 1e6

    def intake(self, game: str, kid: str) -> Intake:
        """What an order needs, in one round trip (one script): `credentials` for `kid`
        (only the holder's seat record), the meta fields the order path reads, the open
        step, the server clock, and the engine state (parsed once per step and process)."""
        cached = self._states.get(game)
        keys = [self.key(game, p) for p in ("keys", "seats", "meta", "phase", "state")]
        held = cached[0] if cached else ""
        holder, seat, meta, flat, (sec, micro), raw = self.scripts["intake"](keys=keys, args=[kid, held])
        phase = dict(zip(flat[::2], flat[1::2], strict=True))
        if raw is None and cached is not None and phase.get("id") == cached[0]:
            state = cached[1]
        else:
            state = json.loads(raw) if raw else None
            if state is not None and phase.get("id"):
                if len(self._states) >= STATE_CACHE_GAMES:
                    self._states.clear()
                self._states[game] = (phase["id"], state)
        return Intake(holder, json.loads(seat) if seat else None,
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
        """The parsed engine state of step `step` if this process holds it, else None
        (a step's state never changes, so a held one is that step's state for good)."""
        cached = self._states.get(game)
        return cached[1] if cached is not None and cached[0] == step else None

    def submit_signed(self, game: str, phase: int, seat: int, kid: str, entry: OrderKey, iat: str, exp: str,
                      jti: str, head: str, tail: str, skew: int, max_age: int) -> tuple[str, bool, float] | None:
        """Store a verified order in one script (order.lua) after re-checking, inside the
        store, everything the web process took from its caches: the kid still holds the
        seat with that key, the game (of that title) runs, the step is open and asks the
        seat, iat/exp are in bounds on the server clock, the one-time id is unused. The
        stored record is `head + receipt time + tail`. Returns (status 'stored' or
        'trigger', replaced, server time), or None when anything is off (nothing changed)."""
        keys = [self.key(game, "keys"), self.key(game, "seats"), self.key(game, "meta"), self.key(game, "phase"),
                self.key(game, "orders", phase), self.key(game, "jti", jti)]
        out = self._direct("order", keys, [kid, seat, entry.x, entry.title, phase, iat, exp, skew, max_age,
                                           max_age + skew, head, tail])
        if out is None:
            return None
        out = [x.decode() if isinstance(x, bytes) else x for x in out]
        if out[0] == "refused":
            return None
        return str(out[0]), int(out[1]) == 1, float(out[2]) + int(out[3]) / 1e6

    def _direct(self, name: str, keys: list[str], args: list[Any]) -> Any:
        """Run a script on a connection the fast path keeps for itself, without the
        client's pool and retry machinery (a third of an order's client-side cost).
        None when the connection failed: whether the script ran is then unknown, and the
        caller leaves the order to the full path, as a retry of the client would."""
        pool = self.r.connection_pool
        if type(pool) is not redis.ConnectionPool or getattr(pool, "cache", None) is not None:
            return self.scripts[name](keys=keys, args=args)
        if self._pid != os.getpid():  # forked: the parent's connections are not ours
            self._idle, self._pid = [], os.getpid()
        try:
            conn = self._idle.pop()
        except IndexError:
            conn = pool.connection_class(**pool.connection_kwargs)
        script = self.scripts[name]
        try:
            try:
                conn.send_command("EVALSHA", script.sha, len(keys), *keys, *args)
                out = conn.read_response()
            except redis.exceptions.NoScriptError:
                self.r.script_load(script.script)
                conn.send_command("EVALSHA", script.sha, len(keys), *keys, *args)
                out = conn.read_response()
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError):
            conn.disconnect()
            return None
        except BaseException:
            conn.disconnect()
            raise
        self._idle.append(conn)
        return out

    def join(self, game: str, seat: int | None, record: dict[str, Any], kid: str) -> Outcome:
        keys = [self.key(game, "meta"), self.key(game, "seats"), self.key(game, "keys")]
        out = self._run("join", keys, ["" if seat is None else seat, dumps(record), kid])
        return Outcome(*out)

    def set_seat(self, game: str, seat: int, record: dict[str, Any], kid: str | None) -> Outcome:
        keys = [self.key(game, "seats"), self.key(game, "keys")]
        return Outcome(*self._run("seat", keys, [seat, dumps(record), kid or ""]))

    # -- the open step ------------------------------------------------------------------
    def snapshot(self, game: str) -> tuple[dict[str, str], dict[str, str], Any]:
        """meta, phase and state, read in one round trip."""
        meta, phase, state, _ = self.snapshot_at(game)
        return meta, phase, state

    def snapshot_at(self, game: str) -> tuple[dict[str, str], dict[str, str], Any, float]:
        """As `snapshot`, plus the server clock, still in one round trip (an order's
        receipt time, without a round trip of its own)."""
        pipe = self.r.pipeline(transaction=True)
        pipe.hgetall(self.key(game, "meta"))
        pipe.hgetall(self.key(game, "phase"))
        pipe.get(self.key(game, "state"))
        pipe.time()
        meta, phase, state, (sec, micro) = pipe.execute()
        return meta, phase, (json.loads(state) if state else None), float(sec) + micro / 1e6

    def phase(self, game: str) -> dict[str, str]:
        return self.r.hgetall(self.key(game, "phase"))  # type: ignore[return-value]

    def state(self, game: str) -> Any:
        raw = self.r.get(self.key(game, "state"))
        return json.loads(raw) if raw else None  # type: ignore[arg-type]

    def orders(self, game: str, phase: int) -> dict[int, dict[str, Any]]:
        raw: dict[str, str] = self.r.hgetall(self.key(game, "orders", phase))  # type: ignore[assignment]
        return {int(s): json.loads(v) for s, v in raw.items()}

    def answered(self, game: str, phase: int) -> list[int]:
        return sorted(int(s) for s in self.r.hkeys(self.key(game, "orders", phase)))  # type: ignore[union-attr]

    def submit(self, game: str, phase: int, seat: int, record: dict[str, Any],
               jti: str | None, ttl: int) -> Outcome:
        keys = [self.key(game, "phase"), self.key(game, "orders", phase), self.key(game, "jti", jti or "-")]
        out = self._run("submit", keys, [phase, seat, dumps(record), ttl if jti else 0])
        # The script answers {status, phase id, phase status[, replaced]}: `extra` is the replaced flag.
        return Outcome(out[0], out[1], out[3] if len(out) > 3 else "")

    def expire(self, game: str, phase: int, mode: str, extension: int) -> Outcome:
        return Outcome(*self._run("expire", [self.key(game, "phase")], [phase, mode, extension]))

    def commit(self, game: str, closing: int, state: Any, history: dict[str, Any] | None,
               next_phase: dict[str, Any] | None, status: str, events: list[dict[str, Any]]) -> Outcome:
        """Write a resolved step (closing >= 1) or the game's start (closing == 0)."""
        nxt = next_phase or {}
        keys = [self.key(game, p) for p in ("phase", "state")] + [
            self.key(game, "orders", closing), self.key(game, "events"), self.key(game, "history"),
            self.key(game, "meta")]
        args = [closing, dumps(state), dumps(history) if history else "",
                nxt.get("id", ""), dumps(nxt.get("expected", [])), nxt.get("kind", ""),
                "1" if nxt.get("sealed") else "0", nxt.get("seconds", 0), status,
                *(dumps(e) for e in events)]
        out = self._run("commit", keys, args)
        # `extra`: the number of the last event written (the commit's events end there).
        return Outcome("committed" if out[0] == "1" else "noop", out[1], out[2] if len(out) > 2 else "")

    def append_events(self, game: str, events: list[dict[str, Any]]) -> Outcome:
        """Append events outside a commit (messages): Outcome('ok', first, last) or
        'no_game' / 'finished'."""
        out = self._run("append", [self.key(game, "meta"), self.key(game, "events")], [dumps(e) for e in events])
        return Outcome(out[0], out[1] if len(out) > 1 else "", out[2] if len(out) > 2 else "")

    def bump_attempt(self, game: str, now: float) -> int:
        """Count one more re-enqueue of a stuck step and restart its stuck clock."""
        pipe = self.r.pipeline(transaction=True)
        pipe.hincrby(self.key(game, "phase"), "attempt", 1)
        pipe.hset(self.key(game, "phase"), "flipped_at", f"{now:.6f}")
        return int(pipe.execute()[0])

    # -- history and events -------------------------------------------------------------
    def history(self, game: str) -> list[dict[str, Any]]:
        return [json.loads(x) for x in self.r.lrange(self.key(game, "history"), 0, -1)]  # type: ignore[union-attr]

    def events(self, game: str, after: int, count: int) -> list[tuple[int, dict[str, Any], str]]:
        """Up to `count` events numbered above `after`: (number, event, time stamp)."""
        raw = self.r.xrange(self.key(game, "events"), min=f"({after}-1", max="+", count=count)
        return [(int(i.split("-")[0]), json.loads(f["e"]), f["at"]) for i, f in raw]  # type: ignore[union-attr]

    # -- running games (for the sweeper) ------------------------------------------------
    def activate(self, game: str, on: bool = True) -> None:
        (self.r.sadd if on else self.r.srem)(self.active_key, game)

    def active(self) -> list[str]:
        return sorted(self.r.smembers(self.active_key))  # type: ignore[arg-type]

    def phases(self, games: list[str]) -> dict[str, dict[str, str]]:
        pipe = self.r.pipeline(transaction=False)
        for g in games:
            pipe.hgetall(self.key(g, "phase"))
        return dict(zip(games, pipe.execute(), strict=True))

    def events_between(self, game: str, first: int, last: int) -> list[tuple[int, dict[str, Any], str]]:
        """Events `first` to `last` (inclusive)."""
        raw = self.r.xrange(self.key(game, "events"), min=f"{first}-1", max=f"{last}-1")
        return [(int(i.split("-")[0]), json.loads(f["e"]), f["at"]) for i, f in raw]  # type: ignore[union-attr]

    # -- notifications: contacts, deliveries, reminders, digests ------------------------
    def secret(self) -> str:
        """The server secret kept in the store (made once, by whichever process asks
        first; read once per process: it never changes)."""
        if self._secret is None:
            k = f"{self.prefix}:secret"
            self.r.set(k, secrets.token_urlsafe(32), nx=True)
            self._secret = self.r.get(k)  # type: ignore[assignment]
        return self._secret  # type: ignore[return-value]

    def has_contacts(self, game: str) -> bool:
        """Whether any seat of the game set a contact (else nobody is to be told anything)."""
        return bool(self.r.hlen(self.key(game, "contact")))

    def contacts(self, game: str) -> dict[int, dict[str, Any]]:
        raw: dict[str, str] = self.r.hgetall(self.key(game, "contact"))  # type: ignore[assignment]
        return {int(s): json.loads(v) for s, v in raw.items()}

    def contact(self, game: str, seat: int) -> dict[str, Any] | None:
        raw = self.r.hget(self.key(game, "contact"), str(seat))
        return json.loads(raw) if raw else None  # type: ignore[arg-type]

    def set_contact(self, game: str, seat: int, record: dict[str, Any]) -> None:
        self.r.hset(self.key(game, "contact"), str(seat), dumps(record))

    def update_contact(self, game: str, seat: int, **fields: Any) -> None:
        """Change some fields of a seat's contact (a delivery's outcome), atomically."""
        key = self.key(game, "contact")

        def change(pipe: Any) -> None:
            raw = pipe.hget(key, str(seat))
            if raw is None:
                return
            rec = json.loads(raw)
            rec.update(fields)
            pipe.multi()
            pipe.hset(key, str(seat), dumps(rec))

        self.r.transaction(change, key)

    def unsubscribed(self, address: str) -> bool:
        return bool(self.r.sismember(f"{self.prefix}:unsubscribed", address.lower()))

    def set_unsubscribed(self, address: str, on: bool = True) -> None:
        (self.r.sadd if on else self.r.srem)(f"{self.prefix}:unsubscribed", address.lower())

    def add_delivery(self, game: str, seat: int, record: dict[str, Any]) -> None:
        pipe = self.r.pipeline(transaction=True)
        pipe.hset(self.key(game, "delivery"), record["id"], dumps(record))
        pipe.lpush(self.key(game, "deliveries", seat), record["id"])
        pipe.ltrim(self.key(game, "deliveries", seat), 0, DELIVERIES_KEPT - 1)
        pipe.execute()

    def delivery(self, game: str, did: str) -> dict[str, Any] | None:
        raw = self.r.hget(self.key(game, "delivery"), did)
        return json.loads(raw) if raw else None  # type: ignore[arg-type]

    def update_delivery(self, game: str, did: str, **fields: Any) -> dict[str, Any] | None:
        """Change some fields of a delivery record, atomically; the new record."""
        key = self.key(game, "delivery")
        out: list[dict[str, Any]] = []

        def change(pipe: Any) -> None:
            raw = pipe.hget(key, did)
            if raw is None:
                return
            rec = json.loads(raw)
            rec.update(fields)
            pipe.multi()
            pipe.hset(key, did, dumps(rec))
            out.append(rec)

        self.r.transaction(change, key)
        return out[0] if out else None

    def deliveries(self, game: str, seat: int, limit: int) -> list[dict[str, Any]]:
        ids = self.r.lrange(self.key(game, "deliveries", seat), 0, limit - 1)
        if not ids:
            return []
        raw = self.r.hmget(self.key(game, "delivery"), ids)  # type: ignore[arg-type]
        return [json.loads(x) for x in raw if x]  # type: ignore[union-attr]

    def mark_reminded(self, game: str, phase: int, seat: int, now: float) -> bool:
        """True the first time for this seat and step (a reminder is sent once)."""
        return bool(self.r.hsetnx(self.key(game, "reminded"), f"{phase}:{seat}", f"{now:.6f}"))

    @property
    def digests_key(self) -> str:
        return f"{self.prefix}:digests"

    def push_digest(self, game: str, seat: int, notices: list[dict[str, Any]], due: float) -> None:
        """Keep notices for the seat's next digest, which is due at `due` unless it was
        scheduled already (ZSET `<prefix>:digests`, member `<game>:<seat>`)."""
        pipe = self.r.pipeline(transaction=True)
        pipe.rpush(self.key(game, "digest", seat), *(dumps(n) for n in notices))
        pipe.zadd(self.digests_key, {f"{game}:{seat}": due}, nx=True)
        pipe.execute()

    def due_digests(self, now: float) -> list[tuple[str, int]]:
        """Take the digests due by `now` off the schedule: (game, seat) of each this
        process removed (ZREM), so exactly one process sends each."""
        out = []
        for member in self.r.zrangebyscore(self.digests_key, "-inf", now):  # type: ignore[union-attr]
            game, _, seat = member.rpartition(":")
            if self.r.zrem(self.digests_key, member):
                out.append((game, int(seat)))
        return out

    def take_digest(self, game: str, seat: int) -> list[dict[str, Any]]:
        """Take (and remove) every notice waiting for the seat's digest, atomically."""
        pipe = self.r.pipeline(transaction=True)
        pipe.lrange(self.key(game, "digest", seat), 0, -1)
        pipe.delete(self.key(game, "digest", seat))
        raw, _ = pipe.execute()
        return [json.loads(x) for x in raw]

    # -- Idempotency-Key records --------------------------------------------------------
    def idem_claim(self, client: str, key: str, fingerprint: str, ttl: int) -> dict[str, Any] | None:
        """None if this request may go ahead (the key is now in flight), else the record."""
        k = f"{self.prefix}:idem:{client}:{key}"
        if self.r.set(k, dumps({"state": "inflight", "fp": fingerprint}), nx=True, ex=ttl):
            return None
        raw = self.r.get(k)
        return json.loads(raw) if raw else {"state": "inflight", "fp": fingerprint}  # type: ignore[arg-type]

    def idem_finish(self, client: str, key: str, fingerprint: str, status: int, body: Any,
                    headers: dict[str, str], ttl: int) -> None:
        k = f"{self.prefix}:idem:{client}:{key}"
        self.r.set(k, dumps({"state": "done", "fp": fingerprint, "status": status, "body": body,
                             "headers": headers}), ex=ttl)

    def idem_release(self, client: str, key: str) -> None:
        self.r.delete(f"{self.prefix}:idem:{client}:{key}")
