"""Acknowledged means durable (issue 23, item 8): the setting `durability`, the check a
process makes when it starts, and a write's answer waiting for the store's disk."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from service import create_app
from service.config import Settings
from service.core.kontor import Kontor
from service.dev.valkey import start_valkey
from service.store.durable import NotDurable, barrier_key, check_at_start, problem, settle, valkey_fsync
from tests.service.conftest import Player, new_game


@pytest.fixture(scope="module")
def aof_valkey(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A Valkey with its append-only file on (`appendfsync everysec`), beside the tests'
    own (which keeps nothing on disk)."""
    server = start_valkey(Path(tmp_path_factory.mktemp("aof")), persist=False, attempts=5,
                          appendonly="yes", appendfsync="everysec")
    yield server
    server.stop()


def _settings(url: str, mode: str) -> Settings:
    return Settings(redis_url=url, durability=mode)


def test_the_default_is_durable_and_make_run_fsyncs_always() -> None:
    assert Settings().durability == "fsync-always"
    assert Settings.from_env({"KONTOR_DURABILITY": "waitaof"}).durability == "waitaof"
    assert valkey_fsync("fsync-always") == "always"
    assert valkey_fsync("waitaof") == valkey_fsync("none") == "everysec"


def test_a_store_without_its_append_only_file_cannot_keep_the_promise(settings: Settings) -> None:
    r = redis.Redis.from_url(settings.redis_url)
    assert problem(r, _settings(settings.redis_url, "none")) is None
    for mode in ("fsync-always", "waitaof"):
        why = problem(r, _settings(settings.redis_url, mode))
        assert why is not None and "appendonly no" in why and "KONTOR_DURABILITY=none" in why
        with pytest.raises(SystemExit, match="refuses to start"):
            s = _settings(settings.redis_url, mode)
            check_at_start(Kontor(s).store, s, "the web process")
    assert "must be one of" in (problem(r, _settings(settings.redis_url, "maybe")) or "")
    # WAITAOF itself refuses: a write is then not acknowledged.
    with pytest.raises(NotDurable, match="refused WAITAOF"):
        settle(r, _settings(settings.redis_url, "waitaof"))


def test_fsync_always_needs_appendfsync_always(aof_valkey: Any) -> None:
    r = redis.Redis.from_url(aof_valkey.connection_url)
    s = _settings(aof_valkey.connection_url, "fsync-always")
    assert "appendfsync is 'everysec'" in (problem(r, s) or "")
    assert problem(r, _settings(aof_valkey.connection_url, "waitaof")) is None
    r.config_set("appendfsync", "always")
    try:
        assert problem(r, s) is None
        check_at_start(Kontor(s).store, s, "the web process")  # starts
    finally:
        r.config_set("appendfsync", "everysec")


def test_waitaof_waits_for_the_store_to_confirm(aof_valkey: Any) -> None:
    r = redis.Redis.from_url(aof_valkey.connection_url, decode_responses=True)
    s = _settings(aof_valkey.connection_url, "waitaof")
    before = int(r.get(barrier_key(s)) or 0)
    settle(r, s)
    assert int(r.get(barrier_key(s)) or 0) == before + 1  # the small write WAITAOF waited for
    settle(r, _settings(aof_valkey.connection_url, "fsync-always"))  # nothing to do: no write, no wait
    assert int(r.get(barrier_key(s)) or 0) == before + 1


