"""Which mails a seat gets (`asked`, `every`, `digest`), and the notices that go out at
once whatever the mode: a bot taking over the seat, a missed deadline's default played,
reminders. Also: a former seat key still reads the game as the public, and the mail shows
the table's picture inline and the plain words to reply with."""

from __future__ import annotations

from typing import Any

from service.channels.notify import at_once, mode_of
from service.config import Settings
from service.core.kontor import Kontor
from tests.service.channels import Mailbox, work_all
from tests.service.channels.test_mail_out import asked_seat, mail_game
from tests.service.conftest import default_step, problem


def deliveries(k: Kontor, gid: str, seat: int) -> list[dict[str, Any]]:
    return list(reversed(k.store.deliveries(gid, seat, 200)))


def text(mail: Any) -> str:
    return str(mail.text).replace("\r\n", "\n")


def test_the_mode_of_a_contact_and_immediate_read_as_every() -> None:
    assert mode_of({}) == "asked" and mode_of({"delivery": None}) == "asked"
    assert mode_of({"delivery": "immediate"}) == "every" and mode_of({"delivery": "every"}) == "every"
    assert mode_of({"delivery": "digest"}) == "digest" and mode_of({"delivery": "bogus"}) == "asked"
    assert at_once({"type": "step.resolved", "default_played": "goods: none"})
    assert at_once({"type": "seat.replaced", "yours": True}) and not at_once({"type": "seat.replaced", "yours": False})
    assert not at_once({"type": "step.resolved"}) and not at_once({"type": "step.opened", "request": None})


def test_a_contact_set_with_immediate_answers_every(nclient: Any, nkontor: Kontor) -> None:
    gid, _, players = mail_game(nkontor, nclient, {})
    r = nclient.put(f"/games/{gid}/seats/0/contact", json={"email": "a@example.org", "delivery": "immediate"},
                    headers=players[0].bearer())
    assert r.status_code == 200 and r.json["delivery"] == "every"
    r = nclient.put(f"/games/{gid}/seats/1/contact", json={"email": "b@example.org"}, headers=players[1].bearer())
    assert r.json["delivery"] == "asked"


def test_asked_mode_mails_only_when_asked_and_tells_what_happened_since(
        nkontor: Kontor, nclient: Any, notify_settings: Settings, mailbox: Mailbox) -> None:
    contacts = {s: {"email": f"s{s}@example.org", "delivery": "asked"} for s in range(3)}
    contacts[2]["delivery"] = "every"
    gid, _, _ = mail_game(nkontor, nclient, contacts)
    work_all(notify_settings)
    for _ in range(6):
        default_step(nkontor, gid)
        work_all(notify_settings)
    for seat in (0, 1):
        made = deliveries(nkontor, gid, seat)
        # Every mail of an `asked` seat asks it something (the first step asks seat 1 only).
        assert made and all(any(n.get("request") for n in d["payload"]) for d in made), seat
        assert all(d["status"] == "sent" for d in made)
    # An `every` seat gets the start, then one mail per decision of its own, which tells
    # the run of steps before it whole, step by step.
    every = deliveries(nkontor, gid, 2)
    asking = [d for d in every[1:] if any(n.get("request") for n in d["payload"] if not n.get("held"))]
    assert every[0]["types"] == ["step.opened"] and len(asking) == len(every) - 1 >= 1
    whole = [n for d in asking for n in d["payload"] if n.get("whole")]
    assert whole and all("view" not in n and n["sentences"] for n in whole)
    # The second mail of an asked seat tells, in words only, the steps it was not mailed about.
    later = deliveries(nkontor, gid, 1)[1]
    held = [n for n in later["payload"] if n.get("held")]
    assert held and all("view" not in n and "events" not in n for n in held)
    mail = [m for m in mailbox.to("s1@example.org")][1]
    body = text(mail)
    assert "Since your last mail\n--------------------\n" in body
    for n in held:
        for sentence in n["sentences"]:
            assert f"- Step {n['phase']}: {sentence}" in body
    # Nothing is held twice: the next mail starts after it.
    assert nkontor.store.held(gid, 1) == [] or all(n["phase"] > later["phase"] for n in nkontor.store.held(gid, 1))


