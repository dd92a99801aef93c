"""Rollback with consent: the host takes the game back to an earlier step (issue 25).

The rulings:

* The host proposes to roll the game back to step k, an earlier step of the game that
  stands (not one a rollback undid before, not the open step): the game returns to the
  state step k had when it opened (after step k - 1 was committed; before step k's
  unprompted actions and orders). That state is never stored: it is rebuilt by replaying
  the game's own history from its seed (`engine.core.rollback.replay`, pure and
  deterministic, actions included).
* Step numbers are never reused: the game opens step k's state as a NEW step, the open
  step's id + 1. So no order or action token signed for an old step is ever accepted
  again (the open step's one-time ids are dropped with it; its number is never open again).
* Whether the steps to be undone revealed anything hidden is the engine's to say
  (`engine.core.rollback.revealing`: a sealed step, an event not everyone saw, a change to
  a Secret or NEVER part of the state such as a draw, and the open step when sealed orders
  are stored for it). Nothing revealed: the rollback applies at once. Revealed: it becomes
  a pending proposal that every human seat (not the bots) must agree to; the last
  agreement applies it, one refusal drops it, the host may withdraw it, and it lapses when
  a step commits (commit.lua deletes the step hash it lives in; the commit says so in a
  `rollback_lapsed` event) or `rollback_consent_seconds` after it was made (said at the
  next consent, proposal or withdrawal). A rollback is never applied while hidden
  information would be re-dealt without every human seat's consent: the at-once path is a
  compare-and-set on the state version and refuses a sealed step that holds orders, so an
  action or a sealed order that arrives between the check and the write sends it round
  again (and then to consent).
* Applying is one script (rollback.lua), exactly once: a compare-and-set on the open
  step's id, its status `collecting` (a step being resolved cannot be rolled back: the
  resolution or the rollback wins, never both) and the state version or the proposal.
  It writes the restored state, discards the open step's stored orders (kept whole in the
  rollback's history record, which is published only with the history once the game is
  over: a sealed order never leaks), opens the new step with a fresh deadline (paused, if
  the step was), and appends a public `game_rolled_back` event and the new step's
  `step_opened`. The abandoned steps' events stay in the log as they were.
* Every proposal, consent, refusal, withdrawal and lapse is a public event in words
  (`service.words`), so the page, the stream and the mail/webhook notices tell it.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections import OrderedDict
from typing import Any

from engine.core import rollback as engine_rollback
from engine.core.game import Game
from engine.core.rollback import Line
from service import words
from service.core.base import Base
from service.core.clock import iso
from service.core.errors import Problem
from service.core.policy import Policy

#: Games whose list of steps to go back to a process keeps (`Rollback.rollback_options`).
STEPS_CACHED = 256

log = logging.getLogger("kontor")

#: How often the at-once path starts again when an action or an order moved the open
#: step under it (each commits in a moment; a bound, not a wait).
ATTEMPTS = 8

def lapsed_events(ph: dict[str, str], phase: int) -> list[dict[str, Any]]:
    """The `rollback_lapsed` event a step's commit appends when a proposal was pending in
    it (the commit deletes the step hash the proposal lives in): [] when none was."""
    if not ph.get("rollback_id"):
        return []
    proposal = json.loads(ph.get("rollback") or "{}")
    return [{"type": "rollback_lapsed", "visible_to": "all", "phase": phase, "to_phase": proposal.get("to_phase"),
             "why": "moved_on"}]


def undoes(rollback: dict[str, Any], phase: Any, kind: Any = None) -> bool:
    """Whether a `game_rolled_back` event undid what step `phase` did: a rollback to step
    k, made while step P was open, undoes steps k to P (the opening of step k itself
    stands: the game went back to it)."""
    to, at = rollback.get("to_phase"), rollback.get("phase")
    return (rollback.get("type") == "game_rolled_back" and isinstance(phase, int) and isinstance(to, int)
            and isinstance(at, int) and to <= phase <= at and not (kind == "step_opened" and phase == to))


def step_text(game: Game, state: Any, names: list[str], phase: int) -> str:
    """A step in words, from the state it had when it opened, as everyone may see it:
    "Step 12: Carla's turn: bid for the Salz lot". Said to everyone, so only the first
    clause of the title's words for the (first) request, read from the public view."""
    reqs = game.requests(state)
    if not reqs:
        return f"Step {phase}"
    view = game.view(state, "public")
    who = [words.seat_name(names, r.seat) for r in reqs]
    # What the step decided (the first seat's request: a step asking several at once asks
    # them the same kind of decision). Only its first clause: what follows may hold the
    # asked seat's own figures (a bid's range is its money, Die Händler's H-14).
    asked = words.asked_text(game, reqs[0], view, names)
    head = f"{who[0]}'s turn" if len(who) == 1 else f"{words.listing(who)} at once"
    if asked:
        head += f": {words.lower_first(words.short(asked, 70), names)}"
    return f"Step {phase}: {head}"