def test_the_web_process_refuses_to_start_on_a_store_that_is_not_durable(settings: Settings,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KONTOR_REDIS_URL", settings.redis_url)
    monkeypatch.setenv("KONTOR_DURABILITY", "fsync-always")
    with pytest.raises(SystemExit, match="appendonly no"):
        create_app()
    monkeypatch.setenv("KONTOR_DURABILITY", "none")
    assert create_app() is not None


def _app(settings: Settings, mode: str) -> Any:
    s = dataclasses.replace(settings, durability=mode)
    app = create_app(s, Kontor(s))
    app.config["TESTING"] = True
    return app.test_client()


def test_an_unconfirmed_write_is_not_acknowledged(settings: Settings) -> None:
    """Before issue 23 every write was answered at once; with `waitaof` a write the store
    does not confirm on disk (here: no append-only file) is answered 503, never 202."""
    plain = _app(settings, "none")
    host, players = new_game(plain, 2)
    seat = plain.get(f"/games/{host.game}/phases/current").json["requested"][0]
    p0 = players[seat]
    ph = plain.get(f"/games/{p0.game}/phases/current", headers=p0.bearer()).json
    order = ph["you"]["default_order"]
    strict = _app(settings, "waitaof")
    r = strict.put(f"/games/{p0.game}/phases/{ph['id']}/orders/{seat}",
                   json={"token": p0.order_token(ph["id"], order)})
    assert r.status_code == 503 and r.json["code"] == "store_unavailable" and r.headers["Retry-After"]
    late = Player.new()
    r = strict.post("/games", json={"title": "haendler", "seats": 2, "host_key": late.key.public, "seed": 1},
                    headers={"Idempotency-Key": "durable-create"})
    assert r.status_code == 503 and r.json["code"] == "store_unavailable"
    assert strict.get(f"/games/{p0.game}").status_code == 200  # a read waits for nothing


def test_a_confirmed_write_is_acknowledged_on_both_order_paths(settings: Settings, aof_valkey: Any) -> None:
    s = dataclasses.replace(settings, redis_url=aof_valkey.connection_url)
    redis.Redis.from_url(s.redis_url).flushall()
    client = _app(s, "waitaof")
    barrier = redis.Redis.from_url(s.redis_url, decode_responses=True)
    for fast in (True, False):  # the fast order path, then the route
        client.application.config["KONTOR_FAST_ORDERS"] = fast
        before = int(barrier.get(barrier_key(s)) or 0)
        host, players = new_game(client, 2)
        assert int(barrier.get(barrier_key(s)) or 0) == before + 1 + 2 + 1  # create, two joins, start: each waited
        seat = client.get(f"/games/{host.game}/phases/current").json["requested"][0]
        p = players[seat]
        ph = client.get(f"/games/{p.game}/phases/current", headers=p.bearer()).json
        before = int(barrier.get(barrier_key(s)) or 0)
        r = client.put(f"/games/{p.game}/phases/{ph['id']}/orders/{seat}",
                       json={"token": p.order_token(ph["id"], ph["you"]["default_order"])})
        assert r.status_code == 202, r.json
        assert int(barrier.get(barrier_key(s)) or 0) == before + 1


# -- on a cluster (issue 24) -------------------------------------------------------------
@pytest.fixture
def cluster_aof(valkey_cluster: Any) -> Iterator[list[redis.Redis]]:
    """The tests' cluster with its append-only files on (`appendfsync always` on every
    master) for one test; off again after it."""
    masters = [redis.Redis(host=s.host, port=s.port, decode_responses=True) for s in valkey_cluster.masters]
    for m in masters:
        m.config_set("appendonly", "yes")
        m.config_set("appendfsync", "always")
    yield masters
    for m in masters:
        m.config_set("appendfsync", "everysec")
        m.config_set("appendonly", "no")


def _on_cluster(cluster: Any, valkey: Any, mode: str) -> Settings:
    """Settings with the store on the tests' cluster (the queue on the plain Valkey)."""
    return Settings(redis_url=cluster.url, queue_url=valkey.connection_url, durability=mode)


@pytest.mark.cluster
def test_fsync_always_is_checked_on_every_primary_of_a_cluster(valkey_cluster: Any, cluster_aof: Any,
                                                               valkey: Any) -> None:
    s = _on_cluster(valkey_cluster, valkey, "fsync-always")
    store = Kontor(s).store
    assert problem(store.r, s) is None
    check_at_start(store, s, "the web process")  # starts
    last = valkey_cluster.masters[-1]
    cluster_aof[-1].config_set("appendfsync", "everysec")  # one primary of three
    why = problem(store.r, s) or ""
    assert f"node {last.host}:{last.port}'s appendfsync is 'everysec'" in why and "every primary" in why
    with pytest.raises(SystemExit, match="refuses to start"):
        check_at_start(store, s, "the web process")
    assert problem(store.r, _on_cluster(valkey_cluster, valkey, "waitaof")) is None
    cluster_aof[0].config_set("appendonly", "no")
    assert "appendonly no" in (problem(store.r, _on_cluster(valkey_cluster, valkey, "waitaof")) or "")


@pytest.mark.cluster
def test_waitaof_on_a_cluster_waits_on_every_primary(valkey_cluster: Any, cluster_aof: Any, valkey: Any) -> None:
    from service.store.base import store_client
    from service.store.durable import node_barrier_key

    s = _on_cluster(valkey_cluster, valkey, "waitaof")
    client = store_client(s.redis_url)
    markers = {node.name: node_barrier_key(client, node, s) for node in client.get_primaries()}
    assert len(markers) == 3 and len(set(markers.values())) == 3
    before = {name: int(client.get(key) or 0) for name, key in markers.items()}
    settle(client, s)  # a write on any primary: every primary's marker written and waited for
    assert {name: int(client.get(key) or 0) for name, key in markers.items()} == \
        {name: n + 1 for name, n in before.items()}
    Kontor(s).store.settle(s)  # the store's own call, on its cluster client
    cluster_aof[1].config_set("appendonly", "no")  # one primary without its file: not acknowledged
    with pytest.raises(NotDurable, match="refused WAITAOF"):
        settle(client, s)


def _replicas_ready(client: Any, s: Settings, masters: list[Any]) -> None:
    """Wait until every master's replica is in sync: its link is up, then a `settle`
    succeeds."""
    end = time.monotonic() + 30
    for m in masters:
        info = redis.Redis(host=m.host, port=m.port).info("replication")
        while not any(isinstance(v, dict) and v.get("state") == "online" for k, v in info.items()
                      if k.startswith("slave")):
            assert time.monotonic() < end, info
            time.sleep(0.05)
            info = redis.Redis(host=m.host, port=m.port).info("replication")
    while True:
        try:
            settle(client, dataclasses.replace(s, durability_timeout=3.0))
            return
        except NotDurable:
            assert time.monotonic() < end, "the replicas never confirmed a write"


def test_replicas_confirm_each_acknowledged_write_when_asked(tmp_path: Path) -> None:
    """`durability_replicas`: a replica has the write before it is acknowledged, so a
    failover to that replica keeps it (one server and its replica)."""
    primary = start_valkey(tmp_path / "p", persist=False, attempts=5, appendonly="yes", appendfsync="always",
                           **{"repl-diskless-sync-delay": 0})
    replica = start_valkey(tmp_path / "r", persist=False, attempts=5, appendonly="yes", appendfsync="always",
                           replicaof=f"{primary.host} {primary.port}")
    try:
        p, r = (redis.Redis(host=x.host, port=x.port, decode_responses=True) for x in (primary, replica))
        s = Settings(redis_url=primary.connection_url, durability="fsync-always", durability_replicas=1,
                     durability_timeout=1.0)
        _replicas_ready(p, s, [primary])
        assert problem(p, s) is None
        before = int(p.get(barrier_key(s)) or 0)
        settle(p, s)  # fsync-always: the primary's answer was its own disk; the replica's copy is waited for
        assert int(r.get(barrier_key(s)) or 0) == before + 1  # the marker is on the replica when it returns
        assert "has 1 replica connected" in (problem(p, dataclasses.replace(s, durability_replicas=2)) or "")
        assert "0 or more" in (problem(p, dataclasses.replace(s, durability_replicas=-1)) or "")
        r.client_pause(2000, all=True)  # a replica that does not answer: not acknowledged
        with pytest.raises(NotDurable, match="0 of the 1 replicas"):
            settle(p, dataclasses.replace(s, durability_timeout=0.3))
        r.client_unpause()
    finally:
        replica.stop()
        primary.stop()


@pytest.mark.cluster
def test_replicas_confirm_each_acknowledged_write_on_a_cluster(tmp_path: Path, valkey: Any) -> None:
    from service.dev.cluster import start_cluster

    cluster = start_cluster(tmp_path, masters=3, replicas=1, appendonly="yes", appendfsync="always",
                            **{"repl-diskless-sync-delay": 0})
    try:
        s = Settings(redis_url=cluster.url, queue_url=valkey.connection_url, durability="waitaof",
                     durability_replicas=1, durability_timeout=1.0)
        store = Kontor(s).store
        _replicas_ready(store.r, s, cluster.masters)
        assert problem(store.r, s) is None
        store.settle(s)  # on every primary: its own file and its replica's
        assert "has 1 replica connected" in (problem(store.r, dataclasses.replace(s, durability_replicas=2)) or "")
        r = redis.Redis(host=cluster.replicas[0].host, port=cluster.replicas[0].port)
        r.client_pause(2000, all=True)  # one primary's replica does not answer: not acknowledged
        with pytest.raises(NotDurable, match="0 of the 1 replicas"):
            store.settle(dataclasses.replace(s, durability_timeout=0.3))
        r.client_unpause()
    finally:
        cluster.stop()
