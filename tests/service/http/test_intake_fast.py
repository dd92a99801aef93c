"""The order PUT's fast path (service/http/fastpath.py) answers exactly as the Flask route does.

Every test warms the per-process caches the fast path lives on (the seat keys that
verified an order, the open step's state), so the fast path really gets to decide; each
answer is compared byte for byte with the Flask route's answer to the same request
(`KONTOR_FAST_ORDERS` off), and every refusal must leave the store as it was. The
caches are only ever hints: a replaced key, a closed step, a finished game are refused
by the store script itself even while the caches still say otherwise.
"""

from __future__ import annotations

import base64
import json
import re
import time
import uuid
from typing import Any

import pytest

from service.core.auth import signed_order
from service.core.kontor import Kontor, iso, receipt_of
from service.core.records import order_record, order_record_around_time, receipt_of_text, stamp
from service.store import OrderKey, dumps
from tests.service.conftest import Player, footprint, new_game, play_to, problem, raw_store
from tests.service.core.test_auth import ORDER_CASES, b64json, default_of, forge, order_claims, put
from tests.service.core.test_concurrency import assert_resolved_once, bid, hammer, sealed_games
from tests.service.protocol.test_crypto import non_canonical_s, small_order_r

FAST = "KONTOR_FAST_ORDERS"


