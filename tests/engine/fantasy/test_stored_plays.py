"""R21: an item card that a sealed W-CLOSE play targets may be sold or traded (V4) while
the window is open; the play is kept (`validate_stored`) and fails when the window
resolves, its card returning unspent and publicly (R12, R16, FD6).

Each test stores the window's orders, carries out an accepted transfer as an action
(`GAME.act`, with the stored orders as `submitted`, as the service does), and resolves
the step as the service does: every stored order through `validate_stored`, then
`resolve_validated`. Crowns and cards are conserved throughout."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from engine.core import IllegalOrder
from tests.engine.fantasy.helpers import CHR, GAME, HEN, JAC, MIR, act, crowns, of, run_to, table

NAMES = ["Miranda", "Christopher", "Henry", "Jack"]
S = dict[str, Any]


def at_close(items: dict[int, list[str]], hands: dict[int, list[str]], afb: int = MIR) -> S:
    s = table(4, afb, items=items, hands=hands, options={"trading": True})
    run_to(s, "w_close")
    assert s["pending"]["kind"] == "w_close"
    return s


def transfer(s: S, giver: int, to: int, give: dict[str, Any], get: dict[str, Any],
             stored: dict[int, dict[str, Any]]) -> tuple[S, list[dict[str, Any]]]:
    """`giver` proposes and `to` accepts, as actions while the window's orders are stored."""
    s, ev = GAME.act(s, giver, {"do": "propose", "to": to, "give": give, "get": get}, stored)
    s, ev2 = GAME.act(s, to, {"do": "accept", "from": giver}, stored)
    assert of(ev2, "transferred")
    return s, ev + ev2


def resolve_stored(s: S, stored: dict[int, dict[str, Any]]) -> tuple[S, list[dict[str, Any]]]:
    """The service's resolution of a step: each stored order re-checked, then resolved."""
    orders = {seat: stored.get(seat, GAME.default_order(s, seat)) for seat in s["pending"]["seats"]}
    for seat, order in orders.items():
        GAME.validate_stored(s, seat, order)
    return GAME.resolve_validated(s, orders)


def holdings(s: S) -> Counter[str]:
    """Every card in play or out of it: hands, items, deck, display, discard, removed."""
    cards: Counter[str] = Counter()
    for p in s["players"]:
        cards.update(p["hand"])
        cards.update(p["items"])
    cards.update(s["deck"])
    cards.update(d["card"] for d in s["display"] if d and d.get("card"))
    cards.update(s["discard"])
    cards.update(s["removed"])
    cards.update(s.get("buried", []))
    return cards


def said(ev: list[dict[str, Any]], *types: str) -> list[str]:
    return [GAME.describe_event(e, NAMES) for e in ev if e["type"] in types]


# -- R12: the target went to another opponent --------------------------------------------------------
def test_r21_r12_a_steal_whose_target_was_sold_to_another_opponent_returns_unspent() -> None:
    s = at_close({MIR: ["MP2"]}, {JAC: ["ST2"], CHR: ["SP1"]})
    stored = {JAC: {"play": [{"card": "ST2", "target": MIR, "item": "MP2"}]}}
    GAME.validate(s, JAC, stored[JAC])
    total, cards = sum(crowns(s)), holdings(s)
    s, _ = transfer(s, MIR, CHR, {"items": ["MP2"]}, {"crowns": 4}, stored)  # R21: allowed
    assert s["players"][CHR]["items"] == ["MP2"] and crowns(s)[:2] == [14, 6]
    with pytest.raises(IllegalOrder) as exc:
        GAME.validate(s, JAC, stored[JAC])  # as a new order it is refused: MP2 is not Miranda's
    assert exc.value.code == "bad_target"
    GAME.validate_stored(s, JAC, stored[JAC])  # as a stored one it is kept
    s, ev = resolve_stored(s, stored)
    assert said(ev, "window_closed", "played", "returned") == [
        "The window as the offer ends closes: Jack: Steal an Item on Miranda's Magic Potions.",
        "Jack's Steal an Item returns to their hand unspent: its target has moved."]
    assert [(e["seat"], e["card"], e["why"], e["visible_to"]) for e in of(ev, "returned")] == [
        (JAC, "ST2", "target_moved", "all")]
    assert not of(ev, "played")
    assert s["players"][JAC]["hand"] == ["ST2"] and "ST2" not in s["discard"]  # unspent
    assert s["players"][CHR]["items"] == ["MP2"] and s["players"][JAC]["items"] == []  # nothing was stolen
    assert s["pending"]["kind"] == "price"
    assert sum(crowns(s)) == total and holdings(s) == cards


