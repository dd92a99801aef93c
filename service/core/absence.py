"""Absences (issue 25): a seat declares the dates it is away; the game's policy either
extends a deadline that falls in an absence (within a limit) or lets a bot play the away
seat; once the absence has ended the seat is told, in words, what was played for it.

Rulings:
* An absence is `{"from", "until"}`, ISO 8601 in UTC (`2026-12-20T00:00:00Z`, `+00:00`,
  or a date alone, `2026-12-20`: its midnight UTC), whole seconds. `until` after `from`;
  at most `absence_max_days` long; ending within `absence_horizon_days`; wholly in the
  past refused; one that began in the past starts now (an absence under way keeps its
  start when it is sent again); at most `absence_max_count` per seat; none overlapping.
  A seat's list is replaced as a whole (an empty list: back, none planned); an absence
  under way that the new list leaves out ends now (it is still told). Refused input
  (`bad_absence`, with the `field`) changes nothing.
* Absences are public (the players list says "away until 3 January": it explains a
  moved deadline).
* `extend` mode (`Orders.deadline` -> `absence_deadline`, before expire.lua): at the
  deadline, when a seat asked that has not answered is away then, the deadline moves to
  the end of its absence plus the step's length, at most `absence_limit_seconds` past the
  step's deadline before any absence extension (`absence_base`, and the total in
  `absence_extended`, in the step hash); a public `deadline_extended` event with
  `reason: "absence"` says why.
* `bot` mode: a bot of kind `absence_bot` plays the away seat's decisions: those that
  open while it is away (planned when the step opens, and when an absence starting now
  is declared) and those that reach their deadline while it is away. Its order is stored
  with `via="absence"`; the seat stays the player's.
* Each decision played for an away seat (the bot's, or the default at a deadline) is a
  private event `absence_played` of the step's commit (its words from the title's
  `describe_order`, on the state it was played on); at the absence's end (a job, and the
  sweep as the net) one private `absence_summary` event lists them, appended in the same
  script that takes the absence off the seat's list: told once, never lost.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from engine.core import registry
from engine.core.game import Game
from service import words
from service.core.base import Base
from service.core.choices import order_sentence
from service.core.clock import iso
from service.core.errors import Problem
from service.core.policy import Policy, stand_in_bot, stored_policy
from service.core.rollback import undoes

log = logging.getLogger("kontor")

#: How many seats' ended absences one sweep tells, per bucket of the schedule.
SWEEP_BATCH = 100
#: The policy fields the host may change (`update_absence_policy`).
POLICY_FIELDS = ("absence", "absence_limit_seconds", "absence_bot")


def parse_moment(value: Any, field: str, name: str = "the date") -> int:
    """An ISO 8601 moment in UTC as whole seconds since the epoch (a date alone: its
    midnight UTC); `bad_absence` naming `field` otherwise (`name`: the date in words)."""
    if not isinstance(value, str) or not 10 <= len(value) <= 32:
        raise Problem("bad_absence", f"{name} is a date (2026-12-20) or a UTC time (2026-12-20T00:00:00Z)",
                      field=field)
    text = value.strip()
    try:
        if len(text) == 10:
            at = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
        else:
            at = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
    except ValueError:
        raise Problem("bad_absence", f"{name}: {value!r} is not a date (2026-12-20) or a UTC time "
                                     "(2026-12-20T00:00:00Z)", field=field) from None
    if at.tzinfo is None or at.utcoffset() != UTC.utcoffset(None):
        raise Problem("bad_absence", f"{name}: give the time in UTC (ending in Z or +00:00)", field=field)
    if at.microsecond:
        raise Problem("bad_absence", f"{name}: whole seconds only", field=field)
    return int(at.timestamp())


def covering(absences: list[dict[str, int]] | None, at: float) -> dict[str, int] | None:
    """The absence of the list that `at` falls in (from <= at < until), if any."""
    for a in absences or []:
        if a["from"] <= at < a["until"]:
            return a
    return None


def public_absences(absences: list[dict[str, int]] | None, now: float) -> list[dict[str, str | None]]:
    """The absences not ended yet, as the API shows them."""
    return [{"from": iso(a["from"]), "until": iso(a["until"])} for a in absences or [] if a["until"] > now]


def first_bot(title: str) -> str | None:
    """The bot that plays an away seat when the policy names none (`stand_in_bot`)."""
    return stand_in_bot(list(registry.bots(title)))


def policy_of(meta: dict[str, str]) -> Policy:
    return stored_policy(meta["policy"])


def absence_policy(pol: Policy, title: str) -> Policy:
    """`pol` with its bot kind checked against the title's (none given: its first)."""
    kinds = registry.bots(title)
    if pol.absence_bot is None:
        pol = Policy(**{**pol.as_dict(), "absence_bot": first_bot(title)})
    if pol.absence_bot is None and pol.absence == "bot":
        raise Problem("bad_deadline_policy", "this title has no bot to play an away seat", field="absence")
    if pol.absence_bot is not None and pol.absence_bot not in kinds:
        raise Problem("bad_deadline_policy", f"absence_bot is one of {', '.join(sorted(kinds))}",
                      field="absence_bot")
    return pol


