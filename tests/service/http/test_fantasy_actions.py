"""Fantasy Business's actions at any time through the service (FD12, V4): a seat that is not
asked finds them in its phase (`you.actions`), says one in words to the choices route,
and sends it signed to the actions route; the other seats see it at once; a refusal is
the sender's alone and changes nothing."""

from __future__ import annotations

import time
import uuid
from typing import Any

from tests.service.conftest import Player, footprint, new_game, problem


def action_token(p: Player, action: Any) -> str:
    return p.key.sign({"game": p.game, "seat": p.seat, "iat": int(time.time()), "jti": uuid.uuid4().hex,
                       "action": action})


def act(client: Any, p: Player, action: Any) -> Any:
    return client.post(f"/games/{p.game}/seats/{p.seat}/actions", json={"token": action_token(p, action)})


def say(client: Any, p: Player, words: str) -> dict[str, Any]:
    r = client.post(f"/games/{p.game}/seats/{p.seat}/choices", json={"of": "action", "words": words},
                    headers=p.bearer())
    assert r.status_code == 200, r.json
    return dict(r.json["prompt"])


def actions_of(client: Any, p: Player) -> list[str]:
    ph = client.get(f"/games/{p.game}/phases/current", headers=p.bearer()).json
    return [o["label"] for o in (ph["you"]["actions"] or {"ask": {"options": []}})["ask"]["options"]]


def test_v4_a_seat_not_asked_proposes_and_withdraws_a_transfer_in_words(client: Any, kontor: Any) -> None:
    _, players = new_game(client, 3, title="fantasy", options={"trading": True})
    ph = client.get(f"/games/{players[0].game}/phases/current", headers=players[0].bearer()).json
    idle = [p for p in players if p.seat not in ph["requested"]]
    sender, other = idle[-1], idle[0]
    assert actions_of(client, sender) == ["Propose a transfer"]
    prompt = say(client, sender, f"propose\nP{other.seat}\ngive crowns\n5\nsend")
    assert prompt["complete"] and prompt["sentence"] == f"Propose to P{other.seat}: you give 5 crowns; " \
                                                        f"P{other.seat} gives nothing."
    r = act(client, sender, prompt["order"])
    assert r.status_code == 200, r.json
    assert any("propos" in e["text"] for e in r.json["events"])
    # the recipient may answer it at once, by name; the open step is unchanged
    assert f"Accept P{sender.seat}'s proposal" in actions_of(client, other)
    after = client.get(f"/games/{sender.game}/phases/current", headers=sender.bearer()).json
    assert (after["id"], after["requested"]) == (ph["id"], ph["requested"])
    # withdrawn in words: the recipient can no longer accept it
    prompt = say(client, sender, "withdraw")
    assert prompt["complete"] and prompt["order"] == {"do": "withdraw"}
    assert act(client, sender, prompt["order"]).status_code == 200
    assert not any(label.startswith("Accept") for label in actions_of(client, other))
    # accepting what is gone is refused, privately, and changes nothing
    before = footprint(kontor, sender.game)
    problem(act(client, other, {"do": "accept", "from": sender.seat, "specials": []}), 422, "no_proposal")
    assert footprint(kontor, sender.game) == before


def test_fd12_an_instant_without_the_card_is_refused_and_changes_nothing(client: Any, kontor: Any) -> None:
    _, players = new_game(client, 3, title="fantasy")
    p = players[2]
    before = footprint(kontor, p.game)
    r = act(client, p, {"do": "play", "card": "SU1"})
    assert r.status_code in (409, 422) and r.json["code"] in ("no_such_card", "no_action"), r.json
    assert footprint(kontor, p.game) == before
    # nothing to do unprompted without an instant card or the trading variant
    r = client.post(f"/games/{p.game}/seats/{p.seat}/choices", json={"of": "action"}, headers=p.bearer())
    problem(r, 409, "no_action")
