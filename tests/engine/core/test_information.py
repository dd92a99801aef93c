"""The declared information structure and the one stripper (engine.core.info)."""

from __future__ import annotations

import pytest

from engine.core.info import NEVER, PUBLIC, Derived, Fields, Information, Own, Seats, Secret, owner_fields, strip
from tests.engine.core.toytitle import GAME

INFO = Information({
    "round": PUBLIC,
    "rng": NEVER,
    "deck": Secret(count_as="deck_size"),
    "order": Secret(count_as="order_left", count="len", reveal_at_end=False),
    "label": Derived(lambda s: f"round {s['round']}"),
    "players": Seats(Fields({"money": Own(), "hand": Own(count_as="hand_size"), "level": PUBLIC,
                             "peek": Own(shown_to=lambda s, owner: [s["peeker"]] if s["peeker"] is not None else [])})),
    "sheets": Seats(Own()),
    "meta": Fields({"shown": PUBLIC}),
    "peeker": PUBLIC,
})  # fmt: skip


def state(over: bool = False, peeker: int | None = None) -> dict:
    return {
        "round": 2, "rng": 12345, "over": over, "peeker": peeker,
        "deck": {"a": 2, "b": 1}, "order": [3, 1, 2],
        "players": [{"money": 100, "hand": {"x": 2}, "level": 1, "peek": "p0", "undeclared": "LEAK"},
                    {"money": 200, "hand": {"y": 1}, "level": 3, "peek": "p1"}],
        "sheets": {"0": {"price": 5}, "1": {"price": 7}},
        "meta": {"shown": 1, "hidden_nested": "LEAK"},
        "undeclared_top": "LEAK",
    }  # fmt: skip


def test_a_seat_sees_its_own_parts_and_the_public_ones_only() -> None:
    v = strip(INFO, state(), 0)
    assert v["players"][0] == {"money": 100, "hand": {"x": 2}, "hand_size": 2, "level": 1, "peek": "p0"}
    assert v["players"][1] == {"hand_size": 1, "level": 3}
    assert v["sheets"] == {"0": {"price": 5}, "1": None}
    assert v["deck_size"] == 3 and "deck" not in v
    assert v["order_left"] == 3 and "order" not in v
    assert v["label"] == "round 2" and v["round"] == 2 and v["meta"] == {"shown": 1}


def test_undeclared_keys_never_leave_at_any_level_for_any_viewer() -> None:
    for viewer in (0, 1, "public", "admin"):
        for over in (False, True):
            text = repr(strip(INFO, state(over=over), viewer))
            assert "LEAK" not in text and "undeclared" not in text and "12345" not in text, (viewer, over)


def test_the_public_sees_no_seat_part() -> None:
    v = strip(INFO, state(), "public")
    assert v["players"] == [{"hand_size": 2, "level": 1}, {"hand_size": 1, "level": 3}]
    assert v["sheets"] == {"0": None, "1": None}


def test_the_admin_sees_all_but_never_parts() -> None:
    v = strip(INFO, state(), "admin")
    assert v["deck"] == {"a": 2, "b": 1} and v["order"] == [3, 1, 2]
    assert v["players"][1]["money"] == 200 and "rng" not in v


def test_at_the_end_own_and_revealable_secrets_open_but_not_never_or_unrevealed() -> None:
    v = strip(INFO, state(over=True), "public")
    assert v["players"][1]["money"] == 200 and v["deck"] == {"a": 2, "b": 1}
    assert "order" not in v and "rng" not in v


def test_a_grant_shows_one_seats_part_to_one_other_seat_only() -> None:
    s = state(peeker=1)
    assert strip(INFO, s, 1)["players"][0]["peek"] == "p0"
    assert "peek" not in strip(INFO, s, "public")["players"][0]
    assert "money" not in strip(INFO, s, 1)["players"][0]


def test_views_share_nothing_with_the_state() -> None:
    s = state()
    v = strip(INFO, s, 0)
    v["players"][0]["hand"]["x"] = 99
    v["meta"]["shown"] = 99
    assert s["players"][0]["hand"] == {"x": 2} and s["meta"]["shown"] == 1


def test_hidden_paths_list_every_owned_and_secret_value_with_its_owner() -> None:
    found = {(h.path, h.owner) for h in INFO.hidden_paths(state())}
    assert found == {
        (("deck",), None), (("order",), None),
        (("players", 0, "money"), 0), (("players", 0, "hand"), 0), (("players", 0, "peek"), 0),
        (("players", 1, "money"), 1), (("players", 1, "hand"), 1), (("players", 1, "peek"), 1),
        (("sheets", "0"), 0), (("sheets", "1"), 1),
    }  # fmt: skip
    peek = next(h for h in INFO.hidden_paths(state(peeker=1)) if h.path == ("players", 0, "peek"))
    assert INFO.may_see(peek, state(peeker=1), 1) and not INFO.may_see(peek, state(peeker=1), "public")


def test_a_declaration_is_checked_when_made() -> None:
    with pytest.raises(TypeError, match="inside Seats"):
        Information({"money": Own()})
    with pytest.raises(TypeError, match="count"):
        Information({"deck": Secret(count="avg")})
    with pytest.raises(TypeError, match="not an information part"):
        Information({"x": "public"})  # type: ignore[dict-item]


def test_owner_fields_names_the_seat_owned_fields() -> None:
    assert owner_fields(INFO) == {"players": ["money", "hand", "peek"]}


def test_a_title_view_is_the_stripper_over_its_declaration_plus_the_commitment() -> None:
    s = GAME.setup(2, None, 9)
    assert GAME.view(s, 0) == {**strip(GAME.information, s, 0), "commitment": s["commitment"]}
    assert "targets" not in GAME.view(s, 1) and GAME.view(s, 1)["targets_left"] == 3