def test_r21_r12_a_defective_item_on_a_sold_item_returns_unspent_and_the_item_stays_in_play() -> None:
    s = at_close({MIR: ["MP2", "HH1"]}, {HEN: ["DI1"]})
    stored = {HEN: {"play": [{"card": "DI1", "target": MIR, "item": "MP2"}]}}
    cards = holdings(s)
    s, _ = transfer(s, MIR, JAC, {"items": ["MP2"]}, {"crowns": 5}, stored)
    s, ev = resolve_stored(s, stored)
    assert [(e["seat"], e["card"], e["why"]) for e in of(ev, "returned")] == [(HEN, "DI1", "target_moved")]
    assert s["removed"] == [] and s["players"][JAC]["items"] == ["MP2"] and s["players"][HEN]["hand"] == ["DI1"]
    assert holdings(s) == cards


def test_r21_r12_the_play_stays_aimed_at_the_chosen_opponent_when_another_play_comes_after_the_move() -> None:
    # Jack stored his Steal on Miranda's MP2; she sells it to Christopher; Henry, asked in the same
    # window, then aims his own Steal at Christopher's MP2: Henry's takes effect, Jack's fails.
    s = at_close({MIR: ["MP2"]}, {JAC: ["ST2"], HEN: ["ST3"]}, afb=JAC)
    stored = {JAC: {"play": [{"card": "ST2", "target": MIR, "item": "MP2"}]}}
    s, _ = transfer(s, MIR, CHR, {"items": ["MP2"]}, {"crowns": 4}, stored)
    with pytest.raises(IllegalOrder):
        GAME.validate(s, HEN, {"play": [{"card": "ST3", "target": MIR, "item": "MP2"}]})  # no longer hers
    stored[HEN] = {"play": [{"card": "ST3", "target": CHR, "item": "MP2"}]}
    GAME.validate(s, HEN, stored[HEN])
    s, ev = resolve_stored(s, stored)  # from the AFB, Jack: his play resolves first, and fails
    assert [(e["seat"], e["card"]) for e in of(ev, "returned")] == [(JAC, "ST2")]
    assert [(e["seat"], e["card"]) for e in of(ev, "played")] == [(HEN, "ST3")]
    assert s["players"][HEN]["items"] == ["MP2"] and s["players"][CHR]["items"] == []
    assert s["players"][JAC]["hand"] == ["ST2"] and "ST3" in s["discard"]


def test_r21_r12_a_target_that_moved_away_and_back_is_taken() -> None:
    # R12 asks where the card is when the play resolves: back with Miranda, the steal takes effect.
    s = at_close({MIR: ["MP2"]}, {JAC: ["ST2"]})
    stored = {JAC: {"play": [{"card": "ST2", "target": MIR, "item": "MP2"}]}}
    s, _ = transfer(s, MIR, CHR, {"items": ["MP2"]}, {"crowns": 4}, stored)
    s, _ = transfer(s, CHR, MIR, {"items": ["MP2"]}, {"crowns": 4}, stored)
    s, ev = resolve_stored(s, stored)
    assert not of(ev, "returned") and s["players"][JAC]["items"] == ["MP2"] and "ST2" in s["discard"]
    assert crowns(s)[:2] == [10, 10]


