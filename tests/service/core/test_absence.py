"""Absences (issue 25, Deliver 2): a seat declares dates away; in `extend` mode a deadline
that falls in the absence moves to its end plus the step's length (capped by the
policy's limit); in `bot` mode a bot plays the away seat (`via="absence"`); afterwards
the seat alone is told, once, what was played for it (the job at the absence's end, or
the sweep when the job is lost). Bad input is refused and stores nothing; the host's
policy change is refused while someone is away.

Times are whole seconds on the store's clock: an absence "from now" is cut to now, and
a test moves the step's deadline a second ahead (`Store.move_deadline`) rather than
waiting a day."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any

import pytest

import service.jobs.tasks
from service import words
from service.core.errors import Problem
from service.core.kontor import Kontor
from service.jobs.sweep import sweep
from tests.playertext import problems
from tests.service.conftest import Player, create_game, default_step, domain_game, join, problem, start, wait_until


def at(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def away(kontor: Kontor, gid: str, seat: int, seconds: int, start: float | None = None) -> dict[str, Any]:
    """Declare seat `seat` away from now (or `start`) for `seconds`."""
    now = kontor.now()
    return kontor.set_absences(gid, seat, [{"from": at(now if start is None else start),
                                            "until": at(int(now) + seconds)}])


def said(kontor: Kontor, gid: str, ev: dict[str, Any]) -> str:
    """An event's words, as every channel says them."""
    names = [n.replace("P", "Player ") for n in kontor.names(gid, kontor.store.meta(gid))]  # "P1" reads as a rule
    text = words.describe(None, ev, names)
    assert text is not None
    return text


def asked_seat(kontor: Kontor, gid: str) -> tuple[int, int]:
    ph = kontor.store.phase(gid)
    return int(ph["id"]), json.loads(ph["expected"])[0]


def due_soon(kontor: Kontor, gid: str, phase: int, seconds: float = 1.0) -> float:
    """Move the open step's deadline to `seconds` from now and wait until it has passed."""
    due = kontor.now() + seconds
    assert kontor.store.move_deadline(gid, phase, due).status == "moved"
    wait_until(lambda: kontor.now() > due, timeout=10)
    return due


def test_absence_extend_moves_the_deadline_to_the_absence_end_plus_the_step_length(kontor: Kontor) -> None:
    gid, _ = domain_game(kontor, 4, deadlines={"sequential_seconds": 600, "sealed_seconds": 600,
                                               "absence_limit_seconds": 7200})
    phase, seat = asked_seat(kontor, gid)
    answer = away(kontor, gid, seat, 1800)
    assert answer["away"] is True and len(answer["absences"]) == 1
    until = int(datetime.fromisoformat(answer["absences"][0]["until"]).timestamp())
    base = due_soon(kontor, gid, phase)
    assert kontor.deadline(gid, phase) == "extended"
    ph = kontor.store.phase(gid)
    assert ph["status"] == "collecting"
    assert float(ph["deadline"]) == pytest.approx(until + 600, abs=1e-6)  # the absence's end + the step's length
    assert float(ph["absence_base"]) == pytest.approx(base, abs=1e-5)
    assert int(ph["absence_extended"]) == int(until + 600 - base)
    ev = [e for e in kontor.events(gid, "public", 0, 500)["items"] if e["type"] == "deadline_extended"]
    assert len(ev) == 1 and ev[0]["reason"] == "absence" and ev[0]["seat"] == seat
    text = said(kontor, gid, ev[0])
    assert f"because Player {seat} is away until" in text and not problems(text)
    # A second check before the new deadline changes nothing.
    assert kontor.deadline(gid, phase) == "early"
    # The public sees the absence in the players list.
    assert kontor.game(gid)["players"][seat]["absences"] == answer["absences"]


