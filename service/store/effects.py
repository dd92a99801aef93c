"""The store's side of a commit's effects, and what makes each of them derivable again.

A commit (commit.lua) is one script on one game's keys. What follows it runs outside
the script (activation in the running set, the notify job, the deadline job, the bot
jobs), so a process killed right after the script would lose it for good. Instead,
every one of them can be made again from committed state, and the sweep
(`service.jobs.sweep`) does so:

* notices: each event's stream entry names its commit (`c`, the closed step; `d`, the
  opened step's deadline), and the meta field `notified_through` (beside `event_seq`)
  says through which event the notices are made. The notify job makes the notices of
  the events after the mark and then moves it; deliveries have ids derived from what
  they tell and are stored only if new (`add_delivery_once`; a commit's webhooks all at
  once, `add_deliveries_once`; `push_digest_once`), so a
  job that runs twice, or again after being killed mid-way, sends nothing twice;
* the running set (`<prefix>:{active-B}`, bucketed, another hash slot than the game's
  keys, so not written by the script) and the listing indexes: written right after the
  script (`Games.place`), reconciled with the registry (`reconcile_active`) and repaired
  (`Games.repair_indexes`);
* the deadline and bot jobs: from the open step (`phase` hash) and the seats.

Layout added to the keys the `Store` docstring lists:
  meta.notified_through  notices are made for events 1..N (absent: 0)
  events entry fields    c (closed step), d (opened step's deadline) on commit events
  digested HASH          "<event>:<seat>" -> 1: notices of that event kept for a digest
  notifying STRING        the notices lock: one job at a time makes and sends a game's
                          notices (a lease; see `lock_notices`)
Global: `<prefix>:reconcile` (where the `reconcile_active` walk is: an offset per registry bucket).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.store import archive, numbering
from service.store.base import Base, Lean, lua
from service.store.deliveries import DELIVERIES_KEPT, HELD_KEPT, contacts_of, gone_of
from service.store.games import seats_of
from service.store.json import dumps, loads
from service.store.numbering import Counts, slot

#: The scripts of this module, loaded here (`service/store/lua/<name>.lua`).
LUA = {name: lua(name) for name in ("commit", "notified", "delivery_once", "deliveries_once", "delivery_mark",
                                    "digest_once", "notices_unlock", "notices_open")}


@dataclass(frozen=True)
class Committed:
    """What `commit_step` answered."""

    committed: bool  # False: a duplicate or late commit, nothing changed
    deadline: str = ""  # the opened step's deadline (epoch seconds), '' when the game is over
    last_event: int = 0  # the number of the commit's last event
    told: bool = False  # nobody had a contact: the notices are done (the mark moved on)
    moved: bool = False  # not committed: an action changed the state since it was read (resolve again)
    before: str = ""  # the game's status before the commit (`Games.place` moves its index entries)
    created: float = 0.0  # the game's creation time (its listing indexes' score)
    #: The seat records as they were at the commit, when it opened a step (who the bots
    #: are: read in the commit's own script, so no seat set meanwhile is missed); else None.
    seats: dict[int, dict[str, Any]] | None = None


@dataclass(frozen=True)
class Tagged:
    """An event as the notify job reads it: number, event, time stamp, and the commit it
    belongs to (`closing` None: appended outside a commit, e.g. a message)."""

    number: int
    event: dict[str, Any]
    at: str
    closing: int | None
    deadline: str
    #: The counts behind each viewer's id of it (`service.store.numbering`): seat k's
    #: id is `ids[k + 1]`; `number` is the store's own, never shown.
    ids: Counts = ()

    def id_for(self, seat: int) -> int:
        """The event's id as seat `seat` sees it."""
        return self.ids[slot(seat)]


@dataclass(frozen=True)
class Once:
    """What `add_deliveries_once` answered for one record: stored now (`new`), else what
    the caller needs of the stored one: its text when it was never attempted (to be sent
    again: `unsent`), else its status."""

    new: bool
    stored: str = ""

    @property
    def unsent(self) -> bool:
        """A record that was there already and was never attempted."""
        return not self.new and self.stored.startswith("{")


@dataclass(frozen=True)
class Marks:
    """How far a game's notices are made: `seq` events, notices through `mark`; `since`
    is the time stamp of the first event without notices (None when there is none)."""

    status: str
    seq: int
    mark: int
    contacts: int
    since: float | None

    @property
    def gap(self) -> bool:
        return self.mark < self.seq


