"""Every Fantasy Business decision in the player's terms: exact options, bounds and orders
for set-up states (engine.fantasy.prompts); the orders pass `validate` (or `act`)."""

from __future__ import annotations

from typing import Any

import pytest

from engine.core import IllegalOrder
from engine.core.choices import Prompt, read_words
from tests.engine.fantasy.helpers import CHR, GAME, HEN, JAC, MIR, act, run_to, table, window

DECK = ["SW4", "HH1", "ST3", "AR1"]


def labels(p: Prompt) -> list[str]:
    assert p.ask is not None
    return [o.label for o in p.ask.options]


def places(p: Prompt) -> list[str | None]:
    assert p.ask is not None
    return [o.place for o in p.ask.options]


def done(s: dict[str, Any], seat: int, picks: list[Any]) -> Prompt:
    p = GAME.prompt(s, seat, picks)
    assert p is not None and p.order is not None
    GAME.validate(s, seat, p.order)
    return p


def bad(s: dict[str, Any], seat: int, picks: list[Any]) -> None:
    with pytest.raises(IllegalOrder) as exc:
        GAME.prompt(s, seat, picks)
    assert exc.value.code == "bad_pick"


def test_selecting_a_card_by_its_name_then_opening_or_passing() -> None:
    s = table(4, MIR, crowns={MIR: 5}, deck=DECK)
    p = GAME.prompt(s, MIR, [])
    assert p is not None and p.order is None
    assert labels(p) == ["Swords (position 1, minimum 4)", "Healing Herbs (position 2, minimum 2)",
                         "The face-down special card (position 3, minimum 1)", "Armour (position 4, minimum 5)"]
    assert places(p) == ["offer-1", "offer-2", "offer-3", "offer-4"]
    p = GAME.prompt(s, MIR, [1])
    assert p is not None and p.ask is not None and p.ask.number is not None
    n = p.ask.number
    assert (n.min, n.max, n.step, n.default, [o.value for o in n.named]) == (4, 5, 1, None, ["pass"])
    assert done(s, MIR, [1, 5]).order == {"pos": 1, "bid": 5}
    assert done(s, MIR, [1, 5]).sentence == "Select Swords (position 1) and open the bidding at 5 crowns."
    assert done(s, MIR, [1, "pass"]).order == {"pos": 1, "bid": None}
    assert done(s, MIR, [3, 1]).order == {"pos": 3, "bid": 1}
    for picks in ([1, 3], [1, 6], [5], ["Swords"], [1, None]):
        bad(s, MIR, picks)
    # a card above the seat's crowns may only be passed
    s["players"][MIR]["crowns"] = 3
    p = GAME.prompt(s, MIR, [4])
    assert p is not None and labels(p) == ["Pass the opening"]
    # with the pre-emption: open, pass or buy it now
    s["players"][MIR]["crowns"] = 5
    s["offer"]["preempt"] = MIR
    p = GAME.prompt(s, MIR, [4])
    assert p is not None and labels(p) == ["Open the bidding", "Pass the opening", "Buy it now for 5 crowns (your "
                                           "pre-emption)"]
    assert done(s, MIR, [4, "preempt"]).order == {"pos": 4, "preempt": True}
    assert done(s, MIR, [4, "open", 5]).order == {"pos": 4, "bid": 5}
    # a person's words: the card's name, then "pass"
    got = read_words("Armour\npass", lambda picks: GAME.prompt(s, MIR, picks))  # type: ignore[arg-type,return-value]
    assert got.order == {"pos": 4, "bid": None}


def test_opening_and_bidding_are_numbers_with_bounds_and_pass() -> None:
    s = table(4, MIR, crowns={CHR: 7}, deck=DECK)
    s, _ = act(s, MIR, {"pos": 1, "bid": 4})
    p = GAME.prompt(s, CHR, [])
    assert p is not None and p.ask is not None and p.ask.number is not None
    assert (p.ask.number.min, p.ask.number.max) == (5, 7)
    assert p.ask.question == "Swords (position 1): the high bid is 4. Raise to how much, or pass for good?"
    assert done(s, CHR, ["pass"]).order == {"bid": None}
    assert done(s, CHR, [7]).order == {"bid": 7}
    bad(s, CHR, [4])
    bad(s, CHR, [8])
    with pytest.raises(IllegalOrder) as exc:
        GAME.prompt(s, HEN, [])
    assert exc.value.code == "not_your_turn"
    # the opening passed on: Christopher may open at the minimum or more
    s = table(4, MIR, deck=DECK)
    s, _ = act(s, MIR, {"pos": 2, "bid": None})
    p = GAME.prompt(s, CHR, [])
    assert p is not None and p.ask is not None and p.ask.number is not None
    assert (p.ask.number.min, p.ask.number.max) == (2, 10)
    assert done(s, CHR, [2]).sentence == "Open Healing Herbs (position 2) at 2 crowns."


