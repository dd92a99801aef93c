"""The service re-checks a stored order at resolution with the title's `validate_stored`:
Fantasy Business keeps a sealed W-CLOSE play whose target a trade moved while the window
was open, and it fails when the window resolves (R21, R12); an order that truly became
illegal is still replaced by the seat's default, and that seat alone is told."""

from __future__ import annotations

from typing import Any

import pytest

from engine.core import get
from tests.engine.fantasy.helpers import CHR, HEN, JAC, MIR, run_to, table
from tests.service.conftest import Player

# Also with the store on a Valkey Cluster and the queue on a Valkey of its own (issue 24).
pytestmark = pytest.mark.cluster

GAME = get("fantasy")
STEAL = {"card": "ST2", "target": MIR, "item": "MP2"}
#: Henry's order also proposes to give Jack his Healing Herbs, which he then sells by an action.
HENRY = {"play": [], "propose": {"to": JAC, "give": {"items": ["HH1"]}, "get": {"crowns": 2}}}


def closing_window(kontor: Any, monkeypatch: Any) -> str:
    """A 4-seat trading game whose first step is the closing window (W-CLOSE), asking Henry
    (a Spy in hand) and Jack (a Steal an Item); Miranda owns MP2, Henry HH1."""
    s = table(4, MIR, items={MIR: ["MP2"], HEN: ["HH1"]}, hands={JAC: ["ST2"], HEN: ["SP1"]},
              options={"trading": True})
    run_to(s, "w_close")
    assert s["pending"] == {"kind": "w_close", "seats": [HEN, JAC]}
    host = Player.new()
    gid: str = kontor.create_game("fantasy", 4, {"trading": True}, None, 3, host.key.public)["id"]
    for seat, name in enumerate(("Miranda", "Christopher", "Henry", "Jack")):
        kontor.join(gid, name, Player.new().key.public, seat)
    monkeypatch.setattr(GAME, "setup", lambda seats, options, seed: s)
    kontor.start(gid)
    monkeypatch.undo()
    return gid


def seen(kontor: Any, gid: str, viewer: Any, type_: str) -> list[dict[str, Any]]:
    return [e for e in kontor.events(gid, viewer, 0, 200)["items"] if e["type"] == type_]


def test_r21_a_stored_closing_play_survives_a_trade_of_its_target_and_fails_at_resolution(
        kontor: Any, monkeypatch: Any) -> None:
    gid = closing_window(kontor, monkeypatch)
    kontor.submit(gid, 1, HEN, HENRY, via="test")
    kontor.submit(gid, 1, JAC, {"play": [STEAL]}, via="test")  # the last answer: the step resolves
    # while it waits for its resolution, Miranda sells MP2 to Christopher (R21: allowed) ...
    kontor.act(gid, MIR, {"do": "propose", "to": CHR, "give": {"items": ["MP2"]}, "get": {"crowns": 4}}, via="test")
    kontor.act(gid, CHR, {"do": "accept", "from": MIR}, via="test")
    # ... and Henry sells the Healing Herbs his stored order proposes to give Jack
    kontor.act(gid, HEN, {"do": "propose", "to": CHR, "give": {"items": ["HH1"]}, "get": {"crowns": 2}}, via="test")
    kontor.act(gid, CHR, {"do": "accept", "from": HEN}, via="test")
    assert kontor.resolve(gid, 1) == "committed"

    state = kontor.store.state(gid)
    assert state["players"][JAC]["hand"] == ["ST2"] and "ST2" not in state["discard"]  # back, unspent (R12)
    assert state["players"][CHR]["items"] == ["HH1", "MP2"] and state["players"][JAC]["items"] == []
    assert [p["crowns"] for p in state["players"]] == [14, 4, 12, 10]
    assert state["pending"]["kind"] == "price"
    step = kontor.store.history(gid)[0]
    # Jack's play was kept and resolved; Henry's order (its proposal gives what he sold) got the default
    assert step["orders"] == {str(HEN): {"play": []}, str(JAC): {"play": [STEAL]}}
    assert step["defaults"] == [HEN]

    public = kontor.events(gid, "public", 0, 200)["items"]
    closed = [e for e in public if e["type"] == "window_closed"]
    assert closed[0]["plays"] == [{"seat": JAC, **STEAL}]
    returned = [e for e in public if e["type"] == "returned"]
    assert [(e["seat"], e["card"], e["why"]) for e in returned] == [(JAC, "ST2", "target_moved")]
    assert not [e for e in public if e["type"] == "played"]
    # only Henry is told that his order was replaced; Jack's was not
    assert [(e["seat"], e["code"], e["order"]) for e in seen(kontor, gid, HEN, "order_replaced")] == [
        (HEN, "bad_transfer", HENRY)]
    assert seen(kontor, gid, JAC, "order_replaced") == []
    assert seen(kontor, gid, "public", "order_replaced") == []
