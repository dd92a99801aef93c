"""What every use case of the service shares: the settings, the store, the job queue,
and the lookups that turn a missing game, seat or title into the right problem."""

from __future__ import annotations

import logging
from typing import Any

from engine.core import registry
from engine.core.errors import EngineError
from engine.core.game import Game
from service import words
from service.config import Settings
from service.core.errors import Problem
from service.core.records import receipt_of_text
from service.jobs.queue import Jobs
from service.protocol.crypto import PublicKey
from service.store import Client, Store, connect, dumps, lean_scripts

log = logging.getLogger("kontor")

#: Who is asking: a seat number, the game's host, or anyone.
Caller = int | str  # int seat | "host" | "public"


class Base:
    """The parts of `Kontor` every use case (lobby, orders, reading) builds on."""

    def __init__(self, settings: Settings, client: Client | None = None,
                 rq_client: Client | None = None) -> None:
        self.settings = settings
        if client is None or rq_client is None:  # the store makes the clients (and their timeouts)
            made, raw = connect(settings)
            client, rq_client = client or made, rq_client or raw
        self.r = client  # kept for tests to inspect; the service speaks to Redis through `self.store`
        self.rq = rq_client
        self.store = Store(client, settings.key_prefix)
        self.jobs = Jobs(rq_client, settings.resolve_timeout, settings.key_prefix, settings.resolve_lease,
                         settings.resolve_heartbeat, settings.drainers, settings.drain_linger,
                         lean=lean_scripts(rq_client))

    def names(self, gid: str, meta: dict[str, str]) -> list[str]:
        """The players' display names by seat, as the store has them ("Seat N" for none)."""
        seats = self.store.seats(gid)
        return words.names_of(int(meta["seats"]), {s: (r or {}).get("name") for s, r in seats.items()})

    def now(self) -> float:
        """The store's clock (one clock for every process)."""
        return self.store.now()

    def _snapshot(self, gid: str) -> tuple[dict[str, str], dict[str, str], Any, float]:
        meta, phase, state, now = self.store.snapshot_at(gid)
        if not meta:
            raise Problem("game_not_found", f"no game {gid!r}")
        return meta, phase, state, now

    def _seat_in_play(self, gid: str, seat: int) -> tuple[dict[str, str], dict[str, str], Any, Game]:
        """The game's meta, open step, state and title, for something `seat` does in a
        running game: `game_not_started` before the start, `game_finished` after the end."""
        meta, ph, state, _ = self._snapshot(gid)
        self.check_seat(meta, seat)
        if meta["status"] == "lobby" or state is None or not ph:
            raise Problem("game_not_started")
        if meta["status"] == "finished" or ph.get("status") == "finished":
            raise Problem("game_finished")
        return meta, ph, state, self._title(meta["title"])

    @staticmethod
    def check_seat(meta: dict[str, str], seat: int) -> None:
        """`no_such_seat` unless the game has seat `seat`."""
        if not 0 <= seat < int(meta["seats"]):
            raise Problem("no_such_seat", f"seats are 0 to {int(meta['seats']) - 1}")

    def _meta(self, gid: str) -> dict[str, str]:
        meta = self.store.meta(gid)
        if not meta:
            raise Problem("game_not_found", f"no game {gid!r}")
        return meta

    @staticmethod
    def _title(title: str) -> Game:
        try:
            return registry.get(title)
        except EngineError as exc:
            raise Problem("bad_options", exc.message, field="title") from None

    @staticmethod
    def _key(text: str) -> PublicKey:
        try:
            return PublicKey.from_text(text)
        except ValueError as exc:
            raise Problem("bad_public_key", str(exc)) from None


def receipt_of(record: dict[str, Any]) -> str:
    """A short digest of a stored order record, quoted back to the seat as its receipt."""
    return receipt_of_text(dumps(record))


def extra_detail(status: str, value: str) -> str:
    return {
        "key_in_use": f"that key already holds seat {value} in this game",
        "seat_taken": f"seat {value} is taken",
        "game_full": "every seat is taken",
        "no_such_seat": "no such seat",
        "started": "the game has started",
        "game_expired": "nobody started this game within its time in the lobby, so it closed; "
                        "ask the host for a new one",
    }.get(status, status)
