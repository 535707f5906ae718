"""``/api/v1/consolidate``: consolidate a session now, and see the queue's jobs.

The consolidation package (and the LLM layer under it) is imported only once a
request needs it, so a server without a provider never loads it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from ai_memory.core.identity import Scope
from ai_memory.runtime import Runtime
from ai_memory.web import access
from ai_memory.web.deps import get_runtime

router = APIRouter(prefix="/api/v1")
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
Name = Annotated[str, Field(min_length=1, max_length=200)]


class ConsolidateBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    project: Name
    workspace: Name | None = None
    session_id: Name | None = None
    multi_page: bool | None = None
    dry_run: bool = False


@router.post("/consolidate")
async def consolidate_session(
    request: Request, runtime: RuntimeDep, body: ConsolidateBody
) -> dict[str, Any]:
    """Consolidate one session (the latest completed one without ``session_id``);
    it writes the project's pages, so it needs write access to the project."""
    scope = Scope.of(body.workspace, body.project)
    await access.require_write(request, scope)
    from ai_memory.consolidate.consolidation_gate import require_chat

    require_chat(runtime)  # no provider: a clear 503 before anything is read
    from ai_memory.consolidate.consolidation_jobs import consolidate_now

    settings = runtime.config.consolidation
    multi_page = settings.multi_page if body.multi_page is None else body.multi_page
    return await consolidate_now(
        runtime,
        settings,
        scope,
        body.session_id,
        multi_page=multi_page,
        dry_run=body.dry_run,
        who=access.principal(request),
    )


@router.get("/consolidate/jobs")
async def consolidation_jobs(
    request: Request,
    runtime: RuntimeDep,
    state: Annotated[Literal["queued", "running", "done", "failed"] | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> dict[str, Any]:
    """The queue's jobs, newest first, each with its session id and last error
    (those of projects the caller may not read left out, and not counted)."""
    from ai_memory.store import llm_jobs

    hide = await access.hidden(request)
    hidden = access.hidden_json(hide) if hide else None  # None: every job counted

    def read(conn: Any) -> dict[str, Any]:
        return {
            "counts": llm_jobs.counts(conn, hidden_json=hidden),
            "jobs": llm_jobs.listed(conn, state, limit, hidden_json=hidden or "[]"),
        }

    return await runtime.readers.aread(read)