def test_a_seat_given_to_a_bot_is_told_once_and_never_asked_again(
        nkontor: Kontor, nclient: Any, notify_settings: Settings, mailbox: Mailbox) -> None:
    gid, host, players = mail_game(nkontor, nclient, {1: {"email": "bo@example.org", "delivery": "every"},
                                                       2: {"email": "cy@example.org", "delivery": "asked"}})
    work_all(notify_settings)
    before = len(deliveries(nkontor, gid, 1))
    r = nclient.patch(f"/games/{gid}/seats/1", json={"bot": "random"}, headers=host.bearer())
    assert r.status_code == 200, r.json
    work_all(notify_settings)
    for _ in range(8):
        default_step(nkontor, gid)
        work_all(notify_settings)
    after = deliveries(nkontor, gid, 1)[before:]
    told = [d for d in after if "seat.replaced" in d["types"]]
    assert len(told) == 1
    (notice,) = [n for n in told[0]["payload"] if not n.get("held")]
    assert notice["yours"] is True and notice["bot"] == "random" and notice["replaced"] == 1
    assert notice["sentences"] == ["Your seat is now played by a random bot."]
    assert notice["farewell"] is True and "view" not in notice
    # Nothing after it asks the seat anything: no request, no reply address, no page capability.
    for d in after:
        for n in d["payload"]:
            assert not n.get("request") and "asked" not in n
            assert "cap=" not in (n.get("links") or {}).get("page", "")
    mail = next(m for m in mailbox.to("bo@example.org") if "bot" in str(m.message["Subject"]))
    assert str(mail.message["Subject"]).endswith("\N{EM DASH} a bot now plays your seat")
    assert "#orders" not in text(mail) and "it plays that seat from now on" in text(mail)
    assert "This is the last mail about the game to this address" in text(mail)
    assert mail.message["Reply-To"] == "orders@kontor.test"
    # Another seat in `asked` mode is not mailed about it (it is held for its next mail).
    assert not any("seat.replaced" in d["types"] and not any(n.get("held") for n in d["payload"]
                                                             if n["type"] == "seat.replaced")
                   for d in deliveries(nkontor, gid, 2))
    # The former key still reads the game, as the public does; it orders nothing.
    old = players[1]
    view = nclient.get(f"/games/{gid}/view", headers=old.bearer())
    assert view.status_code == 200, view.json
    assert view.json == nclient.get(f"/games/{gid}/view").json
    assert nclient.get(f"/games/{gid}/events", headers=old.bearer()).status_code == 200
    seat, phase = asked_seat(nkontor, gid)
    token = old.order_token(phase, {"bid": 0}, seat=1)
    problem(nclient.put(f"/games/{gid}/phases/{phase}/orders/1", json={"token": token}), 401, "unknown_key")


def test_a_missed_deadline_tells_the_seat_which_default_was_played(
        nkontor: Kontor, nclient: Any, notify_settings: Settings, mailbox: Mailbox) -> None:
    gid, _, _ = mail_game(nkontor, nclient, {1: {"email": "bo@example.org", "delivery": "asked"},
                                             2: {"email": "cy@example.org", "delivery": "asked"}})
    work_all(notify_settings)
    seat, phase = asked_seat(nkontor, gid)
    assert seat == 1
    nkontor.r.hset(nkontor.store.key(gid, "phase"), "deadline", f"{nkontor.now() - 1:.6f}")
    assert nkontor.deadline(gid, phase) == "trigger"
    work_all(notify_settings)
    late = [n for d in deliveries(nkontor, gid, 1) for n in d["payload"]
            if n["type"] == "step.resolved" and n["phase"] == phase]
    assert len(late) == 1
    notice = late[0]
    assert notice["default_played"] == "goods: none"
    mail = mailbox.to("bo@example.org")[-1]
    assert str(mail.message["Subject"]).endswith(f"your default order was played (step {phase})")
    assert (f"You did not answer step {phase} before its deadline, so your default order was played: "
            "goods: none.") in text(mail)
    # No other seat is told of a default played: it was not that seat's.
    assert not [n for d in deliveries(nkontor, gid, 2) for n in d["payload"] if n.get("default_played")]


