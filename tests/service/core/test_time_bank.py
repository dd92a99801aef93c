"""A time bank as a deadline policy (issue 25, `service/core/timebank.py`): each seat's
bank grows by the add per decision up to the cap, is debited exactly by the time it was
asked (store time, paused time left out); a seat out of time is played at once by the
engine's default or a bot, exactly once, its own order winning a race; the others wait on.
Store time is moved by writing the step's opening in the store, never by sleeping."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from engine.core import registry
from service.channels.contacts import set_contact
from service.channels.mail.render import render
from service.channels.notify import Notifier, at_once, seat_page
from service.channels.reminders import remind
from service.client.cli import clock_lines
from service.core.clock import iso
from service.core.kontor import Kontor
from service.core.timebank import asked_seconds, is_bank, paused_within, runs_out_at
from service.http.resources import play
from service.jobs.sweep import sweep
from tests.playertext import problems
from tests.service.browserkit import SHOTS, assert_accessible
from tests.service.client.test_cli import Shell
from tests.service.conftest import Player, default_step, domain_game, new_game, problem
from tests.service.stall import registered

BANK = {"clock": "bank", "bank_start_seconds": 3600, "bank_add_seconds": 1800, "bank_cap_seconds": 5400}


@pytest.fixture(autouse=True)
def stall() -> Iterator[Any]:
    with registered() as game:
        yield game


def stall_game(kontor: Kontor, deadlines: dict[str, Any]) -> str:
    host = Player.new()
    gid: str = kontor.create_game("stall", 2, None, deadlines, 3, host.key.public)["id"]
    for seat in range(2):
        kontor.join(gid, f"P{seat}", Player.new().key.public, seat)
    kontor.start(gid)
    return gid


def step_hash(kontor: Kontor, gid: str) -> dict[str, str]:
    return kontor.store.phase(gid)


def set_step(kontor: Kontor, gid: str, **fields: Any) -> None:
    """Write fields of the open step's hash (store time moved by moving the opening)."""
    kontor.r.hset(kontor.store.key(gid, "phase"), mapping={k: str(v) for k, v in fields.items()})


def banks(kontor: Kontor, gid: str) -> dict[int, int]:
    return {int(s): v for s, v in json.loads(kontor.store.meta(gid)["banks"]).items()}


def answer_asked(kontor: Kontor, worker: Any, gid: str, seat: int, asked: float,
                 order: dict[str, Any] | None = None) -> None:
    """`seat` answers the open step, and the step is made to have opened `asked` seconds
    (store time) before the order's time stamp; then it resolves."""
    phase = int(step_hash(kontor, gid)["id"])
    kontor.submit(gid, phase, seat, order or {"pass": True}, via="test")
    at = float(kontor.store.orders(gid, phase)[seat]["at"])
    set_step(kontor, gid, opened_at=f"{at - asked:.6f}")
    worker()


def test_time_bank_pure_paused_time_is_left_out_and_the_clock_stops_in_a_pause() -> None:
    assert paused_within(100, 200, [[120, 130], [125, 140], [190, 250]]) == 30  # overlaps count once
    assert paused_within(100, 200, [], paused_at=180) == 20
    assert asked_seconds(1000, 2000, [[1100, 1400]]) == 700
    assert asked_seconds(1000, 1050, [[900, 2000]]) == 0
    assert runs_out_at(1000, 600, []) == 1600
    assert runs_out_at(1000, 600, [[1100, 1400]]) == 1900
    assert runs_out_at(1000, 600, [[1700, 1800]]) == 1600  # a pause after it ran out changes nothing
    assert runs_out_at(1000, 600, [[1100, 1400]], paused_at=1500) is None  # stopped, 100 s left
    assert runs_out_at(1000, 600, [], paused_at=1700) == 1600


