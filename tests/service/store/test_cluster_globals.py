"""The store's keys outside a game's hash tag on a Valkey Cluster (issue 24): the digest
schedule and the inbound index in buckets, the stream caps' two leases, the request
limits' counters, the Idempotency-Key records, the secret and the unsubscribed set. Each
test runs on one Valkey and with the store on a 3-master cluster (`cluster` marker)."""

from __future__ import annotations

import zlib
from dataclasses import replace
from typing import Any

import pytest
import redis
from redis.cluster import key_slot

from service.config import Settings
from service.core.kontor import Kontor
from service.store.keys import INDEX_BUCKETS
from service.store.ratelimit import RateLimits

pytestmark = pytest.mark.cluster

#: Game ids that fall into many buckets (and so onto every node of a 3-master cluster).
GAMES = [f"g{i:02d}" for i in range(24)]


def flush_scripts(kontor: Kontor) -> None:
    """Make the store forget every script (as a restarted or newly promoted node has)."""
    if isinstance(kontor.r, redis.RedisCluster):
        for node in kontor.r.get_primaries():
            kontor.r.get_redis_connection(node).script_flush()
    else:
        kontor.r.script_flush()


def nodes_of(kontor: Kontor, keys: set[str]) -> int:
    """On how many servers `keys` are (1 on one Valkey)."""
    if isinstance(kontor.r, redis.RedisCluster):
        return len({kontor.r.get_node_from_key(k).name for k in keys})
    return 1


# -- digests -------------------------------------------------------------------------------
def test_a_digest_is_due_after_its_push_and_taken_once_from_every_bucket(kontor: Kontor, store_kind: str) -> None:
    store = kontor.store
    now = store.now()
    for g in GAMES:
        store.push_digest(g, 1, [{"type": "step.resolved", "game": g}], now + 5)
    store.push_digest(GAMES[0], 1, [{"type": "message.received"}], now + 500)  # scheduled already: kept at +5
    buckets = {store.digests_key(g) for g in GAMES}
    assert len(buckets) >= 8 and all(k.startswith(f"{store.prefix}:{{digests-") for k in buckets)
    assert buckets <= {store.digests_bucket(b) for b in range(INDEX_BUCKETS)}
    assert nodes_of(kontor, buckets) == (3 if store_kind == "cluster" else 1)
    assert kontor.r.zscore(store.digests_key(GAMES[0]), f"{GAMES[0]}:1") == pytest.approx(now + 5, abs=1e-3)
    assert store.due_digests(now) == []  # none due yet
    assert sorted(store.due_digests(now + 6)) == [(g, 1) for g in GAMES]
    assert store.due_digests(now + 6) == []  # each taken once
    assert store.take_digest(GAMES[0], 1) == [{"type": "step.resolved", "game": GAMES[0]},
                                              {"type": "message.received"}]
    assert store.take_digest(GAMES[0], 1) == []
    # The game's part and the schedule's are each within one slot.
    assert key_slot(store.key(GAMES[0], "digest", 1).encode()) != key_slot(store.digests_key(GAMES[0]).encode())


def test_push_digest_once_schedules_in_the_games_bucket(kontor: Kontor) -> None:
    store = kontor.store
    now = store.now()
    # A store written before the buckets: its schedule is still walked.
    kontor.r.zadd(store.digests_before_key, {"gold:2": now - 10})
    assert store.due_digests(now) == [("gold", 2)] and not kontor.r.exists(store.digests_before_key)
    assert store.push_digest_once("gx", 0, "7:0", [{"type": "step.resolved"}], now + 1)
    assert not store.push_digest_once("gx", 0, "7:0", [{"type": "step.resolved"}], now + 1)  # the same notices
    assert store.due_digests(now + 2) == [("gx", 0)]
    assert store.take_digest("gx", 0) == [{"type": "step.resolved"}]


# -- inbound mail --------------------------------------------------------------------------
def same_bucket(mail_id: str, n: int) -> list[str]:
    """`n` more mail ids in the inbound bucket of `mail_id`."""
    bucket = zlib.crc32(mail_id.encode()) % INDEX_BUCKETS
    return [m for m in (f"in_{i:020x}" for i in range(10_000)) if zlib.crc32(m.encode()) % INDEX_BUCKETS == bucket][:n]


def test_inbound_mail_is_kept_then_indexed_and_walked_over_every_bucket(kontor: Kontor, store_kind: str) -> None:
    store = kontor.store
    now = store.now()
    ids = [f"in_{i:020x}" for i in range(1, 21)]
    for i, mail_id in enumerate(ids):
        store.keep_inbound(mail_id, {"id": mail_id, "raw": "eA=="}, now + i, 60)
    assert store.inbound_ids() == ids  # by receipt time, across the buckets
    buckets = {store.inbound_index_key(m) for m in ids}
    assert len(buckets) >= 8 and nodes_of(kontor, buckets) == (3 if store_kind == "cluster" else 1)
    assert store.inbound(ids[3]) == {"id": ids[3], "raw": "eA=="}
    assert 0 < kontor.r.ttl(store.inbound_key(ids[3])) <= 60  # type: ignore[operator]
    # A bucket drops its entries older than the keeping time when its next mail comes.
    later = [m for m in same_bucket(ids[0], 30) if m not in ids][0]
    store.keep_inbound(later, {"id": later, "raw": "eA=="}, now + 61, 60)
    walked = store.inbound_ids()
    assert ids[0] not in walked and walked[-1] == later and walked[:-1] == ids[1:]


