"""Check a finished game from its published history: the seed, every draw, every state.

A history document (format `kontor-history/1`) is what the service publishes at
`GET /games/{id}/history` once a game is over, and what `python -m engine play
--history FILE` writes:

    {"format": "kontor-history/1", "title": "haendler", "seats": 4, "options": {...},
     "seed": <the revealed seed>, "commitment": "<hex SHA-256 published at setup>",
     "steps": [{"orders": {"0": {...}, ...}, "state_sha256": "<hex>", "events": [...],
                "actions": [{"seat": 1, "action": {...}, "submitted": {"0": {...}},
                             "state_sha256": "<hex>", "events": [...]}]}],
     "result": [...the final ranking...]}

`verify_history` checks, in order:

1. the seed matches the commitment (`engine.core.seed.commitment`), and a new setup
   from it commits to the same value;
2. each step's unprompted actions (`actions`, optional: a step without them reads as
   before) are legal in the replayed state in their order (`Game.act`, given the orders
   stored when each was taken), with their recorded digests and events; then the step's
   orders are legal in the replayed state (`Game.step` validates them);
3. each replayed state has the recorded digest (`state_sha256`): it covers the RNG
   state, so a differing shuffle, deal or roll shows at the first step it affects;
4. each step's replayed events equal the recorded ones (where recorded), and it says
   which event differs and how;
5. the replayed game is over after the last step, with the recorded ranking.

A game the host rolled back (`engine.core.rollback`) lists every step in the order it
was played, with a rollback entry where the host went back:

    {"rollback": {"to_phase": 12, "at_phase": 15, "new_phase": 16, "orders": {...},
                  "actions": [...], "at": "<time>"}}

It returns the replay to the state step 12 had when it opened, and the next step is
numbered 16 (numbers are never reused). The steps it undid (12 to 14 here) are marked
`"abandoned": true`; they are replayed as well, each from where it was played, and
checked like any other (digests, events), so the abandoned line cannot be rewritten
either. The undone actions of the step open at the rollback (`actions`) are replayed;
its discarded orders (`orders`) were never resolved, so nothing checks them. The checker
also checks that a rollback happened while its `at_phase` was open, went back to an
earlier step of the game that stands and opened `at_phase + 1`, and that exactly the
steps it undid are marked. The game that stands must end with the recorded ranking;
the last line says how many steps of it were verified and how many rolled back.

It reports every problem it finds (up to a limit), not only the first, in sentences.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.core.errors import EngineError
from engine.core.game import Game
from engine.core.registry import get
from engine.core.rollback import is_rollback
from engine.core.seed import commitment, state_digest

FORMAT = "kontor-history/1"
MAX_PROBLEMS = 20


@dataclass
class Report:
    """The outcome of a verification: `ok`, and the lines to show a person."""

    ok: bool = True
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    steps: int = 0
    #: Steps replayed that a rollback undid (the abandoned line).
    abandoned: int = 0

    def fail(self, text: str) -> None:
        self.ok = False
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(text)
            self.lines.append(f"DIFFERS: {text}")

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "steps": self.steps, "abandoned": self.abandoned, "problems": self.problems,
                "lines": self.lines}


def record(title: str, seats: int, options: Mapping[str, Any] | None, seed: int | str,
           steps: list[dict[str, Any]], result: Any) -> dict[str, Any]:
    """A history document (for drivers that play games themselves, like the engine CLI).
    `steps` are dicts with `orders` (seat -> order), `state_sha256` and `events`."""
    return {
        "format": FORMAT, "title": title, "seats": seats, "options": dict(options or {}), "seed": seed,
        "commitment": commitment(seed),
        "steps": [{"orders": {str(k): v for k, v in s["orders"].items()}, "state_sha256": s["state_sha256"],
                   "events": s["events"]} for s in steps],
        "result": result,
    }


def verify_history(doc: Any) -> Report:
    """Replay `doc` and report whether it is the game its commitment promised."""
    report = Report()
    if not isinstance(doc, Mapping):
        report.fail("a history is a JSON object")
        return report
    fmt = doc.get("format", FORMAT)
    if fmt != FORMAT:
        report.fail(f"unknown history format {fmt!r} (this checker reads {FORMAT})")
        return report
    try:
        game = get(str(doc.get("title")))
    except EngineError as exc:
        report.fail(exc.message)
        return report
    seed, seats, steps = doc.get("seed"), doc.get("seats"), doc.get("steps")
    if seed is None or isinstance(seed, bool) or not isinstance(seed, int | str):
        report.fail("the seed is missing: it is revealed only when the game is over")
        return report
    if not isinstance(seats, int) or not isinstance(steps, list):
        report.fail("the history needs `seats` (a number) and `steps` (a list)")
        return report
    promised = doc.get("commitment")
    actual = commitment(seed)
    if promised is None:
        report.lines.append("No commitment was recorded; checking the replay only.")
    elif promised != actual:
        report.fail(f"the revealed seed does not match the commitment: SHA-256 gives {actual}, "
                    f"the game promised {promised}")
    else:
        report.lines.append(f"Seed matches the commitment {promised[:16]}…")
    try:
        state = game.setup(seats, doc.get("options"), seed)
    except EngineError as exc:
        report.fail(f"setup: {exc.message}")
        return report
    if promised is not None and state.get("commitment") != promised:
        report.fail("a new setup from this seed commits to another value")
    line = _Walk(state)
    for n, step in enumerate(steps, start=1):
        if is_rollback(step):
            if not _rollback(report, game, line, step["rollback"], n):
                return report
            continue
        label = f"step {step.get('phase', line.open_phase) if isinstance(step, Mapping) else n}"
        if not isinstance(step, Mapping) or not isinstance(step.get("orders"), Mapping):
            report.fail(f"{label}: no orders recorded")
            return report
        phase = step.get("phase", line.open_phase)
        if phase != line.open_phase:
            report.fail(f"{label}: recorded as step {phase}, but step {line.open_phase} was open then")
            return report
        replayed = _replay_actions(report, game, line.state, step.get("actions") or [], f"{label}, action")
        if replayed is None:
            return report
        state = replayed
        try:
            orders = {int(k): v for k, v in step["orders"].items()}
            state, events = game.step(state, orders)
        except (EngineError, ValueError) as exc:
            report.fail(f"{label}: the recorded orders are not legal in the replayed game "
                        f"({getattr(exc, 'message', exc)})")
            return report
        want = step.get("state_sha256")
        if want is not None and want != state_digest(state):
            report.fail(f"{label}: the replayed state differs from the recorded one "
                        f"(the draw, deal or order effects do not match)")
        if "events" in step:
            _compare_events(report, label, step["events"], events)
        line.played(phase, state, bool(step.get("abandoned")))
        report.steps = len(line.standing)
    state = line.state
    report.steps = len(line.standing)
    report.abandoned = len(line.undone)
    for p in sorted(line.marked - set(line.undone)):
        report.fail(f"step {p} is marked as rolled back, but it is part of the game that stands")
    for p in sorted(set(line.undone) - line.marked):
        report.fail(f"step {p} was rolled back, but it is not marked as abandoned")
    if game.requests(state):
        report.fail(f"after {report.steps} steps the replayed game is still running")
    elif "result" in doc and doc["result"] != game.result(state):
        report.fail("the recorded ranking differs from the replayed one")
    if report.ok and not line.rollbacks:
        report.lines.append(f"Verified: {report.steps} steps replayed; every draw, state and event matches.")
    elif report.ok and len(line.rollbacks) == 1:
        ((at, to, count),) = line.rollbacks
        report.lines.append(f"Verified: {_steps(report.steps)} of the game that stands; {_steps(count)} rolled "
                            f"back at step {at} to step {to} replayed as well; every draw, state and event matches.")
    elif report.ok:
        undone = [f"{_steps(count)} at step {at}, back to step {to}" for at, to, count in line.rollbacks]
        report.lines.append(f"Verified: {_steps(report.steps)} of the game that stands, and the steps "
                            f"{len(undone)} rollbacks undid, replayed as well ({'; '.join(undone)}); every draw, "
                            "state and event matches.")
    return report


def _steps(n: int) -> str:
    return f"{n} step" if n == 1 else f"{n} steps"


class _Walk:
    """Where the verification's replay is: the state, the open step's number, each step's
    state when it opened, the steps of the game that stands and those rolled back."""

    def __init__(self, state: Any) -> None:
        self.state = state
        self.open_phase = 1
        self.openings: dict[int, Any] = {1: state}
        self.standing: list[int] = []
        self.undone: list[int] = []
        self.marked: set[int] = set()
        self.rollbacks: list[tuple[int, int, int]] = []

    def played(self, phase: int, state: Any, marked: bool) -> None:
        self.state = state
        self.standing.append(phase)
        if marked:
            self.marked.add(phase)
        self.open_phase = phase + 1
        self.openings[phase + 1] = state


def _rollback(report: Report, game: Game, line: _Walk, rb: Mapping[str, Any], n: int) -> bool:
    """Check and apply a rollback entry: it was made while its `at_phase` was open, goes
    back to a step of the game that stands, and opens `at_phase + 1`; the open step's
    undone actions replay as recorded. False when the replay cannot go on."""
    at, to, new = rb.get("at_phase"), rb.get("to_phase"), rb.get("new_phase")
    label = f"the rollback of entry {n}"
    if not all(type(x) is int for x in (at, to, new)):
        report.fail(f"{label}: `at_phase`, `to_phase` and `new_phase` are step numbers")
        return False
    label = f"the rollback at step {at}"
    if at != line.open_phase:
        report.fail(f"{label}: step {line.open_phase} was open then")
        return False
    if to not in line.standing or to >= at:
        report.fail(f"{label}: step {to} is not an earlier step of the game that stands")
        return False
    if new != at + 1:
        report.fail(f"{label}: the step it opens is numbered {new}, not {at + 1}")
        return False
    if _replay_actions(report, game, line.state, rb.get("actions") or [], f"{label}, undone action") is None:
        return False
    undone = [p for p in line.standing if p >= to]
    line.undone += undone
    line.standing = [p for p in line.standing if p < to]
    line.rollbacks.append((at, to, len(undone)))
    line.state = line.openings[to]
    line.open_phase = new
    line.openings[new] = line.state
    return True


def _replay_actions(report: Report, game: Game, state: Any, actions: list[Any], label: str) -> Any | None:
    """Replay a step's recorded unprompted actions in order, checking each one's digest
    and events (`label`: "step 4, action", numbered here); the state after them, None
    when one is not legal (said in `report`)."""
    for i, act in enumerate(actions):
        what = f"{label} {i + 1}"
        try:
            state, made = replay_action(game, state, act)
        except (EngineError, ValueError, TypeError, KeyError) as exc:
            report.fail(f"{what}: the recorded action is not legal in the replayed game "
                        f"({getattr(exc, 'message', exc)})")
            return None
        if act.get("state_sha256") is not None and act["state_sha256"] != state_digest(state):
            report.fail(f"{what}: the replayed state differs from the recorded one")
        if "events" in act:
            _compare_events(report, what, act["events"], made)
    return state


def replay_action(game: Game, state: Any, act: Mapping[str, Any]) -> tuple[Any, list[dict[str, Any]]]:
    """Apply one recorded unprompted action (a step's `actions` entry: `seat`, `action`,
    `submitted`, the orders stored when it was taken) as the service applied it."""
    submitted = {int(k): v for k, v in (act.get("submitted") or {}).items()}
    return game.act(state, int(act["seat"]), act["action"], submitted)


def _compare_events(report: Report, label: str, recorded: Any, replayed: list[dict[str, Any]]) -> None:
    if not isinstance(recorded, list):
        report.fail(f"{label}: the recorded events are not a list")
        return
    for i, (want, got) in enumerate(zip(recorded, replayed, strict=False)):
        if want != got:
            keys = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k)) if isinstance(want, dict) \
                else ["the whole event"]
            report.fail(f"{label}: event {i + 1} ({got.get('type')}) differs in {', '.join(map(str, keys))}: "
                        f"recorded {_short(want, keys)}, replayed {_short(got, keys)}")
            return
    if len(recorded) != len(replayed):
        report.fail(f"{label}: {len(recorded)} events recorded, {len(replayed)} replayed")


def _short(ev: Any, keys: list[str]) -> str:
    if not isinstance(ev, dict):
        return repr(ev)[:80]
    return ", ".join(f"{k}={ev.get(k)!r}"[:60] for k in keys[:3])