class Rollback(Base):
    """The host's rollback, with the players' consent when it is needed."""

    # -- reading -------------------------------------------------------------------------
    def rollback_options(self, gid: str, steps: bool = True) -> dict[str, Any]:
        """The steps the game may be rolled back to, in words (newest first; `steps`
        False: none, which spares the replay), and the pending proposal (None when there
        is none). A game that is not running has none of either (`phase` None)."""
        meta, ph, _, now = self._snapshot(gid)
        if meta["status"] != "running" or not ph or ph.get("status") == "finished":
            return {"game": gid, "phase": None, "steps": [], "pending": None}  # nothing to go back in
        listed: list[dict[str, Any]] = []
        if steps:
            names = self.names(gid, meta)
            # The list changes only when a step commits or a rollback opens one (the open
            # step's id) or a seat's name changes: kept per process, so a page that reads
            # it often (it is public) does not replay the game each time.
            key = (gid, ph["id"], tuple(names))
            cache: OrderedDict[tuple[str, str, tuple[str, ...]], list[dict[str, Any]]] = \
                self.__dict__.setdefault("_rollback_steps", OrderedDict())
            if key in cache:
                cache.move_to_end(key)
                listed = cache[key]
            else:
                game = self._title(meta["title"])
                line, _ = self._line(gid, meta, game)
                listed = [{"phase": p, "text": step_text(game, line.openings[p], names, p)}
                          for p in reversed(line.standing)]
                cache[key] = listed
                while len(cache) > STEPS_CACHED:
                    cache.popitem(last=False)
        return {"game": gid, "phase": int(ph["id"]), "steps": listed, "pending": self._pending(gid, meta, ph, now)}

    def _pending(self, gid: str, meta: dict[str, str], ph: dict[str, str], now: float) -> dict[str, Any] | None:
        if not ph.get("rollback_id") or float(ph.get("rollback_expires") or 0) <= now:
            return None
        proposal = json.loads(ph["rollback"])
        seats = self.store.seats(gid)
        needs = [s for s in proposal["needs"] if not (seats.get(s) or {}).get("bot")]
        agreed = [s for s in needs if ph.get(f"rollback_yes:{s}")]
        names = self.names(gid, meta)
        what = words.rollback_step(proposal["to_phase"], proposal["step"])
        return {"id": proposal["id"], "to_phase": proposal["to_phase"], "at_phase": proposal["at_phase"],
                "step": proposal["step"], "needs": needs, "agreed": agreed,
                "waiting": [s for s in needs if s not in agreed],
                "reasons": words.reasons_text(proposal["reasons"]),
                "expires_at": iso(ph.get("rollback_expires")),
                "text": f"The host proposes to go back to {what}. "
                        f"Waiting for {words.listing([words.seat_name(names, s) for s in needs if s not in agreed])}."}

    # -- the host ------------------------------------------------------------------------
    def propose_rollback(self, gid: str, to_phase: int) -> dict[str, Any]:
        """The host's proposal to roll back to step `to_phase`: applied at once when the
        steps it undoes revealed nothing hidden (or no human seat is left to ask), else
        pending until every human seat agrees."""
        for _ in range(ATTEMPTS):
            meta, ph, _, now = self._snapshot(gid)
            self._running(meta, ph)
            self._lapse_if_expired(gid, meta, ph, now)
            if self._pending(gid, meta, ph, now) is not None:
                raise Problem("rollback_pending", "a proposal to roll back waits for the players' consent; "
                                                  "withdraw it first")
            game = self._title(meta["title"])
            at = int(ph["id"])
            line, open_actions = self._line(gid, meta, game)
            if to_phase not in line.standing or to_phase >= at or line.open_phase != at:
                raise Problem("bad_rollback_step", f"step {to_phase} is not an earlier step of the game as it "
                                                   f"stands; the open step is {at}", field="to_phase")
            sealed_orders = ph.get("sealed") == "1" and bool(self.store.answered(gid, at))
            revealed = engine_rollback.revealing(game, line, to_phase, open_actions, sealed_orders)
            names = self.names(gid, meta)
            text = step_text(game, line.openings[to_phase], names, to_phase)
            seats = self.store.seats(gid)
            needs = [s for s in range(int(meta["seats"])) if not (seats.get(s) or {}).get("bot")]
            if not revealed or not needs:  # nothing revealed, or only bots to ask
                out = self._apply(gid, meta, game, ph, line, to_phase, text, version=self.store.state_version(ph),
                                  proposal="", consented=False, guard=not revealed)
                if out is None:
                    continue  # moved under it: judge again
                return out
            reasons = [{"phase": r.phase, "why": r.why} for r in revealed]
            proposal = {"id": uuid.uuid4().hex[:16], "to_phase": to_phase, "at_phase": at, "step": text,
                        "reasons": reasons, "needs": needs, "proposed_at": now}
            ev = {"type": "rollback_proposed", "visible_to": "all", "phase": at, "to_phase": to_phase, "step": text,
                  "reasons": reasons, "seats": needs}
            expires = now + self.settings.rollback_consent_seconds
            got = self.store.rollback_vote(gid, "propose", at, proposal["id"], None, needs, [ev], expires, proposal)
            if got.status != "ok":
                if got.value == "moved":
                    continue
                self._refused(got.value)
            self.jobs.notify(gid, int(got.extra))
            log.info("game %s step %d: the host proposes a rollback to step %d (consent needed)", gid, at, to_phase)
            ph = self.store.phase(gid)
            return {"game": gid, "status": "pending", "to_phase": to_phase, "at_phase": at, "new_phase": None,
                    "pending": self._pending(gid, meta, ph, self.now()),
                    "text": words.service_sentence(ev, names)}
        raise Problem("step_locked", "the game moved on while the rollback was judged; try again", status=409)

    def withdraw_rollback(self, gid: str) -> dict[str, Any]:
        """The host takes back a pending proposal."""
        meta, ph, _, now = self._snapshot(gid)
        self._running(meta, ph)
        pending = self._pending(gid, meta, ph, now)
        if pending is None:
            self._lapse_if_expired(gid, meta, ph, now)
            raise Problem("no_rollback_pending")
        ev = {"type": "rollback_withdrawn", "visible_to": "all", "phase": int(ph["id"]),
              "to_phase": pending["to_phase"]}
        got = self.store.rollback_vote(gid, "withdraw", int(ph["id"]), pending["id"], None, [], [ev])
        if got.status != "ok":
            self._refused(got.value)
        self.jobs.notify(gid, int(got.extra))
        return {"game": gid, "status": "withdrawn", "to_phase": pending["to_phase"], "at_phase": int(ph["id"]),
                "new_phase": None, "pending": None, "text": words.service_sentence(ev, self.names(gid, meta))}

    # -- the seats -----------------------------------------------------------------------
    def rollback_consent(self, gid: str, seat: int, agree: bool, via: str = "http") -> dict[str, Any]:
        """A seat agrees to the pending proposal (the last agreement applies it) or
        refuses it (dropped at once)."""
        meta, ph, _, game = self._seat_in_play(gid, seat)
        now = self.now()
        pending = self._pending(gid, meta, ph, now)
        if pending is None:
            self._lapse_if_expired(gid, meta, ph, now)
            raise Problem("no_rollback_pending")
        if seat not in pending["needs"]:
            raise Problem("forbidden", "this seat is not asked to agree to the rollback", status=403)
        at, to = int(ph["id"]), pending["to_phase"]
        kind = "rollback_agreed" if agree else "rollback_refused"
        ev = {"type": kind, "visible_to": "all", "phase": at, "to_phase": to, "seat": seat}
        got = self.store.rollback_vote(gid, "agree" if agree else "refuse", at, pending["id"], seat,
                                       pending["needs"], [ev])
        if got.status != "ok":
            if got.value == "lapsed":
                self._tell_lapsed(gid, at, to, "expired")
            self._refused(got.value)
        if got.extra:
            self.jobs.notify(gid, int(got.extra))
        log.info("game %s step %d: seat %d %s the rollback via %s", gid, at, seat,
                 "agrees to" if agree else "refuses", via)
        names = self.names(gid, meta)
        said = words.service_sentence(ev, names)
        if got.value == "all":
            line, _ = self._line(gid, meta, game)
            try:
                out = self._apply(gid, meta, game, ph, line, to, pending["step"], version=None,
                                  proposal=pending["id"], consented=True, guard=False)
            except Problem as exc:
                # The step is being resolved this very moment: the consent stands, and the
                # resolution lapses the proposal (the players are told so).
                if exc.code != "step_locked":
                    raise
                out = None
            if out is not None:
                return {**out, "seat": seat}
        status = {"refused": "refused", "all": "agreed", "agreed": "agreed"}[got.value]
        ph = self.store.phase(gid)
        return {"game": gid, "seat": seat, "status": status, "to_phase": to, "at_phase": at, "new_phase": None,
                "pending": self._pending(gid, meta, ph, self.now()), "text": said}

    # -- internals -----------------------------------------------------------------------
    def _line(self, gid: str, meta: dict[str, str], game: Game) -> tuple[Line, list[dict[str, Any]]]:
        """The game replayed from its seed through its history (rollbacks included), and
        the open step's unprompted actions so far."""
        steps, open_actions = self.store.history_and_open(gid, events=False)
        line = engine_rollback.replay(game, int(meta["seats"]), json.loads(meta["options"]),
                                      json.loads(meta["seed"]), steps)
        return line, open_actions

    def _apply(self, gid: str, meta: dict[str, str], game: Game, ph: dict[str, str], line: Line, to_phase: int,
               text: str, version: int | None, proposal: str, consented: bool, guard: bool) -> dict[str, Any] | None:
        """Write the rollback (rollback.lua) and make its effects as `Orders._commit` does
        (notices, the new step's deadline and bot jobs, the old deadline's check taken
        back). `guard`: applied because nothing hidden was revealed, so the script refuses
        a sealed step that holds orders by now. None when the open step moved under it
        (an action, a sealed order): judge again."""
        at = int(ph["id"])
        restored = line.openings[to_phase]
        requests = game.requests(restored)
        pol = Policy(**json.loads(meta["policy"]))
        sealed = any(r.sealed for r in requests)
        nxt: dict[str, Any] = {"id": at + 1, "expected": sorted(r.seat for r in requests),
                               "kind": requests[0].kind, "sealed": sealed, "seconds": pol.seconds(sealed)}
        if pol.clock == "bank":
            # Ruling: a rollback gives no clock time back; each seat's bank stands as the
            # meta holds it, and the reopened step runs on those banks.
            nxt["seconds"], extra = self.bank_fields(pol, meta, nxt["expected"], None)
            nxt["fields"] = extra["step"]
        record = {"to_phase": to_phase, "at_phase": at, "new_phase": at + 1, "consented": consented}
        # How many orders the open step held, as read just before (public: who has answered
        # is; what they ordered is set aside unseen): none, and the words leave that out.
        said = {"type": "game_rolled_back", "visible_to": "all", "phase": at, "to_phase": to_phase,
                "new_phase": at + 1, "step": text, "consented": consented,
                "set_aside": len(self.store.answered(gid, at))}
        events = [said, {"type": "step_opened", "visible_to": "all", "phase": at + 1, "kind": nxt["kind"],
                         "sealed": sealed, "seats": nxt["expected"]}]
        if nxt.get("fields"):  # a time bank: each asked seat's clock at the opening (public), as a commit says
            events[-1]["clocks"] = json.loads(nxt["fields"]["banks"])
        out = self.store.rollback(gid, at, version, guard, proposal, restored, record, nxt, events)
        if out.status != "ok":
            if out.value in ("version", "sealed_orders") and not proposal:
                return None
            self._refused(out.value)
        last, told, _paused = out.extra.split()
        if told != "1":
            self.jobs.notify(gid, int(last))
        self.jobs.deadline(gid, at + 1, float(out.value))
        seats = self.store.seats(gid)
        for seat in nxt["expected"]:
            if (seats.get(seat) or {}).get("bot"):
                self.jobs.bot(gid, at + 1, seat)
        self.plan_absence_bots(gid, meta, at + 1, nxt["expected"], seats)  # type: ignore[attr-defined]
        if ph.get("deadline"):
            self.jobs.cancel_deadline(gid, at, float(ph["deadline"]))
        log.info("game %s: rolled back at step %d to step %d; step %d open", gid, at, to_phase, at + 1)
        return {"game": gid, "status": "applied", "to_phase": to_phase, "at_phase": at, "new_phase": at + 1,
                "pending": None, "text": words.service_sentence(said, self.names(gid, meta))}

    def _lapse_if_expired(self, gid: str, meta: dict[str, str], ph: dict[str, str], now: float) -> None:
        """A proposal whose time ran out is dropped (and said) by the first who meets it."""
        if ph.get("rollback_id") and float(ph.get("rollback_expires") or 0) <= now:
            got = self.store.rollback_vote(gid, "withdraw", int(ph["id"]), ph["rollback_id"], None, [], [])
            if got.status == "refused" and got.value == "lapsed":
                self._tell_lapsed(gid, int(ph["id"]), json.loads(ph.get("rollback") or "{}").get("to_phase"),
                                  "expired")

    def _tell_lapsed(self, gid: str, at: int, to: Any, why: str) -> None:
        out = self.store.append_events(gid, [{"type": "rollback_lapsed", "visible_to": "all", "phase": at,
                                              "to_phase": to, "why": why}])
        if out.status == "ok":
            self.jobs.notify(gid, int(out.extra))

    @staticmethod
    def _running(meta: dict[str, str], ph: dict[str, str]) -> None:
        if meta["status"] == "lobby" or not ph:
            raise Problem("game_not_started")
        if meta["status"] == "finished" or ph.get("status") == "finished":
            raise Problem("game_finished")
        if ph.get("status") != "collecting":
            raise Problem("step_locked", "the open step is being resolved; try again in a moment")

    @staticmethod
    def _refused(why: str) -> None:
        raise {
            "no_game": Problem("game_not_found"), "lobby": Problem("game_not_started"),
            "finished": Problem("game_finished"), "locked": Problem("step_locked"),
            "moved": Problem("no_rollback_pending", "the game moved on: the proposal lapsed"),
            "pending": Problem("rollback_pending"), "no_proposal": Problem("no_rollback_pending"),
            "lapsed": Problem("no_rollback_pending", "the proposal's time ran out: it lapsed"),
        }.get(why) or Problem("step_locked", "the game moved on; try again", status=409)
