"""Listings read from the indexes (issue 23, item 1): `GET /games?status=...` and `GET /`
read the top of each bucket of a sorted-set index by status (or of `all`, by recency),
never every game; the indexes move with the status (in a call right after the game's
script); pagination is
stable across buckets; the sweeper repairs the indexes.
"""

from __future__ import annotations

import zlib
from typing import Any

from service.core.kontor import Kontor
from service.store.keys import INDEX_BUCKETS, INDEXES
from tests.service.conftest import Player, domain_game


def meta(gid: str, created: float, status: str = "lobby") -> dict[str, str]:
    return {"title": "haendler", "name": f"game {gid}", "seats": "3", "status": status, "created_at": f"{created:.6f}",
            "options": "{}", "policy": "{}", "host_kid": "hk", "host_key": "x", "seed": "7"}


def make(kontor: Kontor, n: int, ids: list[str] | None = None) -> list[str]:
    """`n` lobby games straight through the store's create script, one second apart (the
    newest a few minutes old)."""
    start = kontor.now() - 1000
    ids = ids or [f"g{i:04d}" for i in range(n)]
    for i, gid in enumerate(ids):
        assert kontor.store.create(gid, meta(gid, start + i), "hk")
    return ids


def where(kontor: Kontor, gid: str) -> set[str]:
    """The indexes that hold `gid`."""
    return {i for i in INDEXES if kontor.store.r.zscore(kontor.store.index_key(i, gid), gid) is not None}


def pages(kontor: Kontor, status: str | None, limit: int) -> list[str]:
    out: list[str] = []
    before = None
    for _ in range(1000):
        page = kontor.listing(status, limit, before)
        out += [g["id"] for g in page["items"]]
        before = page["before"]
        if before is None:
            return out
    raise AssertionError("the pages never ended")


def calls(kontor: Kontor, command: str) -> int:
    stats: dict[str, Any] = kontor.store.r.info("commandstats")
    return int(stats.get(f"cmdstat_{command}", {}).get("calls", 0))


def test_create_puts_the_game_in_its_buckets(kontor: Kontor) -> None:
    gid = kontor.create_game("haendler", 3, None, None, 7, Player.new().key.public)["id"]
    assert where(kontor, gid) == {"lobby", "all"}
    assert kontor.store.index_key("lobby", gid).startswith(f"{kontor.settings.key_prefix}:{{games-lobby-")
    assert not kontor.store.create(gid, meta(gid, 1.0), "hk"), "an id taken is refused"


def test_pages_are_complete_and_stable_across_buckets(kontor: Kontor) -> None:
    ids = make(kontor, 75)
    buckets = {kontor.store.index_key("lobby", g) for g in ids}
    assert len(buckets) == INDEX_BUCKETS, "the games are spread over every bucket"
    newest_first = list(reversed(ids))
    for limit in (1, 7, 50, 200):
        assert pages(kontor, "lobby", limit) == newest_first
        assert pages(kontor, None, limit) == newest_first
    assert pages(kontor, "running", 10) == []


def test_pages_are_complete_when_one_bucket_holds_most_games(kontor: Kontor) -> None:
    crowded = [g for g in (f"c{i:05d}" for i in range(5000)) if zlib.crc32(g.encode()) % INDEX_BUCKETS == 3][:60]
    ids = make(kontor, 65, crowded + ["x1", "x2", "x3", "x4", "x5"])
    assert len({kontor.store.index_key("lobby", g) for g in ids}) <= 6
    for limit in (1, 7, 50):
        assert pages(kontor, "lobby", limit) == list(reversed(ids))


def test_a_lobby_listing_reads_only_the_top_of_the_lobby_index(kontor: Kontor) -> None:
    old = make(kontor, 3)
    # 300 newer games that are over: a scan of every game (newest first) reads them all
    for i in range(300):
        gid = f"f{i:04d}"
        kontor.store.create(gid, meta(gid, 2_000_000.0 + i, "finished"), "hk")
        kontor.store.r.zrem(kontor.store.index_key("lobby", gid), gid)
        kontor.store.r.zadd(kontor.store.index_key("finished", gid), {gid: 2_000_000.0 + i})
    reads = calls(kontor, "hmget")
    page = kontor.listing("lobby", 2, None)
    assert [g["id"] for g in page["items"]] == [old[2], old[1]]
    assert calls(kontor, "hmget") - reads == 2, "only the listed games' metas are read"
    assert [g["id"] for g in kontor.listing("finished", 3, None)["items"]] == ["f0299", "f0298", "f0297"]


def test_the_commit_moves_the_game_between_the_indexes(kontor: Kontor) -> None:
    gid, _ = domain_game(kontor, seats=2)
    assert where(kontor, gid) == {"running", "all"}
    assert gid in [g["id"] for g in kontor.listing("running", 5, None)["items"]]
    assert gid not in [g["id"] for g in kontor.listing("lobby", 5, None)["items"]]
    # the game's last step resolves: the script answers the status it had and its creation
    # time, and the call after it (`place`: other slots) moves it to `finished`
    s = kontor.store
    ph = s.phase(gid)
    s.r.hset(s.key(gid, "phase"), "status", "resolving")
    out = s.commit_step(gid, int(ph["id"]), s.state(gid), None, None, "finished",
                        [{"type": "game_finished", "visible_to": "all", "phase": int(ph["id"]), "ranking": []}],
                        version=s.state_version(ph))
    assert out.committed and out.before == "running"
    assert out.created == float(s.meta(gid)["created_at"])
    assert where(kontor, gid) == {"running", "all"}, "the game's script writes the game's keys only"
    s.place(gid, "finished", out.before, out.created)
    assert where(kontor, gid) == {"finished", "all"}
    assert [g["id"] for g in kontor.listing("finished", 5, None)["items"]] == [gid]


def test_the_sweeper_repairs_the_indexes(kontor: Kontor) -> None:
    from service.jobs.sweep import sweep

    ids = make(kontor, 5)
    s = kontor.store
    lost, misplaced = ids[0], ids[1]
    s.r.zrem(s.index_key("lobby", lost), lost)
    s.r.zrem(s.index_key("all", lost), lost)
    s.r.zadd(s.index_key("running", misplaced), {misplaced: 1.0})
    s.r.zadd(s.index_key("running", "gone00"), {"gone00": 5.0})  # an entry whose game vanished
    s.r.zadd(s.index_key("all", "gone00"), {"gone00": 5.0})
    assert lost not in pages(kontor, "lobby", 10)
    added = removed = 0
    for _ in range(INDEX_BUCKETS * len(INDEXES) + 1):  # one bucket per sweep: a full round
        stats = sweep(kontor)
        added, removed = added + stats["index_added"], removed + stats["index_removed"]
    assert (added, removed) == (2, 2)
    assert where(kontor, lost) == {"lobby", "all"}
    assert where(kontor, misplaced) == {"lobby", "all"}
    assert where(kontor, "gone00") == set()
    assert pages(kontor, "lobby", 2) == list(reversed(ids))
