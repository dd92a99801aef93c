"""The game's path on a Valkey Cluster (issue 24, items 2 and 3): every script and
transaction of a game touches the keys of its one slot; the per-game registries (the
running set, the registry) are bucketed; what cannot share the game's script (the
registry, the listing indexes, the running set, the Idempotency-Key records) is a call of
its own, before or after it, and the sweep repairs what a crash in between leaves; no
pipeline is ambiguous (`transaction=` said at every call); the fast order path runs on the
node's own connections.

The tests marked `cluster` run twice: on one Valkey and with the store on a 3-master
cluster (the queue on a Valkey of its own), where a cross-slot script fails outright.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import redis
from redis.commands.core import Script

import service
from service.config import Settings
from service.core.auth import signed_order
from service.core.kontor import Kontor
from service.http.fastpath import fast_receipt
from service.jobs.sweep import sweep
from service.store.base import Direct
from service.store.games import REGISTRY_GRACE
from service.store.keys import INDEX_BUCKETS, INDEXES
from tests.service import slotguard
from tests.service.conftest import Player, work
from tests.service.stall import registered

ROOT = Path(service.__file__).resolve().parents[1]


@pytest.fixture
def stall() -> Iterator[Any]:
    with registered() as game:
        yield game


def where(kontor: Kontor, gid: str) -> set[str]:
    """The listing indexes that hold `gid`."""
    return {i for i in INDEXES if kontor.store.r.zscore(kontor.store.index_key(i, gid), gid) is not None}


def in_registry(kontor: Kontor, gid: str) -> bool:
    return kontor.store.r.zscore(kontor.store.games_key(gid), gid) is not None


def node_of(kontor: Kontor, gid: str) -> str:
    """The node serving the game's slot (one server: "")."""
    r = kontor.store.r
    return str(r.get_node_from_key(kontor.store.key(gid, "meta")).name) if isinstance(r, redis.RedisCluster) else ""


# -- no ambiguous pipeline ------------------------------------------------------------------
def bare_pipelines(root: Path) -> list[str]:
    """Every `.pipeline(...)` call under `root` that does not say `transaction=`."""
    out = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "pipeline"
                    and not any(kw.arg == "transaction" for kw in node.keywords)):
                out.append(f"{path.relative_to(root.parent).as_posix()}:{node.lineno}")
    return out


def test_no_pipeline_call_leaves_its_kind_unsaid() -> None:
    """`Redis.pipeline()` is a MULTI transaction, `RedisCluster.pipeline()` a plain batch:
    a bare call means one thing on one server and another on a cluster."""
    assert bare_pipelines(ROOT / "service") + bare_pipelines(ROOT / "workers") == []


def test_the_scan_finds_a_bare_call(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def f(r):\n    r.pipeline()\n    r.pipeline(transaction=False)\n"
                                   "    r.pipeline(False)\n")
    found = bare_pipelines(tmp_path)
    assert [x.rsplit(":", 1)[1] for x in found] == ["2", "4"]


# -- every script and transaction of a game within its slot -----------------------------------
@pytest.fixture
def guarded(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[Any]]]:
    """Record the keys of every script and transaction the store runs (and fail a test at
    once on one that spans slots, as `tests/service/slotguard.py` does)."""
    seen: list[tuple[str, list[Any]]] = []
    call, execute, direct = Script.__call__, redis.client.Pipeline.execute, Direct._run

    def script(self: Script, keys: Any = None, args: Any = None, client: Any = None) -> Any:
        seen.append((self.script, list(keys or [])))
        slotguard.check("script", list(keys or []))
        return call(self, keys=keys, args=args, client=client)

    def pipeline(self: Any, raise_on_error: bool = True) -> Any:
        for cmd in self.command_stack:  # a script sent in a pipeline (`Games.create` on one server)
            if str(cmd[0][0]).upper() == "EVALSHA":
                seen.append((f"sha:{cmd[0][1]}", slotguard.command_keys(cmd[0])))
        if self.transaction or self.explicit_transaction:
            keys = [k for cmd in self.command_stack for k in slotguard.command_keys(cmd[0])]
            seen.append(("MULTI", keys))
            slotguard.check("transaction", keys)
        return execute(self, raise_on_error)

    def run(self: Any, script: Any, keys: list[str], args: list[Any]) -> Any:
        seen.append((script.script, list(keys)))
        slotguard.check("direct", keys)
        return direct(self, script, keys, args)

    monkeypatch.setattr(Script, "__call__", script)
    monkeypatch.setattr(redis.client.Pipeline, "execute", pipeline)
    monkeypatch.setattr(Direct, "_run", run)  # (`run`, and `call`: every `Lean` script's)
    return seen


