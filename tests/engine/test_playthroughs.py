"""Golden playthroughs stay as reviewed (see tests/engine/playthroughs.py).

A failure here means a rule or wording changed: read the diff that
`make playthroughs` makes, and commit it if the change is meant.
"""

from __future__ import annotations

import pytest

from tests.engine.playthroughs import cases, lines

CASES = list(cases())


def test_every_title_has_golden_playthroughs() -> None:
    from engine.core import titles

    assert {game.id for game, _, _ in CASES} == set(titles())


@pytest.mark.parametrize(("game", "case", "path"), CASES, ids=[f"{g.id}-{c['name']}" for g, c, _ in CASES])
def test_a_golden_playthrough_replays_line_by_line(game, case, path) -> None:  # type: ignore[no-untyped-def]
    assert path.exists(), f"{path.name} is missing: run `make playthroughs`"
    golden = path.read_text().splitlines()
    fresh = lines(game, case)
    for n, (want, got) in enumerate(zip(golden, fresh, strict=False), start=1):
        assert got == want, f"{path.name} line {n} differs (run `make playthroughs` and review the diff)"
    assert len(golden) == len(fresh), f"{path.name}: {len(golden)} lines stored, {len(fresh)} played"
