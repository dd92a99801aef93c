"""Contact settings and the notices every channel renders: who may set and read what,
what a notice holds (only the seat's own view and the events it may see), the fan-out
after a commit, digest and unsubscribe rules, the state a late notice is built from,
and the secret reply addresses."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from typing import Any

import pytest

from engine.core import registry
from engine.core.events import visible_to
from engine.haendler.view import HIDDEN_PLAYER_FIELDS
from service import words
from service.channels.notify import Notifier, parse_reply_address, reply_address
from service.config import Settings
from service.core.kontor import Kontor
from tests.service.channels import work_all
from tests.service.conftest import default_step, domain_game, new_game, problem

# The tests whose requests reach the store's scripts run also with the store on a Valkey
# Cluster and the queue on a Valkey of its own (issue 24, marker `cluster`); the refusals of
# a malformed body are made before the store is asked, and what a notice may hold (its
# redaction) is cut from a state whatever store it came from (a late notice's state read
# back from the store, and the fan-out, do run on the cluster).

GAME = registry.get("haendler")
SEATS = 4


# -- contact settings over HTTP ------------------------------------------------------------
@pytest.mark.cluster
def test_a_seat_sets_and_reads_its_contact(nclient: Any) -> None:
    host, players = new_game(nclient, 2)
    gid, p0 = host.game, players[0]
    r = nclient.put(f"/games/{gid}/seats/0/contact", headers=p0.bearer(), json={
        "email": "Ada@Example.org", "timezone": "Europe/Berlin", "reminder_lead": 3600, "delivery": "digest"})
    assert r.status_code == 200, r.json
    assert r.json["email"] == "Ada@example.org"  # the domain is normalized, the local part kept
    assert (r.json["timezone"], r.json["reminder_lead"], r.json["delivery"]) == ("Europe/Berlin", 3600, "digest")
    assert r.json["email_status"] == "ok" and "webhook_secret" not in r.json
    got = nclient.get(f"/games/{gid}/seats/0/contact", headers=p0.bearer()).json
    assert got["email"] == "Ada@example.org" and got["delivery"] == "digest"
    # Fields left out keep their value; null clears.
    r = nclient.put(f"/games/{gid}/seats/0/contact", headers=p0.bearer(), json={"reminder_lead": None})
    assert r.json["reminder_lead"] is None and r.json["email"] == "Ada@example.org"


@pytest.mark.cluster
def test_the_webhook_secret_is_shown_once(nclient: Any, hooks: Any) -> None:
    host, players = new_game(nclient, 2)
    gid, p0 = host.game, players[0]
    r = nclient.put(f"/games/{gid}/seats/0/contact", headers=p0.bearer(), json={"webhook_url": hooks.url("/a")})
    secret = r.json["webhook_secret"]
    assert secret.startswith("whsec_") and r.json["webhook_status"] == "active"
    got = nclient.get(f"/games/{gid}/seats/0/contact", headers=p0.bearer())
    assert "webhook_secret" not in got.json and got.json["webhook_secret_set"] is True
    assert secret not in got.get_data(as_text=True)
    # The same URL again keeps the secret (not shown); a rotation makes a new one.
    again = nclient.put(f"/games/{gid}/seats/0/contact", headers=p0.bearer(), json={"webhook_url": hooks.url("/a")})
    assert "webhook_secret" not in again.json
    rotated = nclient.put(f"/games/{gid}/seats/0/contact", headers=p0.bearer(), json={"rotate_secret": True})
    assert rotated.json["webhook_secret"].startswith("whsec_") and rotated.json["webhook_secret"] != secret


@pytest.mark.cluster
def test_only_the_seat_sets_its_contact_and_the_host_sees_it_masked(nclient: Any) -> None:
    host, players = new_game(nclient, 2)
    gid, p0, p1 = host.game, players[0], players[1]
    nclient.put(f"/games/{gid}/seats/0/contact", headers=p0.bearer(), json={"email": "ada@example.org"})
    problem(nclient.put(f"/games/{gid}/seats/0/contact", headers=p1.bearer(), json={"email": "x@example.org"}),
            403, "wrong_seat")
    problem(nclient.put(f"/games/{gid}/seats/0/contact", headers=host.bearer(), json={"email": "x@example.org"}),
            403, "wrong_seat")
    problem(nclient.get(f"/games/{gid}/seats/0/contact", headers=p1.bearer()), 403, "wrong_seat")
    problem(nclient.get(f"/games/{gid}/seats/0/contact"), 401, "authentication_required")
    seen = nclient.get(f"/games/{gid}/seats/0/contact", headers=host.bearer()).json
    assert seen["email"] == "a***@example.org" and seen["email_status"] == "ok"


@pytest.mark.parametrize(("body", "status", "code"), [
    ({"email": "not an address"}, 422, "bad_email"),
    ({"email": "a@b"}, 422, "bad_email"),
    ({"timezone": "Mars/Olympus"}, 422, "bad_timezone"),
    ({"reminder_lead": 0}, 422, "invalid_request"),
    ({"delivery": "hourly"}, 422, "invalid_request"),
    ({"webhook_url": "ftp://example.org/x"}, 422, "webhook_target_refused"),
    ({"rotate_secret": True}, 422, "invalid_request"),
    ({"colour": "blue"}, 422, "invalid_request"),
])
def test_bad_contact_settings_are_refused_and_change_nothing(nclient: Any, nkontor: Kontor, body: dict[str, Any],
                                                             status: int, code: str) -> None:
    host, players = new_game(nclient, 2)
    gid, p0 = host.game, players[0]
    nclient.put(f"/games/{gid}/seats/0/contact", headers=p0.bearer(), json={"email": "ada@example.org"})
    before = nkontor.store.contact(gid, 0)
    problem(nclient.put(f"/games/{gid}/seats/0/contact", headers=p0.bearer(), json=body), status, code)
    assert nkontor.store.contact(gid, 0) == before


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/x", "http://localhost/x", "http://10.0.0.1/x",
                                 "http://192.168.1.1/x", "http://169.254.169.254/latest", "http://[::1]/x",
                                 "http://user:pw@example.org/x"])
def test_webhooks_to_loopback_or_private_targets_are_refused_by_default(client: Any, url: str) -> None:
    host, players = new_game(client, 2)
    r = client.put(f"/games/{host.game}/seats/0/contact", headers=players[0].bearer(), json={"webhook_url": url})
    problem(r, 422, "webhook_target_refused")


# -- notices: the redaction point --------------------------------------------------------
def played_state(kontor: Kontor, worker: Any, steps: int = 30) -> tuple[str, list[Any]]:
    """A 4-seat game played by random bots (money and hands apart) for `steps` steps and
    on until some event is private, with the state after each commit."""
    gid, _ = domain_game(kontor, SEATS, seed="redaction-random-B3")
    bot = registry.bots("haendler")["random"]
    states = [kontor.store.state(gid)]
    for n in range(200):
        if n >= steps and any(ev["visible_to"] != "all" for _, ev, _ in kontor.store.events(gid, 0, 10_000)):
            break
        ph = kontor.current_phase(gid, "public")
        state = kontor.store.state(gid)
        for req in GAME.requests(state):
            order = bot(f"redaction-random-B3/{ph['id']}/{req.seat}").order(GAME, state, req)
            kontor.submit(gid, ph["id"], req.seat, order, via="t")
        worker()
        states.append(kontor.store.state(gid))
    return gid, states


def notices_of(kontor: Kontor, gid: str, state: Any, seat: int) -> list[dict[str, Any]]:
    meta = kontor.store.meta(gid)
    last = int(meta["event_seq"])
    events = kontor.store.events_between(gid, 1, last)
    closing = int(kontor.store.phase(gid)["id"]) - 1
    return Notifier(kontor).commit_notices(gid, meta, kontor.store.seats(gid), closing, state, "2000000000", events,
                                           seat)


def test_a_notice_holds_only_the_seats_view_and_the_events_it_may_see(kontor: Kontor, worker: Any) -> None:
    gid, states = played_state(kontor, worker)
    state = states[-1]
    all_events = [ev for _, ev, _ in kontor.store.events_between(gid, 1, int(kontor.store.meta(gid)["event_seq"]))]
    assert any(ev["visible_to"] != "all" for ev in all_events), "the game made no private event to test with"
    assert not state["over"]
    for seat in range(SEATS):
        for notice in notices_of(kontor, gid, state, seat):
            assert notice["seat"] == seat
            if "view" in notice:
                assert notice["view"] == GAME.view(state, seat)
                for j, player in enumerate(notice["view"]["players"]):
                    assert (set(HIDDEN_PLAYER_FIELDS) <= set(player)) == (j == seat)
            for ev in notice.get("events", []):
                assert visible_to(ev, seat)
            text = json.dumps(notice)
            assert "rng" not in notice.get("view", {}) and '"seed"' not in text
            # The words: built from the same view and events, with the seats' names.
            names = notice["names"]
            assert names == [f"P{j}" for j in range(SEATS)]
            assert notice["sentences"] == [s for e in notice["events"] if (s := words.describe(GAME, e, names))]
            assert notice["summary"] == GAME.summary(notice["view"], names)
            assert notice["headline"] == GAME.headline(notice["view"])
            if notice.get("request"):
                [req] = [r for r in GAME.requests(state) if r.seat == seat]
                assert notice["asked"] == words.asked_text(GAME, req, notice["view"], names)
            else:
                assert "asked" not in notice


def test_changing_another_seats_hidden_fields_never_changes_a_notice(kontor: Kontor, worker: Any) -> None:
    """Not the JSON, nor the words: the sentences, the summary and what is asked."""
    gid, states = played_state(kontor, worker)
    state = states[-1]
    assert not state["over"]
    for i in range(SEATS):
        notices = notices_of(kontor, gid, state, i)
        assert all(n["sentences"] is not None and n["summary"] for n in notices)
        before = json.dumps(notices, sort_keys=True)
        for j in range(SEATS):
            if j == i:
                continue
            other = copy.deepcopy(state)
            other["players"][j]["money"] = 987_653
            hand = other["players"][j]["hand"]
            for card in hand:
                hand[card] += 3
            changed = notices_of(kontor, gid, other, i)
            assert json.dumps(changed, sort_keys=True) == before, (i, j)
            words_of = json.dumps([[n["sentences"], n["summary"], n.get("asked")] for n in changed])
            assert "987653" not in words_of and "987,653" not in words_of
        # Its own money, changed, does show in its own summary (the words are not empty of it).
        mine = copy.deepcopy(state)
        mine["players"][i]["money"] = 987_653
        assert any("987,653" in n["summary"] or "987653" in n["summary"] for n in notices_of(kontor, gid, mine, i))


@pytest.mark.cluster
def test_a_late_notice_is_built_from_the_state_of_its_own_step(kontor: Kontor, worker: Any) -> None:
    """`state_at` rebuilds an earlier step's state from the seed and the orders when
    later steps were committed before the notify job ran."""
    gid, states = played_state(kontor, worker, steps=12)
    for closing in (0, 1, 5, 11, 12):
        _, state = kontor.state_at(gid, closing)
        assert json.dumps(state, sort_keys=True) == json.dumps(states[closing], sort_keys=True), closing


# -- the fan-out ---------------------------------------------------------------------------
@pytest.mark.cluster
def test_a_commit_makes_a_delivery_per_channel_only_for_seats_with_a_contact(
        nkontor: Kontor, notify_settings: Settings, mailbox: Any, hooks: Any) -> None:
    gid, players = domain_game(nkontor, 3)
    nkontor.store.set_contact(gid, 0, {"email": "p0@players.test", "email_status": "ok", "timezone": "UTC",
                                       "delivery": "immediate"})
    nkontor.store.set_contact(gid, 1, {"webhook_url": hooks.url("/p1"), "webhook_secret": "whsec_" + "A" * 44,
                                       "webhook_status": "active", "timezone": "UTC", "delivery": "immediate"})
    steps = 0
    while 0 not in nkontor.current_phase(gid, "public")["requested"]:
        default_step(nkontor, gid)
        work_all(notify_settings)
        steps += 1
    assert steps >= 1
    mails = list(reversed(nkontor.store.deliveries(gid, 0, 50)))
    hooks_made = nkontor.store.deliveries(gid, 1, 50)
    # Email (`every` mode): the run of steps up to the one that asks the seat in one mail
    # (the steps that opened for others say nothing more than what resolved); webhooks:
    # one delivery per notice (a step.resolved and a step.opened per step).
    assert [d["channel"] for d in mails] == ["email"], (steps, [d["types"] for d in mails])
    assert mails[0]["types"] == ["step.resolved"] * steps + ["step.opened"]
    assert {d["channel"] for d in hooks_made} == {"webhook"} and len(hooks_made) == 2 * steps
    assert nkontor.store.deliveries(gid, 2, 50) == []


@pytest.mark.cluster
def test_digest_mode_keeps_what_is_not_urgent(nkontor: Kontor, notify_settings: Settings) -> None:
    gid, _ = domain_game(nkontor, 3)
    contact = {"email": "p0@players.test", "email_status": "ok", "timezone": "UTC", "delivery": "digest"}
    notifier = Notifier(nkontor)
    resolved = {"type": "step.resolved", "phase": 1, "seat": 0}
    assert notifier.dispatch(gid, 0, contact, [resolved]) == []
    assert nkontor.r.zscore(nkontor.store.digests_key(gid), f"{gid}:0") is not None
    # A step that asks the seat something is sent at once, digest or not.
    asked = {"type": "step.opened", "phase": 2, "seat": 0, "request": {"kind": "buy"}}
    made = notifier.dispatch(gid, 0, contact, [asked])
    assert len(made) == 1 and nkontor.store.delivery(gid, made[0])["status"] == "queued"
    assert nkontor.store.take_digest(gid, 0) == [resolved]


@pytest.mark.cluster
def test_nothing_is_sent_to_an_unsubscribed_address(nkontor: Kontor) -> None:
    gid, _ = domain_game(nkontor, 2)
    contact = {"email": "Gone@Players.test", "email_status": "ok", "timezone": "UTC", "delivery": "immediate"}
    nkontor.store.set_unsubscribed("gone@players.test")
    made = Notifier(nkontor).dispatch(gid, 0, contact, [{"type": "game.finished", "phase": 9, "seat": 0}])
    assert nkontor.store.delivery(gid, made[0])["status"] == "suppressed"
    assert not nkontor.rq.exists(f"rq:job:mail-{made[0]}-1")


# -- reply addresses -------------------------------------------------------------------------
@pytest.mark.cluster
def test_a_reply_address_names_its_step_and_cannot_be_forged(nkontor: Kontor, notify_settings: Settings) -> None:
    address = reply_address(nkontor, "ab12cd34ef", 17, 2)
    assert address.endswith("@kontor.test")
    assert parse_reply_address(nkontor, address) == ("ab12cd34ef", 17, 2)
    assert parse_reply_address(nkontor, address.upper().replace("@KONTOR.TEST", "@kontor.test")) == (
        "ab12cd34ef", 17, 2)
    forged = address.replace(".17.2.", ".17.1.")
    assert parse_reply_address(nkontor, forged) is None
    assert parse_reply_address(nkontor, address.replace("kontor.test", "elsewhere.test")) is None
    other = Kontor(replace(notify_settings, secret="another-secret"))
    assert parse_reply_address(other, address) is None
