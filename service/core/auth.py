"""Who is calling: signed bearer tokens for reads, signed order tokens for orders.

Both are compact JWS tokens signed with the caller's Ed25519 key and named by its `kid`
(the RFC 7638 thumbprint of the key registered for a seat, or the host's key).

* Bearer (`Authorization: Bearer <jws>`): claims `game`, `iat`, `exp`, with
  `exp - iat` at most 5 minutes. No bearer: the public.
* Order: claims `game`, `phase`, `seat`, `iat`, `jti` (a one-time id) and `order`, and
  optionally `exp`. Refused when older than `order_max_age`; its `jti` is remembered for
  as long, so a replayed token is refused.
* Action (an unprompted action, `service.core.actions`): claims `game`, `seat`, `iat`,
  `jti` and `action`, optionally `exp`; no `phase` (an action is taken in whatever step is
  open when it arrives). The same age bound; its `jti` is remembered by the game for as
  long, recorded atomically with the action.

Each kind's claims are checked by one function (`check_bearer_claims`,
`check_order_claims`), which every path calls: the route, mail, and the order fast path
(`service.http.fastpath`, which only skips Flask). Every claim has exactly one type: a
`seat` of `false` or `0.0`, a `phase` of `7.0`, an `iat` of `NaN` (which passes every
comparison as false, so the token would never expire) or a `jti` of non-ASCII digits
are refused, not let through by the luck of equality.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from service.config import Settings
from service.core.errors import Problem
from service.core.kontor import Caller, Kontor
from service.protocol.crypto import PublicKey, TokenError, token_header, verify
from service.store import Intake, OrderKey

#: Times in claims are whole seconds since 1970, up to the largest whole number a double
#: (Lua's number: order.lua compares them) holds exactly.
MAX_TIME = 2**53 - 1
#: A one-time id: 8 to 128 ASCII letters, digits, `-` or `_` (the regex is ASCII by its class).
JTI = re.compile(r"[A-Za-z0-9_-]{8,128}")


@functools.lru_cache(maxsize=4096)
def _public_key(x: str) -> PublicKey:
    return PublicKey.from_text(x)


def _key_of(gid: str, kid: str, holder: str | None, rec: dict[str, Any] | None,
            host_key: str | None) -> tuple[Caller, PublicKey]:
    """Who holds `kid` in the game and their public key. `host_key` is None only when
    there is no such game (every game has a host key)."""
    if holder is None:
        if host_key is None:
            raise Problem("game_not_found", f"no game {gid!r}")
        raise Problem("unknown_key", "no seat and no host of this game holds that key")
    rec = rec or {}
    if holder != "host" and rec.get("kid") != kid:  # replaced a moment ago
        raise Problem("unknown_key", "that key no longer holds a seat in this game")
    try:  # a key stored before keys were checked as points (`PublicKey.from_text`) may be refused now
        key = _public_key(host_key if holder == "host" else rec["public_key"])
    except ValueError as exc:
        raise Problem("bad_public_key", f"the key registered for this {'host' if holder == 'host' else 'seat'} "
                                        f"is refused ({exc}); the host can register another") from None
    return ("host" if holder == "host" else int(holder)), key


def _verified(k: Kontor, gid: str, token: str) -> tuple[Caller, dict[str, Any], float]:
    """Who signed a read (bearer) token. Ruling: a former seat key (its seat was given to
    a bot or another key by the host) reads as the public does, a spectator: it verifies
    with the key it held, and its caller is "public"."""
    try:
        kid = token_header(token)["kid"]
        holder, rec, host_key, now = k.store.credentials(gid, kid)
        former = k.store.former(gid, kid) if holder is None and host_key is not None else None
        if former is not None:
            caller: Caller = "public"
            key = _public_key(former["public_key"])
        else:
            caller, key = _key_of(gid, kid, holder, rec, host_key)
        claims = verify(token, key)
    except TokenError as exc:
        raise Problem(exc.code, exc.message) from None
    except ValueError as exc:  # a former key stored before keys were checked as points
        raise Problem("unknown_key", f"that key no longer holds a seat in this game ({exc})") from None
    return caller, claims, now


# -- the claims ----------------------------------------------------------------------------
def _game(claims: dict[str, Any], gid: str) -> str:
    game = claims.get("game")
    if type(game) is not str:
        raise Problem("bad_claims", "the token names no game (its `game` claim, a text)")
    if game != gid:
        raise Problem("bad_claims", "the token is for another game")
    return game


def _time(claims: dict[str, Any], name: str, what: str, required: bool = True) -> int | None:
    """A time claim: a whole number of seconds since 1970 (not a bool, not a float)."""
    if name not in claims and not required:
        return None
    value = claims.get(name)
    if type(value) is not int or not 0 <= value <= MAX_TIME:
        raise Problem("bad_claims", f"the token has no {name} ({what}, whole seconds since 1970)")
    return value


def _whole(claims: dict[str, Any], name: str, wanted: int) -> int:
    value = claims.get(name)
    if type(value) is not int or value != wanted:
        raise Problem("bad_claims", f"the token is signed for {name} {value!r}, not {name} {wanted}")
    return value


def _check_time(iat: int, exp: int | None, now: float, skew: int, max_age: int | None, what: str) -> None:
    """The time bounds of a token on the server clock `now`. order.lua compares an
    order token's `iat` and `exp` in these very expressions (doubles both)."""
    if iat > now + skew:
        raise Problem("token_from_future", "the token's iat is in the future; check your clock")
    if max_age is not None and iat < now - max_age:
        raise Problem("token_expired", f"{what} tokens are accepted for {max_age} seconds after iat")
    if exp is not None and exp <= now - skew:
        raise Problem("token_expired", f"the {what} token has expired"
                                       + ("; sign a new one" if what == "bearer" else ""))


