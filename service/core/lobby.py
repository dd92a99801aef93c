"""Setting games up: the catalogue, creating a game, seats, starting."""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from functools import cache
from pathlib import Path
from typing import Any

from engine.core import registry
from engine.core.errors import EngineError
from service.core.absence import absence_policy
from service.core.base import Base, extra_detail
from service.core.errors import Problem
from service.core.policy import Policy
from service.core.rematch import started_by_rematch
from service.store import dumps
from service.words import given_name

log = logging.getLogger("kontor")

#: The given names bots are called by (a data file, one a line).
BOT_NAMES_FILE = Path(__file__).with_name("data") / "bot_names.txt"


@cache
def bot_given_names() -> tuple[str, ...]:
    lines = BOT_NAMES_FILE.read_text(encoding="utf-8").splitlines()
    return tuple(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def bot_name(gid: str, seat: int, kind: str, current: str | None, others: list[str]) -> str:
    """The display name of a seat a bot of `kind` plays: its given name and the kind,
    "Greta (greedy bot)". A seat that had a name keeps its given name (a player's seat
    handed to a bot mid-game: "Carla (greedy bot)"); else a given name from the data file
    that none of the game's `others` seats has, picked from the game and seat (stable:
    the same game gives the same seat the same name)."""
    given = given_name(current or "")
    if not given:
        taken = {given_name(o).casefold() for o in others}
        names = bot_given_names()
        start = int.from_bytes(hashlib.sha256(f"{gid}|{seat}".encode()).digest()[:8], "big") % len(names)
        free = [n for n in names[start:] + names[:start] if n.casefold() not in taken]
        given = free[0] if free else f"Seat {seat}"
    return f"{given} ({kind} bot)"


class Lobby(Base):
    """Creating games, taking and changing seats, starting."""

    def catalog(self) -> list[dict[str, Any]]:
        """The titles' catalogue entries, each with the link to its player's guide (null
        when it has none)."""
        base = self.settings.public_url.rstrip("/")
        return [{**game.catalog_entry(),
                 "rules_url": f"{base}/titles/{tid}/rules" if self.rules_file(tid) else None}
                for tid, game in sorted(registry.titles().items())]

    def rules_file(self, title: str) -> Path | None:
        """The player's guide of a registered title (markdown), if there is one."""
        if title not in registry.titles():
            return None
        path = self.settings.rules_path / f"{title}.md"
        return path if path.is_file() else None

    def create_game(self, title: str, seats: int, options: dict[str, Any] | None, policy: dict[str, Any] | None,
                    seed: int | str | None, host_key: str, name: str | None = None,
                    mail_orders: str = "reply_address", press: str = "all") -> dict[str, Any]:
        game = self._title(title)
        try:
            opts = game.normalize_options(seats, options)
        except EngineError as exc:
            raise Problem("bad_options", exc.message, **exc.details) from None
        pol = Policy.checked(policy or {}, self.settings.min_step_seconds, self.settings.max_step_seconds,
                             bots=list(registry.bots(title)),
                             bank=(self.settings.bank_min_seconds, self.settings.bank_max_seconds))
        pol = absence_policy(pol, title)
        key = self._key(host_key)
        # A server seed is 32 bytes from the OS's cryptographic generator (RNG1); a given
        # seed (tests, reproducible games) is the client's choice and not secret from it.
        seed = seed if seed is not None else secrets.token_hex(32)
        try:
            game.setup(seats, opts, seed)  # options the title only checks at setup (a board file)
        except EngineError as exc:
            raise Problem("bad_options", exc.message, **exc.details) from None
        now = self.now()
        meta = {
            "title": title, "name": name or "", "seats": str(seats),
            "options": dumps(opts), "policy": dumps(pol.as_dict()), "host_kid": key.kid,
            "host_key": key.x, "status": "lobby", "seed": dumps(seed), "created_at": f"{now:.6f}",
            "event_seq": "0", "notified_through": "0",
            "reply_orders": "1" if mail_orders == "reply_address" else "0", "press": press,
        }
        for _ in range(5):
            gid = secrets.token_hex(5)
            # Unnamed games are called after their id, so mail subjects and the CLI never
            # show a second, unrelated number ("Die Händler #3e16" for game 3e167fdfe6).
            meta["name"] = name or f"{game.name} #{gid[:4]}"
            if self.store.create(gid, meta, key.kid):
                log.info("game %s created (%s, %d seats)", gid, title, seats)
                return self.game(gid)
        raise Problem("internal_error", "could not pick a free game id")

    def join(self, gid: str, name: str, public_key: str, seat: int | None) -> dict[str, Any]:
        meta = self._meta(gid)
        key = self._key(public_key)
        if key.kid == meta["host_kid"]:
            raise Problem("key_in_use", "that key is the host's key; a player needs a key of their own")
        record = {"name": name, "public_key": key.x, "kid": key.kid, "bot": None, "joined_at": f"{self.now():.6f}"}
        out = self.store.join(gid, seat, record, key.kid, self.settings.lobby_ttl)
        if out.status != "joined":
            if out.status == "no_game":  # expired (or gone) between the read and the join
                raise Problem("game_not_found", f"no game {gid!r}")
            code = {"started": "game_started"}.get(out.status, out.status)
            raise Problem(code, extra_detail(out.status, out.value))
        return self.seat(gid, int(out.value))

    def update_seat(self, gid: str, seat: int, name: str | None, public_key: str | None,
                    bot: str | None, clear_bot: bool = False) -> dict[str, Any]:
        """The host's changes to a seat: mark it a bot (in the lobby or later, to replace
        an absent player), give it a new player key, rename it."""
        meta = self._meta(gid)
        if meta["status"] == "finished":
            raise Problem("game_finished")
        self.check_seat(meta, seat)
        current = self.store.seats(gid).get(seat) or {"name": None, "public_key": None, "kid": None, "bot": None}
        record = dict(current)
        if bot is not None:
            if bot not in registry.bots(meta["title"]):
                raise Problem("unknown_bot", f"bots of this title: {', '.join(sorted(registry.bots(meta['title'])))}")
            others = [str(r.get("name") or "") for s, r in self.store.seats(gid).items() if s != seat and r]
            record.update(bot=bot, public_key=None, kid=None,
                          name=name or bot_name(gid, seat, bot, current.get("name"), others))
        if public_key is not None:
            key = self._key(public_key)
            if key.kid == meta["host_kid"]:
                raise Problem("key_in_use", "that key is the host's key")
            record.update(public_key=key.x, kid=key.kid, bot=None)
        elif clear_bot:
            raise Problem("invalid_request", "a seat that stops being a bot needs a player key")
        if name is not None:
            record["name"] = name
        record.setdefault("joined_at", f"{self.now():.6f}")
        if not record.get("bot") and not record.get("kid"):
            raise Problem("invalid_request", "give the seat a bot or a player key")
        out = self.store.set_seat(gid, seat, record, record.get("kid"))
        if out.status != "ok":
            raise Problem(out.status, extra_detail(out.status, out.value))
        if meta["status"] == "running" and (record.get("bot"), record.get("kid")) != (current.get("bot"),
                                                                                      current.get("kid")):
            self.tell_replaced(gid, seat, record)
        if meta["status"] == "running" and record.get("bot"):
            phase = self.store.phase(gid)
            if phase.get("status") == "collecting" and seat in json.loads(phase["expected"]):
                self.jobs.bot(gid, int(phase["id"]), seat)
        return self.seat(gid, seat)

    def tell_replaced(self, gid: str, seat: int, record: dict[str, Any]) -> None:
        """A running game's seat now has a bot or another player: a public `seat_replaced`
        event (who plays it is public: the players list shows it), whose notices tell the
        seat's contact once (`service.channels.notify`). Ruling: the event is appended
        after the seat changed; should the process die in between, the change stands and
        only that event and its notice are missing."""
        _, _, phase = self.store.outline(gid)
        event = {"type": "seat_replaced", "visible_to": "all", "phase": phase, "seat": seat,
                 "bot": record.get("bot"), "name": record.get("name")}
        out = self.store.append_events(gid, [event])
        if out.status == "ok":
            self.jobs.notify(gid, int(out.extra))

    def start(self, gid: str) -> dict[str, Any]:
        meta = self._meta(gid)
        if meta["status"] != "lobby":
            raise Problem("game_started")
        seats = self.store.seats(gid)
        empty = [s for s in range(int(meta["seats"])) if s not in seats]
        if empty:
            raise Problem("seats_empty", f"seats {empty} are empty: let players join or make them bots", seats=empty)
        game = self._title(meta["title"])
        state = game.setup(int(meta["seats"]), json.loads(meta["options"]), json.loads(meta["seed"]))
        events = [{"type": "game_started", "visible_to": "all", "phase": 0, "commitment": state["commitment"],
                   "players": [{"seat": s, "name": r["name"], "bot": r["bot"]} for s, r in seats.items()],
                   **started_by_rematch(meta)}]
        self._commit(gid, meta, game, 0, state, None, events)
        return self.game(gid)
