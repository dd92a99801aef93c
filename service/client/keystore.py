"""The `kontor` key file: named Ed25519 identities and the games each one hosts or plays.

One JSON document at `$KONTOR_HOME/keys.json` (default `~/.config/kontor/keys.json`):

    {"version": 2,
     "identities": {"alice": {"jwk": {...private JWK...}, "public": "...", "kid": "...",
                              "created_at": "...",
                              "games": {"<game id>": {"url": "...", "seat": 1,
                                                      "host": {"jwk": {...private JWK...},
                                                               "public": "...", "kid": "..."}},
                                        "<game id>": {"url": "...", "seat": 0}}}}}

An identity's own key is what it plays with. Each game it creates gets a fresh host key
of its own (`host`), because the server refuses the host's key as a seat key: so one
identity can host a game and hold a seat in it. Version 1 files (one `role` per game,
the identity's own key as host key) are read and rewritten as version 2 on the next edit.

It holds private keys, so it is only ever written with mode 0600 (through a temporary
file of that mode, renamed over the old one, so a crash never leaves half a file) in a
directory created with mode 0700. Edits take an advisory lock so that two `kontor`
commands running at once do not lose each other's changes.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from service.protocol.crypto import SigningKey

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: edits are not locked
    fcntl = None  # type: ignore[assignment]

DEFAULT_HOME = "~/.config/kontor"
FILE_NAME = "keys.json"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
VERSION = 2


class KeystoreError(Exception):
    """A problem with the key file or a name in it; the message is for the user."""


def home() -> Path:
    """The directory of the key file: `$KONTOR_HOME`, else `~/.config/kontor`."""
    return Path(os.environ.get("KONTOR_HOME") or DEFAULT_HOME).expanduser()


@dataclass
class Identity:
    """A named key pair, and the games it hosts or holds a seat in."""

    name: str
    jwk: dict[str, Any]
    created_at: str = ""
    games: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def key(self) -> SigningKey:
        return SigningKey.from_jwk(self.jwk)

    @property
    def public(self) -> str:
        return self.key.public

    @property
    def kid(self) -> str:
        return self.key.kid

    def hosts(self, game: str) -> bool:
        return "host" in self.games.get(game, {})

    def host_key(self, game: str) -> SigningKey | None:
        """The key this identity hosts `game` with, if it created it here."""
        host = self.games.get(game, {}).get("host")
        return SigningKey.from_jwk(host["jwk"]) if host else None

    def seat_in(self, game: str) -> int | None:
        seat = self.games.get(game, {}).get("seat")
        return int(seat) if seat is not None else None

    def public_games(self) -> dict[str, dict[str, Any]]:
        """The games as `kontor keys` shows them: host key's public half only."""
        out: dict[str, dict[str, Any]] = {}
        for gid, entry in sorted(self.games.items()):
            row: dict[str, Any] = {"url": entry.get("url"), "host": "host" in entry}
            if "seat" in entry:
                row["seat"] = entry["seat"]
            if "host" in entry:
                row["host_public"] = entry["host"]["public"]
                row["host_kid"] = entry["host"]["kid"]
            out[gid] = row
        return out

    def as_dict(self) -> dict[str, Any]:
        key = self.key
        return {"jwk": self.jwk, "public": key.public, "kid": key.kid, "created_at": self.created_at,
                "games": self.games}


def _host_entry(key: SigningKey) -> dict[str, Any]:
    return {"jwk": key.as_jwk(), "public": key.public, "kid": key.kid}


def _game_entry(entry: dict[str, Any], own_jwk: dict[str, Any]) -> dict[str, Any]:
    """A game entry in the version 2 shape; a version 1 entry (`role`) is converted."""
    out = {k: v for k, v in entry.items() if k != "role"}
    if entry.get("role") == "host":
        # version 1 hosted with the identity's own key; keep a copy as the game's host key
        out.setdefault("host", _host_entry(SigningKey.from_jwk(own_jwk)))
    if "host" in out and not isinstance(out["host"].get("jwk"), dict):
        raise ValueError("a game's host entry has no key")
    return out


