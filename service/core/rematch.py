"""Rematch: a finished game played again by the same seats, with a new seed.

`Rematch.rematch(gid, host_key)` (the host's `POST /games/{id}/rematch`, the page's
Rematch button, `kontor game rematch`) makes a new game with the finished game's title,
seat count, options, deadline policy, mail orders and press, its name marked
"(rematch)" ("(rematch 2)" for a rematch of a rematch), a new server seed (so a new
commitment), every seat held by the same holder (the same player key and name, or the
same bot), and starts it at once: every seat is filled, so there is no lobby.

Exactly once: the first request claims the rematch in the finished game's meta (one
compare-and-set: the new game's id and host key); every later request, a racing one, and
the sweep read the claim back and finish that very game, each step of which may be made
again harmlessly (`service.store.rematch` gives the order of the writes and the intent
the sweep finishes). The first answer is 201, every later one 200 with the same game.

The finished game then shows the rematch (`rematch` in `GET /games/{id}`) and gets a last,
public event, `rematch_started`, whose notices tell every seat's contact in words with the
new game's link (`rematch.started`). The new game's `game_started` event names the game
it is a rematch of (`rematch_of`).

Rulings:
* The host key: the request may give the new game a key of its own (`host_key`; the page
  and the `kontor` command make a fresh one per game, as for any new game); without it,
  the finished game's host key hosts the rematch too. A key that holds a seat cannot host.
* Contacts carry over: each seat's contact that its current holder set (`bound` to that
  holder's key, or the service's for a bot seat) is copied to the same seat of the new
  game, bound to the same key: the same address, mail mode, reminder lead and time zone,
  and the same webhook URL with the same signing secret (the receiver already trusts it,
  and the holder never saw a new one). An address that unsubscribed stays unsubscribed
  (the list is the server's, by address); a disabled webhook stays disabled until its
  holder sets its URL again; the delivery history and last error start empty. A player
  who does not want the rematch's mails removes the address on its page (or
  `kontor seat contact`), as in any game. The contacts of former holders (`gone`) do not
  carry over: they were told their last mail.
"""

from __future__ import annotations

import logging
import re
import secrets
from typing import TYPE_CHECKING, Any

from service.core.base import Base
from service.core.clock import iso
from service.core.errors import Problem
from service.store import dumps

log = logging.getLogger("kontor")

_REMATCH_RE = re.compile(r"\s*\(rematch(?: (\d{1,6}))?\)\s*$")

#: How many rematch intents one sweep finishes at most.
REMATCH_BATCH = 20


def rematch_name(name: str) -> str:
    """The rematch's name: "Friday table" -> "Friday table (rematch)" -> "Friday table
    (rematch 2)" -> "Friday table (rematch 3)"."""
    m = _REMATCH_RE.search(name)
    if m is None:
        return f"{name} (rematch)"
    return f"{name[:m.start()]} (rematch {int(m.group(1) or 1) + 1})"


def rematch_fields(public_url: str, meta: dict[str, str]) -> dict[str, Any]:
    """A game's links to its rematch and to the game it is a rematch of, as `GET
    /games/{id}` answers them: each {id, url (the game's page)} or None. The rematch is
    shown once it has started and the finished game was told."""
    base = public_url.rstrip("/")

    def link(gid: str | None) -> dict[str, str] | None:
        return {"id": gid, "url": f"{base}/play/{gid}"} if gid else None

    return {"rematch": link(meta.get("rematch") if meta.get("rematch_told") else None),
            "rematch_of": link(meta.get("rematch_of"))}


def bound_contact(contact: dict[str, Any], kid: str) -> bool:
    """Whether `contact` is the contact of the seat's holder `kid` ("" for a bot): as
    `service.channels.notify.bound` reads it."""
    owner = contact.get("kid")
    return owner == kid if owner is not None else bool(kid)


