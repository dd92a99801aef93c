"""In-game messages ("press"): public messages to the table and private ones between seats.

A message is a game event (`type` `message`) appended to the game's event stream, so
`GET /games/{id}/events` and `GET /games/{id}/messages` show it only to those who may see
it, and the seats it concerns are told on their channels (`message.received`, see
`service.channels.notify`).

Rulings:
* Press is on by default in every game (`press: all`). A game may be created with
  `press: public` (only messages to everyone) or `press: none` (no messages at all, the
  host's included); a refused kind is 403 `press_disabled`.
* The negotiation variant of Die Händler (`negotiation: true`, binding `transfer`
  orders) has no negotiation step of its own: the seats negotiate through these
  messages, and only the transfer orders bind.
* A seat writes to `"all"` or to a list of other seats that are taken; a private
  message is seen by its sender and its recipients only (not the host, not the
  public). The host writes public announcements only, signed `"host"`.
* Text: 1 to `MAX_TEXT` characters, not only white space; line breaks and tabs are
  the only control characters allowed (`\\r\\n` and `\\r` are taken as `\\n`).
* Messages may be written from the lobby (phase 0) until the game is over; afterwards
  409 `game_finished`. `phase` is the step open when it was written.
* At most `Settings.press_rate` messages per writer and game in any
  `Settings.press_window` seconds (a sliding window on the store's clock); more is
  429 `rate_limited` with `retry_after`. A refused message (for any reason) does not
  count and changes nothing.
"""

from __future__ import annotations

import math
import secrets
import unicodedata
from typing import TYPE_CHECKING, Any

from service.core.errors import Problem
from service.core.kontor import iso
from service.core.reading import viewer_of
from service.store import numbering

if TYPE_CHECKING:
    from service.core.kontor import Caller, Kontor

MAX_TEXT = 2000
#: Control characters a message may hold.
ALLOWED_CONTROLS = frozenset("\n\t")


def post(k: Kontor, gid: str, caller: int | str, to: Any, text: Any) -> dict[str, Any]:
    """Store a message from `caller` (an authenticated seat, or "host") and queue its
    notifications; the message as listed."""
    meta, taken, phase = _game(k, gid)
    text = clean_text(text)
    to = recipients(caller, to, taken, meta.get("press", "all"))
    event = {"type": "message", "visible_to": "all" if to == "all" else sorted([caller, *to]),
             "from": caller, "to": to, "text": text, "phase": phase}
    slot = take_slot(k, gid, caller)
    out = k.store.append_events(gid, [event])
    if out.status != "ok":
        k.store.give_back_press_slot(gid, caller, slot)
        raise _refusal(gid, out.status)
    first, last = int(out.value), int(out.extra)
    k.jobs.notify(gid, last)  # the notices of the message (the sweep catches up should this enqueue be lost)
    _, ev, at, counts = k.store.numbered_between(gid, first, first)[0]
    return shown(counts[numbering.slot(viewer_of(caller))], ev, at)  # the writer's own id of it


def messages(k: Kontor, gid: str, caller: Caller, after: int, limit: int) -> dict[str, Any]:
    """The messages after event id `after` that the caller may see, oldest first, paged
    like the events (`next` is the event id to pass as `after`; ids are the caller's
    own, as `/events` numbers them)."""
    page = k.events(gid, caller, after, limit, kind="message")
    page["items"] = [{key: ev[key] for key in ("id", "at", "from", "to", "text", "phase")} for ev in page["items"]]
    return page


def shown(n: int, ev: dict[str, Any], at: str) -> dict[str, Any]:
    """A message as listed (its audience is `to` and `from`)."""
    return {"id": n, "at": iso(at), "from": ev["from"], "to": ev["to"], "text": ev["text"], "phase": ev["phase"]}


# -- checks -----------------------------------------------------------------------------
def clean_text(text: Any) -> str:
    """The message text with line ends made `\\n`, or `bad_message`."""
    if not isinstance(text, str):
        raise Problem("bad_message", "text is a string", field="text")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise Problem("bad_message", "the message is empty", field="text")
    if len(text) > MAX_TEXT:
        raise Problem("bad_message", f"a message has at most {MAX_TEXT} characters, this one {len(text)}",
                      field="text")
    for i, ch in enumerate(text):
        if unicodedata.category(ch) in ("Cc", "Cs") and ch not in ALLOWED_CONTROLS:
            raise Problem("bad_message", f"control character U+{ord(ch):04X} at position {i}; only line breaks "
                                         "and tabs are allowed", field="text")
    return text


def recipients(sender: int | str, to: Any, taken: set[int], press: str) -> str | list[int]:
    """`"all"` or the sorted recipient seats, checked against the game's press setting."""
    if press == "none":
        raise Problem("press_disabled", "this game has no in-game messages")
    if to == "all":
        return "all"
    if press == "public":
        raise Problem("press_disabled", "this game allows public messages only (to: \"all\")")
    if sender == "host":
        raise Problem("forbidden", "the host writes public announcements only (to: \"all\")")
    if not isinstance(to, list) or not to or not all(isinstance(s, int) and not isinstance(s, bool) for s in to):
        raise Problem("bad_recipients", 'to is "all" or a non-empty list of seat numbers', field="to")
    if len(set(to)) != len(to):
        raise Problem("bad_recipients", "a seat is named twice", field="to")
    if sender in to:
        raise Problem("bad_recipients", "you cannot write to your own seat", field="to")
    unknown = sorted(s for s in to if s not in taken)
    if unknown:
        raise Problem("bad_recipients", f"no player holds seat(s) {unknown}", field="to", seats=unknown)
    return sorted(to)


def _game(k: Kontor, gid: str) -> tuple[dict[str, str], set[int], int]:
    """The game's meta, its taken seats and the open step's number (0 before the start)."""
    meta, taken, phase = k.store.outline(gid)
    if not meta:
        raise Problem("game_not_found", f"no game {gid!r}")
    if meta.get("status") == "finished":
        raise _refusal(gid, "finished")
    return meta, taken, phase


def _refusal(gid: str, status: str) -> Problem:
    if status == "finished":
        return Problem("game_finished", "the game is over; messages are closed")
    return Problem("game_not_found", f"no game {gid!r}")


# -- the rate limit ---------------------------------------------------------------------
def take_slot(k: Kontor, gid: str, writer: int | str) -> str:
    """Count one message of `writer` (atomically, in a script); the slot's id, to give it
    back if the message is refused after all. Over the limit: `rate_limited`."""
    s = k.settings
    slot = secrets.token_hex(8)
    wait = k.store.take_press_slot(gid, writer, s.press_window, s.press_rate, slot)
    if wait is not None:
        retry_after = max(1, math.ceil(wait))
        raise Problem("rate_limited", f"at most {s.press_rate} messages in {s.press_window} seconds; "
                                      f"try again in {retry_after} s", retry_after=retry_after)
    return slot
