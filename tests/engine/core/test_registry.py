"""Titles are declared: built-ins from engine/titles.py, plugins from `kontor.titles`."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.core import registry
from engine.core.errors import GENERIC_CODES, IllegalOrder, OptionsError, known_codes
from engine.titles import BUILTIN

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]


def plugin_dir(tmp: Path) -> Path:
    """A folder holding an installed-looking distribution with three entry points: a
    working title, one whose module is missing, and one whose id does not match."""
    dist = tmp / "kontor_plugins-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: kontor-plugins\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[kontor.titles]\n"
        "guess = tests.engine.core.toytitle:GAME\n"
        "broken = no_such_module_for_kontor:GAME\n"
        "misnamed = tests.engine.core.toytitle:Guess\n"
    )
    return tmp


@pytest.fixture
def plugins(tmp_path: Path) -> Iterator[Path]:
    path = str(plugin_dir(tmp_path))
    sys.path.insert(0, path)
    registry.reload()
    try:
        yield tmp_path
    finally:
        sys.path.remove(path)
        registry.reload()


def test_builtin_titles_come_from_the_one_list() -> None:
    assert set(BUILTIN) <= set(registry.titles())
    for tid in BUILTIN:
        assert registry.get(tid).id == tid


def test_engine_core_names_no_title() -> None:
    """The import graph has no chain, direct or indirect, from engine.core to any title
    (the import-linter contract lists the titles of its day; this covers every title
    registered now, so a new title need not touch pyproject.toml)."""
    import grimp

    graph = grimp.build_graph("engine")
    for tid in BUILTIN:
        assert not graph.chain_exists(importer="engine.core", imported=f"engine.{tid}", as_packages=True), tid
    for path in (ROOT / "engine" / "core").glob("*.py"):
        text = path.read_text()
        for tid in BUILTIN:
            assert f"engine.{tid}" not in text, f"{path.name} names engine.{tid}"


def test_a_plugin_title_loads_and_a_broken_one_is_reported_by_name(plugins: Path) -> None:
    assert registry.get("guess").name == "Guess"
    errors = registry.load_errors()
    assert "no_such_module_for_kontor" in errors["broken"]
    assert "misnamed" in errors and "'guess'" in errors["misnamed"]
    assert set(BUILTIN) <= set(registry.titles()), "a broken plugin took a built-in title down"
    with pytest.raises(OptionsError, match="broken.*failed to load"):
        registry.get("broken")


def test_a_plugin_plays_and_declares_its_codes(plugins: Path) -> None:
    from engine.core.bots import play_game

    game = registry.get("guess")
    out = play_game(game, 3, {i: game.bots()["fixed"](i) for i in range(3)}, seed=4)
    assert game.result(out.state) and len(out.steps) == 3
    assert "bad_guess" in game.catalog_entry()["order_codes"] and "bad_guess" in known_codes()
    with pytest.raises(IllegalOrder) as info:
        game.validate(out.state, 0, {"guess": 3})
    assert info.value.code == "game_over"


def test_every_process_sees_the_plugins(plugins: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugins), str(ROOT)])}
    out = subprocess.run([sys.executable, "-m", "engine", "titles"], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=60, check=True).stdout
    assert "guess: Guess" in out and "broken: FAILED TO LOAD" in out and "haendler:" in out


def test_the_core_keeps_only_generic_codes_and_refuses_unknown_ones() -> None:
    assert set(GENERIC_CODES) == {"not_your_turn", "malformed_order", "wrong_kind", "game_over"}
    with pytest.raises(ValueError, match="unregistered"):
        IllegalOrder("no_such_code_anywhere", "x")
