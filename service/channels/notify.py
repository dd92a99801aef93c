"""Notifications: who is told what, by which channel.

Every outbound byte about a game starts here as a *notice*: a plain JSON dict built for
one seat from that seat's view (`Game.view`) and the events visible to it
(`visible_to`); nothing else of the game goes into a notice, so a mail or webhook can
never carry another seat's hidden field. The channels render notices:

* email (`service.channels.mail.send`): one mail per commit (the notices of one commit merged), or
  kept for the seat's daily digest;
* webhooks (`service.channels.webhook.deliver`): one Standard Webhooks delivery per notice.

Notice types (also the webhook event types): `step.opened`, `step.resolved`,
`game.finished`, `deadline.reminder`, `message.received`, `seat.replaced` (the host gave
a seat to a bot or another player; told to every other seat, and once, as its farewell,
to the contact of the seat's former holder: `yours` and `farewell` true),
`action.taken` (an event of a seat's unprompted action, told to the seats that may see it),
`lobby.closing` (a game nobody started closes in a day and is then removed: told once, at
once, to every seat's contact, with the time in `closes_at` and the seats still open),
`rematch.started` (the host started a rematch of the finished game: told once, at once, to
every seat's contact, with the new game's page, the seat's own page there and how to play
it by mail; `service.core.rematch`).
`clock.ran_out` (a time bank: a seat ran out of time and its decision was played for it;
told to the others as news, and at once to that seat, with what was played in
`clock_played`, words).
`game.paused`, `game.resumed`, `deadline.extended` (the host stopped the clock, started it
again, or moved the open step's deadline on: `deadline` is the deadline as it now
stands; told at once to every seat's contact, whatever its mail mode, since they change
when the seat must answer; issue 25, `service.core.hosting`).
`absence.summary` (issue 25: after a seat's absence, what was played for it while it was
away, in words: told once, at once, to that seat alone).

Every mail and webhook is a *delivery*: a record in the store (status `queued`, `sent`,
`retrying`, `failed`, `disabled`, `skipped`, `suppressed`), listed for the seat and its
host, sent by an RQ job on the `notify` queue that retries on its own schedule.

Mail modes (the contact's `delivery`; webhooks get every notice whatever the mode):
* `asked` (the default): a mail only when something is asked of the seat, plus what
  concerns it alone (below) and in-game messages to it. What happened in between is held
  in words (`Store.hold_once`: the notices' sentences, no view) and told in its next mail.
* `every`: everything, step by step: a run of other seats' steps between two of the
  seat's own decisions is held whole (`held_whole`: all but the view) and told in one
  mail, the one that asks the seat (or the next mail that goes at once: the end, a
  reminder, a message), so a run of bot steps never floods the seat; the game's start
  goes at once (`immediate`, the earlier name, means this).
* `digest`: one mail a day with everything else.
Whatever the mode, these go out at once: a step that asks the seat something, a
reminder, the farewell to a seat's former holder, a step where the seat's default order
was played because it did not answer (`default_played`: that order in words), the notice
that a lobby game closes (`lobby.closing`), and the end of the game.

Rulings:
* A contact belongs to the seat's holder who set it (`bound`, its `kid`). When the host
  gives the seat another key or a bot, it leaves with that holder (`Store.set_seat`):
  it gets one farewell in words (`Notifier.farewell`: no view, request, reply address or
  seat page) and nothing after; the new holder is told nothing until they set a contact.
* A seat a bot plays is never asked anything in a notice (no `request`, no reply
  address, no page capability): the bot answers. Its player's contact left with the
  player; only the service itself gives a bot seat a contact (the kill tests).
* A step that does not ask a seat anything is still told (`step.opened`, with
  `request` null), so webhooks can follow the whole game.
* Every seat notice links the seat's page (`links.page`, `service.channels.links.page_url`),
  with the step's page capability when the game takes reply-address orders and the seat is
  asked.

Words (`service.words`, through the title's `Game`): every notice carries the
seat names (`names`, public), `sentences` (one per event it holds that has something
to say, in the title's words with names), the title's `headline` and `summary` of the
seat's view, and, when the seat is asked something, `asked`. They are built here from
the same view and visible events as the rest of the notice, so they can show nothing
more; webhooks also keep the JSON `view` and `events`, mails show only the words.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import re
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from engine.core.events import visible_to
from service import words
from service.channels import offer
from service.channels.links import former_holders, page_url, seat_holder
from service.channels.secret import mac, server_secret
from service.core.absence import covering, first_bot, policy_of
from service.core.errors import Problem
from service.core.kontor import iso
from service.store.json import dumps, loads

if TYPE_CHECKING:
    from engine.core.game import Game
    from service.core.kontor import Kontor
    from service.store.effects import NoticesHead, Opening, Tagged

log = logging.getLogger("kontor.notify")

NOTICE_TYPES = ("step.opened", "step.resolved", "game.finished", "deadline.reminder", "message.received",
                "seat.replaced", "action.taken", "lobby.closing", "rematch.started", "clock.ran_out",
                "rollback.proposed", "rollback.answered", "game.paused", "game.resumed", "deadline.extended",
                "absence.summary")
#: The game's clock moved (the host's, `service.core.hosting`; a `deadline_extended` for an
#: absence too, `service.core.absence`): event type -> its notice's type.
CLOCK_NOTICES = {"game_paused": "game.paused", "game_resumed": "game.resumed", "deadline_extended": "deadline.extended"}
#: Notices a seat in digest mode still gets at once.
URGENT = ("deadline.reminder", "game.finished", "lobby.closing", "rematch.started", "absence.summary",
          *CLOCK_NOTICES.values())
#: A seat's mail modes (the contact's `delivery`); `immediate` is the earlier name of `every`.
MODES = ("asked", "every", "digest")
#: The notice fields a held notice keeps (`held`): who and what step, and the words.
HELD_FIELDS = ("type", "game", "game_name", "title", "title_name", "seat", "seat_name", "names", "phase", "at",
               "sentences", "headline")

_REPLY_RE = re.compile(r"^orders\+(?P<g>[0-9a-f]{1,32})\.(?P<p>\d{1,6})\.(?P<s>\d{1,2})\.(?P<m>[a-z2-7]{16})$")


# -- reply addresses ----------------------------------------------------------------------
def orders_address(k: Kontor) -> str:
    """The general address for orders by email (a signed JWS line in the block)."""
    return f"orders@{k.settings.mail_domain}"


def reply_address(k: Kontor, gid: str, phase: int, seat: int, holder: str | None = None) -> str:
    """The secret reply address of `seat` for step `phase`: mail to it is taken as that
    seat's order without a signature (where the game allows it). It names the game, step
    and seat in clear and carries an HMAC of them and of the seat's current holder
    (`links.seat_holder`, or `holder`), so it cannot be guessed and dies when the host
    gives the seat another key or a bot."""
    held = seat_holder(k, gid, seat) if holder is None else holder
    return f"orders+{gid}.{phase}.{seat}.{mac(k, 'reply', gid, phase, seat, held)}@{k.settings.mail_domain}"


def former_reply_address(k: Kontor, address: str) -> bool:
    """True when `address` is a reply address this server made for a former holder of
    its seat (the seat has changed hands since): refused as `seat_changed`."""
    local, _, domain = address.strip().strip("<>").rpartition("@")
    m = _REPLY_RE.match(local.lower())
    if domain.lower() != k.settings.mail_domain.lower() or not m:
        return False
    gid, phase, seat = m["g"], int(m["p"]), int(m["s"])
    current = seat_holder(k, gid, seat)
    return any(hmac.compare_digest(m["m"], mac(k, "reply", gid, phase, seat, kid))
               for kid in former_holders(k, gid, seat) if kid != current)


def parse_reply_address(k: Kontor, address: str) -> tuple[str, int, int] | None:
    """(game, phase, seat) of a genuine secret reply address of the seat's current
    holder, else None."""
    local, _, domain = address.strip().strip("<>").rpartition("@")
    if domain.lower() != k.settings.mail_domain.lower():
        return None
    m = _REPLY_RE.match(local.lower())
    if not m:
        return None
    gid, phase, seat = m["g"], int(m["p"]), int(m["s"])
    if not hmac.compare_digest(m["m"], mac(k, "reply", gid, phase, seat, seat_holder(k, gid, seat))):
        return None
    return gid, phase, seat


def new_webhook_secret() -> str:
    """A Standard Webhooks v1 secret: `whsec_` and the base64 of 32 random bytes."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