# -- R16: the target went to the card's own player; Trading's own card went -------------------------
def test_r21_r16_a_steal_whose_target_was_sold_to_its_own_player_returns_unspent() -> None:
    s = at_close({MIR: ["MP2"]}, {JAC: ["ST2"]})
    stored = {JAC: {"play": [{"card": "ST2", "target": MIR, "item": "MP2"}]}}
    total, cards = sum(crowns(s)), holdings(s)
    s, _ = transfer(s, MIR, JAC, {"items": ["MP2"]}, {"crowns": 6}, stored)  # Jack buys it himself
    with pytest.raises(IllegalOrder):
        GAME.validate(s, JAC, stored[JAC])  # his own item now
    s, ev = resolve_stored(s, stored)
    assert said(ev, "returned") == ["Jack's Steal an Item returns to their hand unspent: its target has moved."]
    assert s["players"][JAC]["items"] == ["MP2"] and s["players"][JAC]["hand"] == ["ST2"]
    assert crowns(s) == [16, 10, 10, 4] and sum(crowns(s)) == total and holdings(s) == cards


def test_r21_r16_a_trading_whose_own_card_was_sold_returns_unspent() -> None:
    s = at_close({MIR: ["MP2"], JAC: ["HH1"]}, {JAC: ["TR1"]})
    stored = {JAC: {"play": [{"card": "TR1", "give": "HH1", "target": MIR, "item": "MP2"}]}}
    cards = holdings(s)
    s, _ = transfer(s, JAC, HEN, {"items": ["HH1"]}, {"crowns": 2}, stored)  # Jack sells his own card
    with pytest.raises(IllegalOrder):
        GAME.validate(s, JAC, stored[JAC])
    s, ev = resolve_stored(s, stored)
    assert [(e["seat"], e["card"], e["why"]) for e in of(ev, "returned")] == [(JAC, "TR1", "target_moved")]
    assert s["players"][HEN]["items"] == ["HH1"] and s["players"][MIR]["items"] == ["MP2"]
    assert s["players"][JAC]["items"] == [] and s["players"][JAC]["hand"] == ["TR1"]
    assert holdings(s) == cards


def test_r21_r16_a_trading_whose_wanted_card_was_sold_to_its_own_player_returns_unspent() -> None:
    s = at_close({MIR: ["MP2"], JAC: ["HH1"]}, {JAC: ["TR1"]})
    stored = {JAC: {"play": [{"card": "TR1", "give": "HH1", "target": MIR, "item": "MP2"}]}}
    s, _ = transfer(s, MIR, JAC, {"items": ["MP2"]}, {"crowns": 6}, stored)
    s, ev = resolve_stored(s, stored)
    assert [(e["seat"], e["card"]) for e in of(ev, "returned")] == [(JAC, "TR1")]
    assert s["players"][JAC]["items"] == ["HH1", "MP2"] and s["players"][MIR]["items"] == []


# -- Antitrust Law: a sale broke the monopoly ----------------------------------------------------
def test_r21_an_antitrust_law_whose_monopoly_a_sale_broke_returns_unspent_and_no_auction_runs() -> None:
    s = at_close({MIR: ["HO1", "HO4"]}, {CHR: ["AL1"]})
    stored = {CHR: {"play": [{"card": "AL1", "target": MIR, "type": "HO"}]}}
    total, cards = sum(crowns(s)), holdings(s)
    s, _ = transfer(s, MIR, HEN, {"items": ["HO4"]}, {"crowns": 5}, stored)
    with pytest.raises(IllegalOrder) as exc:
        GAME.validate(s, CHR, stored[CHR])
    assert exc.value.code == "bad_target"
    s, ev = resolve_stored(s, stored)
    assert said(ev, "returned") == [
        "Christopher's Antitrust Law returns to their hand unspent: its target is no longer valid."]
    assert not of(ev, "antitrust_auction") and s["auction"] is None and s["pending"]["kind"] == "price"
    assert s["players"][CHR]["hand"] == ["AL1"] and s["players"][MIR]["items"] == ["HO1"]
    assert sum(crowns(s)) == total and holdings(s) == cards