def test_the_last_eligible_player_takes_a_card_or_declines() -> None:
    s = table(4, MIR, crowns={MIR: 4}, deck=DECK)
    s["offer"] = {**s["offer"], "bought": [CHR, HEN, JAC]}
    run_to(s, "offer")
    assert s["pending"] == {"kind": "lone", "seats": [MIR]}
    p = GAME.prompt(s, MIR, [])
    assert p is not None
    assert labels(p) == ["Take Swords (position 1) for 4 crowns", "Take Healing Herbs (position 2) for 2 crowns",
                         "Take the face-down special card (position 3) for 1 crown", "Decline the remaining cards"]
    assert done(s, MIR, [2]).order == {"take": 2}
    assert done(s, MIR, ["decline"]).order == {"take": None}


@pytest.mark.parametrize(("below", "lows"), [(False, (2, 4)), (True, (1, 1))])
def test_the_price_sheet_is_one_number_per_owned_type_in_its_range(below: bool, lows: tuple[int, int]) -> None:
    s = table(4, MIR, items={MIR: ["SW1", "HH1", "HH2"]}, at="prices", options={"below_base": below})
    p = GAME.prompt(s, MIR, [])
    assert p is not None and p.ask is not None
    assert [(n.label, n.key, n.min, n.max, n.default) for n in p.ask.sheet] == [
        ("Healing Herbs", "HH", lows[0], 4, 2), ("Swords", "SW", lows[1], 8, 4)]
    assert done(s, MIR, [{"HH": 4, "SW": lows[1]}]).order == {"prices": {"HH": 4, "SW": lows[1]}}
    bad(s, MIR, [{"HH": 5, "SW": 4}])
    bad(s, MIR, [{"HH": 3}])
    got = read_words("Healing Herbs 3, Swords 6", lambda picks: GAME.prompt(s, MIR, picks))  # type: ignore[arg-type,return-value]
    assert got.order == {"prices": {"HH": 3, "SW": 6}}
    assert got.sentence == "Price sheet: Healing Herbs 3, Swords 6."


def test_a_window_play_is_a_card_then_its_targets_narrowed() -> None:
    s = table(4, MIR, hands={JAC: ["AL1", "ST1", "ST2", "SU1"], HEN: ["SP1"]},
              items={MIR: ["HO1", "HO4"], HEN: ["HH2"], JAC: ["SW1"]}, deck=DECK)
    run_to(s, "w_close")
    p = GAME.prompt(s, JAC, [])
    assert p is not None and p.order == {"play": []}  # playing nothing is an order already
    assert labels(p) == ["Antitrust Law", "Steal an Item", "Play nothing"]
    assert places(p) == ["hand-AL1", "hand-ST1", None]
    p = GAME.prompt(s, JAC, ["AL1"])
    assert p is not None and labels(p) == ["Seat 0"] and places(p) == ["seat-0"]
    p = GAME.prompt(s, JAC, ["AL1", 0])
    assert p is not None and labels(p) == ["Horses"] and places(p) == ["items-0-HO"]
    p = GAME.prompt(s, JAC, ["AL1", 0, "HO"])
    assert p is not None and labels(p) == ["Steal an Item", "No more cards"]
    assert p.order == {"play": [{"card": "AL1", "target": 0, "type": "HO"}]}
    p = GAME.prompt(s, JAC, ["AL1", 0, "HO", "ST1"])
    assert p is not None and labels(p) == ["Seat 0", "Seat 2"]
    p = GAME.prompt(s, JAC, ["AL1", 0, "HO", "ST1", 2])
    assert p is not None and labels(p) == ["Healing Herbs"] and places(p) == ["items-2-HH"]
    p = done(s, JAC, ["AL1", 0, "HO", "ST1", 2, "HH", "ST2", 0, "HO", "done"])
    assert p.order == {"play": [{"card": "AL1", "target": 0, "type": "HO"}, {"card": "ST1", "item": "HH2"},
                                {"card": "ST2", "item": "HO1"}]}
    assert p.sentence == ("Play Antitrust Law against Seat 0 for Horses; then Steal an Item on Seat 2's Healing "
                          "Herbs; then Steal an Item on Seat 0's Horses.")
    assert p.ask is None
    # Henry holds only a Spy: he may only play nothing here
    p = GAME.prompt(s, HEN, [])
    assert p is not None and labels(p) == ["Play nothing"]
    bad(s, JAC, ["SU1"])  # an instant is an action, not a window play
    bad(s, JAC, ["done", "done"])


def test_the_spy_keeps_or_revises_its_sheet() -> None:
    s = table(4, MIR, hands={MIR: ["SP1"]}, items={MIR: ["SW1"]}, at="prices")
    s, _ = GAME.step(s, {MIR: {"prices": {"SW": 8}}})
    s, _ = window(s, {MIR: [{"card": "SP1"}]})
    assert s["pending"] == {"kind": "spy", "seats": [MIR]}
    p = GAME.prompt(s, MIR, [])
    assert p is not None and labels(p) == ["Keep your price sheet", "Revise your price sheet"]
    assert done(s, MIR, ["keep"]).order == {"prices": None}
    assert done(s, MIR, ["revise", {"SW": 5}]).order == {"prices": {"SW": 5}}


