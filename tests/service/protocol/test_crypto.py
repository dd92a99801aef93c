"""Keys and tokens as `service.protocol.crypto` reads them: only points an honest key pair
can have, and only strict JSON in a token's header and payload."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import pytest
from joserfc import jws
from joserfc.jwk import OKPKey

from service.protocol import crypto
from service.protocol.crypto import PublicKey, SigningKey, TokenError, strict_json, token_header, verify

#: The eight points of small order (1, 2, 4 and 8) in their canonical encodings: the
#: libsodium blocklist (`ge25519_has_small_order`) and the same points with the sign bit.
SMALL_ORDER = {
    "identity (order 1)": "01" + "00" * 31,
    "y = -1 (order 2)": "ec" + "ff" * 30 + "7f",
    "y = 0, x positive (order 4)": "00" * 32,
    "y = 0, x negative (order 4)": "00" * 31 + "80",
    "order 8, y = 2707...2022": "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
    "order 8, y = 2707...2022, x negative": "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
    "order 8, y = 5518...7927": "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
    "order 8, y = 5518...7927, x negative": "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
}

#: Encodings no canonical encoder writes: y of p or more, and x = 0 with its sign bit set.
NON_CANONICAL = {
    "y = p (0)": "ed" + "ff" * 30 + "7f",
    "y = p + 1 (1)": "ee" + "ff" * 30 + "7f",
    "y = p, sign bit": "ed" + "ff" * 31,
    "identity with the sign bit": "01" + "00" * 30 + "80",
    "y = -1 with the sign bit": "ec" + "ff" * 31,
    "y = 2^255 - 1": "ff" * 32,
}


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def x_of(hex_text: str) -> str:
    return b64(bytes.fromhex(hex_text))


def signed(key: OKPKey, payload: str | bytes, header: dict[str, Any] | None = None) -> str:
    """A token with exactly `payload` as its payload, validly signed (joserfc never
    looks into the payload, so it may be anything)."""
    header = header or {"alg": "Ed25519", "kid": "k"}
    return str(jws.serialize_compact(header, payload, key, algorithms=["Ed25519"]))


def test_the_small_order_table_is_what_the_blocklist_says() -> None:
    """The two order-8 y values are those libsodium's blocklist names in its comments."""
    y = [int.from_bytes(bytes.fromhex(SMALL_ORDER[name]), "little") & ((1 << 255) - 1)
         for name in ("order 8, y = 2707...2022", "order 8, y = 5518...7927")]
    assert y == [2707385501144840649318225287225658788936804267575313519463743609750303402022,
                 55188659117513257062467267217118295137698188065244968500265048394206261417927]


@pytest.mark.parametrize("name", list(SMALL_ORDER))
def test_small_order_keys_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="small-order point"):
        PublicKey.from_text(x_of(SMALL_ORDER[name]))


@pytest.mark.parametrize("name", list(NON_CANONICAL))
def test_non_canonical_encodings_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="non-canonical"):
        PublicKey.from_text(x_of(NON_CANONICAL[name]))


def test_a_signature_of_the_identity_verifies_for_the_identity_key_without_any_private_key() -> None:
    """Why the check is needed: R = identity, S = 0 "verifies" every message for the
    identity key (OpenSSL does not refuse the key), so anyone could sign as its holder."""
    x = x_of(SMALL_ORDER["identity (order 1)"])
    raw_key = OKPKey.import_key({"kty": "OKP", "crv": "Ed25519", "x": x})  # what from_text used to keep
    forged = f"{b64(json.dumps({'alg': 'Ed25519', 'kid': 'k'}).encode())}.{b64(b'{}')}." \
             f"{b64(bytes.fromhex(SMALL_ORDER['identity (order 1)']) + bytes(32))}"
    assert jws.validate_compact(jws.extract_compact(forged.encode()), raw_key, algorithms=["Ed25519"])
    with pytest.raises(ValueError, match="small-order"):
        PublicKey.from_text(x)


def test_an_encoding_of_no_curve_point_is_refused() -> None:
    """About half of all y have no x (and of the points there are, 7 in 8 lie outside
    the prime-order subgroup)."""
    why = set()
    for y in range(2, 40):
        try:
            PublicKey.from_text(b64(y.to_bytes(32, "little")))
        except ValueError as exc:
            why.add(str(exc).partition(": ")[2])
    assert why == {"not a point of the curve", "a point outside the prime-order subgroup"}