def test_time_bank_grows_by_the_add_per_decision_up_to_the_cap(kontor: Kontor, worker: Any) -> None:
    gid = stall_game(kontor, BANK)
    assert banks(kontor, gid) == {0: 3600, 1: 3600}
    ph = step_hash(kontor, gid)
    assert json.loads(ph["banks"]) == {"0": 3600}  # the asked seat's bank at the opening
    assert float(ph["deadline"]) == pytest.approx(float(ph["opened_at"]) + 3600, abs=1e-5)
    answer_asked(kontor, worker, gid, 0, 600)  # 3600 - 600 + 1800
    assert banks(kontor, gid) == {0: 4800, 1: 3600}
    answer_asked(kontor, worker, gid, 1, 100)  # 3600 - 100 + 1800
    assert banks(kontor, gid) == {0: 4800, 1: 5300}
    ph = step_hash(kontor, gid)
    assert json.loads(ph["banks"]) == {"0": 4800}
    assert float(ph["deadline"]) == pytest.approx(float(ph["opened_at"]) + 4800, abs=1e-5)
    answer_asked(kontor, worker, gid, 0, 10)  # 4790 + 1800 is over the cap
    assert banks(kontor, gid) == {0: 5400, 1: 5300}


def test_time_bank_debit_is_exact_to_the_second_of_store_time_less_paused_time(
        kontor: Kontor, worker: Any) -> None:
    gid = stall_game(kontor, {**BANK, "bank_add_seconds": 0})
    phase = int(step_hash(kontor, gid)["id"])
    kontor.submit(gid, phase, 0, {"pass": True}, via="test")
    at = float(kontor.store.orders(gid, phase)[0]["at"])
    # Asked 1000 s of store time, 300 of them paused: 700 s debited.
    set_step(kontor, gid, opened_at=f"{at - 1000:.6f}", pauses=json.dumps([[at - 900, at - 600]]))
    worker()
    assert banks(kontor, gid) == {0: 2900, 1: 3600}


def sealed_out_of_time(kontor: Kontor, worker: Any) -> tuple[str, int, float]:
    """A Die Händler game at its sealed cart bids (all three seats asked), seat 1
    answered, seat 0 out of time (1000 s, asked 1500 s ago), seat 2 with a day left:
    the game, the step and the store time its opening was moved back from."""
    gid, _ = domain_game(kontor, 3, deadlines={"clock": "bank"})
    for _ in range(6):  # to the sealed cart bids, asking all three at once
        default_step(kontor, gid)
        worker()
    ph = step_hash(kontor, gid)
    phase = int(ph["id"])
    assert ph["sealed"] == "1" and json.loads(ph["expected"]) == [0, 1, 2]
    kontor.submit(gid, phase, 1, {"bid": 0}, via="test")
    now = kontor.now()
    set_step(kontor, gid, opened_at=f"{now - 1500:.6f}", deadline=f"{now - 500:.6f}",
             banks=json.dumps({"0": 1000, "1": 86400, "2": 86400}))
    return gid, phase, now


def test_time_bank_a_seat_out_of_time_gets_the_engine_default_and_the_others_wait(
        kontor: Kontor, worker: Any) -> None:
    gid, phase, now = sealed_out_of_time(kontor, worker)
    state = kontor.store.state(gid)
    default = registry.get("haendler").default_order(state, 0)
    assert kontor.deadline(gid, phase) == "early"
    assert kontor.deadline(gid, phase) == "early"  # a repeated check plays nothing twice
    stored = kontor.store.orders(gid, phase)
    assert stored[0]["order"] == default and stored[0]["via"] == "clock"
    assert sorted(stored) == [0, 1]
    ph = step_hash(kontor, gid)
    assert ph["status"] == "collecting"
    assert float(ph["deadline"]) == pytest.approx(now - 1500 + 86400, abs=1e-5)  # seat 2's own deadline
    public = [e for e in kontor.events(gid, "public", 0, 500)["items"] if e["type"].startswith("clock_")]
    assert [(e["type"], e["seat"], e["by"]) for e in public] == [("clock_ran_out", 0, "defaults")]
    assert "order" not in public[0]  # a sealed order is hidden from the others
    own = [e for e in kontor.events(gid, 0, 0, 500)["items"] if e["type"] == "clock_played"]
    assert len(own) == 1 and own[0]["order"] == default
    assert not [e for e in kontor.events(gid, 2, 0, 500)["items"] if e["type"] == "clock_played"]
    # Seat 2 answers: the step resolves; seat 0's bank is 0 + the add, seat 1's grew.
    kontor.submit(gid, phase, 2, {"bid": 0}, via="test")
    worker()
    after = banks(kontor, gid)
    assert after[0] == 4 * 3600
    asked = float(stored[1]["at"]) - (now - 1500)  # seat 1 answered before its opening was moved back
    assert after[1] == int(86400 - asked + 4 * 3600)
    history = kontor.store.history(gid)[-1]
    assert history["orders"]["0"] == default


