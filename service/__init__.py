"""The Kontor web service: the Flask app factory, the API, auth and the Redis store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flask import Flask


def create_app(*args: Any, **kwargs: Any) -> Flask:
    """The Flask app (see `service.http.app.create_app`); imported lazily so that the
    `kontor` client does not load the server."""
    from service.http.app import create_app as factory

    return factory(*args, **kwargs)
