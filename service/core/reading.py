"""Reading games: each answer cut to what the caller may see."""

from __future__ import annotations

import json
import logging
from typing import Any

from engine.core.events import visible_to
from engine.core.rollback import is_rollback, replay
from engine.core.verify import FORMAT as HISTORY_FORMAT
from service import words
from service.core import timebank
from service.core.absence import with_absences
from service.core.base import Base, Caller
from service.core.choices import Choices, order_sentence
from service.core.clock import iso
from service.core.errors import Problem
from service.core.policy import Policy
from service.core.rematch import rematch_fields
from service.store.numbering import Counts, Numbered, Start, slot

log = logging.getLogger("kontor")


def event_item(counts: Counts, ev: dict[str, Any], at: str, viewer: int | str,
               kind: str | None = None) -> dict[str, Any] | None:
    """The one redaction point of events: an event with its `counts`
    (`service.store.numbering`) as `viewer` (a seat or "public") gets it from `/events`,
    the live stream, a message's or an action's answer: its id is the viewer's own (its
    events numbered 1, 2, 3, ... with no gaps); None when that viewer may not see it (or
    it is not of type `kind`, when given)."""
    if visible_to(ev, viewer) and kind in (None, ev.get("type")):
        return {"id": counts[slot(viewer)], "at": iso(at), **ev}
    return None


def viewer_of(caller: Caller) -> int | str:
    """Whose events a caller reads: a seat its own, the host and anyone else the public's."""
    return caller if isinstance(caller, int) else "public"


def phase_summary(ph: dict[str, str]) -> dict[str, Any]:
    """A step's summary (`PhaseSummarySchema`) from its stored hash ({} for none)."""
    if not ph:
        return {}
    return {
        "id": int(ph["id"]), "status": ph["status"], "kind": ph.get("kind") or None,
        "sealed": ph.get("sealed") == "1", "requested": json.loads(ph.get("expected") or "[]"),
        "opened_at": iso(ph.get("opened_at")), "deadline": iso(ph.get("deadline")),
        "extended": ph.get("extended") == "1",
        "paused_since": iso(ph.get("paused_at")) if ph.get("paused_at") else None,
    }