# -- whose contact ----------------------------------------------------------------------
def bound(contact: dict[str, Any], holder: str) -> bool:
    """Whether `contact` is the contact of the seat's holder `holder` (its key id, "" for
    a bot or nobody): it was set under that key (a bot seat's only by the service itself:
    no key speaks for it), or records no key: written before contacts were bound, it is
    the contact of the player who holds the seat, until it changes hands and leaves like
    any other. (Such a contact left on a seat a bot took before then had its handover
    notice then, and gets nothing more.)"""
    kid = contact.get("kid")
    return kid == holder if kid is not None else bool(holder)


def current_contacts(contacts: dict[int, dict[str, Any]],
                     seats: dict[int, dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """The contacts of the seats' current holders (`bound`)."""
    return {s: c for s, c in contacts.items() if bound(c, str((seats.get(s) or {}).get("kid") or ""))}


# -- mail modes ------------------------------------------------------------------------
#: The notice type a commit's event of each type opens (`Notifier.commit_notices`).
NOTICE_OF = {"step_opened": "step.opened", "game_finished": "game.finished"}


def wanted_types(contact: dict[str, Any]) -> frozenset[str] | None:
    """The notice types some channel of `contact` takes: those its webhook chose
    (`webhook_events`) when the webhook is its only channel, else None (every type: mail,
    whatever its mode, may tell any of them)."""
    chosen = contact.get("webhook_events")
    if chosen is None or contact.get("email"):
        return None
    return frozenset(chosen)


def mode_of(contact: dict[str, Any]) -> str:
    """The seat's mail mode: `asked`, `every` or `digest` (`immediate` reads as `every`;
    none set: `asked`)."""
    mode = contact.get("delivery") or "asked"
    return "every" if mode == "immediate" else mode if mode in MODES else "asked"


def at_once(n: dict[str, Any]) -> bool:
    """A notice that goes out at once whatever the seat's mode: it asks the seat
    something, reminds it, tells it a bot or another player now plays it, that its
    default order was played, that the game closes unless the host starts it, that the
    host proposes a rollback it must agree to (`consent`), or that the game is over."""
    return bool(n.get("request") or n["type"] in URGENT or n.get("default_played") is not None
                or n.get("clock_played") is not None or (n["type"] == "seat.replaced" and n.get("yours"))
                or n.get("consent"))


def starts(n: dict[str, Any]) -> bool:
    """A notice that tells the game began (`every` mode mails it at once)."""
    return any(e.get("type") == "game_started" for e in n.get("events") or [])


def held(n: dict[str, Any]) -> dict[str, Any]:
    """A notice as held for the seat's next mail: only its words (no view, no events)."""
    return {**{key: n[key] for key in HELD_FIELDS if key in n}, "held": True}


def held_whole(n: dict[str, Any]) -> dict[str, Any]:
    """A notice as held in `every` mode: all of it but the view (the mail that tells it
    shows the newest table), marked `whole` so the mail tells it step by step."""
    return {**{key: v for key, v in n.items() if key not in ("view", "summary", "links")}, "held": True,
            "whole": True}


def seat_page(k: Kontor, gid: str, meta: dict[str, str], seat: int, phase: int | None,
              holder: str | None = None) -> str:
    """The seat's page for a notice: with the step's one-step capability when the game
    takes reply-address orders and `phase` is a step that asks the seat (else None),
    bound to the seat's holder (`holder`, when the caller has read the seats already)."""
    return page_url(k, gid, seat, phase if phase is not None and meta.get("reply_orders") == "1" else None, holder)


# -- notices ---------------------------------------------------------------------------
def links(k: Kontor, gid: str, phase: int | None = None, title: str | None = None) -> dict[str, str]:
    base = k.settings.public_url.rstrip("/")
    out = {"game": f"{base}/games/{gid}", "view": f"{base}/games/{gid}/view",
           "events": f"{base}/games/{gid}/events"}
    if phase is not None:
        out["phase"] = f"{base}/games/{gid}/phases/current"
        out["order"] = f"{base}/games/{gid}/phases/{phase}/orders/{{seat}}"
    if title:
        out["rules"] = rules_url(k, title)
    return out


def rules_url(k: Kontor, title: str) -> str:
    """The title's player's guide (HTML)."""
    return f"{k.settings.public_url.rstrip('/')}/titles/{title}/rules"


def seat_names(meta: dict[str, str], seats: dict[int, dict[str, Any]]) -> list[str]:
    """The players' display names by seat, as the store has them ("Seat N" for none)."""
    return words.names_of(int(meta.get("seats") or len(seats)), {s: (r or {}).get("name") for s, r in seats.items()})


#: Sends a game's unsent webhook deliveries (records as stored, and the text each was
#: stored as, by id) and records each one's outcome
#: (`service.channels.webhook.deliver.deliver_all`).
Sender = Callable[["Kontor", str, list[dict[str, Any]], dict[str, str],
                   "tuple[dict[int, dict[str, Any]], float] | None"], object]

#: How many times one `catch_up` looks again for events that came in while it worked.
CATCH_UP_ROUNDS = 20


def notices_lease(k: Kontor) -> float:
    """How long a job may hold a game's notices lock before another may take it over:
    longer than one commit's sends take (each webhook's timeout, in parallel), and no
    shorter than the sweep's `stuck_after`."""
    return float(max(k.settings.stuck_after, 1) + 2 * k.settings.webhook_timeout)


class Notifier:
    def __init__(self, kontor: Kontor, send: Sender | None = None) -> None:
        """`send`: deliver a commit's webhooks here, in the job that makes them (all of
        one commit at once), instead of one RQ job each; retries are still jobs."""
        self.k = kontor
        self.store = kontor.store
        self.send = send
        #: Webhook deliveries made and not stored yet (`keep_pending`), then those stored
        #: and to be sent by `flush` with the text each was stored as (by id).
        #: The mark `_catch_up` leaves to `catch_up` to move as it lets go of the lock.
        self.through: int | None = None
        self.pending: list[dict[str, Any]] = []
        #: Reply addresses made by this notifier, by (game, step, seat, holder).
        self.replies: dict[tuple[str, int, int, str | None], str] = {}
        #: The contacts and the store's clock, read as the last webhooks were stored
        #: (`keep_pending`), for the sends of `flush`.
        self.read: tuple[dict[int, dict[str, Any]], float] | None = None
        #: The game's meta, open step and state as read with the lock (`_catch_up`), while it holds it.
        self.snapshot: tuple[dict[str, str], dict[str, str], Any] | None = None
        self.outbox: list[dict[str, Any]] = []
        self.stored: dict[str, str] = {}

    # -- building notices (pure given their inputs: the redaction point) ----------------
    def header(self, gid: str, meta: dict[str, str], seat: int, seats: dict[int, dict[str, Any]]) -> dict[str, Any]:
        game = self.k._title(meta["title"])
        return {"game": gid, "game_name": meta.get("name"), "title": meta["title"], "title_name": game.name,
                "seat": seat, "seat_name": (seats.get(seat) or {}).get("name"), "names": seat_names(meta, seats)}

    @staticmethod
    def words(game: Game, view: dict[str, Any], names: list[str]) -> dict[str, Any]:
        """The title's `headline` and `summary` of a seat's view."""
        return {"headline": words.said("headline", game.headline, view),
                "summary": words.said("summary", game.summary, view, names)}

    @staticmethod
    def sentences(game: Game, events: list[dict[str, Any]], names: list[str]) -> list[str]:
        """A sentence for each of `events` (already cut to the seat's) that says something."""
        said = (words.describe(game, e, names) for e in events)
        return [text for text in said if text]

    def commit_notices(self, gid: str, meta: dict[str, str], seats: dict[int, dict[str, Any]], closing: int,
                       state: Any, deadline: str, events: list[tuple[int, dict[str, Any], str]],
                       seat: int, only: frozenset[str] | None = None) -> list[dict[str, Any]]:
        """What seat `seat` is told about the commit of step `closing`: `state` is the state
        right after it, `deadline` the opened step's (epoch seconds, '' when over),
        `events` the commit's events (all of them; cut here to those the seat may see),
        each as (its id as the seat numbers them, event, time stamp). `only`: the notice
        types to make (`wanted_types`; None: all)."""
        game = self.k._title(meta["title"])
        head = self.header(gid, meta, seat, seats)
        names = head["names"]
        bot = (seats.get(seat) or {}).get("bot")
        holder = str((seats.get(seat) or {}).get("kid") or "")  # `links.seat_holder`, from the seats read
        view = game.view(state, seat)
        said = self.words(game, view, names)
        mine = [{"id": n, "at": iso(at), **ev} for n, ev, at in events if visible_to(ev, seat)]
        resolved = [e for e in mine if e["type"] not in ("step_opened", "game_finished", "game_started")]
        at = iso(events[-1][2]) if events else None
        page = {"page": seat_page(self.k, gid, meta, seat, None)}
        out: list[dict[str, Any]] = []
        if closing >= 1 and (only is None or "step.resolved" in only):
            notice = {"type": "step.resolved", **head, "phase": closing, "at": at, "events": resolved,
                      "sentences": self.sentences(game, resolved, names), **said, "view": view,
                      "links": {**links(self.k, gid, title=meta["title"]), **page}}
            late = [e for e in resolved if e["type"] == "step_resolved" and seat in (e.get("defaults") or [])]
            if late:
                notice["default_played"] = self.default_played(gid, closing, seat)
            out.append(notice)
        for e in mine:
            if only is not None and NOTICE_OF.get(e["type"], "") not in only:
                continue
            if e["type"] == "step_opened":
                away = None if bot else self.away_bot(gid, meta, seat, float(events[-1][2]) if events else None)
                if bot or away:  # a bot answers (the seat's, or its absence's): nothing is asked of the contact
                    request, asked = None, None
                else:
                    request, asked = self.ask(gid, meta, state, e["phase"], seat, deadline, view, names, holder)
                if request is not None and isinstance(e.get("clocks"), dict) and str(seat) in e["clocks"]:
                    # A time bank: the seat's own clock at the opening, and when it runs out
                    # unless the seat answers first (or the game is paused).
                    bank = int(e["clocks"][str(seat)])
                    request["clock_seconds"] = bank
                    if events:
                        request["clock_runs_out_at"] = iso(float(events[-1][2]) + bank)
                    request["clock"] = words.clock_text(names[seat], {"bank_seconds": bank}, you=True)
                told = [x for x in mine if x["type"] == "game_started"] + [e] if closing == 0 else []
                sentences = self.sentences(game, told, names)
                if away:
                    sentences.append(f"You are away: the {words.label(away)} bot plays this decision for you, "
                                     "and you are told afterwards what it played.")
                notice = {"type": "step.opened", **head, "phase": e["phase"], "at": at, "kind": e.get("kind"),
                          "sealed": e.get("sealed"), "seats": e.get("seats"), "deadline": iso(deadline),
                          "request": request, "view": view, "events": told,
                          "sentences": sentences, **said,
                          "links": {**links(self.k, gid, e["phase"], meta["title"]),
                                    "page": seat_page(self.k, gid, meta, seat, e["phase"] if request else None,
                                                      holder)}}
                if asked is not None:
                    notice["asked"] = asked
                can = None if bot else offer.actions(game, state, seat, names)
                if can is not None:
                    notice["actions"] = can
                    notice["reply_to"] = self.reply_to(gid, meta, e["phase"], seat, holder)
                out.append(notice)
            elif e["type"] == "game_finished":
                out.append({"type": "game.finished", **head, "phase": e["phase"], "at": at,
                            "ranking": e.get("ranking"), "sentences": self.sentences(game, [e], names), **said,
                            "view": view, "links": {**links(self.k, gid, title=meta["title"]), **page}})
        if bot:
            for notice in out:
                notice["bot"] = bot
        return out

    def away_bot(self, gid: str, meta: dict[str, str], seat: int, at: float | None) -> str | None:
        """The bot kind that plays `seat` now because it is away (the game's absence policy
        `bot`, `service.core.absence`), else None: such a seat is not asked by mail."""
        pol = policy_of(meta)
        if pol.absence != "bot":
            return None
        when = self.k.now() if at is None else at
        return (pol.absence_bot or first_bot(meta["title"])) \
            if covering(self.store.absences(gid).get(seat), when) is not None else None

    def default_played(self, gid: str, phase: int, seat: int) -> str:
        """The default order played for `seat` in step `phase` (it did not answer), in
        words: the seat's own order, from the step's history record."""
        played = getattr(self, "_played", None)
        if played is None or played[0] != (gid, phase):
            steps = [h for h in self.store.history(gid) if h.get("phase") == phase]
            played = ((gid, phase), steps[0]["orders"] if steps else {})
            self._played = played
        order = played[1].get(str(seat))
        return words.order_words(order) if order is not None else "the default order"

    def ask(self, gid: str, meta: dict[str, str], state: Any, phase: int, seat: int, deadline: str,
            view: dict[str, Any], names: list[str],
            holder: str | None = None) -> tuple[dict[str, Any] | None, str | None]:
        """What step `phase` (in `state`) asks of `seat`, for a notice: kind, choices, the
        default order, the deadline and where to reply; and the same in the title's words
        (from the seat's own request and view only). (None, None) when it asks nothing."""
        game = self.k._title(meta["title"])
        mine = [r for r in game.requests(state) if r.seat == seat]
        if not mine:
            return None, None
        r = mine[0]
        default = game.default_order(state, seat)
        request = {"kind": r.kind, "sealed": r.sealed, "choices": r.choices,
                   "default_order": default, "deadline": iso(deadline),
                   "reply_to": self.reply_to(gid, meta, phase, seat, holder)}
        prompt = offer.offer(game, state, seat, default, names)
        if prompt is not None:
            request["prompt"] = prompt
        return request, words.asked_text(game, r, view, names)

    def reply_to(self, gid: str, meta: dict[str, str], phase: int, seat: int, holder: str | None = None) -> str:
        """Where a seat replies with its order: its secret reply address for the step when
        the game allows orders from it (bound to the seat's holder: `holder` when read
        already), else the general orders address."""
        if meta.get("reply_orders") == "1":
            key = (gid, phase, seat, holder)
            known = self.replies.get(key) if holder is not None else None
            if known is None:  # (a step.opened notice names it twice: its request's and its own)
                known = reply_address(self.k, gid, phase, seat, holder)
                if holder is not None:
                    self.replies[key] = known
            return known
        return orders_address(self.k)

    # -- fan-out (jobs) -----------------------------------------------------------------
    def catch_up(self, gid: str, through: int) -> int:
        """Make the notices of the game's events after its notified mark, up to event
        `through`, commit by commit and message by message, moving the mark after each
        (`Store.mark_notified`); the number of deliveries made. The notify job's body,
        and what the sweep enqueues again for a game whose mark lags behind its events.

        Running it twice, or again after it was killed mid-way, sends nothing twice: a
        delivery's id is derived from the event it tells of, the seat and the channel,
        and a delivery of that id is made only once (`dispatch` with a `key`)."""
        # One job at a time per game (workers run side by side): a job that finds the lock
        # taken leaves its events to the holder, which looks again as it lets go (the
        # release answers the last event and the mark, in the same atomic step: no event
        # is left behind between the two). Each round takes the lock with all that it
        # reads (the mark, the contacts, the former contacts, the seats, the clock, the
        # events and the game's state: `Store.open_notices`, one round trip) and lets go
        # of it with the mark moved through the notices made (`Store.unlock_notices`, one).
        token, lease = secrets.token_hex(8), notices_lease(self.k)
        made = 0
        for _ in range(CATCH_UP_ROUNDS):
            opening = self.store.open_notices(gid, token, lease, through)
            if not opening.locked:  # the holder looks again after letting go
                return made
            self.through = None
            try:
                if opening.mark < through:
                    if opening.head is None:  # nobody to tell: the mark moves on
                        self.through = through
                    else:
                        made += self._catch_up(gid, through, opening.contacts, token, lease, opening)
            finally:  # (the mark moved through the last notices made, in the same call)
                seq, mark = self.store.unlock_notices(gid, token, self.through)
                self.through, self.snapshot = None, None
            if mark >= seq:
                break
            through = seq
        return made

    def _catch_up(self, gid: str, through: int, contacts: dict[int, dict[str, Any]], token: str,
                  lease: float, opening: Opening) -> int:
        """`catch_up` under the game's notices lock: commit by commit, make the notices,
        send what this job sends itself, then move the mark (the last commit's moves as
        `catch_up` lets go of the lock: `through`).

        Whose contact is told (`told_to`): each seat's current holder's (`bound`). A seat
        whose holder the host replaced has its former contact in `gone` (`Store.set_seat`),
        with the last event before the change (`through`): the events up to it are told
        to neither holder (the former's notices would be built now, for the seat as it is
        now), and before the first event after it the former contact gets its one
        farewell (`farewell`); then the new holder's contact, once they set one.

        `opening`: what `catch_up` read as it took the lock (`Store.open_notices`, with
        its head), so that the head, the events and the game's state need no round trip
        of their own."""
        head, tagged, self.snapshot = opening.head, opening.tagged, opening.snapshot
        assert head is not None
        made = 0
        held = time.monotonic()
        gone = {field: g for field, g in head.gone.items() if not g.get("told")}  # not yet told
        first: NoticesHead | None = head  # the first commit's seats and clock are these; a later one reads its own
        groups = _by_commit(tagged if tagged is not None else self.store.tagged_events(gid, head.mark + 1, through))
        for n, group in enumerate(groups, 1):
            seats = self.store.seats(gid) if first is None else first.seats
            for field, g in list(gone.items()):
                if int(g.get("through") or 0) < group[0].number:
                    made += self.farewell(gid, g, group, seats)
                    del gone[field]
            waiting = {int(g["seat"]) for g in gone.values()}
            told_to = {s: c for s, c in current_contacts(contacts, seats).items() if s not in waiting}
            if group[0].closing is None:
                made += self.events(gid, group, told_to)
            else:
                made += self.commit(gid, group, told_to, seats, now=None if first is None else first.now)
            first = None
            self.flush(gid)
            if n == len(groups):  # the last: its mark moves with the lock's release (`catch_up`)
                self.through = group[-1].number
                break
            self.store.mark_notified(gid, group[-1].number)
            if time.monotonic() - held > lease / 3:  # renewed once a third of it has passed
                if not self.store.lock_notices(gid, token, lease):
                    break
                held = time.monotonic()
        return made

    def farewell(self, gid: str, gone: dict[str, Any], group: list[Tagged], seats: dict[int, dict[str, Any]]) -> int:
        """Tell a former contact once, in words, that its seat was handed on (to a bot or
        another player), and nothing of the game after it: no view, no request, no reply
        address, no page of the seat (the game's public page only). What was held for
        the former holder's next mail or digest is dropped with it (the new holder gets
        none of it either). The number of deliveries made."""
        seat, field = int(gone["seat"]), gone["field"]
        meta = self.store.meta(gid)
        head = self.header(gid, meta, seat, seats)
        if gone.get("name"):
            head["names"] = [gone["name"] if s == seat else name for s, name in enumerate(head["names"])]
            head["seat_name"] = gone["name"]
        found = next((t for t in group if t.event.get("type") == "seat_replaced" and t.event.get("seat") == seat),
                     None)
        now_bot = (seats.get(seat) or {}).get("bot")
        if found is not None:
            ev, at = {"id": found.id_for(seat), "at": iso(found.at), **found.event}, iso(found.at)
            bot, heir = found.event.get("bot"), found.event.get("name")
        else:  # the change's event is missing (see `Lobby.tell_replaced`): told from the seat as it is
            ev, at, bot, heir = None, iso(self.k.now()), now_bot, None
        if bot:
            sentences = [f"Your seat is now played by a {words.label(bot)} bot."]
        else:
            other = heir if heir and heir != gone.get("name") else "another player"
            sentences = [f"Your seat is now played by {other}."]
        notice = {"type": "seat.replaced", **head, "phase": (found.event if found else {}).get("phase"), "at": at,
                  "replaced": seat, "bot": bot, "yours": True, "farewell": True,
                  "events": [ev] if ev else [], "sentences": sentences,
                  "links": {"rules": rules_url(self.k, meta["title"]), "public": page_url(self.k, gid)}}
        self.store.drop_held(gid, seat, len(self.store.held(gid, seat)))
        self.store.take_digest(gid, seat)
        contact = self.store.gone_contact(gid, field) or {}
        made = len(self.dispatch(gid, seat, contact, [notice], key=f"gone:{field}", former=field))
        self.keep_pending(gid)  # stored before the contact is marked told (sent with the commit's)
        self.store.mark_gone_told(gid, field)
        self.store.drop_gone_mark(gid, seat, field)
        return made

    def flush(self, gid: str) -> None:
        """Store the webhooks made since the last flush (`keep_pending`, one script call)
        and send those this job sends itself (see `send`), all of them at once."""
        self.read = None
        self.keep_pending(gid)
        if not self.outbox:
            return
        batch, stored, self.outbox, self.stored = self.outbox, self.stored, [], {}
        assert self.send is not None
        self.send(self.k, gid, batch, stored, self.read)
        self.k.jobs.crash_point("after_send")

    def commit(self, gid: str, events: list[Tagged], contacts: dict[int, dict[str, Any]],
               seats: dict[int, dict[str, Any]] | None = None, now: float | None = None) -> int:
        """Tell every seat with a contact about one commit (`events`: all of its events,
        tagged with the step it closed and the deadline of the step it opened); the
        number of deliveries made. `seats`, `now`: the game's seats and the store's clock,
        when the caller has just read them."""
        closing, deadline = events[0].closing or 0, events[0].deadline
        meta, state = self.state_at(gid, closing)
        seats = self.store.seats(gid) if seats is None else seats
        now = self.k.now() if now is None else now
        made = 0
        for seat, contact in sorted(contacts.items()):
            plain = [(t.id_for(seat), t.event, t.at) for t in events]  # with the seat's own ids
            notices = self.commit_notices(gid, meta, seats, closing, state, deadline, plain, seat,
                                          wanted_types(contact))
            made += len(self.dispatch(gid, seat, contact, notices, now, key=str(events[0].number)))
        return made

    def state_at(self, gid: str, closing: int) -> tuple[dict[str, str], Any]:
        """`Kontor.state_at`: from the snapshot read as the lock was taken (`_catch_up`)
        when it is that state (the step after `closing` open, no action since), else read."""
        snap = self.snapshot
        if snap is not None:
            meta, ph, state = snap
            if meta and state is not None and ph.get("id") == str(closing + 1) and not self.store.state_version(ph):
                return meta, state
        return self.k.state_at(gid, closing)

    def events(self, gid: str, events: list[Tagged], contacts: dict[int, dict[str, Any]]) -> int:
        """Tell the seats concerned about events appended outside a commit (in-game
        messages); the number of deliveries made."""
        meta = self.store.meta(gid)
        seats = self.store.seats(gid)
        game = self.k._title(meta["title"])
        now = self.k.now()
        made = 0
        for t in events:
            n, ev, at = t.number, t.event, t.at
            if ev.get("type") == "seat_replaced":
                made += self.replaced(gid, meta, seats, t, contacts, now)
                continue
            if ev.get("type") == "lobby_closing":
                made += self.closing(gid, meta, seats, t, contacts, now)
                continue
            if ev.get("type") == "absence_summary":
                made += self.absence_summary(gid, meta, seats, t, contacts, now)
                continue
            if ev.get("type") == "rematch_started":
                made += self.rematched(gid, meta, seats, t, contacts, now)
                continue
            if ev.get("type") in ("clock_ran_out", "clock_played"):
                made += self.clocked(gid, meta, seats, t, contacts, now)
                continue
            if ev.get("type") in words.ROLLBACK_EVENTS:
                made += self.rollback(gid, meta, seats, t, contacts, now)
                continue
            if ev.get("type") in CLOCK_NOTICES:
                made += self.host_clock(gid, meta, seats, t, contacts, now)
                continue
            if ev.get("type") != "message":
                made += self.acted(gid, meta, seats, t, contacts, now)
                continue
            for seat, contact in sorted(contacts.items()):
                if seat == ev.get("from") or not visible_to(ev, seat):
                    continue
                head = self.header(gid, meta, seat, seats)
                notice = {"type": "message.received", **head, "phase": ev.get("phase"),
                          "at": iso(at),
                          "message": {"id": t.id_for(seat), **{k: v for k, v in ev.items() if k != "visible_to"}},
                          "sentences": self.sentences(game, [ev], head["names"]),
                          "links": links(self.k, gid, title=meta["title"])}
                made += len(self.dispatch(gid, seat, contact, [notice], now, key=str(n)))
        return made

    def acted(self, gid: str, meta: dict[str, str], seats: dict[int, dict[str, Any]], t: Tagged,
              contacts: dict[int, dict[str, Any]], now: float) -> int:
        """Tell the seats that may see it an event of an unprompted action (Fantasy
        Business: an instant played, a transfer proposed): an `action.taken` notice, which
        no mail mode sends at once (it is told in the seat's next mail; the seat that
        acted had its receipt). The number of deliveries made."""
        n, ev, at = t.number, t.event, t.at
        game = self.k._title(meta["title"])
        made = 0
        for seat, contact in sorted(contacts.items()):
            if not visible_to(ev, seat):
                continue
            head = self.header(gid, meta, seat, seats)
            sentences = self.sentences(game, [ev], head["names"])
            if not sentences:
                continue
            notice = {"type": "action.taken", **head, "phase": ev.get("phase"), "at": iso(at),
                      "events": [{"id": t.id_for(seat), "at": iso(at), **ev}], "sentences": sentences,
                      "links": links(self.k, gid, title=meta["title"])}
            made += len(self.dispatch(gid, seat, contact, [notice], now, key=str(n)))
        return made

    def clocked(self, gid: str, meta: dict[str, str], seats: dict[int, dict[str, Any]], t: Tagged,
                contacts: dict[int, dict[str, Any]], now: float) -> int:
        """Tell of a seat out of time on a time bank (`service.core.timebank`): the seat
        itself at once, with what was played for it in words (`clock_played`; from its own
        `clock_played` event when the step is sealed, else from the public event), the
        seats that may see it as news (`clock.ran_out`, held per their mail mode). The
        number of deliveries made."""
        n, ev, at = t.number, t.event, t.at
        game = self.k._title(meta["title"])
        out_of_time = ev.get("seat")
        made = 0
        for seat, contact in sorted(contacts.items()):
            if not visible_to(ev, seat):
                continue
            own = seat == out_of_time
            if own and ev.get("type") == "clock_ran_out" and "order" not in ev:
                continue  # sealed: the seat's own `clock_played` event tells it what was played
            head = self.header(gid, meta, seat, seats)
            sentences = self.sentences(game, [ev], head["names"])
            notice: dict[str, Any] = {
                "type": "clock.ran_out", **head, "phase": ev.get("phase"), "at": iso(at),
                "events": [{"id": t.id_for(seat), "at": iso(at), **ev}], "sentences": sentences,
                "links": {**links(self.k, gid, title=meta["title"]),
                          "page": seat_page(self.k, gid, meta, seat, None)}}
            if own:
                said = ev.get("said") or words.order_words(ev.get("order"))
                notice["clock_played"] = said.rstrip(".")
            made += len(self.dispatch(gid, seat, contact, [notice], now, key=str(n)))
        return made

    def rollback(self, gid: str, meta: dict[str, str], seats: dict[int, dict[str, Any]], t: Tagged,
                 contacts: dict[int, dict[str, Any]], now: float) -> int:
        """Tell every seat about the host's rollback proposal (`rollback.proposed`: at once
        to a seat whose consent it needs, `consent` true, with how to answer) and its
        answers, withdrawal or lapse (`rollback.answered`, told in the seat's next mail).
        The rollback itself, once applied, is a commit (`commit`). The number of deliveries made."""
        n, ev, at = t.number, t.event, t.at
        game = self.k._title(meta["title"])
        made = 0
        for seat, contact in sorted(contacts.items()):
            head = self.header(gid, meta, seat, seats)
            sentences = self.sentences(game, [ev], head["names"])
            asked = ev["type"] == "rollback_proposed" and seat in (ev.get("seats") or [])
            if asked:
                sentences.append('To agree, reply "agree to roll back"; to refuse, reply "refuse the roll back" '
                                 "(or answer on the game's page).")
            notice = {"type": "rollback.proposed" if ev["type"] == "rollback_proposed" else "rollback.answered",
                      **head, "phase": ev.get("phase"), "at": iso(at), "consent": asked,
                      "events": [{"id": t.id_for(seat), "at": iso(at), **ev}], "sentences": sentences,
                      "links": {**links(self.k, gid, title=meta["title"]),
                                "page": seat_page(self.k, gid, meta, seat, None)}}
            if asked:  # the answer goes to the seat's reply address for the step (mail.md)
                notice["reply_to"] = self.reply_to(gid, meta, int(ev["phase"]), seat)
            made += len(self.dispatch(gid, seat, contact, [notice], now, key=str(n)))
        return made

    def absence_summary(self, gid: str, meta: dict[str, str], seats: dict[int, dict[str, Any]], t: Tagged,
                        contacts: dict[int, dict[str, Any]], now: float) -> int:
        """Tell a seat, at once, what was played for it while it was away (its private
        `absence_summary`, issue 25). The number of deliveries made."""
        n, ev, at = t.number, t.event, t.at
        game = self.k._title(meta["title"])
        made = 0
        for seat, contact in sorted(contacts.items()):
            if not visible_to(ev, seat):
                continue
            head = self.header(gid, meta, seat, seats)
            notice = {"type": "absence.summary", **head, "phase": ev.get("phase"), "at": iso(at),
                      "from": ev.get("from"), "until": ev.get("until"),
                      "events": [{"id": t.id_for(seat), "at": iso(at), **ev}],
                      "sentences": self.sentences(game, [ev], head["names"]),
                      "links": {**links(self.k, gid, title=meta["title"]),
                                "page": seat_page(self.k, gid, meta, seat, None)}}
            made += len(self.dispatch(gid, seat, contact, [notice], now, key=str(n)))
        return made

    def replaced(self, gid: str, meta: dict[str, str], seats: dict[int, dict[str, Any]], t: Tagged,
                 contacts: dict[int, dict[str, Any]], now: float) -> int:
        """Tell every other seat that a seat is now played by a bot or another player (a
        public event; the seat's former holder had its farewell, `farewell`, and its new
        one knows). The number of deliveries made."""
        n, ev, at = t.number, t.event, t.at
        game = self.k._title(meta["title"])
        made = 0
        for seat, contact in sorted(contacts.items()):
            if ev.get("seat") == seat:  # its former holder had the farewell; its new one knows
                continue
            head = self.header(gid, meta, seat, seats)
            yours = False
            notice = {"type": "seat.replaced", **head, "phase": ev.get("phase"), "at": iso(at),
                      "replaced": ev.get("seat"), "bot": ev.get("bot"), "yours": yours,
                      "events": [{"id": t.id_for(seat), "at": iso(at), **ev}],
                      "sentences": self.sentences(game, [ev], head["names"]),
                      "links": {**links(self.k, gid, title=meta["title"]),
                                "page": seat_page(self.k, gid, meta, seat, None)}}
            made += len(self.dispatch(gid, seat, contact, [notice], now, key=str(n)))
        return made

    def host_clock(self, gid: str, meta: dict[str, str], seats: dict[int, dict[str, Any]], t: Tagged,
                contacts: dict[int, dict[str, Any]], now: float) -> int:
        """Tell every seat with a contact, at once, that the host paused the game, resumed
        it or extended the open step's deadline (public events): in words, with the
        deadline as it now stands. The number of deliveries made."""
        n, ev, at = t.number, t.event, t.at
        game = self.k._title(meta["title"])
        made = 0
        for seat, contact in sorted(contacts.items()):
            head = self.header(gid, meta, seat, seats)
            paused = ev.get("type") == "game_paused" or bool(ev.get("paused"))
            notice = {"type": CLOCK_NOTICES[str(ev["type"])], **head, "phase": ev.get("phase"), "at": iso(at),
                      "deadline": ev.get("deadline"), "paused": paused,
                      "events": [{"id": t.id_for(seat), "at": iso(at), **ev}],
                      "sentences": self.sentences(game, [ev], head["names"]),
                      "links": {**links(self.k, gid, title=meta["title"]),
                                "page": seat_page(self.k, gid, meta, seat, None)}}
            made += len(self.dispatch(gid, seat, contact, [notice], now, key=str(n)))
        return made

    def closing(self, gid: str, meta: dict[str, str], seats: dict[int, dict[str, Any]], t: Tagged,
                contacts: dict[int, dict[str, Any]], now: float) -> int:
        """Tell every seat with a contact, at once, that the game nobody started closes
        (the sweeper's public `lobby_closing`, a day before): when, that it is then
        removed, and which seats are still open. Nothing when the game has started since
        (a late job: the game no longer closes). The number of deliveries made."""
        if meta.get("status") != "lobby":
            return 0
        n, ev, at = t.number, t.event, t.at
        game = self.k._title(meta["title"])
        taken = {s for s, r in seats.items() if (r or {}).get("kid") or (r or {}).get("bot")}
        made = 0
        for seat, contact in sorted(contacts.items()):
            head = self.header(gid, meta, seat, seats)
            open_seats = [words.seat_name(head["names"], s) for s in range(len(head["names"])) if s not in taken]
            sentences = self.sentences(game, [ev], head["names"])
            if open_seats:
                sentences.append(f"Seats still open: {words.listing(open_seats)}.")
            notice = {"type": "lobby.closing", **head, "phase": 0, "at": iso(at), "closes_at": ev.get("closes_at"),
                      "open_seats": [s for s in range(len(head["names"])) if s not in taken],
                      "events": [{"id": t.id_for(seat), "at": iso(at), **ev}], "sentences": sentences,
                      "links": {**links(self.k, gid, title=meta["title"]), "public": page_url(self.k, gid),
                                "page": seat_page(self.k, gid, meta, seat, None)}}
            made += len(self.dispatch(gid, seat, contact, [notice], now, key=str(n)))
        return made

    def rematched(self, gid: str, meta: dict[str, str], seats: dict[int, dict[str, Any]], t: Tagged,
                  contacts: dict[int, dict[str, Any]], now: float) -> int:
        """Tell every seat with a contact, at once, that the host started a rematch of the
        finished game (its public `rematch_started`): the new game's name and page, the
        seat's own page there, and how to play it by mail (`by_mail`: the new game's mails
        come to the contact carried over; when its open step asks the seat, where a reply
        goes). The number of deliveries made."""
        n, ev, at = t.number, t.event, t.at
        game = self.k._title(meta["title"])
        new = str(ev.get("game") or "")
        new_meta = self.store.meta(new) if new else {}
        new_seats = self.store.seats(new) if new_meta else {}
        new_phase = self.store.phase(new) if new_meta else {}
        made = 0
        for seat, contact in sorted(contacts.items()):
            head = self.header(gid, meta, seat, seats)
            rec = new_seats.get(seat) or {}
            mine = bool(new_meta) and rec.get("kid") == (seats.get(seat) or {}).get("kid")
            notice = {"type": "rematch.started", **head, "phase": ev.get("phase"), "at": iso(at),
                      "rematch": {"game": new, "name": ev.get("name"), "url": ev.get("url"),
                                  "seat": seat if mine else None},
                      "events": [{"id": t.id_for(seat), "at": iso(at), **ev}],
                      "sentences": self.sentences(game, [ev], head["names"]),
                      "links": {"rematch": ev.get("url") or page_url(self.k, new),
                                **({"rematch_page": page_url(self.k, new, seat)} if mine else {}),
                                "rules": rules_url(self.k, meta["title"])}}
            if mine:
                notice["by_mail"] = self.by_mail(new, new_meta, new_phase, seat, rec, contact)
            made += len(self.dispatch(gid, seat, contact, [notice], now, key=str(n)))
        return made

    def by_mail(self, new: str, meta: dict[str, str], phase: dict[str, str], seat: int, rec: dict[str, Any],
                contact: dict[str, Any]) -> dict[str, Any]:
        """How `seat` plays the rematch `new` by mail: whether its mails come to the same
        address (`same_address`: the contact carried over), whether the new game takes
        plain replies (`reply_orders`), and when its open step asks the seat, that step
        and where the reply goes (`step`, `reply_to`)."""
        carried = self.store.contact(new, seat) or {}
        same = bool(contact.get("email")) and carried.get("email") == contact.get("email")
        out: dict[str, Any] = {"same_address": same, "reply_orders": meta.get("reply_orders") == "1", "step": None,
                               "reply_to": None, "bot": rec.get("bot")}
        asked = json.loads(phase.get("expected") or "[]")
        if phase.get("status") == "collecting" and not rec.get("bot") and seat in asked:
            step = int(phase["id"])
            out.update(step=step, reply_to=self.reply_to(new, meta, step, seat))
        return out

    def dispatch(self, gid: str, seat: int, contact: dict[str, Any], notices: list[dict[str, Any]],
                 now: float | None = None, key: str | None = None, former: str | None = None) -> list[str]:
        """Queue `notices` for `seat` on its channels; the delivery ids. Email: one mail
        for all of them (or the digest); webhooks: one delivery each. `now`: the store's
        clock, when the caller has read it already.

        `key`: what the notices tell (the number of the event they start at). With it,
        every delivery's id is derived from the key, the seat and the channel, a delivery
        that exists already is not made again, and its send job is enqueued again only
        while it was never attempted (RQ refuses a second job of the same id): a second
        call sends nothing twice. Without it (reminders), each call makes new deliveries.

        `former`: the deliveries go to that former contact (`farewell`), not the seat's
        current one; their records say so, so a send or retry reads that contact."""
        if not notices:
            return []
        now = self.k.now() if now is None else now
        made: list[str] = []
        address = contact.get("email")
        if address and contact.get("email_status") != "unsubscribed":
            mode = mode_of(contact)
            urgent = any(at_once(n) for n in notices)
            if self.store.unsubscribed(address):
                made.append(self.keep(gid, self.delivery(gid, seat, "email", notices, address, now, key,
                                                         status="suppressed",
                                                         error="the address has unsubscribed"))["id"])
            elif mode == "digest" and not urgent:
                due = now + self.k.settings.digest_interval
                if key is None:
                    self.store.push_digest(gid, seat, notices, due)
                else:
                    self.store.push_digest_once(gid, seat, f"{key}:{seat}", notices, due)
            elif mode in ("asked", "every") and not urgent and not any(n["type"] == "message.received"
                                                                      for n in notices) \
                    and not (mode == "every" and any(starts(n) for n in notices)):
                if mode == "asked":
                    told = [held(n) for n in notices if n.get("sentences") and not n.get("bot")]
                else:
                    told = [held_whole(n) for n in notices if n.get("sentences")]
                if told:
                    self.store.hold_once(gid, seat, f"{key or secrets.token_hex(8)}:{seat}", told)
            else:
                before = self.store.held(gid, seat) if former is None else []
                rec = self.keep(gid, self.delivery(gid, seat, "email", before + notices, address, now, key,
                                                   former=former))
                self.store.drop_held(gid, seat, len(before))
                self.k.jobs.crash_point("after_delivery")
                if _unsent(rec):
                    self.k.jobs.mail(gid, rec["id"])
                made.append(rec["id"])
        url = contact.get("webhook_url")
        if url and contact.get("webhook_status", "active") == "active":
            chosen = contact.get("webhook_events")
            recs = [self.delivery(gid, seat, "webhook", [n], url, now, key, former=former) for n in notices
                    if chosen is None or n["type"] in chosen]
            self.pending += recs
            if self.send is None:  # one send job each (else this job's `flush` sends them)
                for rec in self.keep_pending(gid):
                    self.k.jobs.webhook(gid, rec["id"])
            made += [rec["id"] for rec in recs]
        return made

    def keep_pending(self, gid: str) -> list[dict[str, Any]]:
        """Store the webhook deliveries made since the last call (`pending`), each once
        (`Store.add_deliveries_once`: one script call for all, a commit's when this job
        sends its own), and answer those to send: each stored now, and each stored before
        but never attempted (the record as stored then); the text each was stored as goes
        to `stored`, by id (`flush`: the send records the outcomes against it)."""
        if not self.pending:
            return []
        batch, self.pending = self.pending, []
        texts = [dumps(rec) for rec in batch]
        out, stored = [], {}
        records = list(zip(batch, texts, strict=True))
        if self.send is not None:  # the contacts and the clock its sends read, in the same command
            onces, contacts, now = self.store.add_deliveries_once_and_read(gid, records)
            self.read = (contacts, now)
        else:
            onces = self.store.add_deliveries_once(gid, records)
        for rec, text, once in zip(batch, texts, onces, strict=True):
            if once.new:
                out.append(rec)
                stored[rec["id"]] = text
            elif once.unsent:
                out.append(loads(once.stored))
                stored[rec["id"]] = once.stored
        if self.send is not None:
            self.outbox += out
            self.stored.update(stored)
        return out

    def record(self, gid: str, seat: int, channel: str, notices: list[dict[str, Any]], target: str, now: float,
               status: str = "queued", error: str | None = None) -> str:
        """Store a new delivery record (its payload: the notices) and answer its id. The
        id is also the Standard Webhooks `webhook-id` (stable across retries)."""
        rec = self.delivery(gid, seat, channel, notices, target, now, None, status, error)
        self.store.add_delivery(gid, seat, rec)
        return str(rec["id"])

    def delivery(self, gid: str, seat: int, channel: str, notices: list[dict[str, Any]], target: str, now: float,
                 key: str | None, status: str = "queued", error: str | None = None,
                 former: str | None = None) -> dict[str, Any]:
        """A delivery record, not yet stored. Its id is random, or with `key` derived from
        the key, the seat, the channel and (webhooks: one notice each) the notice, under
        the server secret: the same delivery made again has the same id."""
        if key is None:
            token = secrets.token_hex(8)
        else:
            what = "|".join(f"{n['type']}:{n.get('phase')}" for n in notices) if channel == "webhook" else ""
            token = hmac.new(server_secret(self.k), f"delivery|{gid}|{key}|{seat}|{channel}|{what}".encode(),
                             hashlib.sha256).hexdigest()[:16]
        return {
            "id": f"{channel[0]}_{gid}_{token}", "seat": seat, "channel": channel,
            **({"former": former} if former else {}),
            "type": next((n for n in notices if not n.get("held")), notices[0])["type"],
            "types": [n["type"] for n in notices], "phase": notices[-1].get("phase"), "target": target,
            "status": status, "attempts": 0, "last_error": error, "created_at": iso(now), "updated_at": iso(now),
            "payload": notices,
        }

    def keep(self, gid: str, rec: dict[str, Any]) -> dict[str, Any]:
        """Store a delivery record made by `delivery` once; the record as stored (the
        earlier one, when a record of its id was there)."""
        return self.store.add_delivery_once(gid, rec["seat"], rec)[1]


def _unsent(rec: dict[str, Any]) -> bool:
    """A delivery never attempted yet, whose send job is (again) to be enqueued."""
    return rec["status"] == "queued" and not rec.get("attempts")


def _by_commit(events: list[Tagged]) -> list[list[Tagged]]:
    """`events` in runs of one commit each (events outside a commit: runs of their own)."""
    runs: list[list[Tagged]] = []
    for t in events:
        if runs and t.closing is not None and runs[-1][-1].closing == t.closing:
            runs[-1].append(t)
        else:
            runs.append([t])
    return runs


def public_delivery(rec: dict[str, Any], for_host: bool) -> dict[str, Any]:
    """A delivery record as listed: never its payload; the host sees the target masked."""
    out = {k: v for k, v in rec.items() if k != "payload"}
    if for_host:
        out["target"] = mask(rec.get("target") or "")
    return out


def former_targets(k: Kontor, gid: str, seat: int) -> set[str]:
    """The addresses and webhook URLs of the seat's former holders' contacts (`gone`),
    but those its current holder uses too: the seat's list of deliveries shows them to
    the new holder masked, as to the host (another player's address is not theirs to read)."""
    out: set[str] = set()
    for g in k.store.gone(gid).values():
        if g["seat"] == seat:
            c = k.store.gone_contact(gid, g["field"]) or {}
            out |= {t for t in (c.get("email"), c.get("webhook_url")) if t}
    current = k.store.contact(gid, seat) or {}
    if bound(current, seat_holder(k, gid, seat)):
        out -= {current.get("email"), current.get("webhook_url")}
    return out


def mask(target: str) -> str:
    """`a***@example.org`, `https://example.org/***`: enough for a host to tell which.
    A URL keeps only its scheme, host and port: its path, query, fragment and any user
    or password may be the receiver's secret (chat services put the key in the path)."""
    from urllib.parse import urlsplit

    if "@" in target and "://" not in target:
        local, _, domain = target.partition("@")
        return f"{local[:1]}***@{domain}"
    if "://" not in target:
        return "***"
    parts = urlsplit(target)
    host = parts.hostname or ""
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{f'[{host}]' if ':' in host else host}{port}/***"


def dumps_payload(data: Any) -> str:
    return dumps(data, ensure_ascii=False)


def redeliver(k: Kontor, gid: str, seat: int, did: str) -> dict[str, Any]:
    """Try a `failed` or `disabled` delivery of the seat again (the spec's manual
    replay): the same delivery, so a webhook keeps its `webhook-id` and a consumer that
    did get it after all can drop the duplicate. A disabled webhook must be re-enabled
    first (by setting its URL again)."""
    rec = k.store.delivery(gid, did)
    if rec is None or rec.get("seat") != seat or rec.get("former"):  # a former holder's farewell: not the seat's
        raise Problem("not_found", f"no delivery {did!r} for seat {seat}")
    if rec["status"] not in ("failed", "disabled"):
        raise Problem("delivery_not_failed",
                      f"the delivery is {rec['status']}; only a failed or disabled one is tried again")
    contact = k.store.contact_for(gid, rec)
    if rec["channel"] == "webhook" and (contact.get("webhook_url") != rec["target"]
                                        or contact.get("webhook_status") != "active"):
        raise Problem("delivery_not_failed", "the webhook is disabled or changed: set its URL again first")
    attempt = int(rec.get("attempts") or 0) + 1
    out = k.store.update_delivery(gid, did, status="retrying", next_attempt_at=None, updated_at=iso(k.now()))
    (k.jobs.webhook if rec["channel"] == "webhook" else k.jobs.mail)(gid, did, attempt)
    return out or rec