@dataclass(frozen=True)
class BearerClaims:
    game: str
    iat: int
    exp: int


def check_bearer_claims(claims: dict[str, Any], gid: str, settings: Settings, now: float) -> BearerClaims:
    """A bearer token's claims, each of its one type, for this game, living at most
    `bearer_max_ttl`, and in their time bounds on the server clock `now`."""
    game = _game(claims, gid)
    iat = _time(claims, "iat", "issue time")
    exp = claims.get("exp")
    if type(exp) is not int or not 0 <= exp <= MAX_TIME:
        raise Problem("bad_claims", "a bearer token needs exp (expiry, whole seconds since 1970)")
    assert iat is not None
    if exp < iat:
        raise Problem("bad_claims", "the bearer token expires before it was issued")
    if exp - iat > settings.bearer_max_ttl:
        raise Problem("bad_claims", f"a bearer token may live at most {settings.bearer_max_ttl} seconds")
    _check_time(iat, exp, now, settings.clock_skew, None, "bearer")
    return BearerClaims(game, iat, exp)


@dataclass(frozen=True)
class OrderClaims:
    game: str
    phase: int
    seat: int
    iat: int
    exp: int | None
    jti: str
    order: dict[str, Any]


def check_order_claims(claims: dict[str, Any], gid: str, phase: int, seat: int, settings: Settings,
                       now: float | None) -> OrderClaims:
    """An order token's claims, each of its one type: for this game, seat and phase, a
    well-formed one-time id, an order (a JSON object), and in their time bounds on the
    server clock `now`.

    `now` is None only for the fast path, which cannot read the server clock without
    a round trip: its store script (order.lua) compares `iat` and `exp` with the time
    bounds, in `_check_time`'s very expressions, as it stores; on any refusal the route
    answers, through this function with the clock."""
    game = _game(claims, gid)
    iat = _time(claims, "iat", "issue time")
    assert iat is not None
    exp = _time(claims, "exp", "expiry", required=False)
    _whole(claims, "seat", seat)
    _whole(claims, "phase", phase)
    jti, order = _one_time(claims, "order")
    if now is not None:
        _check_time(iat, exp, now, settings.clock_skew, settings.order_max_age, "order")
    return OrderClaims(game, phase, seat, iat, exp, jti, order)


# -- the callers ---------------------------------------------------------------------------
def bearer_caller(k: Kontor, gid: str, authorization: str | None) -> Caller:
    """The caller of a read: a seat, "host", or "public" without a bearer token."""
    if not authorization:
        return "public"
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Problem("authentication_required", "use 'Authorization: Bearer <signed token>'")
    caller, claims, now = _verified(k, gid, token.strip())
    check_bearer_claims(claims, gid, k.settings, now)
    return caller


def bearer_session(k: Kontor, gid: str, authorization: str | None) -> tuple[Caller, int | None, str | None]:
    """The caller of a long read (the live stream), when its bearer token expires (epoch
    seconds; None without a token: the public's stream has no token to expire) and the
    `kid` that signed it (None without a token), whose rights the stream re-checks."""
    if not authorization:
        return "public", None, None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Problem("authentication_required", "use 'Authorization: Bearer <signed token>'")
    caller, claims, now = _verified(k, gid, token.strip())
    exp = check_bearer_claims(claims, gid, k.settings, now).exp
    return caller, exp, str(token_header(token.strip())["kid"])


def require(caller: Caller, who: str | int, or_host: bool = False) -> None:
    """Refuse unless `caller` is `who` (a seat, or "host"); `or_host`: the host may too."""
    if or_host and caller == "host":
        return
    if caller == "public":
        raise Problem("authentication_required", "sign a bearer token with your key")
    if who == "host" and caller != "host":
        raise Problem("not_host")
    if isinstance(who, int) and caller != who:
        raise Problem("wrong_seat", f"this needs seat {who}'s key")


