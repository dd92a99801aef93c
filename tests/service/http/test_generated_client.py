"""A client generated from the committed OpenAPI document with openapi-python-client
builds without a warning, imports, and talks to the app."""

from __future__ import annotations

import importlib
import os
import pkgutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.dev import openapi
from tests.service.conftest import Player, create_game

CONFIG = openapi.PATH.parent / "openapi-python-client.yaml"
PACKAGE = "kontor_client"


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    out = tmp_path_factory.mktemp("client") / "kontor-client"
    bindir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"}  # its ruff post-hooks
    proc = subprocess.run([str(bindir / "openapi-python-client"), "generate", "--path", str(openapi.PATH),
                           "--output-path", str(out), "--overwrite", "--config", str(CONFIG)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    sys.path.insert(0, str(out))
    try:
        yield out, proc.stdout + proc.stderr
    finally:
        sys.path.remove(str(out))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def test_generator_reports_no_warning(generated: tuple[Path, str]) -> None:
    _, output = generated
    for marker in ("warning", "error", "unable", "not in path", "skipping"):
        assert marker not in output.lower(), output


def test_every_module_imports(generated: tuple[Path, str]) -> None:
    package = importlib.import_module(PACKAGE)
    names = [m.name for m in pkgutil.walk_packages(package.__path__, PACKAGE + ".")]
    for name in names:
        importlib.import_module(name)
    # One module per operation, named by its operationId, grouped by tag.
    for module in ("api.games.create_game", "api.games.list_games", "api.games.get_game", "api.seats.join_game",
                   "api.phases.submit_order", "api.phases.get_current_phase", "api.press.post_message"):
        assert f"{PACKAGE}.{module}" in names, module


def test_generated_client_lists_and_creates_games(generated: tuple[Path, str], app: Any, client: Any) -> None:
    host = Player.new()
    game = create_game(client, host, 2)
    api_client = importlib.import_module(PACKAGE).Client(
        base_url="http://kontor.test", httpx_args={"transport": httpx.WSGITransport(app=app)})
    list_games = importlib.import_module(f"{PACKAGE}.api.games.list_games")
    page = list_games.sync(client=api_client, status="lobby", limit=10)
    assert [item.id for item in page.items] == [game["id"]]
    create = importlib.import_module(f"{PACKAGE}.api.games.create_game")
    models = importlib.import_module(f"{PACKAGE}.models")
    made = create.sync_detailed(client=api_client, idempotency_key="k-1",
                                body=models.CreateGame(title="haendler", seats=3, host_key=Player.new().key.public,
                                                       seed="reproducible"))
    assert made.status_code == 201, made.content
    assert made.parsed.seats == 3
