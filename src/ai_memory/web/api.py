"""The JSON API under /api/v1: pages, projects, status."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from ai_memory import __version__
from ai_memory.core.identity import PageRef, Scope
from ai_memory.core.kinds import Kind, Tier
from ai_memory.core.principal import principal_in
from ai_memory.core.validate import STORABLE, SqlId, Text
from ai_memory.runtime import Runtime
from ai_memory.store import pages
from ai_memory.store.visible_counts import visible_counts
from ai_memory.web import access
from ai_memory.web.access import read_path, write_path
from ai_memory.web.deps import get_runtime

router = APIRouter(prefix="/api/v1")
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
# Read or write access to the project named in the path, checked before the route runs.
CanRead = [Depends(read_path)]
CanWrite = [Depends(write_path)]


class PageWrite(BaseModel):
    """A page write: the body (may carry its own frontmatter) plus optional fields."""

    model_config = ConfigDict(extra="forbid")

    body: Text
    title: Annotated[str, Field(max_length=200), STORABLE] | None = None
    kind: Kind | None = None
    tier: Tier | None = None
    tags: list[Text] | None = None
    entities: list[Text] | None = None
    pinned: bool | None = None
    expires_at: Text | None = None
    summary: Text | None = None
    abstract: Text | None = None
    expected_page_id: SqlId | None = None
    create_only: bool = False

    def meta(self) -> dict[str, Any]:
        fields = (
            "title",
            "kind",
            "tier",
            "tags",
            "entities",
            "pinned",
            "expires_at",
            "summary",
            "abstract",
        )
        return {name: getattr(self, name) for name in fields if getattr(self, name) is not None}


def page_ref(workspace: str, project: str, path: str) -> PageRef:
    return Scope.of(workspace, project).page(path)


@router.get("/status")
async def status(
    request: Request,
    runtime: RuntimeDep,
    workspace: str | None = None,
    project: str | None = None,
) -> dict[str, Any]:
    """The counts; a user's leave out the projects they may not read, and the data dir's path."""
    scope = Scope.of(workspace, project) if project else None
    if scope is not None:
        await access.require_read(request, scope)
    hide = await access.hidden(request)
    who = principal_in(request.scope)  # a user counts their own sessions and handoffs
    data = await runtime.readers.aread(lambda conn: visible_counts(conn, scope, hide, who))
    where = {"data_dir": str(runtime.config.data_dir)} if who.admin else {}  # a path is for admins
    return {"version": __version__, **where, "writer_backlog": runtime.writer.backlog, **data}


@router.get("/projects")
async def list_projects(request: Request, runtime: RuntimeDep) -> dict[str, Any]:
    """Every project the caller may read."""
    hide = await access.hidden(request)
    found = await runtime.readers.aread(pages.list_projects)
    return {"projects": access.visible(found, hide, "name")}


@router.get("/projects/{workspace}/{project}/pages", dependencies=CanRead)
async def recent_pages(
    runtime: RuntimeDep,
    workspace: str,
    project: str,
    limit: Annotated[int, Query(ge=1, le=500)] = 20,
) -> dict[str, Any]:
    return {"pages": await runtime.wiki.arecent(Scope.of(workspace, project), limit)}


@router.get("/projects/{workspace}/{project}/pages/{path:path}", dependencies=CanRead)
async def read_page(
    request: Request,
    runtime: RuntimeDep,
    workspace: str,
    project: str,
    path: str,
    version: Annotated[SqlId | None, Query()] = None,
    page_id: Annotated[SqlId | None, Query()] = None,
) -> dict[str, Any]:
    ref = page_ref(workspace, project, path)
    page = await runtime.wiki.aread_page(ref, version=version, page_id=page_id)
    return access.without_hidden_links(page, await access.hidden(request))


@router.get("/projects/{workspace}/{project}/history/{path:path}", dependencies=CanRead)
async def page_history(
    runtime: RuntimeDep, workspace: str, project: str, path: str
) -> dict[str, Any]:
    ref = page_ref(workspace, project, path)
    return {"path": ref.path, "versions": await runtime.wiki.ahistory(ref)}


@router.put("/projects/{workspace}/{project}/pages/{path:path}", dependencies=CanWrite)
async def write_page(
    runtime: RuntimeDep, workspace: str, project: str, path: str, page: PageWrite
) -> dict[str, Any]:
    ref = page_ref(workspace, project, path)
    result = await runtime.wiki.awrite_page(
        ref,
        page.body,
        page.meta(),
        expected_page_id=page.expected_page_id,
        create_only=page.create_only,
    )
    return result.to_dict()


@router.delete("/projects/{workspace}/{project}/pages/{path:path}", dependencies=CanWrite)
async def delete_page(
    runtime: RuntimeDep,
    workspace: str,
    project: str,
    path: str,
    expected_page_id: Annotated[SqlId | None, Query()] = None,
) -> dict[str, Any]:
    ref = page_ref(workspace, project, path)
    page_id = await runtime.wiki.adelete_page(ref, expected_page_id=expected_page_id)
    return {"deleted": True, "page_id": page_id, "path": ref.path}
