"""`kontor`: play and host Kontor games from a shell, without signing tokens by hand.

    kontor keygen --name alice
    kontor game create --title haendler --seats 3 --as alice --sealed 1d --sequential 12h
    kontor seat join GAME --as alice --name Alice
    kontor seat join GAME --as bob --name Bob
    kontor game start GAME --as alice
    kontor games                         # my games, those waiting for one of my identities first
    kontor status GAME --as bob          # where the game stands, in words; --json for scripts
    kontor order GAME --as bob -k bid=300
    kontor order GAME --default          # as whichever of my identities the step waits for
    kontor watch GAME --as bob           # what happens, sentence by sentence
    kontor verify GAME                   # once it is over: replay it from its published seed
    kontor seat contact GAME --as bob --email bob@example.org --remind 3h
    kontor message GAME --as bob --to 1 "Salt for wine?"
    kontor messages GAME --as bob
    kontor order GAME --as bob --default --print-token   # for a mail's #orders block

The server is `--url`, else `$KONTOR_URL`, else the server a game was created or joined
on (remembered in the key file), else http://127.0.0.1:8000. Identities live in
`$KONTOR_HOME/keys.json` (see `service.client.keystore`). Server errors print
`error <code>: <detail>` on stderr and exit with status 1.

Without `--as`, `status` and `order` act as the identity of the key file that holds a seat
in the game; when several do (two players trying Kontor on one computer), as the one the
open step waits for. An order for an identity the step does not ask sends nothing and
says whose turn it is. Output for people goes through `service.client.output` (rich
tables and colour on a terminal, plain text otherwise or with NO_COLOR).

`game create` gives each game a fresh host key, kept in the key file under the creating
identity: host commands (`game start`, `seat bot`, `seat replace`) sign with it, player
commands (`seat join`, `status`, `order`, `watch`) with the identity's own key. The server
refuses a game's host key as a seat key, so this is what lets a host also play.

Kontor counts a game in *steps* (each asks one or more seats for an order); "phase" is
left to the titles (Die Händler's six phases), whose headline says where the game stands
("step 14 — round 2, phase 3: moving carts"). Texts come in the title's words
(`service.words`); every reading command has `--json` for scripts.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import IO, Any, TypeVar

import click

from engine.core.choices import fold
from service import words
from service.client.http import Api, ApiError, Unreachable, action_token, order_token
from service.client.keystore import Identity, Keystore, KeystoreError
from service.client.output import Out
from service.protocol.crypto import SigningKey
from service.protocol.pairs import parse_pairs as pairs_of

DEFAULT_URL = "http://127.0.0.1:8000"
#: Seconds between looks at the open step while `kontor order --wait` waits for it.
WAIT_POLL = 1.0
F = TypeVar("F", bound=Callable[..., Any])

#: A second line for errors whose fix is not obvious from the server's detail.
HINTS = {
    "key_in_use": "every seat needs a key of its own: make another identity with `kontor keygen --name NAME` "
                  "(a game made by an older kontor has the host's own key as host key, which cannot take a seat)",
    "unknown_key": "this identity holds no seat in this game and is not its host: check --as",
    "not_host": "only the identity that created the game (on this computer) holds its host key: check --as",
    "token_expired": "check this computer's clock",
    "token_from_future": "check this computer's clock",
    "stale_phase": "see `kontor status GAME` for the open step",
    "step_locked": "the step is being resolved; see `kontor status GAME` in a moment",
    "game_not_started": "the host starts it with `kontor game start GAME`",
    "game_paused": "the host resumes it with `kontor game resume GAME`",
    "game_not_paused": "the host pauses it with `kontor game pause GAME`",
}


class Fail(Exception):
    """A refusal found by the client itself, printed like a server problem (with a hint
    of its own when it has one)."""

    def __init__(self, code: str, detail: str, hint: str | None = None) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.hint = hint


# -- parsing helpers ------------------------------------------------------------------
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION_RE = re.compile(r"(?:\d+[smhdw])+")


def parse_duration(text: str) -> int:
    """Seconds from `90`, `30s`, `10m`, `12h`, `2d`, `1w` or a sum like `1d12h`."""
    t = text.strip().lower().replace(" ", "")
    if t.isdigit():
        return int(t)
    if not _DURATION_RE.fullmatch(t):
        raise ValueError(f"{text!r} is not a duration: use seconds, or 30s, 10m, 12h, 2d, 1w")
    return sum(int(n) * _UNITS[u] for n, u in re.findall(r"(\d+)([smhdw])", t))


class Duration(click.ParamType[int]):
    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return parse_duration(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def parse_pairs(pairs: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """`("bid=300", "good=wein")` -> `{"bid": 300, "good": "wein"}` (`service.protocol.pairs`)."""
    try:
        return pairs_of(pairs)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def deadline_text(iso: str | None, now: datetime | None = None) -> str:
    """The deadline in local time and in UTC, and how far away it is."""
    if not iso:
        return "none"
    try:
        at = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    now = now or datetime.now(UTC)
    left = (at - now).total_seconds()
    rel = f"in {words.span(left)}" if left >= 0 else f"passed {words.span(left)} ago"
    utc = f"{at.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC"
    local = at.astimezone()
    if local.utcoffset() == timedelta(0):
        return f"{utc}, {rel}"
    return f"{local:%Y-%m-%d %H:%M:%S %Z} ({utc}), {rel}"


def seats_text(seats: list[int]) -> str:
    if not seats:
        return "none"
    return ("seat " if len(seats) == 1 else "seats ") + ", ".join(str(s) for s in seats)


def clock(at: str | None, fmt: str = "%H:%M:%S") -> str:
    """An API time stamp in local time; dashes when there is none."""
    if not at:
        return "--:--:--" if fmt == "%H:%M:%S" else "--"
    try:
        return datetime.fromisoformat(at).astimezone().strftime(fmt)
    except ValueError:
        return str(at)


def event_line(ev: dict[str, Any], sentence: str) -> str:
    """One event as one line: its time, its step and its sentence (`(private)` when not
    everyone sees it)."""
    private = "" if ev.get("visible_to", "all") == "all" else " (private)"
    return f"{clock(ev.get('at'))} step {ev.get('phase')}: {sentence}{private}"


def time_left(iso: str | None, now: datetime | None = None, paused: str | None = None) -> str:
    """`23h 59m (until 2026-01-02 10:00:00 UTC)`; `passed 5m ago` after it. While the host
    has paused the game (`paused`: since when), the time left as it stood then: the clock
    is stopped, and the deadline moves on by the time paused when the game resumes."""
    if not iso:
        return "no deadline"
    try:
        at = datetime.fromisoformat(iso)
        stopped = datetime.fromisoformat(paused) if paused else None
    except ValueError:
        return iso
    if stopped is not None:
        return f"{words.span(max(0.0, (at - stopped).total_seconds()))}, the clock stopped (the game is paused)"
    left = (at - (now or datetime.now(UTC))).total_seconds()
    local = at.astimezone()
    when = f"{at.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC" if local.utcoffset() == timedelta(0) \
        else f"{local:%Y-%m-%d %H:%M:%S %Z}"
    if left >= 0:
        return f"{words.span(left)} (until {when})"
    return f"none: the deadline passed {words.span(left)} ago ({when})"


def title_of(title: str | None) -> Any:
    """The title's `Game` from the local engine (pure), for its words; None when this
    kontor does not know the title (a plugin installed only on the server)."""
    if not title:
        return None
    try:
        from engine.core import registry

        return registry.get(title)
    except Exception:  # an unknown or broken title: the texts fall back to plain words
        return None


def names_in(g: dict[str, Any]) -> list[str]:
    """The players' names by seat from a game resource ("Seat N" for a free seat)."""
    players = g.get("players") or []
    return words.names_of(int(g.get("seats") or len(players)), {p["seat"]: p.get("name") for p in players})