@pytest.mark.cluster
def test_creation_commit_snapshot_and_purge_stay_in_the_games_slot(
        kontor: Kontor, guarded: list[tuple[str, list[Any]]]) -> None:
    s = kontor.store
    host = Player.new()
    gid = kontor.create_game("haendler", 2, None, None, 7, host.key.public)["id"]
    for seat in range(2):
        kontor.join(gid, f"P{seat}", Player.new().key.public, seat)
    kontor.start(gid)
    s.snapshot_at(gid)
    s.credentials(gid, host.key.kid)
    lobby = kontor.create_game("haendler", 2, None, None, 7, Player.new().key.public)["id"]
    s.r.hset(s.key(lobby, "meta"), "created_at", "1.0")
    assert s.purge_expired(lobby, 60).status == "expired"
    sources = {f"sha:{x.sha}": x.script for x in s.scripts.values()}
    ran = [sources.get(label, label) for label, _ in guarded]
    for what in ("-- Create a game", "-- Compare-and-set commit", "-- A game's meta, open step",
                 "-- What checking a signed read", "-- A lobby game's expiry"):
        assert any(what in src for src in ran), what
    for _, keys in guarded:  # one slot each: the game's own
        assert len(slotguard.slots_of(keys)) <= 1, keys


@pytest.mark.cluster
def test_snapshot_and_credentials_read_the_clock_in_the_games_script(kontor: Kontor) -> None:
    s = kontor.store
    host = Player.new()
    gid = kontor.create_game("haendler", 2, None, None, 7, host.key.public)["id"]
    before = kontor.now()
    meta, phase, state, now = s.snapshot_at(gid)
    assert meta["status"] == "lobby" and phase == {} and state is None
    assert before <= now <= kontor.now()
    holder, rec, host_key, when = s.credentials(gid, host.key.kid)
    assert (holder, rec, host_key) == ("host", None, s.meta(gid)["host_key"])
    assert now <= when <= kontor.now()
    assert s.credentials("nosuchgame", "kid")[:3] == (None, None, None)


# -- the registries, bucketed ----------------------------------------------------------------
@pytest.mark.cluster
def test_the_running_set_and_the_registry_are_bucketed(kontor: Kontor) -> None:
    s = kontor.store
    games = [f"b{i:03d}" for i in range(64)]
    for g in games:
        s.activate(g)
        s.r.zadd(s.games_key(g), {g: 1.0})
    assert s.active() == sorted(games)
    assert s.registered() == len(games)
    assert {s.active_key(g) for g in games} == {s.active_bucket(b) for b in range(INDEX_BUCKETS)}
    assert s.active_key(games[0]).startswith(f"{kontor.settings.key_prefix}:{{active-")
    assert s.games_key(games[0]).startswith(f"{kontor.settings.key_prefix}:{{registry-")
    assert not s.r.exists(f"{kontor.settings.key_prefix}:active", f"{kontor.settings.key_prefix}:games")
    s.activate(games[0], False)
    assert s.active() == sorted(games[1:])


@pytest.mark.cluster
def test_the_reconcile_walk_covers_every_bucket_and_goes_round(kontor: Kontor) -> None:
    """A running game missing from the running set is put back by the walk over the
    registry's buckets, a batch per sweep; the walk goes round."""
    s = kontor.store
    games = [f"r{i:03d}" for i in range(40)]
    for g in games:
        s.r.hset(s.key(g, "meta"), mapping={"status": "running", "event_seq": "1", "notified_through": "1"})
        s.r.zadd(s.games_key(g), {g: 1.0})
    found: list[str] = []
    for _ in range(3):  # a batch of 16 (1 per bucket): a bucket of 3 games needs 3 passes
        found += s.reconcile_active(INDEX_BUCKETS)
    assert sorted(found) == sorted(games) == s.active()
    assert s.reconcile_active(INDEX_BUCKETS * 8) == []  # the walk went round: nothing more


