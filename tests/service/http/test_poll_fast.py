"""The public poll's fast path (`FastPaths._poll` in service/http/fastpath.py) answers
`GET /games/<gid>/phases/current` exactly as the Flask route does.

Each answer is compared byte for byte (status, headers, body) with the route's answer to
the same request (`KONTOR_FAST_POLLS` off), over the states a step goes through; what the
fast path does not take (a bearer token, a query, the lobby, no such game, another
`If-None-Match`) must reach the route.
"""

from __future__ import annotations

from typing import Any

import pytest

from service.core.kontor import Kontor
from tests.service.conftest import Player, create_game, new_game, play_to

# Also with the store on a Valkey Cluster and the queue on a Valkey of its own (issue 24).
pytestmark = pytest.mark.cluster

SWITCH = "KONTOR_FAST_POLLS"
RID = {"X-Request-Id": "r-poll-probe"}


class RouteCalls:
    """Counts the route's calls (`Kontor.current_phase`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, kontor: Kontor) -> None:
        self.n = 0
        real = kontor.current_phase

        def counted(*a: Any, **kw: Any) -> Any:
            self.n += 1
            return real(*a, **kw)

        monkeypatch.setattr(kontor, "current_phase", counted)


def answers(client: Any, path: str, headers: dict[str, str] | None = None) -> tuple[Any, Any]:
    """The fast path's and the route's answers to the same request."""
    headers = {**RID, **(headers or {})}
    app = client.application
    app.config[SWITCH] = True
    try:
        fast = client.get(path, headers=headers)
        app.config[SWITCH] = False
        full = client.get(path, headers=headers)
    finally:
        app.config[SWITCH] = True
    return fast, full


def same(fast: Any, full: Any) -> None:
    assert fast.status == full.status
    assert list(fast.headers.items()) == list(full.headers.items())
    assert fast.get_data() == full.get_data()


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch, kontor: Kontor) -> RouteCalls:
    return RouteCalls(monkeypatch, kontor)


def test_the_public_poll_is_answered_as_the_route_answers_it_at_every_state_of_a_step(
        client: Any, kontor: Kontor, worker: Any, calls: RouteCalls) -> None:
    host, players = new_game(client, 3)
    ph = play_to(kontor, worker, host.game, "cart_bid")
    path = f"/games/{host.game}/phases/current"
    seen = []
    for seat in range(3):  # no answer yet, then one and two seats answered (never what)
        before = calls.n
        fast, full = answers(client, path)
        assert calls.n == before + 1  # only the route's own call: the fast path answered the other
        same(fast, full)
        assert fast.json["answered"] == list(range(seat)) and fast.json["you"] is None
        seen.append(fast.headers["ETag"])
        default = kontor.current_phase(host.game, seat)["you"]["default_order"]
        if seat < 2:
            kontor.submit(host.game, ph["id"], seat, default, via="test")
    assert len(set(seen)) == 3  # each answer its own ETag: a kept answer is never stale
    store, phase_key = kontor.store.r, kontor.store.key(host.game, "phase")
    store.hset(phase_key, "status", "resolving")
    same(*answers(client, path))
    store.hset(phase_key, mapping={"status": "finished", "extended": "1"})
    store.hset(kontor.store.key(host.game, "meta"), "status", "finished")
    fast, full = answers(client, path)
    same(fast, full)
    assert fast.json["answered"] == [] and fast.json["extended"] is True


def test_an_if_none_match_of_the_current_etag_is_304_as_from_the_route_and_any_other_goes_to_the_route(
        client: Any, kontor: Kontor, worker: Any, calls: RouteCalls) -> None:
    host, _ = new_game(client, 3)
    play_to(kontor, worker, host.game, "cart_bid")
    path = f"/games/{host.game}/phases/current"
    etag = client.get(path).headers["ETag"]
    before = calls.n
    fast, full = answers(client, path, {"If-None-Match": etag})
    assert fast.status_code == 304 and calls.n == before + 1
    same(fast, full)
    for other in ('"0000"', f"W/{etag}", f'"0000", {etag}', "*"):
        before = calls.n
        fast, full = answers(client, path, {"If-None-Match": other})
        assert calls.n == before + 2, other  # both from the route
        same(fast, full)


def test_what_the_fast_poll_does_not_take_reaches_the_route(
        client: Any, kontor: Kontor, worker: Any, calls: RouteCalls) -> None:
    host, players = new_game(client, 3)
    play_to(kontor, worker, host.game, "cart_bid")
    lobby = Player.new()
    create_game(client, lobby, 3)
    cases = [
        (f"/games/{host.game}/phases/current", players[0].bearer()),  # a seat: its choices too
        (f"/games/{host.game}/phases/current?x=1", {}),
        (f"/games/{lobby.game}/phases/current", {}),  # game_not_started
        ("/games/nosuchgame/phases/current", {}),  # game_not_found
    ]
    for path, headers in cases:
        before = calls.n
        fast, full = answers(client, path, headers)
        assert calls.n == before + 2, path
        same(fast, full)
    assert answers(client, cases[0][0], cases[0][1])[0].json["you"]["seat"] == 0