# -- session: server and identities ---------------------------------------------------
class Session:
    """What every command needs: the key file, and which server to talk to."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url
        self._store: Keystore | None = None
        self._games: dict[str, dict[str, Any]] = {}

    @property
    def store(self) -> Keystore:
        if self._store is None:
            self._store = Keystore.load()
            if self._store.loose_permissions():
                click.echo(f"warning: {self._store.path} is readable by others; run chmod 600 on it", err=True)
        return self._store

    def api(self, game: str | None = None) -> Api:
        url = self.url or (self.store.url_of(game) if game else None) or DEFAULT_URL
        return Api(url)

    def game(self, gid: str, seat: int | None = None) -> dict[str, Any]:
        """The game `gid` as its server has it, read first by every command that takes a
        game, so that the real problem is named before any question of identity: no server
        there (`Unreachable`), no such game on it, no such seat in it."""
        if gid not in self._games:
            api = self.api(gid)
            try:
                self._games[gid] = api.game(gid)
            except ApiError as exc:
                if exc.status != 404:
                    raise
                raise Fail("game_not_found", f"no game {gid} on {api.url}",
                           "check the game's id (`kontor games` lists yours) and the server "
                           "(--url or KONTOR_URL)") from None
        g = self._games[gid]
        if seat is not None and not 0 <= seat < int(g.get("seats") or 0):
            names = names_in(g)
            held = {p["seat"] for p in g.get("players") or [] if p.get("taken") or p.get("bot")}
            seats = ", ".join(f"{n} ({words.seat_name(names, n) if n in held else 'free'})"
                              for n in range(int(g.get("seats") or 0)))
            raise Fail("seat_not_found", f"game {gid} has no seat {seat}: its seats are {seats}")
        return g

    def identity(self, name: str | None, game: str | None = None, role: str | None = None,
                 required: bool = True) -> Identity | None:
        """`--as NAME`; without it, the one identity that remembers `game` in `role`, or
        (when one is required) the only identity there is."""
        store = self.store
        if name:
            return store.get(name)
        if game:
            remembered = store.players_of(game, role)
            if len(remembered) == 1:
                return remembered[0]
        if not required:
            return None
        if len(store.identities) == 1:
            return next(iter(store.identities.values()))
        if not store.identities:
            raise KeystoreError("no identities yet: make one with `kontor keygen --name NAME`")
        known = ", ".join(sorted(store.identities))
        if game and not store.players_of(game, role):
            what = {"host": "hosts", "seat": "holds a seat in"}.get(role or "", "remembers")
            raise KeystoreError(f"none of your identities ({known}) {what} game {game} in this key file: "
                                "pass --as NAME to act as one of them")
        raise KeystoreError(f"which identity? pass --as NAME (known: {known})")

    def host_key(self, name: str | None, game: str) -> SigningKey:
        """The key host actions on `game` are signed with, for `--as NAME` (default: the
        identity that remembers hosting it): the game's own host key when the key file has
        it, else the identity's key (the server says `not_host` if that is not the host's)."""
        ident = self.identity(name, game, "host")
        assert ident is not None
        return ident.host_key(game) or ident.key


def reader_key(ident: Identity | None, game: str) -> SigningKey | None:
    """The key a read of `game` is signed with: the identity's own (its seat's), unless the
    identity only hosts the game, whose own key the server would not know."""
    if ident is None:
        return None
    host_key = ident.host_key(game)
    if host_key is not None and ident.seat_in(game) is None:
        return host_key
    return ident.key


def waiting_seats(phase: dict[str, Any] | None) -> list[int]:
    """The seats the open step still waits for (asked, not answered); none once over."""
    if not phase or phase.get("status") != "collecting":
        return []
    answered = set(phase.get("answered") or [])
    return [int(s) for s in phase.get("requested") or [] if s not in answered]


def local_seats(store: Keystore, game: str) -> dict[int, Identity]:
    """The seats of `game` held by identities of this key file (as remembered), by seat."""
    out: dict[int, Identity] = {}
    for ident in sorted(store.players_of(game, "seat"), key=lambda i: i.name):
        seat = ident.seat_in(game)
        if seat is not None:
            out.setdefault(seat, ident)
    return out


def turn_words(gid: str, phase: dict[str, Any] | None, names: list[str], store: Keystore,
               me: Identity | None = None) -> tuple[str, str | None]:
    """Whose turn it is, for a refusal: the sentence, and a hint naming the identity of
    this key file the step waits for (so the user knows which --as answers)."""
    if phase is None:
        return f"game {gid} has not started", "the host starts it with `kontor game start GAME`"
    if phase.get("status") == "finished":
        return f"game {gid} is over", f"see the result with `kontor status {gid}`"
    if phase.get("status") != "collecting":
        return (f"step {phase.get('id')} is being resolved; the next one opens in a moment",
                f"ask again shortly: `kontor status {gid}`")
    waiting = waiting_seats(phase)
    who = words.listing([words.seat_name(names, s) for s in waiting])
    whose = f"it is not {me.name}'s turn: " if me is not None else ""
    text = f"{whose}step {phase.get('id')} waits for {who}"
    mine = local_seats(store, gid)
    others = [mine[s].name for s in waiting if s in mine and (me is None or mine[s].name != me.name)]
    if others:
        return text, (f"that is your identity {words.listing(others, 'or')}: "
                      f"`kontor order {gid} --as {others[0]} --default` (or -k/--json), or `kontor games`")
    return text, f"`kontor games` lists your games and which of them wait for you; `kontor status {gid}` shows more"


def pick_reader(sess: Session, who: str | None, gid: str, api: Api, phase: dict[str, Any] | None) -> Identity | None:
    """Whose view a read of `gid` shows: `--as NAME`; else the one identity of this key file
    holding a seat (or only hosting it); of several, the first the open step waits for,
    else the public (None)."""
    if who:
        return sess.store.get(who)
    mine = local_seats(sess.store, gid)
    if len(mine) <= 1:
        return sess.identity(None, gid, "seat", required=False)
    waited = [mine[s] for s in waiting_seats(phase) if s in mine]
    return waited[0] if waited else None


def _set_url(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value:
        ctx.ensure_object(Session).url = value


def url_option(f: F) -> F:
    """`--url` on the group and on every command, so it may come before or after the command."""
    return click.option("--url", envvar="KONTOR_URL", metavar="URL", expose_value=False, is_eager=True,
                        callback=_set_url, help=f"The Kontor server [env KONTOR_URL; default {DEFAULT_URL}].")(f)


def as_option(required_help: str = "The identity to act as") -> Callable[[F], F]:
    return click.option("--as", "who", envvar="KONTOR_AS", metavar="NAME",
                        help=f"{required_help} (a name from `kontor keys`) [env KONTOR_AS].")


def print_error(code: str, detail: str, hint: str | None = None) -> None:
    click.echo(f"error {code}: {detail}", err=True)
    hint = hint or HINTS.get(code)
    if hint:
        click.echo(f"hint: {hint}", err=True)


class KontorGroup(click.Group):
    """Turns the client's exceptions into one line on stderr and exit status 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ApiError as exc:
            print_error(exc.code, exc.detail)
        except Fail as exc:
            print_error(exc.code, exc.detail, exc.hint)
        except Unreachable as exc:
            click.echo(f"error: cannot reach {exc.url}: is `make run` running? ({exc.reason}; "
                       "or point to another server with --url or KONTOR_URL)", err=True)
        except KeystoreError as exc:
            click.echo(f"error: {exc}", err=True)
        ctx.exit(1)


pass_session = click.make_pass_decorator(Session, ensure=True)


@click.group(cls=KontorGroup, context_settings={"help_option_names": ["-h", "--help"]})
@url_option
def cli() -> None:
    """Play and host Kontor games: keys, games, seats, orders, events."""


# -- identities -------------------------------------------------------------------------
@cli.command()
@click.option("--name", required=True, help="A local name for the identity, e.g. alice.")
@click.option("--force", is_flag=True, help="Replace an existing identity of that name (its old key is lost).")
@click.option("--json", "as_json", is_flag=True, help="Print the new identity as JSON (never its private key).")
@pass_session
def keygen(sess: Session, name: str, force: bool, as_json: bool) -> None:
    """Create an Ed25519 identity and store it in the key file."""
    key = SigningKey.generate()
    with sess.store.edit() as store:
        store.add(name, key, force)
    if as_json:
        click.echo(pretty({"name": name, "public": key.public, "kid": key.kid, "path": str(store.path)}))
        return
    click.echo(f"identity {name}")
    click.echo(f"  public key  {key.public}")
    click.echo(f"  kid         {key.kid}")
    click.echo(f"  stored in   {store.path}")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_session
def keys(sess: Session, as_json: bool) -> None:
    """List identities (never their private keys)."""
    idents = sorted(sess.store.identities.values(), key=lambda i: i.name)
    if as_json:
        click.echo(pretty([{"name": i.name, "public": i.public, "kid": i.kid, "created_at": i.created_at,
                            "hosts": sorted(g for g in i.games if i.hosts(g)), "games": i.public_games()}
                           for i in idents]))
        return
    if not idents:
        click.echo("no identities yet: make one with `kontor keygen --name NAME`")
        return
    out = Out()
    for i in idents:  # a block each, not a table: keys are copied whole, at any width
        hosted = sorted(g for g in i.games if i.hosts(g))
        seated = [f"{g} (seat {i.seat_in(g)})" for g in sorted(i.games) if i.seat_in(g) is not None]
        out.line(i.name, "title")
        out.line(f"  kid     {i.kid}")
        out.line(f"  public  {i.public}")
        if hosted:
            out.line(f"  hosts: {', '.join(hosted)}")
        if seated:
            out.line(f"  plays: {', '.join(seated)}")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the server's catalog as JSON.")
@url_option
@pass_session
def catalog(sess: Session, as_json: bool) -> None:
    """The titles the server offers: seats, options, bots."""
    titles = sess.api().catalog()
    if as_json:
        click.echo(pretty(titles))
        return
    out = Out()
    for t in titles:
        seats = t.get("seats", {})
        out.line(f"{t['id']}  {t.get('name', '')}  seats {seats.get('min')}-{seats.get('max')}  "
                 f"bots: {', '.join(t.get('bots', [])) or 'none'}", "title")
        for name, opt in sorted(t.get("options", {}).items()):
            out.line(f"  --option {name}=...  default {compact(opt.get('default'))}  {opt.get('help', '')}")


# -- games ------------------------------------------------------------------------------
@cli.group(cls=click.Group)
def game() -> None:
    """Create and start games (host)."""


@game.command("create")
@click.option("--title", required=True, help="A title id (see `kontor catalog`), e.g. haendler.")
@click.option("--seats", type=int, required=True)
@as_option("The host identity")
@click.option("--option", "-o", "options", multiple=True, metavar="KEY=VALUE",
              help="A title option; VALUE is JSON when it parses, else text. Repeatable.")
@click.option("--sealed", type=Duration(), help="Length of a sealed step: seconds, or 30s/10m/12h/2d/1w.")
@click.option("--sequential", type=Duration(), help="Length of a step that asks one seat.")
@click.option("--on-expiry", type=click.Choice(["defaults", "extend"]),
              help="At the deadline: submit defaults, or grant one extension first.")
@click.option("--extension", type=Duration(), help="Length of the one extension.")
@click.option("--clock", type=click.Choice(["fixed", "bank"]),
              help="fixed (the default): every step runs its length; bank: a time bank per seat (a chess clock).")
@click.option("--bank-start", type=Duration(), help="Time bank: each seat's bank at the start (default 3d).")
@click.option("--bank-add", type=Duration(), help="Time bank: added per decision a seat makes (default 4h).")
@click.option("--bank-cap", type=Duration(), help="Time bank: the most a bank holds (default 3d).")
@click.option("--bank-out", type=click.Choice(["defaults", "bot"]),
              help="Time bank: a seat out of time gets its default order, or a bot's (--bank-bot).")
@click.option("--bank-bot", help="Time bank: the bot kind that plays a seat out of time (default the title's first).")
@click.option("--absence", type=click.Choice(["extend", "bot"]),
              help="A seat away (kontor seat away): extend (the default) moves a deadline in its absence to its "
                   "end, or bot lets a bot play it (--absence-bot).")
@click.option("--absence-limit", type=Duration(), help="Absences extend one step by at most this (default 7d).")
@click.option("--absence-bot", help="The bot kind that plays an away seat (default the title's first).")
@click.option("--seed", help="A seed (integer or text) for a reproducible game.")
@click.option("--name", help="A display name for the game.")
@click.option("--mail-orders", type=click.Choice(["reply_address", "signed"]),
              help="Orders by mail: reply_address (the default: a player replies to the mail, in plain words, "
                   "KEY=VALUE or JSON, no tools needed) or signed (a token signed with `kontor order --print-token`).")
@click.option("--press", type=click.Choice(["all", "public", "none"]),
              help="In-game messages: all (the default: public and private), public, or none.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the game id (no next step on stderr).")
@url_option
@pass_session
def game_create(sess: Session, title: str, seats: int, who: str | None, options: tuple[str, ...],
                sealed: int | None, sequential: int | None, on_expiry: str | None, extension: int | None,
                clock: str | None, bank_start: int | None, bank_add: int | None, bank_cap: int | None,
                bank_out: str | None, bank_bot: str | None, absence: str | None, absence_limit: int | None,
                absence_bot: str | None, seed: str | None, name: str | None,
                mail_orders: str | None, press: str | None, quiet: bool) -> None:
    """Create a game with a fresh host key, kept under your identity; you may join it too."""
    host = sess.identity(who)
    assert host is not None
    # A key of the game's own: the server refuses a host key as a seat key, and the host
    # usually plays too, with the identity's key.
    host_key = SigningKey.generate()
    body: dict[str, Any] = {"title": title, "seats": seats, "host_key": host_key.public,
                            "options": parse_pairs(options)}
    deadlines = {k: v for k, v in (("sealed_seconds", sealed), ("sequential_seconds", sequential),
                                   ("on_expiry", on_expiry), ("extension_seconds", extension),
                                   ("clock", clock), ("bank_start_seconds", bank_start),
                                   ("bank_add_seconds", bank_add), ("bank_cap_seconds", bank_cap),
                                   ("bank_out", bank_out), ("bank_bot", bank_bot), ("absence", absence),
                                   ("absence_limit_seconds", absence_limit), ("absence_bot", absence_bot))
                 if v is not None}
    if deadlines:
        body["deadlines"] = deadlines
    if seed is not None:
        body["seed"] = int(seed) if re.fullmatch(r"-?\d+", seed) else seed
    if name:
        body["name"] = name
    if mail_orders:
        body["mail_orders"] = mail_orders
    if press:
        body["press"] = press
    api = sess.api()
    g = api.create_game(body)
    with sess.store.edit() as store:
        store.remember_host(host.name, g["id"], api.url, host_key)
    # The id alone on stdout, so that `GAME=$(kontor game create ...)` works; the rest is for people.
    click.echo(g["id"])
    if not quiet:
        click.echo(f"created game {g['id']}: {g.get('name')} ({g.get('title')}, {g.get('seats')} seats), "
                   f"host {host.name}", err=True)
        click.echo(f"next: players (you too) join with `kontor seat join {g['id']} --as NAME --name "
                   f"\"Display name\"`, then start it with `kontor game start {g['id']} --as {host.name}`", err=True)