class Keystore:
    """The key file. Read with `Keystore.load()`; change inside `with store.edit():`."""

    def __init__(self, directory: Path | None = None) -> None:
        self.dir = directory if directory is not None else home()
        self.path = self.dir / FILE_NAME
        self.identities: dict[str, Identity] = {}

    @classmethod
    def load(cls, directory: Path | None = None) -> Keystore:
        store = cls(directory)
        store.reload()
        return store

    def reload(self) -> None:
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            self.identities = {}
            return
        except OSError as exc:
            raise KeystoreError(f"cannot read {self.path}: {exc.strerror}") from None
        try:
            doc = json.loads(raw)
            version = doc.get("version", 1)
        except (ValueError, AttributeError) as exc:
            raise KeystoreError(f"{self.path} is not a kontor key file: {exc}") from None
        if not isinstance(version, int) or version > VERSION:
            raise KeystoreError(f"{self.path} is version {version!r}, written by a newer kontor; upgrade this one")
        try:
            self.identities = {
                name: Identity(name, rec["jwk"], rec.get("created_at", ""),
                               {gid: _game_entry(dict(e), rec["jwk"]) for gid, e in (rec.get("games") or {}).items()})
                for name, rec in doc.get("identities", {}).items()
            }
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise KeystoreError(f"{self.path} is not a kontor key file: {exc}") from None

    def loose_permissions(self) -> bool:
        """True when others than the owner may read the key file."""
        try:
            return bool(self.path.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO))
        except FileNotFoundError:
            return False

    # -- reading --------------------------------------------------------------------
    def get(self, name: str) -> Identity:
        try:
            return self.identities[name]
        except KeyError:
            known = ", ".join(sorted(self.identities)) or "none yet"
            raise KeystoreError(f"no identity {name!r} in {self.path} (known: {known}); "
                                f"make one with `kontor keygen --name {name}`") from None

    def by_public(self, public: str) -> Identity | None:
        return next((i for i in self.identities.values() if i.public == public), None)

    def players_of(self, game: str, role: str | None = None) -> list[Identity]:
        """The identities that remember `game`: that host it (`role="host"`), hold a
        seat in it (`role="seat"`), or either."""
        return [i for i in self.identities.values()
                if game in i.games and (role is None or role in i.games[game])]

    def url_of(self, game: str) -> str | None:
        """The server a game was created or joined on, as remembered."""
        for ident in self.identities.values():
            if game in ident.games and ident.games[game].get("url"):
                return str(ident.games[game]["url"])
        return None

    # -- changing -------------------------------------------------------------------
    @contextlib.contextmanager
    def edit(self) -> Iterator[Keystore]:
        """Lock, re-read, let the caller change, write atomically."""
        self._make_dir()
        fd = os.open(self.dir / f".{FILE_NAME}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            self.reload()
            yield self
            self._write()
        finally:
            os.close(fd)  # closing releases the lock

    def add(self, name: str, key: SigningKey, force: bool = False) -> Identity:
        if not NAME_RE.match(name):
            raise KeystoreError("a name is 1 to 64 letters, digits, '.', '_', '@' or '-', starting with a letter "
                                "or digit")
        if name in self.identities and not force:
            raise KeystoreError(f"an identity {name!r} exists already; pass --force to replace its key "
                                "(the old key is lost, and with it any seat it holds)")
        ident = Identity(name, key.as_jwk(), datetime.now(UTC).isoformat(timespec="seconds"))
        self.identities[name] = ident
        return ident

    def remember_host(self, name: str, game: str, url: str, key: SigningKey) -> None:
        """`name` hosts `game` with `key` (a key of the game's own, not the identity's)."""
        entry = self.get(name).games.setdefault(game, {})
        entry.update(url=url, host=_host_entry(key))

    def remember_seat(self, name: str, game: str, url: str, seat: int) -> None:
        """`name` holds `seat` of `game`; no other local identity does any more."""
        self.forget_seat(game, seat)
        entry = self.get(name).games.setdefault(game, {})
        entry.update(url=url, seat=seat)

    def forget_seat(self, game: str, seat: int) -> None:
        """No local identity holds `seat` of `game` (the host gave it to another key)."""
        for ident in self.identities.values():
            entry = ident.games.get(game)
            if entry is not None and entry.get("seat") == seat:
                del entry["seat"]
                if "host" not in entry:
                    del ident.games[game]

    def _make_dir(self) -> None:
        if not self.dir.exists():
            self.dir.mkdir(parents=True, mode=0o700)
            os.chmod(self.dir, 0o700)  # mkdir's mode is filtered through the umask

    def _write(self) -> None:
        doc = {"version": VERSION, "identities": {n: i.as_dict() for n, i in sorted(self.identities.items())}}
        # mkstemp creates the file 0600 before a single byte of a private key is in it
        fd, tmp = tempfile.mkstemp(prefix=f".{FILE_NAME}.", suffix=".tmp", dir=self.dir)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                os.fchmod(fh.fileno(), 0o600)
                json.dump(doc, fh, indent=2, sort_keys=True)
                fh.write("\n")
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
