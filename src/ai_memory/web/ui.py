"""The browser UI under /web: projects, a project, a page, search.

Server-rendered HTML, no script. Every read goes through the same functions
the JSON API uses (the wiki's page reads, the status counts, the one search
entry point); domain errors become an HTML error page with their own status.
The sessions, tree/diff/graph and health pages live in their own modules, and
so does the pending-writes queue, the one page that writes (``ui_pending``).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from ai_memory.core.errors import InvalidInput
from ai_memory.core.identity import Scope
from ai_memory.core.kinds import KINDS, TIERS
from ai_memory.core.principal import principal_in
from ai_memory.retrieval.models import SearchRequest
from ai_memory.retrieval.search import search as run_search
from ai_memory.runtime import Runtime
from ai_memory.web import access, ui_queries
from ai_memory.web.login import build_login_router
from ai_memory.web.setup import build_setup_router
from ai_memory.web.text_view import stems_of
from ai_memory.web.ui_common import READ, RuntimeDep, html_errors, parse_positive
from ai_memory.web.ui_health import build_health_router
from ai_memory.web.ui_pages import build_pages_router
from ai_memory.web.ui_pending import build_pending_router
from ai_memory.web.ui_sessions import build_sessions_router
from ai_memory.web.views import Views
from ai_memory.web.webauth import WEB_HOME

RECENT_PAGES = 30
RECENT_SESSIONS = 20
SEARCH_LIMIT = 20


def build_router(token: str) -> APIRouter:
    """The UI's routes; ``token`` is what ``/web/login`` accepts."""
    views = Views()
    guard = html_errors(views)
    router = APIRouter(prefix="/web", include_in_schema=False)
    router.include_router(build_login_router(views, token))
    router.include_router(build_setup_router(views))
    router.include_router(build_health_router(views))
    router.include_router(build_sessions_router(views))
    router.include_router(build_pages_router(views))
    router.include_router(build_pending_router(views))

    @router.api_route("", methods=READ)
    @guard
    async def home(request: Request, runtime: RuntimeDep) -> Response:
        hide = await access.hidden(request)
        who = principal_in(request.scope)
        data = await runtime.readers.aread(
            lambda conn: ui_queries.home_page(conn, RECENT_PAGES, hide, who)
        )
        return views.html("home.html", **data)

    @router.api_route("/search", methods=READ)
    @guard
    async def search(request: Request, runtime: RuntimeDep, q: str = "") -> Response:
        form = {k: request.query_params.get(k, "").strip() for k in SEARCH_FIELDS}
        context: dict[str, Any] = {
            "query": q,
            "form": form,
            "kinds": sorted(KINDS),
            "tiers": sorted(TIERS),
            "scope_workspace": form["workspace"],
            "scope_project": form["project"],
            "result": None,
            "error": None,
            "stems": (),
        }
        if not q.strip():
            return views.html("search.html", **context)
        try:
            context["result"] = await search_pages(runtime, q, form)
        except InvalidInput as exc:
            context["error"] = exc.message
            return views.html("search.html", 400, **context)
        words = (context["result"].get("explain") or {}).get("words", [])
        context["stems"] = stems_of(q, words)
        return views.html("search.html", **context)

    @router.api_route("/{workspace}/{project}", methods=READ)
    @guard
    async def project_view(
        request: Request,
        runtime: RuntimeDep,
        workspace: str,
        project: str,
        kind: str = "",
        limit: str = "100",
    ) -> Response:
        scope = Scope.of(workspace, project)
        await access.require_read(request, scope)
        count = parse_positive(limit, "limit", most=2000)
        if kind and kind not in KINDS:
            raise InvalidInput(f"kind must be one of {', '.join(sorted(KINDS))}")
        data = await runtime.readers.aread(
            lambda conn: ui_queries.project_page(
                conn, scope, kind, count, RECENT_SESSIONS, access.principal(request)
            )
        )
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
    @guard
    async def page_view(
        request: Request,
        runtime: RuntimeDep,
        workspace: str,
        project: str,
        path: str,
        version: str = "",
    ) -> Response:
        ref = Scope.of(workspace, project).page(path)
        await access.require_read(request, Scope(ref.workspace, ref.project))
        number = parse_positive(version, "version", most=10**9) if version else None
        history = await runtime.wiki.ahistory(ref)
        if number is None and history[0]["deleted_at"] is not None:
            number = history[0]["version"]  # deleted: show the last version it had
        page = await runtime.wiki.aread_page(ref, version=number)
        page = access.without_hidden_links(page, await access.hidden(request))
        return views.html(
            "page.html",
            page=page,
            history=history,
            body_html=views.markdown(page["body"], ref, missing_links(page)),
            scope_workspace=ref.workspace,
            scope_project=ref.project,
        )

    @router.api_route("/{rest:path}", methods=READ)
    async def not_found(request: Request, rest: str) -> Response:
        if not rest:
            return RedirectResponse(WEB_HOME, status_code=308)  # /web/ is /web
        return views.error(404, f"Nothing lives at {request.url.path}.")

    return router


SEARCH_FIELDS = ("workspace", "project", "kind", "tier", "path", "explain")


async def search_pages(runtime: Runtime, q: str, form: dict[str, str]) -> dict[str, Any]:
    """The API's search, called the way ``/api/v1/search`` calls it; no project: everywhere."""
    request = SearchRequest.parse(
        {
            "query": q,
            "workspace": form["workspace"] or None,
            "project": form["project"] or None,
            "global": not form["project"],
            "limit": SEARCH_LIMIT,
            "kind": form["kind"] or None,
            "tier": form["tier"] or None,
            "path_prefix": form["path"] or None,
            "explain": form["explain"] in ("1", "on", "true"),
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
