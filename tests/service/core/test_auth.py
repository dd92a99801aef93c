"""Who may do what: every refused token answers 4xx problem+json with its stable code
and changes nothing in the store (state, phase, stored orders, events, one-time ids)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from service.config import Settings
from service.core.kontor import Kontor
from tests.service.conftest import Player, create_game, footprint, join, new_game, play_to, problem
from tests.service.protocol.test_crypto import NON_CANONICAL, SMALL_ORDER, x_of

#: How long an order token is accepted after its iat (the test settings keep the default).
MAX_AGE = Settings().order_max_age


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64json(obj: Any) -> str:
    return b64(json.dumps(obj, separators=(",", ":")).encode())


def forge(header: dict[str, Any], claims: dict[str, Any], signature: bytes = b"") -> str:
    """A compact JWS with any header and signature (for tokens a real client never makes)."""
    return f"{b64json(header)}.{b64json(claims)}.{b64(signature)}"


def order_claims(p: Player, phase: int, **over: Any) -> dict[str, Any]:
    claims = {"game": p.game, "phase": phase, "seat": p.seat, "iat": int(time.time()), "jti": uuid.uuid4().hex,
              "order": {}}
    claims.update(over)
    return {k: v for k, v in claims.items() if v is not ...}


def signed_text(p: Player, payload: str) -> str:
    """A token validly signed by `p` whose payload is exactly `payload` (JSON a real
    client never writes: NaN, a key twice, ...)."""
    from joserfc import jws

    return str(jws.serialize_compact({"alg": "Ed25519", "kid": p.key.kid}, payload, p.key.key,
                                     algorithms=["Ed25519"]))


def order_text(p: Player, phase: int, order: dict[str, Any], **raw: str) -> str:
    """The JSON text of an order's claims, each claim in `raw` written as the given JSON text."""
    claims = {k: json.dumps(v) for k, v in order_claims(p, phase, order=order).items()}
    claims.update(raw)
    return "{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in claims.items() if v is not ...) + "}"


def flip_signature_byte(token: str) -> str:
    head, payload, sig = token.split(".")
    raw = bytearray(base64.urlsafe_b64decode(sig + "=" * (-len(sig) % 4)))
    raw[5] ^= 0x01
    return f"{head}.{payload}.{b64(bytes(raw))}"


@pytest.fixture
def sealed(client: Any, kontor: Kontor, worker: Any) -> tuple[Player, list[Player], dict[str, Any]]:
    """A started 3-seat game at its first sealed step (every seat asked, nobody answered),
    so a stored order never resolves the step by itself."""
    host, players = new_game(client, 3)
    play_to(kontor, worker, host.game, "cart_bid")
    ph = client.get(f"/games/{host.game}/phases/current").json
    assert ph["sealed"] and ph["requested"] == [0, 1, 2] and ph["answered"] == []
    return host, players, ph


def default_of(client: Any, p: Player) -> dict[str, Any]:
    you: dict[str, Any] = client.get(f"/games/{p.game}/phases/current", headers=p.bearer()).json["you"]
    return dict(you["default_order"])


def put(client: Any, p: Player, phase: int, seat: int, token: Any) -> Any:
    return client.put(f"/games/{p.game}/phases/{phase}/orders/{seat}", json={"token": token})


# -- order tokens -------------------------------------------------------------------------
# Each case builds (seat in the URL, phase in the URL, token) from the players and the open
# phase; the answer must be the expected problem, and the store must be untouched.
OrderCase = Callable[[list[Player], Player, dict[str, Any], dict[str, Any]], tuple[int, int, Any]]


def _other_key_swapped_kid(ps: list[Player], host: Player, ph: dict[str, Any], order: dict[str, Any]) -> Any:
    p0, stranger = ps[0], Player.new()
    token = stranger.key.sign(order_claims(p0, ph["id"], order=order))
    head, payload, sig = token.split(".")
    header = json.loads(base64.urlsafe_b64decode(head + "=="))
    header["kid"] = p0.key.kid
    return 0, ph["id"], f"{b64json(header)}.{payload}.{sig}"


