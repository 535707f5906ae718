"""The read-only browser UI under /web: projects, a project, a page, search.

Server-rendered HTML, no script. Every read goes through the same functions
the JSON API uses (the wiki's page reads, the status counts, the one search
entry point); domain errors become an HTML error page with their own status.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Annotated, Any, ParamSpec

from fastapi import APIRouter, Depends, Request
from fastapi.responses import RedirectResponse, Response

from ai_memory.core.errors import AiMemoryError, InvalidInput, NotFound
from ai_memory.core.identity import Scope
from ai_memory.core.kinds import KINDS
from ai_memory.hooks.handoffs import list_handoffs
from ai_memory.hooks.observations import recent_sessions
from ai_memory.retrieval.models import SearchRequest
from ai_memory.retrieval.search import search as run_search
from ai_memory.runtime import Runtime
from ai_memory.store import pages
from ai_memory.store.counts import counts, project_counts
from ai_memory.web import ui_queries
from ai_memory.web.deps import get_runtime
from ai_memory.web.login import build_login_router
from ai_memory.web.markdown import render
from ai_memory.web.views import Views
from ai_memory.web.webauth import WEB_HOME

P = ParamSpec("P")
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
RECENT_PAGES = 30
RECENT_SESSIONS = 20
SEARCH_LIMIT = 20
READ = ["GET", "HEAD"]


def build_router(token: str) -> APIRouter:
    """The UI's routes; ``token`` is what ``/web/login`` accepts."""
    views = Views()
    router = APIRouter(prefix="/web", include_in_schema=False)
    router.include_router(build_login_router(views, token))

    def html_errors(
        handler: Callable[P, Awaitable[Response]],
    ) -> Callable[P, Awaitable[Response]]:
        @wraps(handler)
        async def guarded(*args: P.args, **kwargs: P.kwargs) -> Response:
            try:
                return await handler(*args, **kwargs)
            except AiMemoryError as exc:
                return views.error(exc.http_status, exc.message)

        return guarded

    @router.api_route("", methods=READ)
    @html_errors
    async def home(runtime: RuntimeDep) -> Response:
        def query(conn: sqlite3.Connection) -> dict[str, Any]:
            return {
                "counts": counts(conn, None),
                "projects": pages.list_projects(conn),
                "recent": ui_queries.recent_everywhere(conn, RECENT_PAGES),
            }

        return views.html("home.html", **await runtime.readers.aread(query))

    @router.api_route("/search", methods=READ)
    @html_errors
    async def search(
        runtime: RuntimeDep, q: str = "", workspace: str = "", project: str = ""
    ) -> Response:
        context: dict[str, Any] = {
            "query": q,
            "scope_workspace": workspace.strip(),
            "scope_project": project.strip(),
            "result": None,
            "error": None,
        }
        if not q.strip():
            return views.html("search.html", **context)
        try:
            context["result"] = await search_pages(runtime, q, workspace, project)
        except InvalidInput as exc:
            context["error"] = exc.message
            return views.html("search.html", 400, **context)
        return views.html("search.html", **context)

    @router.api_route("/{workspace}/{project}", methods=READ)
    @html_errors
    async def project_view(
        runtime: RuntimeDep, workspace: str, project: str, kind: str = "", limit: str = "100"
    ) -> Response:
        scope = Scope.of(workspace, project)
        count = parse_positive(limit, "limit", most=2000)
        if kind and kind not in KINDS:
            raise InvalidInput(f"kind must be one of {', '.join(sorted(KINDS))}")
        data = await runtime.readers.aread(lambda conn: project_data(conn, scope))
        if kind:
            data["pages"] = await runtime.readers.aread(
                lambda conn: ui_queries.recent_of_kind(conn, scope, kind, count)
            )
        else:
            data["pages"] = await runtime.wiki.arecent(scope, count)
        data["handoffs"] = await list_handoffs(runtime.readers, scope)
        data["sessions"] = [
            {**s, "page_path": f"sessions/{s['session_id']}.md" if s["page_id"] else None}
            for s in await recent_sessions(runtime.readers, scope, RECENT_SESSIONS)
        ]
        return views.html(
            "project.html",
            scope=scope,
            kind=kind,
            limit=count,
            scope_workspace=scope.workspace,
            scope_project=scope.project,
            **data,
        )

    @router.api_route("/{workspace}/{project}/page/{path:path}", methods=READ)
    @html_errors
    async def page_view(
        runtime: RuntimeDep, workspace: str, project: str, path: str, version: str = ""
    ) -> Response:
        ref = Scope.of(workspace, project).page(path)
        number = parse_positive(version, "version", most=10**9) if version else None
        history = await runtime.wiki.ahistory(ref)
        if number is None and history[0]["deleted_at"] is not None:
            number = history[0]["version"]  # deleted: show the last version it had
        page = await runtime.wiki.aread_page(ref, version=number)
        return views.html(
            "page.html",
            page=page,
            history=history,
            body_html=render(views.md, page["body"], ref, missing_links(page)),
            scope_workspace=ref.workspace,
            scope_project=ref.project,
        )

    @router.api_route("/{rest:path}", methods=READ)
    async def not_found(request: Request, rest: str) -> Response:
        if not rest:
            return RedirectResponse(WEB_HOME, status_code=308)  # /web/ is /web
        return views.error(404, f"Nothing lives at {request.url.path}.")

    return router


def project_data(conn: sqlite3.Connection, scope: Scope) -> dict[str, Any]:
    if not pages.project_exists(conn, scope):
        raise NotFound(f"no project {scope}")
    return {
        "counts": project_counts(conn, scope),
        "kinds": ui_queries.kind_counts(conn, scope),
    }


async def search_pages(runtime: Runtime, q: str, workspace: str, project: str) -> dict[str, Any]:
    """The API's search, called the way ``/api/v1/search`` calls it; no project: everywhere."""
    request = SearchRequest.parse(
        {
            "query": q,
            "workspace": workspace.strip() or None,
            "project": project.strip() or None,
            "global": not project.strip(),
            "limit": SEARCH_LIMIT,
        }
    )
    response = await run_search(runtime.retrieval, request)
    return response.to_dict()


def missing_links(page: dict[str, Any]) -> frozenset[tuple[str, str, str]]:
    return frozenset(
        (link["workspace"], link["project"], link["path"])
        for link in page["links"]
        if not link["resolved"]
    )


def parse_positive(value: str, name: str, *, most: int) -> int:
    if not value.isdigit() or not 1 <= int(value) <= most:
        raise InvalidInput(f"{name} must be a whole number from 1 to {most}")
    return int(value)
