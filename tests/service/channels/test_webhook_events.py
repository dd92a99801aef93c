"""A webhook's chosen event types (`webhook_events`): a seat's webhook gets only the
types it chose (null: every type), its choice is answered back and kept until changed
or the webhook is removed, a type that is not one (or an empty choice) is refused with
a stable code and changes nothing, and mail is not filtered."""

from __future__ import annotations

from typing import Any

import pytest

from service.channels.notify import wanted_types
from service.channels.webhook.deliver import EVENT_HELP
from service.config import Settings
from service.core.kontor import Kontor
from tests.service.channels import Hooks, Mailbox, work_all
from tests.service.channels.test_webhooks import hook_up, webhooks_of
from tests.service.conftest import default_step, new_game, problem, work

pytestmark = pytest.mark.cluster


def choose(nclient: Any, player: Any, events: list[str] | None) -> Any:
    return nclient.put(f"/games/{player.game}/seats/{player.seat}/contact", json={"webhook_events": events},
                       headers=player.bearer())


def test_a_webhook_gets_only_the_event_types_it_chose(nclient: Any, nkontor: Kontor, notify_settings: Settings,
                                                       hooks: Hooks) -> None:
    host, players = new_game(nclient, 2)
    gid = host.game
    for p in players:
        hook_up(nclient, p, hooks, f"/s{p.seat}")
    r = choose(nclient, players[0], ["game.finished", "step.opened"])
    assert r.status_code == 200, r.json
    assert r.json["webhook_events"] == ["step.opened", "game.finished"]  # the API's order, each once
    work_all(notify_settings)
    for _ in range(3):  # three commits: each tells a step resolved and one opened
        default_step(nkontor, gid)
        work(notify_settings)
    work_all(notify_settings)
    chosen = {h.payload["type"] for h in hooks.at("/s0")}
    every = {h.payload["type"] for h in hooks.at("/s1")}
    assert chosen == {"step.opened"} and every == {"step.opened", "step.resolved"}
    assert {d["type"] for d in webhooks_of(nkontor, gid, 0)} == {"step.opened"}  # none made, not only none sent
    assert len(hooks.at("/s0")) == len([h for h in hooks.at("/s1") if h.payload["type"] == "step.opened"]) >= 3


def test_a_webhooks_choice_is_kept_answered_and_cleared(nclient: Any, nkontor: Kontor, hooks: Hooks) -> None:
    host, players = new_game(nclient, 2)
    p = players[0]
    path = f"/games/{p.game}/seats/{p.seat}/contact"
    hook_up(nclient, p, hooks, "/s0")
    assert nclient.get(path, headers=p.bearer()).json["webhook_events"] is None  # every type
    assert choose(nclient, p, ["step.opened", "step.opened"]).json["webhook_events"] == ["step.opened"]
    # Other fields left out keep it, a new URL too; the host sees it.
    kept = nclient.put(path, json={"timezone": "Europe/Berlin", "webhook_url": hooks.url("/other")},
                       headers=p.bearer()).json
    assert kept["webhook_events"] == ["step.opened"]
    assert nclient.get(path, headers=host.bearer()).json["webhook_events"] == ["step.opened"]
    assert choose(nclient, p, None).json["webhook_events"] is None
    choose(nclient, p, ["game.finished"])
    gone = nclient.put(path, json={"webhook_url": None}, headers=p.bearer()).json
    assert (gone["webhook_url"], gone["webhook_events"]) == (None, None)


@pytest.mark.parametrize("events", [["step.openned"], [], ["step.opened", "message"]])
def test_a_choice_of_no_or_unknown_event_types_is_refused_and_changes_nothing(nclient: Any, nkontor: Kontor,
                                                                            hooks: Hooks,
                                                                            events: list[str]) -> None:
    host, players = new_game(nclient, 2)
    p = players[0]
    hook_up(nclient, p, hooks, "/s0")
    choose(nclient, p, ["step.opened"])
    before = nkontor.store.contact(p.game, p.seat)
    body = problem(choose(nclient, p, events), 422, "invalid_request")
    assert "webhook_events" in str(body)
    assert nkontor.store.contact(p.game, p.seat) == before


def test_a_choice_without_a_webhook_is_refused(nclient: Any, nkontor: Kontor) -> None:
    host, players = new_game(nclient, 2)
    p = players[0]
    body = problem(choose(nclient, p, ["step.opened"]), 422, "invalid_request")
    assert "webhook_url" in body["detail"]
    assert nkontor.store.contact(p.game, p.seat) is None


@pytest.mark.parametrize("events", [None, ["step.opened"]])
def test_a_type_the_api_lists_is_every_type_a_webhook_can_get(events: list[str] | None) -> None:
    """The choices are the API's `webhooks` (EVENT_HELP): a notice type made for a seat
    that is not one of them could not be chosen."""
    assert {"step.opened", "step.resolved", "game.finished", "deadline.reminder", "message.received",
            "seat.replaced"} <= set(EVENT_HELP)
    assert wanted_types({"webhook_url": "https://example.org/h", "webhook_events": events}) == (
        None if events is None else frozenset(events))


def test_mail_is_not_filtered_by_the_webhooks_choice(nclient: Any, nkontor: Kontor, notify_settings: Settings,
                                                     hooks: Hooks, mailbox: Mailbox) -> None:
    host, players = new_game(nclient, 2)
    gid, p = host.game, players[0]
    hook_up(nclient, p, hooks, "/s0")
    r = nclient.put(f"/games/{gid}/seats/0/contact", json={"webhook_events": ["game.finished"],
                                                           "email": "p0@example.org", "delivery": "every"},
                    headers=p.bearer())
    assert r.status_code == 200, r.json
    assert wanted_types(nkontor.store.contact(gid, 0) or {}) is None  # mail takes every type: all are made
    default_step(nkontor, gid)
    work(notify_settings)
    work_all(notify_settings)
    assert hooks.at("/s0") == [] and webhooks_of(nkontor, gid, 0) == []
    # The commit's step.resolved, which the webhook did not choose, is the mail's (held for
    # the next one in `every` mode, as a step that asks the seat nothing is).
    mailed = [d for d in nkontor.store.deliveries(gid, 0, 100) if d["channel"] == "email"]
    told = {t for d in mailed for t in d["types"]} | {n["type"] for n in nkontor.store.held(gid, 0)}
    assert "step.resolved" in told