def test_absence_extend_is_capped_by_the_policy_limit_and_then_defaults(kontor: Kontor, worker: Any) -> None:
    gid, _ = domain_game(kontor, 4, deadlines={"sequential_seconds": 600, "sealed_seconds": 600,
                                               "absence_limit_seconds": 2})
    phase, seat = asked_seat(kontor, gid)
    away(kontor, gid, seat, 3600)
    base = due_soon(kontor, gid, phase)
    assert kontor.deadline(gid, phase) == "extended"
    ph = kontor.store.phase(gid)
    assert float(ph["deadline"]) == pytest.approx(base + 2, abs=1e-5)  # at most the limit past the deadline
    moved = [e for e in kontor.events(gid, "public", 0, 500)["items"] if e["type"] == "deadline_extended"]
    assert moved[-1]["capped"] is True
    assert "(as far as the game's limit for absences allows; then the default is played)." in said(kontor, gid,
                                                                                                 moved[-1])
    wait_until(lambda: kontor.now() > base + 2, timeout=10)
    # The limit is reached: the deadline passes as it would, with the default, still in the absence.
    assert kontor.deadline(gid, phase) == "trigger"
    worker()
    assert int(kontor.store.phase(gid)["id"]) == phase + 1
    mine = kontor.events(gid, seat, 0, 500)["items"]
    played = [e for e in mine if e["type"] == "absence_played"]
    assert len(played) == 1 and played[0]["by"] == "default" and played[0]["phase"] == phase
    others = kontor.events(gid, (seat + 1) % 4, 0, 500)["items"]
    assert not [e for e in others if e["type"] == "absence_played"]  # private to the seat


def test_absence_a_seat_that_answered_is_not_waited_for(kontor: Kontor, worker: Any) -> None:
    gid, _ = domain_game(kontor, 4, deadlines={"sequential_seconds": 600, "sealed_seconds": 600})
    phase, seat = asked_seat(kontor, gid)
    away(kontor, gid, seat, 3600)
    meta, _, state = kontor.store.snapshot(gid)
    game = kontor._title(meta["title"])
    order = game.default_order(state, seat)
    kontor.submit(gid, phase, seat, order, via="test")  # the last answer flips the step at once
    worker()
    assert int(kontor.store.phase(gid)["id"]) == phase + 1
    # A sealed step where the away seat answered and another did not: no extension.
    for _ in range(20):
        if kontor.store.phase(gid).get("sealed") == "1":
            break
        default_step(kontor, gid)
        worker()
    phase = int(kontor.store.phase(gid)["id"])
    state = kontor.store.state(gid)
    kontor.submit(gid, phase, seat, game.default_order(state, seat), via="test")
    due_soon(kontor, gid, phase)
    assert kontor.deadline(gid, phase) == "trigger"
    assert not [e for e in kontor.events(gid, "public", 0, 500)["items"] if e["type"] == "deadline_extended"]


def test_absence_bot_mode_plays_the_away_seat_via_absence_and_the_game_moves_on(kontor: Kontor,
                                                                                  worker: Any) -> None:
    gid, _ = domain_game(kontor, 4, deadlines={"sequential_seconds": 600, "sealed_seconds": 600,
                                               "absence": "bot", "absence_bot": "greedy"})
    assert kontor.game(gid)["deadlines"]["absence_bot"] == "greedy"
    phase, seat = asked_seat(kontor, gid)
    away(kontor, gid, seat, 3600)  # asked and away from now: its bot job is planned at once
    worker()
    assert int(kontor.store.phase(gid)["id"]) > phase  # the bot answered and the step resolved
    assert kontor.store.seats(gid)[seat]["bot"] is None  # the seat stays the player's
    played = [e for e in kontor.events(gid, seat, 0, 500)["items"] if e["type"] == "absence_played"]
    assert played and played[0]["by"] == "bot" and played[0]["bot"] == "greedy" and played[0]["phase"] == phase
    assert not problems(said(kontor, gid, played[0]))
    # The seat's later decisions open while it is away: planned when each step opens.
    for _ in range(12):
        ph = kontor.store.phase(gid)
        if seat in json.loads(ph["expected"]) and ph["status"] == "collecting" and int(ph["id"]) > phase:
            break
        default_step(kontor, gid)
        worker()
    worker()
    again = [e for e in kontor.events(gid, seat, 0, 500)["items"] if e["type"] == "absence_played"]
    assert len(again) >= 2
    stored = [h for h in kontor.store.history(gid) if h["phase"] == phase]
    assert stored and str(seat) in stored[0]["orders"]


