"""Setup (§6) and randomness (§5): S1–S7, RNG1–RNG7, AD10, AD14, R1, R12, R14, AA-1."""

from __future__ import annotations

import hashlib

from engine.aufachse.context import ctx_of
from engine.aufachse.dice import roll_log
from engine.core.bots import play_game
from engine.core.seed import commitment, state_digest
from engine.core.stream import die, new_stream, words
from engine.core.verify import record, verify_history
from tests.engine.aufachse.helpers import AA1_SEED, BLUE, GAME, GREEN, RED, YELLOW, new_game, step


def test_aa_1_rng3_rng4_rng5_rng6_the_full_setup_vector() -> None:
    s = new_game(4, AA1_SEED)
    assert s["commitment"] == "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
    ws, _ = words(new_stream(AA1_SEED), 4)
    assert ws == [0x70F4003D, 0x52B6EB03, 0xDA852E93, 0x256B5986]
    st, rolls = new_stream(AA1_SEED), []
    for _ in range(10):
        v, st = die(st)
        rolls.append(v)
    assert rolls == [4, 2, 2, 5, 5, 6, 5, 3, 3, 1]
    assert s["first"] == YELLOW
    hands = {seat: s["players"][seat]["hand"] for seat in range(4)}
    assert hands == {YELLOW: ["O05", "O37", "O45"], BLUE: ["O15", "O29", "O16"], GREEN: ["O34", "O33", "O25"],
                     RED: ["O40", "O51", "O39"]}
    assert s["display"] == ["O14", "O24", "O12", "O48"]
    assert s["deck"] == ["O28", "O18", "O49", "O23", "O42", "O41", "O44", "O35", "O47", "O19", "O52", "O04",
                         "O20", "O22", "O54", "O09"]
    assert s["reserve"][:3] == ["O27", "O30", "O53"] and s["reserve"][-1] == "O50" and len(s["reserve"]) == 22
    assert s["events"][:3] == ["E13", "E09", "E04"]
    # placements draw nothing; then the first roll is 1, 4 and the second 6, 2
    while len(roll_log(s)) < 2:
        seat = s["pending"]["seat"]
        s, _ = step(s, seat, GAME.default_order(s, seat))
    assert [r[2:] for r in roll_log(s)[:2]] == [[1, 4], [6, 2]]
    assert roll_log(s)[0][1] == YELLOW


def test_rng1_rng2_r1_the_commitment_is_sha256_of_the_seed_and_public() -> None:
    s = new_game(3, AA1_SEED)
    assert s["commitment"] == hashlib.sha256(bytes(range(32))).hexdigest() == commitment(AA1_SEED)
    view = GAME.view(s, "public")
    assert view["commitment"] == s["commitment"]
    assert view["data"]["id"] == "auf-achse-substitute-v1" and set(view["data"]["hashes"]) >= {"orders", "edges"}


def test_rng7_r14_seed_and_stream_never_shown_hands_open_at_the_end() -> None:
    s = new_game(2, AA1_SEED)
    for viewer in (0, 1, "public", "admin"):
        assert "rng" not in GAME.view(s, viewer)
    assert "hand" not in GAME.view(s, "public")["players"][0]
    assert GAME.view(s, 1)["players"][0].get("hand") is None and GAME.view(s, 1)["players"][0]["hand_size"] == 3
    assert "deck" not in GAME.view(s, 0) and GAME.view(s, 0)["deck_size"] == 8
    s["over"] = True
    v = GAME.view(s, "public")
    assert v["players"][0]["hand"] and v["deck"] == s["deck"] and "rng" not in v


def test_ad14_rng6_first_player_and_shuffles_come_from_the_seed_only() -> None:
    a, b = new_game(5, "x"), new_game(5, "x")
    assert a == b
    c = new_game(5, "y")
    assert (c["first"], c["players"][0]["hand"]) != (a["first"], a["players"][0]["hand"]) or c["deck"] != a["deck"]
    # the stream is consumed by exactly: draw(n), two shuffles (each draw reads 4 bytes unless rejected)
    assert a["rng"]["used"] >= 4 * (1 + 53 + 27)


def test_s1_s5_r12_start_cash_trucks_decks_and_supply() -> None:
    for n, pile in ((2, 12), (3, 16), (4, 20), (5, 24), (6, 24)):
        s = new_game(n, 3)
        assert all(p["cash"] == 5000 and p["trailers"] == {"small": 0, "large": 0} for p in s["players"])
        assert len(s["display"]) == 4 and len(s["deck"]) == pile - 4
        assert len(s["reserve"]) == 54 - 3 * n - pile
        assert s["supply"] == {"small": 4, "large": 4}
        assert s["roadworks"] is None and s["jam"] is None and len(s["events"]) == 28


def test_s2_s3_s4_dealing_clockwise_from_the_first_player() -> None:
    s = new_game(3, 11)
    ctx = ctx_of(s)
    from engine.aufachse.dice import setup_draws

    first, shuffled, events, _ = setup_draws(ctx, 3, 11)
    assert s["first"] == first
    for k in range(3):
        assert s["players"][(first + k) % 3]["hand"] == shuffled[3 * k:3 * k + 3]
    assert s["display"] == shuffled[9:13] and s["deck"] == shuffled[13:25] and s["reserve"] == shuffled[25:]
    assert s["events"] == events


def test_s6_ad10_r28_placement_in_seat_order_anywhere_at_most_two_per_road_space() -> None:
    s = new_game(4, AA1_SEED)
    order = []
    for space in ("R3.2", "R3.2", "Hannover"):
        seat = s["pending"]["seat"]
        order.append(seat)
        s, ev = step(s, seat, {"space": space})
        assert ev[0]["type"] == "placed"
    assert order == [1, 2, 3]
    from tests.engine.aufachse.helpers import illegal

    illegal(s, 0, {"space": "R3.2"}, "space_full")
    illegal(s, 0, {"space": "Nowhere"}, "no_such_space")
    s, _ = step(s, 0, {"space": "R17.2"})  # an event space: placing draws nothing
    assert len(s["events"]) == 28


def test_s7_t2_after_placement_the_first_player_rolls_and_moves() -> None:
    s = new_game(2, 5)
    for _ in range(2):
        s, _ = step(s, s["pending"]["seat"], GAME.default_order(s, s["pending"]["seat"]))
    assert s["phase"] == "play" and s["turn"] == s["first"]
    assert s["dice"] and roll_log(s)[0][1] == s["first"]
    assert s["pending"]["kind"] == "move" or s["pending"] is None or roll_log(s)


def test_rng6_verify_a_finished_game_and_every_roll_is_logged() -> None:
    bots = GAME.bots()
    steps = []
    out = play_game(GAME, 3, {i: bots["planner"](f"v{i}") for i in range(3)}, "verify-1",
                    on_step=lambda s, o, e: steps.append({"orders": o, "state_sha256": state_digest(s), "events": e}))
    doc = record("aufachse", 3, {}, "verify-1", steps, GAME.result(out.state))
    report = verify_history(doc)
    assert report.ok, report.problems
    # tampering with one recorded roll's state shows
    doc["steps"][5]["state_sha256"] = "0" * 64
    assert not verify_history(doc).ok
    assert all(len(r) == 4 and 1 <= r[2] <= 6 and 1 <= r[3] <= 6 for r in roll_log(out.state))
