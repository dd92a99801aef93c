"""The picture's headline names who is asked now: in setup the seat placing its truck, in an
auction the bidder (not only the player whose turn it is)."""

from __future__ import annotations

from engine.aufachse.picture import _headline_line
from tests.engine.aufachse.helpers import GAME, RED, YELLOW, new_game, open_move, put, step, table

NAMES = ["Hanna", "Otto", "Clara", "Dieter"]


def _line(s: dict, viewer: object = "public") -> str:
    return _headline_line(GAME.view(s, viewer), NAMES[:len(s["players"])])


def test_setup_names_the_seat_placing_its_truck() -> None:
    s = new_game(2)
    assert _line(s) == "Auf Achse — setup: placing trucks: Hanna's turn"
    s, _ = step(s, 0, GAME.default_order(s, 0))
    assert s["phase"] == "place" and s["pending"] == {"kind": "place", "seat": 1}
    assert _line(s) == "Auf Achse — setup: placing trucks: Otto's turn"
    assert _line(s, 0) == _line(s, 1) == _line(s)


def test_an_auction_names_the_bidder() -> None:
    s = table(seats=2)
    put(s, RED, "Hannover")
    open_move(s, RED, [3, 1])
    assert _line(s) == "Auf Achse — round 1, turn 1: Hanna's turn; dice 3 and 1"
    s, _ = step(s, RED, {"die": "A", "path": ["R3.2", "R3.1", "Hamburg"], "arrive": {"pick": 1}})
    assert s["pending"]["kind"] == "bid" and s["pending"]["seat"] == YELLOW
    assert _line(s) == "Auf Achse — round 1, turn 1: Hanna's turn; auction: Otto to bid; dice 3 and 1"