def test_a_key_with_a_small_order_component_is_refused() -> None:
    """An honest key plus a point of order 8: on the curve, but outside the prime-order
    subgroup, which no key pair's public key ever is."""
    honest = base64.urlsafe_b64decode(SigningKey.generate().public + "=")
    x, y = crypto._decode_point(honest)
    tx, ty = crypto._decode_point(bytes.fromhex(SMALL_ORDER["order 8, y = 2707...2022"]))
    sx, sy, sz, _ = crypto._add((x, y, 1, x * y % crypto._P), (tx, ty, 1, tx * ty % crypto._P))
    p = crypto._P
    ax, ay = sx * pow(sz, p - 2, p) % p, sy * pow(sz, p - 2, p) % p
    mixed = (ay | (ax & 1) << 255).to_bytes(32, "little")
    with pytest.raises(ValueError, match="outside the prime-order subgroup"):
        PublicKey.from_text(b64(mixed))


def test_honest_keys_are_accepted() -> None:
    for _ in range(20):
        key = SigningKey.generate()
        assert PublicKey.from_text(key.public).kid == key.kid


def test_a_key_parsed_once_is_kept_and_a_refused_one_is_refused_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    checks: list[bytes] = []
    real = crypto.check_point
    monkeypatch.setattr(crypto, "check_point", lambda raw: (checks.append(raw), real(raw))[1])
    key = SigningKey.generate()
    first = PublicKey.from_text(key.public)
    assert PublicKey.from_text(key.public) is first and len(checks) == 1  # checked once, then kept
    bad = x_of(SMALL_ORDER[next(iter(SMALL_ORDER))])
    for _ in range(2):
        with pytest.raises(ValueError, match="small-order point"):
            PublicKey.from_text(bad)
    assert len(checks) == 3
    monkeypatch.setattr(crypto, "KEYS_KEPT", 1)  # full: the kept keys are let go, never wrong
    other = SigningKey.generate()
    assert PublicKey.from_text(other.public).kid == other.kid
    assert PublicKey.from_text(key.public).kid == key.kid and len(checks) == 5


@pytest.mark.parametrize("text", [
    "A" * 42 + "B",  # 43 characters whose last one carries stray bits
    "A" * 42 + "=",
    "é" * 43,
    "A" * 44,
    12,
])
def test_key_texts_that_are_not_32_bytes_in_canonical_base64url_are_refused(text: Any) -> None:
    with pytest.raises(ValueError):
        PublicKey.from_text(text)


# -- strict JSON ----------------------------------------------------------------------------
@pytest.mark.parametrize("text, why", [
    ('{"exp": NaN}', "NaN"),
    ('{"exp": Infinity}', "Infinity"),
    ('{"exp": -Infinity}', "Infinity"),
    ('{"exp": 1e400}', "out of range"),
    ('{"game": "a", "game": "b"}', "twice"),
    ("[" * 10_000 + "]" * 10_000, "deep"),
    (b'{"a": "\xff"}', "utf-8"),
])
def test_strict_json_refuses_what_is_not_strict_json(text: str | bytes, why: str) -> None:
    with pytest.raises(ValueError, match=f"(?i){why}"):
        strict_json(text)


def test_strict_json_reads_json() -> None:
    text = '{"a": [1, 2.5, "x\\\\\\"[{"], "b": {"c": null, "d": true}}'
    assert strict_json(text) == json.loads(text)


@pytest.mark.parametrize("payload", [
    '{"game":"g","iat":NaN,"exp":NaN}',
    '{"game":"g","iat":1,"exp":Infinity}',
    '{"game":"g","iat":1,"iat":2}',
    '{"order":' + "[" * 10_000 + "]" * 10_000 + "}",
])
def test_a_token_whose_payload_is_not_strict_json_is_malformed(payload: str) -> None:
    key = SigningKey.generate()
    token = signed(key.key, payload, {"alg": "Ed25519", "kid": key.kid})
    with pytest.raises(TokenError) as caught:
        verify(token, PublicKey.from_text(key.public))
    assert caught.value.code == "malformed_token"
    with pytest.raises(TokenError) as caught:
        crypto.unverified_claims(token)
    assert caught.value.code == "malformed_token"


@pytest.mark.parametrize("header", [b'["alg"]', b'{"alg":"Ed25519","alg":"none","kid":"k"}',
                                    b'{"alg":"Ed25519","kid":"k","x":NaN}', b"not json"])
