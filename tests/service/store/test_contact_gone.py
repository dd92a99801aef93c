"""A seat's contact leaves with its holder (seat.lua): when the host gives a running game's
seat another key or a bot, the contact becomes a former contact (`gone`), with the last
event before the change, and the seat keeps only a mark that is nobody's contact until
the farewell is made; in the lobby it is dropped; a rename keeps it."""

from __future__ import annotations

from typing import Any

import pytest

from service.channels.notify import bound, current_contacts
from service.core.kontor import Kontor
from tests.service.conftest import Player

# Also with the store on a Valkey Cluster and the queue on a Valkey of its own (issue 24).
pytestmark = pytest.mark.cluster


def running(k: Kontor, start: bool = True) -> tuple[str, dict[int, Player]]:
    host = Player.new()
    gid = k.create_game("haendler", 3, None, None, 7, host.key.public)["id"]
    players = {}
    for seat in range(3):
        p = Player.new()
        k.join(gid, f"P{seat}", p.key.public, seat)
        players[seat] = p
    if start:
        k.start(gid)
    return gid, players


def contact(kid: str | None, email: str = "old@example.org") -> dict[str, Any]:
    return {"email": email, "delivery": "asked", **({"kid": kid} if kid is not None else {})}


def test_a_new_key_moves_the_contact_to_the_former_contacts(kontor: Kontor) -> None:
    store = kontor.store
    gid, players = running(kontor)
    kid, kid2 = store.seats(gid)[1]["kid"], store.seats(gid)[2]["kid"]
    store.set_contact(gid, 1, contact(kid))
    store.set_contact(gid, 2, contact(None, "legacy@example.org"))  # written before contacts were bound
    seq = int(store.meta(gid)["event_seq"])
    heir = Player.new()
    kontor.update_seat(gid, 1, None, heir.key.public, None)
    kontor.update_seat(gid, 2, None, None, "random")
    gone = store.gone(gid)
    assert [(g["seat"], g["kid"], g["name"], g["through"], g["told"]) for g in gone.values()] == [
        (1, kid, "P1", seq, False), (2, kid2, "P2", seq + 1, False)]  # (seat 1's change: event seq + 1)
    assert store.gone_contact(gid, "1:0") == contact(kid)
    assert store.gone_contact(gid, "2:1") == contact(None, "legacy@example.org")
    assert store.contact_for(gid, {"seat": 1, "former": "1:0"})["email"] == "old@example.org"
    # The seats keep a mark that is nobody's contact (so the game still has somebody to tell).
    marks = store.contacts(gid)
    assert marks == {1: {"gone": "1:0", "kid": "-"}, 2: {"gone": "2:1", "kid": "-"}}
    assert current_contacts(marks, store.seats(gid)) == {}
    assert store.contact_for(gid, {"seat": 1}) == {"gone": "1:0", "kid": "-"}
    # The farewell made, the mark goes (unless the new holder set a contact over it).
    store.mark_gone_told(gid, "1:0")
    store.drop_gone_mark(gid, 1, "1:0")
    store.set_contact(gid, 2, contact("whatever", "new@example.org"))
    store.drop_gone_mark(gid, 2, "2:1")
    assert 1 not in store.contacts(gid) and store.contacts(gid)[2]["email"] == "new@example.org"
    assert store.gone(gid)["1:0"]["told"] is True and store.gone(gid)["2:1"]["told"] is False


def test_a_rename_keeps_the_contact_and_the_lobby_drops_it(kontor: Kontor) -> None:
    store = kontor.store
    gid, _ = running(kontor)
    kid = store.seats(gid)[0]["kid"]
    store.set_contact(gid, 0, contact(kid))
    kontor.update_seat(gid, 0, "Nora", None, None)
    assert store.contact(gid, 0) == contact(kid) and store.gone(gid) == {}
    lobby, _ = running(kontor, start=False)
    store.set_contact(lobby, 0, contact(store.seats(lobby)[0]["kid"]))
    kontor.update_seat(lobby, 0, None, Player.new().key.public, None)
    assert store.contacts(lobby) == {} and store.gone(lobby) == {}


def test_a_contact_is_the_holders_it_was_set_under() -> None:
    assert bound({"kid": "k1"}, "k1") and not bound({"kid": "k1"}, "k2") and not bound({"kid": "-"}, "k1")
    assert bound({}, "k1") and not bound({}, "")  # no key recorded: the player's who holds the seat
    assert bound({"kid": ""}, "") and not bound({"kid": ""}, "k1")  # set by the service on a bot seat
