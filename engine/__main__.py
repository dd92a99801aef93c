"""Command line of the engine: play a bot game with a readable log, or verify a history.

    python -m engine play haendler --seats 4 --bots greedy --seed 7
    python -m engine play haendler --seats 3 --bots random,greedy,greedy --option light=true
    python -m engine play haendler --seed 7 --history game.json   # also write its history
    python -m engine verify game.json                              # check seed, draws, states
    python -m engine titles                                        # what can be played
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from engine.core import get, titles
from engine.core.bots import play_game
from engine.core.errors import EngineError
from engine.core.registry import load_errors
from engine.core.seed import state_digest
from engine.core.verify import record, verify_history

#: Player names for bot games (the log reads better with names than with numbers).
NAMES = ("Anna", "Bernd", "Clara", "Dieter", "Eva", "Fritz", "Greta", "Hans")


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
    play.add_argument("title", help="a title id (see `python -m engine titles`)")
    play.add_argument("--seats", type=int, default=4)
    play.add_argument("--bots", default=None, help="one bot kind for all seats, or a comma list per seat")
    play.add_argument("--seed", default="7")
    play.add_argument("--option", action="append", default=[], type=_option, metavar="KEY=VALUE",
                      help="a game option (JSON value), repeatable; e.g. abilities=auction, light=true")
    play.add_argument("--json", action="store_true", help="print the events as JSON lines instead of sentences")
    play.add_argument("--history", metavar="FILE", help="write the game's history (seed, orders, digests) to FILE")
    check = sub.add_parser("verify", help="check a finished game's history: seed, every draw, every state")
    check.add_argument("file", help="a history JSON file (`GET /games/{id}/history`, or `play --history`)")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    sub.add_parser("titles", help="list the titles (and any that failed to load)")
    args = parser.parse_args(argv)
    if args.command == "verify":
        return _verify(args.file, args.json)
    if args.command == "titles":
        for tid, game in sorted(titles().items()):
            bots = ", ".join(sorted(game.bots()))
            print(f"{tid}: {game.name}, {game.min_seats}-{game.max_seats} seats, bots: {bots}")
        for name, error in sorted(load_errors().items()):
            print(f"{name}: FAILED TO LOAD: {error}")
        return 0
    return _play(parser, args)


def _play(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    try:
        game = get(args.title)
        bots_of = game.bots()
        kinds = (args.bots or sorted(bots_of)[0]).split(",")
        if len(kinds) == 1:
            kinds *= args.seats
        if len(kinds) != args.seats or any(k not in bots_of for k in kinds):
            parser.error(f"--bots takes {args.seats} of: {', '.join(bots_of)}")
        seed: int | str = int(args.seed) if args.seed.isdigit() else args.seed
        bots = {i: bots_of[k](f"{seed}/{i}") for i, k in enumerate(kinds)}
        names = [NAMES[i % len(NAMES)] for i in range(args.seats)]
        options = dict(args.option)
        steps: list[dict[str, Any]] = []

        def show(state: dict[str, Any], orders: dict[int, Any], events: list[dict[str, Any]]) -> None:
            if args.history:
                steps.append({"orders": orders, "state_sha256": state_digest(state), "events": events})
            for e in events:
                if e["visible_to"] == "all":
                    print(json.dumps(e, ensure_ascii=False) if args.json else game.describe_event(e, names))

        if not args.json:
            first = game.setup(args.seats, options, seed)
            print(f"{game.name}, {args.seats} seats, seed {seed}; seed commitment {first['commitment']}")
            for seat, name in enumerate(names):
                print(f"  {name}: seat {seat}, {kinds[seat]} bot")
            print()
            print(game.summary(game.view(first, "public"), names))
            print()
        out = play_game(game, args.seats, bots, seed, options, on_step=show)
    except EngineError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    result = game.result(out.state)
    if args.history:
        with open(args.history, "w", encoding="utf-8") as fh:
            json.dump(record(game.id, args.seats, options, seed, steps, result), fh, ensure_ascii=False)
            fh.write("\n")
    if not args.json:
        print(f"\n{game.name}: {len(out.steps)} steps, {out.decisions} decisions.")
        print(game.summary(game.view(out.state, "public"), names))
        if args.history:
            print(f"History written to {args.history}; check it with `python -m engine verify {args.history}`.")
    return 0


def _verify(path: str, as_json: bool) -> int:
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as exc:
        print(f"error: cannot read {path}: {exc}", file=sys.stderr)
        return 2
    report = verify_history(doc)
    if as_json:
        print(json.dumps(report.as_dict()))
    else:
        print("\n".join(report.lines))
    return 0 if report.ok else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stderr.close()
        sys.exit(0)