def test_a_mail_shows_the_picture_inline_and_the_plain_words_to_reply_with(
        nkontor: Kontor, nclient: Any, notify_settings: Settings, mailbox: Mailbox) -> None:
    gid, _, _ = mail_game(nkontor, nclient, {1: {"email": "bo@example.org"}}, mail_orders="reply_address")
    work_all(notify_settings)
    (mail,) = mailbox.to("bo@example.org")
    msg = mail.message
    related = [p for p in msg.walk() if p.get_content_type() == "multipart/related"]
    assert len(related) == 1
    html, svg = related[0].get_payload()
    assert html.get_content_type() == "text/html" and svg.get_content_type() == "image/svg+xml"
    cid = svg["Content-ID"].strip("<>")
    assert f'src="cid:{cid}"' in html.get_content() and 'alt="' in html.get_content()
    assert svg.get_content().lstrip().startswith(b"<svg") if isinstance(svg.get_content(), bytes) else \
        svg.get_content().lstrip().startswith("<svg")
    body = text(mail)
    assert "If you do not answer in time, this is played for you: Buy nothing.\n" in body
    assert "Just reply to this mail and write your answer at the top" in body and "{" not in body
    assert "/play/" in body and "?step=1&cap=" in body


def test_a_reminder_is_never_sent_to_a_seat_a_bot_plays(nkontor: Kontor, notify_settings: Settings) -> None:
    from service.channels.reminders import remind
    from tests.service.channels.test_reminders import sealed_step

    gid, ph = sealed_step(nkontor, notify_settings)
    nkontor.store.set_contact(gid, 1, {"email": "s1@example.org", "reminder_lead": 3600, "delivery": "asked"})
    nkontor.store.set_contact(gid, 2, {"email": "s2@example.org", "reminder_lead": 3600, "delivery": "asked"})
    rec = nkontor.store.seats(gid)[2]
    nkontor.store.set_seat(gid, 2, {**rec, "bot": "random", "kid": None, "public_key": None}, None)
    assert remind(nkontor, nkontor.now()) == 1
    assert [d["type"] for d in nkontor.store.deliveries(gid, 1, 10)] == ["deadline.reminder"]
    assert nkontor.store.deliveries(gid, 2, 10) == []


def test_handing_seats_to_bots_mid_game_sends_at_most_one_mail_per_seat_per_own_decision(
        nkontor: Kontor, nclient: Any, notify_settings: Settings, mailbox: Mailbox) -> None:
    """`every` mode (issue 21): the bots' run of steps between two of a seat's own
    decisions is one mail, so handing seats to bots mid-game never floods anyone (it
    sent 138 mails in about 4 s)."""
    gid, host, _ = mail_game(nkontor, nclient, {s: {"email": f"s{s}@example.org"} for s in range(3)})
    work_all(notify_settings)
    for _ in range(4):
        default_step(nkontor, gid)
        work_all(notify_settings)
    before = {s: len(deliveries(nkontor, gid, s)) for s in range(3)}
    for seat in (1, 2):
        r = nclient.patch(f"/games/{gid}/seats/{seat}", json={"bot": "greedy"}, headers=host.bearer())
        assert r.status_code == 200, r.json
    own = 0  # the steps that ask seat 0 (a player) from now on
    for _ in range(400):
        work_all(notify_settings)
        if nkontor.game(gid)["status"] == "finished":
            break
        if 0 in nkontor.current_phase(gid, "public")["requested"]:
            own += 1
            default_step(nkontor, gid)
    else:
        raise AssertionError("the game did not finish")
    work_all(notify_settings)
    steps = int(nkontor.current_phase(gid, "public")["id"])
    after = {s: deliveries(nkontor, gid, s)[before[s]:] for s in range(3)}
    assert steps > 60 and own >= 5
    # The player: one mail per own decision and the end (the handovers held for it).
    assert len(after[0]) <= own + 1
    assert all(any(n.get("request") for n in d["payload"]) or "game.finished" in d["types"] for d in after[0])
    # The seats the bots took: the farewell of the players who held them, and nothing
    # after it (not even the end: the seat is no longer theirs).
    for seat in (1, 2):
        assert [d["type"] for d in after[seat]] == ["seat.replaced"] and after[seat][0]["former"], seat
        assert len(mailbox.to(f"s{seat}@example.org")) == before[seat] + 1
