"""HTTP resources about the service itself: the catalog of titles, health, readiness,
metrics and the list of problem codes."""

from __future__ import annotations

from typing import Any

from flask import Response
from flask.views import MethodView

from engine.core import registry
from service.core.errors import CODES
from service.http import schemas as s
from service.http.api import (
    HTTP_PROBLEMS,
    PROBLEM,
    STORE_RETRY_AFTER,
    Blueprint,
    ProblemSchema,
    http_problem,
    kontor,
)
from service.http.metrics import render

meta_blp = Blueprint("service", __name__, description="Catalog, health and problem types.")


@meta_blp.route("/catalog")
class Catalog(MethodView):
    @meta_blp.response(200, s.TitleSchema(many=True))
    @meta_blp.doc(operationId="getCatalog")
    def get(self) -> Any:
        """The titles: seat ranges, options with defaults, bot kinds, order codes, and
        the link to each title's player's guide.

        Example: `GET /catalog` answers `[{"id": "haendler", "seats": {"min": 2, "max": 4}, ...}]`."""
        return kontor().catalog()


@meta_blp.route("/healthz")
class Health(MethodView):
    @meta_blp.response(200, example={"status": "ok"})
    @meta_blp.doc(operationId="getHealth")
    def get(self) -> Any:
        """Liveness: the web process answers.

        Example: `GET /healthz` answers `{"status": "ok"}`."""
        return {"status": "ok"}


@meta_blp.route("/readyz")
class Ready(MethodView):
    @meta_blp.response(200, s.ReadySchema, example={"status": "ready", "titles_failed": {}})
    @meta_blp.alt_response(503, schema=ProblemSchema, content_type=PROBLEM,
                           description="The store is not reachable (`store_unavailable`).")
    @meta_blp.doc(operationId="getReadiness")
    def get(self) -> Any:
        """Readiness: the store answers. Also lists the titles that failed to load (a
        broken plugin is left out; the others are served).

        Example: `GET /readyz` answers `{"status": "ready", "titles_failed": {}}`."""
        try:
            kontor().store.ping()
        except Exception:  # any failure means not ready; its text would name the store's address
            raise http_problem("store_unavailable", "the store does not answer",
                               retry_after=STORE_RETRY_AFTER) from None
        return {"status": "ready", "titles_failed": registry.load_errors()}


@meta_blp.route("/metrics")
class Metrics(MethodView):
    @meta_blp.response(200, content_type="text/plain")
    @meta_blp.doc(operationId="getMetrics")
    def get(self) -> Any:
        """Prometheus metrics: running games, open steps by status, RQ queues and workers.

        Example: `GET /metrics` answers lines such as `kontor_games_running 3`."""
        return Response(render(kontor()), mimetype="text/plain; version=0.0.4")


@meta_blp.route("/problems")
class Problems(MethodView):
    @meta_blp.response(200, example={"game_not_found": {"status": 404, "title": "No such game."}})
    @meta_blp.doc(operationId="listProblems")
    def get(self) -> Any:
        """Every stable problem `code` with its HTTP status and title.

        Example: `GET /problems` answers `{"game_not_found": {"status": 404, "title": "No such game."}, ...}`."""
        listed = {**HTTP_PROBLEMS, **CODES}
        return {code: {"status": st, "title": title} for code, (st, title) in sorted(listed.items())}
