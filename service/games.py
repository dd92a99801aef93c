"""What the service does, independent of HTTP: the one code path for the API, the
email gateway and the workers.

`Kontor` ties the engine, the store and the job queue together. Every write goes
through the store's Lua scripts (exactly-once flips and compare-and-set commits);
every read of game content goes through the engine's `view`, and everything a caller
sees is cut to what that caller may see.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import redis

from engine.core import registry
from engine.core.errors import EngineError, IllegalOrder
from engine.core.events import visible_to
from engine.core.game import Game
from engine.core.seed import state_digest
from engine.core.verify import FORMAT as HISTORY_FORMAT
from service import words
from service.config import Settings
from service.crypto import PublicKey
from service.jobs import Jobs
from service.problems import Problem
from service.store import Intake, Store, dumps

log = logging.getLogger("kontor")

#: How often the sweeper re-enqueues one stuck step before leaving it to an operator
#: (a resolution that keeps failing is a bug to look at, not to retry forever).
MAX_SWEEP_ATTEMPTS = 5

#: Who is asking: a seat number, the game's host, or anyone.
Caller = int | str  # int seat | "host" | "public"


def iso(ts: float | str | None) -> str | None:
    """A UTC time stamp with its offset, to the millisecond."""
    if ts in (None, ""):
        return None
    return datetime.fromtimestamp(float(ts), UTC).isoformat(timespec="milliseconds")  # type: ignore[arg-type]


@dataclass(frozen=True)
class Policy:
    """A game's deadline policy. `on_expiry`: `defaults` (the engine's default orders
    for seats that did not answer) or `extend` (one extension of `extension_seconds`,
    then defaults)."""

    sealed_seconds: int = 86400
    sequential_seconds: int = 86400
    on_expiry: str = "defaults"
    extension_seconds: int = 86400

    def seconds(self, sealed: bool) -> int:
        return self.sealed_seconds if sealed else self.sequential_seconds

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Kontor:
    def __init__(self, settings: Settings, client: redis.Redis | None = None,
                 rq_client: redis.Redis | None = None) -> None:
        self.settings = settings
        self.r = client or redis.Redis.from_url(settings.redis_url, decode_responses=True)
        self.rq = rq_client or redis.Redis.from_url(settings.redis_url)
        self.store = Store(self.r, settings.key_prefix)
        self.jobs = Jobs(self.rq, settings.resolve_timeout)

    # -- catalog ------------------------------------------------------------------------
    def catalog(self) -> list[dict[str, Any]]:
        """The titles' catalogue entries, each with the link to its player's guide (null
        when it has none)."""
        base = self.settings.public_url.rstrip("/")
        return [{**game.catalog_entry(),
                 "rules_url": f"{base}/titles/{tid}/rules" if self.rules_file(tid) else None}
                for tid, game in sorted(registry.titles().items())]

    def rules_file(self, title: str) -> Path | None:
        """The player's guide of a registered title (markdown), if there is one."""
        if title not in registry.titles():
            return None
        path = self.settings.rules_path / f"{title}.md"
        return path if path.is_file() else None

    # -- lobby --------------------------------------------------------------------------
    def create_game(self, title: str, seats: int, options: dict[str, Any] | None, policy: dict[str, Any] | None,
                    seed: int | str | None, host_key: str, name: str | None = None,
                    mail_orders: str = "signed", press: str = "all") -> dict[str, Any]:
        game = self._title(title)
        try:
            opts = game.normalize_options(seats, options)
        except EngineError as exc:
            raise Problem("bad_options", exc.message, **exc.details) from None
        pol = self._policy(policy or {})
        key = self._key(host_key)
        # A server seed is 32 bytes from the OS's cryptographic generator (RNG1); a given
        # seed (tests, reproducible games) is the client's choice and not secret from it.
        seed = seed if seed is not None else secrets.token_hex(32)
        try:
            game.setup(seats, opts, seed)  # options the title only checks at setup (a board file)
        except EngineError as exc:
            raise Problem("bad_options", exc.message, **exc.details) from None
        now = self.now()
        meta = {
            "title": title, "name": name or "", "seats": str(seats),
            "options": dumps(opts), "policy": dumps(pol.as_dict()), "host_kid": key.kid,
            "host_key": key.x, "status": "lobby", "seed": dumps(seed), "created_at": f"{now:.6f}",
            "event_seq": "0", "reply_orders": "1" if mail_orders == "reply_address" else "0", "press": press,
        }
        for _ in range(5):
            gid = secrets.token_hex(5)
            # Unnamed games are called after their id, so mail subjects and the CLI never
            # show a second, unrelated number ("Die Händler #3e16" for game 3e167fdfe6).
            meta["name"] = name or f"{game.name} #{gid[:4]}"
            if self.store.create(gid, meta, key.kid):
                log.info("game %s created (%s, %d seats)", gid, title, seats)
                return self.game(gid)
        raise Problem("internal_error", "could not pick a free game id")

    def join(self, gid: str, name: str, public_key: str, seat: int | None) -> dict[str, Any]:
        meta = self._meta(gid)
        key = self._key(public_key)
        if key.kid == meta["host_kid"]:
            raise Problem("key_in_use", "that key is the host's key; a player needs a key of their own")
        record = {"name": name, "public_key": key.x, "kid": key.kid, "bot": None, "joined_at": f"{self.now():.6f}"}
        out = self.store.join(gid, seat, record, key.kid)
        if out.status != "joined":
            code = {"started": "game_started"}.get(out.status, out.status)
            raise Problem(code, extra_detail(out.status, out.value))
        return self.seat(gid, int(out.value))

    def update_seat(self, gid: str, seat: int, name: str | None, public_key: str | None,
                    bot: str | None, clear_bot: bool = False) -> dict[str, Any]:
        """The host's changes to a seat: mark it a bot (in the lobby or later, to replace
        an absent player), give it a new player key, rename it."""
        meta = self._meta(gid)
        if meta["status"] == "finished":
            raise Problem("game_finished")
        self.check_seat(meta, seat)
        current = self.store.seats(gid).get(seat) or {"name": None, "public_key": None, "kid": None, "bot": None}
        record = dict(current)
        if bot is not None:
            if bot not in registry.bots(meta["title"]):
                raise Problem("unknown_bot", f"bots of this title: {', '.join(sorted(registry.bots(meta['title'])))}")
            record.update(bot=bot, public_key=None, kid=None, name=name or current.get("name") or f"{bot} bot")
        if public_key is not None:
            key = self._key(public_key)
            if key.kid == meta["host_kid"]:
                raise Problem("key_in_use", "that key is the host's key")
            record.update(public_key=key.x, kid=key.kid, bot=None)
        elif clear_bot:
            raise Problem("invalid_request", "a seat that stops being a bot needs a player key")
        if name is not None:
            record["name"] = name
        record.setdefault("joined_at", f"{self.now():.6f}")
        if not record.get("bot") and not record.get("kid"):
            raise Problem("invalid_request", "give the seat a bot or a player key")
        out = self.store.set_seat(gid, seat, record, record.get("kid"))
        if out.status != "ok":
            raise Problem(out.status, extra_detail(out.status, out.value))
        if meta["status"] == "running" and record.get("bot"):
            phase = self.store.phase(gid)
            if phase.get("status") == "collecting" and seat in json.loads(phase["expected"]):
                self.jobs.bot(gid, int(phase["id"]), seat)
        return self.seat(gid, seat)

    def start(self, gid: str) -> dict[str, Any]:
        meta = self._meta(gid)
        if meta["status"] != "lobby":
            raise Problem("game_started")
        seats = self.store.seats(gid)
        empty = [s for s in range(int(meta["seats"])) if s not in seats]
        if empty:
            raise Problem("seats_empty", f"seats {empty} are empty: let players join or make them bots", seats=empty)
        game = self._title(meta["title"])
        state = game.setup(int(meta["seats"]), json.loads(meta["options"]), json.loads(meta["seed"]))
        events = [{"type": "game_started", "visible_to": "all", "phase": 0, "commitment": state["commitment"],
                   "players": [{"seat": s, "name": r["name"], "bot": r["bot"]} for s, r in seats.items()]}]
        self._commit(gid, meta, game, 0, state, None, events)
        return self.game(gid)

    # -- reading ------------------------------------------------------------------------
    def game(self, gid: str) -> dict[str, Any]:
        meta, phase, state, _ = self._snapshot(gid)
        game = self._title(meta["title"])
        seats = self.store.seats(gid)
        return {
            "id": gid, "title": meta["title"], "title_name": game.name, "name": meta["name"],
            "status": meta["status"], "seats": int(meta["seats"]), "options": json.loads(meta["options"]),
            "deadlines": json.loads(meta["policy"]), "host_kid": meta["host_kid"],
            "mail_orders": "reply_address" if meta.get("reply_orders") == "1" else "signed",
            "press": meta.get("press", "all"),
            "created_at": iso(meta["created_at"]), "updated_at": iso(meta.get("updated_at")),
            "players": [self._seat_dict(s, seats.get(s)) for s in range(int(meta["seats"]))],
            "phase": self._phase_summary(phase) if phase else None,
            "result": game.result(state) if state and meta["status"] == "finished" else None,
            # The public SHA-256 commitment to the seed (the seed itself: in the history, once over).
            "commitment": state.get("commitment") if isinstance(state, dict) else None,
        }

    def listing(self, status: str | None, limit: int, before: float | None) -> dict[str, Any]:
        """Games, newest first (a lobby list when `status` is `lobby`)."""
        items: list[dict[str, Any]] = []
        cursor = before
        while len(items) < limit:
            batch = self.store.listing(max(limit, 50), cursor)
            if not batch:
                cursor = None
                break
            for gid, meta, taken in batch:
                cursor = float(meta["created_at"])
                if status is None or meta["status"] == status:
                    items.append({"id": gid, "title": meta["title"], "name": meta["name"], "status": meta["status"],
                                  "seats": int(meta["seats"]), "taken": taken, "created_at": iso(meta["created_at"])})
                    if len(items) == limit:
                        break
        return {"items": items, "before": cursor if len(items) == limit else None}

    def seat(self, gid: str, seat: int) -> dict[str, Any]:
        self.check_seat(self._meta(gid), seat)
        return self._seat_dict(seat, self.store.seats(gid).get(seat))

    def current_phase(self, gid: str, caller: Caller) -> dict[str, Any]:
        meta, phase, state, _ = self._snapshot(gid)
        if meta["status"] == "lobby" or not phase:
            raise Problem("game_not_started")
        out = self._phase_summary(phase)
        pid = int(phase["id"])
        out["answered"] = self.store.answered(gid, pid) if phase["status"] != "finished" else []
        out["you"] = None
        if isinstance(caller, int) and phase["status"] != "finished":
            game = self._title(meta["title"])
            mine = [r for r in game.requests(state) if r.seat == caller]
            you: dict[str, Any] = {"seat": caller, "requested": bool(mine), "answered": caller in out["answered"]}
            if mine:
                req = mine[0]
                you.update(kind=req.kind, choices=req.choices, order_schema=game.order_schema(req.kind),
                           default_order=game.default_order(state, caller),
                           asked=words.asked_text(game, req, game.view(state, caller), self.names(gid, meta)))
                stored = self.store.orders(gid, pid).get(caller)
                you["order"] = stored["order"] if stored else None
            out["you"] = you
        return out

    def view(self, gid: str, caller: Caller) -> dict[str, Any]:
        meta, phase, state, _ = self._snapshot(gid)
        if state is None:
            raise Problem("game_not_started")
        game = self._title(meta["title"])
        viewer = caller if isinstance(caller, int) else "public"
        view = game.view(state, viewer)
        return {"game": gid, "phase": int(phase["id"]), "viewer": viewer, "state": view,
                "headline": words.said("headline", game.headline, view),
                "summary": words.said("summary", game.summary, view, self.names(gid, meta))}

    def picture(self, gid: str, caller: Caller) -> str:
        """The title's SVG picture of the game as the caller may see it (a seat its own
        view; the host and anyone else the public one)."""
        meta, _, state, _ = self._snapshot(gid)
        if state is None:
            raise Problem("game_not_started")
        game = self._title(meta["title"])
        view = game.view(state, caller if isinstance(caller, int) else "public")
        return game.picture(view, self.names(gid, meta))

    def names(self, gid: str, meta: dict[str, str]) -> list[str]:
        """The players' display names by seat, as the store has them ("Seat N" for none)."""
        seats = self.store.seats(gid)
        return words.names_of(int(meta["seats"]), {s: (r or {}).get("name") for s, r in seats.items()})

    def events(self, gid: str, caller: Caller, after: int, limit: int,
               kind: str | None = None) -> dict[str, Any]:
        """The events after number `after` the caller may see (only those of type `kind`
        when given), oldest first; `next` is the number to pass as `after`."""
        last = int(self._meta(gid).get("event_seq") or 0)
        viewer = caller if isinstance(caller, int) else "public"
        items: list[dict[str, Any]] = []
        cursor = after
        while len(items) < limit and cursor < last:
            batch = self.store.events(gid, cursor, max(limit * 2, 50))
            if not batch:
                break
            for seq, ev, at in batch:
                cursor = seq
                if visible_to(ev, viewer) and kind in (None, ev.get("type")):
                    items.append({"id": seq, "at": iso(at), **ev})
                    if len(items) == limit:
                        break
        return {"items": items, "next": cursor, "more": cursor < last, "last": last}

    # -- orders -------------------------------------------------------------------------
    def submit(self, gid: str, phase: int, seat: int, order: Any, via: str,
               jti: str | None = None, token: str | None = None, snapshot: Intake | None = None) -> dict[str, Any]:
        """Store `seat`'s order for `phase` once `validate` accepts it. The last seat to
        answer flips the step (atomically, exactly once) and enqueues its resolution.
        `snapshot`: the store read the order's token was checked against (saves a round trip)."""
        if snapshot is not None:
            meta, ph, state, now = snapshot.meta, snapshot.phase, snapshot.state, snapshot.now
            if not meta:
                raise Problem("game_not_found", f"no game {gid!r}")
        else:
            meta, ph, state, now = self._snapshot(gid)
        self._check_open(meta, ph, phase, seat)
        game = self._title(meta["title"])
        if not isinstance(order, dict):
            raise Problem("malformed_order", "an order is a JSON object")
        try:
            game.validate(state, seat, order)
        except IllegalOrder as exc:
            raise Problem(exc.code, exc.message, **exc.details) from None
        record = {"order": order, "via": via, "at": f"{now:.6f}", "jti": jti, "token": token}
        out = self.store.submit(gid, phase, seat, record, jti, self.settings.order_max_age + self.settings.clock_skew)
        if out.status == "replayed":
            raise Problem("token_replayed", "this order token was submitted before; sign a new one")
        if out.status in ("stale", "locked", "not_requested"):
            self._check_open(meta, self.store.phase(gid), phase, seat)  # raises with the fresh phase
            raise Problem("stale_phase", phase=self._phase_summary(self.store.phase(gid)))
        if out.status == "trigger":
            self.jobs.resolve(gid, phase)
        log.info("game %s phase %d: order of seat %d %s via %s", gid, phase, seat, out.status, via)
        return {
            "game": gid, "phase": phase, "seat": seat, "received_at": iso(now), "via": via,
            "replaced": out.extra == "1", "step_status": "resolving" if out.status == "trigger" else "collecting",
            "receipt": receipt_of(record), "order": order,
        }

    def own_order(self, gid: str, phase: int, seat: int) -> dict[str, Any]:
        """A seat's own stored order for the open step, as its receipt said it."""
        ph = self.store.phase(gid)
        if ph.get("id") != str(phase):
            raise Problem("no_such_phase", f"step {phase} is not open")
        rec = self.store.orders(gid, phase).get(seat)
        if rec is None:
            raise Problem("not_found", "no order stored for this seat in this step")
        return {"game": gid, "phase": phase, "seat": seat, "received_at": iso(rec["at"]), "via": rec["via"],
                "replaced": False, "step_status": ph["status"], "receipt": receipt_of(rec), "order": rec["order"]}

    def published_history(self, gid: str) -> dict[str, Any]:
        """The game's history document (format `kontor-history/1`), published once the
        game is over: the seed, its commitment, and per step the accepted orders, the
        seats given defaults, the digest of the state after it and the engine's events,
        and the result. `engine.core.verify.verify_history` checks it by replaying."""
        meta, _, state, _ = self._snapshot(gid)
        if meta["status"] != "finished":
            raise Problem("forbidden", "the history is published when the game is over", status=403)
        game = self._title(meta["title"])
        return {
            "format": HISTORY_FORMAT, "game": gid, "title": meta["title"], "seats": int(meta["seats"]),
            "options": json.loads(meta["options"]), "seed": json.loads(meta["seed"]),
            # Games started before seeds were committed have none in their state.
            "commitment": state.get("commitment") if isinstance(state, dict) else None,
            "steps": self.store.history(gid), "result": game.result(state) if state is not None else None,
        }

    # -- the workers' side --------------------------------------------------------------
    def resolve(self, gid: str, phase: int) -> str:
        """Resolve a step in `resolving`; a duplicate or late call is a no-op."""
        meta, ph, state = self.store.snapshot(gid)
        if not meta or ph.get("id") != str(phase) or ph.get("status") != "resolving":
            return "noop"
        game = self._title(meta["title"])
        stored = self.store.orders(gid, phase)
        orders: dict[int, Any] = {}
        defaults: list[int] = []
        for seat in json.loads(ph["expected"]):
            rec = stored.get(seat)
            if rec is not None:
                try:
                    game.validate(state, seat, rec["order"])
                    orders[seat] = rec["order"]
                    continue
                except IllegalOrder:  # cannot happen: the state has not changed since
                    log.error("game %s phase %d: stored order of seat %d no longer valid", gid, phase, seat)
            orders[seat] = game.default_order(state, seat)
            defaults.append(seat)
        new_state, engine_events = game.resolve_validated(state, orders)
        events: list[dict[str, Any]] = [
            {"type": "step_resolved", "visible_to": "all", "phase": phase, "kind": ph.get("kind"),
             "defaults": defaults, "by_deadline": ph.get("defaults") == "1"}
        ]
        events += [{**e, "phase": phase} for e in engine_events]
        # The engine's events as it made them (before the phase number is added), and the
        # digest of the new state: a replay from the published seed must match both.
        history = {"phase": phase, "orders": {str(s): o for s, o in orders.items()}, "defaults": defaults,
                   "state_sha256": state_digest(new_state), "events": engine_events}
        out = self._commit(gid, meta, game, phase, new_state, history, events)
        return out

    def deadline(self, gid: str, phase: int) -> str:
        """The deadline check (deadline job and sweeper alike)."""
        meta = self.store.meta(gid)
        if not meta:
            return "noop"
        pol = Policy(**json.loads(meta["policy"]))
        out = self.store.expire(gid, phase, pol.on_expiry, pol.extension_seconds)
        if out.status in ("early", "extended"):
            self.jobs.deadline(gid, phase, float(out.value))
            if out.status == "extended":
                log.info("game %s phase %d: deadline extended to %s", gid, phase, iso(out.value))
        elif out.status == "trigger":
            log.info("game %s phase %d: deadline passed, resolving with defaults", gid, phase)
            self.jobs.resolve(gid, phase)
        return out.status

    def bot_order(self, gid: str, phase: int, seat: int) -> str:
        meta, ph, state = self.store.snapshot(gid)
        if not meta or ph.get("id") != str(phase) or ph.get("status") != "collecting":
            return "noop"
        rec = self.store.seats(gid).get(seat) or {}
        if not rec.get("bot") or seat in self.store.answered(gid, phase):
            return "noop"
        game = self._title(meta["title"])
        mine = [r for r in game.requests(state) if r.seat == seat]
        if not mine:
            return "noop"
        bot = registry.bots(meta["title"])[rec["bot"]](f"{json.loads(meta['seed'])}/{phase}/{seat}")
        order = bot.order(game, state, mine[0])
        try:
            self.submit(gid, phase, seat, order, via="bot")
        except Problem as exc:
            if exc.code in ("stale_phase", "step_locked", "not_requested"):
                return "noop"
            raise
        return "submitted"

    def sweep(self) -> dict[str, int]:
        """Find overdue steps, steps stuck in `resolving` and bot seats nobody answered,
        and enqueue them again. Safe to run anywhere, any number of times."""
        games = self.store.active()
        now = self.now()
        stats = {"games": len(games), "deadlines": 0, "stuck": 0, "bots": 0, "reminders": 0, "digests": 0}
        for gid, ph in self.store.phases(games).items():
            if not ph:
                continue
            pid, status = int(ph["id"]), ph["status"]
            if status == "finished":
                self.store.activate(gid, False)
            elif status == "collecting" and float(ph["deadline"]) <= now:
                stats["deadlines"] += 1
                self.deadline(gid, pid)
            elif status == "resolving" and now - float(ph.get("flipped_at") or 0) > self.settings.stuck_after:
                if int(ph.get("attempt") or 0) >= MAX_SWEEP_ATTEMPTS:
                    log.error("game %s phase %d: still unresolved after %d re-enqueues; see the failed jobs",
                              gid, pid, MAX_SWEEP_ATTEMPTS)
                    continue
                stats["stuck"] += 1
                attempt = self.store.bump_attempt(gid, now)
                log.warning("game %s phase %d: stuck in resolving, re-enqueued (attempt %d)", gid, pid, attempt)
                self.jobs.resolve(gid, pid, attempt)
            elif status == "collecting" and now - float(ph["opened_at"]) > self.settings.stuck_after:
                seats = self.store.seats(gid)
                answered = set(self.store.answered(gid, pid))
                for seat in json.loads(ph["expected"]):
                    if seat not in answered and (seats.get(seat) or {}).get("bot"):
                        stats["bots"] += 1
                        self.jobs.bot(gid, pid, seat, attempt=int(now) // max(1, self.settings.stuck_after))
        from service.mail import send_digests
        from service.reminders import remind

        stats["reminders"] = remind(self, now)
        stats["digests"] = send_digests(self, now)
        return stats

    def state_at(self, gid: str, closing: int) -> tuple[dict[str, str], Any]:
        """The meta and the engine state right after step `closing` was committed (0: the
        start): the stored state while no later step has been committed, else rebuilt from
        the seed and the accepted orders (replay is deterministic)."""
        meta, ph, state = self.store.snapshot(gid)
        if not meta:
            raise Problem("game_not_found", f"no game {gid!r}")
        if ph.get("id") == str(closing + 1):
            return meta, state
        game = self._title(meta["title"])
        state = game.setup(int(meta["seats"]), json.loads(meta["options"]), json.loads(meta["seed"]))
        for step in self.store.history(gid):
            if step["phase"] > closing:
                break
            state, _ = game.resolve_validated(state, {int(s): o for s, o in step["orders"].items()})
        return meta, state

    # -- helpers ------------------------------------------------------------------------
    def now(self) -> float:
        """The store's clock (one clock for every process)."""
        sec, micro = self.r.time()  # type: ignore[misc]
        return float(sec) + micro / 1e6

    def _commit(self, gid: str, meta: dict[str, str], game: Game, closing: int, state: Any,
                history: dict[str, Any] | None, events: list[dict[str, Any]]) -> str:
        pol = Policy(**json.loads(meta["policy"]))
        requests = game.requests(state)
        nxt = None
        status = "finished"
        if requests:
            sealed = any(r.sealed for r in requests)
            nxt = {"id": closing + 1, "expected": sorted(r.seat for r in requests), "kind": requests[0].kind,
                   "sealed": sealed, "seconds": pol.seconds(sealed)}
            status = "running"
            events.append({"type": "step_opened", "visible_to": "all", "phase": closing + 1,
                           "kind": requests[0].kind, "sealed": sealed, "seats": nxt["expected"]})
        else:
            events.append({"type": "game_finished", "visible_to": "all", "phase": closing,
                           "ranking": game.result(state)})
        out = self.store.commit(gid, closing, state, history, nxt, status, events)
        if out.status != "committed":
            return "noop"
        self.store.activate(gid, status == "running")
        if self.store.has_contacts(gid):
            last = int(out.extra)
            self.jobs.notify_commit(gid, closing, last - len(events) + 1, last, out.value)
        if nxt is not None:
            self.jobs.deadline(gid, nxt["id"], float(out.value))
            seats = self.store.seats(gid)
            for seat in nxt["expected"]:
                if (seats.get(seat) or {}).get("bot"):
                    self.jobs.bot(gid, nxt["id"], seat)
        log.info("game %s: step %d committed, %s", gid, closing, f"step {closing + 1} open" if nxt else "game over")
        return "committed"

    def _check_open(self, meta: dict[str, str], ph: dict[str, str], phase: int, seat: int) -> None:
        if meta["status"] == "lobby":
            raise Problem("game_not_started")
        if meta["status"] == "finished" or ph.get("status") == "finished":
            raise Problem("game_finished", phase=self._phase_summary(ph))
        if ph.get("id") != str(phase):
            raise Problem("stale_phase", f"step {phase} is not open; the open step is {ph.get('id')}",
                          phase=self._phase_summary(ph))
        if ph.get("status") != "collecting":
            raise Problem("step_locked", f"step {phase} is being resolved", phase=self._phase_summary(ph))
        if seat not in json.loads(ph["expected"]):
            raise Problem("not_requested", f"step {phase} asks nothing of seat {seat}", phase=self._phase_summary(ph))

    def _phase_summary(self, ph: dict[str, str]) -> dict[str, Any]:
        if not ph:
            return {}
        return {
            "id": int(ph["id"]), "status": ph["status"], "kind": ph.get("kind") or None,
            "sealed": ph.get("sealed") == "1", "requested": json.loads(ph.get("expected") or "[]"),
            "opened_at": iso(ph.get("opened_at")), "deadline": iso(ph.get("deadline")),
            "extended": ph.get("extended") == "1",
        }

    @staticmethod
    def _seat_dict(seat: int, rec: dict[str, Any] | None) -> dict[str, Any]:
        rec = rec or {}
        return {"seat": seat, "name": rec.get("name"), "bot": rec.get("bot"), "kid": rec.get("kid"),
                "public_key": rec.get("public_key"), "taken": bool(rec), "joined_at": iso(rec.get("joined_at"))}

    def _snapshot(self, gid: str) -> tuple[dict[str, str], dict[str, str], Any, float]:
        meta, phase, state, now = self.store.snapshot_at(gid)
        if not meta:
            raise Problem("game_not_found", f"no game {gid!r}")
        return meta, phase, state, now

    @staticmethod
    def check_seat(meta: dict[str, str], seat: int) -> None:
        """`no_such_seat` unless the game has seat `seat`."""
        if not 0 <= seat < int(meta["seats"]):
            raise Problem("no_such_seat", f"seats are 0 to {int(meta['seats']) - 1}")

    def _meta(self, gid: str) -> dict[str, str]:
        meta = self.store.meta(gid)
        if not meta:
            raise Problem("game_not_found", f"no game {gid!r}")
        return meta

    @staticmethod
    def _title(title: str) -> Game:
        try:
            return registry.get(title)
        except EngineError as exc:
            raise Problem("bad_options", exc.message, field="title") from None

    def _policy(self, raw: dict[str, Any]) -> Policy:
        pol = Policy(**raw)
        lo, hi = self.settings.min_step_seconds, self.settings.max_step_seconds
        for name in ("sealed_seconds", "sequential_seconds", "extension_seconds"):
            value = getattr(pol, name)
            if not isinstance(value, int) or not lo <= value <= hi:
                raise Problem("bad_deadline_policy", f"{name} must be {lo} to {hi} seconds", field=name)
        if pol.on_expiry not in ("defaults", "extend"):
            raise Problem("bad_deadline_policy", "on_expiry is 'defaults' or 'extend'", field="on_expiry")
        return pol

    @staticmethod
    def _key(text: str) -> PublicKey:
        try:
            return PublicKey.from_text(text)
        except ValueError as exc:
            raise Problem("bad_public_key", str(exc)) from None


def receipt_of(record: dict[str, Any]) -> str:
    """A short digest of a stored order record, quoted back to the seat as its receipt."""
    return hashlib.sha256(dumps(record).encode()).hexdigest()[:20]


def extra_detail(status: str, value: str) -> str:
    return {
        "key_in_use": f"that key already holds seat {value} in this game",
        "seat_taken": f"seat {value} is taken",
        "game_full": "every seat is taken",
        "no_such_seat": "no such seat",
        "started": "the game has started",
    }.get(status, status)