def test_absence_bot_mode_plays_a_decision_that_reaches_its_deadline(kontor: Kontor, worker: Any) -> None:
    gid, _ = domain_game(kontor, 4, deadlines={"sequential_seconds": 600, "sealed_seconds": 600,
                                               "absence": "bot"})
    phase, seat = asked_seat(kontor, gid)
    # Declared before the step's deadline but not covering "now" when it was planned:
    # the job planned at once is dropped (as if lost); the deadline check plays the bot.
    away(kontor, gid, seat, 3600)
    kontor.jobs.queues["resolve"].empty()
    due_soon(kontor, gid, phase)
    kontor.deadline(gid, phase)
    worker()
    assert int(kontor.store.phase(gid)["id"]) > phase
    mine = [e for e in kontor.events(gid, seat, 0, 500)["items"] if e["type"] == "absence_played"]
    assert mine and mine[0]["by"] == "bot" and mine[0]["bot"] == "greedy"


@pytest.mark.cluster  # also with the store on a Valkey Cluster: the schedule's buckets, the told-once script
def test_absence_summary_reaches_only_that_seat_once_after_the_absence_even_with_the_job_lost(
        kontor: Kontor, worker: Any) -> None:
    gid, _ = domain_game(kontor, 4, deadlines={"sequential_seconds": 600, "sealed_seconds": 600,
                                               "absence": "bot", "absence_bot": "greedy"})
    phase, seat = asked_seat(kontor, gid)
    away(kontor, gid, seat, 3)
    worker()  # the bot plays; the absence's end job is scheduled, not run
    assert int(kontor.store.phase(gid)["id"]) > phase
    assert not [e for e in kontor.events(gid, seat, 0, 500)["items"] if e["type"] == "absence_summary"]
    # The job at its end is lost (its scheduled entry is dropped): the sweep tells it.
    reg = kontor.jobs.queues["notify"].scheduled_job_registry
    lost = [j for j in reg.get_job_ids() if j.startswith(f"absence-{gid}-{seat}-")]
    assert lost
    for job_id in lost:
        reg.remove(job_id, delete_job=True)
    sweep(kontor)
    assert not [e for e in kontor.events(gid, seat, 0, 500)["items"] if e["type"] == "absence_summary"]  # not yet
    wait_until(lambda: sweep(kontor)["absences_told"] == 1, timeout=10)
    mine = [e for e in kontor.events(gid, seat, 0, 500)["items"] if e["type"] == "absence_summary"]
    assert len(mine) == 1
    text = said(kontor, gid, mine[0])
    assert text.startswith("While you were away (")
    assert text.endswith(f"): in step {phase} the greedy bot played for you: Buy 1 Tuch in Paris, 1 Wein in Paris "
                         "and 1 Salz in Köln for 300."), text  # the title's describe_order
    assert not problems(text)
    for other in {0, 1, 2, 3} - {seat}:
        assert not [e for e in kontor.events(gid, other, 0, 500)["items"] if e["type"] == "absence_summary"]
    assert not [e for e in kontor.events(gid, "public", 0, 500)["items"] if e["type"] == "absence_summary"]
    # Told once: the sweep again, and the end job should it run after all, tell nothing more.
    assert sweep(kontor)["absences_told"] == 0
    assert service.jobs.tasks.absence_end(gid, seat) == 0
    assert kontor.absence_end(gid, seat) == 0
    assert len([e for e in kontor.events(gid, seat, 0, 500)["items"] if e["type"] == "absence_summary"]) == 1
    assert kontor.store.seat_absences(gid, seat)[0] == []