# -- every other defect is still refused ---------------------------------------------------------
@pytest.mark.parametrize(("play", "code"), [
    ({"card": "ST1", "target": MIR, "item": "MP2"}, "no_such_card"),  # not held
    ({"card": "SU1", "target": MIR, "item": "MP2"}, "no_such_card"),  # not a card of this window
    ({"card": "ST2", "target": JAC, "item": "MP2"}, "bad_target"),  # not an opponent
    ({"card": "ST2", "target": 7, "item": "MP2"}, "bad_target"),  # no such seat
    ({"card": "ST2", "item": "MP2"}, "bad_target"),  # nobody named
    ({"card": "ST2", "target": MIR, "item": "ST1"}, "bad_target"),  # no item card
    ({"card": "ST2", "target": MIR, "item": 3}, "bad_target"),
    ({"card": "ST2", "target": MIR, "item": "MP2", "give": "HH1"}, "malformed_order"),  # Steal gives nothing
    ({"card": "TR1", "give": "XX1", "target": MIR, "item": "MP2"}, "bad_target"),
    ({"card": "AL1", "target": MIR, "type": "XX"}, "bad_target"),
])
def test_r21_every_other_defect_of_a_stored_play_is_still_refused(play: dict[str, Any], code: str) -> None:
    s = at_close({MIR: ["MP2"]}, {JAC: ["ST2", "TR1", "AL1", "SU1"]})
    s, _ = transfer(s, MIR, CHR, {"items": ["MP2"]}, {"crowns": 4}, {})
    before = json.dumps(s, sort_keys=True)
    with pytest.raises(IllegalOrder) as exc:
        GAME.validate_stored(s, JAC, {"play": [play]})
    assert exc.value.code == code, exc.value.message
    assert json.dumps(s, sort_keys=True) == before


def test_r21_a_card_named_twice_or_an_unknown_field_is_still_refused() -> None:
    s = at_close({MIR: ["MP2", "HH1"]}, {JAC: ["ST2"]})
    play = {"card": "ST2", "target": MIR, "item": "MP2"}
    s, _ = transfer(s, MIR, CHR, {"items": ["MP2"]}, {"crowns": 4}, {})
    for order, code in (({"play": [play, {**play, "item": "HH1"}]}, "no_such_card"),
                        ({"play": [play], "bid": 3}, "malformed_order"),
                        ({"kind": "bid", "play": [play]}, "wrong_kind"),
                        ({"play": "ST2"}, "malformed_order")):
        with pytest.raises(IllegalOrder) as exc:
            GAME.validate_stored(s, JAC, order)
        assert exc.value.code == code, (order, exc.value.message)
    with pytest.raises(IllegalOrder) as exc:
        GAME.validate_stored(s, HEN, {"play": []})  # not asked in this window
    assert exc.value.code == "not_your_turn"


def test_r21_a_proposal_riding_on_a_stored_order_that_gives_what_was_sold_is_refused() -> None:
    # The order's own proposal (the seat's own side) is checked as at submission: the service
    # then plays the default, a pass, and the window's plays of that order with it.
    s = at_close({MIR: ["MP2"], HEN: ["HH1"]}, {HEN: ["ST2"]})
    stored = {HEN: {"play": [{"card": "ST2", "target": MIR, "item": "MP2"}],
                    "propose": {"to": JAC, "give": {"items": ["HH1"]}, "get": {"crowns": 2}}}}
    GAME.validate_stored(s, HEN, stored[HEN])
    s, _ = transfer(s, HEN, CHR, {"items": ["HH1"]}, {"crowns": 2}, stored)
    with pytest.raises(IllegalOrder) as exc:
        GAME.validate_stored(s, HEN, stored[HEN])
    assert exc.value.code == "bad_transfer"


