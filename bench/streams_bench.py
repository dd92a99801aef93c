"""Benchmark: `/healthz` latency while many live streams are open (issue 23, item 2: it
answers within 100 ms with 2,500 streams open).

Starts its own stack (`bench/lib/stack.py`: an embedded Valkey and the Procfile's web
line, gunicorn with `service/http/gunicorn_conf.py`, `--web-workers` gevent workers,
as `make run`), makes `--games` lobby games, opens `--streams` public streams spread
over them (raw sockets on loopback, `service.dev.streamload`) and `--idle` connections
that never send a request, then times `--probes` `GET /healthz`, one after another,
each on a fresh connection. Every stream comes from one address (loopback), so the
per-address cap is lifted to fit them (`KONTOR_STREAM_MAX_PER_ADDRESS`), and the
per-process cap too (the workers need not share them evenly); the per-game cap keeps
its default (250 streams a game by default here).

Human-readable lines first, then one JSON line:
{"bench":"streams","streams_open":…,"idle_open":…,"healthz_p50_ms":…,"healthz_max_ms":…,
 "target_ms":100,"ok":…}

    .venv/bin/python bench/streams_bench.py [--streams 2500] [--idle 300] [--games 10]
        [--probes 200] [--web-workers 2]
"""

from __future__ import annotations

import argparse
import json
import os

from lib.stack import HOST, Stack

from service.dev import streamload

TARGET_MS = 100.0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--streams", type=int, default=2500)
    parser.add_argument("--idle", type=int, default=300)
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--probes", type=int, default=200)
    parser.add_argument("--web-workers", type=int, default=2)
    args = parser.parse_args(argv)
    need = 2 * (args.streams + args.idle) + 2048
    soft = streamload.raise_open_files(need)
    if soft < need:
        raise SystemExit(f"open files are limited to {soft} (ulimit -n); this run needs {need}")
    os.environ.update(KONTOR_STREAM_MAX_PER_ADDRESS=str(args.streams + 100),
                      KONTOR_STREAM_MAX_PER_PROCESS=str(args.streams))
    stack = Stack(web_workers=args.web_workers, worker_class="gevent", worker=False)
    stack.start()
    try:
        port = stack.api_port
        streamload.healthz_times(HOST, port, 20)  # every worker up
        games = streamload.lobby_games(HOST, port, args.games)
        streams = streamload.open_streams(HOST, port, games, args.streams, timeout=120)
        idle = streamload.idle_connections(HOST, port, args.idle)
        opened = len(streams.open)
        try:
            got = streamload.summary(streamload.healthz_times(HOST, port, args.probes))
        finally:
            for s in idle:
                s.close()
            streams.close()
        quiet = streamload.summary(streamload.healthz_times(HOST, port, args.probes))
    finally:
        stack.stop()
    print(f"{opened} streams open in {streams.seconds:.1f} s (refused: {dict(streams.refused)}), "
          f"{args.idle} idle connections")
    print(f"/healthz with them open: p50 {got['p50_ms']} ms, max {got['max_ms']} ms, {got['statuses']} "
          f"(target {TARGET_MS:g} ms); with none: p50 {quiet['p50_ms']} ms, max {quiet['max_ms']} ms")
    ok = opened == args.streams and got["statuses"] == {"200": args.probes} and \
        got["max_ms"] <= TARGET_MS
    print(json.dumps({"bench": "streams", "streams_open": opened, "idle_open": args.idle,
                      "healthz_p50_ms": got["p50_ms"], "healthz_max_ms": got["max_ms"],
                      "quiet_p50_ms": quiet["p50_ms"], "target_ms": TARGET_MS, "ok": ok}))


if __name__ == "__main__":
    main()