def test_a_token_whose_header_is_not_a_strict_json_object_is_malformed(header: bytes) -> None:
    token = f"{b64(header)}.{b64(b'{}')}.{b64(bytes(64))}"
    with pytest.raises(TokenError) as caught:
        token_header(token)
    assert caught.value.code == "malformed_token"


def test_the_client_never_signs_what_the_server_refuses() -> None:
    with pytest.raises(ValueError):
        SigningKey.generate().sign({"iat": float("nan")})


# -- the signature check (libsodium) ----------------------------------------------------------
_L = crypto._L


def _scalar(key: SigningKey) -> int:
    """The secret scalar of an Ed25519 key pair (RFC 8032 §5.1.5: SHA-512 of the seed, clamped)."""
    seed = base64.urlsafe_b64decode(key.as_jwk()["d"] + "=")
    h = bytearray(hashlib.sha512(seed).digest()[:32])
    h[0] &= 248
    h[31] &= 127
    h[31] |= 64
    return int.from_bytes(h, "little")


def _with_signature(token: str, signature: bytes) -> str:
    return f"{token.rpartition('.')[0]}.{b64(signature)}"


def _token_and_key(claims: dict[str, Any] | None = None) -> tuple[str, SigningKey, PublicKey]:
    key = SigningKey.generate()
    token = key.sign(claims or {"game": "g", "iat": 1, "jti": "abcdefgh", "order": {"bid": 3}})
    return token, key, PublicKey.from_text(key.public)


def _refused_both_ways(token: str, key: PublicKey) -> None:
    """Refused by `verify` (the full path: `bad_signature`) and by the fast path's check."""
    with pytest.raises(TokenError) as caught:
        verify(token, key)
    assert (caught.value.code, caught.value.message) == ("bad_signature", "the signature does not verify")
    parts = crypto.plain_parts(token)
    assert parts is not None and crypto.verified_claims(parts, key) is None


def test_token_verified_by_both_paths_gives_the_same_claims() -> None:
    token, _, public = _token_and_key()
    parts = crypto.plain_parts(token)
    assert parts is not None
    assert crypto.verified_claims(parts, public) == verify(token, public) == crypto.unverified_claims(token)


def test_token_signed_with_another_key_is_refused() -> None:
    token, _, _ = _token_and_key()
    _refused_both_ways(token, PublicKey.from_text(SigningKey.generate().public))


def test_token_with_an_altered_payload_is_refused() -> None:
    token, _, public = _token_and_key()
    head, _, sig = token.split(".")
    altered = b64(json.dumps({"game": "g", "iat": 1, "jti": "abcdefgh", "order": {"bid": 4}}).encode())
    _refused_both_ways(f"{head}.{altered}.{sig}", public)


@pytest.mark.parametrize("length", [0, 32, 63, 65, 128])
def test_token_whose_signature_is_not_64_bytes_is_refused(length: int) -> None:
    token, _, public = _token_and_key()
    real = base64.urlsafe_b64decode(token.rpartition(".")[2] + "==")
    _refused_both_ways(_with_signature(token, (real * 3)[:length]), public)


def non_canonical_s(token: str) -> str:
    """`token` with S + L for its S: the same equation holds ([S]B is the same point)."""
    sig = base64.urlsafe_b64decode(token.rpartition(".")[2] + "==")
    s = int.from_bytes(sig[32:], "little")
    assert s < _L and s + _L < 2**256
    return _with_signature(token, sig[:32] + (s + _L).to_bytes(32, "little"))


def small_order_r(token: str, key: SigningKey) -> str:
    """`token` re-signed by `key`'s holder with R the identity (a small-order point) and
    S = k·a, which satisfies [S]B = R + [k]A: OpenSSL takes it, libsodium does not."""
    signing_input = token.rpartition(".")[0].encode()
    public = base64.urlsafe_b64decode(key.public + "=")
    r = bytes.fromhex(SMALL_ORDER["identity (order 1)"])
    k = int.from_bytes(hashlib.sha512(r + public + signing_input).digest(), "little") % _L
    forged = r + (k * _scalar(key) % _L).to_bytes(32, "little")
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    Ed25519PublicKey.from_public_bytes(public).verify(forged, signing_input)  # raises unless valid
    return _with_signature(token, forged)


def test_token_with_a_non_canonical_s_is_refused() -> None:
    """A library that did not insist on S < L would take a second signature for every token."""
    token, _, public = _token_and_key()
    _refused_both_ways(non_canonical_s(token), public)


