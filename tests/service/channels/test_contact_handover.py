"""A seat's contact belongs to the holder who set it (issue 23, found with items 3 and 4):
when the host gives the seat a new key or a bot, the former holder's address and webhook
get one farewell, in words (no view, no request, no link or reply address that acts), and
nothing after; the new holder starts with no contact, and what they set is theirs. Digests
and reminders follow; a contact stored before contacts were bound (no key recorded) goes
the same way at the next change."""

from __future__ import annotations

from typing import Any

from service.channels.mail.send import send_digests
from service.channels.reminders import remind
from service.config import Settings
from service.core.kontor import Kontor
from tests.playertext import problems
from tests.service.channels import Hooks, Mailbox, payloads, work_all
from tests.service.channels.test_mail_out import mail_game, play_until_asked, text
from tests.service.conftest import Player, default_step

OLD, NEW = "old@example.org", "new@example.org"


def deliveries(k: Kontor, gid: str, seat: int) -> list[dict[str, Any]]:
    return list(reversed(k.store.deliveries(gid, seat, 500)))


def hand_on(client: Any, host: Player, gid: str, seat: int, **body: Any) -> Player:
    """The host gives `seat` a new key (or, with `bot`, a bot); the new holder."""
    heir = Player.new()
    heir.game, heir.seat = gid, seat
    r = client.patch(f"/games/{gid}/seats/{seat}", json=body or {"public_key": heir.key.public},
                     headers=host.bearer())
    assert r.status_code == 200, r.json
    return heir


def assert_farewell(mail: Any, gid: str, bot: bool) -> None:
    """A farewell in words: no table, nothing asked, no link or address that acts."""
    body = text(mail)
    found = [p for p in problems(body) if "'P1'" not in p]  # the seat's name, P1, reads like a rule id
    assert not found, found
    subject = str(mail.message["Subject"])
    assert subject.endswith("a bot now plays your seat" if bot else "another player now plays your seat"), subject
    assert "This is the last mail about the game to this address" in body
    assert "until the host handed the seat on" in body and "contact settings" not in body
    assert mail.message["Reply-To"] == "orders@kontor.test"  # never a reply address that orders
    assert "cap=" not in body and "orders+" not in body and f"/play/{gid}/" not in body
    assert "#orders" not in body and "Your turn" not in body and "The table" not in body
    assert not [p for p in mail.message.walk() if p.get_content_type() == "image/svg+xml"]


def farewell_payload(k: Kontor, gid: str, seat: int) -> dict[str, Any]:
    (rec,) = [d for d in deliveries(k, gid, seat) if d.get("former") and d["channel"] == "email"]
    (notice,) = rec["payload"]
    return dict(notice)


