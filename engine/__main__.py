"""Command line of the engine: play a whole bot game and print a readable log.

    python -m engine play haendler --seats 4 --bots greedy --seed 7
    python -m engine play haendler --seats 3 --bots random,greedy,greedy --option light=true
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from engine.core import get, titles
from engine.core.bots import play_game
from engine.core.errors import EngineError


def _option(text: str) -> tuple[str, Any]:
    key, _, raw = text.partition("=")
    try:
        return key, json.loads(raw)
    except json.JSONDecodeError:
        return key, raw


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    play = sub.add_parser("play", help="play a whole game with bots and print its log")
    play.add_argument("title", help=f"one of: {', '.join(sorted(titles()))}")
    play.add_argument("--seats", type=int, default=4)
    play.add_argument("--bots", default="greedy", help="one bot kind for all seats, or a comma list per seat")
    play.add_argument("--seed", default="7")
    play.add_argument("--option", action="append", default=[], type=_option, metavar="KEY=VALUE",
                      help="a game option (JSON value), repeatable; e.g. abilities=auction, light=true")
    play.add_argument("--json", action="store_true", help="print the events as JSON lines instead of text")
    args = parser.parse_args(argv)

    try:
        game = get(args.title)
        bots_of = __import__(f"engine.{args.title}.bots", fromlist=["BOTS"]).BOTS
        kinds = args.bots.split(",")
        if len(kinds) == 1:
            kinds *= args.seats
        if len(kinds) != args.seats or any(k not in bots_of for k in kinds):
            parser.error(f"--bots takes {args.seats} of: {', '.join(bots_of)}")
        seed = int(args.seed) if args.seed.isdigit() else args.seed
        bots = {i: bots_of[k](f"{seed}/{i}") for i, k in enumerate(kinds)}
        describe = __import__(f"engine.{args.title}.log", fromlist=["describe"]).describe

        def show(state: dict[str, Any], orders: dict[int, Any], events: list[dict[str, Any]]) -> None:
            for e in events:
                if e["visible_to"] == "all":
                    print(json.dumps(e, ensure_ascii=False) if args.json else describe(e))

        if not args.json:
            first = game.view(game.setup(args.seats, dict(args.option), seed), "public")
            print(f"{game.name}, {args.seats} seats, seed {seed}, options {first['options']}")
            for seat, player in enumerate(first.get("players", [])):
                held = ", ".join(player.get("abilities", [])) or "none yet"
                print(f"  seat {seat} ({kinds[seat]} bot): ability cards {held}")
            print(f"== Round 1 (start player: seat {first.get('start')})")
        out = play_game(game, args.seats, bots, seed, dict(args.option), on_step=show)
    except EngineError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    if not args.json:
        print(f"\n{game.name}: {len(out.steps)} steps, {out.decisions} decisions, {out.state['round']} rounds")
        for row in game.result(out.state) or []:
            print(f"  {row['place']}. seat {row['seat']} ({kinds[row['seat']]}): " +
                  ", ".join(f"{k} {v}" for k, v in row.items() if k not in ("place", "seat")))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stderr.close()
        sys.exit(0)
