"""What the host does to a running game's clock: pause, resume, extend (issue 25).

* **Pause** (`Hosting.pause`, pause.lua): the open step's clock stops. The step hash
  gets `paused_at` (the store's clock); its deadline is left as it is. While paused,
  the deadline check does nothing (expire.lua answers `paused`, and no other check is
  planned: the sweeper passes a paused step by), and no step resolves: the last order of
  a step is stored and acknowledged as usual but does not flip it (submit.lua,
  order.lua). Ruling: players may still read, write messages and enter or change their
  orders while paused (a pause is for the clock, not a lock); bots still store theirs.
  Unprompted actions are refused (`game_paused`): they would change the game while the
  clock is stopped. A pause while the step is resolving is refused (`step_locked`: the
  resolution takes a moment; try again): it never lands on a step nobody has seen.
* **Resume** (`Hosting.resume`, resume.lua, one atomic step on the store's clock): the
  deadline moves on by exactly the time paused (now - `paused_at`), the pause
  [paused_at, now] joins the step's `pauses` (the time bank subtracts them), `paused_at`
  is cleared, and the step flips to `resolving` when every asked seat answered meanwhile
  (its resolution is enqueued). The deadline check is planned at the new deadline.
* **Extend** (`Hosting.extend`): the open step's deadline moves on by N seconds
  (`Store.move_deadline`, a compare-and-set on the deadline as read), within the
  settings' step bounds; allowed while paused (the deadline then moves on again at the
  resume). Every extension is an event.

For the other parts of issue 25: whatever measures how long a seat was asked (the time
bank) subtracts the paused time (`timebank.pauses_of`: the step's `pauses` and a running
`paused_at`); a rollback that opens a new step while the game is paused writes the
step's `paused_at` into the new step too (commit.lua opens a step unpaused); every
deadline check passes a paused step by (expire.lua answers `paused`).

Each is a public event (`game_paused`, `game_resumed`, `deadline_extended`, in words in
`service.words`), appended after the change (ruling, as `Lobby.tell_replaced`: should
the process die in between, the change stands and only its event is missing), told by
the notices (`service.channels.notify`) and the live stream.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from service import words
from service.core.base import Base
from service.core.clock import iso
from service.core.errors import Problem

log = logging.getLogger("kontor")

#: How often an extension reads the step again when another move of its deadline came
#: between its read and its write (each move is one script; this is a bound, not a wait).
ATTEMPTS = 5

_STATUS = {"no_game": "game_not_found", "lobby": "game_not_started", "finished": "game_finished"}


class Hosting(Base):
    """The host's pause, resume and extension of the open step's deadline."""

    def pause(self, gid: str) -> dict[str, Any]:
        """Stop the clock of the open step (host only; the HTTP layer checks the host)."""
        out = self.store.pause(gid)
        status = out[0]
        if status == "paused":
            raise Problem("game_paused", f"the game is paused already, since {words.utc_time(out[2])}",
                          paused_since=iso(out[2]))
        if status == "locked":
            raise Problem("step_locked", "the step is being resolved; pause again in a moment")
        if status != "ok":
            raise Problem(_STATUS.get(status, "game_finished"))
        phase, paused_at, deadline = int(out[1]), float(out[2]), float(out[3])
        # The planned check would find the step paused and do nothing: taken back (the
        # resume plans the check of the moved deadline).
        self.jobs.cancel_deadline(gid, phase, deadline)
        self._tell(gid, {"type": "game_paused", "visible_to": "all", "phase": phase, "paused_at": iso(paused_at),
                         "deadline": iso(deadline), "left": max(0, round(deadline - paused_at))})
        log.info("game %s step %d: paused by the host", gid, phase)
        return self.game(gid)  # type: ignore[attr-defined, no-any-return]

    def resume(self, gid: str) -> dict[str, Any]:
        """Start the clock again: the deadline moves on by exactly the time paused."""
        for _ in range(ATTEMPTS):
            meta, ph, _, _ = self._snapshot(gid)
            if meta["status"] != "running" or not ph:
                raise Problem(_STATUS.get(meta["status"], "game_finished"))
            if ph.get("status") == "finished":
                raise Problem("game_finished")
            if not ph.get("paused_at"):
                raise Problem("game_not_paused", "the game is not paused")
            out = self.store.resume(gid, int(ph["id"]))
            if out[0] == "stale":
                continue
            if out[0] == "not_paused":
                raise Problem("game_not_paused", "the game is not paused")
            if out[0] != "ok":
                raise Problem(_STATUS.get(out[0], "game_finished"))
            phase, deadline, shift = int(out[1]), float(out[2]), float(out[3])
            self._tell(gid, {"type": "game_resumed", "visible_to": "all", "phase": phase,
                             "paused_at": iso(out[4]), "resumed_at": iso(out[5]),
                             "paused_seconds": round(shift, 6), "deadline": iso(deadline)})
            if out[6] == "trigger":
                log.info("game %s step %d: resumed; every asked seat had answered, resolving", gid, phase)
                self.jobs.resolve(gid, phase)
            else:
                self.jobs.deadline(gid, phase, deadline)
                log.info("game %s step %d: resumed, deadline moved on by %.0f s", gid, phase, shift)
            return self.game(gid)  # type: ignore[attr-defined, no-any-return]
        raise Problem("step_locked", "the game moved on while it was resumed; try again")

    def extend(self, gid: str, seconds: Any) -> dict[str, Any]:
        """Move the open step's deadline on by `seconds` (a whole number within the
        settings' step bounds); allowed while paused."""
        lo, hi = self.settings.min_step_seconds, self.settings.max_step_seconds
        if type(seconds) is not int or not lo <= seconds <= hi:
            raise Problem("bad_extension", f"an extension is {_length(lo)} to {_length(hi)}: seconds must be a "
                                           f"whole number from {lo} to {hi}", field="seconds")
        for _ in range(ATTEMPTS):
            meta, ph, _, _ = self._snapshot(gid)
            if meta["status"] != "running" or not ph:
                raise Problem(_STATUS.get(meta["status"], "game_finished"))
            if ph.get("status") == "finished":
                raise Problem("game_finished")
            if ph.get("status") != "collecting":
                raise Problem("step_locked", "the step is being resolved: its deadline has done its work")
            phase, old = int(ph["id"]), float(ph["deadline"])
            new = old + seconds
            total = int(ph.get("host_extended") or 0) + seconds
            fields = {"host_extended": str(total)}
            if ph.get("banks"):
                # A time bank (`service.core.timebank`): the step's deadline is the first
                # own clock of the seats it waits for, so the extension goes on the clock
                # of each of those seats (its opening bank in the step hash), or the
                # clock's check would take it back. Ruling: time a seat does not use stays
                # on its clock, like any time on it.
                waiting = set(json.loads(ph["expected"])) - set(self.store.answered(gid, phase))
                fields["banks"] = json.dumps({k: int(v) + (seconds if int(k) in waiting else 0)
                                              for k, v in sorted(json.loads(ph["banks"]).items())})
            out = self.store.move_deadline(gid, phase, new, read=old, **fields)
            if out.status != "moved":
                continue
            paused = bool(ph.get("paused_at"))
            self._tell(gid, {"type": "deadline_extended", "visible_to": "all", "phase": phase, "seconds": seconds,
                             "deadline": iso(out.value), "paused": paused})
            if not paused:  # a paused step's check is planned by the resume
                self.jobs.deadline(gid, phase, float(out.value))
                self.jobs.cancel_deadline(gid, phase, old)
            log.info("game %s step %d: deadline extended by %d s by the host", gid, phase, seconds)
            return self.game(gid)  # type: ignore[attr-defined, no-any-return]
        raise Problem("step_locked", "the deadline kept moving while it was extended; try again")

    def _tell(self, gid: str, event: dict[str, Any]) -> None:
        out = self.store.append_events(gid, [event])
        if out.status == "ok":
            self.jobs.notify(gid, int(out.extra))


def _length(seconds: int) -> str:
    """A bound of an extension in words: `10 seconds`, `8 weeks` as `56 days`."""
    return words.plural(seconds, "second") if seconds < 60 else words.duration(seconds)