def test_a_new_key_sends_the_former_address_one_farewell_then_only_the_new_holder_is_told(
        nkontor: Kontor, nclient: Any, notify_settings: Settings, mailbox: Mailbox) -> None:
    gid, host, players = mail_game(nkontor, nclient, {1: {"email": OLD}, 2: {"email": "cy@example.org"}},
                                   mail_orders="reply_address")
    work_all(notify_settings)
    play_until_asked(nkontor, notify_settings, gid, 1)
    before = len(mailbox.to(OLD))
    assert before >= 1
    heir = hand_on(nclient, host, gid, 1)
    work_all(notify_settings)
    # The new holder has no contact: the former's is not theirs.
    got = nclient.get(f"/games/{gid}/seats/1/contact", headers=heir.bearer()).json
    assert got["email"] is None and got["delivery"] == "asked" and got["webhook_url"] is None
    # Seat 1 is asked again (its step still open, then the next): its mails go nowhere.
    default_step(nkontor, gid)
    work_all(notify_settings)
    play_until_asked(nkontor, notify_settings, gid, 1)
    after = mailbox.to(OLD)[before:]
    assert len(after) == 1
    assert_farewell(after[0], gid, bot=False)
    notice = farewell_payload(nkontor, gid, 1)
    assert notice["type"] == "seat.replaced" and notice["yours"] and notice["farewell"]
    assert not {"view", "request", "asked", "summary", "actions", "reply_to"} & set(notice)
    assert set(notice["links"]) == {"rules", "public"} and notice["links"]["public"].endswith(f"/play/{gid}")
    assert notice["sentences"] == ["Your seat is now played by another player."]
    made = deliveries(nkontor, gid, 1)
    farewell_at = next(i for i, d in enumerate(made) if d.get("former"))
    assert made[farewell_at + 1:] == []  # nothing for the new holder until they set a contact
    # The new holder reads the seat's deliveries with the former's address masked, and
    # cannot send the farewell again.
    listed = nclient.get(f"/games/{gid}/seats/1/deliveries", headers=heir.bearer()).json
    assert listed and {d["target"] for d in listed} == {"o***@example.org"}
    r = nclient.post(f"/games/{gid}/seats/1/deliveries/{made[farewell_at]['id']}/retry", headers=heir.bearer())
    assert r.status_code == 404, r.json
    # The new holder sets an address: the next mail that asks seat 1 goes there only.
    r = nclient.put(f"/games/{gid}/seats/1/contact", json={"email": NEW, "delivery": "asked"},
                    headers=heir.bearer())
    assert r.status_code == 200, r.json
    default_step(nkontor, gid)
    work_all(notify_settings)
    phase = play_until_asked(nkontor, notify_settings, gid, 1)
    mine = mailbox.to(NEW)
    assert mine and f"?step={phase}&cap=" in text(mine[-1])
    assert str(mine[-1].message["Reply-To"]).startswith(f"orders+{gid}.{phase}.1.")
    assert len(mailbox.to(OLD)) == before + 1
    # The other seats were told in words that seat 1 changed hands, never the former's address.
    assert all(d["target"] != OLD for s in (0, 2) for d in deliveries(nkontor, gid, s))


def test_a_contact_the_new_holder_sets_stays_over_later_steps_and_a_rename(
        nkontor: Kontor, nclient: Any, notify_settings: Settings, mailbox: Mailbox) -> None:
    gid, host, _ = mail_game(nkontor, nclient, {1: {"email": OLD, "timezone": "Europe/Berlin", "reminder_lead": 60}})
    work_all(notify_settings)
    heir = hand_on(nclient, host, gid, 1)
    r = nclient.put(f"/games/{gid}/seats/1/contact", json={"email": NEW}, headers=heir.bearer())
    assert r.status_code == 200, r.json
    # Fields the former set are not carried over to the new holder.
    assert (r.json["timezone"], r.json["reminder_lead"]) == ("UTC", None)
    r = nclient.patch(f"/games/{gid}/seats/1", json={"name": "Nora"}, headers=host.bearer())
    assert r.status_code == 200, r.json
    work_all(notify_settings)
    for _ in range(3):  # (the step open at the change asked seat 1 already: told before NEW was set)
        play_until_asked(nkontor, notify_settings, gid, 1)
        default_step(nkontor, gid)
        work_all(notify_settings)
    assert nkontor.store.contact(gid, 1)["email"] == NEW
    assert len(mailbox.to(NEW)) >= 2
    assert len(mailbox.to(OLD)) == 2  # the game's first mail, then the farewell
    assert_farewell(mailbox.to(OLD)[-1], gid, bot=False)


def test_a_bot_taking_the_seat_sends_one_farewell_and_nothing_after(
        nkontor: Kontor, nclient: Any, notify_settings: Settings, mailbox: Mailbox) -> None:
    gid, host, _ = mail_game(nkontor, nclient, {1: {"email": OLD, "delivery": "every"}})
    work_all(notify_settings)
    before = len(mailbox.to(OLD))
    hand_on(nclient, host, gid, 1, bot="random")
    work_all(notify_settings)
    for _ in range(12):
        if nkontor.game(gid)["status"] == "finished":
            break
        default_step(nkontor, gid)
        work_all(notify_settings)
    after = mailbox.to(OLD)[before:]
    assert len(after) == 1
    assert_farewell(after[0], gid, bot=True)
    assert "random" in text(after[0])
    assert farewell_payload(nkontor, gid, 1)["sentences"] == ["Your seat is now played by a random bot."]
    assert nkontor.store.contacts(gid) == {}