class Rematch(Base):
    """A finished game's rematch."""

    if TYPE_CHECKING:  # of `Kontor`'s other parts (`Reading`, `Lobby`)
        def game(self, gid: str) -> dict[str, Any]: ...

        def start(self, gid: str) -> dict[str, Any]: ...

    def rematch(self, gid: str, host_key: str | None = None) -> tuple[dict[str, Any], bool]:
        """Make (or find) the rematch of the finished game `gid`: (the new game as `GET
        /games/{id}` answers it, True when this call claimed it). `host_key`: the new
        game's host key (default: the finished game's). Problems: `game_not_found`,
        `game_not_finished` (409), `bad_public_key`, `key_in_use`."""
        meta = self._meta(gid)
        if meta["status"] != "finished":
            raise Problem("game_not_finished", "the game is not over yet: a rematch follows a finished game")
        if meta.get("rematch") and meta.get("rematch_told"):
            return self.game(meta["rematch"]), False
        key = self._key(host_key) if host_key is not None else self._key(meta["host_key"])
        if any((r or {}).get("kid") == key.kid for r in self.store.seats(gid).values()):
            raise Problem("key_in_use", "that key holds a seat of the game; the host needs a key of its own")
        self.store.intend_rematch(gid, self.now())
        out = self.store.claim_rematch(gid, secrets.token_hex(5), key.x)
        if out.status == "no_game":
            raise Problem("game_not_found", f"no game {gid!r}")
        if out.status == "not_finished":
            raise Problem("game_not_finished", "the game is not over yet: a rematch follows a finished game")
        new = self.finish_rematch(gid)
        return self.game(new), out.status == "new"

    def finish_rematch(self, gid: str) -> str:
        """Make whatever of `gid`'s claimed rematch is not made yet: the new game with its
        seats and contacts, its start, the finished game's `rematch_started` event; then
        drop the intent. Safe to run again at any point and side by side (the request,
        a racing request, the sweep). The new game's id."""
        meta = self._meta(gid)
        new = meta.get("rematch")
        if not new:  # an intent that never got to its claim: nothing was made
            self.store.rematch_done(gid)
            return ""
        made = self.store.meta(new)
        if not made:
            self._make_rematch(gid, meta, new)
            made = self._meta(new)
        if made.get("rematch_of") != gid:  # 40 random bits met an existing game's id
            log.error("game %s: its rematch id %s is another game's", gid, new)
            raise Problem("internal_error", "the rematch's game id is taken; it has been logged")
        if made["status"] == "lobby":
            try:
                self.start(new)
            except Problem as exc:
                if exc.code != "game_started":  # a racing caller started it first
                    raise
        self._tell_rematch(gid, meta, new, made)
        self.store.rematch_done(gid)
        return new

    def finish_rematches(self, now: float) -> int:
        """The sweep's part: finish every rematch begun `REMATCH_GRACE` ago or more and
        left unfinished (a crash between its writes). How many."""
        from service.store.rematch import REMATCH_GRACE

        done = 0
        for gid in self.store.rematch_intents(now - REMATCH_GRACE, REMATCH_BATCH):
            try:
                if self.finish_rematch(gid):
                    log.warning("game %s: its rematch was left unfinished; finished by the sweep", gid)
                    done += 1
            except Problem as exc:
                if exc.code == "game_not_found":
                    self.store.rematch_done(gid)
                else:
                    log.error("game %s: its rematch could not be finished: %s", gid, exc.detail)
        return done

    def _make_rematch(self, gid: str, meta: dict[str, str], new: str) -> None:
        """Create the rematch's game `new` with every seat and contact (one script); an
        existing one is left as it is (another caller made it first)."""
        key = self._key(meta["rematch_host"])
        now = self.now()
        joined = f"{now:.6f}"
        seats: dict[int, dict[str, Any]] = {}
        for seat, rec in self.store.seats(gid).items():
            rec = rec or {}
            seats[seat] = {"name": rec.get("name"), "public_key": rec.get("public_key"), "kid": rec.get("kid"),
                           "bot": rec.get("bot"), "joined_at": joined}
        contacts: dict[int, dict[str, Any]] = {}
        for seat, contact in self.store.contacts(gid).items():
            kid = str((seats.get(seat) or {}).get("kid") or "")
            if seat in seats and bound_contact(contact, kid) and not contact.get("gone"):
                contacts[seat] = {**contact, "kid": contact.get("kid", kid), "last_error": None,
                                  "updated_at": iso(now)}
        new_meta = {
            "title": meta["title"], "name": rematch_name(meta.get("name") or ""), "seats": meta["seats"],
            "options": meta["options"], "policy": meta["policy"], "host_kid": key.kid, "host_key": key.x,
            "status": "lobby", "seed": dumps(secrets.token_hex(32)), "created_at": joined,
            "event_seq": "0", "notified_through": "0", "reply_orders": meta.get("reply_orders", "1"),
            "press": meta.get("press", "all"), "rematch_of": gid, "rematch_of_name": meta.get("name") or "",
        }
        if self.store.create_rematch(new, new_meta, key.kid, seats, contacts):
            log.info("game %s created as the rematch of %s", new, gid)

    def _tell_rematch(self, gid: str, meta: dict[str, str], new: str, made: dict[str, str]) -> None:
        """The finished game's last event, `rematch_started` (once), and its notices."""
        phase = int(self.store.phase(gid).get("id") or 0)
        url = f"{self.settings.public_url.rstrip('/')}/play/{new}"
        event = {"type": "rematch_started", "visible_to": "all", "phase": phase, "game": new,
                 "name": made.get("name") or "", "url": url}
        out = self.store.tell_rematch(gid, new, event)
        if out.status == "told":
            self.store.activate(gid)  # the sweep makes its notices should the job be lost
            self.jobs.notify(gid, int(out.value))
            log.info("game %s: rematch %s started", gid, new)


def started_by_rematch(meta: dict[str, str]) -> dict[str, Any]:
    """What a rematch's `game_started` event adds: the game it replays (`rematch_of`, its
    id, and `rematch_of_name`, its name); nothing for any other game."""
    of = meta.get("rematch_of")
    return {"rematch_of": of, "rematch_of_name": meta.get("rematch_of_name") or ""} if of else {}
