"""Who is calling: signed bearer tokens for reads, signed order tokens for orders.

Both are compact JWS tokens signed with the caller's Ed25519 key and named by its `kid`
(the RFC 7638 thumbprint of the key registered for a seat, or the host's key).

* Bearer (`Authorization: Bearer <jws>`): claims `game`, `iat`, `exp`, with
  `exp - iat` at most 5 minutes. No bearer: the public.
* Order: claims `game`, `phase`, `seat`, `iat`, `jti` (a one-time id) and `order`.
  Refused when older than `order_max_age`; its `jti` is remembered for as long, so a
  replayed token is refused.
"""

from __future__ import annotations

import functools
from typing import Any

from service.core.errors import Problem
from service.core.kontor import Caller, Kontor
from service.protocol.crypto import PublicKey, TokenError, token_header, verify
from service.store import Intake, OrderKey


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
    if holder == "host":
        return "host", _public_key(host_key)  # type: ignore[arg-type]
    rec = rec or {}
    if rec.get("kid") != kid:  # replaced a moment ago
        raise Problem("unknown_key", "that key no longer holds a seat in this game")
    return int(holder), _public_key(rec["public_key"])


def _verified(k: Kontor, gid: str, token: str) -> tuple[Caller, dict[str, Any], float]:
    try:
        kid = token_header(token)["kid"]
        holder, rec, host_key, now = k.store.credentials(gid, kid)
        caller, key = _key_of(gid, kid, holder, rec, host_key)
        claims = verify(token, key)
    except TokenError as exc:
        raise Problem(exc.code, exc.message) from None
    return caller, _game_claims(gid, claims), now


def _game_claims(gid: str, claims: dict[str, Any]) -> dict[str, Any]:
    if claims.get("game") != gid:
        raise Problem("bad_claims", "the token is for another game")
    if not isinstance(claims.get("iat"), int | float):
        raise Problem("bad_claims", "the token has no iat (issue time)")
    return claims


def bearer_caller(k: Kontor, gid: str, authorization: str | None) -> Caller:
    """The caller of a read: a seat, "host", or "public" without a bearer token."""
    if not authorization:
        return "public"
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Problem("authentication_required", "use 'Authorization: Bearer <signed token>'")
    caller, claims, now = _verified(k, gid, token.strip())
    s = k.settings
    exp, iat = claims.get("exp"), claims["iat"]
    if not isinstance(exp, int | float):
        raise Problem("bad_claims", "a bearer token needs exp")
    if exp - iat > s.bearer_max_ttl:
        raise Problem("bad_claims", f"a bearer token may live at most {s.bearer_max_ttl} seconds")
    if iat > now + s.clock_skew:
        raise Problem("token_from_future", "the token's iat is in the future; check your clock")
    if exp <= now - s.clock_skew:
        raise Problem("token_expired", "the bearer token has expired; sign a new one")
    return caller


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
    """Verify an order token for `seat` in `phase`: its claims, and the store read it was
    checked against (one round trip), which `Kontor.submit` takes as its snapshot."""
    if not isinstance(token, str) or token.count(".") != 2:
        raise Problem("malformed_token", "an order is a compact JWS (three base64url parts)")
    token = "".join(token.split())
    try:
        kid = token_header(token)["kid"]
        snap = k.store.intake(gid, kid)
        caller, key = _key_of(gid, kid, snap.holder, snap.seat, snap.meta.get("host_key"))
        claims = _game_claims(gid, verify(token, key))
    except TokenError as exc:
        raise Problem(exc.code, exc.message) from None
    now = snap.now
    if caller != seat:
        raise Problem("wrong_seat", f"the key belongs to {'the host' if caller == 'host' else f'seat {caller}'}")
    check_order_claims(claims, phase, seat)
    s = k.settings
    if claims["iat"] > now + s.clock_skew:
        raise Problem("token_from_future", "the token's iat is in the future; check your clock")
    if claims["iat"] < now - s.order_max_age:
        raise Problem("token_expired", f"order tokens are accepted for {s.order_max_age} seconds after iat")
    exp = claims.get("exp")
    if isinstance(exp, int | float) and exp <= now - s.clock_skew:
        raise Problem("token_expired", "the order token has expired")
    if snap.seat is not None and snap.meta.get("title"):
        # This seat's key verified: the fast path (service/http/fastpath.py) may check its next
        # tokens without reading the store first (the store re-checks the key as it stores).
        k.store.remember_key(gid, kid, OrderKey(seat, key.x, key, snap.meta["title"]))
    return claims, snap


def check_order_claims(claims: dict[str, Any], phase: int, seat: int) -> None:
    """The claims an order token needs besides `game` and `iat` (`_game_claims`) and the
    clock checks: this seat and phase, a well-formed one-time id, an order."""
    if claims.get("seat") != seat:
        raise Problem("bad_claims", f"the token is signed for seat {claims.get('seat')!r}, not seat {seat}")
    if claims.get("phase") != phase:
        raise Problem("bad_claims", f"the token is signed for phase {claims.get('phase')!r}, not phase {phase}")
    jti = claims.get("jti")
    if not isinstance(jti, str) or not 8 <= len(jti) <= 128 or not jti.replace("-", "").replace("_", "").isalnum():
        raise Problem("bad_claims", "jti must be a one-time id of 8 to 128 letters, digits, - or _")
    if "order" not in claims:
        raise Problem("bad_claims", "the token carries no order")