def test_a_proposal_asked_of_its_recipient_by_an_order() -> None:
    s = table(4, MIR, hands={HEN: ["TR2", "SP1"]}, items={HEN: ["HO6"]}, options={"trading": True}, deck=DECK)
    s, _ = window(s)
    s, _ = act(s, MIR, {"pos": 1, "bid": None, "propose": {"to": HEN, "give": {"crowns": 4},
                                                           "get": {"items": ["HO6"], "specials": 1}}})
    p = GAME.prompt(s, HEN, [])
    assert p is not None and labels(p) == ["Accept it", "Reject it"]
    assert p.ask is not None and p.ask.question == ("A proposal: Seat 0 gives 4 crowns; Seat 2 (you) gives Horses, "
                                                    "1 special card of their choice. Accept or reject it?")
    p = GAME.prompt(s, HEN, ["accept"])
    assert p is not None and labels(p) == ["Spy", "Trading"] and places(p) == ["hand-SP1", "hand-TR2"]
    assert done(s, HEN, ["accept", "TR2"]).order == {"accept": True, "specials": ["TR2"]}
    assert done(s, HEN, ["reject"]).order == {"accept": False}


def test_actions_offered_to_a_seat_not_asked() -> None:
    s = table(4, MIR, hands={JAC: ["SU1", "DS1", "ST1"]}, items={HEN: ["HO6"], JAC: ["SW1"]},
              options={"trading": True}, crowns={JAC: 7}, deck=DECK)
    s, _ = window(s)
    assert s["pending"]["seats"] == [MIR]
    p = GAME.action_prompt(s, JAC, [])
    assert p is not None and p.order is None
    assert labels(p) == ["Play Subsidies (the bank pays you 5 crowns)",
                         "Cast Divination Spell (see an opponent's special cards)", "Propose a transfer"]
    assert GAME.action_prompt(s, JAC, ["subsidies"]).order == {"do": "play", "card": "SU1"}  # type: ignore[union-attr]
    p = GAME.action_prompt(s, JAC, ["divination"])
    assert p is not None and labels(p) == ["Seat 0", "Seat 1", "Seat 2"]
    assert GAME.action_prompt(s, JAC, ["divination", 2]).order == {  # type: ignore[union-attr]
        "do": "play", "card": "DS1", "target": 2}
    p = GAME.action_prompt(s, JAC, ["propose", HEN])
    assert p is not None and p.order is None
    assert labels(p) == ["Give your Swords", "Ask for Seat 2's Horses", "Give your Divination Spell",
                         "Give your Steal an Item", "Give your Subsidies", "Give crowns", "Ask Seat 2 for crowns"]
    p = GAME.action_prompt(s, JAC, ["propose", HEN, "give-crowns"])
    assert p is not None and p.ask is not None and p.ask.number is not None
    assert (p.ask.number.min, p.ask.number.max) == (1, 7)
    p = GAME.action_prompt(s, JAC, ["propose", HEN, "give-crowns", 6, "get-item:HO6", "give-special:ST1"])
    assert p is not None and p.order == {"do": "propose", "to": HEN,
                                         "give": {"items": [], "specials": ["ST1"], "crowns": 6},
                                         "get": {"items": ["HO6"], "specials": 0, "crowns": 0}}
    assert p.sentence == "Propose to Seat 2: you give Steal an Item, 6 crowns; Seat 2 gives Horses."
    p = GAME.action_prompt(s, JAC, ["propose", HEN, "give-crowns", 6, "get-item:HO6", "give-special:ST1", "send"])
    assert p is not None and p.ask is None
    s2, _ = GAME.act(s, JAC, p.order, {})  # type: ignore[arg-type]
    # now Jack may withdraw it, and Henry may accept or reject it
    assert labels(GAME.action_prompt(s2, JAC, [])) == [  # type: ignore[arg-type]
        "Play Subsidies (the bank pays you 5 crowns)", "Cast Divination Spell (see an opponent's special cards)",
        "Withdraw your proposal to Seat 2"]
    p = GAME.action_prompt(s2, HEN, [])
    assert p is not None and labels(p) == ["Propose a transfer", "Accept Seat 3's proposal", "Reject Seat 3's proposal"]
    assert p.ask is not None and p.ask.options[1].hint == "Seat 3 gives Steal an Item, 6 crowns; Seat 2 (you) gives " \
                                                          "Horses"
    assert GAME.action_prompt(s2, HEN, ["accept-3"]).order == {  # type: ignore[union-attr]
        "do": "accept", "from": JAC, "specials": []}
    # Christopher sees nothing of Jack's special in his own prompt
    p = GAME.action_prompt(s2, CHR, [])
    assert p is not None and labels(p) == ["Propose a transfer"]
    # nothing to do: no instant held and transfers off
    assert GAME.action_prompt(table(4, MIR), CHR, []) is None
