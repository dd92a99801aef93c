"""The store's layout (issue 12): `Store` composed of one mixin per aggregate, each method
defined in exactly one of them; nobody outside `service/store/` speaks to Redis; one
strict compact-JSON helper; clients with short timeouts."""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import pytest

import service.store
from service.channels.notify import dumps_payload
from service.config import Settings
from service.core.kontor import Kontor
from service.store import STORE_DOWN, TIMEOUT, Store, connect
from service.store.absences import Absences
from service.store.deliveries import Deliveries
from service.store.effects import Effects
from service.store.games import Games
from service.store.idempotency import Idempotency
from service.store.inbound import Inbound
from service.store.json import dumps, loads
from service.store.press import Press
from service.store.rematch import Rematches
from service.store.streams import Streams

# Also with the store on a Valkey Cluster and the queue on a Valkey of its own (issue 24).
pytestmark = pytest.mark.cluster

SERVICE = Path(service.store.__file__).resolve().parents[1]

#: The aggregate modules a `Store` method may be defined in.
AGGREGATES = {f"service.store.{name}" for name in
              ("keys", "base", "games", "deliveries", "idempotency", "inbound", "press", "effects", "streams",
               "rematch", "absences")}

#: Every public method and property `Store` had before the split: callers do not change.
BEFORE_SPLIT = {
    "active", "active_key", "activate", "add_delivery", "answered", "append_events", "bump_attempt",
    "cached_state", "contact", "contacts", "create", "credentials", "deliveries", "delivery",
    "digests_key", "due_digests", "events", "events_between", "expire", "games_key", "has_contacts",
    "history", "holder", "idem_claim", "idem_finish", "idem_release", "intake", "join", "key", "listing",
    "mark_reminded", "meta", "now", "order_key", "orders", "phase", "phases", "push_digest",
    "remember_key", "secret", "seats", "set_contact", "set_seat", "set_unsubscribed", "snapshot",
    "snapshot_at", "state", "submit", "submit_signed", "take_digest", "unsubscribed", "update_contact",
    "update_delivery",
}


def members(cls: type) -> set[str]:
    return {name for name in vars(cls) if not (name.startswith("__") and name.endswith("__"))}


# -- composition ---------------------------------------------------------------------------
def test_store_is_composed_of_the_aggregates() -> None:
    assert Store.__bases__ == (Games, Absences, Deliveries, Idempotency, Inbound, Press, Effects, Streams,
                              Rematches)
    assert members(Store) == set(), "Store itself defines nothing: every method lives in an aggregate module"


def test_every_method_is_defined_in_exactly_one_aggregate() -> None:
    owners: dict[str, list[str]] = {}
    for cls in Store.__mro__[1:-1]:  # neither Store nor object
        assert cls.__module__ in AGGREGATES, cls
        for name in members(cls):
            owners.setdefault(name, []).append(f"{cls.__module__}.{cls.__qualname__}")
    twice = {name: where for name, where in owners.items() if len(where) > 1}
    assert twice == {}, f"defined more than once (one silently shadows the other): {twice}"


def test_the_public_methods_are_still_there() -> None:
    assert BEFORE_SPLIT <= set(dir(Store))


# -- nobody outside the store speaks Redis ---------------------------------------------------
def outside_store() -> list[Path]:
    return [p for p in sorted(SERVICE.rglob("*.py")) if "store" not in p.relative_to(SERVICE).parts[:1]]


def test_no_module_outside_the_store_and_the_queue_imports_redis() -> None:
    offenders = []
    for path in outside_store():
        if path.relative_to(SERVICE).as_posix() == "jobs/queue.py":  # RQ's connection: allowed
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            offenders += [f"{path.relative_to(SERVICE)}:{node.lineno}" for n in names
                          if n == "redis" or n.startswith("redis.")]
    assert offenders == []


def test_no_module_outside_the_store_uses_the_redis_client() -> None:
    """`k.r`/`kontor().r` is the store's client: outside `service/store/` only `Kontor`
    holds it (to give it to the store); everyone else calls `Store` methods."""
    offenders = []
    for path in outside_store():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == "r" and isinstance(node.ctx, ast.Load):
                offenders.append(f"{path.relative_to(SERVICE)}:{node.lineno}")
    assert offenders == []


# -- the one compact-JSON helper ---------------------------------------------------------------
SAMPLE = {"b": [1, 2.5, None, True], "a": {"ü": "é€", "n": -0.0}, "s": "x\"y"}


def test_dumps_is_compact_json() -> None:
    assert dumps(SAMPLE) == json.dumps(SAMPLE, separators=(",", ":"))
    assert dumps(SAMPLE, ensure_ascii=False) == json.dumps(SAMPLE, separators=(",", ":"), ensure_ascii=False)
    assert dumps(SAMPLE, sort_keys=True) == json.dumps(SAMPLE, separators=(",", ":"), sort_keys=True)
    assert loads(dumps(SAMPLE)) == SAMPLE
    assert loads(dumps(SAMPLE).encode()) == SAMPLE


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_dumps_refuses_non_numbers(bad: float) -> None:
    for data in (bad, [bad], {"exp": bad}, {"a": {"b": [bad]}}):
        with pytest.raises(ValueError):
            dumps(data)
        with pytest.raises(ValueError):
            dumps(data, ensure_ascii=False, sort_keys=True)


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", '{"exp": NaN}', '{"iat": [1, Infinity]}',
                                  '{"a": -Infinity}', b'{"exp": NaN}'])
