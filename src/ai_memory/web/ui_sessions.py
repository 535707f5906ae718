"""UI routes for captured sessions: a paged timeline (everywhere or per project) and one session."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ai_memory.core.identity import Scope
from ai_memory.web import access, session_queries
from ai_memory.web.observation_view import view_of
from ai_memory.web.ui_common import READ, RuntimeDep, html_errors, parse_positive
from ai_memory.web.views import Views

PAGE_SIZE = 50
OBSERVATIONS_SHOWN = 300
NO_CURSOR = 1 << 62


def build_sessions_router(views: Views) -> APIRouter:
    router = APIRouter()
    guard = html_errors(views)

    @router.api_route("/sessions", methods=READ)
    @guard
    async def all_sessions(request: Request, runtime: RuntimeDep, before: str = "") -> Response:
        cursor = parse_positive(before, "before", most=NO_CURSOR) if before else NO_CURSOR
        hide, who = await access.hidden(request), access.principal(request)
        data = await runtime.readers.aread(
            lambda conn: session_queries.timeline(conn, None, cursor, PAGE_SIZE, hide, who)
        )
        return views.html("sessions.html", scope=None, **data)

    @router.api_route("/{workspace}/{project}/sessions", methods=READ)
    @guard
    async def project_sessions(
        request: Request, runtime: RuntimeDep, workspace: str, project: str, before: str = ""
    ) -> Response:
        scope = Scope.of(workspace, project)
        await access.require_read(request, scope)
        cursor = parse_positive(before, "before", most=NO_CURSOR) if before else NO_CURSOR
        who = access.principal(request)
        data = await runtime.readers.aread(
            lambda conn: session_queries.timeline(
                conn, scope, cursor, PAGE_SIZE, access.NOTHING, who
            )
        )
        return views.html(
            "sessions.html",
            scope=scope,
            scope_workspace=scope.workspace,
            scope_project=scope.project,
            **data,
        )

    @router.api_route("/{workspace}/{project}/session/{session_id}", methods=READ)
    @guard
    async def session_view(
        request: Request,
        runtime: RuntimeDep,
        workspace: str,
        project: str,
        session_id: str,
        after: str = "",
    ) -> Response:
        scope = Scope.of(workspace, project)
        await access.require_read(request, scope)
        cursor = parse_positive(after, "after", most=NO_CURSOR) if after else 0
        who = access.principal(request)
        data = await runtime.readers.aread(
            lambda conn: session_queries.one_session(
                conn, scope, session_id, cursor, OBSERVATIONS_SHOWN, who
            )
        )
        items = [view_of(o) for o in data["observations"]]
        tools = [i for i in items if i["type"] == "tool"]
        return views.html(
            "session.html",
            scope=scope,
            scope_workspace=scope.workspace,
            scope_project=scope.project,
            session=data["session"],
            items=items,
            tool_count=len(tools),
            failed_count=sum(1 for t in tools if t["failed"]),
            next_after=data["next_after"],
            has_page=data["session"]["page_id"] is not None,
        )

    return router