@game.command("start")
@click.argument("game_id", metavar="GAME")
@as_option("The host identity")
@click.option("--json", "as_json", is_flag=True, help="Print the started game as JSON.")
@url_option
@pass_session
def game_start(sess: Session, game_id: str, who: str | None, as_json: bool) -> None:
    """Start the game (host): every seat must be taken or a bot."""
    sess.game(game_id)
    key = sess.host_key(who, game_id)
    g = sess.api(game_id).start(game_id, key)
    if as_json:
        click.echo(pretty(g))
        return
    ph = g.get("phase") or {}
    names = names_in(g)
    mine = local_seats(sess.store, game_id)
    asked = [words.seat_name(names, s) + (f" (your identity {mine[s].name})" if s in mine else "")
             for s in ph.get("requested", [])]
    click.echo(f"game {game_id} started: step {ph.get('id')} waits for {words.listing(asked)}")
    first = next((mine[s] for s in ph.get("requested", []) if s in mine), None)
    if first is not None:
        click.echo(f"next: `kontor status {game_id} --as {first.name}`, then `kontor order {game_id} --as "
                   f"{first.name} ...`; `kontor games` shows which of your games wait for you", err=True)


# -- seats ------------------------------------------------------------------------------
@cli.group(cls=click.Group)
def seat() -> None:
    """Join a game; the host makes seats bots or gives them to new keys."""


@seat.command("join")
@click.argument("game_id", metavar="GAME")
@as_option("The identity that takes the seat")
@click.option("--name", help="Your display name in the game (default: the identity's name).")
@click.option("--seat", "seat_no", type=int, help="A seat number; the first free one if omitted.")
@click.option("--json", "as_json", is_flag=True, help="Print the seat as JSON.")
@url_option
@pass_session
def seat_join(sess: Session, game_id: str, who: str | None, name: str | None, seat_no: int | None,
              as_json: bool) -> None:
    """Take a seat in a game's lobby with your identity's key."""
    sess.game(game_id, seat_no)
    ident = sess.identity(who)
    assert ident is not None
    api = sess.api(game_id)
    rec = api.join(game_id, name or ident.name, ident.public, seat_no)
    with sess.store.edit() as store:
        store.remember_seat(ident.name, game_id, api.url, int(rec["seat"]))
    if as_json:
        click.echo(pretty(rec))
        return
    click.echo(f"{ident.name} holds seat {rec['seat']} of game {game_id} as {rec.get('name')!r}")
    click.echo(f"next: when the host has started the game, `kontor status {game_id} --as {ident.name}`")


@seat.command("bot")
@click.argument("game_id", metavar="GAME")
@click.argument("seat_no", metavar="SEAT", type=int)
@click.option("--kind", required=True, help="A bot kind of the title (see `kontor catalog`), e.g. greedy.")
@as_option("The host identity")
@url_option
@pass_session
def seat_bot(sess: Session, game_id: str, seat_no: int, kind: str, who: str | None) -> None:
    """Let a bot answer for a seat (host)."""
    sess.game(game_id, seat_no)
    key = sess.host_key(who, game_id)
    rec = sess.api(game_id).update_seat(game_id, seat_no, {"bot": kind}, key)
    with sess.store.edit() as store:
        store.forget_seat(game_id, int(rec["seat"]))
    click.echo(f"seat {rec['seat']} of game {game_id} is now a {rec.get('bot')} bot")


@seat.command("replace")
@click.argument("game_id", metavar="GAME")
@click.argument("seat_no", metavar="SEAT", type=int)
@click.option("--key", "new_key", required=True, metavar="PUBLICKEY",
              help="The new player's public key (or the name of a local identity).")
@click.option("--name", help="A new display name for the seat.")
@as_option("The host identity")
@url_option
@pass_session
def seat_replace(sess: Session, game_id: str, seat_no: int, new_key: str, name: str | None,
                 who: str | None) -> None:
    """Give a seat to another player's key (host), e.g. to replace an absent player."""
    sess.game(game_id, seat_no)
    key = sess.host_key(who, game_id)
    store = sess.store
    local = store.identities.get(new_key) or store.by_public(new_key)
    body: dict[str, Any] = {"public_key": local.public if local else new_key}
    if name:
        body["name"] = name
    api = sess.api(game_id)
    rec = api.update_seat(game_id, seat_no, body, key)
    with store.edit():
        if local is not None and local.name in store.identities:
            store.remember_seat(local.name, game_id, api.url, int(rec["seat"]))
        else:
            store.forget_seat(game_id, int(rec["seat"]))
    click.echo(f"seat {rec['seat']} of game {game_id} now belongs to key {rec.get('kid')} ({rec.get('name')})")


def seat_of(api: Api, ident: Identity, game_id: str) -> int:
    """The seat `ident`'s key holds in the game, as the server says."""
    seat_no = next((p["seat"] for p in api.seats(game_id) if p.get("kid") == ident.kid), None)
    if seat_no is None:
        raise Fail("not_seated", f"{ident.name} holds no seat in game {game_id}")
    return int(seat_no)


def either(body: dict[str, Any], field: str, value: Any, clear: bool, name: str) -> None:
    """Put `--NAME VALUE` or `--no-NAME` (null: clear it) into a contact change."""
    if value is not None and clear:
        raise Fail("conflicting_options", f"give --{name} or --no-{name}, not both")
    if clear:
        body[field] = None
    elif value is not None:
        body[field] = value


#: The mail modes of a contact, in words.
MAIL_MODES = {"asked": "when something is asked of you, and the game's end (asked)",
              "every": "a mail for every step (every)", "immediate": "a mail for every step (every)",
              "digest": "one digest a day; your turn, reminders and the end at once (digest)"}


def contact_lines(game_id: str, rec: dict[str, Any]) -> list[str]:
    """A seat's contact settings, one per line; the webhook secret last, when answered."""
    email = f"{rec['email']} ({rec.get('email_status') or 'ok'})" if rec.get("email") else "none"
    webhook = "none"
    if rec.get("webhook_url"):
        secret = "signing secret set" if rec.get("webhook_secret_set") else "no signing secret"
        webhook = f"{rec['webhook_url']} ({rec.get('webhook_status') or 'active'}, {secret})"
        chosen = rec.get("webhook_events")
        webhook += f"\n  events     {', '.join(chosen) if chosen else 'every type'}"
    lead = rec.get("reminder_lead")
    out = [f"contact of seat {rec.get('seat')} in game {game_id}",
           f"  email      {email}",
           f"  webhook    {webhook}",
           f"  time zone  {rec.get('timezone') or 'UTC'}",
           f"  reminders  {f'{words.span(lead)} before a deadline, if you have not answered' if lead else 'off'}",
           f"  mail       {MAIL_MODES.get(str(rec.get('delivery')), MAIL_MODES['asked'])}"]
    if rec.get("last_error"):
        out.append(f"  last error {rec['last_error']}")
    if rec.get("webhook_secret"):
        out += ["", f"webhook signing secret: {rec['webhook_secret']}",
                "keep it, it is not shown again (it verifies every delivery; --rotate-secret makes a new one)"]
    return out


@seat.command("contact")
@click.argument("game_id", metavar="GAME")
@as_option("The seat's identity")
@click.option("--email", metavar="ADDRESS", help="Send notifications to this address.")
@click.option("--no-email", is_flag=True, help="No more mail.")
@click.option("--webhook", metavar="URL", help="POST notifications to this URL (Standard Webhooks); a new URL "
                                               "gets a new signing secret, shown once.")
@click.option("--no-webhook", is_flag=True, help="No more webhook deliveries.")
@click.option("--webhook-events", metavar="TYPES",
              help="Only these event types to the webhook, comma-separated, e.g. step.opened,game.finished.")
@click.option("--all-webhook-events", is_flag=True, help="Every event type to the webhook (the default).")
@click.option("--rotate-secret", is_flag=True, help="Make a new webhook signing secret (shown once).")
@click.option("--tz", "timezone", metavar="ZONE", help="Show deadlines in this IANA time zone, e.g. Europe/Berlin.")
@click.option("--remind", type=Duration(), metavar="LEAD",
              help="Remind me this long before a deadline if I have not answered: 3h, 90m or seconds.")
@click.option("--no-remind", is_flag=True, help="No reminders.")
@click.option("--mail", "mode", type=click.Choice(["asked", "every", "digest"]), default=None,
              help="Which mails: asked (only when something is asked of you, plus the game's end; the default), "
                   "every (a mail per step) or digest (one a day). Your turn, reminders and the game's end "
                   "come at once in every mode.")
@click.option("--digest/--immediate", "digest", default=None, hidden=True,
              help="Earlier names of --mail digest and --mail every.")
@click.option("--json", "as_json", is_flag=True, help="Print the JSON answer.")
@url_option
@pass_session
def seat_contact(sess: Session, game_id: str, who: str | None, email: str | None, no_email: bool,
                 webhook: str | None, no_webhook: bool, webhook_events: str | None, all_webhook_events: bool,
                 rotate_secret: bool, timezone: str | None,
                 remind: int | None, no_remind: bool, mode: str | None, digest: bool | None, as_json: bool) -> None:
    """Show where your seat's notifications go, or change it (any option but --json)."""
    sess.game(game_id)
    body: dict[str, Any] = {}
    either(body, "email", email, no_email, "email")
    either(body, "webhook_url", webhook, no_webhook, "webhook")
    if webhook_events is not None and all_webhook_events:
        raise Fail("conflicting_options", "give --webhook-events or --all-webhook-events, not both")
    if webhook_events is not None:
        body["webhook_events"] = [kind.strip() for kind in webhook_events.split(",") if kind.strip()]
    elif all_webhook_events:
        body["webhook_events"] = None
    either(body, "reminder_lead", remind, no_remind, "remind")
    if rotate_secret:
        body["rotate_secret"] = True
    if timezone is not None:
        body["timezone"] = timezone
    if digest is not None:
        body["delivery"] = "digest" if digest else "every"
    if mode is not None:
        body["delivery"] = mode
    ident = sess.identity(who, game_id, "seat")
    assert ident is not None
    api = sess.api(game_id)
    seat_no = seat_of(api, ident, game_id)
    rec = api.set_contact(game_id, seat_no, body, ident.key) if body else api.contact(game_id, seat_no, ident.key)
    if as_json:
        click.echo(pretty(rec))
        return
    for line in contact_lines(game_id, rec):
        click.echo(line)