def test_r21_outside_the_closing_window_a_stored_order_is_checked_as_a_new_one() -> None:
    s = table(4, MIR, hands={JAC: ["DS1"]}, options={"trading": True}, deck=["SW4", "HH1", "HH2", "HH3"])
    if s["pending"]["kind"] == "w_open":
        s, _ = resolve_stored(s, {})
    assert s["pending"] == {"kind": "select", "seats": [MIR]}
    for order in ({"pos": 1, "bid": 4}, {"pos": 1, "bid": 11}, {"pos": 9, "bid": None}, {"play": []}):
        try:
            GAME.validate(s, MIR, order)
            expected = None
        except IllegalOrder as exc:
            expected = exc.code
        try:
            GAME.validate_stored(s, MIR, order)
            got = None
        except IllegalOrder as exc:
            got = exc.code
        assert got == expected, order


# -- crowns: what else an accepted transfer may do to a stored order (R27) ----------------------------
def test_r27_a_stored_bid_that_an_accepted_transfer_left_unpaid_is_refused() -> None:
    # R27 keeps back the crowns of a high bid that stands, not of a bid stored and not yet
    # resolved: the acceptance is allowed, and the stored bid is then refused (the service
    # plays the default, a pass).
    s = table(4, MIR, options={"trading": True}, deck=["SW4", "HH1", "HH2", "HH3"])
    if s["pending"]["kind"] == "w_open":
        s, _ = resolve_stored(s, {})
    s, _ = act(s, MIR, {"pos": 1, "bid": 4})
    assert s["pending"] == {"kind": "bid", "seats": [CHR]}
    stored = {CHR: {"bid": 9}}
    GAME.validate_stored(s, CHR, stored[CHR])
    s, _ = transfer(s, JAC, CHR, {"items": []}, {"crowns": 3}, stored)  # Christopher pays 3 for nothing
    assert crowns(s)[CHR] == 7
    with pytest.raises(IllegalOrder) as exc:
        GAME.validate_stored(s, CHR, stored[CHR])
    assert exc.value.code == "not_enough_crowns"
    # while the high bid Miranda holds keeps its crowns back: she cannot pay them away
    s, _ = GAME.act(s, JAC, {"do": "propose", "to": MIR, "give": {}, "get": {"crowns": 7}}, stored)
    with pytest.raises(IllegalOrder) as exc:
        GAME.act(s, MIR, {"do": "accept", "from": JAC}, stored)
    assert exc.value.code == "not_enough_crowns"



def test_r12_a_play_queued_before_plays_named_their_target_resolves_as_then() -> None:
    """A game saved with its closing plays queued in the older form (the item's owner at
    the close under "owner", no "target") resolves them as it did: a steal from the
    owner at the close, or back unspent when the item moved since (R12)."""
    from engine.fantasy.specials import windows

    for moved_since, stolen in ((False, True), (True, False)):
        s = at_close({MIR: ["MP2"]}, {JAC: ["ST2"]})
        s, _ = GAME.resolve(s, {**{seat: GAME.default_order(s, seat) for seat in s["pending"]["seats"]},
                                JAC: {"play": [{"card": "ST2", "target": MIR, "item": "MP2"}]}})
        assert s["players"][JAC]["items"] == ["MP2"]  # the new form, for comparison
        s = at_close({MIR: ["MP2"]}, {JAC: ["ST2"]})
        s["players"][JAC]["hand"] = []
        s["queue"] = [{"seat": JAC, "card": "ST2", "item": "MP2", "owner": MIR}]
        if moved_since:
            s["players"][MIR]["items"], s["players"][CHR]["items"] = [], ["MP2"]
        ev: list[dict[str, Any]] = []
        windows.run_queue(s, ev)
        assert (s["players"][JAC]["items"] == ["MP2"]) is stolen
        assert [e["type"] for e in ev] == (["played"] if stolen else ["returned"])