def _hs256_with_public_key(ps: list[Player], host: Player, ph: dict[str, Any], order: dict[str, Any]) -> Any:
    p0 = ps[0]
    header = {"alg": "HS256", "kid": p0.key.kid, "typ": "JWT"}
    claims = order_claims(p0, ph["id"], order=order)
    signing_input = f"{b64json(header)}.{b64json(claims)}"
    mac = hmac.new(p0.key.public.encode(), signing_input.encode(), hashlib.sha256).digest()
    return 0, ph["id"], f"{signing_input}.{b64(mac)}"


ORDER_CASES: dict[str, tuple[OrderCase, int, str]] = {
    "flipped signature byte": (
        lambda ps, h, ph, o: (0, ph["id"], flip_signature_byte(ps[0].order_token(ph["id"], o))), 401, "bad_signature"),
    "other key, seat's kid": (_other_key_swapped_kid, 401, "bad_signature"),
    "other seat's key": (
        lambda ps, h, ph, o: (0, ph["id"], ps[1].key.sign(order_claims(ps[0], ph["id"], order=o))),
        403, "wrong_seat"),
    "host's key": (
        lambda ps, h, ph, o: (0, ph["id"], h.key.sign(order_claims(ps[0], ph["id"], order=o))), 403, "wrong_seat"),
    "key not in the game": (
        lambda ps, h, ph, o: (0, ph["id"], Player.new().key.sign(order_claims(ps[0], ph["id"], order=o))),
        401, "unknown_key"),
    "wrong phase claim": (
        lambda ps, h, ph, o: (0, ph["id"], ps[0].order_token(ph["id"] + 1, o)), 401, "bad_claims"),
    "wrong game claim": (
        lambda ps, h, ph, o: (0, ph["id"], ps[0].order_token(ph["id"], o, game="0123456789")), 401, "bad_claims"),
    "wrong seat claim": (
        lambda ps, h, ph, o: (0, ph["id"], ps[0].order_token(ph["id"], o, seat=1)), 401, "bad_claims"),
    "missing jti": (
        lambda ps, h, ph, o: (0, ph["id"], ps[0].key.sign(order_claims(ps[0], ph["id"], order=o, jti=...))),
        401, "bad_claims"),
    "short jti": (lambda ps, h, ph, o: (0, ph["id"], ps[0].order_token(ph["id"], o, jti="abc")), 401, "bad_claims"),
    "jti with odd characters": (
        lambda ps, h, ph, o: (0, ph["id"], ps[0].order_token(ph["id"], o, jti="abc def/ghij")), 401, "bad_claims"),
    "missing iat": (
        lambda ps, h, ph, o: (0, ph["id"], ps[0].key.sign(order_claims(ps[0], ph["id"], order=o, iat=...))),
        401, "bad_claims"),
    "missing order": (
        lambda ps, h, ph, o: (0, ph["id"], ps[0].key.sign(order_claims(ps[0], ph["id"], order=...))),
        401, "bad_claims"),
    "too old": (
        lambda ps, h, ph, o: (0, ph["id"], ps[0].order_token(ph["id"], o, iat=int(time.time()) - MAX_AGE - 120)),
        401, "token_expired"),
    "expired exp": (
        lambda ps, h, ph, o: (0, ph["id"], ps[0].order_token(ph["id"], o, exp=int(time.time()) - 600)),
        401, "token_expired"),
    "from the future": (
        lambda ps, h, ph, o: (0, ph["id"], ps[0].order_token(ph["id"], o, iat=int(time.time()) + 3600)),
        401, "token_from_future"),
    "alg none": (
        lambda ps, h, ph, o: (0, ph["id"], forge({"alg": "none", "kid": ps[0].key.kid},
                                                 order_claims(ps[0], ph["id"], order=o))), 401, "bad_algorithm"),
    "HS256 keyed with the public key": (_hs256_with_public_key, 401, "bad_algorithm"),
    "no kid": (
        lambda ps, h, ph, o: (0, ph["id"], forge({"alg": "Ed25519"}, order_claims(ps[0], ph["id"], order=o),
                                                 b"\0" * 64)), 401, "unknown_key"),
    "garbage": (lambda ps, h, ph, o: (0, ph["id"], "garbage"), 401, "malformed_token"),
    "garbage in three parts": (lambda ps, h, ph, o: (0, ph["id"], "a.b.c"), 401, "malformed_token"),
    "payload not an object": (
        lambda ps, h, ph, o: (0, ph["id"], ps[0].key.sign([1, 2])), 401, "malformed_token"),  # type: ignore[arg-type]
    # Claims that are not strict JSON or not of their one type (issue 12, item 9): each was
    # accepted before (iat NaN has no age limit; false == 0, 0.0 == 0, 7.0 == 7, and
    # str.isalnum takes any script's digits), or answered 500 (too deep, header a list).
    "iat NaN": (lambda ps, h, ph, o: (0, ph["id"], signed_text(ps[0], order_text(ps[0], ph["id"], o, iat="NaN"))),
                401, "malformed_token"),
    "iat -Infinity": (
        lambda ps, h, ph, o: (0, ph["id"], signed_text(ps[0], order_text(ps[0], ph["id"], o, iat="-Infinity"))),
        401, "malformed_token"),
    "exp NaN": (lambda ps, h, ph, o: (0, ph["id"], signed_text(ps[0], order_text(ps[0], ph["id"], o, exp="NaN"))),
                401, "malformed_token"),
    "exp 1e400": (lambda ps, h, ph, o: (0, ph["id"], signed_text(ps[0], order_text(ps[0], ph["id"], o, exp="1e400"))),
                  401, "malformed_token"),
    "a claim twice": (
        lambda ps, h, ph, o: (0, ph["id"], signed_text(ps[0], order_text(ps[0], ph["id"], o)[:-1] + ',"seat":0}')),
        401, "malformed_token"),
    "payload nested 10,000 deep": (
        lambda ps, h, ph, o: (0, ph["id"], signed_text(ps[0], order_text(ps[0], ph["id"], o,
                                                                         pad="[" * 10_000 + "]" * 10_000))),
        401, "malformed_token"),
    "header not an object": (
        lambda ps, h, ph, o: (0, ph["id"], forge(["alg"], order_claims(ps[0], ph["id"], order=o),  # type: ignore[arg-type]
                                                 b"\0" * 64)), 401, "malformed_token"),
    "seat false": (lambda ps, h, ph, o: (0, ph["id"], ps[0].order_token(ph["id"], o, seat=False)), 401, "bad_claims"),
    "seat 0.0": (lambda ps, h, ph, o: (0, ph["id"], ps[0].order_token(ph["id"], o, seat=0.0)), 401, "bad_claims"),
    "phase as a float": (
        lambda ps, h, ph, o: (0, ph["id"], ps[0].order_token(float(ph["id"]), o)), 401, "bad_claims"),
    "iat as a float": (
        lambda ps, h, ph, o: (0, ph["id"], ps[0].order_token(ph["id"], o, iat=time.time())), 401, "bad_claims"),
    "iat true": (lambda ps, h, ph, o: (0, ph["id"], ps[0].order_token(ph["id"], o, iat=True)), 401, "bad_claims"),
    "iat as text": (
        lambda ps, h, ph, o: (0, ph["id"], ps[0].order_token(ph["id"], o, iat=str(int(time.time())))),
        401, "bad_claims"),
    "exp null": (lambda ps, h, ph, o: (0, ph["id"], ps[0].order_token(ph["id"], o, exp=None)), 401, "bad_claims"),
    "exp as a float": (
        lambda ps, h, ph, o: (0, ph["id"], ps[0].order_token(ph["id"], o, exp=time.time() + 600)), 401, "bad_claims"),
    "game not a text": (
        lambda ps, h, ph, o: (0, ph["id"], ps[0].order_token(ph["id"], o, game=[ps[0].game])), 401, "bad_claims"),
    "jti of Arabic-Indic digits": (
        lambda ps, h, ph, o: (0, ph["id"], ps[0].order_token(ph["id"], o, jti="\u0661\u0662\u0663\u0664" * 3)),
        401, "bad_claims"),
    "jti of non-ASCII letters": (
        lambda ps, h, ph, o: (0, ph["id"], ps[0].order_token(ph["id"], o, jti="\u00e9t\u00e9-\u00e9t\u00e9-\u00e9")),
        401, "bad_claims"),
    "jti not a text": (
        lambda ps, h, ph, o: (0, ph["id"], ps[0].order_token(ph["id"], o, jti=12345678901)), 401, "bad_claims"),
}