def test_absence_policy_change_refused_while_someone_is_away(client: Any, kontor: Kontor) -> None:
    host = Player.new()
    gid = create_game(client, host, 3, deadlines={"sequential_seconds": 600, "sealed_seconds": 600})["id"]
    players = [Player.new() for _ in range(3)]
    for seat, p in enumerate(players):
        join(client, gid, p, f"P{seat}", seat)
    start(client, host)
    game = client.get(f"/games/{gid}").json
    assert game["deadlines"]["absence"] == "extend" and game["deadlines"]["absence_bot"] == "greedy"
    now = kontor.now()
    r = client.put(f"/games/{gid}/seats/1/absences", headers=players[1].bearer(),
                   json={"absences": [{"from": at(now), "until": at(now + 3600)}]})
    assert r.status_code == 200, r.json
    assert r.json["away"] is True
    body = problem(client.patch(f"/games/{gid}/absence-policy", json={"absence": "bot"}, headers=host.bearer()),
                   409, "absence_in_use")
    assert "P1" in body["detail"]
    assert client.get(f"/games/{gid}").json["deadlines"]["absence"] == "extend"
    # A seat may not change it; an unknown bot kind is refused.
    problem(client.patch(f"/games/{gid}/absence-policy", json={"absence": "bot"}, headers=players[0].bearer()),
            403, "not_host")
    # Back: the change goes through.
    r = client.put(f"/games/{gid}/seats/1/absences", headers=players[1].bearer(), json={"absences": []})
    assert r.status_code == 200 and r.json["absences"] == [] and r.json["away"] is False
    problem(client.patch(f"/games/{gid}/absence-policy", json={"absence_bot": "nobody"}, headers=host.bearer()),
            422, "bad_deadline_policy")
    r = client.patch(f"/games/{gid}/absence-policy", json={"absence": "bot", "absence_bot": "greedy",
                                                         "absence_limit_seconds": 3600}, headers=host.bearer())
    assert r.status_code == 200, r.json
    assert r.json["deadlines"]["absence"] == "bot" and r.json["deadlines"]["absence_bot"] == "greedy"
    assert r.json["deadlines"]["absence_limit_seconds"] == 3600


def test_absence_policy_change_refused_while_the_open_step_is_extended(kontor: Kontor) -> None:
    gid, _ = domain_game(kontor, 4, deadlines={"sequential_seconds": 600, "sealed_seconds": 600})
    phase, seat = asked_seat(kontor, gid)
    kontor.store.move_deadline(gid, phase, kontor.now() + 600, absence_extended="60")
    with pytest.raises(Problem) as exc:
        kontor.update_absence_policy(gid, {"absence": "bot"})
    assert exc.value.code == "absence_in_use"


def test_absence_bad_input_is_refused_and_nothing_stored(client: Any, kontor: Kontor) -> None:
    host = Player.new()
    gid = create_game(client, host, 3)["id"]
    players = [Player.new() for _ in range(3)]
    for seat, p in enumerate(players):
        join(client, gid, p, f"P{seat}", seat)
    start(client, host)
    now = kontor.now()
    day = 86400
    url = f"/games/{gid}/seats/1/absences"
    cases = [
        ([{"from": at(now + day), "until": at(now + day + 31 * day)}], "absences[0].until"),  # overlong
        ([{"from": at(now + 5 * day), "until": at(now + 2 * day)}], "absences[0].until"),  # reversed
        ([{"from": at(now - 5 * day), "until": at(now - 2 * day)}], "absences[0].until"),  # in the past
        ([{"from": at(now + 400 * day), "until": at(now + 401 * day)}], "absences[0].until"),  # too far ahead
        ([{"from": at(now + k * 2 * day), "until": at(now + k * 2 * day + day)} for k in range(1, 6)],
         "absences"),  # too many
        ([{"from": "2026-12-20T00:00:00+01:00", "until": at(now + day)}], "absences[0].from"),  # not UTC
        ([{"from": "next week", "until": at(now + day)}], "absences[0].from"),
        ([{"from": at(now + day), "until": at(now + 3 * day)}, {"from": at(now + 2 * day),
                                                                "until": at(now + 4 * day)}], "absences"),
    ]
    for absences, field in cases:
        body = problem(client.put(url, headers=players[1].bearer(), json={"absences": absences}), 422, "bad_absence")
        assert body["field"] == field, (absences, body)
    problem(client.put(url, headers=players[1].bearer(), json={"absences": [{"from": 5, "until": 6}]}), 422,
            "invalid_request")
    # Not your seat.
    problem(client.put(url, headers=players[2].bearer(),
                       json={"absences": [{"from": at(now + day), "until": at(now + 2 * day)}]}), 403, "wrong_seat")
    problem(client.put(url, json={"absences": []}), 401, "authentication_required")
    assert kontor.store.absences(gid) == {}
    assert client.get(url).json["absences"] == []
    # A date alone is its midnight UTC.
    start_day = datetime.fromtimestamp(now + 3 * day, UTC).strftime("%Y-%m-%d")
    end_day = datetime.fromtimestamp(now + 6 * day, UTC).strftime("%Y-%m-%d")
    r = client.put(url, headers=players[1].bearer(), json={"absences": [{"from": start_day, "until": end_day}]})
    assert r.status_code == 200, r.json
    assert r.json["absences"] == [{"from": f"{start_day}T00:00:00.000+00:00", "until": f"{end_day}T00:00:00.000+00:00"}]
    assert r.json["text"].startswith("Away ") and not problems(r.json["text"])