def test_token_whose_r_is_a_small_order_point_is_refused() -> None:
    """A signature with R the identity verifies by the equation (OpenSSL takes it);
    libsodium refuses every small-order R, as `check_point` refuses small-order keys."""
    token, key, public = _token_and_key()
    _refused_both_ways(small_order_r(token, key), public)


@pytest.mark.parametrize("header", [
    {"alg": "Ed25519", "kid": "k", "crit": ["exp"], "exp": 1},
    {"alg": "Ed25519", "kid": "k", "x": 1},
    {"alg": "HS256", "kid": "k"},
    {"alg": "none", "kid": "k"},
])
def test_token_with_an_unusual_header_is_refused_with_joserfcs_words(header: dict[str, Any]) -> None:
    """A header but a plain one (`PLAIN_HEADER`) is checked by joserfc's registry, whose
    refusal `verify` words as before; the fast path leaves such a token to the full path."""
    key = SigningKey.generate()
    token = f"{b64(json.dumps(header).encode())}.{b64(b'{}')}.{b64(bytes(64))}"
    with pytest.raises(TokenError) as caught:
        verify(token, PublicKey.from_text(key.public))
    assert caught.value.code == "bad_signature"
    assert caught.value.message.startswith("the signature does not verify: ")
    assert crypto.plain_parts(token) is None


def test_token_with_the_b64_header_verifies_over_its_segments() -> None:
    """RFC 7797's unencoded payload (`b64` false, named in `crit`), which joserfc reads:
    the signature covers the parts as they stand, and the claims are not a JSON object."""
    key = SigningKey.generate()
    header = {"alg": "Ed25519", "kid": key.kid, "b64": False, "crit": ["b64"]}
    token = str(jws.serialize_compact(header, "abc", key.key, algorithms=["Ed25519"]))
    with pytest.raises(TokenError) as caught:
        verify(token, PublicKey.from_text(key.public))
    assert caught.value.code == "malformed_token"  # the signature verified: the claims are what is wrong
    with pytest.raises(TokenError) as caught:
        verify(_with_signature(token, bytes(64)), PublicKey.from_text(key.public))
    assert caught.value.code == "bad_signature"
    assert crypto.plain_parts(token) is None


@pytest.mark.parametrize("change", [
    lambda t: t + "=",  # padding
    lambda t: t.replace(".", ". ", 1),  # a blank
    lambda t: t[:-1] + "+",  # not base64url
    lambda t: t.rpartition(".")[0] + ".",  # no signature
    lambda t: "." + t.partition(".")[2],  # no header
    lambda t: t.partition(".")[0] + ".." + t.rpartition(".")[2],  # no payload
    lambda t: b64(b'{"alg":"Ed25519","kid":"' + b"k" * 400 + b'"}') + "." + t.partition(".")[2],  # header > 512
    lambda t: b64(b'{"alg":"Ed25519","alg":"Ed25519","kid":"k"}') + "." + t.partition(".")[2],
    lambda t: b64(b'["alg"]') + "." + t.partition(".")[2],
    lambda t: t[:-1] + "\u00e9",
])
def test_token_the_fast_split_takes_only_what_split_token_takes(change: Any) -> None:
    """`plain_parts` refuses every token `split_token` refuses (and the fast path then
    leaves it to the full path); what it takes, it splits as `split_token` does."""
    token, _, _ = _token_and_key()
    odd = change(token)
    try:
        obj = crypto.split_token(odd)
    except TokenError:
        assert crypto.plain_parts(odd) is None
        return
    parts = crypto.plain_parts(odd)
    if parts is not None:
        assert parts[0] == obj.headers() and parts[2] == obj.payload
        assert parts[1] == obj.segments["header"] + b"." + obj.segments["payload"]
    else:  # split_token takes it, the fast split does not: claims no token can have
        with pytest.raises(TokenError):
            crypto.unverified_claims(odd)


def test_token_the_fast_split_takes_is_split_as_split_token_splits_it() -> None:
    token, _, _ = _token_and_key()
    obj = crypto.split_token(token)
    parts = crypto.plain_parts(token)
    assert parts is not None
    assert (parts[0], parts[1], parts[2], parts[3]) == (
        obj.headers(), obj.segments["header"] + b"." + obj.segments["payload"], obj.payload, obj.segments["signature"])
    again = crypto.plain_parts(token)  # its header now kept (`crypto._HEADERS`): the same split
    assert again == parts and again[0] is parts[0]
