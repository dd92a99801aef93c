"""Unprompted actions: what a seat may do at any time, applied at once, exactly once.

`Actions.act(gid, seat, action, via, jti)` is the one path for every channel (the HTTP
route with a signed action token, mail's "play Subsidies" lines): the title validates
and applies the action (`Game.act`, given the orders stored for the open step), and one
script (act.lua) commits it as a compare-and-set on the open step and its state version,
recording the token's one-time id in the same step. An action and a step's resolution
never overwrite each other: whichever commits second finds the version moved and works
again from the new state (an action is validated again; a resolution resolves again).

Refusals are answered to the caller only (problem+json with the engine's code): nothing
is stored, nothing public is said. An accepted action's events are appended to the
game's events (each with the step's `phase`), so `/events`, the live stream and the
notices tell them as they tell any event, cut to who may see each; the first carries the
action's history record, so a replay of the published history applies it in order
(`engine.core.verify`).
"""

from __future__ import annotations

import logging
from typing import Any

from engine.core.errors import IllegalOrder
from engine.core.events import event
from engine.core.seed import state_digest
from service import words
from service.core.base import Base
from service.core.choices import refused
from service.core.errors import Problem
from service.core.reading import event_item

log = logging.getLogger("kontor")

#: How often an action is validated again when a resolution or another action committed
#: between its read and its commit.
ATTEMPTS = 8


class Actions(Base):
    """Applying unprompted actions."""

    def act(self, gid: str, seat: int, action: Any, via: str, jti: str | None = None) -> dict[str, Any]:
        """Validate and apply `seat`'s unprompted `action` at once: `{"accepted": True,
        "phase", "events"}`, the events being those the seat may see, each with `text`
        in words. `jti`: the one-time id of the action's token (a second use is refused
        with `token_replayed`, atomically with the commit). Raises `Problem` (the
        engine's code: `no_action`, `game_over`, the title's own) and changes nothing."""
        if type(action) is not dict:
            raise Problem("malformed_order", "an action is a JSON object")
        for _ in range(ATTEMPTS):
            meta, ph, state, game = self._seat_in_play(gid, seat)
            if ph.get("paused_at"):
                raise Problem("game_paused", "the host has paused the game; no action may be taken until it resumes")
            step = int(ph["id"])
            submitted = {s: rec["order"] for s, rec in self.store.orders(gid, step).items()}
            asked = [(r.seat, r.kind, r.step) for r in game.requests(state)]
            try:
                new_state, made = game.act(state, seat, action, submitted)
            except IllegalOrder as exc:
                raise refused(exc) from None
            if [(r.seat, r.kind, r.step) for r in game.requests(new_state)] != asked:
                log.error("game %s step %d: %s's action %r changed who is asked", gid, step, game.id, action)
                raise Problem("internal_error", "the title's action changed the open decision; it has been logged")
            record = {"phase": step, "seat": seat, "action": action,
                      "submitted": {str(s): o for s, o in sorted(submitted.items())},
                      "state_sha256": state_digest(new_state), "events": made}
            events = [{**e, "phase": step} for e in made] or [
                {**event("action_taken", [seat], seat=seat), "phase": step}]
            out = self.store.act(gid, step, self.store.state_version(ph), new_state, record, events, jti,
                                 self.settings.order_max_age + self.settings.clock_skew)
            if out.status == "moved":
                continue
            if out.status == "replayed":
                raise Problem("token_replayed", "this action token was used before; sign a new one")
            if out.status == "paused":
                raise Problem("game_paused", "the host has paused the game; no action may be taken until it resumes")
            if out.status != "ok":
                raise Problem({"no_game": "game_not_found", "lobby": "game_not_started"}.get(out.status,
                                                                                             "game_finished"))
            first, last = int(out.value), int(out.extra)
            self.jobs.notify(gid, last)  # the notices of its events (the sweep catches up should this be lost)
            log.info("game %s step %d: action of seat %d via %s", gid, step, seat, via)
            names = self.names(gid, meta)
            shown = []
            for _, ev, at, counts in self.store.numbered_between(gid, first, last):
                item = event_item(counts, ev, at, seat)
                if item is not None:
                    shown.append({**item, "text": words.describe(game, ev, names)})
            return {"accepted": True, "game": gid, "seat": seat, "phase": step, "events": shown}
        raise Problem("step_locked", "the game moved on while the action was applied; try again", status=409)
