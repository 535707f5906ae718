"""``/api/v1/pending-writes``: the learning loop's queue (list, show, approve, reject)
and ``/api/v1/auto-improve``, which runs the reviewer now.

Approving and rejecting run in a worker thread: they wait for the writer and the
git checkpoint notice, never on the event loop.
"""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from ai_memory.consolidate import pending
from ai_memory.consolidate.learning_schedule import improve_now
from ai_memory.core.identity import Scope
from ai_memory.core.principal import Access
from ai_memory.core.validate import STORABLE, SqlId
from ai_memory.runtime import Runtime
from ai_memory.store import pending_writes as store
from ai_memory.web import access
from ai_memory.web.deps import get_runtime

router = APIRouter(prefix="/api/v1")
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
Name = Annotated[str, Field(max_length=200)]


class Decision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    by: Annotated[str, Field(min_length=1, max_length=200), STORABLE] = "api"
    reason: Annotated[str, Field(max_length=2000), STORABLE] = ""


class ImproveBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    project: Name
    workspace: Name | None = None
    session_id: Annotated[str, Field(min_length=1, max_length=200), STORABLE] | None = None
    dry_run: bool = False


@router.get("/pending-writes")
async def list_pending(
    request: Request,
    runtime: RuntimeDep,
    state: Annotated[str, Field(max_length=20)] = "pending",
    workspace: Name | None = None,
    project: Name | None = None,
    limit: int = 100,
) -> dict[str, Any]:
    """The queue, newest first; ``state=all`` lists every decision too. Only the
    projects the caller may read are listed."""
    scope = Scope.of(workspace, project) if project else None
    if scope is not None:
        await access.require_read(request, scope)
    hide = await access.hidden(request)

    def read(conn: sqlite3.Connection) -> list[dict[str, Any]]:
        rows = pending.list_writes(conn, state, scope, limit)  # checks state and limit
        if not hide or scope is not None or len(rows) < limit:
            return access.visible(rows, hide)
        wanted = pending.check_state(state)
        found = readable_writes(conn, state=wanted, limit=limit, before=None, hide=hide)
        return [pending.summary(row) for row in found]

    return {"pending_writes": await runtime.readers.aread(read)}


def readable_writes(
    conn: sqlite3.Connection,
    *,
    state: str | None,
    limit: int,
    before: int | None,
    hide: frozenset[Scope],
) -> list[dict[str, Any]]:
    """Up to ``limit`` pending writes of the projects the caller may read, newest first,
    paging on past the others, so a list is as full as the queue allows."""
    found: list[dict[str, Any]] = []
    while True:
        rows = store.listed(conn, state=state, scope=None, limit=limit, before=before)
        found += access.visible(rows, hide)
        if len(found) >= limit or len(rows) < limit:
            return found[:limit]
        before = rows[-1]["id"]


@router.get("/pending-writes/{pending_id}")
async def show_pending(request: Request, pending_id: SqlId) -> dict[str, Any]:
    """One pending write with its snapshot, its proposal and the diff between them."""
    return pending.detail(await access.pending_write(request, pending_id, Access.READ))


@router.post("/pending-writes/{pending_id}/approve")
async def approve_pending(
    request: Request, runtime: RuntimeDep, pending_id: SqlId, body: Decision | None = None
) -> dict[str, Any]:
    """Apply it as a new version; 409 when its target changed since (state ``refused``)."""
    await access.pending_write(request, pending_id, Access.WRITE)
    by = body.by if body else "api"
    return await asyncio.to_thread(pending.approve, runtime.wiki, pending_id, by)


@router.post("/pending-writes/{pending_id}/reject")
async def reject_pending(
    request: Request, runtime: RuntimeDep, pending_id: SqlId, body: Decision | None = None
) -> dict[str, Any]:
    await access.pending_write(request, pending_id, Access.WRITE)
    decision = body or Decision()
    return await asyncio.to_thread(
        pending.reject, runtime.wiki, pending_id, decision.by, decision.reason
    )


@router.post("/auto-improve")
async def auto_improve(request: Request, runtime: RuntimeDep, body: ImproveBody) -> dict[str, Any]:
    """Review one completed session now (default: the project's latest); it proposes
    writes to the project, so it needs write access to it."""
    scope = Scope.of(body.workspace, body.project)
    await access.require_write(request, scope)
    report = await improve_now(
        runtime.wiki,
        runtime.llm,
        runtime.config.learning,
        scope,
        body.session_id,
        body.dry_run,
        access.principal(request),
    )
    return report.to_dict()