class Reading(Base):
    """Games, seats, steps, views, pictures, events and the published history."""

    def game(self, gid: str) -> dict[str, Any]:
        meta, phase, state, now = self._snapshot(gid)
        game = self._title(meta["title"])
        seats = self.store.seats(gid)
        return {
            "id": gid, "title": meta["title"], "title_name": game.name, "name": meta["name"],
            "status": meta["status"], "seats": int(meta["seats"]), "options": json.loads(meta["options"]),
            "deadlines": Policy(**json.loads(meta["policy"])).as_dict(), "host_kid": meta["host_kid"],
            "mail_orders": "reply_address" if meta.get("reply_orders") == "1" else "signed",
            "press": meta.get("press", "all"),
            "created_at": iso(meta["created_at"]), "updated_at": iso(meta.get("updated_at")),
            "expires_at": iso(self.lobby_expiry(meta)),
            "players": with_absences(self.store, gid, [self._seat_dict(s, seats.get(s))
                                                       for s in range(int(meta["seats"]))], now),
            "phase": self._phase_summary(phase) if phase else None,
            "paused_since": iso(phase.get("paused_at")) if phase and phase.get("paused_at") else None,
            "result": game.result(state) if state and meta["status"] == "finished" else None,
            # The public SHA-256 commitment to the seed (the seed itself: in the history, once over).
            "commitment": state.get("commitment") if isinstance(state, dict) else None,
            **rematch_fields(self.settings.public_url, meta),  # rematch, rematch_of (issue 25)
            "clocks": self.clocks_at(gid, meta, phase, now),
        }

    def clocks_at(self, gid: str, meta: dict[str, str], phase: dict[str, str],
                  now: float) -> dict[str, dict[str, Any]] | None:
        """Each seat's time bank (`TimeBank.clocks`) with `runs_out_at` in ISO 8601; None
        unless the game keeps time banks (or before it starts)."""
        if meta["status"] == "lobby" or not phase or timebank.is_bank(meta) is None:
            return None  # (no round trip for the answered seats of a game without banks)
        answered = self.store.answered(gid, int(phase["id"])) if phase.get("status") == "collecting" else []
        clocks = timebank.clocks(meta, phase, answered, now)
        if clocks is None:
            return None
        return {s: {**c, "runs_out_at": iso(c["runs_out_at"]) if c["runs_out_at"] is not None else None}
                for s, c in clocks.items()}

    def lobby_expiry(self, meta: dict[str, str]) -> float | None:
        """When a game in the lobby is removed unless it starts first (`lobby_ttl` after
        its creation; joining does not renew it); None once it started."""
        if meta.get("status") != "lobby":
            return None
        return float(meta["created_at"]) + self.settings.lobby_ttl

    def listing(self, status: str | None, limit: int, before: float | None) -> dict[str, Any]:
        """Games, newest first (a lobby list when `status` is `lobby`), from the listing
        indexes (`Games.listing`): never a scan of every game."""
        rows, cursor = self.store.listing(limit, before, status)
        items = [{"id": gid, "title": meta["title"], "name": meta["name"], "status": meta["status"],
                  "seats": int(meta["seats"]), "taken": taken, "created_at": iso(meta["created_at"])}
                 for gid, meta, taken in rows]
        return {"items": items, "before": cursor}

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
            names = self.names(gid, meta)
            mine = [r for r in game.requests(state) if r.seat == caller]
            you: dict[str, Any] = {"seat": caller, "requested": bool(mine), "answered": caller in out["answered"]}
            if mine:
                req = mine[0]
                you.update(kind=req.kind, choices=req.choices, order_schema=game.order_schema_for(state, req.kind),
                           default_order=game.default_order(state, caller),
                           asked=words.asked_text(game, req, game.view(state, caller), names))
                stored = self.store.orders(gid, pid).get(caller)
                you["order"] = stored["order"] if stored else None
                you["default_sentence"] = order_sentence(game, state, caller, you["default_order"], names)
                you["order_sentence"] = (order_sentence(game, state, caller, you["order"], names)
                                         if stored else None)
            you.update(Choices.first_levels(game, state, caller, bool(mine), names))
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

    def event_start(self, gid: str, caller: Caller, after: int) -> Start:
        """Where the caller's events after its id `after` begin (`Store.event_start`)."""
        start = self.store.event_start(gid, viewer_of(caller), after)
        if start is None:
            raise Problem("game_not_found", f"no game {gid!r}")
        return start

    def last_event(self, gid: str, caller: Caller) -> int:
        """The id of the last event the caller may see (0: none yet)."""
        return self.event_start(gid, caller, 0).now[slot(viewer_of(caller))]

    def events(self, gid: str, caller: Caller, after: int, limit: int,
               kind: str | None = None) -> dict[str, Any]:
        """The events after id `after` the caller may see (only those of type `kind`
        when given), oldest first; `next` is the id to pass as `after`, `last` the id of
        the caller's last event. Ids are the caller's own (`service.store.numbering`)."""
        viewer = viewer_of(caller)
        place = slot(viewer)
        start = self.event_start(gid, caller, after)
        last = start.now[place]
        lo, before = start.lo, start.before
        items: list[dict[str, Any]] = []
        cursor = after
        while len(items) < limit and cursor < last and lo <= start.seq:
            # (events appended since the start was found wait for the next read)
            batch = [row for row in self.store.numbered(gid, lo, max(limit * 2, 50), before) if row[0] <= start.seq]
            if not batch:
                break
            for seq, ev, at, counts in batch:
                lo, before = seq + 1, counts
                if counts[place] <= cursor or not visible_to(ev, viewer):
                    continue  # before `after` (a read starts at a chunk), or not the caller's
                cursor = counts[place]
                item = event_item(counts, ev, at, viewer, kind)
                if item is not None:
                    items.append(item)
                    if len(items) == limit:
                        break
            else:
                continue
            break
        return {"items": items, "next": cursor, "more": cursor < last, "last": last}

    def visible_items(self, batch: list[Numbered], viewer: int | str, after: int) -> list[tuple[int, dict[str, Any]]]:
        """The events of a batch (each with its counts) that `viewer` may see with an id
        above `after`, as `events` lists them, each behind its stored number (the live
        stream's reads, `service.core.live`)."""
        place = slot(viewer)
        return [(seq, item) for seq, ev, at, counts in batch if counts[place] > after
                and (item := event_item(counts, ev, at, viewer)) is not None]

    def live_hub(self) -> Any:
        """This process's hub of live streams (`service.core.live.Hub`), made on first use."""
        hub = getattr(self, "_live_hub", None)
        if hub is None:
            from service.core.live import Hub

            hub = self._live_hub = Hub(self.store)
        return hub

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
            "steps": [_iso_rollback(step) for step in self.store.history(gid)],
            "result": game.result(state) if state is not None else None,
        }

    def state_at(self, gid: str, closing: int) -> tuple[dict[str, str], Any]:
        """The meta and the engine state right after step `closing` was committed (0: the
        start), or, when `closing` is a step a rollback abandoned (`service.core.rollback`),
        the state the rollback restored: the stored state while nothing has changed it
        since, else rebuilt from the seed and the history (replay is deterministic)."""
        meta, ph, state = self.store.snapshot(gid)
        if not meta:
            raise Problem("game_not_found", f"no game {gid!r}")
        if ph.get("id") == str(closing + 1) and not self.store.state_version(ph):
            return meta, state  # no action since the commit: the stored state is that one
        game = self._title(meta["title"])
        entries = []
        for entry in self.store.history(gid, events=False):
            if (entry["rollback"]["at_phase"] if is_rollback(entry) else entry["phase"]) > closing:
                break
            entries.append(entry)
        line = replay(game, int(meta["seats"]), json.loads(meta["options"]), json.loads(meta["seed"]), entries,
                      judge=False)
        return meta, line.openings.get(closing + 1, line.state)

    _phase_summary = staticmethod(phase_summary)

    @staticmethod
    def _seat_dict(seat: int, rec: dict[str, Any] | None) -> dict[str, Any]:
        rec = rec or {}
        return {"seat": seat, "name": rec.get("name"), "bot": rec.get("bot"), "kid": rec.get("kid"),
                "public_key": rec.get("public_key"), "taken": bool(rec), "joined_at": iso(rec.get("joined_at"))}


def _iso_rollback(step: dict[str, Any]) -> dict[str, Any]:
    """A history entry as published: a rollback's time in ISO 8601, as every time the API
    says (the store keeps seconds)."""
    rb = step.get("rollback")
    if isinstance(rb, dict) and rb.get("at") not in (None, ""):
        try:
            step["rollback"] = {**rb, "at": iso(rb["at"])}
        except (TypeError, ValueError):
            pass
    return step