def test_time_bank_out_of_time_with_a_bot_plays_the_bots_order(kontor: Kontor, worker: Any) -> None:
    gid, _ = domain_game(kontor, 3, deadlines={"clock": "bank", "bank_out": "bot", "bank_bot": "greedy"})
    assert kontor.game(gid)["deadlines"]["bank_bot"] == "greedy"
    meta, ph, state = kontor.store.snapshot(gid)
    phase, seat = int(ph["id"]), json.loads(ph["expected"])[0]
    game = registry.get("haendler")
    bot = registry.bots("haendler")["greedy"](f"{json.loads(meta['seed'])}/{phase}/{seat}")
    expected = bot.order(game, state, game.requests(state)[0])
    assert expected != game.default_order(state, seat)
    now = kontor.now()
    set_step(kontor, gid, opened_at=f"{now - 3 * 86400 - 5:.6f}", deadline=f"{now - 5:.6f}")
    assert kontor.deadline(gid, phase) == "trigger"  # the only seat asked: the step resolves
    worker()
    assert kontor.store.history(gid)[-1]["orders"][str(seat)] == expected
    ran = [e for e in kontor.events(gid, "public", 0, 500)["items"] if e["type"] == "clock_ran_out"]
    assert len(ran) == 1 and ran[0]["by"] == "greedy" and ran[0]["order"] == expected  # not sealed: public


def test_time_bank_paused_time_is_not_counted_and_a_paused_clock_plays_nothing(kontor: Kontor) -> None:
    gid = stall_game(kontor, BANK)
    now = kontor.now()
    # Asked 4000 s ago with a bank of 3600, but 1000 s of it paused: 600 s left.
    set_step(kontor, gid, opened_at=f"{now - 4000:.6f}", deadline=f"{now - 400:.6f}",
             pauses=json.dumps([[now - 3500, now - 2500]]))
    assert kontor.deadline(gid, 1) == "early"
    assert kontor.store.orders(gid, 1) == {}
    assert float(step_hash(kontor, gid)["deadline"]) == pytest.approx(now + 600, abs=1e-5)
    clock = kontor.game(gid)["clocks"]["0"]
    assert 598 <= clock["bank_seconds"] <= 600 and clock["runs_out_at"] is not None
    # Paused for the last 100 s (the pause helper's `paused_at`): 700 s left, the clock stopped.
    set_step(kontor, gid, paused_at=f"{now - 100:.6f}")
    clock = kontor.game(gid)["clocks"]["0"]
    assert clock["runs_out_at"] is None and 698 <= clock["bank_seconds"] <= 700
    # Nothing is played while paused, even past the clock.
    set_step(kontor, gid, opened_at=f"{now - 9000:.6f}")
    assert kontor.bank_check(gid, 1) == "paused"
    assert kontor.store.orders(gid, 1) == {}


