"""Key naming: every Redis key the service uses is named here, and nowhere else.

All keys of one game share the hash tag `{g:<id>}` (`kontor:{g:ab12}:state`, ...), so the
scripts and transactions that touch several of them also run on a Redis Cluster. A
script or transaction touches the keys of one game only, or one global key.

Per game (`Keys.key(game, ...)`):
  meta     HASH   title, seats, options, policy, host key, status, seed (never shown),
                  event_seq (the last event's number: the store's own, never shown),
                  event_ids (the counts behind each viewer's event ids after the last event:
                  "public,seat 0,seat 1,..."; `service.store.numbering`), notified_through
                  (notices are made for events 1..N; see `service.store.effects`),
                  closing_told (when the lobby's day-before notice was given;
                  `service.jobs.expiry`), rematch / rematch_host (a finished game: its
                  rematch's id and host key, claimed once), rematch_told (when its
                  `rematch_started` event was appended), rematch_of (a rematch's game:
                  the finished game it replays; `service.store.rematch`), ...
  seats    HASH   seat -> JSON record (name, public key, kid, bot)
  keys     HASH   kid -> seat number, or "host"
  state    STRING the engine state (JSON)
  phase    HASH   the open step: id, status collecting|resolving|finished, expected seats,
                  kind, sealed, deadline (epoch seconds, server clock), extended, ...
  orders:N HASH   seat -> JSON record of the order stored for step N
  events   STREAM entry id `<n>-1` for event n; field `e` is the event JSON, `at` its time;
                  a commit's events also `c` (the closed step) and `d` (the next deadline);
                  a resolved step's first event also `h`, the step's history record:
                  {phase, orders, defaults, state_sha256, ev} (the digest of the state after
                  the step; `ev`: its engine events are the commit's next `ev` events, less
                  their `phase`; a record whose events cannot be given back so keeps
                  `events`, as the engine made them); with the seed it replays and is checked
                  (`Games.history` gives the records in the published form); `v`, the counts
                  after it ("public,seat 0,..."; a viewer's id of an event it may see is its
                  count, `service.store.numbering`). Only the events after the packed ones
                  (below) are in the stream
  archive  LIST   entry k: events k*32+1..(k+1)*32 (all fields), packed (deflated), taken
                  out of the stream once the chunk is full (`service.store.archive`)
  chunkids LIST   entry k: the counts (`v`) after event (k+1)*32, pushed with chunk k, so a
                  viewer's id is found among packed events without unpacking (event_find.lua)
  history  LIST   a game stored before the records rode on its events: the records
  jti:N    SET    the one-time token ids used in step N: a token binds its step, so they
                  matter while the step is open; the commit drops them (else they expire
                  once no token could be accepted: order_max_age + clock_skew)
  contact  HASH   seat -> JSON contact settings (email, webhook, reminder lead, digest,
                  time zone; the webhook secret, never shown after it was made; `kid`: the
                  key of the seat's holder who set it)
  gone     HASH   "<seat>:<n>" -> JSON former contact: {seat, kid, name, contact (the contact's
                  JSON), through (the last event before the seat changed hands), told}:
                  the contact of a holder the host replaced (seat.lua), told once that the
                  seat was handed on (`told`), never anything after; until then the
                  seat's `contact` is a mark {gone: "<seat>:<n>", kid: "-"} (nobody's)
  delivery HASH   delivery id -> JSON record of one mail or webhook (status, attempts, ...)
  deliveries:S LIST  seat S's delivery ids, newest first (capped)
  reminded HASH   "<phase>:<seat>" -> time a reminder was sent (once per seat and step)
  digest:S LIST   notices kept for seat S's next digest mail
  digested HASH   "<event>:<seat>" -> 1: that event's notices were kept for a digest
                  (or, under "held:<event>:<seat>", held for the seat's next mail)
  held:S   LIST   seat S's notices in `asked` mode that were not mailed, in words only
                  (their sentences), told in the seat's next mail (capped)
  formers  HASH   kid -> JSON {seat, public_key}: a key that held a seat before the host
                  gave it to a bot or another key; it still reads the game as the public
  idem     SET    the Idempotency-Key records (global `idem:C:K` keys) whose answer is about
                  this game: deleted with it when the lobby expires (`Games.forget`, after purge.lua)
  press:W  ZSET   times of writer W's recent in-game messages (seat or "host"; the rate
                  limit, `service.core.press`)
  live     CHANNEL (sharded pub/sub, not a key: SPUBLISH on the game's shard) the scripts
                  that change the step or append events publish on it: `resolving
                  <step>` (the step's last order is in, or its deadline passed), `commit`
                  (a step or the start committed), `events` (messages); `seat <n>` (the
                  host changed seat n: a key, a bot); `service.core.live` wakes the
                  game's open streams
  absences HASH   seat -> JSON list of the seat's absences {from, until} (whole seconds;
                  one that ended stays until told: `service.store.absences`, issue 25)
  streams  ZSET   the game's open live streams: stream id -> when its lease ends (store
                  clock; renewed while open, dropped once ended: the per-game cap)
Global (a per-game registry is split in `INDEX_BUCKETS` buckets, each a hash tag of its
own, so a cluster spreads them and no key takes every game's traffic; a game's bucket of
each is `bucket_of(game)` = crc32(game) mod `INDEX_BUCKETS`; the sweeper walks them all):
  {active-B}     SET    running games (read by every sweep: `Games.active` reads every bucket)
  {registry-B}   ZSET   every game, by creation time (the sweeper's registry: it walks it to
                        reconcile the running set and to repair the indexes; no listing reads
                        it). Written BEFORE the game's script (an intent: `Games.create`), so
                        no game exists that the sweep cannot find; an entry whose game never
                        came to be (or whose lobby expiry was cut short) is finished by the
                        repair after `games.REGISTRY_GRACE` (`Games.repair_indexes`)
  {games-S-B}    ZSET   the listing indexes (`index_key`): game -> creation time, for status S
                        (`lobby`, `running`, `finished`) and for `all` (every game: the
                        listing by recency), in bucket B. Written in a call AFTER the game's
                        script (create, commit, purge: another slot than the game's); a
                        listing reads the top of each bucket and merges (`Games.listing`);
                        the sweeper repairs them (`Games.repair_indexes`)
                 (Before the buckets, `active` and `games` were one key each: the sweep moves
                 their games into the buckets, a batch per sweep: `Games.migrate_registries`.)
  indexcheck     STRING where the index repair's walk of the listing indexes is (bucket, offset)
  registrycheck  STRING where the index repair's walk of the registry is (an offset per bucket)
  {digests-B}    ZSET   "<game>:<seat>" -> when that seat's digest mail is due, in bucket
                        B = crc32(game) mod `INDEX_BUCKETS` (`digests_key`); kept after the
                        game's notices (`push_digest`), walked bucket by bucket by every
                        sweep (`due_digests`; and the one unbucketed `digests` of a store
                        written before the buckets, until it is empty)
  rematches      ZSET   finished game -> when its rematch was asked: an intent, written before
                        the rematch's claim and dropped once its game is made and the
                        finished game told (`service.store.rematch`); the sweep finishes
                        what a crash left
  {absences-B}   ZSET   "<game>:<seat>" -> the end of the seat's earliest listed absence, in
                        bucket B = crc32(game) mod `INDEX_BUCKETS`: the sweep tells the ended
                        ones (`service.store.absences`, issue 25)
  reconcile      STRING where the walk reconciling `active` with the registry is, per bucket
  secret         STRING the server secret when none is configured
  unsubscribed   SET    addresses that asked for no more mail (lower case)
  streams:A      ZSET   the open live streams of client address A: stream id -> when its
                        lease ends (as a game's `streams`: the per-address cap)
  idem:C:K       STRING an Idempotency-Key record of client C (deflated once finished)
  {inbound-B}    ZSET   inbound mail ids, by receipt time, in bucket B = crc32(mail id) mod
                        `INDEX_BUCKETS` (`inbound_index_key`); written after the mail itself
  inbound:M      HASH   inbound mail M: the raw mail, its envelope and its outcome
  limits:{a:W}:..., limits:{k:W}:...  STRING  the request limits' counters of client address
                        or key W (`service.store.ratelimit`): one hash tag per W
  durable, durable:{N}  STRING  the marker `settle` writes (on a cluster: one per primary,
                        N chosen so the key is in one of its slots; `service.store.durable`)
The job queue's (named by `service.jobs.queue.Jobs`, a layer that may not import this one;
one hash tag, so its scripts also run on a Redis Cluster):
  {ready}:steps     LIST  steps waiting to be resolved, `<game> <step>` (the ready list)
  {ready}:drainers  ZSET  drain job id -> when its lease ends (store clock)
"""