@pytest.mark.parametrize("case", list(ORDER_CASES))
def test_refused_order_token_changes_nothing(client: Any, kontor: Kontor, sealed: Any, case: str) -> None:
    host, players, ph = sealed
    build, status, code = ORDER_CASES[case]
    assert kontor.settings.order_max_age == MAX_AGE
    order = default_of(client, players[0])
    seat, phase, token = build(players, host, ph, order)
    before = footprint(kontor, host.game)
    problem(put(client, players[0], phase, seat, token), status, code)
    assert footprint(kontor, host.game) == before
    after = client.get(f"/games/{host.game}/phases/current").json
    assert after["answered"] == [] and after["status"] == "collecting"


def test_url_phase_not_the_open_one_is_stale(client: Any, kontor: Kontor, sealed: Any) -> None:
    host, players, ph = sealed
    p0 = players[0]
    before = footprint(kontor, host.game)
    for phase in (ph["id"] - 1, ph["id"] + 1):
        token = p0.order_token(phase, default_of(client, p0))
        body = problem(put(client, p0, phase, 0, token), 409, "stale_phase")
        assert body["phase"]["id"] == ph["id"]
        assert body["phase"]["status"] == "collecting"
    assert footprint(kontor, host.game) == before


def test_replayed_token_is_refused_and_the_first_stays(client: Any, kontor: Kontor, sealed: Any) -> None:
    host, players, ph = sealed
    p0 = players[0]
    order = default_of(client, p0)
    token = p0.order_token(ph["id"], order)
    assert put(client, p0, ph["id"], 0, token).status_code == 202
    before = footprint(kontor, host.game)
    problem(put(client, p0, ph["id"], 0, token), 401, "token_replayed")
    assert footprint(kontor, host.game) == before
    assert kontor.store.orders(host.game, ph["id"])[0]["order"] == order
    # A freshly signed token may still replace the order until the step resolves.
    r = put(client, p0, ph["id"], 0, p0.order_token(ph["id"], order))
    assert r.status_code == 202 and r.json["replaced"] is True