def test_a_webhook_of_the_former_holder_gets_one_farewell_and_none_of_the_new_holders_events(
        nkontor: Kontor, nclient: Any, notify_settings: Settings, hooks: Hooks) -> None:
    gid, host, players = mail_game(nkontor, nclient, {})
    r = nclient.put(f"/games/{gid}/seats/1/contact", json={"webhook_url": hooks.url("/old")},
                    headers=players[1].bearer())
    hooks.secrets["/old"] = r.json["webhook_secret"]
    default_step(nkontor, gid)
    work_all(notify_settings)
    before = len(hooks.at("/old"))
    assert before >= 1
    heir = hand_on(nclient, host, gid, 1)
    work_all(notify_settings)
    r = nclient.put(f"/games/{gid}/seats/1/contact", json={"webhook_url": hooks.url("/new")}, headers=heir.bearer())
    hooks.secrets["/new"] = r.json["webhook_secret"]
    for _ in range(4):
        default_step(nkontor, gid)
        work_all(notify_settings)
    old = hooks.at("/old")[before:]
    assert len(old) == 1 and old[0].verified  # signed with the former holder's own secret
    (farewell,) = payloads(old)
    assert farewell["type"] == "seat.replaced"
    assert farewell["data"]["yours"] is True and farewell["data"]["farewell"] is True
    assert not {"view", "request", "summary"} & set(farewell["data"])
    new = hooks.at("/new")
    assert len(new) >= 4 and all(h.verified for h in new)
    assert all(p["type"] != "seat.replaced" or not p["data"]["yours"] for p in payloads(new))
    assert any(p["data"].get("view") for p in payloads(new))


def test_no_digest_or_reminder_goes_to_a_former_holder(
        nkontor: Kontor, nclient: Any, notify_settings: Settings, mailbox: Mailbox) -> None:
    gid, host, _ = mail_game(nkontor, nclient, {s: {"email": f"s{s}@example.org", "delivery": "digest",
                                                    "reminder_lead": notify_settings.max_step_seconds}
                                                for s in (0, 1, 2)})
    work_all(notify_settings)
    for _ in range(2):
        default_step(nkontor, gid)
        work_all(notify_settings)
    assert nkontor.r.llen(nkontor.store.key(gid, "digest", 1)) > 0  # the former holder had news waiting
    before = len(mailbox.to("s1@example.org"))
    heir = hand_on(nclient, host, gid, 1)
    work_all(notify_settings)
    assert len(mailbox.to("s1@example.org")) == before + 1  # the farewell, at once
    far = nkontor.now() + 10 * notify_settings.digest_interval
    assert send_digests(nkontor, far) >= 1
    remind(nkontor, far - notify_settings.digest_interval * 9.5)
    work_all(notify_settings)
    assert len(mailbox.to("s1@example.org")) == before + 1
    assert [d for d in deliveries(nkontor, gid, 1) if d["target"] == "s1@example.org"][-1].get("former")
    # The new holder's own digest address gets the seat's news from their time on.
    nclient.put(f"/games/{gid}/seats/1/contact", json={"email": NEW, "delivery": "digest"}, headers=heir.bearer())
    default_step(nkontor, gid)
    work_all(notify_settings)
    send_digests(nkontor, nkontor.now() + 20 * notify_settings.digest_interval)
    work_all(notify_settings)
    assert mailbox.to(NEW) and len(mailbox.to("s1@example.org")) == before + 1


def test_a_contact_stored_without_a_key_is_told_and_dropped_at_the_next_change(
        nkontor: Kontor, nclient: Any, notify_settings: Settings, mailbox: Mailbox) -> None:
    gid, host, _ = mail_game(nkontor, nclient, {})
    nkontor.store.set_contact(gid, 1, {"email": OLD, "email_status": "ok", "delivery": "asked"})  # no kid
    default_step(nkontor, gid)
    work_all(notify_settings)
    play_until_asked(nkontor, notify_settings, gid, 1)
    before = len(mailbox.to(OLD))
    assert before >= 1  # it is the holder's contact until the seat changes hands
    hand_on(nclient, host, gid, 1)
    for _ in range(3):
        default_step(nkontor, gid)
        work_all(notify_settings)
    after = mailbox.to(OLD)[before:]
    assert len(after) == 1
    assert_farewell(after[0], gid, bot=False)
    assert 1 not in nkontor.store.contacts(gid)