def with_absences(store: Any, gid: str, players: list[dict[str, Any]], now: float) -> list[dict[str, Any]]:
    """The game's players, each with its absences not ended yet (public)."""
    away = {s: public_absences(listed, now) for s, listed in store.absences(gid).items()}
    return [{**p, "absences": away.get(p["seat"], [])} for p in players]


class Absence(Base):
    """Seats' absences and what the game does about them."""

    # -- the seat's list ----------------------------------------------------------------
    def get_absences(self, gid: str, seat: int) -> dict[str, Any]:
        """A seat's absences not ended yet (public)."""
        self.check_seat(self._meta(gid), seat)
        listed, _ = self.store.seat_absences(gid, seat)
        return self._absence_answer(gid, seat, listed, self.now())

    def _absence_answer(self, gid: str, seat: int, listed: list[dict[str, int]], now: float) -> dict[str, Any]:
        shown = [a for a in listed if a["until"] > now]
        away = covering(shown, now)
        if not shown:
            text = "No absence planned."
        elif away is not None:
            text = f"Away until {words.day(away['until'], year=True)}."
            later = [a for a in shown if a is not away]
            if later:
                text += " Then away " + "; ".join(words.away_span(a["from"], a["until"]) for a in later) + "."
        else:
            text = "Away " + "; ".join(words.away_span(a["from"], a["until"]) for a in shown) + "."
        return {"game": gid, "seat": seat, "absences": public_absences(shown, now),
                "away": away is not None, "text": text}

    def set_absences(self, gid: str, seat: int, given: Any) -> dict[str, Any]:
        """Replace the seat's absences with `given` (a list of {from, until}); see the
        module's rulings. Raises `bad_absence` and stores nothing on bad input."""
        meta = self._meta(gid)
        self.check_seat(meta, seat)
        if meta["status"] == "finished":
            raise Problem("game_finished")
        if not isinstance(given, list):
            raise Problem("bad_absence", "absences is a list of {from, until}", field="absences")
        s = self.settings
        if len(given) > s.absence_max_count:
            raise Problem("bad_absence", f"at most {s.absence_max_count} absences at once", field="absences")
        parsed: list[tuple[int, int]] = []
        for i, a in enumerate(given):
            where = f"absences[{i}]"
            if not isinstance(a, dict) or set(a) != {"from", "until"}:
                raise Problem("bad_absence", "an absence has exactly a 'from' and an 'until'", field=where)
            parsed.append((parse_moment(a["from"], f"{where}.from", "from"),
                           parse_moment(a["until"], f"{where}.until", "until")))
        for _ in range(8):
            now = int(self.now())
            listed, raw = self.store.seat_absences(gid, seat)
            ended = [a for a in listed if a["until"] <= now]
            current = covering(listed, now)
            new: list[dict[str, int]] = []
            for i, (start, end) in enumerate(parsed):
                where, said = f"absences[{i}]", words.away_span(start, end)
                if end <= start:
                    raise Problem("bad_absence", f"{said}: the day you are back must be after the day you leave",
                                  field=f"{where}.until")
                if end - start > s.absence_max_days * 86400:
                    raise Problem("bad_absence", f"{said}: an absence is at most {s.absence_max_days} days",
                                  field=f"{where}.until")
                if end <= now:
                    raise Problem("bad_absence", f"{said}: that absence is over already", field=f"{where}.until")
                if end > now + s.absence_horizon_days * 86400:
                    raise Problem("bad_absence", f"{said}: an absence must end within {s.absence_horizon_days} "
                                                 "days from now", field=f"{where}.until")
                if start <= now:  # under way: it starts now, or keeps the start of the one under way
                    start = current["from"] if current is not None else now
                new.append({"from": start, "until": end})
            new.sort(key=lambda a: a["from"])
            for before, after in zip(new, new[1:], strict=False):
                if after["from"] < before["until"]:
                    raise Problem("bad_absence", "two absences overlap: make them one", field="absences")
            if current is not None and not any(a["from"] == current["from"] for a in new):
                ended.append({"from": current["from"], "until": now})  # back early: told what was played
            kept = sorted([a for a in ended if a["until"] > a["from"]] + new, key=lambda a: (a["until"], a["from"]))
            ends = [a["until"] for a in kept]
            if ends:  # the sweep's schedule first: no listed absence is unknown to it
                self.store.plan_absence_end(gid, seat, min(ends))
            if self.store.set_absences(gid, seat, raw, kept):
                break
        else:
            raise Problem("step_locked", "the absences changed while they were being written; try again", status=409)
        self.store.plan_absence_end(gid, seat, min(ends) if ends else None)
        for end in sorted(set(ends)):
            self.jobs.absence_end(gid, seat, float(end))
        log.info("game %s: seat %d declared %d absence(s)", gid, seat, len(new))
        if meta["status"] == "running" and covering(new, now) is not None:
            self._absence_bot_now(gid, meta, seat)
        return self._absence_answer(gid, seat, kept, now)

    def _absence_bot_now(self, gid: str, meta: dict[str, str], seat: int) -> None:
        """In `bot` mode, an away seat asked by the open step gets its bot job at once."""
        if policy_of(meta).absence != "bot":
            return
        ph = self.store.phase(gid)
        if ph.get("status") == "collecting" and seat in json.loads(ph.get("expected") or "[]"):
            self.jobs.bot(gid, int(ph["id"]), seat)

    # -- the policy ---------------------------------------------------------------------
    def update_absence_policy(self, gid: str, changes: dict[str, Any]) -> dict[str, Any]:
        """Change the game's absence policy (the host): refused with `absence_in_use` while
        a seat is away now or the open step's deadline was extended for an absence."""
        meta = self._meta(gid)
        if meta["status"] == "finished":
            raise Problem("game_finished")
        if not changes:  # nothing to change: the game as it is (a PATCH of nothing changes nothing)
            return self.game(gid)  # type: ignore[attr-defined, no-any-return]
        old = policy_of(meta)
        pol = Policy.checked({**old.as_dict(), **changes}, self.settings.min_step_seconds,
                             self.settings.max_step_seconds, bots=list(registry.bots(meta["title"])),
                             bank=(self.settings.bank_min_seconds, self.settings.bank_max_seconds))
        pol = absence_policy(pol, meta["title"])
        now = self.now()
        away = [s for s, listed in self.store.absences(gid).items() if covering(listed, now) is not None]
        if away:
            names = self.names(gid, meta)
            raise Problem("absence_in_use", f"{words.listing([names[s] for s in away])} "
                                            f"{'is' if len(away) == 1 else 'are'} away now: change it once "
                                            "nobody is", seats=away)
        ph = self.store.phase(gid)
        if ph.get("status") == "collecting" and int(ph.get("absence_extended") or 0) > 0:
            raise Problem("absence_in_use", "the open step's deadline was extended for an absence: change it once "
                                            "the step is over")
        if not self.store.set_policy(gid, meta["policy"], pol.as_dict()):
            raise Problem("step_locked", "the game's policy changed meanwhile; try again", status=409)
        log.info("game %s: absence policy now %s", gid, {k: getattr(pol, k) for k in POLICY_FIELDS})
        return self.game(gid)  # type: ignore[attr-defined,no-any-return]

    # -- at a deadline (`Orders.deadline`) ----------------------------------------------
    def absence_deadline(self, gid: str, phase: int, meta: dict[str, str], pol: Policy) -> str | None:
        """Before expire.lua: at the deadline, seats asked that have not answered and are
        away then get their deadline moved (`extend`) or a bot's order (`bot`). A status
        when this settled the check ("extended", "noop"), else None (expire.lua goes on)."""
        ph = self.store.phase(gid)
        if ph.get("id") != str(phase) or ph.get("status") != "collecting" or ph.get("paused_at"):
            return None
        deadline = float(ph["deadline"])
        if self.now() < deadline:
            return None
        if pol.absence == "extend" and pol.clock == "bank":
            return None  # a time bank is the seat's own allowance: an absence does not stretch it
        absences = self.store.absences(gid)
        if not absences:
            return None
        answered = set(self.store.answered(gid, phase))
        seats = self.store.seats(gid)
        away = {s: a for s in json.loads(ph["expected"])
                if s not in answered and not (seats.get(s) or {}).get("bot")
                and (a := covering(absences.get(s), deadline)) is not None}
        if not away:
            return None
        if pol.absence == "bot":
            for s in sorted(away):
                self.bot_order(gid, phase, s, at=deadline)  # type: ignore[attr-defined]
            return None
        base = float(ph.get("absence_base") or deadline)
        seconds = int(ph.get("seconds") or pol.seconds(ph.get("sealed") == "1"))
        seat, absence = max(away.items(), key=lambda kv: (kv[1]["until"], -kv[0]))
        target = min(float(absence["until"] + seconds), base + pol.absence_limit_seconds)
        if target <= deadline:
            return None  # the limit is reached: the deadline passes as it would
        out = self.store.move_deadline(gid, phase, target, read=deadline, absence_base=f"{base:.6f}",
                                       absence_extended=str(int(target - base)))
        if out.status != "moved":
            return "noop"  # moved meanwhile (its mover planned its check) or resolved
        self.jobs.deadline(gid, phase, target)
        event = {"type": "deadline_extended", "visible_to": "all", "phase": phase, "reason": "absence",
                 "seat": seat, "seats": sorted(away), "until": iso(absence["until"]), "deadline": iso(target),
                 "extended_seconds": int(target - base),
                 "capped": target < float(absence["until"] + seconds)}  # the game's limit stopped it there
        done = self.store.append_events(gid, [event])
        if done.status == "ok":
            self.jobs.notify(gid, int(done.extra))
        log.info("game %s phase %d: deadline moved to %s for the absence of seat(s) %s", gid, phase, iso(target),
                 sorted(away))
        return "extended"

    def absence_bot_kind(self, gid: str, meta: dict[str, str], seat: int, at: float | None = None) -> str | None:
        """The bot kind that plays `seat` now (or at `at`) because it is away, in `bot`
        mode; else None."""
        pol = policy_of(meta)
        if pol.absence != "bot":
            return None
        listed, _ = self.store.seat_absences(gid, seat)
        if covering(listed, self.now() if at is None else at) is None:
            return None
        return pol.absence_bot or first_bot(meta["title"])

    def plan_absence_bots(self, gid: str, meta: dict[str, str], phase: int, expected: list[int],
                          seats: dict[int, dict[str, Any]]) -> None:
        """A step opened (`Orders._commit`): in `bot` mode, a bot job for every player's
        seat asked that is away now."""
        if policy_of(meta).absence != "bot":
            return
        now = self.now()
        absences = self.store.absences(gid)
        for seat in expected:
            if not (seats.get(seat) or {}).get("bot") and covering(absences.get(seat), now) is not None:
                self.jobs.bot(gid, phase, seat)

    # -- at a resolution (`Orders._resolve_once`) ---------------------------------------
    def absence_played(self, gid: str, ph: dict[str, str], meta: dict[str, str], game: Game, state: Any,
                       stored: dict[int, dict[str, Any]], orders: dict[int, Any],
                       defaults: list[int]) -> list[dict[str, Any]]:
        """The private `absence_played` events of a step being resolved: a seat whose
        order its absence's bot gave, or that was away when the deadline played its
        default. Reads the absences only when there can be one."""
        phase = int(ph["id"])
        by_bot = [s for s, rec in stored.items() if rec.get("via") == "absence" and s in orders]
        late = [s for s in defaults if ph.get("defaults") == "1" and s not in by_bot]
        if not by_bot and not late:
            return []
        at = float(ph.get("flipped_at") or ph.get("deadline") or self.now())
        absences = self.store.absences(gid) if late else {}
        late = [s for s in late if covering(absences.get(s), at) is not None]
        names = self.names(gid, meta)
        pol = policy_of(meta)
        out = []
        for seat in sorted(by_bot + late):
            order = orders[seat]
            text = order_sentence(game, state, seat, order, names) or words.order_words(order)
            rec: dict[str, Any] = {"type": "absence_played", "visible_to": [seat], "phase": phase, "seat": seat,
                                   "by": "bot" if seat in by_bot else "default", "text": words.tidy(text)}
            if seat in by_bot:
                rec["bot"] = pol.absence_bot or first_bot(meta["title"])
            out.append(rec)
        return out

    # -- after an absence ---------------------------------------------------------------
    def absence_end(self, gid: str, seat: int) -> int:
        """Tell the seat, once, what was played for it during each of its absences that
        has ended (the job at an absence's end, and the sweep); how many were told."""
        told = 0
        listed, _ = self.store.seat_absences(gid, seat)
        now = self.now()
        meta = self.store.meta(gid)
        for a in [a for a in listed if a["until"] <= now]:
            if not meta:
                break
            steps = self._played_between(gid, seat, a["from"], a["until"])
            steps += self._played_in_open_step(gid, meta, seat, steps)
            event = {"type": "absence_summary", "visible_to": [seat], "phase": int(self.store.phase(gid).get("id")
                                                                                     or 0),
                     "seat": seat, "from": iso(a["from"]), "until": iso(a["until"]), "steps": steps}
            out = self.store.tell_absence(gid, seat, a["from"], a["until"], event)
            if out.status == "ok":
                told += 1
                self.jobs.notify(gid, int(out.extra))
                log.info("game %s: seat %d told what was played in its absence (%d steps)", gid, seat, len(steps))
        listed, _ = self.store.seat_absences(gid, seat)
        self.store.plan_absence_end(gid, seat, min((a["until"] for a in listed), default=None) if meta else None)
        return told

    def _played_in_open_step(self, gid: str, meta: dict[str, str], seat: int,
                             told: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The decision the absence's bot made for `seat` in the step still open (a sealed
        or simultaneous step that resolves after the seat is back has no `absence_played`
        event yet): told too, with a word that the seat may still change it. Ruling: when
        that step resolves, its private `absence_played` event tells it once more."""
        meta_now, ph, state = self.store.snapshot(gid)
        if not ph or ph.get("status") not in ("collecting", "resolving") or state is None:
            return []
        phase = int(ph["id"])
        rec = self.store.orders(gid, phase).get(seat)
        if not rec or rec.get("via") != "absence" or any(s.get("phase") == phase for s in told):
            return []
        game = self._title(meta["title"])
        text = order_sentence(game, state, seat, rec["order"], self.names(gid, meta)) or words.order_words(
            rec["order"])
        return [{"phase": phase, "by": "bot", "bot": policy_of(meta).absence_bot or first_bot(meta["title"]),
                 "text": words.tidy(text), "open": ph.get("status") == "collecting"}]

    def _played_between(self, gid: str, seat: int, start: int, end: int) -> list[dict[str, Any]]:
        """The `absence_played` records of `seat` in events stamped `start`..`end` (and a
        moment after, for a step that resolved as the absence ended), but those of steps a
        later rollback undid (`undoes`)."""
        out: list[dict[str, Any]] = []
        after = 0
        while True:
            rows = self.store.events(gid, after, 500)
            if not rows:
                return out
            for n, ev, at in rows:
                after = n
                if ev.get("type") == "game_rolled_back":
                    out = [rec for rec in out if not undoes(ev, rec.get("phase"))]
                elif (ev.get("type") == "absence_played" and ev.get("seat") == seat
                        and start <= float(at) <= end + self.settings.stuck_after):
                    out.append({k: ev[k] for k in ("phase", "by", "bot", "text") if k in ev})

    def tell_due_absences(self, now: float) -> int:
        """The sweep: tell every seat whose absence has ended and was not told (its job
        lost); how many were told."""
        told = 0
        for gid, seat in self.store.due_absence_ends(now, SWEEP_BATCH):
            try:
                told += self.absence_end(gid, seat)
            except Exception:  # one game's failure never stops the sweep
                log.exception("game %s seat %d: telling an ended absence failed", gid, seat)
        return told