@seat.command("deliveries")
@click.argument("game_id", metavar="GAME")
@as_option("The seat's identity, or the host's with --seat")
@click.option("--seat", "seat_no", type=int, help="Another seat's deliveries (host: targets are masked).")
@click.option("--limit", type=click.IntRange(1, 500), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the JSON answer.")
@url_option
@pass_session
def seat_deliveries(sess: Session, game_id: str, who: str | None, seat_no: int | None, limit: int,
                    as_json: bool) -> None:
    """The seat's mails and webhook deliveries, newest first, with their outcome."""
    sess.game(game_id, seat_no)
    api = sess.api(game_id)
    if seat_no is None:
        ident = sess.identity(who, game_id, "seat")
        assert ident is not None
        key, seat_no = ident.key, seat_of(api, ident, game_id)
    else:
        key = sess.host_key(who, game_id)
    items = api.deliveries(game_id, seat_no, key, limit)
    if as_json:
        click.echo(pretty(items))
        return
    if not items:
        click.echo(f"no deliveries for seat {seat_no} yet (set a contact with `kontor seat contact {game_id}`)")
    for d in items:
        tries = f", {d.get('attempts')} attempt{'s' if d.get('attempts') != 1 else ''}"
        line = (f"{d.get('created_at')} {d.get('channel'):<7} {d.get('type')} step {d.get('phase')} "
                f"-> {d.get('target')}: {d.get('status')}{tries}")
        if d.get("next_attempt_at"):
            line += f", next at {d['next_attempt_at']}"
        if d.get("last_error"):
            line += f" ({d['last_error']})"
        click.echo(line)


# -- playing ----------------------------------------------------------------------------
def short_left(iso: str | None, now: datetime | None = None) -> str:
    """`23h 59m`, `overdue`, or empty without a deadline."""
    if not iso:
        return ""
    try:
        left = (datetime.fromisoformat(iso) - (now or datetime.now(UTC))).total_seconds()
    except ValueError:
        return iso
    return words.span(left) if left >= 0 else "overdue"


def game_row(api: Api, gid: str, holders: list[Identity]) -> dict[str, Any]:
    """One of my games as `kontor games` shows it: the game, the open step, and for each
    local identity in it (seat or host) whether the step waits for it and what it asks
    (read with the seat's own bearer). A game the server does not answer for is a row
    with its `error`."""
    row: dict[str, Any] = {"game": gid, "url": api.url, "name": None, "title": None, "title_name": None,
                           "status": None, "step": None, "kind": None, "sealed": None, "deadline": None,
                           "paused_since": None, "waiting_for": [], "yours": [], "your_turn": [], "error": None}
    try:
        g = api.game(gid)
        phase = api.phase(gid) if g.get("status") == "running" else None
    except ApiError as exc:
        row["error"] = f"{exc.code}: {exc.detail}"
        return row
    except Unreachable as exc:
        row["error"] = f"unreachable: {exc.reason}"
        return row
    names = names_in(g)
    row.update(name=g.get("name"), title=g.get("title"), title_name=g.get("title_name"), status=g.get("status"),
               paused_since=g.get("paused_since"))
    waiting = waiting_seats(phase)
    if phase is not None:
        row.update(step=phase.get("id"), kind=phase.get("kind"), sealed=phase.get("sealed"),
                   deadline=phase.get("deadline"))
        row["waiting_for"] = [{"seat": s, "name": words.seat_name(names, s)} for s in waiting]
    for ident in holders:
        seat = ident.seat_in(gid)
        mine: dict[str, Any] = {"identity": ident.name, "seat": seat, "host": ident.hosts(gid),
                                "requested": False, "answered": False, "asked": None}
        if seat is not None and phase is not None and seat in (phase.get("requested") or []):
            try:
                you = api.phase(gid, ident.key).get("you") or {}
            except ApiError as exc:  # e.g. the host gave the seat to another key meanwhile
                mine["error"] = f"{exc.code}: {exc.detail}"
            else:
                mine.update(requested=bool(you.get("requested")), answered=bool(you.get("answered")),
                            asked=you.get("asked"))
        row["yours"].append(mine)
    row["your_turn"] = [m["identity"] for m in row["yours"] if m["requested"] and not m["answered"]]
    return row


def _rank(row: dict[str, Any]) -> tuple[int, str, str]:
    order = 0 if row["your_turn"] else {"running": 1, "lobby": 2, "finished": 3}.get(str(row["status"]), 4)
    return order, row.get("deadline") or "~", row["game"]


@cli.command("games")
@as_option("Only this identity's games (default: every identity in the key file)")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@url_option
@pass_session
def games(sess: Session, who: str | None, as_json: bool) -> None:
    """Your games, those waiting for you first: title, status, step, whom the step waits
    for, and which of your identities holds a seat (or hosts).

    The list comes from the key file, which remembers every game an identity created or
    joined here (the server lists games by status, not by key); each game is then read
    from its server, and the open step with each seat's own key."""
    store = sess.store
    idents = [store.get(who)] if who else sorted(store.identities.values(), key=lambda i: i.name)
    holders: dict[str, list[Identity]] = {}
    for ident in idents:
        for gid in sorted(ident.games):
            holders.setdefault(gid, []).append(ident)
    apis: dict[str, Api] = {}
    rows = []
    for gid, held in holders.items():
        url = sess.url or store.url_of(gid) or DEFAULT_URL
        rows.append(game_row(apis.setdefault(url, Api(url)), gid, held))
    rows.sort(key=_rank)
    if as_json:
        click.echo(pretty(rows))
        return
    out = Out()
    if not rows:
        out.line("no games yet: create one with `kontor game create --title haendler --seats 2 --as NAME`, "
                 "or join one with `kontor seat join GAME --as NAME`")
        return
    table, styles = [], []
    for r in rows:
        yours = ", ".join(f"{m['identity']} (" + ("host" if m["seat"] is None else f"seat {m['seat']}")
                          + (", host" if m["seat"] is not None and m["host"] else "") + ")" for m in r["yours"])
        if r["error"]:
            table.append([r["game"], "", f"unknown ({r['error']})", "", "", yours, ""])
            styles.append("bad")
            continue
        title = r["title_name"] or r["title"] or ""
        label = title if not r["name"] or title.casefold() in str(r["name"]).casefold() else f"{r['name']} ({title})"
        step = "" if r["step"] is None else f"{r['step']} ({str(r['kind'] or '').replace('_', ' ')}" + \
            (", sealed" if r["sealed"] else "") + ")"
        if r["your_turn"]:
            waits = "YOU: " + ", ".join(r["your_turn"])
            others = [w["name"] for w in r["waiting_for"]
                      if not any(m["seat"] == w["seat"] and m["identity"] in r["your_turn"] for m in r["yours"])]
            waits += f"; {', '.join(others)}" if others else ""
        else:
            waits = ", ".join(w["name"] for w in r["waiting_for"]) or ("" if r["status"] == "running" else "-")
        left = "paused by the host" if r.get("paused_since") else short_left(r["deadline"])
        table.append([r["game"], label, r["status"], step, waits, yours, left])
        styles.append("turn" if r["your_turn"] else "dim" if r["status"] == "finished" else None)
    out.table(["game", "title", "status", "step", "waits for", "yours", "time left"], table, styles)
    for r in rows:
        for m in r["yours"]:
            if m["identity"] in r["your_turn"]:
                asked = f": {m['asked']}" if m.get("asked") else ""
                out.line(f"Your turn in {r['game']} as {m['identity']}{asked}", "turn")
                out.line(f"  kontor status {r['game']} --as {m['identity']}; "
                         f"kontor order {r['game']} --as {m['identity']} --default | -k KEY=VALUE | --json ORDER")


@cli.command()
@click.argument("game_id", metavar="GAME")
@as_option("Read as this seat's identity (default: the one remembered for GAME, else the public)")
@click.option("--json", "as_json", is_flag=True, help="Print the raw JSON (game, phase, view) for scripts.")
@click.option("--view", "show_view", is_flag=True, help="Print the raw JSON view of the game only.")
@url_option
@pass_session
def status(sess: Session, game_id: str, who: str | None, as_json: bool, show_view: bool) -> None:
    """Where the game stands, in words: the step, the table, what happened last, and what
    is asked of you with the time left.

    Without --as: the identity of this key file that holds a seat in the game; of several,
    the one the open step waits for (else the public view)."""
    sess.game(game_id)
    api = sess.api(game_id)
    g = api.game(game_id)
    phase = view = None
    ident = sess.store.get(who) if who else None
    if g.get("status") != "lobby":
        if ident is None and len(local_seats(sess.store, game_id)) > 1:
            ident = pick_reader(sess, None, game_id, api, api.phase(game_id))
        elif ident is None:
            ident = sess.identity(None, game_id, "seat", required=False)
        key = reader_key(ident, game_id)
        phase = api.phase(game_id, key)
        view = api.view(game_id, key)
    else:
        ident = ident or sess.identity(None, game_id, "seat", required=False)
        key = reader_key(ident, game_id)
    if as_json:
        click.echo(pretty({"game": g, "phase": phase, "view": view}))
        return
    if show_view:
        click.echo(pretty(view))
        return
    events = last_step_events(api, game_id, key) if phase is not None else []
    lines = status_lines(api.url, g, phase, view, events, ident)
    mine = local_seats(sess.store, game_id)
    others = [mine[s].name for s in waiting_seats(phase) if s in mine and (ident is None or mine[s].name != ident.name)]
    if others:
        lines.append(f"Also waiting for your identity {words.listing(others)}: "
                     f"kontor status {game_id} --as {others[0]}")
    Out().lines(lines)


def last_step_events(api: Api, gid: str, key: SigningKey | None, window: int = 100) -> list[dict[str, Any]]:
    """The events of the last step that resolved (as the key's holder may see them): the
    newest page of events, cut to the step of its newest `step_resolved`."""
    first, _ = api.events(gid, 0, key, limit=1)
    last = int((first or {}).get("last") or 0)
    page, _ = api.events(gid, max(0, last - window), key, limit=window)
    items = (page or {}).get("items", [])
    resolved = [ev.get("phase") for ev in items if ev.get("type") == "step_resolved"]
    if not resolved:
        return []
    return [ev for ev in items
            if ev.get("phase") == resolved[-1] and ev.get("type") not in ("step_opened", "game_finished")]


def status_lines(url: str, g: dict[str, Any], phase: dict[str, Any] | None, view: dict[str, Any] | None,
                 events: list[dict[str, Any]], ident: Identity | None) -> list[str]:
    """`kontor status` in words: no JSON (that is `--json`)."""
    gid = g["id"]
    names = names_in(g)
    game = title_of(g.get("title"))
    you = (phase or {}).get("you") or {}
    my_seat = you.get("seat")
    if my_seat is None and ident is not None:
        my_seat = next((p["seat"] for p in g.get("players", []) if p.get("kid") == ident.kid), None)
    title = g.get("title_name") or g.get("title")
    name = str(g.get("name") or gid)
    label = name if not title or str(title).casefold() in name.casefold() else f"{name} ({title})"
    out = [f"{label}: game {gid}, {g.get('status')}"]
    if (g.get("rematch_of") or {}).get("id"):
        out.append(f"A rematch of game {g['rematch_of']['id']}: the same players, a new shuffle")
    players = []
    for p in g.get("players", []):
        text = f"{p.get('name') or '(free)'} (seat {p['seat']}"
        if p.get("bot") and not str(p.get("name") or "").endswith(f"{p['bot']} bot)") \
                and p.get("name") != f"{p['bot']} bot":  # "Greta (greedy bot)" says it already
            text += f", {p['bot']} bot"
        text += ")"
        if p["seat"] == my_seat and ident is not None:
            text += f" <- you ({ident.name})"
        players.append(text)
    out.append("Players: " + "; ".join(players))
    if (away := away_status(g, names)) is not None:
        out.append(away)
    rules = f"{url.rstrip('/')}/titles/{g.get('title')}/rules"
    if phase is None:
        free = [p["seat"] for p in g.get("players", []) if not p.get("taken") and not p.get("bot")]
        if free:
            out.append(f"In the lobby: {seats_text(free)} free; join with `kontor seat join {gid} --as NAME`")
        else:
            out.append(f"In the lobby: every seat is taken; the host starts with `kontor game start {gid}`")
        return [*out, f"Rules: {rules}"]
    state = (view or {}).get("state") or {}
    over = phase.get("status") == "finished" or g.get("status") == "finished"
    headline = (view or {}).get("headline") or (words.said("headline", game.headline, state) if game else None)
    step = f"Step {phase['id']}" + (" (the last)" if over else "")
    out.append(step + (f" \N{EM DASH} {headline}" if headline else ""))
    summary = (view or {}).get("summary") or (words.said("summary", game.summary, state, names) if game else None)
    if summary:
        out += ["", *summary.rstrip("\n").splitlines()]
    said = [line for ev in events if (line := words.describe(game, ev, names))]
    if said:
        out += ["", f"Last step ({events[0].get('phase')}):", *(f"  {line}" for line in said)]
    out.append("")
    if over:
        out.append(words.finish_sentence(g.get("result") or [], names))
        out += [f"  {line}" for line in words.ranking_lines(g.get("result") or [], names, my_seat)]
        out.append(f"Check its seed and every step: kontor verify {gid}")
        again = (g.get("rematch") or {}).get("id")
        out.append(f"Rematch: game {again} (`kontor status {again}`)" if again else
                   f"The host may start a rematch: `kontor game rematch {gid}`")
        return [*out, f"Rules: {rules}"]
    waiting = [words.seat_name(names, s) + (" (you)" if s == my_seat and ident is not None else "")
               for s in phase.get("requested", []) if s not in phase.get("answered", [])]
    answered = [words.seat_name(names, s) for s in phase.get("answered", [])]
    out.append(f"Waiting for {words.listing(waiting)}" + (f"; answered: {words.listing(answered)}" if answered
                                                        else "") + ("; sealed" if phase.get("sealed") else "") + ".")
    if g.get("paused_since"):
        out.append(f"Paused by the host since {clock(g['paused_since'], '%Y-%m-%d %H:%M %Z')}: the clock is "
                   "stopped, and the deadline moves on by the time paused when the host resumes the game.")
    out += asked_lines(gid, phase, you, state, names, game, ident, my_seat)
    out += clock_lines(g, names, my_seat if ident is not None else None)
    return [*out, f"Rules: {rules}"]


def clock_lines(g: dict[str, Any], names: list[str], my_seat: int | None) -> list[str]:
    """A time bank's clocks in words (yours first); nothing without a time bank."""
    clocks = g.get("clocks") or {}
    if not clocks:
        return []
    mine = words.clock_text("", clocks.get(str(my_seat)), you=True) if my_seat is not None else None
    others = [words.clock_text(words.seat_name(names, s), clocks.get(str(s))) for s in range(len(names))
              if s != my_seat and str(s) in clocks]
    return ["Time banks (a clock runs only while its player is asked):",
            *(f"  {line}" for line in [mine, *others] if line)]


def asked_lines(gid: str, phase: dict[str, Any], you: dict[str, Any], state: dict[str, Any], names: list[str],
                game: Any, ident: Identity | None, my_seat: int | None) -> list[str]:
    """What the open step asks of the reader, with the time left."""
    if ident is None:
        return [f"  Time left in this step: {time_left(phase.get('deadline'), paused=phase.get('paused_since'))}",
                "(the public view: pass --as NAME to see what is asked of you)"]
    if not you.get("requested"):
        if my_seat is None:
            return [f"({ident.name} holds no seat in this game: the public view)"]
        return [f"Nothing is asked of you ({words.seat_name(names, my_seat)}) in step {phase['id']}.",
                f"  Time left in this step: {time_left(phase.get('deadline'), paused=phase.get('paused_since'))}"]
    asked = you.get("asked") or phase.get("asked") or local_asked(game, phase, you, state, names)
    if you.get("answered"):
        mine = you.get("order_sentence") or words.order_words(you.get("order"))
        out = [f"You answered: {mine.rstrip('.')} (you may replace it until the step resolves)."]
    else:
        out = [f"Your turn: {asked or str(you.get('kind')).replace('_', ' ')}"]
    if phase.get("sealed") and "sealed" not in (asked or "").casefold():
        out.append("  Sealed: nobody sees your order before the step resolves.")
    left = time_left(phase.get('deadline'), paused=phase.get('paused_since'))
    out.append(f"  Time left: {left}" + (" (extended)" if phase.get("extended") else ""))
    if you.get("default_order") is not None:
        default = you.get("default_sentence") or words.order_words(you["default_order"])
        out.append(f"  Default order, played if you do not answer: {default}")
    out.append(f"  Answer: kontor order {gid} --as {ident.name} (your choices in words), or --default")
    return out


def local_asked(game: Any, phase: dict[str, Any], you: dict[str, Any], state: dict[str, Any],
                names: list[str]) -> str | None:
    """What is asked, in the local title's words (for a server that does not say)."""
    if game is None or not you.get("kind"):
        return None
    try:
        from engine.core.game import Request

        request = Request(seat=int(you["seat"]), kind=str(you["kind"]), step=int(state.get("step") or 0),
                          sealed=bool(phase.get("sealed")), choices=dict(you.get("choices") or {}))
    except (TypeError, ValueError):
        return None
    return words.asked_text(game, request, state, names)


@cli.command()
@click.argument("game_id", metavar="GAME")
@as_option("The seat's identity")
@click.option("--json", "order_json", metavar="JSON", help="The order as a JSON object.")
@click.option("--file", "order_file", type=click.File("r"), help="Read the order (JSON) from a file, - for stdin.")
@click.option("--default", "use_default", is_flag=True, help="Send the step's default order for your seat.")
@click.option("-k", "--set", "pairs", multiple=True, metavar="KEY=VALUE",
              help="An order field; VALUE is JSON when it parses (-k bid=300 gives 300), else text: a display name "
                   "(a good, a place, a player: -k good=Wein, case and accents as you like) where the field takes "
                   "an identifier. Repeatable.")
@click.option("--say", "say", metavar="WORDS", help="The order in your own words (\"cart 2 to Brügge\", \"Tuch 5, "
                                                    "Wein 6\", an option's number), read by the server.")
@click.option("--pick", "picks", multiple=True, metavar="N",
              help="Pick option N (a number as offered) or give a number; repeatable, in order.")
@click.option("--step", "--phase", "phase_no", type=int, help="The step to answer (default: the open one).")
@click.option("--print-token", is_flag=True,
              help="Print the signed order token instead of sending it (to mail it between #orders and #end).")
@click.option("--wait", "wait", type=Duration(), metavar="DURATION",
              help="When it is not your turn yet, wait up to this long for it (e.g. 10m), then send.")
@url_option
@pass_session
def order(sess: Session, game_id: str, who: str | None, order_json: str | None, order_file: IO[str] | None,
          use_default: bool, pairs: tuple[str, ...], say: str | None, picks: tuple[str, ...], phase_no: int | None,
          print_token: bool, wait: int | None) -> None:
    """Sign an order for your seat and send it (or print it, with --print-token).

    Without an order, it offers the decision in words: on a terminal, numbered options
    to pick by number or by typing words, numbers with their bounds, and the order as a
    sentence to confirm before it is sent; otherwise it prints what is asked and how to
    answer (--say WORDS, --pick N). Without --as: the identity of this key file that the
    open step waits for (with --default, each of them when it waits for several). When it
    is not your turn, it says whose it is and sends nothing; with --wait, it waits for
    your turn, then sends."""
    sess.game(game_id)
    given = [order_json is not None, order_file is not None, use_default, bool(pairs), say is not None or bool(picks)]
    if sum(given) > 1:
        raise click.UsageError("give the order one way: --json, --file, --default, -k KEY=VALUE or --say/--pick")
    if sum(given) == 0 or given[4]:
        api = sess.api(game_id)
        ident = order_identities(sess, api, game_id, who, False, phase_no)[0]
        chosen = choose(api, sess.store, game_id, ident, "order", say, picks)
        if chosen is not None:
            send_order(sess, api, game_id, ident, chosen[0], False, phase_no, print_token, sentence=chosen[1])
        return
    body: Any = None
    if order_json is not None:
        body = _load_order(order_json, "--json")
    elif order_file is not None:
        body = _load_order(order_file.read(), order_file.name)
    elif pairs:
        body = parse_pairs(pairs)
    api = sess.api(game_id)
    named = bool(pairs)
    until = time.monotonic() + (wait or 0)
    sent = 0
    while True:
        try:
            for ident in order_identities(sess, api, game_id, who, use_default, phase_no):
                send_order(sess, api, game_id, ident, body, use_default, phase_no, print_token, named)
                sent += 1
            return
        except Fail as exc:
            # Not (yet) asked: with --wait, look again until the step asks, or time is up.
            if exc.code != "not_requested" or sent or time.monotonic() >= until:
                raise
            time.sleep(min(WAIT_POLL, max(0.0, until - time.monotonic())))


def order_identities(sess: Session, api: Api, gid: str, who: str | None, use_default: bool,
                     phase_no: int | None) -> list[Identity]:
    """Who answers: `--as NAME`; else the one identity holding a seat; of several, those
    the open step waits for (more than one only with --default)."""
    mine = local_seats(sess.store, gid)
    if who or len(mine) <= 1:
        ident = sess.identity(who, gid, "seat")
        assert ident is not None
        return [ident]
    phase = api.phase(gid)
    if phase.get("status") == "finished":
        raise Fail("game_finished", f"game {gid} is over", f"see the result with `kontor status {gid}`")
    waited = [mine[s] for s in waiting_seats(phase) if s in mine]
    if phase_no is not None and not waited:
        raise Fail("which_identity", f"which identity? {words.listing(sorted(i.name for i in mine.values()))} "
                                     f"hold seats in game {gid}: pass --as NAME")
    if not waited:
        text, hint = turn_words(gid, phase, names_in(api.game(gid)), sess.store)
        raise Fail("not_requested", f"none of your identities is asked: {text}", hint)
    if len(waited) > 1 and not use_default:
        names = words.listing([i.name for i in waited], "and")
        raise Fail("which_identity", f"step {phase.get('id')} waits for {names}, all yours: pass --as NAME "
                                     "(or --default, which answers for each)")
    return waited


def send_order(sess: Session, api: Api, game_id: str, ident: Identity, body: Any, use_default: bool,
               phase_no: int | None, print_token: bool, named: bool = False, sentence: str | None = None) -> None:
    """Sign `ident`'s order (the default one with `use_default`) and send or print it;
    `named`: its text values may be display names (`-k`), read against the order schema;
    `sentence`: the order in words, when the person built it from the choices."""
    ph = api.phase(game_id, ident.key)
    you = ph.get("you") or {}
    seat_no = you.get("seat")
    if seat_no is None:
        seat_no = next((p["seat"] for p in api.seats(game_id) if p.get("kid") == ident.kid), None)
    if seat_no is None:
        raise Fail("not_seated", f"{ident.name} holds no seat in game {game_id}",
                   "`kontor keys` lists your identities and their games")
    if ph.get("status") == "finished":
        raise Fail("game_finished", f"game {game_id} is over", f"see the result with `kontor status {game_id}`")
    if phase_no is None and not you.get("requested"):
        # Not asked (or the step is resolving): say whose turn it is instead of sending.
        text, hint = turn_words(game_id, ph, names_in(api.game(game_id)), sess.store, ident)
        raise Fail("not_requested", text, hint)
    phase_id = phase_no if phase_no is not None else int(ph["id"])
    if use_default:
        if not you.get("requested"):
            raise Fail("not_requested", f"step {ph['id']} ({ph.get('kind')}) asks "
                                        f"{seats_text(ph.get('requested', []))}, not seat {seat_no}")
        body = you["default_order"]
        sentence = you.get("default_sentence")
    elif named:
        body = by_names(body, you.get("order_schema") or {}, names_in(api.game(game_id)))
    token = order_token(ident.key, game_id, phase_id, seat_no, body)
    if print_token:
        click.echo(token)
        click.echo(f"the signed order of seat {seat_no} for step {phase_id}: mail it on a line between #orders "
                   "and #end; a server accepts it for a limited time after signing (a day by default)", err=True)
        return
    receipt = api.submit(game_id, phase_id, seat_no, token)
    now: dict[str, Any] = {}
    if receipt.get("step_status") != "resolving":
        now = api.phase(game_id, ident.key)
        if sentence is None:  # an order given as fields: the server says it in the title's words
            sentence = (now.get("you") or {}).get("order_sentence")
    said = f"{sentence.rstrip('.')}." if sentence else compact(receipt.get("order"))
    click.echo(f"order accepted: game {game_id} step {receipt.get('phase')} seat {receipt.get('seat')} "
               f"({ident.name}): {said}")
    note = "replaced your earlier order; " if receipt.get("replaced") else ""
    if receipt.get("step_status") == "resolving":
        step = "the step is now resolving"
    elif now.get("paused_since") and set(now.get("answered") or []) >= set(now.get("requested") or []):
        step = "everyone has answered; the game is paused, so the step resolves when the host resumes it"
    elif now.get("paused_since"):
        step = "waiting for the other seats (the game is paused: nothing resolves until the host resumes it)"
    else:
        step = "waiting for the other seats"
    click.echo(f"receipt {receipt.get('receipt')} at {receipt.get('received_at')}; {note}{step}")


def by_names(body: dict[str, Any], schema: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """`-k` values read as display names: a text that is not itself an allowed value of
    its field becomes the allowed value whose id or label (`x-labels`) it names, or, for
    a field that takes a seat number, the seat of the player it names (case-, accent- and
    punctuation-insensitive: "brugge", "Brügge" and "Bruegge" alike)."""
    props = schema.get("properties") or {}
    return {key: named_value(value, props.get(key), names) if isinstance(value, str) else value
            for key, value in body.items()}


def named_value(value: str, prop: dict[str, Any] | None, names: list[str] | None = None) -> Any:
    """One `-k` text value as its field takes it (see `by_names`); unchanged when it names nothing."""
    if not isinstance(prop, dict):
        return value
    wanted = fold(value)
    enum = prop.get("enum")
    if isinstance(enum, list):
        if value in enum:
            return value
        labels = prop.get("x-labels") or {}
        for e in enum:
            if wanted and wanted in (fold(str(e)), fold(str(labels.get(str(e), "")))):
                return e
    takes_int = prop.get("type") == "integer" or (isinstance(enum, list) and enum and all(
        type(e) is int for e in enum))
    if takes_int and names:
        seats = [i for i, n in enumerate(names) if fold(n) == wanted]
        if len(seats) == 1 and (not isinstance(enum, list) or seats[0] in enum):
            return seats[0]
    return value


# -- choices in words: an order or an action, offered the way a person answers -----------
def interactive() -> bool:
    """Whether a person sits at a terminal (stdin and stdout)."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def number_text(n: dict[str, Any]) -> str:
    """What a number takes, in the server's words (`bounds` of the prompt's number)."""
    return str(n["bounds"])


def prompt_lines(prompt: dict[str, Any]) -> list[str]:
    """A prompt as a person reads it: what to do, the picks so far, the options numbered."""
    out = [prompt["say"]]
    if prompt.get("chosen"):
        out.append("  So far: " + ", ".join(prompt["chosen"]))
    ask = prompt.get("ask")
    if ask:
        out.append(ask["question"])
        if ask["kind"] == "choose":
            out += [f"  {i}. {o['label']}" + (f" — {o['hint']}" if o.get("hint") else "")
                    for i, o in enumerate(ask["options"], 1)]
        elif ask["kind"] == "number":
            out.append(f"  {ask['number']['label']}: {number_text(ask['number'])}")
        else:
            out += [f"  {n['label']}: {number_text(n)}" for n in ask["sheet"]]
    if prompt.get("complete"):
        out.append(f"As it stands: {prompt['sentence']}.")
    return out


def typed_pick(ask: dict[str, Any] | None, text: str) -> Any:
    """What a person typed, as a pick when it plainly is one: an option's number, a whole
    number for a number, whole numbers separated by commas for a sheet (in its order);
    else None (the server reads it as words)."""
    t = text.strip()
    if ask is None:
        return None
    if ask["kind"] == "choose" and t.isascii() and t.isdigit() and 1 <= int(t) <= len(ask["options"]):
        return ask["options"][int(t) - 1]["value"]
    if ask["kind"] == "number" and re.fullmatch(r"-?[0-9]{1,15}", t):
        return int(t)
    if ask["kind"] == "sheet":
        parts = [p.strip() for p in t.split(",")]
        if len(parts) == len(ask["sheet"]) and all(re.fullmatch(r"-?[0-9]{1,15}", p) for p in parts):
            return {n["key"]: int(p) for n, p in zip(ask["sheet"], parts, strict=True)}
    return None


def choose(api: Api, store: Keystore, gid: str, ident: Identity, of: str, say: str | None,
           picks: tuple[str, ...]) -> tuple[Any, str] | None:
    """Walk the seat's decision (`of` "order") or its unprompted actions (`of` "action")
    in words, with the server (`POST .../choices`): `--pick` values in order, then `--say`
    words; on a terminal, interactively. The complete order (or action) and its sentence
    once the person confirms it, or None when nothing is to be sent (what is asked was
    printed)."""
    ph = api.phase(gid, ident.key)
    you = ph.get("you") or {}
    seat_no = you.get("seat") if you.get("seat") is not None else seat_of(api, ident, gid)
    if of == "order" and not you.get("requested"):
        text, hint = turn_words(gid, ph, names_in(api.game(gid)), store, ident)
        raise Fail("not_requested", text, hint)

    def ask(chosen: list[Any], words_: str | None = None) -> dict[str, Any]:
        return dict(api.choices(gid, int(seat_no), ident.key, chosen, of, words_)["prompt"])

    chosen: list[Any] = []
    prompt = ask(chosen)
    for p in picks:
        value = typed_pick(prompt.get("ask"), p)
        if value is None:
            raise Fail("bad_pick", f"--pick {p}: {prompt['ask']['question'] if prompt.get('ask') else 'nothing more'}"
                                   " takes " + {"choose": "an option's number", "number": "a whole number"}.get(
                                       (prompt.get("ask") or {}).get("kind"), "whole numbers, one for each "
                                                                              "line, separated by commas"),
                       "\n".join(prompt_lines(prompt)))
        chosen = [*chosen, value]
        prompt = ask(chosen)
    if say is not None:
        prompt = ask(chosen, say)
        chosen = list(prompt["picks"])
    command = "order" if of == "order" else "act"
    if not interactive():
        if prompt.get("complete") and (say is not None or picks):
            return prompt["order"], prompt["sentence"]
        for line in prompt_lines(prompt):
            click.echo(line)
        click.echo(f"Answer with: kontor {command} {gid} --as {ident.name} --say \"<your words>\" "
                   f"(or --pick N, repeatable, in order)")
        return None
    while True:
        for line in prompt_lines(prompt):
            click.echo(line)
        if prompt.get("complete") and prompt.get("ask") is None:
            break
        hint = "Your choice (a number or words" + ("; Enter to send it as it stands)" if prompt.get("complete")
                                                   else ")")
        line = click.prompt(hint, default="" if prompt.get("complete") else None, show_default=False)
        if not line.strip():
            if prompt.get("complete"):
                break
            continue
        value = typed_pick(prompt.get("ask"), line)
        try:
            prompt = ask([*chosen, value]) if value is not None else ask(chosen, line)
        except ApiError as exc:
            if exc.code != "bad_pick":
                raise
            click.echo(f"Not one of the choices: {exc.detail}", err=True)
            continue
        chosen = list(prompt["picks"])
    if not click.confirm(f"Send: {prompt['sentence']}?", default=True):
        click.echo("nothing sent")
        return None
    return prompt["order"], prompt["sentence"]


@cli.command()
@click.argument("game_id", metavar="GAME")
@as_option("The seat's identity")
@click.option("--say", "say", metavar="WORDS", help="The action in your own words (\"hoard Wein\", an option's "
                                                    "number), read by the server.")
@click.option("--pick", "picks", multiple=True, metavar="N", help="Pick option N; repeatable, in order.")
@click.option("--json", "action_json", metavar="JSON", help="The action as a JSON object (for programs).")
@url_option
@pass_session
def act(sess: Session, game_id: str, who: str | None, say: str | None, picks: tuple[str, ...],
        action_json: str | None) -> None:
    """Take an action the rules allow at any time (whether or not you are asked).

    Without --say, --pick or --json it lists what you may do now: on a terminal to pick
    by number or words and confirm, else with how to answer. The action is signed with
    your key and applied at once; a refusal is told to you only."""
    sess.game(game_id)
    if action_json is not None and (say is not None or picks):
        raise click.UsageError("give the action one way: --json, or --say/--pick")
    api = sess.api(game_id)
    ident = sess.identity(who, game_id, "seat")
    assert ident is not None
    seat_no = seat_of(api, ident, game_id)
    sentence = ""
    if action_json is not None:
        body: Any = _load_order(action_json, "--json")
    else:
        try:
            chosen = choose(api, sess.store, game_id, ident, "action", say, picks)
        except ApiError as exc:
            if exc.code != "no_action":
                raise
            raise Fail("no_action", "there is nothing you may do unprompted now") from None
        if chosen is None:
            return
        body, sentence = chosen
    out = api.act(game_id, seat_no, action_token(ident.key, game_id, seat_no, body))
    said = f": {sentence.rstrip('.')}." if sentence else ""
    click.echo(f"action taken in step {out.get('phase')} ({ident.name}){said}")
    for ev in out.get("events") or []:
        if ev.get("text"):
            click.echo(f"  {ev['text']}")


def _load_order(text: str, where: str) -> dict[str, Any]:
    try:
        body = json.loads(text)
    except ValueError as exc:
        raise click.BadParameter(f"{where} is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise click.BadParameter(f"{where}: an order is a JSON object")
    return body


@cli.command()
@click.argument("game_id", metavar="GAME")
@as_option("Watch as this seat's identity (default: the one remembered for GAME, else the public)")
@click.option("--interval", type=float, default=2.0, show_default=True, help="Seconds between polls.")
@click.option("--after", type=int, default=0, show_default=True,
              help="Start after this event id (as this identity numbers its events: 1, 2, 3, ...).")
@click.option("--once", is_flag=True, help="Print the events there are and exit.")
@click.option("--json", "as_json", is_flag=True, help="Print each event as a line of JSON (for scripts).")
@url_option
@pass_session
def watch(sess: Session, game_id: str, who: str | None, interval: float, after: int, once: bool,
          as_json: bool) -> None:
    """Print what happens in the game, a sentence per event, until it is finished."""
    sess.game(game_id)
    ident = sess.identity(who, game_id, "seat", required=False)
    key = reader_key(ident, game_id)
    api = sess.api(game_id)
    g = api.game(game_id)
    names, game = names_in(g), title_of(g.get("title"))
    etag: tuple[int, str] | None = None  # an ETag is only good for the `after` it was fetched with
    try:
        while True:
            try:
                page, tag = api.events(game_id, after, key, etag[1] if etag and etag[0] == after else None)
            except ApiError as exc:
                if key is None or exc.code not in ("unknown_key", "bad_public_key"):
                    raise
                # The seat was given to a bot or another key: watch on as the public.
                click.echo(f"(this identity no longer holds a seat in game {game_id}: "
                           "watching what the public sees)", err=True)
                key = None
                continue
            finished = False
            if page is not None:
                for ev in page.get("items", []):
                    if as_json:
                        click.echo(compact(ev))
                    elif text := words.describe(game, ev, names):
                        click.echo(event_line(ev, text))
                    finished = finished or ev.get("type") == "game_finished"
                etag = (after, tag) if tag else None
                after = int(page.get("next", after))
                if page.get("more") and not finished:
                    continue
            if finished or once:
                return
            time.sleep(max(interval, 0.0))
    except KeyboardInterrupt:
        return


@cli.command()
@click.argument("game_id", metavar="GAME")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@url_option
@pass_session
@click.pass_context
def verify(ctx: click.Context, sess: Session, game_id: str, as_json: bool) -> None:
    """Check a finished game from its published history: the seed against the commitment
    made at the start, then every step replayed. Exit status 0 when it checks out."""
    sess.game(game_id)
    api = sess.api(game_id)
    try:
        doc = api.history(game_id)
    except ApiError as exc:
        if exc.status == 403:
            raise Fail("game_not_over", f"game {game_id} is not over yet: its history, with the seed, is "
                                        "published when it ends; verify it then") from None
        raise
    try:
        from engine.core.verify import verify_history
    except ImportError:
        raise Fail("no_verifier", "this kontor has no history checker (engine.core.verify)") from None
    g = api.game(game_id)
    for field, value in (("title", g.get("title")), ("seats", g.get("seats")), ("options", g.get("options")),
                         ("result", g.get("result"))):
        if field not in doc and value is not None:
            doc[field] = value  # a server that publishes the seed and orders only
    report = verify_history(doc)
    ok = bool(getattr(report, "ok", False))
    if as_json:
        as_dict = getattr(report, "as_dict", None)
        click.echo(pretty(as_dict() if callable(as_dict) else {"ok": ok, "lines": list(report.lines)}))
    else:
        for line in report.lines:
            click.echo(line)
        click.echo(f"game {game_id}: " + ("it checks out." if ok else "it does NOT check out."))
    ctx.exit(0 if ok else 1)


# -- in-game messages -------------------------------------------------------------------
def parse_recipients(text: str) -> str | list[int]:
    """`all`, or seat numbers separated by commas (`1,2`)."""
    t = text.strip().lower()
    if t == "all":
        return "all"
    parts = [p.strip() for p in t.split(",")]
    if not all(p.isdigit() for p in parts):
        raise Fail("bad_recipients", f"--to {text!r}: use all, or seat numbers separated by commas (e.g. 1,2)")
    return [int(p) for p in parts]


def writer_text(writer: int | str, names: dict[int, str | None]) -> str:
    """`Bob (seat 1)`, `seat 1` for a seat without a name, or `host`."""
    if not isinstance(writer, int):
        return str(writer)
    name = names.get(writer)
    return f"{name} (seat {writer})" if name else f"seat {writer}"


def message_lines(m: dict[str, Any], names: dict[int, str | None]) -> list[str]:
    """A message: a head line (id, time, step, from, to), then its text, indented."""
    when = clock(m.get("at"), "%Y-%m-%d %H:%M")
    to = "all" if m.get("to") == "all" else ", ".join(writer_text(s, names) for s in m.get("to") or []) + " (private)"
    head = f"#{m.get('id')} {when} step {m.get('phase')} {writer_text(m.get('from', '?'), names)} to {to}:"
    return [head, *(f"    {line}" for line in str(m.get("text", "")).split("\n"))]


@cli.command()
@click.argument("game_id", metavar="GAME")
@click.argument("text", nargs=-1, required=True)
@as_option("Write as this identity (a seat's; a host's writes public announcements)")
@click.option("--to", "to_text", default="all", show_default=True, metavar="all|SEATS",
              help="all, or seat numbers separated by commas for a private message (e.g. 1,2).")
@url_option
@pass_session
def message(sess: Session, game_id: str, text: tuple[str, ...], who: str | None, to_text: str) -> None:
    """Write an in-game message to everyone, or privately to some seats. TEXT - reads it from stdin."""
    sess.game(game_id)
    to = parse_recipients(to_text)
    body = " ".join(text)
    if body == "-":
        body = sys.stdin.read().rstrip("\n")
    ident = sess.identity(who, game_id, "seat")
    key = reader_key(ident, game_id)
    assert key is not None
    sent = sess.api(game_id).post_message(game_id, to, body, key)
    audience = "to everyone" if sent["to"] == "all" else f"privately to {seats_text(sent['to'])}"
    click.echo(f"message #{sent['id']} sent {audience} (step {sent['phase']})")


@cli.command()
@click.argument("game_id", metavar="GAME")
@as_option("Read as this seat's identity (default: the one remembered for GAME, else the public)")
@click.option("--after", type=int, default=0, show_default=True,
              help="Only messages after this event id (this identity's own, as `watch` shows them).")
@click.option("--json", "as_json", is_flag=True, help="Print the messages as JSON.")
@url_option
@pass_session
def messages(sess: Session, game_id: str, who: str | None, after: int, as_json: bool) -> None:
    """The in-game messages you may see, oldest first: public ones, and your private ones."""
    sess.game(game_id)
    ident = sess.identity(who, game_id, "seat", required=False)
    key = reader_key(ident, game_id)
    api = sess.api(game_id)
    items: list[dict[str, Any]] = []
    while True:
        page = api.messages(game_id, after, key, limit=500)
        items += page.get("items", [])
        after = int(page.get("next", after))
        if not page.get("more"):
            break
    if as_json:
        click.echo(pretty(items))
        return
    if not items:
        click.echo("no messages yet")
        return
    names = {p["seat"]: p.get("name") for p in api.seats(game_id)}
    for m in items:
        for line in message_lines(m, names):
            click.echo(line)


# -- rematch (issue 25) -------------------------------------------------------------------
@game.command("rematch")
@click.argument("game_id", metavar="GAME")
@as_option("The host identity")
@click.option("--same-host-key", is_flag=True,
              help="Host the rematch with this game's host key (default: a fresh key of its own, as for a new game).")
@click.option("--json", "as_json", is_flag=True, help="Print the rematch's game as JSON.")
@url_option
@pass_session
def game_rematch(sess: Session, game_id: str, who: str | None, same_host_key: bool, as_json: bool) -> None:
    """Start a rematch of a finished game (host): the same seats and options, a new seed.

    The new game starts at once. This key file learns it: the host's identity hosts it, and
    every identity here that holds a seat in the finished game holds the same seat in the
    rematch, so `kontor status NEWGAME` and `kontor order NEWGAME` just work. Asked again,
    it answers the same rematch."""
    sess.game(game_id)
    key = sess.host_key(who, game_id)
    host = sess.identity(who, game_id, "host")
    assert host is not None
    fresh = None if same_host_key else SigningKey.generate()
    api = sess.api(game_id)
    g, made = api.rematch(game_id, key, fresh.public if fresh else None)
    new = g["id"]
    learned: dict[int, str] = {}
    with sess.store.edit() as store:
        for hosting in (fresh, key):
            if hosting is not None and g.get("host_kid") == hosting.kid:
                store.remember_host(host.name, new, api.url, hosting)
                break
        for p in g.get("players") or []:
            ident = store.by_public(p["public_key"]) if p.get("public_key") else None
            if ident is not None:
                store.remember_seat(ident.name, new, api.url, int(p["seat"]))
                learned[int(p["seat"])] = ident.name
    if as_json:
        click.echo(pretty(g))
        return
    names = names_in(g)
    seats = [words.seat_name(names, s) + (f" (your identity {learned[s]})" if s in learned else "")
             for s in range(int(g.get("seats") or 0))]
    ph = g.get("phase") or {}
    waits = words.listing([words.seat_name(names, s) for s in ph.get("requested") or []])
    was = "started" if made else "was started before"
    click.echo(f"the rematch of game {game_id} {was}: game {new}, “{g.get('name')}”, with {words.listing(seats)}")
    if ph.get("id") is not None:
        click.echo(f"step {ph['id']} waits for {waits}")
    first = next((learned[s] for s in ph.get("requested") or [] if s in learned), None)
    if first is not None:
        click.echo(f"next: `kontor status {new} --as {first}`, then `kontor order {new} --as {first} ...`", err=True)
# -- rollback (issue 25) ------------------------------------------------------------------
def rollback_lines(out: dict[str, Any]) -> list[str]:
    """What a rollback answer says, in words."""
    lines = [out["text"]] if out.get("text") else []
    pending = out.get("pending")
    if pending:
        lines.append(f"{pending['text']} Why: {pending['reasons']}. It lapses on "
                     f"{words.utc_time(pending['expires_at'])} or when the open step ends.")
    return lines


@game.command("rollback")
@click.argument("game_id", metavar="GAME")
@click.option("--to", "to_phase", type=int, metavar="STEP",
              help="The earlier step to go back to; without it, the steps you may pick are listed.")
@click.option("--withdraw", is_flag=True, help="Withdraw the pending proposal instead.")
@as_option("The host identity")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
@url_option
@pass_session
def game_rollback(sess: Session, game_id: str, to_phase: int | None, withdraw: bool, who: str | None,
                  as_json: bool) -> None:
    """Roll the game back to an earlier step (host). It applies at once when the steps undone
    revealed nothing hidden; else every human player must agree first (`kontor rollback agree`)."""
    sess.game(game_id)
    api = sess.api(game_id)
    if to_phase is None and not withdraw:
        listed = api.rollback_options(game_id)
        if as_json:
            click.echo(pretty(listed))
            return
        if listed.get("pending"):
            click.echo(listed["pending"]["text"])
        click.echo(f"The open step is {listed['phase']}. You may go back to:")
        for step in listed["steps"]:
            click.echo(f"  {step['text']}")
        click.echo(f"next: `kontor game rollback {game_id} --to STEP`", err=True)
        return
    key = sess.host_key(who, game_id)
    out = api.rollback_withdraw(game_id, key) if withdraw else api.rollback(game_id, int(to_phase or 0), key)
    if as_json:
        click.echo(pretty(out))
        return
    for line in rollback_lines(out):
        click.echo(line)


@cli.group(cls=click.Group)
def rollback() -> None:
    """Answer the host's proposal to roll the game back (as a seat)."""


def _consent(sess: Session, game_id: str, who: str | None, agree: bool, as_json: bool) -> None:
    sess.game(game_id)
    ident = sess.identity(who, game_id, "seat")
    key = reader_key(ident, game_id)
    assert key is not None
    out = sess.api(game_id).rollback_consent(game_id, agree, key)
    if as_json:
        click.echo(pretty(out))
        return
    click.echo({"applied": "You agreed, and so did every other player: the game is back.",
                "agreed": "Your agreement is recorded; the other players are still asked.",
                "refused": "You refused: the host's proposal is dropped."}.get(out["status"], out["status"]))
    for line in rollback_lines(out):
        click.echo(line)


@rollback.command("agree")
@click.argument("game_id", metavar="GAME")
@as_option("The seat identity")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
@url_option
@pass_session
def rollback_agree(sess: Session, game_id: str, who: str | None, as_json: bool) -> None:
    """Agree to the host's proposal to roll the game back (the last agreement applies it)."""
    _consent(sess, game_id, who, True, as_json)


@rollback.command("refuse")
@click.argument("game_id", metavar="GAME")
@as_option("The seat identity")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
@url_option
@pass_session
def rollback_refuse(sess: Session, game_id: str, who: str | None, as_json: bool) -> None:
    """Refuse the host's proposal to roll the game back (one refusal drops it)."""
    _consent(sess, game_id, who, False, as_json)
# -- the host's clock (issue 25) -------------------------------------------------------
def clock_line(g: dict[str, Any]) -> str:
    """Where the host's clock stands, in words: paused since when, or the deadline."""
    ph = g.get("phase") or {}
    if g.get("paused_since"):
        return (f"game {g['id']} is paused since {clock(g['paused_since'], '%Y-%m-%d %H:%M %Z')}: the clock is "
                f"stopped (deadline as it stands: {deadline_text(ph.get('deadline'))}; it moves on by the time "
                "paused when you resume)")
    return f"game {g['id']}: step {ph.get('id')}, deadline {deadline_text(ph.get('deadline'))}"


@game.command("pause")
@click.argument("game_id", metavar="GAME")
@as_option("The host identity")
@click.option("--json", "as_json", is_flag=True, help="Print the game as JSON.")
@url_option
@pass_session
def game_pause(sess: Session, game_id: str, who: str | None, as_json: bool) -> None:
    """Pause the game (host): the clock stops until you resume it. Players may still
    read, write messages and enter or change their orders; nothing resolves."""
    sess.game(game_id)
    g = sess.api(game_id).pause(game_id, sess.host_key(who, game_id))
    click.echo(pretty(g) if as_json else clock_line(g))
    if not as_json:
        click.echo(f"next: `kontor game resume {game_id}` when the game goes on", err=True)


@game.command("resume")
@click.argument("game_id", metavar="GAME")
@as_option("The host identity")
@click.option("--json", "as_json", is_flag=True, help="Print the game as JSON.")
@url_option
@pass_session
def game_resume(sess: Session, game_id: str, who: str | None, as_json: bool) -> None:
    """Resume a paused game (host): the deadline moves on by the time it was paused."""
    sess.game(game_id)
    g = sess.api(game_id).resume(game_id, sess.host_key(who, game_id))
    click.echo(pretty(g) if as_json else f"resumed; {clock_line(g)}")


@game.command("extend")
@click.argument("game_id", metavar="GAME")
@click.argument("by", metavar="DURATION", type=Duration())
@as_option("The host identity")
@click.option("--json", "as_json", is_flag=True, help="Print the game as JSON.")
@url_option
@pass_session
def game_extend(sess: Session, game_id: str, by: int, who: str | None, as_json: bool) -> None:
    """Extend the open step's deadline (host) by DURATION: seconds, or 30m, 12h, 2d, 1w,
    1d12h. Allowed while paused too."""
    sess.game(game_id)
    g = sess.api(game_id).extend(game_id, by, sess.host_key(who, game_id))
    click.echo(pretty(g) if as_json else f"extended by {words.duration(by)}; {clock_line(g)}")


# -- absences (issue 25) -------------------------------------------------------------------
def absence_day(text: str, name: str) -> str:
    """A `--from`/`--until` value as the API takes it: a date (`2026-12-20`: its midnight
    UTC) or a UTC time (`2026-12-20T08:00:00Z`)."""
    value = text.strip()
    try:
        if len(value) == 10:
            datetime.strptime(value, "%Y-%m-%d")
        else:
            at = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value)
            if at.utcoffset() is None or at.utcoffset() != timedelta(0):
                raise ValueError(value)
    except ValueError:
        raise Fail("bad_absence", f"--{name} {text!r}: give a date (2026-12-20) or a UTC time "
                                  "(2026-12-20T08:00:00Z)") from None
    return value


