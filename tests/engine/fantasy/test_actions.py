"""Actions at any time (FD12 instants, V4 transfers): a seat that is not asked plays
Subsidies and Divination Spell, proposes, withdraws, accepts and rejects a transfer; each
refusal has its code and changes nothing; the open step stays as it was."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from engine.core import IllegalOrder
from tests.engine.fantasy.helpers import CHR, GAME, HEN, JAC, MIR, act, run_to, table, window

NAMES = ["Miranda", "Christopher", "Henry", "Jack"]
DECK = ["SW4", "HH1", "HH2", "HH3"]


def of(ev: list[dict[str, Any]], t: str) -> list[dict[str, Any]]:
    return [e for e in ev if e["type"] == t]


def crowns(s: dict[str, Any]) -> list[int]:
    return [p["crowns"] for p in s["players"]]


def refused(s: dict[str, Any], seat: int, action: dict[str, Any], code: str,
            submitted: dict[int, Any] | None = None) -> None:
    before = copy.deepcopy(s)
    with pytest.raises(IllegalOrder) as exc:
        GAME.act(s, seat, action, submitted or {})
    assert exc.value.code == code, exc.value.message
    assert s == before  # nothing changed


def asked(s: dict[str, Any]) -> list[tuple[int, str, int]]:
    return [(r.seat, r.kind, r.step) for r in GAME.requests(s)]


def selecting(hands: dict[int, list[str]], **kw: Any) -> dict[str, Any]:
    """Miranda selects a card (the opening window, if any, closed with passes)."""
    s = table(4, MIR, hands=hands, deck=DECK, **kw)
    if s["pending"]["kind"] == "w_open":
        s, _ = window(s)
    assert s["pending"] == {"kind": "select", "seats": [MIR]}
    return s


# -- FD12 ----------------------------------------------------------------------------------------
def test_fd12_a_seat_not_asked_plays_subsidies_and_gets_the_money_at_once() -> None:
    s = selecting({JAC: ["SU1"]}, crowns={JAC: 3})
    # Miranda opens Swords at 4, Christopher passes; Henry is asked to bid
    s, _ = act(s, MIR, {"pos": 1, "bid": 4})
    s, _ = act(s, CHR, {"bid": None})
    before = asked(s)
    assert before == [(HEN, "bid", s["step"])]
    s, ev = GAME.act(s, JAC, {"do": "play", "card": "SU1"}, {})
    assert crowns(s)[JAC] == 8 and s["players"][JAC]["hand"] == [] and s["discard"][-1] == "SU1"
    assert asked(s) == before  # the open step is Henry's still
    assert [GAME.describe_event(e, NAMES) for e in ev] == ["Jack: Subsidies, +5."]
    assert ev[0]["visible_to"] == "all" and ev[0]["step"] == s["step"]
    s, _ = act(s, HEN, {"bid": 6})
    s, ev = act(s, JAC, {"bid": 7})  # FB-13: the money pays for the raise
    assert of(ev, "raised")[0]["amount"] == 7


def test_fd12_divination_by_a_seat_not_asked_is_seen_only_by_the_caster() -> None:
    s = selecting({JAC: ["DS1"], HEN: ["SP2", "TR3"]})
    before = asked(s)
    s2, ev = GAME.act(s, JAC, {"do": "play", "card": "DS1", "target": HEN}, {})
    assert asked(s2) == before
    public = [e for e in ev if e["visible_to"] == "all"]
    assert [GAME.describe_event(e, NAMES) for e in public] == ["Jack cast Divination Spell on Henry."]
    seen = of(ev, "divination_seen")[0]
    assert seen["visible_to"] == [JAC] and seen["hand"] == ["SP2", "TR3"]
    assert GAME.describe_event(seen, NAMES) == "Jack sees Henry's hand: Spy, Trading."
    assert GAME.view(s2, JAC)["players"][HEN]["hand"] == ["SP2", "TR3"]
    for other in (MIR, CHR, "public"):
        assert "hand" not in GAME.view(s2, other)["players"][HEN]
    # the look closes when the open step resolves
    s3, _ = act(s2, MIR, {"pos": 1, "bid": None})
    assert "hand" not in GAME.view(s3, JAC)["players"][HEN]


def test_fd12_divination_shows_cards_committed_to_a_sealed_play_as_cards_in_hand() -> None:
    s = table(4, MIR, hands={JAC: ["DS1"], HEN: ["ST1", "TR3"]}, items={MIR: ["MP2"]}, deck=DECK)
    run_to(s, "w_close")
    stored = {HEN: {"play": [{"card": "ST1", "item": "MP2"}]}}
    _, ev = GAME.act(s, JAC, {"do": "play", "card": "DS1", "target": HEN}, stored)
    assert of(ev, "divination_seen")[0]["hand"] == ["ST1", "TR3"]  # R14


def test_fd12_an_instant_by_a_seat_without_the_card_is_refused() -> None:
    s = selecting({JAC: ["SU1", "ST1"]})
    refused(s, CHR, {"do": "play", "card": "SU1"}, "no_such_card")
    refused(s, JAC, {"do": "play", "card": "ST1"}, "no_such_card")  # not an instant
    refused(s, JAC, {"do": "play", "card": "SU1", "target": HEN}, "malformed_order")
    refused(s, JAC, {"do": "dance"}, "no_action")
    refused(s, JAC, ["SU1"], "malformed_order")  # type: ignore[arg-type]
    # a card already in the order stored for the open window
    run_to(s, "w_close")
    refused(s, JAC, {"do": "play", "card": "SU1"}, "special_committed",
            {JAC: {"play": [], "instants": [{"card": "SU1"}]}})
    # R24: nothing after the end
    s["over"] = True
    refused(s, JAC, {"do": "play", "card": "SU1"}, "game_over")
    assert GAME.action_prompt(s, JAC) is None


# -- V4 ------------------------------------------------------------------------------------------
def trading(hands: dict[int, list[str]] | None = None, **kw: Any) -> dict[str, Any]:
    return selecting(hands or {}, items={HEN: ["HO6"], JAC: ["SW1"]}, options={"trading": True}, **kw)


OFFER = {"do": "propose", "to": HEN, "give": {"crowns": 6}, "get": {"items": ["HO6"]}}


def test_v4_a_seat_not_asked_proposes_and_withdraws() -> None:
    s = trading()
    before = asked(s)
    s, ev = GAME.act(s, JAC, OFFER, {})
    assert asked(s) == before
    assert [GAME.describe_event(e, NAMES) for e in ev] == ["Jack proposes to Henry: Jack gives 6 crowns; "
                                                          "Henry gives Horses."]
    assert s["proposals"] == [{"from": JAC, "to": HEN, "give": {"items": [], "crowns": 6, "specials": 0},
                               "get": {"items": ["HO6"], "crowns": 0, "specials": 0}, "ask": False}]
    refused(s, JAC, OFFER, "proposal_open")  # one open proposal per seat
    refused(s, CHR, {"do": "withdraw"}, "no_proposal")
    s, ev = GAME.act(s, JAC, {"do": "withdraw"}, {})
    assert s["proposals"] == [] and asked(s) == before
    assert [GAME.describe_event(e, NAMES) for e in ev] == ["Jack withdraws the proposal to Henry."]
    # a proposal that does not stop play: the next step is Miranda's selection's, not Henry's answer
    s, _ = GAME.act(s, JAC, OFFER, {})
    s, _ = act(s, MIR, {"pos": 1, "bid": None})
    assert s["pending"] == {"kind": "open", "seats": [CHR]} and len(s["proposals"]) == 1


def test_v4_the_recipient_accepts_and_the_transfer_is_exact() -> None:
    s = trading({JAC: ["ST1"], HEN: ["SP1", "TR2"]})
    s, _ = GAME.act(s, JAC, {"do": "propose", "to": HEN, "give": {"crowns": 6, "specials": ["ST1"]},
                             "get": {"items": ["HO6"], "specials": 1}}, {})
    assert "ST1" not in json.dumps(GAME.view(s, CHR)) and GAME.view(s, HEN)["players"][JAC]["offered"] == ["ST1"]
    before, total = asked(s), sum(crowns(s))
    refused(s, HEN, {"do": "accept", "from": JAC}, "bad_transfer")  # names none of its specials
    refused(s, HEN, {"do": "accept", "from": JAC, "specials": ["SU2"]}, "offer_gone")  # not held
    s, ev = GAME.act(s, HEN, {"do": "accept", "from": JAC, "specials": ["TR2"]}, {})
    assert asked(s) == before and s["proposals"] == [] and sum(crowns(s)) == total
    assert crowns(s)[JAC] == 4 and crowns(s)[HEN] == 16
    assert s["players"][JAC]["items"] == ["SW1", "HO6"] and s["players"][HEN]["items"] == []
    assert s["players"][JAC]["hand"] == ["TR2"] and s["players"][HEN]["hand"] == ["SP1", "ST1"]
    public = of(ev, "transferred")[0]
    assert GAME.describe_event(public, NAMES) == ("Jack → Henry: 1 special card, 6 crowns; "
                                                   "Henry → Jack: Horses, 1 special card.")
    assert "ST1" not in json.dumps(public) and "TR2" not in json.dumps(public)
    private = of(ev, "transferred_specials")[0]
    assert private["visible_to"] == [HEN, JAC] and private["specials"] == ["ST1"] and private["returned"] == ["TR2"]


def test_v4_the_recipient_rejects() -> None:
    s = trading()
    s, _ = GAME.act(s, JAC, OFFER, {})
    refused(s, CHR, {"do": "reject", "from": JAC}, "no_proposal")  # not the recipient
    s, ev = GAME.act(s, HEN, {"do": "reject", "from": JAC}, {})
    assert s["proposals"] == [] and [GAME.describe_event(e, NAMES) for e in ev] == ["Henry rejects Jack's proposal."]


def test_v4_each_failed_acceptance_check_is_refused_with_its_code_and_nothing_changes() -> None:
    s = trading({JAC: ["TR1"], HEN: ["ST1"]})
    s, _ = GAME.act(s, JAC, {"do": "propose", "to": HEN, "give": {"crowns": 2, "specials": ["TR1"]},
                             "get": {"items": ["HO6"], "specials": 1}}, {})
    accept = {"do": "accept", "from": JAC, "specials": ["ST1"]}
    # the recipient no longer owns what is asked of it
    gone = copy.deepcopy(s)
    gone["players"][HEN]["items"] = []
    refused(gone, HEN, accept, "offer_gone")
    # the proposer no longer holds the special it offers
    gone = copy.deepcopy(s)
    gone["players"][JAC]["hand"] = []
    refused(gone, HEN, accept, "offer_gone")
    # a special in the transfer is part of an order stored for the open window
    refused(s, HEN, accept, "special_committed", {HEN: {"play": [{"card": "ST1", "item": "SW1"}]}})
    refused(s, HEN, accept, "special_committed", {JAC: {"play": [{"card": "TR1", "give": "SW1", "item": "HO6"}]}})
    # the recipient would keep fewer crowns than the high bid it holds (R27, net)
    s = trading()
    s, _ = act(s, MIR, {"pos": 1, "bid": 4})
    s, _ = act(s, CHR, {"bid": None})
    s, _ = act(s, HEN, {"bid": 9})
    s, _ = GAME.act(s, JAC, {"do": "propose", "to": HEN, "give": {"crowns": 1}, "get": {"crowns": 3}}, {})
    refused(s, HEN, {"do": "accept", "from": JAC}, "not_enough_crowns")
    # giving only what keeps the high bid is accepted
    s, _ = GAME.act(s, JAC, {"do": "withdraw"}, {})
    s, ev = GAME.act(s, JAC, {"do": "propose", "to": HEN, "give": {"crowns": 1}, "get": {"crowns": 2}}, {})
    s, ev = GAME.act(s, HEN, {"do": "accept", "from": JAC}, {})
    assert crowns(s)[HEN] == 9 and of(ev, "transferred")


def test_v4_no_proposal_from_the_price_sheets_to_the_end_of_income() -> None:
    s = table(4, MIR, items={HEN: ["HO6"], JAC: ["SW1"]}, options={"trading": True}, at="prices")
    assert s["pending"]["kind"] == "price"
    refused(s, JAC, OFFER, "transfers_frozen")
    assert GAME.action_prompt(s, JAC) is None  # nothing to do: no instant held, no proposal allowed
    s2 = table(4, MIR, options={"trading": False})
    refused(s2, JAC, OFFER, "trading_off")


def test_v4_proposals_lapse_at_the_end_of_the_phase() -> None:
    s = table(4, MIR, hands={CHR: ["ST1"]}, items={HEN: ["HO6"], JAC: ["SW1"]}, options={"trading": True},
              deck=DECK)
    run_to(s, "w_close")  # the last step of the offer phase
    s, _ = GAME.act(s, JAC, OFFER, {})
    assert s["pending"] == {"kind": "w_close", "seats": [CHR]}
    s, ev = window(s)
    assert s["proposals"] == [] and s["pending"]["kind"] == "price"
    lapsed = of(ev, "proposal_lapsed")
    assert [GAME.describe_event(e, NAMES) for e in lapsed] == ["Jack's proposal to Henry lapses."]


def test_v4_a_proposal_that_can_no_longer_be_carried_out_lapses() -> None:
    s = trading()
    s, _ = GAME.act(s, JAC, {"do": "propose", "to": HEN, "give": {"items": ["SW1"]}, "get": {"items": ["HO6"]}}, {})
    s["players"][JAC]["items"] = []  # Jack's Swords is gone (say, stolen)
    s, ev = act(s, MIR, {"pos": 1, "bid": None})
    assert s["proposals"] == [] and of(ev, "proposal_lapsed")[0]["why"] == "cannot_deliver"


def test_v4_an_order_s_proposal_asks_its_recipient_who_then_answers_there() -> None:
    s = trading()
    s, _ = act(s, MIR, {"pos": 1, "bid": None, "propose": {"to": HEN, "give": {"crowns": 2}}})
    assert s["pending"] == {"kind": "accept", "seats": [HEN]}
    refused(s, MIR, {"do": "withdraw"}, "proposal_asked")
    refused(s, HEN, {"do": "accept", "from": MIR}, "proposal_asked")
    p = GAME.action_prompt(s, HEN)
    assert p is None or all(not str(o.value).endswith(f"-{MIR}") for o in p.ask.options)  # type: ignore[union-attr]
