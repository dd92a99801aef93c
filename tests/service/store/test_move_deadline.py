"""The one way a step's deadline moves outside a commit (`Store.move_deadline`): a
compare-and-set on the open step, still collecting, and on the deadline as read."""

from __future__ import annotations

import pytest

from service.core.kontor import Kontor
from tests.service.conftest import domain_game

pytestmark = pytest.mark.cluster


def test_move_deadline_moves_the_open_step_and_sets_its_fields(kontor: Kontor) -> None:
    gid, _ = domain_game(kontor, seats=3)
    ph = kontor.store.phase(gid)
    before = float(ph["deadline"])
    out = kontor.store.move_deadline(gid, int(ph["id"]), before + 3600, read=before, why="test")
    assert (out.status, float(out.value)) == ("moved", before + 3600)
    after = kontor.store.phase(gid)
    assert float(after["deadline"]) == before + 3600 and after["why"] == "test"


def test_move_deadline_refuses_a_stale_read_another_step_or_a_locked_step(kontor: Kontor) -> None:
    gid, _ = domain_game(kontor, seats=3)
    ph = kontor.store.phase(gid)
    step, before = int(ph["id"]), float(ph["deadline"])
    assert kontor.store.move_deadline(gid, step, before + 60, read=before - 1).status == "stale"
    assert kontor.store.move_deadline(gid, step + 1, before + 60).status == "stale"
    assert float(kontor.store.phase(gid)["deadline"]) == before
    kontor.store.expire(gid, step, "defaults", 0)  # not due yet: stays collecting
    assert kontor.store.move_deadline(gid, step, before - 10**6).status == "moved"
    assert kontor.store.expire(gid, step, "defaults", 0).status == "trigger"  # now resolving
    out = kontor.store.move_deadline(gid, step, before + 60)
    assert (out.status, out.value) == ("stale", "resolving")
