"""A time bank as a deadline policy (issue 25): a chess clock per seat.

With `clock: "bank"` in a game's deadline policy (`service.core.policy.Policy`) each seat
has a bank of seconds. The rulings:

- Every seat starts with `bank_start_seconds`. The banks live in the game's meta field
  `banks` (JSON, seat -> seconds), written by the commit that closes a step
  (commit.lua's extra fields) and so atomic with it.
- A bank runs only while its seat is asked and has not answered, and never while the
  game is paused: the step hash's `paused_at` (the pause going on, '' or absent when
  none) and `pauses` (JSON list of `[start, end]`, the step's past pauses) are
  subtracted (`paused_within`).
- When a step opens, the step hash gets `banks` (JSON, each asked seat's bank at the
  opening). Each asked seat's own deadline is the opening + its bank + the paused time
  before it (`runs_out_at`). The step's `deadline` is the earliest own deadline of the
  asked seats that have not answered: the commit opens the step with the smallest bank
  as its length, and the deadline check (`TimeBank.bank_check`) moves it on to the next
  own deadline (`Store.move_deadline`, planned with `Jobs.deadline`) when it finds the
  earliest seat answered or played out of time. Between two checks it may be earlier
  than the next own deadline, never later: no clock runs out unchecked.
- When a seat answers, its bank is debited by the time it was asked: its order's time
  stamp (`at`, the store's clock) - the opening - the paused time between them, floored
  at 0; then `bank_add_seconds` is added, up to `bank_cap_seconds` (`bank_after`). The
  debit is made when the step resolves, from the stored order: a seat that replaces its
  order is debited up to its last one. A seat the step does not ask keeps its bank.
- A seat out of time has its decision made at once by the policy's `bank_out`: the
  engine's default order (`defaults`) or the order of the bot `bank_bot` (`bot`), stored
  as its order with `via` "clock" (clock.lua: only when the seat has no order stored, so
  the seat's own order, stored first, always wins, and a repeated check stores nothing),
  with a public `clock_ran_out` event; what was played is told to that seat alone
  (`clock_played`) when the step is sealed, to everyone in the event when it is not. Its
  bank is then 0 + `bank_add_seconds` (ruling: running out is a decision made for it, and
  it gains the add like any other decision). The step waits on for the others, each
  until its own deadline, and resolves when every asked seat has answered, as always.
- Ruling: while the step still waits on others, a seat played out of time may still
  replace that order with its own (any stored order may be replaced while a step
  collects); its bank stays 0 + the add all the same (the debit floors at 0).
- A step whose `deadline` passed while the check was lost (a worker died) is found by the
  sweeper, whose check (`Orders.deadline`) runs this one first: the seats out of time are
  played, the others wait on.
- `on_expiry: "extend"` has no meaning with a bank and is refused at creation.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from engine.core import registry
from service.core.base import Base
from service.core.choices import order_sentence
from service.core.policy import Policy, stored_policy
from service.core.records import order_record, stamp

log = logging.getLogger("kontor")

#: A pause: `[start, end]` in epoch seconds.
Pause = Sequence[float]


# -- pure arithmetic --------------------------------------------------------------------
def pauses_of(ph: Mapping[str, str]) -> tuple[list[tuple[float, float]], float | None]:
    """A step hash's past pauses (`pauses`, JSON list of [start, end]) and the pause going
    on (`paused_at`, None when none)."""
    raw = ph.get("pauses") or "[]"
    try:
        past = [(float(a), float(b)) for a, b in json.loads(raw)]
    except (ValueError, TypeError):
        log.warning("unreadable pauses %r: counted as none", raw)
        past = []
    at = ph.get("paused_at") or ""
    return past, (float(at) if at else None)


def paused_within(start: float, end: float, pauses: Iterable[Pause], paused_at: float | None = None) -> float:
    """Seconds of [start, end] that fall in the pauses (each [a, b]) or in the pause going
    on since `paused_at` (up to `end`). Overlapping pauses count once."""
    spans = sorted((float(a), float(b)) for a, b in pauses)
    if paused_at is not None:
        spans.append((paused_at, max(paused_at, end)))
        spans.sort()
    total, reach = 0.0, start
    for a, b in spans:
        a, b = max(a, reach), min(b, end)
        if b > a:
            total += b - a
            reach = b
    return total


def asked_seconds(opened: float, answered: float, pauses: Iterable[Pause], paused_at: float | None = None) -> float:
    """How long a seat asked at `opened` was asked when it answered at `answered`: the
    time between, less the paused time, never below 0."""
    return max(0.0, answered - opened - paused_within(opened, answered, pauses, paused_at))


def runs_out_at(opened: float, bank: float, pauses: Iterable[Pause], paused_at: float | None = None) -> float | None:
    """When a seat asked at `opened` with `bank` seconds runs out: its clock stops in each
    pause. None while a pause goes on (since `paused_at`) before it runs out."""
    t, left = opened, max(0.0, float(bank))
    spans = sorted((float(a), float(b)) for a, b in pauses)
    if paused_at is not None:
        spans.append((paused_at, float("inf")))
        spans.sort()
    for a, b in spans:
        if b <= t:
            continue
        if a > t:
            if a - t >= left:
                return t + left
            left -= a - t
        if b == float("inf"):
            return None
        t = b
    return t + left


def bank_after(pol: Policy, bank: float, asked: float | None) -> int:
    """A seat's bank after a decision it was asked `asked` seconds for (None: made for it
    by the clock, out of time): debited, floored at 0, plus the add, capped."""
    left = 0.0 if asked is None else max(0.0, bank - asked)
    return int(min(pol.bank_cap_seconds, left + pol.bank_add_seconds))


def banks_after(pol: Policy, banks: Mapping[int, int], ph: Mapping[str, str],
                records: Mapping[int, Mapping[str, Any]]) -> dict[int, int]:
    """Every seat's bank once step `ph` resolves with the stored order `records`: an asked
    seat with an order is debited (`bank_after`; an order made by the clock or none at
    all counts as out of time), the others keep theirs."""
    out = dict(banks)
    opened = float(ph.get("opened_at") or 0)
    past, paused_at = pauses_of(ph)
    opening = {int(s): int(v) for s, v in json.loads(ph.get("banks") or "{}").items()}
    for seat in json.loads(ph.get("expected") or "[]"):
        rec = records.get(seat)
        bank = opening.get(seat, out.get(seat, pol.bank_start_seconds))
        asked = None if rec is None or rec.get("via") == "clock" else \
            asked_seconds(opened, float(rec["at"]), past, paused_at)
        out[seat] = bank_after(pol, bank, asked)
    return out


def opening_banks(pol: Policy, meta: Mapping[str, str], seats: int) -> dict[int, int]:
    """The banks as the game's meta holds them (every seat at the start's before any)."""
    stored = {int(s): int(v) for s, v in json.loads(meta.get("banks") or "{}").items()}
    return {s: stored.get(s, pol.bank_start_seconds) for s in range(seats)}


def own_deadlines(ph: Mapping[str, str], waiting: Iterable[int]) -> dict[int, float | None]:
    """Each waiting seat's own deadline in the open step `ph` (None: paused)."""
    opened = float(ph.get("opened_at") or 0)
    past, paused_at = pauses_of(ph)
    opening = {int(s): int(v) for s, v in json.loads(ph.get("banks") or "{}").items()}
    return {s: runs_out_at(opened, opening.get(s, 0), past, paused_at) for s in waiting}


