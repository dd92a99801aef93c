"""Benchmark: full Die Händler bot games per second on one core (issue 2, target >= 100
complete 4-seat games per second with random bots).

Plays N games for 2, 3 and 4 seats with random bots through the real contract
(requests -> bot -> validate -> resolve), R timed runs per seat count taken in turn (2, 3,
4, 2, 3, 4, ...) so that a passing load on the shared host spoils one run, not a figure,
and reports the median run. It prints a line per seat count, then the baseline measured
in the same run (JSON round-trips of a game state per second, a machine-speed yardstick:
`games_per_baseline_k` stays comparable across machines), and last one JSON line:
{"bench":"engine_playouts","title":"haendler","games_per_s":…,"decisions_per_s":…,"peak_rss_mb":…}

    .venv/bin/python bench/engine_playouts.py [--games 200] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import resource
import time

from engine.core import get
from engine.core.bots import play_game
from engine.haendler.bots import RandomBot  # noqa: I001

TARGET_GAMES_PER_S = 100.0


def playouts(seats: int, games: int) -> tuple[float, float, float]:
    game = get("haendler")
    decisions = steps = 0
    start = time.perf_counter()
    for seed in range(games):
        bots = {i: RandomBot(f"bench/{seed}/{i}") for i in range(seats)}
        out = play_game(game, seats, bots, seed)
        decisions += out.decisions
        steps += len(out.steps)
    spent = time.perf_counter() - start
    return games / spent, decisions / spent, steps / games


def baseline(seconds: float = 1.0) -> float:
    """JSON round-trips per second of a fresh 4-seat state (same process, same run)."""
    state = get("haendler").setup(4, {}, 1)
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(200):
            json.loads(json.dumps(state))
        n += 200
    return n / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games per seat count and run")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per seat count (the median is reported)")
    args = parser.parse_args()
    if args.runs < 1 or args.games < 1:
        parser.error("--games and --runs must be at least 1")
    playouts(4, 5)  # warm the caches (board parse, route memo) before timing
    runs: dict[int, list[tuple[float, float, float]]] = {seats: [] for seats in (2, 3, 4)}
    for _ in range(args.runs):
        for seats in runs:
            runs[seats].append(playouts(seats, args.games))
    results = {}
    for seats, timed in runs.items():
        timed.sort()
        gps, dps, steps = timed[(len(timed) - 1) // 2]  # the lower middle when even
        results[seats] = (gps, dps)
        print(f"haendler {seats} seats, random bots: {gps:7.1f} games/s  {dps:8.0f} decisions/s  "
              f"{steps:5.0f} steps/game  (median of {args.runs} runs of {args.games} games, "
              f"{timed[0][0]:.1f}-{timed[-1][0]:.1f} games/s)")
    base = baseline()
    gps, dps = results[4]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"baseline (same run): {base:,.0f} state JSON round-trips/s; "
          f"4-seat games per 1000 round-trips: {1000 * gps / base:.2f}")
    print(f"target {TARGET_GAMES_PER_S:.0f} games/s (4 seats): ratio {gps / TARGET_GAMES_PER_S:.2f}")
    print(json.dumps({"bench": "engine_playouts", "title": "haendler", "games_per_s": round(gps, 1),
                      "decisions_per_s": round(dps), "peak_rss_mb": round(rss, 1)}))


if __name__ == "__main__":
    main()
