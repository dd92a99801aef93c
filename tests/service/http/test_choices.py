"""`POST /games/{id}/seats/{seat}/choices` and `you.prompt` / `you.actions` in the seat's
phase, with the test title Stall (tests/service/stall.py): happy paths, words read by the
server, every problem code, auth (bearer, mail link capability), and nothing changed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from service.channels.links import page_cap
from tests.service.conftest import Player, footprint, new_game, problem
from tests.service.stall import registered

# The tests whose requests reach the store's scripts run also with the store on a Valkey
# Cluster and the queue on a Valkey of its own (issue 24, marker `cluster`); the refusals of
# a malformed body are made before the store is asked.


@pytest.fixture(autouse=True)
def stall() -> Iterator[Any]:
    with registered() as game:
        yield game


def choices(client: Any, p: Player, body: dict[str, Any], seat: int | None = None, **kw: Any) -> Any:
    return client.post(f"/games/{p.game}/seats/{p.seat if seat is None else seat}/choices", json=body,
                       headers=kw.get("headers", p.bearer()))


@pytest.mark.cluster
def test_first_level_then_complete(client: Any) -> None:
    _, (a, b) = new_game(client, 2, title="stall")
    r = choices(client, a, {})
    assert r.status_code == 200, r.json
    assert r.json["step"] == 1 and r.json["kind"] == "buy"
    p = r.json["prompt"]
    assert p["say"] == "Buy 1 to 3 of a good, or pass."
    assert [(o["value"], o["label"], o.get("place")) for o in p["ask"]["options"]] == [
        ("wein", "Wein", "good-wein"), ("tuch", "Tuch", "good-tuch"), ("pass", "Pass", None)]
    assert p["complete"] is False and p["order"] is None
    r = choices(client, a, {"picks": ["tuch"]})
    assert r.json["prompt"]["ask"]["number"] == {"label": "How many", "min": 1, "max": 2, "step": 1,
                                                 "bounds": "a whole number from 1 to 2"}
    assert r.json["prompt"]["sentence"] == "Buy Tuch"
    r = choices(client, a, {"picks": ["tuch", 2]})
    assert r.json["prompt"]["complete"] is True
    assert r.json["prompt"]["order"] == {"buy": "tuch", "count": 2}
    assert r.json["prompt"]["chosen"] == ["Tuch", "2"]
    assert r.json["prompt"]["sentence"] == "Buy 2 Tuch"


@pytest.mark.cluster
def test_words_read_by_the_server(client: Any) -> None:
    _, (a, b) = new_game(client, 2, title="stall")
    r = choices(client, a, {"words": "2 WEIN please"})
    assert r.status_code == 200, r.json
    assert r.json["prompt"]["order"] == {"buy": "wein", "count": 2}
    r = choices(client, a, {"picks": ["wein"], "words": "3"})
    assert r.json["prompt"]["order"] == {"buy": "wein", "count": 3}
    r = choices(client, a, {"words": "nothing"})
    assert r.json["prompt"]["order"] == {"pass": True}
    r = choices(client, a, {"words": "2"})  # an option's number
    assert r.json["prompt"]["picks"] == ["tuch"]


@pytest.mark.cluster
def test_actions_first_level_for_a_seat_not_asked(client: Any) -> None:
    _, (a, b) = new_game(client, 2, title="stall")
    r = choices(client, b, {"of": "action"})
    assert r.status_code == 200, r.json
    assert r.json["kind"] is None
    assert [o["label"] for o in r.json["prompt"]["ask"]["options"]] == ["Hoard 1 Wein", "Hoard 1 Tuch"]
    r = choices(client, b, {"of": "action", "words": "tuch"})
    assert r.json["prompt"]["order"] == {"hoard": "tuch"}
    assert r.json["prompt"]["sentence"] == "Hoard 1 Tuch for 2 coins"


@pytest.mark.cluster
def test_phase_carries_prompt_and_actions(client: Any) -> None:
    _, (a, b) = new_game(client, 2, title="stall")
    r = client.get(f"/games/{a.game}/phases/current", headers=a.bearer())
    you = r.json["you"]
    assert you["prompt"]["ask"]["key"] == "good" and you["prompt"]["picks"] == []
    assert you["actions"]["ask"]["key"] == "hoard"
    r = client.get(f"/games/{b.game}/phases/current", headers=b.bearer())
    assert r.json["you"]["requested"] is False
    assert r.json["you"]["prompt"] is None
    assert r.json["you"]["actions"]["ask"]["key"] == "hoard"
    public = client.get(f"/games/{b.game}/phases/current")
    assert public.json["you"] is None


@pytest.mark.cluster
def test_a_title_without_words_has_null_prompts(client: Any) -> None:
    from engine.core import registry
    from tests.engine.core.toytitle import GAME as GUESS

    registry.register(GUESS)
    try:
        _, (a, b) = new_game(client, 2, title="guess")
        r = client.get(f"/games/{a.game}/phases/current", headers=a.bearer())
        assert r.json["you"]["requested"] is True
        assert (r.json["you"]["prompt"], r.json["you"]["actions"]) == (None, None)
        problem(choices(client, a, {}), 409, "no_choices")
        problem(choices(client, a, {"of": "action"}), 409, "no_action")
    finally:
        registry._TITLES.pop("guess", None)


@pytest.mark.parametrize(("body", "status", "code"), [
    ({"picks": ["beer"]}, 422, "bad_pick"),
    ({"picks": ["wein", 4]}, 422, "bad_pick"),
    ({"picks": ["wein", "2"]}, 422, "bad_pick"),
    ({"picks": ["pass", "wein"]}, 422, "bad_pick"),
    ({"words": "a pint of beer"}, 422, "bad_pick"),
    ({"picks": "wein"}, 422, "invalid_request"),
    ({"picks": [True]}, 422, "invalid_request"),
    ({"picks": [1.0]}, 422, "invalid_request"),
    ({"picks": [["wein"]]}, 422, "invalid_request"),
    ({"picks": [{"a": {"b": 1}}]}, 422, "invalid_request"),
    ({"picks": ["x" * 201]}, 422, "invalid_request"),
    ({"picks": ["wein"] * 65}, 422, "invalid_request"),
    ({"words": "x" * 2001}, 422, "invalid_request"),
    ({"words": ""}, 422, "invalid_request"),
    ({"of": "orders"}, 422, "invalid_request"),
    ({"extra": 1}, 422, "invalid_request"),
])
def test_bad_input(client: Any, kontor: Any, body: dict[str, Any], status: int, code: str) -> None:
    _, (a, b) = new_game(client, 2, title="stall")
    before = footprint(kontor, a.game)
    problem(choices(client, a, body), status, code)
    assert footprint(kontor, a.game) == before


@pytest.mark.cluster
def test_not_your_turn_and_too_deep(client: Any) -> None:
    _, (a, b) = new_game(client, 2, title="stall")
    problem(choices(client, b, {}), 409, "not_your_turn")
    deep: Any = 1
    for _ in range(40):
        deep = [deep]
    r = client.post(f"/games/{a.game}/seats/0/choices", json={"picks": deep}, headers=a.bearer())
    problem(r, 400, "too_deep")


@pytest.mark.cluster
def test_auth(client: Any) -> None:
    host, (a, b) = new_game(client, 2, title="stall")
    problem(choices(client, a, {}, headers={}), 401, "authentication_required")
    problem(choices(client, b, {}, seat=0), 403, "wrong_seat")
    problem(choices(client, host, {}, seat=0), 403, "wrong_seat")
    problem(choices(client, a, {}, seat=7), 403, "wrong_seat")
    r = client.post("/games/nope/seats/0/choices", json={}, headers=a.bearer(game="nope"))
    problem(r, 404, "game_not_found")


@pytest.mark.cluster
def test_mail_link_capability(client: Any, kontor: Any) -> None:
    _, (a, b) = new_game(client, 2, title="stall", mail_orders="reply_address")
    cap = page_cap(kontor, a.game, 1, 0)
    r = choices(client, a, {"cap": cap, "picks": ["wein"]}, headers={})
    assert r.status_code == 200, r.json
    assert r.json["prompt"]["ask"]["key"] == "count"
    problem(choices(client, a, {"cap": page_cap(kontor, a.game, 2, 0)}, headers={}), 401, "bad_page_link")
    problem(choices(client, b, {"cap": cap}, headers={}), 401, "bad_page_link")  # seat 0's cap for seat 1
    problem(choices(client, a, {"cap": "x" * 26}, headers={}), 401, "bad_page_link")


@pytest.mark.cluster
def test_lobby_and_finished(client: Any, kontor: Any, worker: Any) -> None:
    host = Player.new()
    r = client.post("/games", json={"title": "stall", "seats": 2, "host_key": host.key.public},
                    headers={"Idempotency-Key": "lobby-choices"})
    gid = r.json["id"]
    p = Player.new()
    r = client.post(f"/games/{gid}/seats", json={"name": "Ada", "public_key": p.key.public},
                    headers={"Idempotency-Key": "join-choices"})
    p.game, p.seat = gid, 0
    problem(choices(client, p, {}), 409, "game_not_started")
