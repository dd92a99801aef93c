"""Reminders before a deadline: a `deadline.reminder` notice to a seat that has not
answered, at the lead time it chose in its contact settings (`reminder_lead`).

Every sweep calls `remind`; it costs one pipelined read for all running games, and
reads a game's state only when a reminder is due in it.

Rulings:
* A reminder is sent at most once per seat and step (`Store.mark_reminded`), also when
  the deadline is extended afterwards; it is marked before it is queued, so a crash in
  between loses that reminder rather than sending it twice.
* Never while the host has paused the game: its deadline is frozen then, and moves on by
  the time paused when the game resumes; the lead is counted back from the moved one.
* Only a step still collecting, with its deadline ahead, and only to seats it asks that
  have not answered and that no bot plays. A lead longer than the step reminds at the first sweep after the
  step opened.
* With a time bank (`service.core.timebank`) each seat's lead is counted back from its own
  clock's end, and the reminder names that time.
* The notice is built from the current state and holds only the seat's own view and
  request, and the title's words for them (`headline`, `summary`, `asked`): the same
  redaction point as every notice; see `service.channels.notify`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from service.channels.notify import Notifier, current_contacts, links
from service.core.kontor import iso
from service.core.timebank import own_deadlines

if TYPE_CHECKING:
    from service.core.kontor import Kontor


def remind(k: Kontor, now: float) -> int:
    """Send the reminders due at `now` (store clock) in every running game; how many."""
    steps = {gid: ph for gid, ph in k.store.phases(k.store.active()).items() if open_ahead(ph, now)}
    return sum(remind_game(k, gid, steps[gid], now) for gid in k.store.with_contacts(list(steps)))


def open_ahead(ph: dict[str, str], now: float) -> bool:
    """A step still collecting orders whose deadline is ahead, and not paused (a paused
    step's deadline is frozen until the host resumes the game and moves it on)."""
    return ph.get("status") == "collecting" and float(ph.get("deadline") or 0) > now and not ph.get("paused_at")


def remind_game(k: Kontor, gid: str, ph: dict[str, str], now: float) -> int:
    """Remind the seats of one game whose lead time has come; how many were reminded."""
    phase, deadline = int(ph["id"]), float(ph["deadline"])
    contacts = current_contacts(k.store.contacts(gid), k.store.seats(gid))  # never a former holder's
    answered = set(k.store.answered(gid, phase))
    waiting = [seat for seat in json.loads(ph["expected"]) if seat not in answered]
    # A time bank (`service.core.timebank`): each seat is reminded before its own clock runs out.
    own = {s: t for s, t in own_deadlines(ph, waiting).items() if t is not None} if ph.get("banks") else {}
    due = [seat for seat in waiting if lead_reached(contacts.get(seat), own.get(seat, deadline), now)]
    if due:  # a seat a bot plays is never reminded: the bot answers
        bots = {s for s, rec in k.store.seats(gid).items() if (rec or {}).get("bot")}
        due = [seat for seat in due if seat not in bots]
    due = [seat for seat in due if k.store.mark_reminded(gid, phase, seat, now)]
    if not due:
        return 0
    meta, current, state = k.store.snapshot(gid)
    if not (current.get("id") == str(phase) and open_ahead(current, now)):  # answered or over meanwhile
        return 0
    notifier = Notifier(k)
    seats = k.store.seats(gid)
    for seat in due:
        at = f"{own[seat]:.6f}" if seat in own else current["deadline"]
        notice = reminder_notice(k, notifier, gid, meta, seats, phase, state, at, seat, now)
        notifier.dispatch(gid, seat, contacts[seat], [notice])
    return len(due)


def lead_reached(contact: dict[str, Any] | None, deadline: float, now: float) -> bool:
    lead = (contact or {}).get("reminder_lead")
    return lead is not None and deadline - now <= float(lead)


def reminder_notice(k: Kontor, notifier: Notifier, gid: str, meta: dict[str, str],
                    seats: dict[int, dict[str, Any]], phase: int, state: Any, deadline: str, seat: int,
                    now: float) -> dict[str, Any]:
    """What seat `seat` is told when its lead time before step `phase`'s deadline has
    come: its own view and what the step asks of it, nothing of any other seat."""
    game = k._title(meta["title"])
    head = notifier.header(gid, meta, seat, seats)
    view = game.view(state, seat)
    request, asked = notifier.ask(gid, meta, state, phase, seat, deadline, view, head["names"])
    notice = {"type": "deadline.reminder", **head, "phase": phase, "at": iso(now), "deadline": iso(deadline),
              "seconds_left": max(0, int(float(deadline) - now)), "request": request, "sentences": [],
              **notifier.words(game, view, head["names"]), "view": view, "links": links(k, gid, phase, meta["title"])}
    if asked is not None:
        notice["asked"] = asked
    return notice
