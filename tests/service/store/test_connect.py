"""The store's clients (`service.store.connect`) open connections without reading the
redis package's metadata each time, and still tell the store who they are."""

from __future__ import annotations

from typing import Any

import pytest
import redis.driver_info
import redis.utils

from service.config import Settings
from service.store import DRIVER_INFO, connect


def test_new_connections_reuse_the_driver_info_made_once(monkeypatch: pytest.MonkeyPatch, settings: Settings) -> None:
    def never() -> str:
        raise AssertionError("a new connection read the package metadata")

    monkeypatch.setattr(redis.utils, "get_lib_version", never)
    for client in connect(settings):
        pool: Any = client.connection_pool
        conn = pool.connection_class(**pool.connection_kwargs)
        assert conn.driver_info is DRIVER_INFO
        assert DRIVER_INFO.lib_version == redis.__version__
        client.ping()  # CLIENT SETINFO with it on connecting, as redis-py does by default
        assert any(c.get("lib-name") == "redis-py" for c in client.client_list())
