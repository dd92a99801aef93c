"""A webhook target's path and query may hold a secret (many chat services put the
channel's key in the path), so nobody but the seat sees them: not the host (in a
delivery's or the contact's `last_error`), not the logs. Found by the fault probe of
issue 12: a failed connection's error text carried `url: /path?query`."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from service.channels.notify import Notifier, mask
from service.config import Settings
from service.core.kontor import Kontor
from tests.service.channels import Hooks, free_port, work_all
from tests.service.conftest import new_game

# Also with the store on a Valkey Cluster and the queue on a Valkey of its own (issue 24).
pytestmark = pytest.mark.cluster

PATH_SECRET = "p4th-s3cret"
QUERY_SECRET = "q5ery-s3cret"


@pytest.mark.parametrize(("target", "shown"), [
    ("https://hooks.example.org/services/T0/B0/x", "https://hooks.example.org/***"),
    ("https://hooks.example.org?token=abc", "https://hooks.example.org/***"),
    ("https://hooks.example.org#abc", "https://hooks.example.org/***"),
    ("https://hooks.example.org:8443/a?b=c", "https://hooks.example.org:8443/***"),
    ("https://user:pass@hooks.example.org/a", "https://hooks.example.org/***"),
    ("http://[::1]:8000/a", "http://[::1]:8000/***"),
    ("ada@example.org", "a***@example.org"),
])
def test_mask_shows_only_the_scheme_and_host(target: str, shown: str) -> None:
    assert mask(target) == shown


def test_an_error_text_loses_the_targets_path_and_query() -> None:
    from service.channels.webhook.deliver import masked_error

    url = f"http://127.0.0.1:9/hooks/{PATH_SECRET}?token={QUERY_SECRET}"
    text = (f"ConnectionError: HTTPConnectionPool(host='127.0.0.1', port=9): Max retries exceeded with url: "
            f"/hooks/{PATH_SECRET}?token={QUERY_SECRET} (Caused by NewConnectionError('refused')); also {url}")
    out = masked_error(text, url)
    assert PATH_SECRET not in out and QUERY_SECRET not in out
    assert out.startswith("ConnectionError: HTTPConnectionPool(host='127.0.0.1', port=9)")
    assert "http://127.0.0.1:9/***" in out


def test_a_failed_connection_shows_the_host_no_path_or_query(
        nclient: Any, nkontor: Kontor, notify_settings: Settings, hooks: Hooks,
        caplog: pytest.LogCaptureFixture) -> None:
    host, players = new_game(nclient, 2)
    gid, p0 = host.game, players[0]
    target = f"http://127.0.0.1:{free_port()}/hooks/{PATH_SECRET}?token={QUERY_SECRET}"  # nobody listens
    r = nclient.put(f"/games/{gid}/seats/0/contact", json={"webhook_url": target}, headers=p0.bearer())
    assert r.status_code == 200, r.json
    with caplog.at_level(logging.DEBUG):
        Notifier(nkontor).dispatch(gid, 0, nkontor.store.contact(gid, 0) or {},
                                   [{"type": "game.finished", "game": gid, "seat": 0, "phase": 1}])
        work_all(notify_settings)
    listed = nclient.get(f"/games/{gid}/seats/0/deliveries", headers=host.bearer()).json
    failed = [d for d in listed if d["channel"] == "webhook" and d["status"] == "failed"]
    assert failed, listed
    for d in failed:
        assert d["last_error"] and "ConnectionError" in d["last_error"]
    contact = nclient.get(f"/games/{gid}/seats/0/contact", headers=host.bearer()).json
    assert contact["webhook_status"] == "disabled" and "attempts failed" in contact["last_error"]
    seen = [str(d) for d in listed] + [str(contact)]
    seen += [str(rec.get("last_error")) for rec in nkontor.store.deliveries(gid, 0, 100)]
    seen.append(str((nkontor.store.contact(gid, 0) or {}).get("last_error")))
    logged = [rec.getMessage() for rec in caplog.records]
    assert any("webhook disabled" in line for line in logged), logged
    for text in seen + logged:
        assert PATH_SECRET not in text and QUERY_SECRET not in text, text
