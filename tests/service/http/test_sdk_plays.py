"""A stranger's program plays a whole game of every title: a client generated from the
committed OpenAPI document (what `make sdk` builds, with the pinned openapi-python-client
and `openapi/openapi-python-client.yaml`) for every HTTP request, and the signing recipe
of `docs/signing.md` written out with `cryptography` alone (none of the project's own
helpers), against the real app over HTTP on a real Valkey, with a real RQ worker.

Per title: the catalog gives the smallest table and the bot kinds; the host (a key of its
own) creates the game, makes every seat but 0 a bot and starts it; seat 0 is played through
the client at every step that asks it, with the default order the server offers (always a
legal one), until the game is over. Then the history is published and the events end with
the finish, as the seat reads them.

And the whole game of `docs/signing.md` (keys, create, join, bots, start, play, the result)
runs exactly as the page prints it: the fenced block after its `signing-example` marker,
taken from the page and executed against the live server.
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import json
import os
import re
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

ROOT = Path(__file__).resolve().parents[3]
SPEC = ROOT / "openapi" / "openapi.json"
CONFIG = ROOT / "openapi" / "openapi-python-client.yaml"
PACKAGE = "kontor_client"
TITLES = ["aufachse", "fantasy", "haendler"]
SIGNING = ROOT / "docs" / "signing.md"
MARKER = "<!-- signing-example:"


# -- the recipe of docs/signing.md, as a stranger would write it ---------------------------
def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class Stranger:
    """An Ed25519 key and the two tokens, from `docs/signing.md`."""

    def __init__(self) -> None:
        self.private = Ed25519PrivateKey.generate()
        self.public = b64url(self.private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))
        thumb = json.dumps({"crv": "Ed25519", "kty": "OKP", "x": self.public}, separators=(",", ":"))
        self.kid = b64url(hashlib.sha256(thumb.encode()).digest())

    def sign(self, claims: dict[str, Any]) -> str:
        header = b64url(json.dumps({"alg": "Ed25519", "kid": self.kid, "typ": "JWT"}).encode())
        payload = b64url(json.dumps(claims).encode())
        signature = b64url(self.private.sign(f"{header}.{payload}".encode("ascii")))
        return f"{header}.{payload}.{signature}"

    def bearer(self, game: str) -> str:
        now = int(time.time())
        return self.sign({"game": game, "iat": now, "exp": now + 120})

    def order_token(self, game: str, phase: int, seat: int, order: dict[str, Any]) -> str:
        return self.sign({"game": game, "phase": phase, "seat": seat, "iat": int(time.time()),
                          "jti": uuid.uuid4().hex, "order": order})


# -- the generated client --------------------------------------------------------------------
@pytest.fixture(scope="module")
def sdk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """`make sdk`'s command, into a folder of the test's own: the package, imported."""
    out = tmp_path_factory.mktemp("sdk") / "kontor-client"
    bindir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"}  # its ruff post-hooks
    proc = subprocess.run([str(bindir / "openapi-python-client"), "generate", "--path", str(SPEC),
                           "--output-path", str(out), "--overwrite", "--config", str(CONFIG)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    sys.path.insert(0, str(out))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(out))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def op(name: str) -> Any:
    """An operation module of the generated client, e.g. `op("phases.submit_order")`."""
    return importlib.import_module(f"{PACKAGE}.api.{name}")


def ok(response: Any, status: int) -> Any:
    assert response.status_code == status, (response.status_code, response.content[:500])
    return response.parsed


@pytest.mark.parametrize("tid", TITLES)
def test_a_generated_client_plays_a_whole_game(tid: str, sdk: ModuleType, live_server: str, worker: Any) -> None:
    models = importlib.import_module(f"{PACKAGE}.models")
    public = sdk.Client(base_url=live_server)

    def as_(who: Stranger, game: str) -> Any:  # a fresh bearer per request: they live 2 minutes
        return sdk.AuthenticatedClient(base_url=live_server, token=who.bearer(game))

    title = next(t for t in ok(op("service.get_catalog").sync_detailed(client=public), 200) if t.id == tid)
    seats, bots = int(title.seats["min"]), sorted(title.bots)
    host, me = Stranger(), Stranger()
    created = ok(op("games.create_game").sync_detailed(
        client=public, idempotency_key=uuid.uuid4().hex,
        body=models.CreateGame(title=tid, seats=seats, host_key=host.public, seed=f"sdk-{tid}")), 201)
    gid = created.id
    mine = ok(op("seats.join_game").sync_detailed(gid, client=public, idempotency_key=uuid.uuid4().hex,
                                                 body=models.Join(name="Ada", public_key=me.public, seat=0)), 201)
    assert (mine.seat, mine.kid) == (0, me.kid)  # the server names the key as the recipe does
    for seat in range(1, seats):
        ok(op("seats.update_seat").sync_detailed(gid, seat, client=as_(host, gid),
                                                 body=models.SeatPatch(bot=bots[seat % len(bots)])), 200)
    started = ok(op("games.update_game").sync_detailed(
        gid, client=as_(host, gid), body=models.GamePatch(status=models.GamePatchStatus.RUNNING)), 200)
    assert started.status == "running"

    played: list[int] = []
    for _ in range(3000):
        worker()  # bots' moves, and every step whose orders are in
        if ok(op("games.get_game").sync_detailed(gid, client=public), 200).status == "finished":
            break
        phase = ok(op("phases.get_current_phase").sync_detailed(gid, client=as_(me, gid)), 200)
        you = phase.you
        if not you or not you.requested or you.answered:
            continue
        assert you.seat == 0 and you.asked.strip()
        token = me.order_token(gid, phase.id, 0, you.default_order.to_dict())
        receipt = ok(op("phases.submit_order").sync_detailed(gid, phase.id, 0, client=public,
                                                            body=models.OrderSubmit(token=token)), 202)
        assert (receipt.phase, receipt.seat) == (phase.id, 0)
        played.append(phase.id)
        if len(played) == 1:  # what the seat sees, in words, once it has played
            view = ok(op("views.get_view").sync_detailed(gid, client=as_(me, gid)), 200)
            assert view.viewer == 0 and "Ada" in view.summary and view.headline.strip()
    else:
        raise AssertionError(f"{tid}: the game did not finish")
    assert len(played) >= 5 and played == sorted(set(played)), played  # one order per step that asked seat 0

    # Replaying an order token is refused, the history is out, the seat's events end with the finish.
    replay = op("phases.submit_order").sync_detailed(gid, played[-1], 0, client=public,
                                                     body=models.OrderSubmit(token=token))
    assert replay.status_code >= 400 and replay.parsed.code
    history = ok(op("games.get_history").sync_detailed(gid, client=public), 200)
    assert history.seed is not None and len(history.steps) >= len(played)
    after, last = 0, None
    while True:
        page = ok(op("views.list_events").sync_detailed(gid, client=as_(me, gid), after=after, limit=500), 200)
        last = page.items[-1] if page.items else last
        if not page.more:
            break
        after = page.next_
    assert last is not None and last.to_dict()["type"] == "game_finished"


# -- docs/signing.md's whole game, as the page prints it ---------------------------------------
def example(text: str) -> str:
    """The first ```python block after the `signing-example` marker of a page."""
    if MARKER not in text:
        raise LookupError(f"no {MARKER} marker")
    block = re.search(r"^```python\n(.*?)^```", text[text.index(MARKER):], re.S | re.M)
    if block is None:
        raise LookupError(f"no python block after the {MARKER} marker")
    return block.group(1)


def test_the_example_is_found_after_its_marker_only() -> None:
    page = "```python\nfirst = 1\n```\n<!-- signing-example: here -->\n\n```python\nsecond = 2\n```\n"
    assert example(page) == "second = 2\n"
    with pytest.raises(LookupError):
        example(page.replace(MARKER, "<!-- other:"))
    with pytest.raises(LookupError):
        example("<!-- signing-example: -->\n```sh\nls\n```\n")


def test_docs_signing_plays_a_whole_game_as_written(sdk: ModuleType, live_server: str, worker: Any,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code = example(SIGNING.read_text(encoding="utf-8"))
    monkeypatch.setenv("KONTOR_URL", live_server)
    # The program sleeps while bots and the game move on; beside `make run` RQ workers run
    # the jobs meanwhile, here its sleep runs them (the program's own thread only).
    real_sleep, waits, main = time.sleep, [0], threading.main_thread()

    def meanwhile(seconds: float) -> None:
        if threading.current_thread() is not main or waits[0] < 0:
            real_sleep(seconds)
            return
        waits[0] += 1
        assert waits[0] < 2000, "the game did not finish"
        waits[0] = -waits[0]  # not again from inside the worker
        try:
            worker()
        finally:
            waits[0] = -waits[0]

    monkeypatch.setattr(time, "sleep", meanwhile)
    scope: dict[str, Any] = {"__name__": "__main__"}
    exec(compile(code, str(SIGNING), "exec"), scope)  # noqa: S102 - the page's own code, on purpose
    said = capsys.readouterr().out

    gid, seat = scope["game"], scope["seat"]
    assert scope["refused"].status_code == 409 and scope["refused"].parsed.code == "key_in_use"
    assert scope["host"].public != scope["ada"].public
    game = scope["finished"]
    assert game.status == "finished" and len(game.result) == 3
    names = {p.seat: (p.name, p.bot) for p in game.players}
    assert names[seat] == ("Ada", None) and sorted(b for s, (_, b) in names.items() if s != seat) == ["greedy"] * 2
    played = re.findall(r"^step (\d+): (.+) -> (.+)$", said, re.M)
    assert len(played) >= 5 and all(asked.strip() and sentence.strip() for _, asked, sentence in played), said
    assert f"{live_server}/play/{gid}/{seat} is Ada's seat page" in said
    ranking = re.findall(r"^(\d)\. (.+)$", said, re.M)
    assert [int(n) for n, _ in ranking] == sorted(r["place"] for r in game.result)
    assert {name for _, name in ranking} == {name for name, _ in names.values()}
    history = scope["history"]
    assert history.seed is not None and len(history.steps) >= len(played)
    assert f"seed {history.seed!r}, committed as {history.commitment}" in said