# -- stream caps ---------------------------------------------------------------------------
def test_the_stream_caps_hold_over_two_slots_and_a_refusal_holds_nothing(kontor: Kontor) -> None:
    store = kontor.store
    a1, a2, game = store.stream_address_key("192.0.2.1"), store.stream_address_key("192.0.2.2"), \
        store.stream_game_key("gs")
    assert key_slot(a1.encode()) != key_slot(game.encode())

    def take(member: str, address: str) -> str | None:
        return store.take_stream_leases(member, 30, [(address, 2), (game, 3)])

    assert take("m1", a1) is None and take("m2", a1) is None
    assert take("m3", a1) == a1  # the address's cap: the game's lease was not taken
    assert sorted(kontor.r.zrange(game, 0, -1)) == ["m1", "m2"]  # type: ignore[type-var]
    assert take("m4", a2) is None
    assert take("m5", a2) == game  # the game's cap: the address's lease taken first is given back
    assert kontor.r.zrange(a2, 0, -1) == ["m4"]
    before = kontor.r.zscore(game, "m1")
    flush_scripts(kontor)  # a node that forgot the script: the renewal loads it again
    store.renew_stream_leases([(a1, "m1"), (game, "m1"), (a2, "m4"), (game, "m4"), (game, "gone")], 90)
    assert kontor.r.zscore(game, "m1") > before  # type: ignore[operator]
    assert kontor.r.zscore(game, "gone") is None  # a renewal takes no new lease
    for member, address in (("m1", a1), ("m2", a1), ("m4", a2)):
        store.give_back_stream_leases(member, [address, game])
    assert kontor.r.zcard(game) == kontor.r.zcard(a1) == kontor.r.zcard(a2) == 0


# -- request limits ------------------------------------------------------------------------
def test_the_request_limits_count_on_the_store_in_one_slot_per_client(settings: Settings, kontor: Kontor) -> None:
    limits = RateLimits(replace(settings, limit_read_address="3/minute", limit_read_key="2/minute"))
    assert limits.hit("read", "192.0.2.9", "kid:a") is None
    assert limits.hit("read", "192.0.2.9", "kid:a") is None
    refusal = limits.hit("read", "192.0.2.9", "kid:a")
    assert refusal is not None and refusal.by == "key" and 1 <= refusal.retry_after <= 60
    flush_scripts(kontor)  # counted again after the store forgot the script, once
    refusal = limits.hit("read", "192.0.2.9", "kid:b")
    assert refusal is not None and refusal.by == "address"
    counters = {k: int(kontor.r.get(k)) for k in kontor.r.scan_iter(match=f"{settings.key_prefix}:limits:*")}  # type: ignore[arg-type]
    prefix = f"{settings.key_prefix}:limits:"
    assert counters == {f"{prefix}{{a:192.0.2.9}}:LIMITER/read/3/1/minute": 4,
                        f"{prefix}{{k:kid:a}}:LIMITER/read/2/1/minute": 3,
                        f"{prefix}{{k:kid:b}}:LIMITER/read/2/1/minute": 1}
    assert all(0 < kontor.r.ttl(k) <= 60 for k in counters)  # type: ignore[operator]


# -- one-key records: Idempotency-Key, the secret, unsubscribed addresses --------------------
def test_idempotency_records_the_secret_and_unsubscribed_addresses(kontor: Kontor) -> None:
    store = kontor.store
    assert store.idem_claim("c1", "k1", "fp", 60) is None
    assert store.idem_claim("c1", "k1", "fp", 60) == {"state": "inflight", "fp": "fp"}
    store.idem_finish("c1", "k1", "fp", 201, {"id": "gi"}, {"Location": "/games/gi"}, 60, game="gi")
    done: dict[str, Any] | None = store.idem_claim("c1", "k1", "fp", 60)
    assert done is not None and done["state"] == "done" and done["body"] == {"id": "gi"}
    assert kontor.r.smembers(store.key("gi", "idem")) == {store.idem_key("c1", "k1")}
    store.idem_release("c1", "k1")
    assert store.idem_claim("c1", "k1", "fp2", 60) is None
    secret = store.secret()
    assert secret and Kontor(kontor.settings).store.secret() == secret  # one secret for every process
    store.set_unsubscribed("Someone@Example.org")
    assert store.unsubscribed("someone@example.ORG")
    store.set_unsubscribed("someone@example.org", on=False)
    assert not store.unsubscribed("someone@example.org")
