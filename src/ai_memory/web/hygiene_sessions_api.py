"""``POST /admin/hygiene/{purge-session,move-session,purge-project}``: fixing mistakes
through the running server, so the CLI never opens the data dir beside it.

Each answers the operation's report (the same JSON with ``dry_run`` as without it) and
runs its blocking work in a worker thread. Rewriting git history is refused here (409):
the server's own git checkpointer could commit onto the old history while it runs.
Export is not a route: it writes to the caller's disk, and reads the index read-only
beside a running server.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from ai_memory.core.errors import ServerRunning
from ai_memory.core.identity import Scope
from ai_memory.hygiene.purge_project import purge_project
from ai_memory.hygiene.sessions import move_session, purge_session
from ai_memory.runtime import Runtime
from ai_memory.web.access import admin_only
from ai_memory.web.deps import get_runtime
from ai_memory.web.hygiene_projects_api import answer

router = APIRouter(
    prefix="/admin/hygiene", include_in_schema=False, dependencies=[Depends(admin_only)]
)
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
Name = Annotated[str, Field(min_length=1, max_length=200)]
ACTOR = "api"


class SessionBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session_id: Annotated[str, Field(min_length=1, max_length=300)]
    workspace: Name | None = None
    project: Name | None = None
    dry_run: bool = False


class PurgeSessionBody(SessionBody):
    rewrite_history: bool = False


class MoveSessionBody(SessionBody):
    to_project: Name
    to_workspace: Name | None = None


class PurgeProjectBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    project: Name
    workspace: Name | None = None
    dry_run: bool = False
    force_global: bool = False


@router.post("/purge-session")
async def purge_session_route(runtime: RuntimeDep, body: PurgeSessionBody) -> dict[str, Any]:
    if body.rewrite_history and not body.dry_run:
        raise ServerRunning(
            "refusing to rewrite the wiki's history while the server runs (its git "
            "checkpoints would race the rewrite); stop the server and run "
            "`ai-memory purge-session --rewrite-history` again"
        )
    report = await asyncio.to_thread(
        purge_session,
        runtime,
        body.session_id,
        workspace=body.workspace,
        project=body.project,
        dry_run=body.dry_run,
        actor=ACTOR,
    )
    return report.to_json()


@router.post("/move-session")
async def move_session_route(
    request: Request, runtime: RuntimeDep, body: MoveSessionBody
) -> dict[str, Any]:
    to = Scope.of(body.to_workspace, body.to_project)
    report = await asyncio.to_thread(
        move_session,
        runtime,
        body.session_id,
        to,
        workspace=body.workspace,
        project=body.project,
        dry_run=body.dry_run,
        actor=ACTOR,
    )
    return answer(request, report)  # the session's next hook events follow it


@router.post("/purge-project")
async def purge_project_route(
    request: Request, runtime: RuntimeDep, body: PurgeProjectBody
) -> dict[str, Any]:
    scope = Scope.of(body.workspace, body.project)
    report = await asyncio.to_thread(
        purge_project,
        runtime,
        scope,
        dry_run=body.dry_run,
        force_global=body.force_global,
        actor=ACTOR,
    )
    return answer(request, report)  # the old names that led to it lead nowhere now