@dataclass(frozen=True, slots=True)
class NoticesHead:
    """What a holder of a game's notices lock reads first (`Effects.open_notices`): the
    notified mark, the former contacts (`Deliveries.gone`), the seats (`Games.seats`)
    and the store's clock (`now`)."""

    mark: int
    gone: dict[str, dict[str, Any]]
    seats: dict[int, dict[str, Any]]
    now: float


@dataclass(frozen=True, slots=True)
class Opening:
    """`Effects.open_notices`: the lock taken, the mark and the contacts; when the holder
    has something to tell, read at the same moment: `head`, the events to tell (`tagged`,
    as `tagged_events` from the mark on; None: not read here) and the game's meta, open
    step and state (`snapshot`, as `Games.snapshot`)."""

    locked: bool
    mark: int
    contacts: dict[int, dict[str, Any]]
    head: NoticesHead | None = None
    tagged: list[Tagged] | None = None
    snapshot: tuple[dict[str, str], dict[str, str], Any] | None = None


def opened_version(next_phase: dict[str, Any], extra: dict[str, dict[str, str]] | None) -> str | None:
    """The state version of the step a commit opens, as commit.lua writes it (`v` of
    `extra`'s step fields, else 0), or None when the commit opens no step, or writes the
    step's id or status from `extra` (the live message then carries no state either)."""
    if not next_phase.get("id"):
        return None
    fields = (extra or {}).get("step") or {}
    if "id" in fields or "status" in fields:
        return None
    return str(fields.get("v", "0"))


#: The most events `open_notices` reads in its own command (more: `tagged_events` reads them).
OPEN_EVENTS = 64