def is_bank(meta: Mapping[str, str]) -> Policy | None:
    """The game's policy when it keeps time banks, else None."""
    raw = meta.get("policy")
    if not raw:
        return None
    pol = stored_policy(raw)
    return pol if pol.clock == "bank" else None


def clocks(meta: Mapping[str, str], ph: Mapping[str, str], answered: Iterable[int],
           now: float) -> dict[str, dict[str, Any]] | None:
    """Each seat's clock as the readers see it (None unless the game keeps time banks):
    `bank_seconds` (what is left now: for a seat asked and not answered, its bank at
    the opening less the time it has been asked) and `runs_out_at` (epoch seconds, for
    a seat whose clock runs now; None otherwise or while paused)."""
    pol = is_bank(meta)
    if pol is None:
        return None
    banks = opening_banks(pol, meta, int(meta["seats"]))
    out: dict[str, dict[str, Any]] = {str(s): {"bank_seconds": b, "runs_out_at": None}
                                      for s, b in banks.items()}
    if ph.get("status") != "collecting":
        return out
    done = set(answered)
    opened = float(ph.get("opened_at") or 0)
    past, paused_at = pauses_of(ph)
    opening = {int(s): int(v) for s, v in json.loads(ph.get("banks") or "{}").items()}
    for seat in json.loads(ph.get("expected") or "[]"):
        if seat in done or seat not in opening:
            continue
        used = asked_seconds(opened, max(now, opened), past, paused_at)
        out[str(seat)] = {"bank_seconds": max(0, int(opening[seat] - used)),
                          "runs_out_at": None if paused_at is not None else
                          runs_out_at(opened, opening[seat], past, paused_at)}
    return out


