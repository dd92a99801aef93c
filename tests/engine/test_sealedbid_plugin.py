"""The peer benchmark's title (`bench/sealedbid`, a `kontor.titles` plugin) keeps the
engine contract: loaded explicitly through its entry point, it goes through the generic
contract, redaction and event checks every built-in title goes through, and plays by the
peer's rules (highest bid wins the round, ties to the lowest seat)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.core import registry
from engine.core.errors import IllegalOrder, OptionsError
from tests.engine import test_contract as contract
from tests.engine import test_event_reveals as reveals
from tests.engine import test_redaction as redaction

PLUGIN = Path(__file__).resolve().parents[2] / "bench" / "sealedbid"
TID = "sealedbid"


@pytest.fixture(scope="module")
def sealedbid() -> Iterator[Any]:
    sys.path.insert(0, str(PLUGIN))
    registry.reload()
    try:
        yield registry.get(TID)
    finally:
        sys.path.remove(str(PLUGIN))
        registry.reload()


def test_it_is_not_in_the_catalogue_unless_loaded() -> None:
    assert TID not in registry.titles()


def test_it_loads_through_its_entry_point(sealedbid: Any) -> None:
    assert sealedbid.name == "Sealed bid"
    assert TID not in registry.load_errors()


@pytest.mark.parametrize("check", [
    contract.test_catalog_entry_names_id_seats_options_bots_and_codes,
    contract.test_bad_seat_counts_raise_options_error,
    contract.test_unknown_and_bad_options_raise_options_error,
    contract.test_orders_may_be_any_mapping,
    redaction.test_an_undeclared_key_never_leaves_the_engine,
    reveals.test_no_event_carries_a_hidden_value_unless_a_rule_reveals_it,
], ids=lambda f: f.__name__)
def test_generic_checks(sealedbid: Any, check: Any) -> None:
    """(The differential redaction check needs hidden parts in the state; this state has
    none: the one hidden thing, the open round's bid, is a sealed order that the service
    keeps from the other seats until the step resolves.)"""
    assert sealedbid.information.hidden_paths(sealedbid.setup(4, {}, 1)) == []
    check(TID)


@pytest.mark.parametrize("check", [
    contract.test_setup_is_deterministic_for_a_seed,
    contract.test_result_is_none_until_the_end_on_default_orders,
], ids=lambda f: f.__name__)
def test_generic_checks_per_seat_count(sealedbid: Any, check: Any) -> None:
    check(TID, 4)


@pytest.mark.parametrize("options", [{}, {"rounds": 3}])
@pytest.mark.parametrize("check", [
    contract.test_a_bot_game_keeps_the_contract_at_every_step,
    contract.test_no_state_a_resolve_was_given_ever_changes_later,
], ids=lambda f: f.__name__)
def test_generic_checks_per_variant(sealedbid: Any, check: Any, options: dict[str, Any]) -> None:
    check(TID, 4, options)


def test_the_peers_rules(sealedbid: Any) -> None:
    g = sealedbid
    s = g.setup(4, {"rounds": 2}, 7)
    assert [r.seat for r in g.requests(s)] == [0, 1, 2, 3] and all(r.sealed for r in g.requests(s))
    s, ev = g.step(s, {0: {"bid": 5}, 1: {"bid": 9}, 2: {"bid": 9}, 3: {"bid": 1}})
    assert ev[0]["bids"] == [5, 9, 9, 1] and ev[0]["winner"] == 1, "a tie goes to the lowest seat"
    assert s["scores"] == [0, 1, 0, 0] and g.result(s) is None
    s, ev = g.step(s, {0: {"bid": 0}, 1: {"bid": 0}, 2: {"bid": 0}, 3: {"bid": 0}})
    assert ev[0]["winner"] == 0 and ev[-1]["type"] == "game_over"
    assert g.requests(s) == [] and [r["seat"] for r in g.result(s)] == [0, 1, 2, 3]
    assert "won the point" in g.describe_event(ev[0], ["A", "B", "C", "D"])
    assert g.picture(g.view(s, 0), ["A", "B", "C", "D"]).startswith("<svg")


@pytest.mark.parametrize("order", [{"bid": -1}, {"bid": 1_000_001}, {"bid": 1.5}, {"bid": True}, {"bid": "3"},
                                   {}, {"bid": 1, "x": 2}])
def test_bad_bids_are_refused(sealedbid: Any, order: dict[str, Any]) -> None:
    with pytest.raises(IllegalOrder):
        sealedbid.validate(sealedbid.setup(4, {}, 1), 0, order)


@pytest.mark.parametrize("rounds", [0, 10_001, "20", True])
def test_bad_round_counts_are_refused(sealedbid: Any, rounds: Any) -> None:
    with pytest.raises(OptionsError):
        sealedbid.setup(4, {"rounds": rounds}, 1)
