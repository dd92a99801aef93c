"""Divination Spell (DS, 1): instant; an opponent. The caster privately sees every special
in the target's hand (R14); the public sees only the cast and its target."""

from __future__ import annotations

from engine.core.events import Event, event
from engine.fantasy.specials.base import Kind, Play, opponent
from engine.fantasy.state import S


def check(s: S, seat: int, play: Play) -> None:
    opponent(s, seat, play)


def effect(s: S, seat: int, play: Play, ev: list[Event]) -> bool:
    x = play["target"]
    ev.append(event("divination_seen", [seat], seat=seat, target=x, hand=list(s["players"][x]["hand"])))
    # The look stays open in the caster's view until the next decision point (view.divination_grant).
    s["looks"] = [*[look for look in s["looks"] if look["step"] > s["step"]],
                  {"by": seat, "at": x, "step": s["step"] + 1}]
    return True


KIND = Kind("DS", "instant", ("target",), check, effect)
