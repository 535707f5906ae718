"""UI routes over a project's pages as a whole: the tree, a diff between versions, the graph."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ai_memory.core.errors import InvalidInput, NotFound
from ai_memory.core.identity import Scope
from ai_memory.runtime import Runtime
from ai_memory.store import pages
from ai_memory.web import page_views
from ai_memory.web.access import require_read
from ai_memory.web.graph import layout, select
from ai_memory.web.graph_cache import GraphCache
from ai_memory.web.render_cache import RenderCache, data_version
from ai_memory.web.ui_common import READ, RuntimeDep, html_errors, parse_positive
from ai_memory.web.views import Views

GRAPH_MOST = 1000


def build_pages_router(views: Views) -> APIRouter:
    router = APIRouter()
    guard = html_errors(views)
    cache = RenderCache()
    graphs = GraphCache()

    async def cached(
        runtime: Runtime, key: tuple[str, ...], render: Callable[[], Awaitable[Response]]
    ) -> Response:
        """``render()`` once per data version; a write anywhere makes it render again."""
        full = (*key, await runtime.readers.aread(data_version))
        hit = cache.get(full)
        if hit is not None:
            return views.cached(*hit)
        answer = await render()
        if answer.status_code == 200:
            cache.put(full, answer.status_code, bytes(answer.body))
        return answer

    @router.api_route("/{workspace}/{project}/tree", methods=READ)
    @guard
    async def tree_view(
        request: Request, runtime: RuntimeDep, workspace: str, project: str
    ) -> Response:
        scope = Scope.of(workspace, project)
        await require_read(request, scope)

        def query(conn: sqlite3.Connection) -> page_views.Folder:
            if not pages.project_exists(conn, scope):
                raise NotFound(f"no project {scope}")
            # The graph's kept copy of the project's pages: patched, not read, after a write.
            kept = graphs.links(conn, scope).pages
            return page_views.folders((path, title, kind) for path, (title, kind) in kept.items())

        async def render() -> Response:
            root = await runtime.readers.aread(query)
            return views.html(
                "tree.html",
                scope=scope,
                root=root,
                scope_workspace=scope.workspace,
                scope_project=scope.project,
            )

        return await cached(runtime, ("tree", scope.workspace, scope.project), render)

    @router.api_route("/{workspace}/{project}/diff/{path:path}", methods=READ)
    @guard
    async def diff_view(
        request: Request,
        runtime: RuntimeDep,
        workspace: str,
        project: str,
        path: str,
        a: str = "",
        b: str = "",
    ) -> Response:
        ref = Scope.of(workspace, project).page(path)
        await require_read(request, Scope(ref.workspace, ref.project))
        history = await runtime.wiki.ahistory(ref)
        numbers = [v["version"] for v in history]
        newest = numbers[0]
        to = parse_positive(b, "b", most=10**9) if b else newest
        since = parse_positive(a, "a", most=10**9) if a else max(to - 1, min(numbers))
        for number, name in ((since, "a"), (to, "b")):
            if number not in numbers:
                raise InvalidInput(f"{name}: {ref.path} has no version {number}")
        old = await runtime.wiki.aread_page(ref, version=since)
        new = await runtime.wiki.aread_page(ref, version=to)
        return views.html(
            "diff.html",
            ref=ref,
            history=history,
            old=old,
            new=new,
            lines=page_views.unified_diff(old, new),
            scope_workspace=ref.workspace,
            scope_project=ref.project,
        )

    @router.api_route("/{workspace}/{project}/graph", methods=READ)
    @guard
    async def graph_view(
        request: Request, runtime: RuntimeDep, workspace: str, project: str, limit: str = "300"
    ) -> Response:
        scope = Scope.of(workspace, project)
        await require_read(request, scope)
        count = parse_positive(limit, "limit", most=GRAPH_MOST)

        def query(conn: sqlite3.Connection) -> dict[str, Any]:
            if not pages.project_exists(conn, scope):
                raise NotFound(f"no project {scope}")
            return select(graphs.links(conn, scope), scope, count)

        async def render() -> Response:
            data = layout(await runtime.readers.aread(query))
            return views.html(
                "graph.html",
                scope=scope,
                graph=data,
                limit=count,
                scope_workspace=scope.workspace,
                scope_project=scope.project,
            )

        key = ("graph", scope.workspace, scope.project, str(count))
        return await cached(runtime, key, render)

    return router