def test_time_bank_the_seats_own_order_wins_a_race_with_the_clock(kontor: Kontor, worker: Any) -> None:
    gid, _ = domain_game(kontor, 3, deadlines={"clock": "bank"})
    ph = step_hash(kontor, gid)
    phase, seat = int(ph["id"]), json.loads(ph["expected"])[0]
    own = {"goods": [{"good": "tuch", "city": "PAR"}]}
    now = kontor.now()
    set_step(kontor, gid, opened_at=f"{now - 3 * 86400 - 5:.6f}", deadline=f"{now + 60:.6f}")
    # The seat's order is stored between the clock's read and its write: the clock's loses.
    real = kontor.store.clock_order

    def late(*args: Any, **kwargs: Any) -> Any:
        assert kontor.submit(gid, phase, seat, own, via="test")["step_status"] == "resolving"
        return real(*args, **kwargs)

    kontor.store.clock_order = late  # type: ignore[method-assign]
    try:
        kontor.bank_check(gid, phase)
    finally:
        kontor.store.clock_order = real  # type: ignore[method-assign]
    stored = kontor.store.orders(gid, phase)
    assert stored[seat]["order"] == own and stored[seat]["via"] == "test"
    assert not [e for e in kontor.events(gid, "public", 0, 500)["items"] if e["type"] == "clock_ran_out"]
    worker()
    assert kontor.store.history(gid)[-1]["orders"][str(seat)] == own


