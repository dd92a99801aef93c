"""Benchmark: complete bot games per second on one core, for every title.

Targets (random bots, complete games on one core): Die Händler 100 four-seat games/s,
Auf Achse 100 six-seat games/s, Fantasy Business 200 eight-seat games/s. A title that is
not registered is skipped.

For each title it plays N games at every seat count with the title's `random` bots
through the real contract (requests -> bot -> validate -> resolve; a bot skips the
`validate` call only for an order legal as it built it, see `engine.core.bots`), R timed runs per
seat count taken in turn (so a passing load on the shared host spoils one run, not a
figure), and reports the median run. It prints a line per seat count, then the baseline
measured in the same run (JSON round-trips of a game state per second, a machine-speed
yardstick), and one JSON line per title:
{"bench":"engine_playouts","title":…,"seats":…,"games_per_s":…,"decisions_per_s":…,"target":…,"ratio":…,"peak_rss_mb":…}

    .venv/bin/python bench/engine_playouts.py [--games 200] [--runs 3] [--title haendler] [--time-limit 1800]
"""

from __future__ import annotations

import argparse
import json
import resource
import time

from lib import limit

from engine.core import Game, titles
from engine.core.bots import play_game

#: title -> (seat count the target is for, complete games per second).
TARGETS = {"haendler": (4, 100.0), "aufachse": (6, 100.0), "fantasy": (8, 200.0)}


def playouts(game: Game, seats: int, games: int) -> tuple[float, float, float]:
    bot = game.bots()["random"]
    decisions = steps = 0
    start = time.perf_counter()
    for seed in range(games):
        bots = {i: bot(f"bench/{seed}/{i}") for i in range(seats)}
        out = play_game(game, seats, bots, seed)
        decisions += out.decisions
        steps += len(out.steps)
    spent = time.perf_counter() - start
    return games / spent, decisions / spent, steps / games


def baseline(seconds: float = 1.0) -> float:
    """JSON round-trips per second of a fresh 4-seat Die Händler state (same run)."""
    state = titles()["haendler"].setup(4, {}, 1)
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(200):
            json.loads(json.dumps(state))
        n += 200
    return n / (time.perf_counter() - start)


def bench_title(game: Game, games: int, runs: int) -> dict[int, tuple[float, float]]:
    seat_counts = list(range(game.min_seats, game.max_seats + 1))
    playouts(game, game.max_seats, 5)  # warm the caches (data parse, route memo) before timing
    timed: dict[int, list[tuple[float, float, float]]] = {s: [] for s in seat_counts}
    for _ in range(runs):
        for seats in seat_counts:
            timed[seats].append(playouts(game, seats, games))
    out = {}
    for seats, rows in timed.items():
        rows.sort()
        gps, dps, steps = rows[(len(rows) - 1) // 2]  # the lower middle when even
        out[seats] = (gps, dps)
        print(f"{game.id} {seats} seats, random bots: {gps:7.1f} games/s  {dps:8.0f} decisions/s  "
              f"{steps:5.0f} steps/game  (median of {runs} runs of {games} games, "
              f"{rows[0][0]:.1f}-{rows[-1][0]:.1f} games/s)")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games per seat count and run")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per seat count (the median is reported)")
    parser.add_argument("--title", action="append", help="only these titles (repeatable)")
    limit.add_argument(parser, default=1800.0)
    args = parser.parse_args()
    if args.time_limit <= 0:
        parser.error("--time-limit must be positive")
    limit.arm(args.time_limit, "engine_playouts")
    if args.runs < 1 or args.games < 1:
        parser.error("--games and --runs must be at least 1")
    chosen = {tid: g for tid, g in sorted(titles().items()) if tid in TARGETS and (not args.title or tid in args.title)}
    results = {tid: bench_title(game, args.games, args.runs) for tid, game in chosen.items()}
    base = baseline()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"baseline (same run): {base:,.0f} state JSON round-trips/s")
    for tid, per_seats in results.items():
        seats, target = TARGETS[tid]
        gps, dps = per_seats[seats]
        print(f"{tid}: target {target:.0f} games/s at {seats} seats: ratio {gps / target:.2f}; "
              f"{seats}-seat games per 1000 baseline round-trips: {1000 * gps / base:.2f}")
        print(json.dumps({"bench": "engine_playouts", "title": tid, "seats": seats, "games_per_s": round(gps, 1),
                          "decisions_per_s": round(dps), "target": target, "ratio": round(gps / target, 2),
                          "peak_rss_mb": round(rss, 1)}))


if __name__ == "__main__":
    main()