# -- a crash between a game's script and its calls outside the slot ---------------------------
@pytest.mark.cluster
def test_a_creation_cut_short_is_repaired_or_dropped_by_the_sweep(kontor: Kontor) -> None:
    s = kontor.store
    now = kontor.now()
    meta = {"title": "haendler", "name": "half", "seats": "2", "status": "lobby", "created_at": f"{now:.6f}",
            "options": "{}", "policy": "{}", "host_kid": "hk", "host_key": "x", "seed": "7"}
    # 1. the registry entry and the game's script, then the process died: no index entry
    s.r.zadd(s.games_key("half00"), {"half00": now})
    assert s.scripts["create"](keys=[s.key("half00", "meta"), s.key("half00", "keys")],
                               args=["half00", "hk", *(x for kv in meta.items() for x in kv)]) == 1
    # 2. the registry entry (the intent) only, long ago: the game never came to be
    s.r.zadd(s.games_key("never0"), {"never0": now - REGISTRY_GRACE - 1})
    # 3. an intent of a moment ago: its creation may still be under way
    s.r.zadd(s.games_key("young0"), {"young0": now - 1})
    assert where(kontor, "half00") == set()
    stats = sweep(kontor)
    assert where(kontor, "half00") == {"lobby", "all"}
    assert "half00" in [g["id"] for g in kontor.listing("lobby", 5, None)["items"]]
    assert not in_registry(kontor, "never0"), "an intent whose game never came to be is dropped"
    assert in_registry(kontor, "young0"), "a young intent is left to its creation"
    assert (stats["index_added"], stats["index_removed"]) == (1, 1)


@pytest.mark.cluster
def test_a_game_the_registry_lost_is_registered_again(kontor: Kontor) -> None:
    s = kontor.store
    gid = kontor.create_game("haendler", 2, None, None, 7, Player.new().key.public)["id"]
    s.r.zrem(s.games_key(gid), gid)
    for _ in range(INDEX_BUCKETS * len(INDEXES)):  # one index bucket per sweep: a full round
        sweep(kontor)
    assert in_registry(kontor, gid)


@pytest.mark.cluster
def test_a_commit_cut_short_before_its_index_and_running_set_calls_is_repaired(kontor: Kontor) -> None:
    s = kontor.store
    host = Player.new()
    gid = kontor.create_game("haendler", 2, None, None, 7, host.key.public)["id"]
    for seat in range(2):
        kontor.join(gid, f"P{seat}", Player.new().key.public, seat)
    placed: list[tuple[str, ...]] = []
    real = s.place
    s.place = lambda *a: placed.append(a)  # type: ignore[method-assign]  # the process dies here
    kontor.start(gid)
    s.place = real  # type: ignore[method-assign]
    assert placed and placed[0][1:3] == ("running", "lobby")
    assert s.meta(gid)["status"] == "running"
    assert where(kontor, gid) == {"lobby", "all"} and gid not in s.active()
    sweep(kontor)
    assert where(kontor, gid) == {"running", "all"}
    assert gid in s.active()
    assert gid in [g["id"] for g in kontor.listing("running", 5, None)["items"]]


@pytest.fixture
def lobby_settings(settings: Settings) -> Settings:
    return replace(settings, lobby_ttl=600, lobby_warning=60)


@pytest.mark.cluster
def test_a_lobby_expiry_cut_short_is_finished_by_the_next_sweep(lobby_settings: Settings) -> None:
    k = Kontor(lobby_settings)
    s = k.store
    gid = k.create_game("haendler", 2, None, None, 7, Player.new().key.public)["id"]
    k.join(gid, "P0", Player.new().key.public, 0)
    for n in range(2):  # the Idempotency-Key records of the creation and the join (as the API keeps them)
        s.idem_finish(f"client{n}", f"key{n}", "fp", 201, {"id": gid}, {}, 3600, game=gid)
    records = sorted(s.r.smembers(s.key(gid, "idem")))  # type: ignore[arg-type]
    assert len(records) == 2 and all(s.r.exists(r) for r in records)
    created = float(s.meta(gid)["created_at"]) - 700  # the lobby's time is over
    s.r.hset(s.key(gid, "meta"), mapping={"created_at": f"{created:.6f}", "closing_told": "1"})
    for key in [s.games_key(gid), *s.index_keys(gid)]:
        s.r.zadd(key, {gid: created}, xx=True)
    # the game's script runs, then the process dies before the calls outside its slot
    seats = int(s.meta(gid)["seats"])
    meta, idem = s.key(gid, "meta"), s.key(gid, "idem")
    keys = [meta, idem, *(x for x in s.game_keys(gid, seats) if x not in (meta, idem))]
    assert s.scripts["purge"](keys=keys, args=[600]) == ["expired"]
    assert not s.r.exists(meta) and in_registry(k, gid) and where(k, gid) == {"lobby", "all"}
    stats = sweep(k)
    assert stats["lobby_expired"] == 0, "the game itself was gone already"
    assert not in_registry(k, gid) and where(k, gid) == set()
    assert not any(s.r.exists(r) for r in records), "the Idempotency-Key records about it went too"
    assert not s.r.exists(idem)
    assert k.store.meta(gid) == {}


