"""Settings, read from the environment (`KONTOR_*`), with defaults for `make run`.

Durations are seconds. Tests and benchmarks build a `Settings` directly.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

#: The players' guides of the titles, beside the packages (`docs/rules/<title>.md`).
RULES_DIR = Path(__file__).resolve().parents[1] / "docs" / "rules"


@dataclass(frozen=True)
class Settings:
    #: The game store: one Redis/Valkey (`redis://host:port/db`, `rediss://...`,
    #: `unix:///path`), or a Redis/Valkey Cluster (`redis-cluster://host:port,host:port`,
    #: `rediss-cluster://...` for TLS: some of its nodes, the client finds the rest).
    redis_url: str = "redis://127.0.0.1:6379/0"
    #: The job queue (RQ, the ready list, the resolution leases): one Redis/Valkey that is
    #: not a cluster member (RQ cannot run on a cluster). Empty: the store's, which must
    #: then be a single node (a cluster store without a queue URL refuses to start).
    queue_url: str = ""
    #: Drain jobs that may resolve ready steps at once over every worker host: about
    #: the worker processes of the installation (`python -m workers --count N` on each
    #: host, summed). 0: the CPU count of the process that pushes a step, at least 2 (one host).
    drainers: int = 0
    #: Where the service is reachable, for links in answers, mails and the CLI.
    public_url: str = "http://127.0.0.1:8000"
    #: Every Redis key starts with this, so several installations can share a server.
    key_prefix: str = "kontor"
    #: A signed order is refused once older than this (its one-time id is kept as long).
    order_max_age: int = 86400
    #: A bearer token may live at most this long (issue: at most 5 minutes).
    bearer_max_ttl: int = 300
    #: How far a client's clock may run ahead of ours.
    clock_skew: int = 60
    #: The shortest and longest step a game may ask for.
    min_step_seconds: int = 10
    max_step_seconds: int = 8 * 7 * 86400
    #: A step still `resolving` this long after its flip is re-enqueued by the sweeper.
    stuck_after: int = 60
    #: How often the sweeper looks for overdue and stuck steps.
    sweep_interval: float = 5.0
    #: Seconds the sweep leaves a commit's effects to the process that committed it: a gap
    #: in a game's notices (events after its notified mark) or an open step's missing
    #: deadline or bot job younger than this is that work under way (a commit's notices
    #: and jobs follow it within milliseconds), not lost. A process that died leaves them
    #: made within about this plus `sweep_interval`.
    effects_grace: float = 2.0
    #: A sweep reads every running game, so with many games it takes longer: the sweeper
    #: then rests at least this many times as long as its last sweep took before the next
    #: (at most 1 / (1 + this) of a core; 0: every `sweep_interval` whatever it costs).
    #: Deadlines are met by their own jobs; the sweep is the net under lost ones.
    sweep_rest: float = 3.0
    #: How long an Idempotency-Key is remembered: a client retries a creating request
    #: within seconds or minutes (the `kontor` client: once, at once), so an hour covers
    #: every retry, and the record (the first answer, kept for the replay) leaves the
    #: store after that instead of after a day.
    idempotency_ttl: int = 3600
    #: RQ job timeout for a resolution (seconds).
    resolve_timeout: int = 60

    # -- no stall: resolution leases with a heartbeat (issue 23) ---------------------------
    #: Seconds a worker's hold on a step it resolves (and a running drain job's lease)
    #: lasts without a heartbeat: a worker that dies loses it this long after its last beat.
    resolve_lease: float = 3.0
    #: Seconds between a worker's heartbeats renewing its holds (well under `resolve_lease`).
    resolve_heartbeat: float = 1.0
    #: How often the sweeper puts back the steps of holds that ran out and starts a drain
    #: job for them (`Jobs.reap`); a lost resolution is resolved again within about
    #: `resolve_lease + lease_check` seconds of its worker's death.
    lease_check: float = 1.0
    #: Seconds a drain job waits on an empty ready list for another step before it ends
    #: (`Jobs.take`): steps that come close together are resolved by the same job, without
    #: a job each. 0: it ends as soon as the list is empty.
    drain_linger: float = 0.05
    #: Who resolves a step whose last order (or other trigger) came to a web process:
    #: `auto` (the default): that web process itself, after its answer, when it runs under
    #: gevent (gunicorn's gevent workers), else a worker; `on`: that web process always (in
    #: a thread when gevent did not patch it); `off`: a worker, through the ready list. The
    #: web holds the step as a worker would (`Jobs.holding`: a web that dies mid-way leaves
    #: it to `Jobs.reap`) and falls back to the ready list when anything fails
    #: (`service/http/inweb.py`).
    resolve_in_web: str = "auto"

    # -- notifications (issue 4) ---------------------------------------------------------
    #: A server secret for the HMACs of reply addresses and unsubscribe links. Empty: one
    #: is made once and kept in the store (`<prefix>:secret`), shared by every process.
    secret: str = ""
    #: Outgoing mail: `smtp://[user:pass@]host[:port]` (plain), `smtp+starttls://...`
    #: (STARTTLS) or `smtps://...` (implicit TLS). Empty: no mail is sent (deliveries are
    #: recorded as `skipped`).
    smtp_url: str = ""
    #: The From of every mail.
    mail_from: str = "Kontor <kontor@localhost>"
    #: The mail domain of inbound orders: `orders@<domain>` and the per-step secret reply
    #: addresses `orders+<token>@<domain>`.
    mail_domain: str = "localhost"
    #: Seconds between SMTP attempts after a temporary failure (comma-separated); when they
    #: are used up the failure is permanent.
    mail_retry: str = "30,120,600,1800,7200"
    #: The Standard Webhooks retry schedule: seconds after the first attempt's failure, then
    #: after each later failure (comma-separated), each with +/-20 % jitter.
    webhook_schedule: str = "0,5,300,1800,7200,18000,36000,50400,72000,86400"
    #: Seconds a webhook receiver may take to answer.
    webhook_timeout: float = 15.0
    #: Webhook targets on loopback addresses are refused unless this is on (tests, make run).
    webhook_allow_loopback: bool = False
    #: Webhook targets on private, link-local or other non-public networks are refused
    #: unless this is on.
    webhook_allow_private: bool = False
    #: The shared secret of the HTTP inbound-mail endpoint (`/inbound/email`); empty
    #: disables that endpoint.
    inbound_secret: str = ""
    #: The largest inbound mail taken, in bytes: larger mail is refused at SMTP DATA (552)
    #: and by the HTTP endpoint (413), and refused in processing if it got in another way.
    inbound_max_bytes: int = 1024 * 1024
    #: The most MIME parts an inbound mail may have (every part counted, nested ones too).
    inbound_max_parts: int = 50
    #: The deepest nesting of multipart or attached-message parts an inbound mail may have.
    inbound_max_depth: int = 8
    #: In-game messages: at most `press_rate` per seat in any `press_window` seconds.
    press_rate: int = 20
    press_window: int = 600
    #: A seat in digest mode gets one mail per this many seconds.
    digest_interval: int = 86400
    #: Where the players' guides are (`<title>.md`, served at `/titles/<title>/rules`);
    #: empty: the project's `docs/rules`.
    rules_dir: str = ""

    # -- lobby expiry and listings (issue 23) ----------------------------------------------
    #: A game that has not started is removed this many seconds after its creation
    #: (joining does not renew it; a started game never expires). 30 days.
    lobby_ttl: int = 30 * 86400
    #: This many seconds before a lobby game expires, the game is told once (a public
    #: `lobby_closing` event, on its page and stream). One day.
    lobby_warning: int = 86400
    #: The most lobby games one sweep expires or warns (per index bucket): the rest wait
    #: for the next sweep, so a sweep stays short after a long outage.
    lobby_sweep_batch: int = 200

    # -- rollback (issue 25) -------------------------------------------------------------
    #: A rollback that needs every human seat's consent (the steps it undoes revealed
    #: something hidden) lapses this many seconds after the host proposed it, unless it
    #: was applied, refused or withdrawn before (it lapses too when a step commits). Two days.
    rollback_consent_seconds: int = 2 * 86400

    # -- live streams (issue 23) ---------------------------------------------------------
    #: Open live streams (`GET /games/{id}/stream`) one web process serves at once; one
    #: more is refused (429 `too_many_streams`). gunicorn's `worker_connections`
    #: (`service/http/gunicorn_conf.py`) is this plus `stream_headroom`.
    stream_max_per_process: int = 2000
    #: Connections a web process keeps for other requests beyond its streams (`/healthz`,
    #: reads, orders): `worker_connections` = `stream_max_per_process` + this.
    stream_headroom: int = 1000
    #: Open streams of one client address at once, over every web process (leases in the
    #: store): a person's tabs and devices, a household or office behind one address.
    stream_max_per_address: int = 32
    #: Open streams of one game at once, over every web process: its seats, host and
    #: onlookers.
    stream_max_per_game: int = 256
    #: Seconds a stream's lease in the store lasts unless renewed (an open stream renews
    #: it every third of this): the streams of a killed process stop counting after it.
    stream_lease: int = 60
    #: A stream without a bearer token (the public's) ends after this many seconds with no
    #: event for its viewer (an `event: closed`, code `idle`; the page reconnects when the
    #: person comes back). Seat and host streams end when their token expires.
    stream_idle_timeout: int = 1800

    # -- pacing of public polls (issue 26) ----------------------------------------------
    #: A public poll of a game's open step (`GET /games/{id}/phases/current`, no bearer
    #: token) from the address that was given the very same answer less than this many
    #: milliseconds ago is held until the game changes or this long after that answer,
    #: then read and answered (`service/http/pace.py`). 0: never held.
    poll_pace_ms: int = 200
    #: Polls one web process holds at once; beyond, a poll is answered at once. A held
    #: poll keeps its connection open, so this stays below `stream_headroom` (a quarter of
    #: it by default; checked at start), leaving room for orders, reads and `/healthz`.
    #: Pacing holds polls only in gevent workers (in a sync worker a hold would block it).
    poll_pace_max_held: int = 250

    # -- durability (issue 23) -----------------------------------------------------------
    #: What an acknowledged player write (an order's 202, a join, a create, an action, a
    #: choice, a message, a seat change, mail intake's 250) promises: `fsync-always` (the
    #: store runs `appendonly yes` + `appendfsync always`: it fsyncs before it answers;
    #: checked at start), `waitaof` (each acknowledged write waits for `WAITAOF 1 0`,
    #: whatever the store's fsync policy) or `none` (no promise: a host crash may lose the
    #: last second or two). Web and mail-in refuse to start when the store cannot keep the
    #: promise. `service/store/durable.py`, docs/operations.md ("Durability").
    durability: str = "fsync-always"
    #: `waitaof`: the longest a write waits for the store's fsync; beyond it the write is
    #: answered 503 `store_unavailable` (not acknowledged).
    durability_timeout: float = 1.5

    # -- durability on replicas (issue 24) -----------------------------------------------
    #: Replicas (of each primary the write may be on) that must have received an
    #: acknowledged write before the answer (`WAIT <n>`), so that a failover to one of
    #: them keeps it; 0: the primary alone (replication is asynchronous: a failover may
    #: lose the last writes). With `none` nothing is waited for. Web and mail-in refuse to
    #: start when a primary has fewer replicas connected; a write not confirmed within
    #: `durability_timeout` is answered 503. `service/store/durable.py`,
    #: docs/operations.md ("Durability on a cluster").
    durability_replicas: int = 0

    # -- request limits (issue 23) -------------------------------------------------------
    #: Request limits on (per client address and per key, counted in the store so that they
    #: hold across web processes and hosts); off: no request is ever refused for its rate.
    limits: bool = True
    #: How many proxies in front of the web processes are trusted to name the client
    #: (`X-Forwarded-For`, read by werkzeug's ProxyFix with `x_for` this); 0: the address
    #: the connection came from (`REMOTE_ADDR`) is the client's.
    trusted_proxies: int = 0
    #: Each limit is a `limits` string, `<count>/<period>` (second, minute, hour, day;
    #: `30/5 minutes`), several separated by `;`; empty: none. `_address` counts per client
    #: address, `_key` per key (a token's kid, a bearer token's kid, the host's or joining
    #: player's public key, a page link's seat). `POST /games`:
    limit_create_address: str = "60/hour"
    limit_create_key: str = "20/hour"
    #: `POST /games/{gid}/seats`.
    limit_join_address: str = "120/hour"
    limit_join_key: str = "60/hour"
    #: Reads: every `GET` of a game (view, step, orders, events, history, picture, seats,
    #: contact, deliveries, messages), the listings (`GET /games`) and the pages.
    limit_read_address: str = "1200/minute"
    limit_read_key: str = "600/minute"
    #: Stream connections (`GET /games/{gid}/stream`), counted when they connect.
    limit_stream_address: str = "60/minute"
    limit_stream_key: str = "30/minute"
    #: Orders: `PUT` an order (signed or by page link), choices and actions.
    limit_order_address: str = "600/minute"
    limit_order_key: str = "300/minute"
    #: In-game messages (`POST /games/{gid}/messages`), besides `press_rate` per seat.
    limit_message_address: str = "120/minute"
    limit_message_key: str = "60/minute"
    #: Inbound mail (SMTP and `POST /inbound/email`): per connecting address and per sender
    #: (the envelope's `MAIL FROM`).
    limit_mail_address: str = "600/hour"
    limit_mail_key: str = "60/hour"

    # -- time bank (issue 25) ------------------------------------------------------------
    #: The shortest and longest a seat's time bank may start at, hold (its cap) or gain
    #: per decision (`bank_add_seconds` may be 0); `service/core/timebank.py`.
    bank_min_seconds: int = 60
    bank_max_seconds: int = 8 * 7 * 86400

    # -- absences (issue 25) ---------------------------------------------------------------
    #: The longest one absence a seat may declare, days.
    absence_max_days: int = 30
    #: How many absences a seat may have planned at once.
    absence_max_count: int = 4
    #: How far ahead an absence may end, days.
    absence_horizon_days: int = 366

    @property
    def store_is_cluster(self) -> bool:
        """Whether the store is a Redis/Valkey Cluster (`redis-cluster://...`)."""
        return is_cluster_url(self.redis_url)

    @property
    def queue(self) -> str:
        """The job queue's URL: `queue_url`, or the store's when that is one server;
        ValueError (said for people) for a cluster store without a queue URL."""
        if self.queue_url:
            if is_cluster_url(self.queue_url):
                raise ValueError("KONTOR_QUEUE_URL names a cluster: the job queue needs one Redis/Valkey server")
            return self.queue_url
        if self.store_is_cluster:
            raise ValueError("the store is a cluster (KONTOR_REDIS_URL): set KONTOR_QUEUE_URL to a Redis/Valkey "
                             "server of its own for the job queue")
        return self.redis_url

    def check(self) -> None:
        """ValueError (one sentence, for people) when a process cannot run with these
        settings: a cluster store without a queue of its own, a queue on a cluster, a
        cluster URL without its nodes' ports, a negative `drainers` or `drain_linger`, a
        `resolve_in_web` other than auto, on or off, a
        `poll_pace_max_held` not below `stream_headroom` (while pacing is on)."""
        self.queue  # noqa: B018  (raises for a cluster store without KONTOR_QUEUE_URL)
        if self.store_is_cluster:
            hosts = self.redis_url.split("://", 1)[1].partition("?")[0].split("/", 1)[0].rpartition("@")[2]
            nodes = [h for h in hosts.split(",") if h]
            if not nodes or any(not h.rpartition(":")[0] or not h.rpartition(":")[2].isdigit() for h in nodes):
                raise ValueError(f"KONTOR_REDIS_URL names a cluster's nodes as host:port,host:port, not {hosts!r}")
        if self.poll_pace_ms > 0 and self.poll_pace_max_held >= self.stream_headroom:
            raise ValueError(f"KONTOR_POLL_PACE_MAX_HELD is {self.poll_pace_max_held}: held polls keep their "
                             f"connections, so it must stay below KONTOR_STREAM_HEADROOM ({self.stream_headroom}), "
                             "a quarter of it, say, to leave room for orders, reads and /healthz")
        if self.drain_linger < 0:
            raise ValueError(f"KONTOR_DRAIN_LINGER is {self.drain_linger}: the seconds a drain job waits for another "
                             "step, 0 or more")
        if self.resolve_in_web not in ("auto", "on", "off"):
            raise ValueError(f"KONTOR_RESOLVE_IN_WEB is {self.resolve_in_web!r}: auto (the web resolves under "
                             "gevent), on or off (a worker resolves every step)")
        if self.drainers < 0:
            raise ValueError(f"KONTOR_DRAINERS is {self.drainers}: 0 (one host's cores) or the number of drain "
                             "jobs the installation's workers run at once")

    @property
    def rules_path(self) -> Path:
        """The folder of the players' guides."""
        return Path(self.rules_dir) if self.rules_dir else RULES_DIR

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, **overrides: Any) -> Settings:
        env = dict(os.environ if env is None else env)
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get(f"KONTOR_{f.name.upper()}")
            if raw is None:
                continue
            kind = type(f.default)
            if kind is bool:
                values[f.name] = raw.strip().lower() in ("1", "true", "yes", "on")
            elif kind in (int, float):
                try:
                    values[f.name] = kind(raw)
                except ValueError:
                    what = "a whole number" if kind is int else "a number"
                    raise ValueError(f"KONTOR_{f.name.upper()} is {raw!r}, not {what}") from None
            else:
                values[f.name] = raw
        return replace(cls(**values), **overrides)

    @staticmethod
    def delays(text: str) -> list[float]:
        """A comma-separated list of seconds (`mail_retry`, `webhook_schedule`)."""
        return [float(x) for x in text.split(",") if x.strip()]


#: The URL schemes of a store on a Redis/Valkey Cluster.
CLUSTER_SCHEMES = ("redis-cluster", "rediss-cluster")


def is_cluster_url(url: str) -> bool:
    """Whether `url` names a Redis/Valkey Cluster (`redis-cluster://h:p,h:p`)."""
    return url.split("://", 1)[0].lower() in CLUSTER_SCHEMES


def settings_for(what: str, env: dict[str, str] | None = None) -> Settings:
    """The settings of a process that is starting (`what`: "the worker", ...), from the
    environment (`Settings.from_env`, `Settings.check`). With settings it cannot run on (a
    cluster store without KONTOR_QUEUE_URL, a number that is not one) it says why in one
    sentence on stderr and exits with status 2, a configuration error (no traceback; a
    supervisor should not start it again)."""
    try:
        settings = Settings.from_env(env)
        settings.check()
    except ValueError as exc:
        print(f"{what} refuses to start: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None
    return settings
