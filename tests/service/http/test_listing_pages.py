"""`GET /games?status=...` and the front page `GET /` over HTTP read the listing indexes
(issue 23, item 1): pages keep the API's shape (`items`, `before`) and are complete and
stable; the front page's lists cost the same reads with 400 games over as with none.
"""

from __future__ import annotations

from typing import Any

from service.core.kontor import Kontor
from tests.service.store.test_listing_index import calls, meta


def stored(kontor: Kontor, prefix: str, n: int, status: str, start: float) -> list[str]:
    """`n` games through the create script, then (when not `lobby`) moved to `status` as
    the commit script moves them."""
    s = kontor.store
    ids = [f"{prefix}{i:04d}" for i in range(n)]
    for i, gid in enumerate(ids):
        assert s.create(gid, meta(gid, start + i), "hk")
        if status != "lobby":
            s.r.hset(s.key(gid, "meta"), "status", status)
            s.r.zrem(s.index_key("lobby", gid), gid)
            s.r.zadd(s.index_key(status, gid), {gid: start + i})
    return ids


def walk(client: Any, query: str) -> list[str]:
    out: list[str] = []
    url = f"/games?{query}"
    for _ in range(100):
        r = client.get(url)
        assert r.status_code == 200, r.json
        assert set(r.json) == {"items", "before"}
        out += [g["id"] for g in r.json["items"]]
        if r.json["before"] is None:
            return out
        url = f"/games?{query}&before={r.json['before']!r}"
    raise AssertionError("no end")


def test_every_status_pages_through_the_indexes(client: Any, kontor: Kontor) -> None:
    now = kontor.now()
    lobby = stored(kontor, "l", 23, "lobby", now - 5000)
    running = stored(kontor, "r", 17, "running", now - 4000)
    finished = stored(kontor, "f", 12, "finished", now - 3000)
    assert walk(client, "status=lobby&limit=5") == lobby[::-1]
    assert walk(client, "status=running&limit=4") == running[::-1]
    assert walk(client, "status=finished&limit=50") == finished[::-1]
    assert walk(client, "limit=9") == (lobby + running + finished)[::-1]
    item = client.get("/games?status=lobby&limit=1").json["items"][0]
    assert set(item) == {"id", "title", "name", "status", "seats", "taken", "created_at"}


def test_the_front_page_reads_the_same_with_many_games_over(client: Any, kontor: Kontor) -> None:
    now = kontor.now()
    stored(kontor, "l", 60, "lobby", now - 9000)
    stored(kontor, "r", 25, "running", now - 8000)
    client.get("/")
    reads = calls(kontor, "hmget")
    page = client.get("/").get_data(as_text=True)
    few = calls(kontor, "hmget") - reads
    assert few == 50 + 20, "the 50 newest open games and the 20 newest running ones"
    assert "l0059" in page and "l0010" in page and "l0009" not in page
    assert "r0024" in page and "r0005" in page and "r0004" not in page
    stored(kontor, "f", 400, "finished", now - 1000)  # newer than all of them, and over
    reads = calls(kontor, "hmget")
    assert client.get("/").get_data(as_text=True) == page
    assert calls(kontor, "hmget") - reads == few
