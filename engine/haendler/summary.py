"""A readable text board of Die Händler, built from a view only (first cut)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def summary(view: dict[str, Any], names: Sequence[str]) -> str:
    lines = [f"Round {view['round']}"]
    for seat, p in enumerate(view["players"]):
        lines.append(f"{names[seat]}: level {p['level']}, money {p.get('money', 'hidden')}")
    return "\n".join(lines)


def describe_request(request: Any, view: dict[str, Any], names: Sequence[str]) -> str:
    return f"{names[request.seat]}: {request.kind}"


def headline(view: dict[str, Any]) -> str:
    return "game over" if view.get("over") else f"round {view['round']}"