def away_lines(game_id: str, rec: dict[str, Any]) -> list[str]:
    """A seat's absences in words."""
    out = [f"absences of seat {rec.get('seat')} in game {game_id}: {rec.get('text')}"]
    for a in rec.get("absences") or []:
        out.append(f"  {words.away_span(a['from'], a['until'])}")
    return out


@seat.command("away")
@click.argument("game_id", metavar="GAME")
@as_option("The seat's identity")
@click.option("--from", "starts", multiple=True, metavar="DATE",
              help="When an absence begins: 2026-12-20 (midnight UTC) or 2026-12-20T08:00:00Z. Repeat with "
                   "--until for several absences.")
@click.option("--until", "ends", multiple=True, metavar="DATE", help="When you are back (the same forms).")
@click.option("--replace", is_flag=True, help="Replace the absences planned before (else they are kept).")
@click.option("--json", "as_json", is_flag=True, help="Print the JSON answer.")
@url_option
@pass_session
def seat_away(sess: Session, game_id: str, who: str | None, starts: tuple[str, ...], ends: tuple[str, ...],
              replace: bool, as_json: bool) -> None:
    """Declare dates you are away (added to those planned), or list them (no --from).

    `--until DATE` alone: away from now until then.

    While you are away, the game either waits for you (a deadline in your absence moves to its end, within the
    game's limit) or a bot plays your decisions, as the host chose; afterwards you are told what was played."""
    sess.game(game_id)
    if not starts and len(ends) == 1:  # `--until` alone: away from now (as a mail's "away until 3 January")
        starts = (datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),)
    if len(starts) != len(ends):
        raise Fail("bad_absence", "give one --until for each --from (or one --until alone: away from now)")
    ident = sess.identity(who, game_id, "seat")
    assert ident is not None
    api = sess.api(game_id)
    seat_no = seat_of(api, ident, game_id)
    if starts:
        planned = [] if replace else list(api.absences(game_id, seat_no).get("absences") or [])
        added = [{"from": absence_day(a, "from"), "until": absence_day(b, "until")} for a, b in zip(starts, ends,
                                                                                                   strict=True)]
        rec = api.set_absences(game_id, seat_no, [*planned, *added], ident.key)
    else:
        rec = api.absences(game_id, seat_no)
    if as_json:
        click.echo(pretty(rec))
        return
    for line in away_lines(game_id, rec):
        click.echo(line)