class Spy:
    """Counts what the order requests went through: the full path (`signed_order`, as the
    route calls it) and the fast path's store script (stored, or refused)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, kontor: Kontor) -> None:
        import service.http.resources.games

        self.full = 0
        self.stored = 0
        self.refused = 0
        real_full, real_fast = service.http.resources.games.signed_order, kontor.store.submit_signed

        def full(*a: Any, **kw: Any) -> Any:
            self.full += 1
            return real_full(*a, **kw)

        def fast(*a: Any, **kw: Any) -> Any:
            out = real_fast(*a, **kw)
            if out is None:
                self.refused += 1
            else:
                self.stored += 1
            return out

        monkeypatch.setattr(service.http.resources.games, "signed_order", full)
        monkeypatch.setattr(kontor.store, "submit_signed", fast)

    def counts(self) -> tuple[int, int, int]:
        return self.full, self.stored, self.refused


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch, kontor: Kontor) -> Spy:
    return Spy(monkeypatch, kontor)


@pytest.fixture
def warm(client: Any, kontor: Kontor, worker: Any) -> tuple[Player, list[Player], dict[str, Any]]:
    """A started 3-seat game at its first sealed step, seats 0 and 1 having answered once
    through the full path (so this process holds their keys and the step's state)."""
    host, players = new_game(client, 3)
    play_to(kontor, worker, host.game, "cart_bid")
    ph = client.get(f"/games/{host.game}/phases/current").json
    client.application.config[FAST] = False
    for p in players[:2]:
        assert put(client, p, ph["id"], p.seat, p.order_token(ph["id"], default_of(client, p))).status_code == 202
    client.application.config[FAST] = True
    for p in players[:2]:
        assert kontor.store.order_key(host.game, p.key.kid) is not None
    assert kontor.store.cached_state(host.game, str(ph["id"])) is not None
    return host, players, ph


def both(client: Any, path: str, **kw: Any) -> tuple[Any, Any]:
    """The same PUT answered with the fast path on, then off (a refusal changes nothing,
    so the second meets the very same store)."""
    headers = {"X-Request-Id": "same-id-for-both", **kw.pop("headers", {})}
    client.application.config[FAST] = True
    fast = client.put(path, headers=headers, **kw)
    client.application.config[FAST] = False
    full = client.put(path, headers=headers, **kw)
    client.application.config[FAST] = True
    return fast, full


def same_answer(fast: Any, full: Any) -> None:
    assert fast.status_code == full.status_code
    assert fast.get_data() == full.get_data()
    assert sorted(fast.headers.items()) == sorted(full.headers.items())


# -- the record ----------------------------------------------------------------------------
@pytest.mark.parametrize("order", [{}, {"bid": 300}, {"at": ""}, {"x": '"at":""', "at": "1"},
                                   {"\u00e9": "\u2028\"\\", "n": [1, {"at": ""}]}])
@pytest.mark.parametrize("jti, token", [("abcdefgh-1", "a.b.c"), (None, None), ("x", '"at":""\\"')])
def test_the_fast_paths_record_text_is_the_routes_record(order: Any, jti: Any, token: Any) -> None:
    """The fast path stores `head + stamp + tail`, the route `dumps(order_record(...))`:
    the same text, whatever the order and token hold."""
    head, tail = order_record_around_time(order, "http", jti, token)
    for at in (stamp(0), stamp(1_700_000_000.123456), stamp(time.time())):
        record = order_record(order, "http", at, jti, token)
        assert head + at + tail == dumps(record)
        assert receipt_of_text(head + at + tail) == receipt_of(record)


# -- accepted orders ------------------------------------------------------------------------
@pytest.mark.cluster
def test_a_warm_seat_is_answered_by_the_fast_path_as_the_route_answers(
        client: Any, kontor: Kontor, warm: Any, spy: Spy) -> None:
    host, players, ph = warm
    p0 = players[0]
    order = {"bid": bid(kontor, host.game, 0, 3)["bid"]}
    path = f"/games/{host.game}/phases/{ph['id']}/orders/0"
    headers = {"X-Request-Id": "abc-123"}
    fast = client.put(path, json={"token": p0.order_token(ph["id"], order)}, headers=headers)
    assert spy.counts() == (0, 1, 0)
    fast_rec = kontor.store.orders(host.game, ph["id"])[0]
    client.application.config[FAST] = False
    full = client.put(path, json={"token": p0.order_token(ph["id"], order)}, headers=headers)
    assert spy.counts() == (1, 1, 0)
    full_rec = kontor.store.orders(host.game, ph["id"])[0]

    assert fast.status_code == full.status_code == 202
    assert sorted(fast.headers.keys()) == sorted(full.headers.keys())
    assert fast.headers["Content-Type"] == full.headers["Content-Type"] == "application/json"
    assert fast.headers["X-Request-Id"] == full.headers["X-Request-Id"] == "abc-123"
    a, b = fast.json, full.json
    for receipt in (a, b):  # the same JSON text as flask.jsonify makes of it
        assert receipt["step_status"] == "collecting" and receipt["replaced"] is True
    assert fast.get_data() == (json.dumps(a, sort_keys=True, separators=(",", ":")) + "\n").encode()
    assert {k: v for k, v in a.items() if k not in ("received_at", "receipt")} == \
           {k: v for k, v in b.items() if k not in ("received_at", "receipt")}
    # The stored records have the same form; each receipt is its record's digest.
    for receipt, rec in ((a, fast_rec), (b, full_rec)):
        assert list(rec) == ["order", "via", "at", "jti", "token"]
        assert re.fullmatch(r"\d+\.\d{6}", rec["at"])
        assert receipt["receipt"] == receipt_of(rec)
        assert receipt["received_at"] == iso(rec["at"])
        assert rec["order"] == order and rec["via"] == "http"


@pytest.mark.cluster
def test_the_fast_path_flips_the_step_and_the_worker_resolves_it(
        client: Any, kontor: Kontor, worker: Any, warm: Any, spy: Spy) -> None:
    host, players, ph = warm
    p2 = players[2]
    # Seat 2's key is new to this process: the fast path reads it (with the step's state,
    # one round trip, as the full path would) and answers.
    assert kontor.store.order_key(host.game, p2.key.kid) is None
    r = put(client, p2, ph["id"], 2, p2.order_token(ph["id"], default_of(client, p2)))
    assert r.status_code == 202 and r.json["step_status"] == "resolving"
    assert spy.counts() == (0, 1, 0)
    assert kontor.store.order_key(host.game, p2.key.kid).seat == 2  # type: ignore[union-attr]
    worker()
    nxt = client.get(f"/games/{host.game}/phases/current").json
    assert nxt["id"] == ph["id"] + 1 and nxt["status"] == "collecting"
    # A new step's state is new to the process too: the fast path reads it (one round
    # trip) and answers; the last requested seat's order flips the step.
    assert kontor.store.cached_state(host.game, str(nxt["id"])) is None
    before, stored = spy.full, spy.stored
    for q in players:
        if q.seat in nxt["requested"]:
            r = put(client, q, nxt["id"], q.seat, q.order_token(nxt["id"], default_of(client, q)))
            assert r.status_code == 202
    assert r.json["step_status"] == "resolving"
    assert spy.stored == stored + len(nxt["requested"]) and spy.full == before
    worker()
    assert client.get(f"/games/{host.game}/phases/current").json["id"] == nxt["id"] + 1


def test_tokens_the_route_accepts_in_other_forms_are_still_accepted(client: Any, warm: Any, spy: Spy) -> None:
    host, players, ph = warm
    p0 = players[0]
    order = default_of(client, p0)
    from joserfc import jws

    claims = json.dumps(order_claims(p0, ph["id"], order=order))
    eddsa = jws.serialize_compact({"alg": "EdDSA", "kid": p0.key.kid}, claims, p0.key.key, algorithms=["EdDSA"])
    token = p0.order_token(ph["id"], order)
    spaced = token[:10] + "\n " + token[10:]
    for tok in (eddsa, spaced):
        assert put(client, p0, ph["id"], 0, tok).status_code == 202
    assert spy.counts() == (2, 0, 0)  # both left to the route, which accepts them


# -- refusals ---------------------------------------------------------------------------------
@pytest.mark.parametrize("case", list(ORDER_CASES))
def test_every_refusal_is_the_routes_own(client: Any, kontor: Kontor, warm: Any, case: str) -> None:
    host, players, ph = warm
    build, status, code = ORDER_CASES[case]
    seat, phase, token = build(players, host, ph, default_of(client, players[0]))
    before = footprint(kontor, host.game)
    fast, full = both(client, f"/games/{host.game}/phases/{phase}/orders/{seat}", json={"token": token})
    problem(fast, status, code)
    same_answer(fast, full)
    assert footprint(kontor, host.game) == before


def refused_by_the_store(spy: Spy) -> None:
    """The fast path went as far as the store script, which refused (and the route answered)."""
    assert spy.refused >= 1 and spy.stored == 0


@pytest.mark.parametrize("case", ["too old", "expired exp", "from the future"])
def test_time_bounds_are_checked_on_the_server_clock_by_the_script(
        client: Any, kontor: Kontor, warm: Any, spy: Spy, case: str) -> None:
    host, players, ph = warm
    build, status, code = ORDER_CASES[case]
    seat, phase, token = build(players, host, ph, default_of(client, players[0]))
    before = footprint(kontor, host.game)
    fast, full = both(client, f"/games/{host.game}/phases/{phase}/orders/{seat}", json={"token": token})
    problem(fast, status, code)
    same_answer(fast, full)
    refused_by_the_store(spy)
    assert footprint(kontor, host.game) == before


@pytest.mark.cluster
def test_a_replayed_token_is_refused_by_the_script(client: Any, kontor: Kontor, warm: Any, spy: Spy) -> None:
    host, players, ph = warm
    p0 = players[0]
    token = p0.order_token(ph["id"], default_of(client, p0))
    assert put(client, p0, ph["id"], 0, token).status_code == 202
    assert spy.counts() == (0, 1, 0)
    before = footprint(kontor, host.game)
    fast, full = both(client, f"/games/{host.game}/phases/{ph['id']}/orders/0", json={"token": token})
    problem(fast, 401, "token_replayed")
    same_answer(fast, full)
    assert spy.refused == 1
    assert footprint(kontor, host.game) == before


def test_an_illegal_order_is_the_engines_refusal(client: Any, kontor: Kontor, warm: Any) -> None:
    host, players, ph = warm
    p0 = players[0]
    path = f"/games/{host.game}/phases/{ph['id']}/orders/0"
    before = footprint(kontor, host.game)
    for order in ({"bid": -5}, {"nonsense": True}):
        fast, full = both(client, path, json={"token": p0.order_token(ph["id"], order)})
        assert fast.status_code == 422
        same_answer(fast, full)
    fast, full = both(client, path, json={"token": p0.key.sign(order_claims(p0, ph["id"], order=[1]))})
    problem(fast, 422, "malformed_order")
    same_answer(fast, full)
    assert footprint(kontor, host.game) == before


@pytest.mark.parametrize("body", [
    {"token": "x", "extra": 1},
    {"token": 12},
    {},
    [1],
    "text",
])
def test_odd_bodies_get_the_routes_answer(client: Any, kontor: Kontor, warm: Any, body: Any) -> None:
    host, _, ph = warm
    before = footprint(kontor, host.game)
    fast, full = both(client, f"/games/{host.game}/phases/{ph['id']}/orders/0", json=body)
    assert fast.status_code in (400, 401, 422)
    same_answer(fast, full)
    assert footprint(kontor, host.game) == before


@pytest.mark.parametrize("raw, content_type", [
    (b"{not json", "application/json"),
    (b"\xff\xfe{}", "application/json"),
    (b'{"token": "a.b.c"}', "text/plain"),
    (b'{"token": "a.b.c"}', "application/json; charset=utf-8"),
])
def test_unusual_requests_get_the_routes_answer(client: Any, kontor: Kontor, warm: Any, raw: bytes,
                                                content_type: str) -> None:
    host, _, ph = warm
    before = footprint(kontor, host.game)
    fast, full = both(client, f"/games/{host.game}/phases/{ph['id']}/orders/0", data=raw,
                      headers={"Content-Type": content_type})
    assert 400 <= fast.status_code < 500
    same_answer(fast, full)
    assert footprint(kontor, host.game) == before


def test_an_oversized_body_gets_the_routes_413(client: Any, kontor: Kontor, warm: Any) -> None:
    host, players, ph = warm
    token = players[0].order_token(ph["id"], {"bid": 0, "pad": "x" * 70_000})
    fast, full = both(client, f"/games/{host.game}/phases/{ph['id']}/orders/0", json={"token": token})
    problem(fast, 413, "payload_too_large")
    same_answer(fast, full)


def test_other_paths_and_methods_are_the_routers(client: Any, warm: Any, spy: Spy) -> None:
    host, players, ph = warm
    p0 = players[0]
    token = p0.order_token(ph["id"], default_of(client, p0))
    for path in (f"/games/{host.game}/phases/{ph['id']}/orders/0/", f"/games/{host.game}/phases/-1/orders/0",
                 "/games/nope/phases/1/orders/0", f"/games/{host.game}/phases/{ph['id']}/orders/99"):
        fast, full = both(client, path, json={"token": token})
        assert fast.status_code >= 400
        same_answer(fast, full)
    # A query string (which the route ignores) is left to the route.
    path = f"/games/{host.game}/phases/{ph['id']}/orders/0?x=1"
    assert client.put(path, json={"token": token}).status_code == 202
    assert spy.stored == 0 and spy.full >= 1


# -- the caches are only hints ------------------------------------------------------------
@pytest.mark.cluster
def test_a_replaced_key_is_refused_at_once(client: Any, kontor: Kontor, warm: Any, spy: Spy) -> None:
    host, players, ph = warm
    p0 = players[0]
    order = default_of(client, p0)
    assert put(client, p0, ph["id"], 0, p0.order_token(ph["id"], order)).status_code == 202
    assert spy.counts() == (0, 1, 0)
    successor = Player(Player.new().key, host.game, 0)
    r = client.patch(f"/games/{host.game}/seats/0", json={"public_key": successor.key.public}, headers=host.bearer())
    assert r.status_code == 200, r.json
    # The process still holds the old key as seat 0's: the store refuses it all the same.
    assert kontor.store.order_key(host.game, p0.key.kid) is not None
    before = footprint(kontor, host.game)
    fast, full = both(client, f"/games/{host.game}/phases/{ph['id']}/orders/0",
                      json={"token": p0.order_token(ph["id"], order)})
    problem(fast, 401, "unknown_key")
    same_answer(fast, full)
    assert spy.counts() == (2, 1, 1)  # the script refused; the route named the refusal (twice: on, off)
    assert footprint(kontor, host.game) == before
    # The new key works at once through the fast path (read from the store on first use).
    for _ in range(2):
        assert put(client, successor, ph["id"], 0, successor.order_token(ph["id"], order)).status_code == 202
    assert spy.counts() == (2, 3, 1)


@pytest.mark.cluster
def test_a_key_moved_to_another_seat_is_refused_for_the_old_one(client: Any, kontor: Kontor, warm: Any,
                                                                spy: Spy) -> None:
    """The store checks the kid's holder and the seat record's kid and key, not just one."""
    host, players, ph = warm
    p0 = players[0]
    order = default_of(client, p0)
    keys = kontor.store.key(host.game, "keys")
    seats = kontor.store.key(host.game, "seats")
    rec = json.loads(kontor.r.hget(seats, "0"))  # type: ignore[arg-type]
    for change in ("holder", "record kid", "record key"):
        kontor.r.hset(seats, "0", json.dumps(rec))
        kontor.r.hset(keys, p0.key.kid, "0")
        if change == "holder":
            kontor.r.hset(keys, p0.key.kid, "2")
        elif change == "record kid":
            kontor.r.hset(seats, "0", json.dumps({**rec, "kid": "someone-else"}))
        else:
            kontor.r.hset(seats, "0", json.dumps({**rec, "public_key": Player.new().key.public}))
        before = footprint(kontor, host.game)
        fast, full = both(client, f"/games/{host.game}/phases/{ph['id']}/orders/0",
                          json={"token": p0.order_token(ph["id"], order)})
        assert fast.status_code in (401, 403), (change, fast.json)
        same_answer(fast, full)
        assert footprint(kontor, host.game) == before, change
    refused_by_the_store(spy)


@pytest.mark.cluster
def test_a_stale_cache_never_accepts_an_order_for_a_closed_step(
        client: Any, kontor: Kontor, worker: Any, warm: Any, spy: Spy) -> None:
    host, players, ph = warm
    p0, p2 = players[0], players[2]
    path = f"/games/{host.game}/phases/{ph['id']}/orders/0"
    # The last seat answers: the step is resolving; the process still holds its state.
    assert put(client, p2, ph["id"], 2, p2.order_token(ph["id"], default_of(client, p2))).json["step_status"] == \
           "resolving"
    assert kontor.store.cached_state(host.game, str(ph["id"])) is not None
    order = default_of(client, p0)
    before = footprint(kontor, host.game)
    stored = spy.stored  # seat 2's order above (its key was new to the process: read, then fast)
    fast, full = both(client, path, json={"token": p0.order_token(ph["id"], order)})
    problem(fast, 409, "step_locked")
    same_answer(fast, full)
    assert spy.refused >= 1 and spy.stored == stored
    assert footprint(kontor, host.game) == before
    # Resolved: the next step is open; a token for the closed step is stale.
    worker()
    assert kontor.store.phase(host.game)["id"] == str(ph["id"] + 1)
    before = footprint(kontor, host.game)
    refused = spy.refused
    fast, full = both(client, path, json={"token": p0.order_token(ph["id"], order)})
    body = problem(fast, 409, "stale_phase")
    assert body["phase"]["id"] == ph["id"] + 1
    same_answer(fast, full)
    assert spy.refused == refused + 1
    assert footprint(kontor, host.game) == before


@pytest.mark.cluster
def test_a_finished_game_refuses_through_the_script(client: Any, kontor: Kontor, warm: Any, spy: Spy) -> None:
    host, players, ph = warm
    p0 = players[0]
    meta = kontor.store.key(host.game, "meta")
    kontor.r.hset(meta, "status", "finished")  # as the last commit would leave it
    before = footprint(kontor, host.game)
    fast, full = both(client, f"/games/{host.game}/phases/{ph['id']}/orders/0",
                      json={"token": p0.order_token(ph["id"], default_of(client, p0))})
    problem(fast, 409, "game_finished")
    same_answer(fast, full)
    refused_by_the_store(spy)
    assert footprint(kontor, host.game) == before


@pytest.mark.cluster
def test_the_script_refuses_anything_a_cache_got_wrong(kontor: Kontor, client: Any, warm: Any) -> None:
    """`Store.submit_signed` straight: each wrong hint is refused and changes nothing."""
    host, players, ph = warm
    p0 = players[0]
    entry = kontor.store.order_key(host.game, p0.key.kid)
    assert entry is not None
    now = int(time.time())
    good = dict(game=host.game, phase=ph["id"], seat=0, kid=p0.key.kid, entry=entry, iat=str(now), exp="",
                head='{"order":{},"via":"http","at":"', tail='","jti":"x","token":"t"}', skew=60, max_age=86400)
    wrong: dict[str, dict[str, Any]] = {
        "other seat": {"seat": 1},
        "seat not in the game": {"seat": 7},
        "other kid": {"kid": players[1].key.kid},
        "other key text": {"entry": OrderKey(0, players[1].key.public, entry.key, entry.title)},
        "other title": {"entry": OrderKey(0, entry.x, entry.key, "sometitle")},
        "other phase": {"phase": ph["id"] + 1},
        "iat too old": {"iat": str(now - 86400 - 100)},
        "iat in the future": {"iat": str(now + 600)},
        "exp passed": {"exp": str(now - 120)},
        "no such game": {"game": "0000000000"},
        "state changed by an action since": {"version": "1"},
    }
    before = footprint(kontor)
    for name, change in wrong.items():
        args = {**good, **change}
        assert kontor.store.submit_signed(**args, jti=f"jti-{name.replace(' ', '-')}") is None, name
        assert footprint(kontor) == before, name
    out = kontor.store.submit_signed(**good, jti="the-good-one")
    assert out is not None and out[0] == "stored"
    assert kontor.store.submit_signed(**good, jti="the-good-one") is None  # its one-time id is used now


def test_the_fast_path_steps_aside_for_an_app_with_other_hooks(settings: Any, kontor: Kontor, client: Any,
                                                               warm: Any, spy: Spy) -> None:
    from service import create_app

    app = create_app(settings, kontor)
    seen = []
    app.before_request(lambda: seen.append(1))
    other = app.test_client()
    host, players, ph = warm
    p0 = players[0]
    r = other.put(f"/games/{host.game}/phases/{ph['id']}/orders/0",
                  json={"token": p0.order_token(ph["id"], default_of(client, p0))})
    assert r.status_code == 202 and seen == [1] and spy.counts() == (1, 0, 0)


@pytest.mark.cluster
def test_forged_tokens_with_a_cached_kid_never_pass(client: Any, kontor: Kontor, warm: Any, spy: Spy) -> None:
    host, players, ph = warm
    p0 = players[0]
    claims = order_claims(p0, ph["id"], order=default_of(client, p0))
    before = footprint(kontor, host.game)
    for header, sig in (({"alg": "Ed25519", "kid": p0.key.kid}, b"\0" * 64),
                        ({"alg": "Ed25519", "kid": p0.key.kid, "crit": ["b64"], "b64": False}, b"\0" * 64),
                        ({"alg": "none", "kid": p0.key.kid}, b"")):
        fast, full = both(client, f"/games/{host.game}/phases/{ph['id']}/orders/0",
                          json={"token": forge(header, claims, sig)})
        assert fast.status_code == 401
        same_answer(fast, full)
    assert spy.stored == 0 and spy.refused == 0  # never got as far as the store
    assert footprint(kontor, host.game) == before


@pytest.mark.parametrize("case", ["other key", "altered payload", "non-canonical S", "small-order R"])
def test_order_signed_wrongly_is_refused_alike_by_the_fast_path_and_the_route(
        client: Any, kontor: Kontor, warm: Any, spy: Spy, case: str) -> None:
    """Signatures the seat's cached key does not verify (libsodium, on both paths): the
    fast path leaves them to the route, which answers 401 `bad_signature`; nothing stored."""
    host, players, ph = warm
    p0 = players[0]
    order = default_of(client, p0)
    token = p0.order_token(ph["id"], order)
    head, payload, sig = token.split(".")
    if case == "other key":
        token = f"{head}.{payload}.{Player.new().key.sign(order_claims(p0, ph['id'], order=order)).split('.')[2]}"
    elif case == "altered payload":
        claims = json.loads(base64.urlsafe_b64decode(payload + "=="))
        token = f"{head}.{b64json({**claims, 'jti': uuid.uuid4().hex})}.{sig}"
    elif case == "non-canonical S":
        token = non_canonical_s(token)
    else:
        token = small_order_r(token, p0.key)
    before = footprint(kontor, host.game)
    fast, full = both(client, f"/games/{host.game}/phases/{ph['id']}/orders/0", json={"token": token})
    problem(fast, 401, "bad_signature")
    same_answer(fast, full)
    assert spy.stored == 0 and spy.refused == 0  # never got as far as the store
    assert footprint(kontor, host.game) == before


# -- concurrency ----------------------------------------------------------------------------
@pytest.mark.cluster
def test_all_seats_at_once_on_the_fast_path_resolve_exactly_once(
        kontor: Kontor, worker: Any, live_server: str, spy: Spy) -> None:
    games = sealed_games(kontor, 12, seed=3000)
    rounds = []
    for gid, players in games:
        phase = kontor.current_phase(gid, "public")["id"]
        for s, p in players.items():  # warm the key and state caches without storing anything
            signed_order(kontor, gid, phase, s, p.order_token(phase, bid(kontor, gid, s, 0)))
        rounds.append([(players[s], phase, bid(kontor, gid, s, 1)) for s in range(4)])
    answers = hammer(live_server, rounds)
    for got in answers:
        assert [r.status_code for r in got] == [202] * 4, [r.text for r in got]
        assert sorted(r.json()["step_status"] for r in got) == ["collecting"] * 3 + ["resolving"]
    assert spy.counts() == (0, 48, 0)
    # The step is closed now: one more order of each game's first seat is locked out.
    late = hammer(live_server, [[(players[0], subs[0][1], bid(kontor, gid, 0, 2))]
                                for (gid, players), subs in zip(games, rounds, strict=True)])
    assert [r[0].status_code for r in late] == [409] * len(games)
    assert {r[0].json()["code"] for r in late} == {"step_locked"}
    worker()
    for subs in rounds:
        player, phase, _ = subs[0]
        assert_resolved_once(kontor, player.game, phase, {p.seat or 0: o for p, _, o in subs})


# -- the same effects as the full path ------------------------------------------------------
def everything(kontor: Kontor) -> dict[str, Any]:
    """Every key of the store and of the job queue (RQ's too, hence bytes) with its value
    (the queue's server read too when it is not the store's)."""
    out: dict[str, Any] = {}
    for r in [raw_store(kontor), *([kontor.rq] if kontor.settings.queue_url else [])]:
        for key in r.scan_iter():
            kind = r.type(key).decode()  # type: ignore[union-attr]
            read = {"hash": r.hgetall, "string": r.get, "list": lambda k, r=r: r.lrange(k, 0, -1),
                    "set": lambda k, r=r: sorted(r.smembers(k)),  # type: ignore[arg-type]
                    "zset": lambda k, r=r: r.zrange(k, 0, -1), "stream": r.xrange}.get(kind, lambda k, kind=kind: kind)
            out[key.decode("latin-1")] = read(key)
    return out


def effects(kontor: Kontor, gid: str, run: Any) -> dict[str, Any]:
    """What `run()` changed in the whole store: per key (the game id written as G), the
    hash fields that changed, or True for any other change."""
    before = everything(kontor)
    run()
    after = everything(kontor)
    out: dict[str, Any] = {}
    for key in set(before) | set(after):
        a, b = before.get(key), after.get(key)
        if a == b or ":limits:" in key:  # the request limits change their counters when a process
            continue                      # takes counts ahead, not per request (test_limits pins them)
        if key.startswith("rq:scheduler"):  # an RQ scheduler's own heartbeat and lock (a worker of
            continue                        # another test on this Valkey renews them at any moment)
        name = re.sub(r"drain-[0-9a-f]+", "drain-D", re.sub(r"jti:[\w-]+", "jti:J", key.replace(gid, "G")))
        name = re.sub(r"kid:[\w-]+", "kid:K", name)  # the request limits' counter of the order's key
        if isinstance(a, dict) and isinstance(b, dict):
            out[name] = sorted(f.decode("latin-1") for f in set(a) | set(b) if a.get(f) != b.get(f))
        else:
            out[name] = True
    return out


@pytest.mark.cluster
def test_the_fast_path_changes_the_store_as_the_route_does(client: Any, kontor: Kontor, worker: Any,
                                                           spy: Spy) -> None:
    """Two games in the very same step; the same orders, one game through the fast path
    and one through the route: the same keys and fields change (a job enqueued, a step
    flipped, ...). Whatever the route comes to do on an order, the fast path must too."""
    games = []
    for _ in range(2):
        host, players = new_game(client, 3)
        play_to(kontor, worker, host.game, "cart_bid")
        games.append((host.game, players))
    phase = kontor.current_phase(games[0][0], "public")["id"]
    assert kontor.current_phase(games[1][0], "public")["id"] == phase
    for gid, players in games:  # every key known to this process, no order stored
        for p in players:
            signed_order(kontor, gid, phase, p.seat, p.order_token(phase, default_of(client, p)))

    seen = []
    for fast, (gid, players) in zip((True, False), games, strict=True):
        client.application.config[FAST] = fast
        # Both flips from no drain job's lease (one left by an earlier step would make the
        # flip of one game find a drainer and enqueue none, and the other enqueue one).
        kontor.rq.delete(kontor.jobs.ready_keys[1])
        steps = []
        for p in (players[0], players[0], players[1], players[2]):  # stored, replaced, stored, flips
            order = default_of(client, p)
            steps.append(effects(kontor, gid, lambda p=p, order=order: put(client, p, phase, p.seat,
                                                                             p.order_token(phase, order))))
        seen.append(steps)
    client.application.config[FAST] = True
    assert spy.counts() == (4, 4, 0)
    assert seen[0] == seen[1]
    # The last order put the step on the ready list and enqueued a drain job to resolve it.
    assert "kontor:{ready}:steps" in seen[0][-1] and "rq:job:drain-D" in seen[0][-1]
    worker()
    for gid, _ in games:
        assert kontor.current_phase(gid, "public")["id"] == phase + 1


@pytest.mark.cluster
def test_a_lost_store_connection_leaves_the_order_to_the_route(client: Any, kontor: Kontor, warm: Any,
                                                               spy: Spy) -> None:
    host, players, ph = warm
    p0 = players[0]
    order = default_of(client, p0)
    assert put(client, p0, ph["id"], 0, p0.order_token(ph["id"], order)).status_code == 202
    assert spy.counts() == (0, 1, 0)
    # The server drops every client (a restart, say): the fast path's kept connection is gone.
    # (on a cluster: on every node)
    every = {"target_nodes": "all"} if kontor.settings.store_is_cluster else {}
    kontor.r.client_kill_filter(_type="normal", skipme=True, **every)
    r = put(client, p0, ph["id"], 0, p0.order_token(ph["id"], order))
    assert r.status_code == 202 and r.json["replaced"] is True
    assert spy.counts() == (1, 1, 1)  # the script never ran; the route stored the order
    assert put(client, p0, ph["id"], 0, p0.order_token(ph["id"], order)).status_code == 202
    assert spy.counts() == (1, 2, 1)  # and the fast path is back, on a new connection