def test_time_bank_bad_policies_are_refused(client: Any) -> None:
    host = Player.new()
    bad = [
        {"clock": "chess"},
        {"clock": "bank", "bank_start_seconds": 7200, "bank_cap_seconds": 3600},
        {"clock": "bank", "on_expiry": "extend"},
        {"clock": "bank", "bank_out": "bot", "bank_bot": "nobody"},
        {"clock": "bank", "bank_out": "sleep"},
        {"clock": "bank", "bank_start_seconds": 5},
        {"clock": "bank", "bank_add_seconds": -1},
        {"clock": "bank", "bank_cap_seconds": 10 ** 9},
        {"clock": "bank", "bank_start_seconds": True},
    ]
    codes: list[str] = []
    for deadlines in bad:
        r = client.post("/games", json={"title": "haendler", "seats": 3, "host_key": host.key.public,
                                        "deadlines": deadlines}, headers={"Idempotency-Key": uuid.uuid4().hex})
        assert r.status_code == 422 and r.get_json()["code"] in ("bad_deadline_policy", "invalid_request"), \
            (deadlines, r.get_json())
        if r.get_json()["code"] == "bad_deadline_policy":
            problem(r, 422, "bad_deadline_policy")
            codes.append(r.get_json()["field"])
    assert codes == ["clock", "bank_cap_seconds", "on_expiry", "bank_bot", "bank_out", "bank_start_seconds",
                     "bank_add_seconds", "bank_cap_seconds"]
    assert client.get("/games").get_json()["items"] == []  # nothing made
    r = client.post("/games", json={"title": "haendler", "seats": 3, "host_key": host.key.public,
                                    "deadlines": {"clock": "bank", "bank_out": "bot"}},
                    headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 201, r.get_json()
    assert r.get_json()["deadlines"]["bank_bot"] == "greedy"  # the title's stand-in bot, not the random one


def test_time_bank_clocks_are_shown_in_words(client: Any, kontor: Kontor) -> None:
    host, players = new_game(client, 3, deadlines={"clock": "bank"})
    body = client.get(f"/games/{host.game}").get_json()
    clocks = body["clocks"]
    asked = body["phase"]["requested"][0]
    assert set(clocks) == {"0", "1", "2"}
    assert clocks[str(asked)]["runs_out_at"] is not None and clocks[str(asked)]["bank_seconds"] > 3 * 86400 - 60
    assert all(clocks[s] == {"bank_seconds": 3 * 86400, "runs_out_at": None} for s in clocks if s != str(asked))
    page = client.get(f"/play/{host.game}").get_data(as_text=True)
    section = page.split('<section class="clocks"', 1)[1].split("</section>", 1)[0]
    others = [s for s in range(3) if s != asked]
    assert f"P{others[0]}: 3 days left on the clock." in section
    assert f"P{asked}: 2 days 23 hours left on the clock, running now: it runs out " in section
    text = section.split(">", 1)[1]
    for seat, name in enumerate(("Ada", "Bea", "Cy")):  # the test's seat names look like rule ids
        text = text.replace(f"P{seat}", name)
    assert not problems(text), problems(text)
    mine = play.table(kontor, host.game, others[1])
    assert mine["my_clock"] == "You have 3 days left on your clock."
    assert len(mine["clocks"]) == 2


def test_time_bank_your_turn_notices_and_status_say_the_clock(kontor: Kontor) -> None:
    gid, _ = domain_game(kontor, 3, deadlines={"clock": "bank", "bank_start_seconds": 2 * 86400 + 4 * 3600,
                                               "bank_cap_seconds": 3 * 86400})
    meta, seats, state = kontor.store.meta(gid), kontor.store.seats(gid), kontor.store.state(gid)
    events = kontor.store.events_between(gid, 1, int(meta["event_seq"]))
    asked = json.loads(kontor.store.phase(gid)["expected"])[0]
    notices = Notifier(kontor).commit_notices(gid, meta, seats, 0, state, kontor.store.phase(gid)["deadline"],
                                              events, asked)
    turn = [n for n in notices if n["type"] == "step.opened"][0]
    assert turn["request"]["clock_seconds"] == 2 * 86400 + 4 * 3600
    assert turn["request"]["clock"] == "You have 2 days 4 hours left on your clock."
    msg = render(kontor, gid, asked, {"email": "p@players.example.org", "timezone": "UTC"}, notices, "e_1")
    text = msg.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
    assert "You have 2 days 4 hours left on your clock." in text
    assert "It runs only while you are asked and have not answered; it runs out" in text
    # `kontor status` says every clock, the reader's first.
    game = kontor.game(gid)
    lines = clock_lines(game, kontor.names(gid, meta), (asked + 1) % 3)
    assert lines[1] == "  You have 2 days 4 hours left on your clock."
    theirs = [line for line in lines if line.startswith(f"  P{asked}: ")]
    assert len(theirs) == 1 and "left on the clock, running now: it runs out " in theirs[0]
    assert f"  P{3 - asked - (asked + 1) % 3}: 2 days 4 hours left on the clock." in lines
    assert not problems("\n".join(lines).replace("P0", "Ada").replace("P1", "Bea").replace("P2", "Cy"))


def test_time_bank_running_out_is_told_at_once_to_the_seat_and_as_news_to_the_others(
        kontor: Kontor, worker: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    gid, phase, _ = sealed_out_of_time(kontor, worker)
    before = int(kontor.store.meta(gid)["event_seq"])
    kontor.deadline(gid, phase)
    tagged = kontor.store.tagged_events(gid, before + 1, int(kontor.store.meta(gid)["event_seq"]))
    assert [t.event["type"] for t in tagged] == ["clock_ran_out", "clock_played"]
    sent: dict[int, list[dict[str, Any]]] = {}

    def dispatch(self: Any, gid: str, seat: int, contact: Any, notices: list[dict[str, Any]],
                 *args: Any, **kwargs: Any) -> list[str]:
        sent.setdefault(seat, []).extend(notices)
        return ["d"]

    monkeypatch.setattr(Notifier, "dispatch", dispatch)
    contacts = {s: {"email": f"p{s}@players.example.org"} for s in range(3)}
    assert Notifier(kontor).events(gid, tagged, contacts) == 3
    own = sent[0]
    assert len(own) == 1 and own[0]["type"] == "clock.ran_out" and at_once(own[0])
    assert own[0]["clock_played"] == "Bid nothing for cart 1 in Paris"
    assert own[0]["sentences"] == ["Your clock ran out in step 7, so this was played for you: "
                                   "Bid nothing for cart 1 in Paris."]
    for seat in (1, 2):  # the others: news, without the sealed order
        (n,) = sent[seat]
        assert n["type"] == "clock.ran_out" and "clock_played" not in n and not at_once(n)
        assert n["sentences"] == ["P0 ran out of time on their clock in step 7, so the default order was played "
                                  "for them."]
        assert "order" not in n["events"][0]


def test_time_bank_the_sweeper_plays_a_seat_out_of_time_when_the_deadline_job_was_lost(
        kontor: Kontor, worker: Any) -> None:
    gid, phase, now = sealed_out_of_time(kontor, worker)
    assert sweep(kontor)["deadlines"] >= 1  # overdue: the sweeper's check runs the time bank's
    stored = kontor.store.orders(gid, phase)
    assert stored[0]["via"] == "clock" and 2 not in stored
    ph = step_hash(kontor, gid)
    assert ph["status"] == "collecting"
    assert float(ph["deadline"]) == pytest.approx(now - 1500 + 86400, abs=1e-5)
    sweep(kontor)  # not overdue any more: nothing more is played
    assert kontor.store.orders(gid, phase) == stored
    assert len([e for e in kontor.events(gid, "public", 0, 500)["items"] if e["type"] == "clock_ran_out"]) == 1


def test_time_bank_each_seat_is_reminded_before_its_own_clock_runs_out(kontor: Kontor, worker: Any) -> None:
    gid, phase, now = sealed_out_of_time(kontor, worker)
    # Seat 0's clock ran out long ago (the check has not run yet); seat 2's runs out in a day.
    set_step(kontor, gid, deadline=f"{now + 600:.6f}", banks=json.dumps({"0": 2000, "1": 86400, "2": 86400}))
    for seat in (0, 2):
        set_contact(kontor, gid, seat, {"email": f"s{seat}@example.org", "reminder_lead": 3600})
    own2 = now - 1500 + 86400
    assert remind(kontor, now) == 1  # seat 0: its own clock ends within the lead; seat 2's does not
    assert remind(kontor, own2 - 3601) == 0
    set_step(kontor, gid, deadline=f"{own2:.6f}")  # as the check moves it once seat 0 is played
    assert remind(kontor, own2 - 3599) == 1  # seat 2, an hour before its own clock runs out
    (d,) = [d for d in kontor.store.deliveries(gid, 2, 50) if d["type"] == "deadline.reminder"]
    assert d["payload"][0]["deadline"] == iso(own2)


def test_time_bank_the_seats_page_shows_its_clock_first_and_stays_accessible(
        kontor: Kontor, live_server: str, tab: Any) -> None:
    gid, _ = domain_game(kontor, 3, deadlines={"clock": "bank"})
    meta = kontor.store.meta(gid)
    seat = json.loads(kontor.store.phase(gid)["expected"])[0]
    url = seat_page(kontor, gid, meta, seat, int(kontor.store.phase(gid)["id"]))
    parts = urlsplit(url)  # the page link a mail carries, on the test's server
    tab.goto(f"{live_server}{parts.path}?{parts.query}" if parts.query else f"{live_server}{parts.path}")
    tab.wait_for_selector("section.clocks")
    mine = tab.inner_text("section.clocks .my-clock")
    assert mine.startswith("You have 2 days 23 hours left on your clock, running now: it runs out ")
    others = tab.inner_text("section.clocks ul")
    assert others.count("3 days left on the clock.") == 2
    assert "the first clock runs out" in tab.inner_text("p.deadline")
    assert_accessible(tab, "a seat's page with a time bank")
    SHOTS.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(SHOTS / "time-bank-1280.png"), full_page=True)
    tab.set_viewport_size({"width": 390, "height": 844})
    tab.screenshot(path=str(SHOTS / "time-bank-390.png"), full_page=True)
    assert tab.evaluate("document.documentElement.scrollWidth <= 390 + 1")


def test_time_bank_kontor_game_create_and_status(tmp_path: Path, live_server: str) -> None:
    sh = Shell(tmp_path / "kontor", live_server)
    for name in ("alice", "bob"):
        sh("keygen", "--name", name)
    game = sh("game", "create", "--title", "haendler", "--seats", "3", "--as", "alice", "--seed", "7", "-q",
              "--clock", "bank", "--bank-start", "2d", "--bank-add", "2h", "--bank-cap", "4d",
              "--bank-out", "bot", "--bank-bot", "greedy").stdout.strip()
    sh("seat", "join", game, "--as", "bob", "--name", "Bob", "--seat", "0")
    for seat in ("1", "2"):
        sh("seat", "bot", game, seat, "--kind", "random", "--as", "alice")
    sh("game", "start", game, "--as", "alice")
    g = sh.json("status", game, "--json")["game"]
    assert {k: v for k, v in g["deadlines"].items() if k.startswith(("clock", "bank_"))} == {
        "clock": "bank", "bank_start_seconds": 2 * 86400, "bank_add_seconds": 7200, "bank_cap_seconds": 4 * 86400,
        "bank_out": "bot", "bank_bot": "greedy"}
    text = sh("status", game, "--as", "bob").stdout
    assert "Time banks (a clock runs only while its player is asked):" in text
    assert "  You have " in text and " left on your clock" in text
    refused = sh("game", "create", "--title", "haendler", "--seats", "3", "--as", "alice", "--clock", "bank",
                 "--on-expiry", "extend", ok=False)
    assert refused.exit_code == 1 and "bad_deadline_policy" in refused.stderr


def test_time_bank_the_hosts_extension_goes_on_the_waiting_seats_clocks(kontor: Kontor) -> None:
    """On a time bank the step's deadline is the first own clock of the seats it waits
    for: the host's extension adds its time to each of those clocks, so the clock's own
    check keeps it (it recomputes the deadline from the clocks)."""
    gid = stall_game(kontor, BANK)
    ph = step_hash(kontor, gid)
    phase, asked = int(ph["id"]), json.loads(ph["expected"])
    before = {int(s): v for s, v in json.loads(ph["banks"]).items()}
    deadline = float(ph["deadline"])
    kontor.extend(gid, 1800)
    ph = step_hash(kontor, gid)
    assert {int(s): v for s, v in json.loads(ph["banks"]).items()} == {
        s: v + (1800 if s in asked else 0) for s, v in before.items()}
    assert float(ph["deadline"]) == pytest.approx(deadline + 1800, abs=1e-5)
    assert kontor.deadline(gid, phase) == "early"  # the clock's check keeps the extension
    assert float(step_hash(kontor, gid)["deadline"]) == pytest.approx(deadline + 1800, abs=1e-5)


def test_time_bank_the_clock_never_plays_a_seat_the_host_gave_time_since_the_read(
        kontor: Kontor, worker: Any) -> None:
    """The clock's order is a compare-and-set on the clocks it was worked out from: a
    host's extension (or a pause and resume) between the check's read and its write
    leaves the seat unplayed, and the check, reading again, finds time left."""
    gid, phase, _ = sealed_out_of_time(kontor, worker)
    meta, ph, state, _ = kontor._snapshot(gid)
    pol = is_bank(meta)
    assert pol is not None
    kontor.extend(gid, 86400)  # lands between the read above and the write below
    assert kontor._play_out_of_time(gid, meta, ph, state, pol, 0, kontor.now() - 500) == "stale"
    assert 0 not in kontor.store.orders(gid, phase)
    assert kontor.deadline(gid, phase) == "early"  # read again: seat 0 has a day more now
    assert 0 not in kontor.store.orders(gid, phase)
    assert step_hash(kontor, gid)["status"] == "collecting"
