"""Reminders before a deadline: at the seat's lead time, once per seat and step (also
across a deadline extension), only to seats that have not answered, with only that
seat's own view and request. `remind` takes the time explicitly, so no test sleeps."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.core import registry
from engine.haendler.view import HIDDEN_PLAYER_FIELDS
from service import words
from service.channels.contacts import set_contact
from service.channels.mail.render import citer
from service.channels.reminders import remind
from service.config import Settings
from service.core.kontor import Kontor
from service.jobs.sweep import sweep
from tests.service.channels import work_all
from tests.service.conftest import domain_game, play_to, wait_until, work

# Also with the store on a Valkey Cluster and the queue on a Valkey of its own (issue 24).
pytestmark = pytest.mark.cluster

GAME = registry.get("haendler")
NAMES = ["P0", "P1", "P2"]
SHORT = {"sealed_seconds": 30, "sequential_seconds": 30}


def reminders_of(k: Kontor, gid: str, seat: int) -> list[dict[str, Any]]:
    return [d for d in k.store.deliveries(gid, seat, 50) if d["type"] == "deadline.reminder"]


def sealed_step(k: Kontor, settings: Settings) -> tuple[str, dict[str, Any]]:
    """A 3-seat game at its first sealed step (asking every seat), steps of 30 seconds."""
    gid, _ = domain_game(k, 3, deadlines=SHORT)
    ph = play_to(k, lambda: work(settings), gid, "cart_bid")
    assert ph["requested"] == [0, 1, 2]
    return gid, ph


def test_one_reminder_per_unanswered_seat_and_step_however_often_it_runs(
        nkontor: Kontor, notify_settings: Settings, mailbox: Any) -> None:
    gid, ph = sealed_step(nkontor, notify_settings)
    for seat, lead in ((0, 3600), (1, 3600), (2, 5)):
        set_contact(nkontor, gid, seat, {"email": f"s{seat}@example.org", "reminder_lead": lead})
    state = nkontor.store.state(gid)
    nkontor.submit(gid, ph["id"], 1, GAME.default_order(state, 1), via="test")  # seat 1 has answered

    now = nkontor.now()
    assert [remind(nkontor, now + n) for n in range(5)] == [1, 0, 0, 0, 0]
    assert len(reminders_of(nkontor, gid, 0)) == 1
    assert reminders_of(nkontor, gid, 1) == [] and reminders_of(nkontor, gid, 2) == []

    # Seat 2's lead of 5 seconds comes 5 seconds before the deadline, and once only.
    deadline = float(nkontor.store.phase(gid)["deadline"])
    assert remind(nkontor, deadline - 6) == 0
    assert [remind(nkontor, deadline - t) for t in (5, 4, 1)] == [1, 0, 0]
    assert len(reminders_of(nkontor, gid, 2)) == 1 and reminders_of(nkontor, gid, 1) == []

    work_all(notify_settings)
    mails = mailbox.wait(2)
    assert sorted(m.rcpt_tos[0] for m in mails) == ["s0@example.org", "s2@example.org"]
    assert all(d["status"] == "sent" for seat in (0, 2) for d in reminders_of(nkontor, gid, seat))


def test_a_reminder_carries_only_the_seats_own_view_and_request(nkontor: Kontor, notify_settings: Settings) -> None:
    gid, ph = sealed_step(nkontor, notify_settings)
    for seat in range(3):
        set_contact(nkontor, gid, seat, {"email": f"s{seat}@example.org", "reminder_lead": 3600})
    assert remind(nkontor, nkontor.now()) == 3
    state = nkontor.store.state(gid)
    for seat in range(3):
        (delivery,) = reminders_of(nkontor, gid, seat)
        (notice,) = delivery["payload"]
        assert (notice["type"], notice["seat"], notice["phase"]) == ("deadline.reminder", seat, ph["id"])
        assert notice["deadline"] == ph["deadline"] and notice["request"]["deadline"] == ph["deadline"]
        assert notice["view"] == GAME.view(state, seat)
        for j, player in enumerate(notice["view"]["players"]):
            assert (set(HIDDEN_PLAYER_FIELDS) <= set(player)) == (j == seat)
        assert notice["request"]["kind"] == "cart_bid" and notice["request"]["sealed"] is True
        assert notice["request"]["default_order"] == GAME.default_order(state, seat)
        others = [json.dumps(GAME.view(state, j)["players"][j]) for j in range(3) if j != seat]
        assert not any(other in json.dumps(notice) for other in others)
        # In words: what is asked, the summary of the seat's own view.
        [req] = [r for r in GAME.requests(state) if r.seat == seat]
        assert notice["asked"] == words.asked_text(GAME, req, notice["view"], NAMES)
        assert notice["summary"] == GAME.summary(notice["view"], NAMES) and notice["sentences"] == []
        assert notice["headline"] == GAME.headline(notice["view"])


def test_a_reminder_mail_says_what_is_due_in_words(nkontor: Kontor, notify_settings: Settings, mailbox: Any) -> None:
    gid, ph = sealed_step(nkontor, notify_settings)
    set_contact(nkontor, gid, 1, {"email": "s1@example.org", "reminder_lead": 3600, "timezone": "Europe/Berlin"})
    assert remind(nkontor, nkontor.now()) == 1
    work_all(notify_settings)
    (mail,) = mailbox.wait(1)
    (notice,) = reminders_of(nkontor, gid, 1)[0]["payload"]
    subject = mail.message["Subject"]
    assert subject.startswith(f"{nkontor.store.meta(gid)['name']} \N{EM DASH} reminder: ") and ", due in " in subject
    body = mail.text.replace("\r\n", "\n")
    left = words.span(notice["seconds_left"])
    assert body.startswith(f"Hello P1,\n\nThis is a reminder: {nkontor.store.meta(gid)['name']} still waits for your "
                           f"order in step {ph['id']} ({notice['headline']}), and {left} are left.")
    assert f"Time left when this reminder was sent: {left}." in body
    assert f"Reminder: your order is due\n---------------------------\n{notice['asked']}\n" in body
    summary = citer(nkontor, "haendler")(notice["summary"])
    assert summary.strip() in body and "Just reply to this mail and write your answer at the top" in body
    assert "Your choices\n------------\n" in body and "Reply with a whole number from 0 to " in body


def test_no_reminder_without_a_lead_a_contact_or_an_open_step(nkontor: Kontor, notify_settings: Settings) -> None:
    gid, ph = sealed_step(nkontor, notify_settings)
    quiet, _ = domain_game(nkontor, 2, deadlines=SHORT)  # no contacts at all
    set_contact(nkontor, gid, 0, {"email": "s0@example.org"})  # no reminder_lead
    set_contact(nkontor, gid, 1, {"email": "s1@example.org", "reminder_lead": 3600})
    deadline = float(nkontor.store.phase(gid)["deadline"])
    assert remind(nkontor, deadline + 1) == 0  # the deadline has passed: too late to remind
    assert remind(nkontor, deadline - 1) == 1  # seat 1 only
    assert reminders_of(nkontor, gid, 0) == [] and reminders_of(nkontor, quiet, 0) == []


def test_an_extended_deadline_does_not_remind_again(nkontor: Kontor, notify_settings: Settings) -> None:
    gid, _ = domain_game(nkontor, 2, deadlines={"sealed_seconds": 30, "sequential_seconds": 1,
                                                "on_expiry": "extend", "extension_seconds": 3600})
    ph = nkontor.store.phase(gid)
    seat = json.loads(ph["expected"])[0]
    set_contact(nkontor, gid, seat, {"email": "p@example.org", "reminder_lead": 600})
    assert remind(nkontor, nkontor.now()) == 1
    wait_until(lambda: nkontor.deadline(gid, int(ph["id"])) == "extended")
    extended = nkontor.store.phase(gid)
    assert extended["extended"] == "1" and extended["status"] == "collecting"
    assert remind(nkontor, float(extended["deadline"]) - 10) == 0
    assert len(reminders_of(nkontor, gid, seat)) == 1


def test_the_sweep_sends_reminders(nkontor: Kontor, notify_settings: Settings, mailbox: Any) -> None:
    gid, _ = domain_game(nkontor, 2, deadlines=SHORT)
    seat = json.loads(nkontor.store.phase(gid)["expected"])[0]
    set_contact(nkontor, gid, seat, {"email": "p@example.org", "reminder_lead": 3600})
    assert sweep(nkontor)["reminders"] == 1
    assert sweep(nkontor)["reminders"] == 0
    work_all(notify_settings)
    (mail,) = mailbox.wait(1)
    assert mail.rcpt_tos == ["p@example.org"]


def test_pause_holds_reminders_until_the_resume_moves_the_deadline(nkontor: Kontor,
                                                                   notify_settings: Settings) -> None:
    """A paused step's deadline is frozen: no reminder counts back from it; after the
    resume the lead is counted from the moved deadline."""
    gid, _ = domain_game(nkontor, 2, deadlines={"sealed_seconds": 3600, "sequential_seconds": 3600})
    ph = nkontor.store.phase(gid)
    seat = json.loads(ph["expected"])[0]
    set_contact(nkontor, gid, seat, {"email": "p@example.org", "reminder_lead": 600})
    nkontor.pause(gid)
    frozen = float(nkontor.store.phase(gid)["deadline"])
    assert remind(nkontor, frozen - 10) == 0  # within the lead of the frozen deadline: paused
    assert reminders_of(nkontor, gid, seat) == []
    nkontor.resume(gid)
    moved = float(nkontor.store.phase(gid)["deadline"])
    assert moved > frozen
    assert remind(nkontor, moved - 10) == 1
    assert len(reminders_of(nkontor, gid, seat)) == 1