def test_eddsa_alg_name_is_accepted(client: Any, sealed: Any) -> None:
    host, players, ph = sealed
    p0 = players[0]
    claims = order_claims(p0, ph["id"], order=default_of(client, p0))
    from joserfc import jws

    token = jws.serialize_compact({"alg": "EdDSA", "kid": p0.key.kid}, json.dumps(claims), p0.key.key,
                                  algorithms=["EdDSA"])
    assert put(client, p0, ph["id"], 0, token).status_code == 202


def test_order_body_without_token_is_invalid(client: Any, kontor: Kontor, sealed: Any) -> None:
    host, players, ph = sealed
    before = footprint(kontor, host.game)
    problem(client.put(f"/games/{host.game}/phases/{ph['id']}/orders/0", json={}), 422, "invalid_request")
    problem(put(client, players[0], ph["id"], 0, 12), 422, "invalid_request")
    assert footprint(kontor, host.game) == before


# -- bearer tokens ------------------------------------------------------------------------
def bearer(p: Player, **claims: Any) -> dict[str, str]:
    now = int(time.time())
    body = {"game": p.game, "iat": now, "exp": now + 60, **claims}
    return {"Authorization": "Bearer " + p.key.sign({k: v for k, v in body.items() if v is not ...})}


def bearer_text(p: Player, **raw: str) -> dict[str, str]:
    """A bearer header whose claims are written as JSON text, each in `raw` as given."""
    now = int(time.time())
    claims = {"game": json.dumps(p.game), "iat": str(now), "exp": str(now + 60), **raw}
    payload = "{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in claims.items()) + "}"
    return {"Authorization": "Bearer " + signed_text(p, payload)}


