"""Benchmark: the listings at 100 and at 100,000 stored games (issue 23, item 1).

`GET /` (the front page: open games and running games) and `GET /games?status=lobby`
read the listing indexes (`service.store.games.Games.listing`); their latency should not
grow with the number of stored games. This bench starts one embedded Valkey per size
(no persistence), fills each with its number of games (`--sizes`: 100 and 100,000), and
times both requests on every size through the real WSGI app (`service.create_app`, fast
paths and all, in this process: no network), interleaved (a request to each size in
turn, so the machine's other load weighs on both alike). It prints one JSON line per
size with the p50 and p90 in milliseconds, the games stored, and the store's memory per
game; the last line gives, per request, the p50 at the largest size over the p50 at the
smallest (target: at most 1.5).

Filling: through the store's own create script (`Store.create`: meta, host key,
registry, the `all` and `lobby` indexes), in pipelines of `--batch` games, each with its
seats taken (`seats` hash). A server holds mostly games that are over or being played,
so past the first `YOUNG` (100) games `--lobby` of them (5 % by default) stay in the
lobby, `--running` (15 %) are moved to `running` and the rest to `finished` (of the first
100: 60 %, 25 % and 15 %, so that the pages are as full at 100 games as at 100,000), as
the commit script moves them (the meta's status and the game's entry from the `lobby`
index to its status's, in the same pipeline).
The games hold no state or events (a real game's events are tens of KB and no listing
reads them): `bytes_per_game` is the listing's share of a game (meta, seats, host key,
registry and index entries), Valkey `used_memory` above the empty store's, per game.

    PYTHONPATH=$PWD .venv/bin/python bench/listing.py [--sizes 100,100000] [--requests 300]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

from service import create_app
from service.config import Settings
from service.core.kontor import Kontor
from service.dev.valkey import start_valkey
from service.store.json import dumps

TITLES = {"haendler": (3, 5), "aufachse": (2, 6), "fantasy": (3, 5)}
NAMES = ("Friday table", "Club night", "Rematch", "Office league", "")
#: The first games stored: 60 % in the lobby, 25 % running, 15 % over, so that at the
#: smallest size the pages list as many games as at the largest (the front page lists 50
#: open and 20 running games, `GET /games?status=lobby` 50): the comparison is then of
#: the same page over more stored games, not of a shorter page.
YOUNG = 100


def fill(k: Kontor, start: int, stop: int, batch: int, lobby: float, running: float, now: float) -> None:
    """Games `start` to `stop - 1` (ids from their number), created one second apart
    ending a minute ago, so the newest are the last made."""
    store = k.store
    create = store.scripts["create"]
    titles = list(TITLES)
    for lo in range(start, stop, batch):
        pipe = store.r.pipeline(transaction=False)
        for i in range(lo, min(stop, lo + batch)):
            gid = f"{zlib.crc32(str(i).encode()):08x}{i % 256:02x}"
            title = titles[i % len(titles)]
            seats = TITLES[title][0] + i % 2
            created = now - 60 - (10**6 - i)
            meta = {"title": title, "name": NAMES[i % len(NAMES)] or f"Game #{gid[:4]}", "seats": str(seats),
                    "options": "{}", "policy": dumps({"sealed_seconds": 86400, "on_expiry": "defaults"}),
                    "host_kid": f"h{gid}", "host_key": "x" * 43, "status": "lobby", "seed": '"s"',
                    "created_at": f"{created:.6f}", "event_seq": "0", "notified_through": "0",
                    "reply_orders": "1", "press": "all"}
            flat = [x for kv in meta.items() for x in kv]
            pipe.zadd(store.games_key(gid), {gid: created})  # as `Games.create`: registry, game, indexes
            create(keys=[store.key(gid, "meta"), store.key(gid, "keys")], args=[gid, f"h{gid}", *flat], client=pipe)
            pipe.zadd(store.index_key("all", gid), {gid: created})
            pipe.zadd(store.index_key("lobby", gid), {gid: created})
            r = (i * 7919) % 1000 / 1000  # spread the statuses evenly over time
            if i < YOUNG:  # a young server's first games: many still open (see the docstring)
                status = "lobby" if r < 0.6 else "running" if r < 0.85 else "finished"
            else:
                status = "lobby" if r < lobby else "running" if r < lobby + running else "finished"
            taken = seats if status != "lobby" else i % seats
            for s in range(taken):
                pipe.hset(store.key(gid, "seats"), str(s), dumps({"name": f"Player {s}", "public_key": "y" * 43,
                                                                   "kid": f"k{gid}{s}", "bot": None,
                                                                   "joined_at": f"{created:.6f}"}))
            if status != "lobby":
                pipe.hset(store.key(gid, "meta"), mapping={"status": status, "updated_at": f"{created + 30:.6f}"})
                pipe.zrem(store.index_key("lobby", gid), gid)
                pipe.zadd(store.index_key(status, gid), {gid: created})
        pipe.execute()


def timed(clients: dict[int, Any], paths: dict[str, str], n: int) -> dict[int, dict[str, tuple[float, float]]]:
    """p50 and p90 in ms of `n` GETs of each path on each size's app, interleaved (one
    request of each in turn, so the machine's other load weighs on every size alike),
    after 50 rounds not timed."""
    times: dict[tuple[int, str], list[float]] = {(size, name): [] for size in clients for name in paths}
    for i in range(50 + n):
        for size, client in clients.items():
            for name, path in paths.items():
                t = time.perf_counter()
                r = client.get(path)
                took = (time.perf_counter() - t) * 1000
                assert r.status_code == 200, r.status_code
                if i >= 50:
                    times[(size, name)].append(took)
    out: dict[int, dict[str, tuple[float, float]]] = {size: {} for size in clients}
    for (size, name), ts in times.items():
        out[size][name] = (statistics.median(ts), statistics.quantiles(ts, n=10)[8])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100,100000")
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--lobby", type=float, default=0.05)
    ap.add_argument("--running", type=float, default=0.15)
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    paths = {"GET /": "/", "GET /games?status=lobby": "/games?status=lobby"}
    servers: list[Any] = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            clients: dict[int, Any] = {}
            rows: dict[int, dict[str, Any]] = {}
            for size in sizes:  # one Valkey per size, all kept running for the timing
                server = start_valkey(Path(tmp) / f"valkey{size}", persist=False, attempts=3)
                servers.append(server)
                settings = Settings(redis_url=server.connection_url)
                k = Kontor(settings)
                k.store.r.flushall()
                empty = int(k.store.r.info("memory")["used_memory"])
                now = k.now()
                t = time.perf_counter()
                fill(k, 0, size, args.batch, args.lobby, args.running, now)
                filled = time.perf_counter() - t
                used = int(k.store.r.info("memory")["used_memory"])
                rows[size] = {"games": k.store.registered(),
                              "fill_s": round(filled, 1), "bytes_per_game": round((used - empty) / size)}
                clients[size] = create_app(settings, k).test_client()
            for size, by_path in timed(clients, paths, args.requests).items():
                for name, (p50, p90) in by_path.items():
                    rows[size][name] = {"p50_ms": round(p50, 2), "p90_ms": round(p90, 2)}
                print(json.dumps(rows[size]), flush=True)
            lo, hi = rows[sizes[0]], rows[sizes[-1]]
            ratio = f"p50_ratio_{hi['games']}/{lo['games']}"
            summary = {name: {ratio: round(hi[name]["p50_ms"] / lo[name]["p50_ms"], 2), "target": 1.5}
                       for name in paths}
            print(json.dumps({"summary": summary, "bytes_per_game_at_largest": hi["bytes_per_game"]}), flush=True)
        finally:
            for server in servers:
                server.stop()


if __name__ == "__main__":
    main()
