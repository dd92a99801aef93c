"""Golden playthroughs: seeded bot games of every title, stored as JSON lines.

Each title with a `tests/engine/<title>/playthroughs/cases.json` gets one file per case,
`<case>.jsonl`. Its lines, in order:

* a `setup` line: seats, options, seed, commitment, and each seat's and the public view,
  summary and picture digest;
* one `step` line per step: the requests (with their choices, and what each asks in
  words), the orders, the events
  with their sentences (as each would be shown, with player names), and the SHA-256 of
  every seat's view after the step;
* a `round` line each time the round changes: every seat's summary;
* an `end` line: the result and every seat's final summary.

`test_playthroughs.py` replays each case and compares line by line, so a change of
rules or wording shows up as a reviewed diff of these files. They are rewritten only
on purpose, by `make playthroughs` (`python -m tests.engine.playthroughs --write`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engine.core import Game, titles
from engine.core.bots import play_game
from engine.core.seed import state_digest

HERE = Path(__file__).resolve().parent
NAMES = ("Anna", "Bernd", "Clara", "Dieter", "Eva", "Fritz", "Greta", "Hans")


def cases() -> Iterator[tuple[Game, dict[str, Any], Path]]:
    """(title, case, golden file) for every case of every registered title."""
    for tid, game in sorted(titles().items()):
        listing = HERE / tid / "playthroughs" / "cases.json"
        if listing.exists():
            for case in json.loads(listing.read_text()):
                yield game, case, listing.parent / f"{case['name']}.jsonl"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def lines(game: Game, case: dict[str, Any]) -> list[str]:
    """The golden lines of one case (deterministic)."""
    seats, seed, options = case["seats"], case["seed"], case["options"]
    names = list(NAMES[:seats])
    viewers: list[Any] = [*range(seats), "public"]
    bots_of = game.bots()
    bots = {i: bots_of[kind](f"{seed}/{i}") for i, kind in enumerate(case["bots"])}
    out: list[dict[str, Any]] = []
    state = game.setup(seats, options, seed)
    views = {str(v): game.view(state, v) for v in viewers}
    out.append({"setup": {"title": game.id, "seats": seats, "options": options, "seed": seed,
                          "commitment": state["commitment"], "names": names},
                "views": views,
                "summaries": {k: game.summary(v, names) for k, v in views.items()},
                "pictures_sha256": {k: _sha(game.picture(v, names)) for k, v in views.items()}})
    last_round = [game.headline(game.view(state, "public"))]
    def asked(s: dict[str, Any]) -> dict[str, Any]:
        requests = game.requests(s)
        return {"requests": [r.as_dict() for r in requests],
                "asked": [game.describe_request(r, game.view(s, r.seat), names) for r in requests]}

    pending: dict[str, Any] = asked(state)

    def on_step(s: dict[str, Any], orders: dict[int, Any], events: list[dict[str, Any]]) -> None:
        step_views = {str(v): game.view(s, v) for v in viewers}
        out.append({"step": len([x for x in out if "step" in x]) + 1, **pending,
                    "orders": {str(k): v for k, v in sorted(orders.items())},
                    "events": [{**e, "sentence": game.describe_event(e, names)} for e in events],
                    "views_sha256": {k: state_digest(v)[:16] for k, v in step_views.items()}})
        pending.update(asked(s))
        head = step_views["public"].get("round")
        if head != last_round[0]:
            last_round[0] = head
            out.append({"round": head, "headline": game.headline(step_views["public"]),
                        "summaries": {k: game.summary(v, names) for k, v in step_views.items()}})

    played = play_game(game, seats, bots, seed, options, on_step=on_step)
    final = {str(v): game.view(played.state, v) for v in viewers}
    out.append({"end": game.result(played.state), "headline": game.headline(final["public"]),
                "summary": game.summary(final["public"], names)})
    return [json.dumps(x, ensure_ascii=False, sort_keys=True) for x in out]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="check or rewrite the golden playthroughs")
    parser.add_argument("--write", action="store_true", help="rewrite the golden files")
    parser.add_argument("--title", action="append", help="only these titles (repeatable)")
    args = parser.parse_args(argv)
    changed = 0
    for game, case, path in cases():
        if args.title and game.id not in args.title:
            continue
        text = "\n".join(lines(game, case)) + "\n"
        if path.exists() and path.read_text() == text:
            continue
        changed += 1
        if args.write:
            path.write_text(text)
            print(f"wrote {path.relative_to(HERE.parents[1])} ({len(text) // 1024} KB)")
        else:
            print(f"differs: {path.relative_to(HERE.parents[1])}")
    if not changed:
        print("every golden playthrough is up to date")
    return 1 if changed and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
