"""``/web/health``: the status answer as a read-only page, for admins only: it shows the
data dir, the server's state and counts over every project."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ai_memory.metrics.status import build_status
from ai_memory.web.access import require_admin
from ai_memory.web.admin import get_sections
from ai_memory.web.ui_common import READ, RuntimeDep, html_errors
from ai_memory.web.views import Views


def build_health_router(views: Views) -> APIRouter:
    router = APIRouter()

    @router.api_route("/health", methods=READ)
    @html_errors(views)
    async def health(request: Request, runtime: RuntimeDep) -> Response:
        require_admin(request)
        status = await build_status(runtime, request.app.state.metrics, get_sections(request))
        known = {
            "version",
            "data_dir",
            "server",
            "projects",
            "writer",
            "hooks",
            "last",
            "spool",
            "sizes",
            "embedder",
            "llm",
            "warnings",
            "sessions_open",
            "pages",
            "versions",
            "sessions",
            "observations",
            "open_handoffs",
            "schema_version",
            "identities",
        }
        extra = {k: v for k, v in status.items() if k not in known and isinstance(v, dict)}
        return views.html("health.html", status=status, extra=extra)

    return router