# -- the fast order path on the node's own connections ---------------------------------------
@pytest.mark.cluster
def test_direct_runs_on_the_keys_node_and_follows_a_moved_slot(kontor: Kontor, monkeypatch: pytest.MonkeyPatch,
                                                                 store_kind: str) -> None:
    s = kontor.store
    gid = kontor.create_game("haendler", 2, None, None, 7, Player.new().key.public)["id"]
    direct = Direct(s.r)
    script = s.scripts["phase_now"]
    keys = [s.key(gid, "meta"), s.key(gid, "phase")]
    assert direct.run(script, keys, []) == ["lobby"]
    assert list(direct.idle) == [node_of(kontor, gid)], "a connection of the key's node, kept for it"
    used = len(direct.idle[node_of(kontor, gid)])
    s.r.script_flush()  # a restarted store forgot the scripts: loaded again on that connection
    assert direct.run(script, keys, []) == ["lobby"]
    assert len(direct.idle[node_of(kontor, gid)]) == used, "the connection is reused"
    if store_kind == "cluster":  # a slot that moved: the node answers MOVED, the client's call follows it
        other = next(n for n in s.r.get_primaries() if n.name != node_of(kontor, gid))
        # The route the client keeps for the slot names the other node (as after a move).
        from redis.cluster import key_slot

        monkeypatch.setitem(s.r.__dict__.setdefault("_routes", {}), key_slot(keys[0].encode()),
                            s.r.get_redis_connection(other))
        assert direct.run(script, keys, []) == ["lobby"]
        assert other.name in direct.idle


def order(kontor: Kontor, p: Player, phase: int) -> str:
    """Send seat `p`'s default order for `phase` as the order PUT does: the fast path
    (`fast_receipt`) when it can vouch for it, else the full path; which one took it."""
    token = p.order_token(phase, kontor.current_phase(p.game, p.seat)["you"]["default_order"])
    assert p.seat is not None
    if fast_receipt(kontor, p.game, phase, p.seat, token) is not None:
        return "fast"
    claims, snap = signed_order(kontor, p.game, phase, p.seat, token)
    kontor.submit(p.game, phase, p.seat, claims["order"], via="http", jti=claims["jti"], token=token, snapshot=snap)
    return "full"


@pytest.mark.cluster
def test_games_on_every_shard_play_to_their_end_with_the_fast_order_path(
        kontor: Kontor, settings: Settings, stall: Any, store_kind: str) -> None:
    s = kontor.store
    games: dict[str, list[Player]] = {}
    nodes: set[str] = set()
    want = 3 if store_kind == "cluster" else 1
    while len(nodes) < want or len(games) < 3:
        gid = kontor.create_game("stall", 2, None, None, 3, Player.new().key.public)["id"]
        players = [Player(Player.new().key, gid, seat) for seat in range(2)]
        for p in players:
            kontor.join(gid, f"P{p.seat}", p.key.public, p.seat)
        kontor.start(gid)
        games[gid] = players
        nodes.add(node_of(kontor, gid))
        assert len(games) < 40, "no game on some shard"
    assert len(nodes) == want
    paths: list[str] = []
    for _ in range(10):
        todo = [g for g in games if s.meta(g)["status"] != "finished"]
        if not todo:
            break
        for gid in todo:
            ph = kontor.current_phase(gid, "public")
            paths += [order(kontor, games[gid][seat], ph["id"]) for seat in ph["requested"]]
        work(settings)
    assert all(s.meta(g)["status"] == "finished" for g in games)
    # every order was the fast path's (on the cluster: on the connections of the game's node)
    assert paths == ["fast"] * (4 * len(games))
    assert sorted(g["id"] for g in kontor.listing("finished", 50, None)["items"]) == sorted(games)
    assert all(where(kontor, g) == {"finished", "all"} and in_registry(kontor, g) for g in games)
    sweep(kontor)  # told (nobody has a contact): the finished games leave the running set
    assert not set(games) & set(s.active())
    for gid in games:
        assert kontor.store.history(gid)[-1]["phase"] == 4


def test_the_sweep_reads_the_running_set_in_one_round_trip(kontor: Kontor) -> None:
    s = kontor.store
    for i in range(100):
        s.activate(f"a{i:03d}")
    before = int(s.r.info("stats")["total_commands_processed"])
    assert len(s.active()) == 100
    # the 16 buckets' SMEMBERS, pipelined (plus INFO itself)
    assert int(s.r.info("stats")["total_commands_processed"]) - before == INDEX_BUCKETS + 1