class Effects(Base):
    """Mixin of `Store`: what a commit's effects, and the sweep that makes them again,
    need from the store."""

    def _effect(self, name: str, keys: list[str], args: list[Any]) -> Any:
        scripts: dict[str, Lean] | None = self.__dict__.get("_effect_scripts")
        if scripts is None:
            scripts = {n: Lean(self.r.register_script(src), self.lean) for n, src in LUA.items()}
            self.__dict__["_effect_scripts"] = scripts
        return scripts[name](keys=keys, args=args)

    # -- the commit ---------------------------------------------------------------------
    def commit_step(self, game: str, closing: int, state: Any, history: dict[str, Any] | None,
                    next_phase: dict[str, Any] | None, status: str, events: list[dict[str, Any]],
                    version: int | None = None, extra: dict[str, dict[str, str]] | None = None) -> Committed:
        """Write a resolved step (closing >= 1) or the game's start (closing == 0), in one
        script (commit.lua): the state, the next step, the history entry, the events
        (tagged with this commit) and, when no seat has a contact, the notified mark.
        `version`: the state version the resolution read (`Games.state_version`); when an
        action has committed since, nothing is written (`moved`). `extra`: fields written
        with it, {"meta": {...}, "step": {...}} (the opened step's; a time bank's banks)."""
        nxt = next_phase or {}
        history = _without_events(history, events) if history else history
        keys = [self.key(game, p) for p in ("phase", "state")] + [
            self.key(game, "orders", closing), self.key(game, "events"), self.key(game, "history"),
            self.key(game, "meta"), self.key(game, "contact"), self.key(game, "jti", closing),
            self.key(game, "seats")]
        args = [closing, dumps(state), dumps(history) if history else "",
                nxt.get("id", ""), dumps(nxt.get("expected", [])), nxt.get("kind", ""),
                "1" if nxt.get("sealed") else "0", nxt.get("seconds", 0), status,
                "" if version is None else version, dumps(extra) if extra else "", *(dumps(e) for e in events)]
        raw = self._effect("commit", keys, args)
        out = [_text(x) for x in raw[:6]]
        if out[0] != "1":
            return Committed(False, moved=len(out) > 1 and out[1] == "moved")
        version = opened_version(nxt, extra)
        offer = getattr(self, "offer_step_state", None)
        if version is not None and offer is not None:  # the opened step's state, for this process's order path
            offer(game, str(nxt["id"]), version, args[1])
        if archive.filled(int(out[2]), len(events)):
            archive.compact(self.r, self.scripts["archive"], self.key(game, "events"), self.key(game, "archive"),
                            self.key(game, "meta"), self.key(game, "chunkids"))
        seats = None
        if len(raw) > 6:
            flat = iter(_text(x) for x in raw[6])
            seats = {int(s): loads(v) for s, v in sorted(zip(flat, flat, strict=True), key=lambda kv: int(kv[0]))}
        return Committed(True, out[1], int(out[2]), out[3] == "1", before=out[4], created=float(out[5]),
                         seats=seats)

    # -- the notified mark --------------------------------------------------------------
    def notified_through(self, game: str) -> int:
        """The event number through which the game's notices are made."""
        return int(self.r.hget(self.key(game, "meta"), "notified_through") or 0)  # type: ignore[arg-type]

    def open_notices(self, game: str, token: str, lease: float, through: int) -> Opening:
        """Try to take the game's notices lock for a new holder `token` (as `lock_notices`),
        then read the notified mark and the seats' contacts (`Deliveries.contacts`); and for
        a holder with events through `through` to tell and someone to tell them to (a
        contact, or a former one), the head (`NoticesHead`), the events after the mark
        through `through` (`tagged_events`) and the game's `snapshot`, all read in the
        same atomic command (notices_open.lua; the game's keys share its hash slot), after
        the lock was taken."""
        keys = [self.key(game, "notifying"), self.key(game, "meta"), self.key(game, "contact"),
                self.key(game, "gone"), self.key(game, "seats"), self.key(game, "events"),
                self.key(game, "archive"), self.key(game, "phase"), self.key(game, "state")]
        out = self._effect("notices_open", keys, [token, max(1, int(lease * 1000)), through, OPEN_EVENTS])
        locked, mark, contacts = bool(int(out[0])), int(out[1] or 0), contacts_of(_pairs(out[2]))
        if len(out) <= 3:
            return Opening(locked, mark, contacts)
        gone, seats, (sec, micro), raw, packed, meta, phase, state = out[3:11]
        head = NoticesHead(mark, gone_of(_pairs(gone)), seats_of(_pairs(seats)), float(sec) + int(micro) / 1e6)
        tagged = None
        if raw is not None:
            stream = [(i, _pairs(f)) for i, f in raw]
            rows = archive.merge(self.r, self.key(game, "archive"), int(packed), mark + 1, through, None, stream)
            tagged = self._tagged(game, mark + 1, through, rows)
        return Opening(locked, mark, contacts, head, tagged, (_pairs(meta), _pairs(phase),
                                                              loads(state) if state else None))

    def mark_notified(self, game: str, through: int) -> int:
        """The notices of every event through `through` are made: move the mark there
        (never back, never past the last event). The mark after the call."""
        return int(_text(self._effect("notified", [self.key(game, "meta"), self.key(game, "contact")],
                                      [through])))

    def lock_notices(self, game: str, token: str, lease: float) -> bool:
        """Take (or, holding it, renew) the game's notices lock for `lease` seconds: one
        job at a time makes and sends a game's notices, so none is sent twice by two
        workers catching up at once. A lease, so a killed holder blocks nobody for long."""
        key = self.key(game, "notifying")
        if self.r.set(key, token, nx=True, px=max(1, int(lease * 1000))):
            return True
        if self.r.get(key) == token:
            self.r.pexpire(key, max(1, int(lease * 1000)))
            return True
        return False

    def unlock_notices(self, game: str, token: str, through: int | None = None) -> tuple[int, int]:
        """Let go of the notices lock (if still held by `token`) and answer, atomically
        with it, the game's (event_seq, notified_through). `through`: first move the mark
        there (`mark_notified`), while `token` still holds the lock."""
        args: list[Any] = [token] if through is None else [token, through]
        seq, mark = self._effect("notices_unlock", [self.key(game, "notifying"), self.key(game, "meta")], args)
        return int(_text(seq)), int(_text(mark))

    def mark_nobody_to_tell(self, game: str) -> bool:
        """If no seat has a contact, every event's notices are made (there is nobody to
        tell): move the mark to the last event. Whether the notices are now all made."""
        mark = int(_text(self._effect("notified", [self.key(game, "meta"), self.key(game, "contact")], [""])))
        return mark >= int(self.r.hget(self.key(game, "meta"), "event_seq") or 0)  # type: ignore[arg-type]

    def marks(self, games: list[str]) -> dict[str, Marks]:
        """Per game: status, events, notified mark, contacts, and the time of the first
        event without notices (two pipelined round trips, the second only for games
        with a gap)."""
        pipe = self.r.pipeline(transaction=False)
        for g in games:
            pipe.hmget(self.key(g, "meta"), "status", "event_seq", "notified_through")
            pipe.hlen(self.key(g, "contact"))
        raw = pipe.execute()
        rows = {g: (raw[2 * i], raw[2 * i + 1]) for i, g in enumerate(games)}
        # A game made before the mark existed (none yet) was told of its events then.
        rows = {g: ((status, seq, seq if mark is None else mark), n) for g, ((status, seq, mark), n) in rows.items()}
        gaps = [g for g, ((_, seq, mark), _) in rows.items() if int(mark or 0) < int(seq or 0)]
        pipe = self.r.pipeline(transaction=False)
        for g in gaps:
            mark = int(rows[g][0][2] or 0)
            pipe.xrange(self.key(g, "events"), min=f"{mark + 1}-1", max="+", count=1)
        first = dict(zip(gaps, pipe.execute(), strict=True))
        for g, entry in first.items():  # packed already (`service.store.archive`): read from there
            mark = int(rows[g][0][2] or 0)
            if not entry or entry[0][0] != f"{mark + 1}-1":
                packed = self._packed_rows(g, mark + 1, mark + 1)
                first[g] = [(f"{n}-1", f) for n, _, f in packed]
        out = {}
        for g, ((status, seq, mark), contacts) in rows.items():
            entry = first.get(g)
            since = float(entry[0][1]["at"]) if entry else None
            out[g] = Marks(status or "", int(seq or 0), int(mark or 0), int(contacts), since)
        return out

    def tagged_events(self, game: str, first: int, last: int) -> list[Tagged]:
        """Events `first` to `last` (inclusive) with the commit each belongs to."""
        return self._tagged(game, first, last, None)

    def _tagged(self, game: str, first: int, last: int, rows: list[archive.Row] | None) -> list[Tagged]:
        """`tagged_events`, from the `rows` of `first` to `last` when read already."""
        return [Tagged(n, ev, f["at"], int(f["c"]) if "c" in f else None, f.get("d", ""), ids)
                for n, ev, f, ids in numbering.counted(self.r, self.key(game, "events"), self.key(game, "archive"),
                                                        self.key(game, "meta"), first, last, rows)]

    def _packed_rows(self, game: str, first: int, last: int) -> list[archive.Row]:
        """Events `first` to `last` from the archive and the stream (`service.store.archive`)."""
        return archive.read(self.r, self.key(game, "events"), self.key(game, "archive"), first, last, None)

    def bot_seats(self, games: list[str]) -> dict[str, set[int]]:
        """Per game, the seats a bot plays (one pipelined round trip)."""
        pipe = self.r.pipeline(transaction=False)
        for g in games:
            pipe.hgetall(self.key(g, "seats"))
        return {g: {int(s) for s, rec in raw.items() if loads(rec).get("bot")}
                for g, raw in zip(games, pipe.execute(), strict=True)}

    # -- deliveries made at most once ---------------------------------------------------
    def add_delivery_once(self, game: str, seat: int, record: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        """Store a delivery record unless one of its id is there: (stored now, the record
        as stored)."""
        keys = [self.key(game, "delivery"), self.key(game, "deliveries", seat)]
        new, raw = self._effect("delivery_once", keys, [record["id"], dumps(record),
                                                        DELIVERIES_KEPT])
        return int(new) == 1, loads(_text(raw))

    def add_deliveries_once(self, game: str, records: list[tuple[dict[str, Any], str]]) -> list[Once]:
        """Store several delivery records of the game (each with its JSON text, as
        `dumps` made it), each unless one of its id is there, in one script call
        (deliveries_once.lua; the game's keys share its hash slot): per record, in order,
        whether it was stored now, and for one that was there already the text stored
        when it was never attempted (it is to be sent again), else its status."""
        if not records:
            return []
        return self._deliveries_once(game, records, False)[0]

    def add_deliveries_once_and_read(self, game: str, records: list[tuple[dict[str, Any], str]]) -> tuple[
            list[Once], dict[int, dict[str, Any]], float]:
        """`add_deliveries_once`, then `contacts_and_time` in the same command: (what it
        answered per record, the contacts, the store's clock)."""
        return self._deliveries_once(game, records, True)

    def _deliveries_once(self, game: str, records: list[tuple[dict[str, Any], str]],
                         read: bool) -> tuple[list[Once], dict[int, dict[str, Any]], float]:
        lists: dict[int, int] = {}
        args: list[Any] = [DELIVERIES_KEPT, "1" if read else ""]
        for rec, text in records:
            index = lists.setdefault(int(rec["seat"]), len(lists) + 3)
            args += [rec["id"], index, text]
        keys = [self.key(game, "delivery"), self.key(game, "contact"),
                *(self.key(game, "deliveries", seat) for seat in lists)]
        out = self._effect("deliveries_once", keys, args)
        contacts, now = {}, 0.0
        if read:
            raw, (sec, micro) = out[-2:]
            out, contacts, now = out[:-2], contacts_of(_pairs(raw)), float(sec) + int(micro) / 1e6
        return [Once(int(out[i]) == 1, _text(out[i + 1])) for i in range(0, len(out), 2)], contacts, now

    def mark_deliveries(self, game: str, marks: list[tuple[str, str, str]]) -> list[bool]:
        """Write new delivery records in one script call (delivery_mark.lua), each
        (id, the text it was built from, new text) only if the stored text is still that
        one: per record, in order, whether it was written."""
        if not marks:
            return []
        args = [x for mark in marks for x in mark]
        return [int(x) == 1 for x in self._effect("delivery_mark", [self.key(game, "delivery")], args)]

    def hold_once(self, game: str, seat: int, key: str, notices: list[dict[str, Any]]) -> bool:
        """Hold `notices` (words only) for the seat's next mail unless notices under `key`
        were held for it before (a notify job run twice adds nothing); keeps the newest
        `HELD_KEPT`. Whether they were held now."""
        keys = [self.key(game, "digested"), self.key(game, "held", seat)]
        new = int(self._effect("digest_once", keys, [f"held:{key}", *(dumps(n) for n in notices)])) == 1
        if new:
            self.r.ltrim(self.key(game, "held", seat), -HELD_KEPT, -1)
        return new

    def push_digest_once(self, game: str, seat: int, key: str, notices: list[dict[str, Any]], due: float) -> bool:
        """Keep `notices` for the seat's next digest unless notices under `key` were kept
        for it before; whether they were kept now. The schedule (the game's bucket of
        `digests`) is another slot than the notices, so: the digest is scheduled first (an
        empty digest sends nothing, and a crash before the notices are kept leaves the
        notify job to do both again), and once more after the notices were kept (ZADD NX:
        nothing when it still stands), for a sweep that sent the digest in between."""
        schedule = self.digests_key(game)
        self.r.zadd(schedule, {f"{game}:{seat}": due}, nx=True)
        keys = [self.key(game, "digested"), self.key(game, "digest", seat)]
        kept = int(self._effect("digest_once", keys, [key, *(dumps(n) for n in notices)])) == 1
        if kept:
            self.r.zadd(schedule, {f"{game}:{seat}": due}, nx=True)
        return kept

    # -- the running set ----------------------------------------------------------------
    def reconcile_active(self, batch: int) -> list[str]:
        """Look at the next `batch` games of the registry (a walk over its buckets whose
        place is kept in the store goes round: `Games.registry_slice`) and put into the
        running set each that should be there and is not: running, or finished with
        notices still to make. The games added. One round trip to read the walk, one for
        the games (a registry bucket's games are in the same bucket of the running set)."""
        offsets, got = self.registry_slice(self.reconcile_key, batch)  # type: ignore[attr-defined]
        self.walked(self.reconcile_key, offsets, got, batch)  # type: ignore[attr-defined]
        buckets = [(b, [g for g, _ in entries]) for b, entries in enumerate(got) if entries]
        if not buckets:
            return []
        pipe = self.r.pipeline(transaction=False)
        for _, ids in buckets:
            for g in ids:
                pipe.hmget(self.key(g, "meta"), "status", "event_seq", "notified_through")
        for b, ids in buckets:
            pipe.smismember(self.active_bucket(b), ids)
        out = pipe.execute()
        n = sum(len(ids) for _, ids in buckets)
        rows, members = iter(out[:n]), out[n:]
        missing: list[str] = []
        fix = self.r.pipeline(transaction=False)
        for (b, ids), member in zip(buckets, members, strict=True):
            add = [g for g, on, row in zip(ids, member, rows, strict=False) if not on and _should_run(*row)]
            if add:
                fix.sadd(self.active_bucket(b), *add)
                missing += add
        if missing:
            fix.execute()
        return missing


def _should_run(status: str | None, seq: str | None, mark: str | None) -> bool:
    """Whether a game belongs in the running set: running, or finished with notices
    still to make."""
    return status == "running" or (status == "finished" and mark is not None and int(mark) < int(seq or 0))


def _without_events(history: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    """The history record to store: without the engine's events when the commit's events
    give them back exactly (they are `events[1:1 + n]` with the step number added, see
    `service.core.orders`): `ev` says how many, `Games.history` restores them. Else (an
    engine event with a `phase` of its own) the record as it is."""
    made = history.get("events")
    if not isinstance(made, list):
        return history
    again = [{k: v for k, v in ev.items() if k != "phase"} for ev in events[1:1 + len(made)]]
    if len(again) != len(made) or dumps(again) != dumps(made):
        return history
    return {**{k: v for k, v in history.items() if k != "events"}, "ev": len(made)}


def _text(x: Any) -> str:
    return x.decode() if isinstance(x, bytes) else str(x)


def _pairs(flat: list[Any]) -> dict[str, Any]:
    """A flat field/value list (a script's HGETALL) as a dict."""
    it = iter(flat)
    return dict(zip(it, it, strict=True))
