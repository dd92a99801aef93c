"""Ed25519 keys and compact JWS tokens, shared by the server and the `kontor` client.

A key is published as the base64url text of its 32 raw public bytes (the JWK `x`), and
named by its RFC 7638 JWK thumbprint (the `kid`). Tokens are JWS compact serialisations
with `alg` `Ed25519` (RFC 9864); the older polymorphic `EdDSA` name is accepted on input
because many JOSE libraries still emit it. Nothing else is accepted: no `none`, no HMAC,
so a public key can never be misused as an HMAC secret (the "HS256 confusion").

A public key must be a point of the curve's prime-order subgroup, other than the
identity (`check_point`): OpenSSL verifies whatever 32 bytes it is given, and for one of
the eight small-order points a signature of the identity and S = 0 "verifies" for every
message, with no private key at all.

Signatures are verified by libsodium (PyNaCl, `_signed_by`), a third of OpenSSL's cost
through joserfc: it refuses a non-canonical S, a small-order R and a small-order key as
well. joserfc still splits tokens for the full path (`split_token`) and checks any header
but a plain one (`PLAIN_HEADER`); the fast order path splits with `plain_parts`.

A token's header and payload are read strictly (`strict_json`): no `NaN`, `Infinity`
or `-Infinity` (a claim that is not a number passes every comparison: `NaN < now` is
false, so such a token would never expire), no key twice (two readers could take
different values), no nesting deeper than the service takes in any JSON.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import warnings
from dataclasses import dataclass
from typing import Any

from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import OKPKey
from joserfc.util import urlsafe_b64decode
from nacl.bindings import crypto_sign_open
from nacl.exceptions import BadSignatureError

from service.protocol.jsonlimits import check_depth

#: What a token's `alg` may be. The first is what this project signs with.
ALGORITHMS = ("Ed25519", "EdDSA")

#: The JWS registry allowing exactly `ALGORITHMS` (what joserfc would build per call).
REGISTRY = jws.JWSRegistry(algorithms=list(ALGORITHMS))
#: The header members of a token as this project signs them (`SigningKey.sign`). A header
#: of only these, each a text, `alg` one of `ALGORITHMS`, passes joserfc's header checks
#: (`JWSRegistry.check_header`, `get_alg`) as it is; any other header is checked by them.
PLAIN_HEADER = frozenset(("alg", "kid", "typ"))


class TokenError(Exception):
    """A token that cannot be trusted; `code` is the stable problem code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# -- Ed25519 point validity (RFC 8032 §5.1.3 decoding, the subgroup check) -----------------