def test_absence_an_absence_under_way_keeps_its_start_and_back_ends_it_now(kontor: Kontor) -> None:
    gid, _ = domain_game(kontor, 4, deadlines={"sequential_seconds": 600, "sealed_seconds": 600})
    first = away(kontor, gid, 2, 3600)["absences"][0]
    time.sleep(1.1)
    again = away(kontor, gid, 2, 7200, start=kontor.now() - 86400)["absences"][0]
    assert again["from"] == first["from"]  # sent again with a start in the past: it keeps its own
    kontor.set_absences(gid, 2, [])  # back: the absence under way ends now and is still to be told
    listed, _ = kontor.store.seat_absences(gid, 2)
    assert len(listed) == 1 and listed[0]["until"] <= kontor.now()
    assert kontor.get_absences(gid, 2)["absences"] == []
    assert kontor.absence_end(gid, 2) == 1
    summary = [e for e in kontor.events(gid, 2, 0, 500)["items"] if e["type"] == "absence_summary"]
    assert len(summary) == 1 and "nothing was decided for you" in said(kontor, gid, summary[0])


def test_absence_summary_tells_a_decision_whose_step_is_still_open(kontor: Kontor, worker: Any) -> None:
    """A sealed step that asks everyone resolves only when all have answered: the bot's
    bid for the away seat has no `absence_played` event yet when the absence ends, and
    the summary still tells it (and that the seat may change it)."""
    gid, _ = domain_game(kontor, 3, deadlines={"sequential_seconds": 600, "sealed_seconds": 600,
                                               "absence": "bot", "absence_bot": "greedy"})
    for _ in range(6):  # to the sealed cart bids, asking all three at once
        default_step(kontor, gid)
        worker()
    ph = kontor.store.phase(gid)
    phase = int(ph["id"])
    assert ph["sealed"] == "1" and json.loads(ph["expected"]) == [0, 1, 2]
    away(kontor, gid, 0, 2)
    worker()  # the bot bids for seat 0; seats 1 and 2 have not answered: the step stays open
    assert kontor.store.orders(gid, phase)[0]["via"] == "absence"
    wait_until(lambda: kontor.now() > kontor.store.seat_absences(gid, 0)[0][0]["until"] + 0.1, timeout=10)
    assert kontor.absence_end(gid, 0) == 1
    mine = [e for e in kontor.events(gid, 0, 0, 500)["items"] if e["type"] == "absence_summary"]
    text = said(kontor, gid, mine[0])
    assert f"in step {phase} the greedy bot played for you: Bid " in text, text
    assert text.endswith("(that step is still open: you may change it)."), text
    assert "nothing was decided" not in text and not problems(text)
    assert not [e for e in kontor.events(gid, 1, 0, 500)["items"] if e["type"] == "absence_summary"]


def test_absence_summary_leaves_out_a_step_a_rollback_undid(kontor: Kontor, worker: Any) -> None:
    """What the absence's bot played in a step the host then rolled back no longer counts:
    the summary tells only what stands (here, the bot's play of the reopened step)."""
    gid, _ = domain_game(kontor, 3, deadlines={"sequential_seconds": 600, "sealed_seconds": 600,
                                               "absence": "bot", "absence_bot": "greedy"})
    phase, seat = asked_seat(kontor, gid)
    away(kontor, gid, seat, 4)
    worker()  # the bot plays the away seat's step
    assert int(kontor.store.phase(gid)["id"]) == phase + 1
    out = kontor.propose_rollback(gid, phase)  # a purchase reveals nothing hidden: applied at once
    assert out["status"] == "applied"
    reopened = out["new_phase"]
    worker()  # still away: the bot plays the reopened step
    wait_until(lambda: kontor.now() > kontor.store.seat_absences(gid, seat)[0][0]["until"] + 0.1, timeout=10)
    assert kontor.absence_end(gid, seat) == 1
    (summary,) = [e for e in kontor.events(gid, seat, 0, 500)["items"] if e["type"] == "absence_summary"]
    text = said(kontor, gid, summary)
    assert f"in step {reopened} the greedy bot played for you" in text, text
    assert f"in step {phase} " not in text, text