BEARER_CASES: dict[str, tuple[Callable[[Player], dict[str, str]], str]] = {
    "expired": (lambda p: bearer(p, iat=int(time.time()) - 400, exp=int(time.time()) - 200), "token_expired"),
    "lives too long": (lambda p: bearer(p, exp=int(time.time()) + 301), "bad_claims"),
    "no exp": (lambda p: bearer(p, exp=...), "bad_claims"),
    "no iat": (lambda p: bearer(p, iat=...), "bad_claims"),
    "from the future": (lambda p: bearer(p, iat=int(time.time()) + 600, exp=int(time.time()) + 700),
                        "token_from_future"),
    "wrong game": (lambda p: bearer(p, game="0123456789"), "bad_claims"),
    "stranger's key": (lambda p: bearer(Player(Player.new().key, game=p.game)), "unknown_key"),
    "flipped signature byte": (
        lambda p: {"Authorization": "Bearer " + flip_signature_byte(bearer(p)["Authorization"].split()[1])},
        "bad_signature"),
    "alg none": (lambda p: {"Authorization": "Bearer " + forge(
        {"alg": "none", "kid": p.key.kid}, {"game": p.game, "iat": int(time.time()), "exp": int(time.time()) + 60})},
        "bad_algorithm"),
    "garbage": (lambda p: {"Authorization": "Bearer garbage"}, "malformed_token"),
    # Not strict JSON, or a claim not of its one type (issue 12, item 9): the NaN ones never
    # expired (reads and host writes answered 200), the others passed by luck or by float.
    "exp NaN": (lambda p: bearer_text(p, exp="NaN"), "malformed_token"),
    "iat NaN": (lambda p: bearer_text(p, iat="NaN"), "malformed_token"),
    "exp Infinity": (lambda p: bearer_text(p, exp="Infinity"), "malformed_token"),
    "a claim twice": (lambda p: bearer_text(p, game=f'"0123456789","game":"{p.game}"'), "malformed_token"),
    "nested 10,000 deep": (lambda p: bearer_text(p, pad="[" * 10_000 + "]" * 10_000), "malformed_token"),
    "exp as a float": (lambda p: bearer(p, exp=time.time() + 60), "bad_claims"),
    "iat as a float": (lambda p: bearer(p, iat=time.time()), "bad_claims"),
    "iat true": (lambda p: bearer(p, iat=True, exp=60), "bad_claims"),
    "exp before iat": (lambda p: bearer(p, exp=int(time.time()) - 30), "bad_claims"),
    "game not a text": (lambda p: bearer(p, game=[p.game]), "bad_claims"),
    "not a bearer scheme": (lambda p: {"Authorization": "Basic dXNlcjpwYXNz"}, "authentication_required"),
    "empty bearer": (lambda p: {"Authorization": "Bearer "}, "authentication_required"),
}


@pytest.mark.parametrize("case", list(BEARER_CASES))
def test_refused_bearer(client: Any, kontor: Kontor, sealed: Any, case: str) -> None:
    host, players, ph = sealed
    make, code = BEARER_CASES[case]
    before = footprint(kontor, host.game)
    for path in ("view", "phases/current", "events"):
        problem(client.get(f"/games/{host.game}/{path}", headers=make(players[1])), 401, code)
    assert footprint(kontor, host.game) == before


def test_bearer_for_an_unknown_game_is_not_found(client: Any, sealed: Any) -> None:
    host, players, ph = sealed
    problem(client.get("/games/0123456789/view", headers=bearer(players[0], game="0123456789")), 404,
            "game_not_found")


def test_public_access_without_bearer_gets_the_public_view(client: Any, kontor: Kontor, sealed: Any) -> None:
    host, players, ph = sealed
    r = client.get(f"/games/{host.game}/view")
    assert r.status_code == 200 and r.json["viewer"] == "public"
    state = kontor.store.state(host.game)
    assert r.json["state"] == kontor._title("haendler").view(state, "public")
    assert client.get(f"/games/{host.game}/phases/current").json["you"] is None
    mine = client.get(f"/games/{host.game}/view", headers=players[1].bearer())
    assert mine.json["viewer"] == 1
    # The host is no seat: it sees what the public sees.
    assert client.get(f"/games/{host.game}/view", headers=host.bearer()).json["viewer"] == "public"


def test_a_seat_reads_only_its_own_stored_order(client: Any, kontor: Kontor, sealed: Any) -> None:
    host, players, ph = sealed
    p0 = players[0]
    assert put(client, p0, ph["id"], 0, p0.order_token(ph["id"], default_of(client, p0))).status_code == 202
    url = f"/games/{host.game}/phases/{ph['id']}/orders/0"
    assert client.get(url, headers=p0.bearer()).status_code == 200
    problem(client.get(url, headers=players[1].bearer()), 403, "wrong_seat")
    problem(client.get(url, headers=host.bearer()), 403, "wrong_seat")
    problem(client.get(url), 401, "authentication_required")