def test_creation_is_one_round_trip_on_one_server(kontor: Kontor, monkeypatch: pytest.MonkeyPatch) -> None:
    s = kontor.store
    sent: list[int] = []
    real = redis.client.Pipeline.execute

    def execute(self: Any, raise_on_error: bool = True) -> Any:
        sent.append(len(self.command_stack))
        return real(self, raise_on_error)

    monkeypatch.setattr(redis.client.Pipeline, "execute", execute)
    calls = int(s.r.info("stats")["total_commands_processed"])
    meta = {"title": "haendler", "name": "x", "seats": "2", "status": "lobby", "created_at": "5.0"}
    assert s.create("one000", meta, "hk")
    assert sent == [4], "registry, the game's script, two index entries: one pipeline"
    # the pipeline's 4 commands, the script's 3 (HSETNX, HSET, HSET) and INFO itself
    assert int(s.r.info("stats")["total_commands_processed"]) - calls == 8
    assert in_registry(kontor, "one000") and where(kontor, "one000") == {"lobby", "all"}
    s.r.script_flush()  # the script forgotten (a restarted store): loaded, and the creation done
    assert s.create("two000", meta, "hk") and where(kontor, "two000") == {"lobby", "all"}
    assert not s.create("two000", meta, "hk"), "an id taken is refused"


@pytest.mark.cluster
def test_the_registries_of_before_the_buckets_are_moved_into_them(kontor: Kontor) -> None:
    s = kontor.store
    prefix = kontor.settings.key_prefix
    old = [f"o{i:03d}" for i in range(30)]
    s.r.sadd(f"{prefix}:active", *old[:10])
    s.r.zadd(f"{prefix}:games", {g: 100.0 + i for i, g in enumerate(old)})
    assert s.migrate_registries(20) == 30  # 10 running, 20 of the registry
    assert s.migrate_registries(20) == 10
    assert s.migrate_registries(20) == 0
    assert not s.r.exists(f"{prefix}:active", f"{prefix}:games")
    assert s.active() == old[:10]
    assert s.registered() == 30
    assert s.r.zscore(s.games_key(old[29]), old[29]) == 129.0
    s.r.sadd(f"{prefix}:active", "late00")
    assert s.migrate_registries(20) == 0, "once found empty, a process looks no more"


@pytest.mark.cluster
def test_the_cluster_client_routes_one_slot_commands_and_batches_and_follows_a_wrong_route(
        kontor: Kontor, monkeypatch: pytest.MonkeyPatch, store_kind: str) -> None:
    """`RoutedCluster`: a one-slot command and a batch go straight to their node's client;
    a batch over several nodes answers in its own order; a route that names the wrong node
    (a slot that moved) answers right all the same, and the routes are learnt again."""
    if store_kind != "cluster":
        pytest.skip("the routes are the cluster client's")
    from redis.cluster import key_slot

    r = kontor.store.r
    keys = [f"kontor:{{g:{i}}}:meta" for i in range(12)]
    nodes = {r.get_node_from_key(k).name for k in keys}
    assert len(nodes) == 3, "the keys are on every master"
    for i, k in enumerate(keys):
        r.hset(k, mapping={"n": str(i)})
    pipe = r.pipeline(transaction=False)
    for k in keys:
        pipe.hget(k, "n")
    pipe.hget(keys[0], "missing")
    assert pipe.execute() == [str(i) for i in range(12)] + [None]
    assert {key_slot(k.encode()) for k in keys} <= set(r.__dict__["_routes"]), "a route kept per slot"
    wrong = next(n for n in r.get_primaries() if n.name != r.get_node_from_key(keys[0]).name)
    r.__dict__["_routes"][key_slot(keys[0].encode())] = r.get_redis_connection(wrong)
    assert r.hget(keys[0], "n") == "0", "MOVED: the cluster client's own way"
    assert r.__dict__["_routes"] == {}, "the routes are learnt again"
    r.route(keys[0])
    r.__dict__["_routes"][key_slot(keys[0].encode())] = r.get_redis_connection(wrong)
    pipe = r.pipeline(transaction=False)
    pipe.hget(keys[0], "n")
    pipe.hget(keys[1], "n")
    assert pipe.execute() == ["0", "1"]
    pipe = r.pipeline(transaction=False)
    pipe.hget(keys[0], "n")
    pipe.incr(keys[1])  # a hash: WRONGTYPE
    with pytest.raises(redis.exceptions.ResponseError, match="WRONGTYPE"):
        pipe.execute()
    pipe = r.pipeline(transaction=False)
    pipe.hget(keys[0], "n")
    pipe.incr(keys[1])
    got = pipe.execute(raise_on_error=False)
    assert got[0] == "0" and isinstance(got[1], redis.exceptions.ResponseError)