# -- the use case -----------------------------------------------------------------------
class TimeBank(Base):
    """The time bank's part of the deadline check, the commit's banks, and the clocks as
    the game's readers see them."""

    def bank_fields(self, pol: Policy, meta: Mapping[str, str], expected: Sequence[int],
                    banks: Mapping[int, int] | None) -> tuple[int, dict[str, dict[str, str]]]:
        """For a commit that opens a step asking `expected` (none: the game is over): the
        step's length (the smallest bank asked) and the extra fields commit.lua writes
        (the meta's `banks` and the step's opening `banks`). `banks`: after the closed
        step (None: as the meta holds them, the start's for a new game)."""
        now = dict(banks) if banks is not None else opening_banks(pol, meta, int(meta["seats"]))
        extra = {"meta": {"banks": json.dumps({str(s): v for s, v in sorted(now.items())})}}
        if not expected:
            return 0, extra
        asked = {s: now.get(s, pol.bank_start_seconds) for s in expected}
        extra["step"] = {"banks": json.dumps({str(s): v for s, v in sorted(asked.items())})}
        return min(asked.values()), extra

    def bank_check(self, gid: str, phase: int) -> str:
        """The time bank's part of the deadline check (before expire.lua): the seats of
        the open step `phase` whose own deadline passed are played out of time (exactly
        once each), and the step's deadline moves to the next own deadline. Answers
        `none` (not a bank game, or nothing open), `paused`, `played` (the last seat's
        order flipped the step), or `waiting`."""
        for _ in range(5):
            meta, ph, state, now = self._snapshot(gid)
            pol = is_bank(meta)
            if pol is None or ph.get("id") != str(phase) or ph.get("status") != "collecting" or state is None:
                return "none"
            if ph.get("paused_at"):
                return "paused"
            answered = set(self.store.answered(gid, phase))
            waiting = [s for s in json.loads(ph["expected"]) if s not in answered]
            own = own_deadlines(ph, waiting)
            out = [s for s in waiting if (own[s] or float("inf")) <= now]
            stale = False
            for seat in out:
                status = self._play_out_of_time(gid, meta, ph, state, pol, seat, own[seat] or now)
                if status == "trigger":
                    return "played"
                if status == "stale":  # extended, paused or resumed since the read: read again
                    stale = True
                    break
            if stale:
                continue
            left = [t for s, t in own.items() if s not in out and t is not None]
            if not left:
                return "waiting"
            nxt = min(left)
            read = float(ph["deadline"])
            if abs(nxt - read) < 1e-6:
                return "waiting"
            moved = self.store.move_deadline(gid, phase, nxt, read=read)
            if moved.status == "moved":
                self.jobs.deadline(gid, phase, nxt)
                log.info("game %s phase %d: the next clock runs out at %s", gid, phase, f"{nxt:.0f}")
                return "waiting"
        return "waiting"

    def _play_out_of_time(self, gid: str, meta: Mapping[str, str], ph: Mapping[str, str], state: Any,
                          pol: Policy, seat: int, due: float) -> str:
        """Store the decision of `seat`, out of time, with its events (clock.lua)."""
        game = self._title(meta["title"])
        phase = int(ph["id"])
        order, by = None, "defaults"
        if pol.bank_out == "bot" and pol.bank_bot:
            order = self.bot_decision(meta, state, phase, seat, pol.bank_bot)
            by = pol.bank_bot if order is not None else by
        if order is None:
            order = game.default_order(state, seat)
        sealed = ph.get("sealed") == "1"
        said = order_sentence(game, state, seat, order, self.names(gid, dict(meta)))
        # `by`: the engine's defaults, or the bot kind that played.
        public: dict[str, Any] = {"type": "clock_ran_out", "visible_to": "all", "phase": phase, "seat": seat,
                                  "by": by}
        events = [public]
        if sealed:
            events.append({"type": "clock_played", "visible_to": [seat], "phase": phase, "seat": seat,
                           "order": order, "said": said})
        else:
            public.update(order=order, said=said)
        record = order_record(order, "clock", stamp(due), None, None)
        out = self.store.clock_order(gid, phase, seat, record, due, events,
                                     read=(ph.get("banks") or "", ph.get("pauses") or ""))
        if out.status in ("stored", "trigger"):
            log.info("game %s phase %d: seat %d ran out of time; %s played", gid, phase, seat, pol.bank_out)
            self.jobs.notify(gid, int(out.extra))
            if out.status == "trigger":
                self.jobs.resolve(gid, phase)
        return out.status

    def bot_decision(self, meta: Mapping[str, str], state: Any, phase: int, seat: int, kind: str) -> Any:
        """The order bot `kind` makes for `seat` in step `phase` (seeded per game, step and
        seat, as a bot seat's), None when the state asks nothing of the seat or the title
        has no such bot."""
        game = self._title(meta["title"])
        mine = [r for r in game.requests(state) if r.seat == seat]
        bots = registry.bots(meta["title"])
        if not mine or kind not in bots:
            return None
        bot = bots[kind](f"{json.loads(meta['seed'])}/{phase}/{seat}")
        return bot.order(game, state, mine[0])