_P = 2**255 - 19
_L = 2**252 + 27742317777372353535851937790883648493  # the prime order of the base point
_D = -121665 * pow(121666, _P - 2, _P) % _P
_SQRT_M1 = pow(2, (_P - 1) // 4, _P)
_IDENTITY = (0, 1, 1, 0)  # extended coordinates (X, Y, Z, T)


def _decode_point(raw: bytes) -> tuple[int, int]:
    """The affine point (x, y) a 32-byte encoding names; ValueError (saying why) for a
    non-canonical encoding or one of no point of the curve."""
    y = int.from_bytes(raw, "little")
    sign, y = y >> 255, y & ((1 << 255) - 1)
    if y >= _P:
        raise ValueError("a non-canonical point encoding (y is not below p)")
    u, v = (y * y - 1) % _P, (_D * y * y + 1) % _P
    x2 = u * pow(v, _P - 2, _P) % _P
    x = pow(x2, (_P + 3) // 8, _P)
    if (x * x - x2) % _P:
        x = x * _SQRT_M1 % _P
    if (x * x - x2) % _P:
        raise ValueError("not a point of the curve")
    if x == 0 and sign:
        raise ValueError("a non-canonical point encoding (x is 0 but its sign bit is set)")
    if x & 1 != sign:
        x = _P - x
    return x, y


def _add(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """Point addition in extended coordinates (RFC 8032 §5.1.4, complete for Ed25519)."""
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    aa, bb = (y1 - x1) * (y2 - x2) % _P, (y1 + x1) * (y2 + x2) % _P
    c, dd = 2 * t1 * t2 * _D % _P, 2 * z1 * z2 % _P
    e, f, g, h = bb - aa, dd - c, dd + c, bb + aa
    return e * f % _P, g * h % _P, f * g % _P, e * h % _P


def _times(n: int, point: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    out = _IDENTITY
    while n:
        if n & 1:
            out = _add(out, point)
        point, n = _add(point, point), n >> 1
    return out


def _is_identity(p: tuple[int, int, int, int]) -> bool:
    x, y, z, _ = p
    return x % _P == 0 and (y - z) % _P == 0


def check_point(raw: bytes) -> None:
    """Refuse (ValueError, saying why) a public key no honest key pair has: a
    non-canonical or invalid encoding, a small-order point (the identity and the other
    seven points of order 2, 4 or 8: signatures "verify" for them without a private key),
    or a point outside the prime-order subgroup (an honest key is a multiple of the base
    point, so [L]A is the identity)."""
    if len(raw) != 32:
        raise ValueError("an Ed25519 public key is 32 bytes")
    x, y = _decode_point(raw)
    point = (x, y, 1, x * y % _P)
    if _is_identity(_times(8, point)):
        raise ValueError("a small-order point (signatures would verify without a private key)")
    if not _is_identity(_times(_L, point)):
        raise ValueError("a point outside the prime-order subgroup")


#: Public keys parsed and checked (`PublicKey.from_text`), by their text, per process.
KEYS_KEPT = 4096
_PARSED: dict[str, PublicKey] = {}


@dataclass(frozen=True)
class PublicKey:
    """A registered Ed25519 public key."""

    x: str  # base64url, 43 characters, no padding
    kid: str
    key: OKPKey
    raw: bytes = b""  # the 32 bytes `x` encodes (what libsodium verifies with)

    @classmethod
    def from_text(cls, x: str) -> PublicKey:
        """Parse the base64url public key a client sends; raises `ValueError` (saying
        why) if it is not the key of an Ed25519 key pair (`check_point`). A key parsed
        once is kept (`KEYS_KEPT`): the curve checks are pure Python, about a millisecond,
        and every token verified against a stored key parses it again."""
        kept = _PARSED.get(x) if type(x) is str else None
        if kept is not None:
            return kept
        out = cls._parse(x)
        if len(_PARSED) >= KEYS_KEPT:
            _PARSED.clear()
        _PARSED[x] = out
        return out

    @classmethod
    def _parse(cls, x: str) -> PublicKey:
        if not isinstance(x, str) or len(x) != 43 or not x.isascii():
            raise ValueError("an Ed25519 public key is 43 base64url characters (32 bytes)")
        try:
            raw = base64.b64decode(x + "=", altchars=b"-_", validate=True)
        except binascii.Error:
            raise ValueError("an Ed25519 public key is 43 base64url characters (32 bytes)") from None
        if base64.urlsafe_b64encode(raw).rstrip(b"=").decode() != x:  # stray bits in the last character
            raise ValueError("not the canonical base64url text of 32 bytes")
        try:
            check_point(raw)
        except ValueError as exc:
            raise ValueError(f"not an Ed25519 public key: {exc}") from None
        try:
            key = OKPKey.import_key({"kty": "OKP", "crv": "Ed25519", "x": x})
        except (JoseError, ValueError, TypeError) as exc:
            raise ValueError(f"not an Ed25519 public key: {exc}") from None
        return cls(x=x, kid=key.thumbprint(), key=key, raw=raw)


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
        payload = json.dumps(claims, separators=(",", ":"), sort_keys=True, allow_nan=False)
        return str(jws.serialize_compact(header, payload, self.key, algorithms=[ALGORITHMS[0]]))


# -- strict JSON -----------------------------------------------------------------------
def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400 reads as inf
        raise ValueError(f"{text} is out of range")
    return value


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} appears twice")
        out[key] = value
    return out


_STRICT = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite, object_pairs_hook=_no_duplicates)


def strict_json(data: bytes | str) -> Any:
    """The value of a token's JSON header or payload; ValueError for anything but strict
    JSON (RFC 8259): NaN and the infinities, a number too large for a double, a key
    twice in an object, nesting deeper than `jsonlimits.MAX_DEPTH`, text that is not UTF-8."""
    text = data if isinstance(data, str) else bytes(data).decode("utf-8")
    check_depth(text)
    return _STRICT.decode(text)


# -- tokens ---------------------------------------------------------------------------
def _malformed(why: str) -> TokenError:
    return TokenError("malformed_token", f"not a compact JWS: {why}")


def split_token(token: str) -> jws.CompactSignature:
    """A compact JWS split into header, payload and signature, nothing verified yet;
    its header read strictly and a JSON object. TokenError `malformed_token` else."""
    if not isinstance(token, str) or token.count(".") != 2 or not token.isascii():
        raise _malformed("three base64url parts separated by dots")
    raw = token.encode("ascii")
    head = raw.partition(b".")[0]
    try:
        header = strict_json(base64.b64decode(head + b"=" * (-len(head) % 4), altchars=b"-_", validate=True))
    except (ValueError, binascii.Error) as exc:  # UnicodeError and the JSON errors are ValueErrors
        raise _malformed(f"its header is not strict JSON ({exc})") from None
    if not isinstance(header, dict):
        raise _malformed("its header is not a JSON object")
    try:
        return jws.extract_compact(raw, registry=REGISTRY)
    except (JoseError, ValueError) as exc:
        raise _malformed(str(exc)) from None


def token_header(token: str) -> dict[str, Any]:
    """The protected header of a compact JWS, unverified (to find the `kid`)."""
    header = split_token(token).headers()
    if header.get("alg") not in ALGORITHMS:
        raise TokenError("bad_algorithm", f"alg must be {ALGORITHMS[0]}, not {header.get('alg')!r}")
    if not isinstance(header.get("kid"), str):
        raise TokenError("unknown_key", "the token header carries no kid")
    return dict(header)


def _plain(header: dict[str, Any]) -> bool:
    """Whether a token's header is a plain one (`PLAIN_HEADER`), which needs no more checks."""
    return (header.keys() <= PLAIN_HEADER and header.get("alg") in ALGORITHMS
            and all(type(v) is str for v in header.values()))


def _signed_by(signing_input: bytes, signature: bytes, key: PublicKey) -> bool:
    """Whether `signature` (the JWS's third part, base64url as joserfc reads it) is an
    Ed25519 signature of `signing_input` by `key`, checked by libsodium
    (`crypto_sign_open`: the signature and the message, verified together): it also
    refuses a non-canonical S (not below L), a small-order R and a small-order or
    non-canonical key (the last two `check_point` refused when the key was registered)."""
    try:
        sig = urlsafe_b64decode(signature)
    except ValueError:  # binascii.Error is one
        return False
    if len(sig) != 64 or len(key.raw) != 32:
        return False
    try:
        crypto_sign_open(sig + signing_input, key.raw)
    except BadSignatureError:
        return False
    return True


def verify(token: str, key: PublicKey) -> dict[str, Any]:
    """Check the signature with `key` and return the claims (a JSON object, read by
    `strict_json`). The header is checked as joserfc checks it (a plain one needs no
    checks: `PLAIN_HEADER`), the signature by libsodium (`_signed_by`)."""
    obj = split_token(token)
    header = obj.headers()
    if not _plain(header):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # joserfc warns that EdDSA is deprecated
                REGISTRY.check_header(header)
                REGISTRY.get_alg(header["alg"])
        except (JoseError, ValueError) as exc:
            raise TokenError("bad_signature", f"the signature does not verify: {exc}") from None
    segments = obj.segments
    if not _signed_by(segments["header"] + b"." + segments["payload"], segments["signature"], key):
        raise TokenError("bad_signature", "the signature does not verify")
    return _claims(obj)


#: A token split by `plain_parts`: its header, signing input, payload and signature part.
Parts = tuple[dict[str, Any], bytes, bytes, bytes]


def plain_parts(token: str) -> Parts | None:
    """A compact JWS split as `split_token` splits it, for the fast order path: its header
    (a plain one: `PLAIN_HEADER`), its signing input (the first two parts), its payload
    decoded and its signature part; None for anything `split_token` refuses (sizes,
    base64url, a header that is not a strict JSON object) and for any header but a plain
    one, or any blank in the token, which the full path then reads."""
    if type(token) is not str or token.count(".") != 2 or not token.isascii():
        return None
    raw = token.encode("ascii")
    reg = REGISTRY
    if len(raw) > reg.max_header_length + reg.max_payload_length + reg.max_signature_length:
        return None
    head, payload, signature = raw.split(b".")
    if (len(head) > reg.max_header_length or len(signature) > reg.max_signature_length
            or not 0 < len(payload) <= reg.max_payload_length):
        return None
    header = _HEADERS.get(head)
    try:
        if header is None:
            header = strict_json(urlsafe_b64decode(head))
            if type(header) is not dict or not _plain(header):
                return None
            if len(_HEADERS) >= KEYS_KEPT:
                _HEADERS.clear()
            _HEADERS[head] = header
        body = urlsafe_b64decode(payload)
    except ValueError:  # base64url (binascii.Error), UTF-8 and the JSON errors are ValueErrors
        return None
    return header, raw[:len(head) + 1 + len(payload)], body, signature


#: Plain headers (`plain_parts`) by their base64url text, per process: a key signs every
#: order with the same header. Never to be mutated (shared between requests).
_HEADERS: dict[bytes, dict[str, Any]] = {}


def verified_claims(parts: Parts, key: PublicKey) -> dict[str, Any] | None:
    """The claims of a token split by `plain_parts` if its signature verifies with `key`
    (`_signed_by`, as `verify` has it checked) and they are a strict JSON object (as
    `verify` reads them); None for anything `verify` refuses."""
    _, signing_input, payload, signature = parts
    if not _signed_by(signing_input, signature, key):
        return None
    try:
        claims = strict_json(payload)
    except ValueError:
        return None
    return claims if isinstance(claims, dict) else None


def unverified_claims(token: str) -> dict[str, Any]:
    """The claims of a token before any check, read as strictly as `verify` reads them:
    only to learn which game and seat it names, so as to know whose key to verify it with."""
    return _claims(split_token(token))


def _claims(obj: jws.CompactSignature) -> dict[str, Any]:
    try:
        claims = strict_json(obj.payload)
    except ValueError as exc:
        raise TokenError("malformed_token", f"the token payload is not strict JSON: {exc}") from None
    if not isinstance(claims, dict):
        raise TokenError("malformed_token", "the token payload is not a JSON object")
    return claims