# -- host-only actions ----------------------------------------------------------------------
def test_only_the_host_starts_the_game(client: Any, kontor: Kontor) -> None:
    host = Player.new()
    gid = create_game(client, host, 2)["id"]
    players = [Player.new(), Player.new()]
    for seat, p in enumerate(players):
        join(client, gid, p, f"P{seat}", seat)
    before = footprint(kontor, gid)
    problem(client.patch(f"/games/{gid}", json={"status": "running"}, headers=players[0].bearer()), 403, "not_host")
    problem(client.patch(f"/games/{gid}", json={"status": "running"}), 401, "authentication_required")
    problem(client.patch(f"/games/{gid}", json={"status": "running"},
                         headers=bearer(Player(Player.new().key, game=gid))), 401, "unknown_key")
    assert footprint(kontor, gid) == before
    assert client.get(f"/games/{gid}").json["status"] == "lobby"
    assert client.patch(f"/games/{gid}", json={"status": "running"}, headers=host.bearer()).status_code == 200


def test_only_the_host_changes_a_seat(client: Any, kontor: Kontor) -> None:
    host = Player.new()
    gid = create_game(client, host, 2)["id"]
    p = Player.new()
    join(client, gid, p, "P0", 0)
    before = footprint(kontor, gid)
    for headers, status, code in ((p.bearer(), 403, "not_host"), ({}, 401, "authentication_required")):
        problem(client.patch(f"/games/{gid}/seats/1", json={"bot": "greedy"}, headers=headers), status, code)
        problem(client.patch(f"/games/{gid}/seats/0", json={"name": "mine"}, headers=headers), status, code)
    assert footprint(kontor, gid) == before
    assert client.patch(f"/games/{gid}/seats/1", json={"bot": "greedy"}, headers=host.bearer()).status_code == 200


# -- public keys ----------------------------------------------------------------------------
def idem() -> dict[str, str]:
    return {"Idempotency-Key": uuid.uuid4().hex}


def test_small_order_and_non_canonical_keys_are_refused_wherever_a_key_is_given(client: Any, kontor: Kontor) -> None:
    """A small-order key is "held" by everyone: signatures verify for it without a private
    key. Refused at join, as a seat's new key and as a host key, saying why."""
    host = Player.new()
    gid = create_game(client, host, 2)["id"]
    before = footprint(kontor, gid)
    for name, hex_text in {**SMALL_ORDER, **NON_CANONICAL}.items():
        x = x_of(hex_text)
        why = "small-order" if name in SMALL_ORDER else "non-canonical"
        body = problem(client.post(f"/games/{gid}/seats", json={"name": "Z", "public_key": x}, headers=idem()),
                       422, "bad_public_key")
        assert why in body["detail"], (name, body)
        body = problem(client.patch(f"/games/{gid}/seats/1", json={"public_key": x}, headers=host.bearer()),
                       422, "bad_public_key")
        assert why in body["detail"], (name, body)
        body = problem(client.post("/games", json={"title": "haendler", "seats": 2, "host_key": x, "seed": 7},
                                   headers=idem()), 422, "bad_public_key")
        assert why in body["detail"], (name, body)
    assert footprint(kontor, gid) == before


def test_an_order_forged_for_a_small_order_key_already_stored_is_refused(client: Any, kontor: Kontor,
                                                                        sealed: Any) -> None:
    """A key stored before keys were checked: R = identity, S = 0 "verifies" any order for
    the identity key. The order is refused, and nothing changes."""
    from joserfc.jwk import OKPKey

    host, players, ph = sealed
    claims = order_claims(players[0], ph["id"], order=default_of(client, players[0]))
    x = x_of(SMALL_ORDER["identity (order 1)"])
    kid = OKPKey.import_key({"kty": "OKP", "crv": "Ed25519", "x": x}).thumbprint()
    seats, keys = kontor.store.key(host.game, "seats"), kontor.store.key(host.game, "keys")
    rec = json.loads(kontor.r.hget(seats, "0"))  # type: ignore[arg-type]
    kontor.r.hset(seats, "0", json.dumps({**rec, "kid": kid, "public_key": x}))
    kontor.r.hdel(keys, players[0].key.kid)
    kontor.r.hset(keys, kid, "0")
    forged = forge({"alg": "Ed25519", "kid": kid}, claims, bytes.fromhex(SMALL_ORDER["identity (order 1)"]) + bytes(32))
    before = footprint(kontor, host.game)
    body = problem(put(client, players[0], ph["id"], 0, forged), 422, "bad_public_key")
    assert "small-order" in body["detail"]
    assert footprint(kontor, host.game) == before