def test_loads_refuses_non_numbers(text: str | bytes) -> None:
    with pytest.raises(ValueError):
        loads(text)


def test_loads_refuses_what_is_not_json() -> None:
    for text in ("", "{", "{'a': 1}", "[1,]", "nan", "01"):
        with pytest.raises(ValueError):
            loads(text)


def test_webhook_payloads_use_the_helper() -> None:
    """A webhook body is the helper's output (unescaped UTF-8); before, NaN went out as
    `NaN`, which no JSON parser of a consumer accepts."""
    assert dumps_payload(SAMPLE) == dumps(SAMPLE, ensure_ascii=False)
    with pytest.raises(ValueError):
        dumps_payload({"money": math.nan})


# -- connections ---------------------------------------------------------------------------
def test_connect_sets_short_timeouts() -> None:
    """A frozen store fails a call within `TIMEOUT`, not the client's default 5 s."""
    client, raw = connect(Settings(redis_url="redis://127.0.0.1:9/0"))
    for c in (client, raw):
        kwargs = c.connection_pool.connection_kwargs
        assert (kwargs["socket_timeout"], kwargs["socket_connect_timeout"]) == (TIMEOUT, TIMEOUT)
    assert client.connection_pool.connection_kwargs.get("decode_responses") is True
    assert not raw.connection_pool.connection_kwargs.get("decode_responses")
    assert TIMEOUT < 5


def test_a_process_may_open_as_many_connections_as_a_web_worker_serves_requests() -> None:
    """A gevent web worker serves up to `worker_connections` requests and live streams at
    once; a smaller pool failed a burst of streams with `MaxConnectionsError` (503)."""
    from service.http import gunicorn_conf
    from service.store.base import MAX_CONNECTIONS

    client, raw = connect(Settings(redis_url="redis://127.0.0.1:9/0"))
    for c in (client, raw):
        assert c.connection_pool.max_connections == MAX_CONNECTIONS >= gunicorn_conf.worker_connections


def test_the_url_may_set_its_own_timeouts() -> None:
    client, _ = connect(Settings(redis_url="redis://127.0.0.1:9/0?socket_timeout=7&socket_connect_timeout=8"))
    kwargs = client.connection_pool.connection_kwargs
    assert (kwargs["socket_timeout"], kwargs["socket_connect_timeout"]) == (7, 8)


def test_kontor_gets_its_clients_from_the_store() -> None:
    k = Kontor(Settings(redis_url="redis://127.0.0.1:9/0"))
    assert k.r.connection_pool.connection_kwargs["socket_timeout"] == TIMEOUT
    assert k.rq.connection_pool.connection_kwargs["socket_timeout"] == TIMEOUT


# -- the methods that replaced direct Redis calls ------------------------------------------------
def test_press_slots(kontor: Kontor) -> None:
    store = kontor.store
    assert [store.take_press_slot("g1", 0, 60, 2, f"s{i}") for i in range(2)] == [None, None]
    wait = store.take_press_slot("g1", 0, 60, 2, "s2")
    assert wait is not None and 0 < wait <= 60
    assert store.take_press_slot("g1", "host", 60, 2, "h0") is None  # per writer
    store.give_back_press_slot("g1", 0, "s1")
    assert store.take_press_slot("g1", 0, 60, 2, "s3") is None


def test_outline_and_with_contacts(kontor: Kontor) -> None:
    store = kontor.store
    assert store.outline("nope") == ({}, set(), 0)
    assert store.create("g2", {"id": "g2", "title": "haendler", "seats": "3", "created_at": "1"}, "hostkid")
    store.set_seat("g2", 1, {"name": "b"}, "kid1")
    meta, taken, phase = store.outline("g2")
    assert (meta["title"], taken, phase) == ("haendler", {1}, 0)
    store.set_contact("g2", 1, {"email": "b@example.org"})
    assert store.with_contacts(["nope", "g2"]) == ["g2"]
    assert store.with_contacts([]) == []


def test_inbound_records(kontor: Kontor) -> None:
    store = kontor.store
    now = store.now()
    store.keep_inbound("in_1", {"id": "in_1", "raw": "eA=="}, now, 60)
    assert store.inbound("in_1") == {"id": "in_1", "raw": "eA=="}
    assert store.claim_inbound("in_1") and not store.claim_inbound("in_1")
    store.release_inbound("in_1")
    assert store.claim_inbound("in_1")
    store.note_inbound("in_1", {"status": "accepted"})
    assert store.inbound("in_1")["status"] == "accepted"
    assert store.inbound("in_2") == {}
    assert 0 < kontor.r.ttl(store.inbound_key("in_1")) <= 60  # type: ignore[operator]


def test_ping_and_what_a_store_down_raises(kontor: Kontor) -> None:
    """`STORE_DOWN` names the failures of a store that does not answer, so the HTTP layer
    can answer 503 without importing redis."""
    kontor.store.ping()
    dead = Store(connect(Settings(redis_url="redis://127.0.0.1:9/0"))[0])
    with pytest.raises(STORE_DOWN):
        dead.ping()
    with pytest.raises(STORE_DOWN):
        dead.meta("g")
