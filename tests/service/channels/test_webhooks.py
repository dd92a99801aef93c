"""Webhooks per Standard Webhooks, against a real HTTP receiver on loopback that verifies
every delivery with the `standardwebhooks` reference library: a whole game followed by
webhook, signing and retries (one id, a new signature per attempt), 410 and a used-up
schedule disabling the webhook, targets refused, secret rotation, the deliveries list,
and redaction (a webhook to seat i never holds seat j's hidden fields)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any

import pytest
from standardwebhooks import Webhook, WebhookVerificationError

from engine.core import registry
from engine.haendler.view import HIDDEN_PLAYER_FIELDS
from service.channels.notify import Notifier, new_webhook_secret
from service.channels.webhook.deliver import (
    MAX_PAYLOAD,
    RETRY_AFTER_CAP,
    Answer,
    check_target,
    deliver,
    next_delay,
    payload,
)
from service.config import Settings
from service.core.errors import Problem
from service.core.kontor import Kontor
from tests.service.channels import Hooks, free_port, work_all
from tests.service.conftest import Player, default_step, domain_game, new_game, problem, wait_until, work

GAME = registry.get("haendler")


# -- helpers ---------------------------------------------------------------------------------
def hook_up(nclient: Any, player: Player, hooks: Hooks, path: str) -> str:
    """Point the player's seat at `path` on the receiver through the API; the secret,
    which the receiver then verifies with."""
    r = nclient.put(f"/games/{player.game}/seats/{player.seat}/contact", json={"webhook_url": hooks.url(path)},
                    headers=player.bearer())
    assert r.status_code == 200, r.json
    hooks.secrets[path] = r.json["webhook_secret"]
    return str(r.json["webhook_secret"])


def one_delivery(k: Kontor, gid: str, seat: int) -> str:
    """Queue exactly one webhook delivery to `seat` (the first notice of the game's start),
    through the real fan-out; its id."""
    meta = k.store.meta(gid)
    events = k.store.events_between(gid, 1, int(meta["event_seq"]))
    notices = Notifier(k).commit_notices(gid, meta, k.store.seats(gid), 0, k.store.state(gid), "2000000000",
                                         events, seat)
    [did] = Notifier(k).dispatch(gid, seat, k.store.contact(gid, seat) or {}, notices[:1])
    return did


def play_out(k: Kontor, settings: Settings, gid: str, limit: int = 300) -> dict[int, Any]:
    """Answer every step with default orders (bots answer for themselves) to the end; the
    states seen on the way, by the step whose commit made them."""
    states: dict[int, Any] = {}
    for _ in range(limit):
        if k.store.meta(gid)["status"] == "finished":
            work_all(settings)
            return states
        default_step(k, gid)
        work(settings)
        states[int(k.store.phase(gid)["id"]) - 1] = k.store.state(gid)
    raise AssertionError(f"game {gid} not over within {limit} steps")


def webhooks_of(k: Kontor, gid: str, seat: int) -> list[dict[str, Any]]:
    return [d for d in k.store.deliveries(gid, seat, 500) if d["channel"] == "webhook"]


def as_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


# -- a whole game ------------------------------------------------------------------------------
# (not on the cluster leg: slow, and the same store calls as the tests above)
def test_a_whole_game_is_followed_by_webhooks_that_all_verify_and_show_only_the_seats_view(
        nclient: Any, nkontor: Kontor, notify_settings: Settings, hooks: Hooks) -> None:
    gid, players = domain_game(nkontor, 2, bots={1: "random"})
    names = [nkontor.store.seats(gid)[s]["name"] for s in range(2)]
    hook_up(nclient, players[0], hooks, "/s0")
    states = play_out(nkontor, notify_settings, gid)

    got = hooks.at("/s0")
    made = webhooks_of(nkontor, gid, 0)
    assert got and all(h.verified for h in got), [h.error for h in got if not h.verified]
    assert sorted(h.headers["webhook-id"] for h in got) == sorted(d["id"] for d in made)
    assert {d["status"] for d in made} == {"sent"} and {d["attempts"] for d in made} == {1}
    assert {"step.opened", "step.resolved", "game.finished"} <= {h.payload["type"] for h in got}
    final = nkontor.store.state(gid)
    for hook in got:
        assert hook.headers["content-type"] == "application/json"
        assert hook.headers["user-agent"] == "Kontor-Webhooks/1"
        assert len(hook.body) < MAX_PAYLOAD
        body = hook.payload
        assert set(body) == {"type", "timestamp", "data"} and body["timestamp"] == body["data"]["at"]
        data = body["data"]
        assert data["game"] == gid and data["seat"] == 0 and "type" not in data
        for j, player in enumerate(data["view"]["players"]):  # (an ended game is an open book)
            hidden_shown = set(HIDDEN_PLAYER_FIELDS) <= set(player)
            assert hidden_shown == (j == 0 or data["view"]["over"]), (body["type"], data["phase"], j)
        if body["type"] == "step.resolved" and data["phase"] in states:
            assert data["view"] == as_json(GAME.view(states[data["phase"]], 0))
        if body["type"] == "game.finished":
            assert data["view"] == as_json(GAME.view(final, 0)) and data["ranking"]
        # The words beside the JSON: the seat's names, the summary of its view, the
        # sentences of its events; what is asked when something is.
        assert data["names"] == names and names[1].endswith(" (random bot)")
        assert all(isinstance(x, str) for x in data["sentences"])
        assert data["summary"] == GAME.summary(data["view"], data["names"])
        assert data["headline"] == GAME.headline(data["view"])
        assert ("asked" in data) == bool(data.get("request")), (body["type"], data["phase"])
        assert not re.search(r"\bphase \d", re.sub(r"round \d+, phase \d+", "", json.dumps(
            [data["sentences"], data.get("asked")], ensure_ascii=False)))
    assert len([h for h in got if h.payload["type"] == "step.resolved" and h.payload["data"]["phase"] in states]) > 10


# -- signing and retries ----------------------------------------------------------------------
@pytest.mark.cluster
def test_retries_keep_the_webhook_id_until_the_receiver_takes_it(
        nclient: Any, nkontor: Kontor, notify_settings: Settings, hooks: Hooks) -> None:
    host, players = new_game(nclient, 2)
    hook_up(nclient, players[0], hooks, "/s0")
    hooks.answers["/s0"] = [500, 502]
    did = one_delivery(nkontor, host.game, 0)
    work_all(notify_settings)
    got = hooks.at("/s0")
    assert len(got) == 3 and all(h.verified for h in got)
    assert {h.headers["webhook-id"] for h in got} == {did}
    rec = nkontor.store.delivery(host.game, did)
    assert (rec["status"], rec["attempts"], rec["last_status"], rec["next_attempt_at"]) == ("sent", 3, 204, None)


@pytest.mark.cluster
def test_every_attempt_is_signed_anew_with_its_own_timestamp(
        nclient: Any, nkontor: Kontor, hooks: Hooks) -> None:
    host, players = new_game(nclient, 2)
    hook_up(nclient, players[0], hooks, "/s0")
    hooks.answers["/s0"] = [503]
    did = one_delivery(nkontor, host.game, 0)
    assert deliver(nkontor, host.game, did, 1) == "retrying"
    rec = nkontor.store.delivery(host.game, did)
    assert (rec["attempts"], rec["last_status"], rec["last_error"]) == (1, 503, "HTTP 503") and rec["next_attempt_at"]
    first = hooks.at("/s0")[0]
    wait_until(lambda: int(nkontor.now()) > int(first.headers["webhook-timestamp"]), timeout=3)
    assert deliver(nkontor, host.game, did, 2) == "sent"
    second = hooks.at("/s0")[1]
    assert first.verified and second.verified and first.body == second.body
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == did
    assert int(second.headers["webhook-timestamp"]) > int(first.headers["webhook-timestamp"])
    assert first.headers["webhook-signature"] != second.headers["webhook-signature"]


@pytest.mark.cluster
def test_a_duplicate_job_sends_nothing(nclient: Any, nkontor: Kontor, notify_settings: Settings,
                                       hooks: Hooks) -> None:
    host, players = new_game(nclient, 2)
    hook_up(nclient, players[0], hooks, "/s0")
    did = one_delivery(nkontor, host.game, 0)
    work_all(notify_settings)
    assert deliver(nkontor, host.game, did, 1) == "noop"
    assert len(hooks.at("/s0")) == 1


@pytest.mark.cluster
def test_a_wrong_secret_fails_verification(nclient: Any, nkontor: Kontor, notify_settings: Settings,
                                           hooks: Hooks) -> None:
    host, players = new_game(nclient, 2)
    hook_up(nclient, players[0], hooks, "/s0")
    hooks.secrets["/s0"] = new_webhook_secret()
    one_delivery(nkontor, host.game, 0)
    work_all(notify_settings)
    [hook] = hooks.at("/s0")
    assert not hook.verified and hook.error == "No matching signature found"


@pytest.mark.cluster
def test_a_rotated_secret_signs_the_deliveries_after_it(nclient: Any, nkontor: Kontor, notify_settings: Settings,
                                                        hooks: Hooks) -> None:
    host, players = new_game(nclient, 2)
    old = hook_up(nclient, players[0], hooks, "/s0")
    r = nclient.put(f"/games/{host.game}/seats/0/contact", json={"rotate_secret": True}, headers=players[0].bearer())
    new = r.json["webhook_secret"]
    assert new != old
    hooks.secrets["/s0"] = new
    one_delivery(nkontor, host.game, 0)
    work_all(notify_settings)
    [hook] = hooks.at("/s0")
    assert hook.verified
    with pytest.raises(WebhookVerificationError):
        Webhook(old).verify(hook.body, hook.headers)


# -- failures: 410, a used-up schedule, no connection ---------------------------------------------
@pytest.mark.cluster
def test_410_disables_the_webhook_and_later_notices_make_no_delivery(
        nclient: Any, nkontor: Kontor, notify_settings: Settings, hooks: Hooks) -> None:
    host, players = new_game(nclient, 2)
    gid = host.game
    hook_up(nclient, players[0], hooks, "/s0")
    hooks.answers["/s0"] = [410]
    default_step(nkontor, gid)
    work_all(notify_settings)
    made = webhooks_of(nkontor, gid, 0)
    assert len(hooks.at("/s0")) == 1
    assert {d["status"] for d in made} == {"disabled"}
    assert [d["last_status"] for d in made if d["attempts"]] == [410]
    contact = nclient.get(f"/games/{gid}/seats/0/contact", headers=host.bearer()).json
    assert contact["webhook_status"] == "disabled" and "410" in contact["last_error"]
    default_step(nkontor, gid)
    work_all(notify_settings)
    assert webhooks_of(nkontor, gid, 0) == made and len(hooks.at("/s0")) == 1


@pytest.mark.cluster
def test_a_used_up_schedule_fails_the_delivery_and_disables_the_webhook(
        nclient: Any, nkontor: Kontor, notify_settings: Settings, hooks: Hooks) -> None:
    """The test schedule has four attempts; a redirect is a failure, not followed."""
    host, players = new_game(nclient, 2)
    gid = host.game
    hook_up(nclient, players[0], hooks, "/s0")
    hooks.answers["/s0"] = [500, 429, 503, 302]
    did = one_delivery(nkontor, gid, 0)
    work_all(notify_settings)
    assert len(hooks.at("/s0")) == 4 and all(h.verified for h in hooks.at("/s0"))
    rec = nkontor.store.delivery(gid, did)
    assert (rec["status"], rec["attempts"], rec["last_status"], rec["last_error"]) == ("failed", 4, 302, "HTTP 302")
    contact = nkontor.store.contact(gid, 0)
    assert contact["webhook_status"] == "disabled" and "4 attempts failed" in contact["last_error"]
    default_step(nkontor, gid)
    work_all(notify_settings)
    assert [d["id"] for d in webhooks_of(nkontor, gid, 0)] == [did] and len(hooks.at("/s0")) == 4
    # Setting the URL again re-enables it (with the same secret).
    r = nclient.put(f"/games/{gid}/seats/0/contact", json={"webhook_url": hooks.url("/s0")},
                    headers=players[0].bearer())
    assert r.json["webhook_status"] == "active" and "webhook_secret" not in r.json


@pytest.mark.cluster
def test_a_connection_error_is_retried_with_its_reason(nclient: Any, nkontor: Kontor) -> None:
    host, players = new_game(nclient, 2)
    url = f"http://127.0.0.1:{free_port()}/nobody"
    r = nclient.put(f"/games/{host.game}/seats/0/contact", json={"webhook_url": url}, headers=players[0].bearer())
    assert r.status_code == 200, r.json
    did = one_delivery(nkontor, host.game, 0)
    assert deliver(nkontor, host.game, did, 1) == "retrying"
    rec = nkontor.store.delivery(host.game, did)
    assert (rec["status"], rec["attempts"], rec["last_status"]) == ("retrying", 1, None)
    assert rec["last_error"].startswith("ConnectionError") and rec["next_attempt_at"]
    assert nkontor.rq.exists(f"rq:job:webhook-{did}-2")


# -- a delivery whose webhook changed before it went out ---------------------------------------------
@pytest.mark.parametrize(("change", "status"), [
    ({"webhook_url": "/elsewhere"}, "skipped"),
    ({"webhook_url": None}, "skipped"),
    ({"webhook_status": "disabled"}, "disabled"),
])
@pytest.mark.cluster
def test_a_delivery_to_a_changed_webhook_makes_no_request(
        nclient: Any, nkontor: Kontor, notify_settings: Settings, hooks: Hooks, change: dict[str, Any],
        status: str) -> None:
    host, players = new_game(nclient, 2)
    hook_up(nclient, players[0], hooks, "/s0")
    did = one_delivery(nkontor, host.game, 0)
    if change.get("webhook_url"):
        hook_up(nclient, players[0], hooks, change["webhook_url"])
    elif "webhook_url" in change:
        nclient.put(f"/games/{host.game}/seats/0/contact", json=change, headers=players[0].bearer())
    else:
        nkontor.store.update_contact(host.game, 0, **change)
    work_all(notify_settings)
    assert hooks.received == []
    rec = nkontor.store.delivery(host.game, did)
    assert (rec["status"], rec["attempts"]) == (status, 0) and rec["last_error"]


# -- targets -------------------------------------------------------------------------------------------
@pytest.mark.cluster
def test_a_loopback_target_is_refused_unless_the_settings_allow_it(client: Any, kontor: Kontor,
                                                                   hooks: Hooks) -> None:
    host, players = new_game(client, 2)
    r = client.put(f"/games/{host.game}/seats/0/contact", json={"webhook_url": hooks.url("/s0")},
                   headers=players[0].bearer())
    problem(r, 422, "webhook_target_refused")
    assert kontor.store.contact(host.game, 0) is None


@pytest.mark.parametrize(("url", "allowed_by"), [
    ("http://127.0.0.1/x", "webhook_allow_loopback"),
    ("http://localhost/x", "webhook_allow_loopback"),
    ("http://[::1]/x", "webhook_allow_loopback"),
    ("http://10.0.0.1/x", "webhook_allow_private"),
    ("http://192.168.1.1/x", "webhook_allow_private"),
    ("http://169.254.169.254/latest/meta-data", "webhook_allow_private"),
    ("ftp://example.org/x", None),
    ("file:///etc/passwd", None),
])
@pytest.mark.cluster
def test_targets_on_loopback_and_private_networks_are_refused_by_default(url: str, allowed_by: str | None) -> None:
    with pytest.raises(Problem) as refused:
        check_target(url, Settings())
    assert refused.value.code == "webhook_target_refused"
    if allowed_by:
        assert check_target(url, replace(Settings(), **{allowed_by: True}))
    else:
        with pytest.raises(Problem):
            check_target(url, replace(Settings(), webhook_allow_loopback=True, webhook_allow_private=True))


@pytest.mark.cluster
def test_a_target_refused_at_delivery_time_fails_without_a_request(
        nclient: Any, nkontor: Kontor, notify_settings: Settings, hooks: Hooks) -> None:
    """The target is checked again when the delivery goes out (its name may resolve
    elsewhere by then); the refusal is final for the delivery, the webhook stays on."""
    host, players = new_game(nclient, 2)
    hook_up(nclient, players[0], hooks, "/s0")
    did = one_delivery(nkontor, host.game, 0)
    strict = Kontor(replace(notify_settings, webhook_allow_loopback=False))
    assert deliver(strict, host.game, did, 1) == "failed"
    assert hooks.received == []
    rec = nkontor.store.delivery(host.game, did)
    assert rec["status"] == "failed" and rec["last_error"].startswith("target refused")
    contact = nkontor.store.contact(host.game, 0)
    assert contact["webhook_status"] == "active" and contact["last_error"] == rec["last_error"]


# -- the deliveries list -------------------------------------------------------------------------------
@pytest.mark.cluster
def test_deliveries_are_listed_for_the_seat_and_masked_for_the_host(
        nclient: Any, nkontor: Kontor, notify_settings: Settings, hooks: Hooks) -> None:
    host, players = new_game(nclient, 2)
    gid = host.game
    hook_up(nclient, players[0], hooks, "/s0")
    did = one_delivery(nkontor, gid, 0)
    work_all(notify_settings)
    r = nclient.get(f"/games/{gid}/seats/0/deliveries", headers=players[0].bearer())
    assert r.status_code == 200, r.json
    [mine] = r.json
    assert (mine["id"], mine["channel"], mine["status"], mine["attempts"], mine["last_status"]) == (
        did, "webhook", "sent", 1, 204)
    assert mine["target"] == hooks.url("/s0") and "payload" not in mine
    [seen] = nclient.get(f"/games/{gid}/seats/0/deliveries", headers=host.bearer()).json
    assert seen["target"] == hooks.url("/s0").rsplit("/", 1)[0] + "/***"
    problem(nclient.get(f"/games/{gid}/seats/0/deliveries", headers=players[1].bearer()), 403, "wrong_seat")


# -- the payload and the schedule -------------------------------------------------------------------------
@pytest.mark.cluster
def test_the_payload_is_the_notice_as_standard_webhooks_data() -> None:
    notice = {"type": "message.received", "game": "g1", "seat": 0, "at": "2030-01-02T03:04:05.000+00:00",
              "message": {"text": "Grüße aus Köln"}, "links": {"game": "http://kontor.test/games/g1"}}
    body = payload(notice, "w_g1_1")
    assert "Grüße".encode() in body and b": " not in body
    assert json.loads(body) == {"type": "message.received", "timestamp": notice["at"],
                                "data": {k: v for k, v in notice.items() if k != "type"}}


@pytest.mark.cluster
def test_a_payload_too_large_goes_without_the_view() -> None:
    notice = {"type": "step.opened", "at": "2030-01-02T03:04:05.000+00:00", "phase": 3,
              "view": {"board": ["x" * 100] * 300}, "links": {"view": "http://kontor.test/games/g1/view"}}
    body = payload(notice, "w_g1_2")
    assert len(body) < MAX_PAYLOAD
    data = json.loads(body)["data"]
    assert "view" not in data and data["links"] == notice["links"] and data["phase"] == 3


@pytest.mark.cluster
def test_the_retry_schedule_has_jitter_and_honours_a_longer_retry_after() -> None:
    schedule = [0.0, 10.0, 20.0]
    now = 1_900_000_000.0
    assert 8.0 <= next_delay(schedule, 1, Answer(500), now) <= 12.0  # type: ignore[operator]
    assert 16.0 <= next_delay(schedule, 2, Answer(error="ReadTimeout"), now) <= 24.0  # type: ignore[operator]
    assert next_delay(schedule, 3, Answer(500), now) is None
    assert next_delay(schedule, 1, Answer(429, "100"), now) == 100.0
    assert 8.0 <= next_delay(schedule, 1, Answer(429, "1"), now) <= 12.0  # type: ignore[operator]
    assert 8.0 <= next_delay(schedule, 1, Answer(500, "100"), now) <= 12.0  # type: ignore[operator]
    date = format_datetime(datetime.fromtimestamp(now + 300, UTC), usegmt=True)
    assert next_delay(schedule, 1, Answer(503, date), now) == 300.0
    assert next_delay(schedule, 1, Answer(503, "10000000"), now) == RETRY_AFTER_CAP
    assert 8.0 <= next_delay(schedule, 1, Answer(503, "soon"), now) <= 12.0  # type: ignore[operator]


# -- manual replay ---------------------------------------------------------------------------
@pytest.mark.cluster
def test_a_disabled_delivery_is_retried_by_hand_with_the_same_webhook_id(
        nclient: Any, nkontor: Kontor, notify_settings: Settings, hooks: Hooks) -> None:
    host, players = new_game(nclient, 2)
    gid, p0 = host.game, players[0]
    hook_up(nclient, p0, hooks, "/s0")
    hooks.answers["/s0"] = [410]
    did = one_delivery(nkontor, gid, 0)
    work_all(notify_settings)
    assert nkontor.store.delivery(gid, did)["status"] == "disabled"
    url = f"/games/{gid}/seats/0/deliveries/{did}/retry"
    # Still disabled: refused, nothing queued; the host and other seats may not retry.
    problem(nclient.post(url, headers=p0.bearer()), 409, "delivery_not_failed")
    problem(nclient.post(url, headers=players[1].bearer()), 403, "wrong_seat")
    problem(nclient.post(url, headers=host.bearer()), 403, "wrong_seat")
    problem(nclient.post(f"/games/{gid}/seats/0/deliveries/w_nope/retry", headers=p0.bearer()), 404, "not_found")
    # Setting the URL again re-enables it (same secret); then the retry goes through.
    nclient.put(f"/games/{gid}/seats/0/contact", json={"webhook_url": hooks.url("/s0")}, headers=p0.bearer())
    r = nclient.post(url, headers=p0.bearer())
    assert r.status_code == 202 and r.json["status"] == "retrying", r.json
    work_all(notify_settings)
    assert nkontor.store.delivery(gid, did)["status"] == "sent"
    got = hooks.at("/s0")
    assert len(got) == 2 and got[1].verified and got[0].headers["webhook-id"] == got[1].headers["webhook-id"] == did
    problem(nclient.post(url, headers=p0.bearer()), 409, "delivery_not_failed")
