"""Ed25519 keys and compact JWS tokens, shared by the server and the `kontor` client.

A key is published as the base64url text of its 32 raw public bytes (the JWK `x`), and
named by its RFC 7638 JWK thumbprint (the `kid`). Tokens are JWS compact serialisations
with `alg` `Ed25519` (RFC 9864); the older polymorphic `EdDSA` name is accepted on input
because many JOSE libraries still emit it. Nothing else is accepted: no `none`, no HMAC,
so a public key can never be misused as an HMAC secret (the "HS256 confusion").
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from typing import Any

from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import OKPKey

#: What a token's `alg` may be. The first is what this project signs with.
ALGORITHMS = ("Ed25519", "EdDSA")

#: The JWS registry allowing exactly `ALGORITHMS` (what joserfc would build per call).
REGISTRY = jws.JWSRegistry(algorithms=list(ALGORITHMS))


class TokenError(Exception):
    """A token that cannot be trusted; `code` is the stable problem code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class PublicKey:
    """A registered Ed25519 public key."""

    x: str  # base64url, 43 characters, no padding
    kid: str
    key: OKPKey

    @classmethod
    def from_text(cls, x: str) -> PublicKey:
        """Parse the base64url public key a client sends; raises `ValueError` if bad."""
        if not isinstance(x, str) or len(x) != 43:
            raise ValueError("an Ed25519 public key is 43 base64url characters (32 bytes)")
        try:
            key = OKPKey.import_key({"kty": "OKP", "crv": "Ed25519", "x": x})
        except (JoseError, ValueError, TypeError) as exc:
            raise ValueError(f"not an Ed25519 public key: {exc}") from None
        return cls(x=x, kid=key.thumbprint(), key=key)


@dataclass(frozen=True)
class SigningKey:
    """A private Ed25519 key held by a client (the CLI, a bot, a test)."""

    key: OKPKey

    @classmethod
    def generate(cls) -> SigningKey:
        return cls(OKPKey.generate_key("Ed25519", private=True))

    @classmethod
    def from_jwk(cls, jwk: dict[str, Any]) -> SigningKey:
        return cls(OKPKey.import_key(jwk))

    def as_jwk(self) -> dict[str, Any]:
        return dict(self.key.as_dict(private=True))

    @property
    def public(self) -> str:
        return str(self.key.as_dict(private=False)["x"])

    @property
    def kid(self) -> str:
        return str(self.key.thumbprint())

    def sign(self, claims: dict[str, Any], typ: str = "JWT") -> str:
        """A compact JWS of `claims` (compact JSON), signed with `alg` Ed25519."""
        header = {"alg": ALGORITHMS[0], "kid": self.kid, "typ": typ}
        payload = json.dumps(claims, separators=(",", ":"), sort_keys=True)
        return str(jws.serialize_compact(header, payload, self.key, algorithms=[ALGORITHMS[0]]))


def token_header(token: str) -> dict[str, Any]:
    """The protected header of a compact JWS, unverified (to find the `kid`)."""
    try:
        header = jws.extract_compact(token.encode("ascii")).headers()
    except (JoseError, ValueError, UnicodeError) as exc:
        raise TokenError("malformed_token", f"not a compact JWS: {exc}") from None
    if header.get("alg") not in ALGORITHMS:
        raise TokenError("bad_algorithm", f"alg must be {ALGORITHMS[0]}, not {header.get('alg')!r}")
    if not isinstance(header.get("kid"), str):
        raise TokenError("unknown_key", "the token header carries no kid")
    return dict(header)


def verify(token: str, key: PublicKey) -> dict[str, Any]:
    """Check the signature with `key` and return the claims (a JSON object)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # joserfc warns that EdDSA is deprecated
            obj = jws.deserialize_compact(token.encode("ascii"), key.key, registry=REGISTRY)
    except (JoseError, ValueError, UnicodeError) as exc:
        raise TokenError("bad_signature", f"the signature does not verify: {exc}") from None
    return _claims(obj)


def verified_claims(obj: jws.CompactSignature, key: PublicKey) -> dict[str, Any] | None:
    """The claims of a token already split by `jws.extract_compact` whose header's `alg`
    is Ed25519, if its signature verifies with `key` (joserfc checks the header and the
    signature exactly as `verify` has it checked); None for anything `verify` refuses."""
    try:
        if not jws.validate_compact(obj, key.key, registry=REGISTRY):
            return None
        return _claims(obj)
    except (JoseError, ValueError, TokenError):
        return None


def _claims(obj: jws.CompactSignature) -> dict[str, Any]:
    try:
        claims = json.loads(obj.payload)
    except ValueError:
        raise TokenError("malformed_token", "the token payload is not JSON") from None
    if not isinstance(claims, dict):
        raise TokenError("malformed_token", "the token payload is not a JSON object")
    return claims
