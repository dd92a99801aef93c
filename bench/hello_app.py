"""The API benchmark's baseline: a bare Flask app with one trivial JSON endpoint.

`bench/api_bench.py` serves it with exactly the gunicorn settings it uses for the real
service, so `orders_per_s / hello_per_s` says how much of the box's HTTP capacity an
order intake keeps, independent of how fast the machine is.

    gunicorn --pythonpath bench 'hello_app:create_app()'
"""

from __future__ import annotations

from typing import Any

from flask import Flask


def create_app() -> Flask:
    app = Flask("hello")

    @app.get("/hello")
    def hello() -> Any:
        return {"hello": "world"}

    return app
