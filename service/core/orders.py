"""Orders and steps: submit, resolve exactly once, deadlines, bots, commit."""

from __future__ import annotations

import json
import logging
from typing import Any

from engine.core.errors import IllegalOrder
from engine.core.game import Game
from engine.core.seed import state_digest
from service.core.absence import Absence
from service.core.base import receipt_of
from service.core.clock import iso
from service.core.errors import Problem
from service.core.policy import stored_policy
from service.core.records import order_record, stamp
from service.core.rollback import lapsed_events
from service.core.timebank import TimeBank, banks_after, is_bank, opening_banks
from service.store import Intake

log = logging.getLogger("kontor")

#: How often a resolution starts again when unprompted actions keep changing the state
#: under it (each action commits in a moment; this is a bound, not a wait).
RESOLVE_ATTEMPTS = 20


class Orders(TimeBank, Absence):
    """Storing orders, resolving steps and committing them."""

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

        record = order_record(order, via, stamp(now), jti, token)
        # A step this process will resolve (`Jobs.here`): its flip answers what the
        # resolution reads (`Store.prime`).
        here = self.jobs.here
        resolving = (state, self.store.state_version(ph)) if here is not None else None
        out = self.store.submit(gid, phase, seat, record, jti, self.settings.order_max_age + self.settings.clock_skew,
                                resolving)
        if out.status == "replayed":
            raise Problem("token_replayed", "this order token was submitted before; sign a new one")
        if out.status in ("stale", "locked", "not_requested"):
            self._check_open(meta, self.store.phase(gid), phase, seat)  # raises with the fresh phase
            raise Problem("stale_phase", phase=self._phase_summary(self.store.phase(gid)))
        if out.status == "trigger":
            self.jobs.resolve(gid, phase)
        # The access log has every order request over HTTP; the flip of the step, and an
        # order by any other way, is worth a line of its own.
        log.log(logging.INFO if out.status == "trigger" or via != "http" else logging.DEBUG,
                "game %s phase %d: order of seat %d %s via %s", gid, phase, seat, out.status, via)
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

    def resolve(self, gid: str, phase: int) -> str:
        """Resolve a step in `resolving`; a duplicate or late call is a no-op. An action
        committed while it resolved (the state version moved) makes it resolve again
        from the new state."""
        for _ in range(RESOLVE_ATTEMPTS):
            out = self._resolve_once(gid, phase)
            if out != "moved":
                return out
        raise RuntimeError(f"game {gid} step {phase}: actions kept moving the state; the resolve job retries")

    def _resolve_once(self, gid: str, phase: int) -> str:
        meta, ph, state, stored = self.store.resolve_read(gid, phase)  # one round trip
        if not meta or ph.get("id") != str(phase) or ph.get("status") != "resolving":
            return "noop"
        version = self.store.state_version(ph)
        game = self._title(meta["title"])
        orders: dict[int, Any] = {}
        defaults: list[int] = []
        replaced: list[dict[str, Any]] = []
        for seat in json.loads(ph["expected"]):
            rec = stored.get(seat)
            if rec is not None:
                try:
                    # Checked again as a stored order: an unprompted action since it was
                    # stored may have changed the state under it, and a title's rules may
                    # keep such an order and resolve it under them (Fantasy Business, R21).
                    game.validate_stored(state, seat, rec["order"])
                    orders[seat] = rec["order"]
                    continue
                except IllegalOrder as exc:
                    # An unprompted action since the order was stored (or since it was
                    # validated) made it illegal: the seat's default is played, and the
                    # seat alone is told why.
                    log.info("game %s phase %d: stored order of seat %d no longer valid (%s)", gid, phase, seat,
                             exc.code)
                    replaced.append({"type": "order_replaced", "visible_to": [seat], "phase": phase, "seat": seat,
                                     "code": exc.code, "order": rec["order"]})
            orders[seat] = game.default_order(state, seat)
            defaults.append(seat)
        new_state, engine_events = game.resolve_validated(state, orders)
        events: list[dict[str, Any]] = [
            {"type": "step_resolved", "visible_to": "all", "phase": phase, "kind": ph.get("kind"),
             "defaults": [s for s in defaults if s not in {r["seat"] for r in replaced}],
             "by_deadline": ph.get("defaults") == "1"}
        ]
        events += [{**e, "phase": phase} for e in engine_events]
        events += replaced
        events += lapsed_events(ph, phase)  # a pending rollback proposal lapses with the step
        events += self.absence_played(gid, ph, meta, game, state, stored, orders, defaults)
        # The engine's events as it made them (before the phase number is added), and the
        # digest of the new state: a replay from the published seed must match both.
        history = {"phase": phase, "orders": {str(s): o for s, o in orders.items()}, "defaults": defaults,
                   "state_sha256": state_digest(new_state), "events": engine_events}
        pol = is_bank(meta)
        banks = None if pol is None else banks_after(pol, opening_banks(pol, meta, int(meta["seats"])), ph, stored)
        return self._commit(gid, meta, game, phase, new_state, history, events, ph.get("deadline") or "",
                            version=version, banks=banks)

    def deadline(self, gid: str, phase: int) -> str:
        """The deadline check (deadline job and sweeper alike)."""
        meta = self.store.meta(gid)
        if not meta:
            return "noop"
        # A paused step: each check below passes it by (absence_deadline, bank_check) and
        # expire.lua answers `paused`; the resume plans the moved deadline's check.
        pol = stored_policy(meta["policy"])
        if (absent := self.absence_deadline(gid, phase, meta, pol)) is not None:
            return absent
        if pol.clock == "bank":
            # A time bank: the seats out of time are played (the last of them flips the
            # step), and the step waits on for the others' own clocks. Never expire.lua's
            # defaults for every waiting seat: a seat with time left keeps it.
            got = self.bank_check(gid, phase)
            if got == "played":
                return "trigger"
            if got == "paused":
                return "paused"
            if got == "waiting":
                ph = self.store.phase(gid)
                if ph.get("id") == str(phase) and ph.get("status") == "collecting" and ph.get("deadline"):
                    self.jobs.deadline(gid, phase, float(ph["deadline"]))  # one job per deadline (its id)
                return "early"
        out = self.store.expire(gid, phase, pol.on_expiry, pol.extension_seconds)
        if out.status in ("early", "extended"):
            self.jobs.deadline(gid, phase, float(out.value))
            if out.status == "extended":
                log.info("game %s phase %d: deadline extended to %s", gid, phase, iso(out.value))
        elif out.status == "trigger":
            log.info("game %s phase %d: deadline passed, resolving with defaults", gid, phase)
            self.jobs.resolve(gid, phase)
        return out.status

    def bot_order(self, gid: str, phase: int, seat: int, at: float | None = None) -> str:
        """Play a bot's order for `seat` in the open step `phase`: the bot the host gave
        the seat (`via="bot"`), else, when the game's policy lets a bot play an away seat
        and the seat is away now (or at `at`, a deadline), that bot (`via="absence"`)."""
        meta, ph, state = self.store.snapshot(gid)
        if not meta or ph.get("id") != str(phase) or ph.get("status") != "collecting":
            return "noop"
        rec = self.store.seats(gid).get(seat) or {}
        kind, via = rec.get("bot"), "bot"
        if not kind:
            kind, via = self.absence_bot_kind(gid, meta, seat, at), "absence"
        if not kind or seat in self.store.answered(gid, phase):
            return "noop"
        order = self.bot_decision(meta, state, phase, seat, kind)
        if order is None:
            return "noop"
        try:
            self.submit(gid, phase, seat, order, via=via)
        except Problem as exc:
            if exc.code in ("stale_phase", "step_locked", "not_requested"):
                return "noop"
            raise
        return "submitted"

    def _commit(self, gid: str, meta: dict[str, str], game: Game, closing: int, state: Any,
                history: dict[str, Any] | None, events: list[dict[str, Any]], closed_deadline: str = "",
                version: int | None = None, banks: dict[int, int] | None = None) -> str:
        """Commit step `closing` (0: the start) and make its effects; `closed_deadline`:
        the closed step's deadline, whose scheduled check is taken back; `version`: the
        state version the resolution read ("moved" when an action has changed it since:
        nothing was committed); `banks`: a time bank's banks after the closed step
        (`service.core.timebank`; None: as the meta holds them)."""
        pol = stored_policy(meta["policy"])
        requests = game.requests(state)
        nxt = None
        status = "finished"
        extra = None
        if pol.clock == "bank":
            shortest, extra = self.bank_fields(pol, meta, sorted(r.seat for r in requests), banks)
        if requests:
            sealed = any(r.sealed for r in requests)
            nxt = {"id": closing + 1, "expected": sorted(r.seat for r in requests), "kind": requests[0].kind,
                   "sealed": sealed, "seconds": shortest if extra is not None else pol.seconds(sealed)}
            status = "running"
            events.append({"type": "step_opened", "visible_to": "all", "phase": closing + 1,
                           "kind": requests[0].kind, "sealed": sealed, "seats": nxt["expected"]})
            if extra is not None:  # a time bank: each asked seat's clock at the opening (public)
                events[-1]["clocks"] = json.loads(extra["step"]["banks"])
        else:
            events.append({"type": "game_finished", "visible_to": "all", "phase": closing,
                           "ranking": game.result(state)})
        out = self.store.commit_step(gid, closing, state, history, nxt, status, events, version, extra)
        if not out.committed:
            return "moved" if out.moved else "noop"
        # Everything below can be lost with this process (a SIGKILL, a power cut) and is
        # made again from the committed state by the sweep (`service.jobs.sweep`): the
        # running set is reconciled with the games index, the notices of events after
        # the game's notified mark are enqueued again, and the open step's deadline job
        # and (while the step is young) its bot jobs are planned again when missing. The
        # crash points let the kill test (tests/service/jobs/test_kill.py) die at each step.
        self.jobs.crash_point("after_commit")
        # The running set and, when the status changed, the listing indexes (other slots
        # than the game's: after its script; the sweep reconciles and repairs them).
        self.store.place(gid, status, out.before, out.created)  # a finished game leaves the set in the sweep
        self.jobs.crash_point("after_activate")
        if not out.told:
            self.jobs.notify(gid, out.last_event)
        self.jobs.crash_point("after_notify")
        if nxt is not None:
            # The closed step's check is taken back in the same command (lost with the
            # process: it fires and finds nothing to do).
            self.jobs.deadline(gid, nxt["id"], float(out.deadline),
                               cancel=(closing, float(closed_deadline)) if closed_deadline else None)
            self.jobs.crash_point("after_deadline")
            seats = out.seats if out.seats is not None else self.store.seats(gid)  # as at the commit
            for seat in nxt["expected"]:
                if (seats.get(seat) or {}).get("bot"):
                    self.jobs.bot(gid, nxt["id"], seat)
            self.plan_absence_bots(gid, meta, nxt["id"], nxt["expected"], seats)
        elif closed_deadline:  # lost with the process: the check fires and finds nothing to do
            self.jobs.cancel_deadline(gid, closing, float(closed_deadline))
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