def signed_order(k: Kontor, gid: str, phase: int, seat: int, token: str) -> tuple[dict[str, Any], Intake]:
    """Verify an order token for `seat` in `phase`: its claims (checked by
    `check_order_claims`), and the store read it was checked against (one round trip),
    which `Kontor.submit` takes as its snapshot."""
    token, kid = _token_kid(token, "an order")
    snap = k.store.intake(gid, kid)
    claims, key = _seat_claims(token, gid, kid, seat, snap.holder, snap.seat, snap.meta.get("host_key"))
    check_order_claims(claims, gid, phase, seat, k.settings, snap.now)
    if snap.seat is not None and snap.meta.get("title"):
        # This seat's key verified: the fast path (service/http/fastpath.py) may check its next
        # tokens without reading the store first (the store re-checks the key as it stores).
        k.store.remember_key(gid, kid, OrderKey(seat, key.x, key, snap.meta["title"]))
    return claims, snap


def seat_key(k: Kontor, gid: str, kid: str) -> OrderKey | None:
    """The seat key `kid` names in the game, read as `signed_order` reads it (one round
    trip, `Store.intake`, which also holds the open step's state for the next read) and
    kept (`Store.remember_key`) for the fast order path, which has not seen this key
    verify an order in this process yet; None when `kid` holds no seat (the host's key, a
    former key, no such game), which the full path then answers. Only ever a hint: the
    store re-checks the key as it stores an order."""
    snap = k.store.intake(gid, kid)
    try:
        caller, key = _key_of(gid, kid, snap.holder, snap.seat, snap.meta.get("host_key"))
    except Problem:
        return None
    if not isinstance(caller, int) or snap.seat is None or not snap.meta.get("title"):
        return None
    entry = OrderKey(caller, key.x, key, snap.meta["title"])
    k.store.remember_key(gid, kid, entry)
    return entry


@dataclass(frozen=True)
class ActionClaims:
    game: str
    seat: int
    iat: int
    exp: int | None
    jti: str
    action: dict[str, Any]


def check_action_claims(claims: dict[str, Any], gid: str, seat: int, settings: Settings,
                        now: float) -> ActionClaims:
    """An action token's claims, each of its one type: for this game and seat, a
    well-formed one-time id, an action (a JSON object), in their time bounds."""
    game = _game(claims, gid)
    iat = _time(claims, "iat", "issue time")
    assert iat is not None
    exp = _time(claims, "exp", "expiry", required=False)
    _whole(claims, "seat", seat)
    jti, action = _one_time(claims, "action")
    _check_time(iat, exp, now, settings.clock_skew, settings.order_max_age, "action")
    return ActionClaims(game, seat, iat, exp, jti, action)


def signed_action(k: Kontor, gid: str, seat: int, token: str) -> ActionClaims:
    """Verify an action token for `seat`: signed by the key that holds the seat now, its
    claims checked by `check_action_claims`."""
    token, kid = _token_kid(token, "an action")
    holder, rec, host_key, now = k.store.credentials(gid, kid)
    claims, _ = _seat_claims(token, gid, kid, seat, holder, rec, host_key)
    return check_action_claims(claims, gid, seat, k.settings, now)


def _token_kid(token: Any, what: str) -> tuple[str, str]:
    """A compact JWS (`what` names it in the refusal) without the blanks a mail may put
    in it, and the `kid` of its header."""
    if not isinstance(token, str) or token.count(".") != 2:
        raise Problem("malformed_token", f"{what} is a compact JWS (three base64url parts)")
    token = "".join(token.split())
    try:
        return token, token_header(token)["kid"]
    except TokenError as exc:
        raise Problem(exc.code, exc.message) from None


def _seat_claims(token: str, gid: str, kid: str, seat: int, holder: str | None, rec: dict[str, Any] | None,
                 host_key: str | None) -> tuple[dict[str, Any], PublicKey]:
    """The claims of `token`, verified with the key `kid` as the store holds it (its
    holder, seat record and the host's key), which must hold `seat`; and that key."""
    try:
        caller, key = _key_of(gid, kid, holder, rec, host_key)
        claims = verify(token, key)
    except TokenError as exc:
        raise Problem(exc.code, exc.message) from None
    if caller != seat:
        raise Problem("wrong_seat", f"the key belongs to {'the host' if caller == 'host' else f'seat {caller}'}")
    return claims, key


def _one_time(claims: dict[str, Any], field: str) -> tuple[str, dict[str, Any]]:
    """A signed token's one-time id and its payload object (`order` or `action`)."""
    jti = claims.get("jti")
    if type(jti) is not str or not JTI.fullmatch(jti):
        raise Problem("bad_claims", "jti must be a one-time id of 8 to 128 ASCII letters, digits, - or _")
    if field not in claims:
        raise Problem("bad_claims", f"the token carries no {field}")
    payload = claims[field]
    if type(payload) is not dict:
        raise Problem("malformed_order", f"an {field} is a JSON object")
    return jti, payload