@seat.command("back")
@click.argument("game_id", metavar="GAME")
@as_option("The seat's identity")
@url_option
@pass_session
def seat_back(sess: Session, game_id: str, who: str | None) -> None:
    """You are back: clear your absences (one under way ends now)."""
    sess.game(game_id)
    ident = sess.identity(who, game_id, "seat")
    assert ident is not None
    api = sess.api(game_id)
    seat_no = seat_of(api, ident, game_id)
    api.set_absences(game_id, seat_no, [], ident.key)
    click.echo(f"welcome back: seat {seat_no} of game {game_id} has no absence planned")


@game.command("absence-policy")
@click.argument("game_id", metavar="GAME")
@as_option("The host identity")
@click.option("--absence", type=click.Choice(["extend", "bot"]),
              help="extend: a deadline in a seat's absence moves to its end; bot: a bot plays the away seat.")
@click.option("--absence-limit", type=Duration(), help="The most absences extend one step (e.g. 7d).")
@click.option("--absence-bot", help="The bot kind that plays an away seat.")
@url_option
@pass_session
def game_absence_policy(sess: Session, game_id: str, who: str | None, absence: str | None,
                        absence_limit: int | None, absence_bot: str | None) -> None:
    """Show the game's absence policy, or change it (host), while nobody is away."""
    sess.game(game_id)
    api = sess.api(game_id)
    body = {k: v for k, v in (("absence", absence), ("absence_limit_seconds", absence_limit),
                              ("absence_bot", absence_bot)) if v is not None}
    g = api.update_absence_policy(game_id, body, sess.host_key(who, game_id)) if body else api.game(game_id)
    click.echo(absence_policy_text(g.get("deadlines") or {}))


def absence_policy_text(d: dict[str, Any]) -> str:
    """The absence policy in words."""
    if d.get("absence") == "bot":
        return f"while a seat is away, a {d.get('absence_bot') or 'bot'} bot plays its decisions"
    return (f"while a seat is away, a deadline in its absence moves to its end plus the step's length, by at most "
            f"{words.span(int(d.get('absence_limit_seconds') or 0))} per step")


def away_status(g: dict[str, Any], names: list[str], now: datetime | None = None) -> str | None:
    """`Away: Carla until 3 January; Bruno 20 December to 3 January.` (None: nobody)."""
    at = now or datetime.now(UTC)
    said = []
    for p in g.get("players", []):
        for a in (p.get("absences") or [])[:1]:
            who = words.seat_name(names, p["seat"])
            if datetime.fromisoformat(a["from"]) <= at:
                said.append(f"{who} until {words.day(a['until'])}")
            else:
                said.append(f"{who} {words.away_span(a['from'], a['until'])}")
    return f"Away: {'; '.join(said)}." if said else None


def main() -> None:
    """The `kontor` console script."""
    cli(prog_name="kontor")


if __name__ == "__main__":
    main()