from __future__ import annotations

import zlib

#: Buckets of each listing index (`Keys.index_key`): a listing reads the top of every
#: bucket, so more buckets cost a little per listing and spread a cluster's load wider.
#: Changing it needs a re-index (the sweeper's repair does it, a batch per sweep).
INDEX_BUCKETS = 16

#: The listing indexes: one per status a game can have, and `all` (every game).
INDEXES = ("lobby", "running", "finished", "all")


class Keys:
    """Mixin of `Store`: the names of its keys, under `prefix`."""

    prefix: str

    def key(self, game: str, *parts: str | int) -> str:
        """A key of one game: `<prefix>:{g:<game>}:<part>:<part>...`."""
        return ":".join([f"{self.prefix}:{{g:{game}}}", *map(str, parts)])

    def live_channel(self, game: str) -> str:
        """The game's `live` channel (sharded pub/sub: in the game's slot, so its scripts
        may SPUBLISH on it and a subscriber finds it on the game's node)."""
        return self.key(game, "live")

    def live_game(self, channel: str) -> str | None:
        """The game of a `live` channel's name (None for another channel)."""
        head, tail = f"{self.prefix}:{{g:", "}:live"
        if channel.startswith(head) and channel.endswith(tail):
            return channel[len(head):-len(tail)]
        return None

    @staticmethod
    def bucket_of(game: str) -> int:
        """The bucket of every bucketed per-game key that holds `game` (the listing indexes,
        the registry, the running set): crc32(game) mod `INDEX_BUCKETS`."""
        return zlib.crc32(game.encode()) % INDEX_BUCKETS

    def active_key(self, game: str) -> str:
        """The bucket of the running set that holds `game`."""
        return self.active_bucket(self.bucket_of(game))

    def active_bucket(self, bucket: int) -> str:
        """Bucket `bucket` of the running set: `<prefix>:{active-<bucket>}`."""
        return f"{self.prefix}:{{active-{bucket}}}"

    def games_key(self, game: str) -> str:
        """The bucket of the registry (every game, by creation time) that holds `game`."""
        return self.registry_bucket(self.bucket_of(game))

    def registry_bucket(self, bucket: int) -> str:
        """Bucket `bucket` of the registry: `<prefix>:{registry-<bucket>}`."""
        return f"{self.prefix}:{{registry-{bucket}}}"

    def index_key(self, index: str, game: str) -> str:
        """The bucket of listing index `index` (a status or `all`) that holds `game`."""
        return self.bucket_key(index, self.bucket_of(game))

    def bucket_key(self, index: str, bucket: int) -> str:
        """Bucket `bucket` of listing index `index`: `<prefix>:{games-<index>-<bucket>}`."""
        return f"{self.prefix}:{{games-{index}-{bucket}}}"

    def index_keys(self, game: str) -> list[str]:
        """The game's bucket of every listing index, in the order of `INDEXES`."""
        return [self.index_key(i, game) for i in INDEXES]

    @property
    def index_check_key(self) -> str:
        return f"{self.prefix}:indexcheck"

    @property
    def registry_check_key(self) -> str:
        return f"{self.prefix}:registrycheck"

    def game_keys(self, game: str, seats: int) -> list[str]:
        """Every key a game that never started can have (a game of `seats` seats): what
        the lobby expiry deletes (purge.lua). A started game has more (its steps' orders
        and one-time ids), but a started game never expires."""
        fixed = ["meta", "seats", "keys", "state", "phase", "events", "archive", "chunkids", "history", "contact",
                 "delivery", "reminded", "digested", "formers", "notifying", "actjti", "idem", "press:host", "gone",
                 "streams", "absences"]
        per_seat = [f"{part}:{s}" for s in range(seats) for part in ("deliveries", "digest", "held", "press")]
        return [self.key(game, p) for p in fixed + per_seat]

    def digests_key(self, game: str) -> str:
        """The bucket of the digest schedule that holds the game's seats:
        `<prefix>:{digests-<b>}`, b = `bucket_of(game)`."""
        return self.digests_bucket(self.bucket_of(game))

    def digests_bucket(self, bucket: int) -> str:
        """Bucket `bucket` of the digest schedule (the sweep walks every one)."""
        return f"{self.prefix}:{{digests-{bucket}}}"

    @property
    def digests_before_key(self) -> str:
        """The digest schedule of a store written before the buckets (issue 24): still
        walked (`due_digests`), so what it holds is sent; nothing is added to it."""
        return f"{self.prefix}:digests"

    @property
    def reconcile_key(self) -> str:
        return f"{self.prefix}:reconcile"

    @property
    def rematches_key(self) -> str:
        return f"{self.prefix}:rematches"

    @property
    def secret_key(self) -> str:
        return f"{self.prefix}:secret"

    @property
    def unsubscribed_key(self) -> str:
        return f"{self.prefix}:unsubscribed"

    def idem_key(self, client: str, key: str) -> str:
        return f"{self.prefix}:idem:{client}:{key}"

    def inbound_index_key(self, mail_id: str) -> str:
        """The bucket of the inbound index that holds mail `mail_id`: `<prefix>:{inbound-<b>}`,
        b = `bucket_of(mail_id)` (crc32 of the id mod `INDEX_BUCKETS`)."""
        return self.inbound_bucket(self.bucket_of(mail_id))

    def inbound_bucket(self, bucket: int) -> str:
        """Bucket `bucket` of the inbound index (`Inbound.inbound_ids` reads every one)."""
        return f"{self.prefix}:{{inbound-{bucket}}}"

    def inbound_key(self, mail_id: str) -> str:
        return f"{self.prefix}:inbound:{mail_id}"

    def press_key(self, game: str, writer: int | str) -> str:
        return self.key(game, "press", writer)
