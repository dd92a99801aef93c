"""The Redis store: every key of a game, the Lua scripts, and nothing about the rules.

Only this package (and the job queue, through RQ) speaks to Redis; the rest of the
service calls `Store` methods. `Store` is composed of one mixin per aggregate, each in
its own module:

  keys.py         the name of every key (and the layout of what each holds)
  base.py         `connect` (the service's Redis clients), the scripts, the clock, the secret
  games.py        games, seats, steps, orders, commits, events, history, running games,
                  and the fast order path's intake with its per-process caches
  deliveries.py   contacts, delivery records, unsubscribed addresses, reminder marks, digests
  idempotency.py  Idempotency-Key records
  inbound.py      inbound mails
  press.py        the in-game messages' rate limit
  rematch.py      a finished game's rematch: its claim, its seated game, its intents
  effects.py      what a commit's side effects need (see `service.jobs.sweep`)
  absences.py     the seats' absences and the schedule of their ends (issue 25)
  streams.py      the leases of open live streams (the per-address and per-game caps)
  archive.py      a game's closed events packed in compressed chunks (not a mixin: both
                  `games.py` and `effects.py` read and compact through it)
  json.py         the one compact-JSON helper (`dumps`) and its strict reader (`loads`)
  lua/            every Lua script
"""

from __future__ import annotations

from service.store.absences import Absences
from service.store.base import DRIVER_INFO, LUA, STORE_DOWN, TIMEOUT, Client, connect, lean_scripts
from service.store.deliveries import DELIVERIES_KEPT, Deliveries
from service.store.effects import Effects
from service.store.games import KEY_CACHE_SIZE, PUBLIC_STEP_FIELDS, STATE_CACHE_GAMES, Games, Intake, OrderKey, Outcome
from service.store.idempotency import Idempotency
from service.store.inbound import Inbound
from service.store.json import dumps, loads
from service.store.press import Press
from service.store.rematch import Rematches
from service.store.streams import Streams

__all__ = ["DELIVERIES_KEPT", "DRIVER_INFO", "KEY_CACHE_SIZE", "LUA", "PUBLIC_STEP_FIELDS", "STATE_CACHE_GAMES",
           "STORE_DOWN", "TIMEOUT", "Client", "Intake", "OrderKey", "Outcome", "Store", "connect", "dumps",
           "lean_scripts", "loads"]


class Store(Games, Absences, Deliveries, Idempotency, Inbound, Press, Effects, Streams, Rematches):
    """The store of one installation (keys under `prefix`), over a decoded Redis client
    (`connect`). Its methods are defined in the aggregate modules, each in exactly one."""
