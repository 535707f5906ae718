"""``/api/v1`` routes of the memory lifecycle: forget sweep, lint, checkpoints, restore, commit.

Each runs its blocking work (git, the writer's bounded batches) in a worker
thread, never on the event loop. One project's sweep, lint or restore needs write
access to it; the same over every project (and a forced commit) is for admins.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from ai_memory.core.identity import Scope
from ai_memory.core.validate import Text
from ai_memory.maintenance import restore
from ai_memory.maintenance.jobs import MaintenanceJobs
from ai_memory.maintenance.lint import lint
from ai_memory.maintenance.sweep import Sweeper
from ai_memory.runtime import Runtime
from ai_memory.web import access
from ai_memory.web.access import admin_only, read_path
from ai_memory.web.deps import get_runtime

router = APIRouter(prefix="/api/v1")
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
AdminOnly = [Depends(admin_only)]


class ScopeBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    workspace: Annotated[str, Field(max_length=200)] | None = None
    project: Annotated[str, Field(max_length=200)] | None = None

    def scope(self) -> Scope | None:
        return Scope.of(self.workspace, self.project) if self.project else None


class SweepBody(ScopeBody):
    dry_run: bool = False


class RestoreBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    project: Annotated[str, Field(max_length=200)]
    path: Text
    workspace: Annotated[str, Field(max_length=200)] | None = None
    rev: Annotated[str, Field(max_length=200)] | None = None


@router.post("/forget-sweep")
async def forget_sweep(request: Request, runtime: RuntimeDep, body: SweepBody) -> dict[str, Any]:
    """Run the forget sweep (or, with ``dry_run``, report exactly what it would do)."""
    sweeper = Sweeper(runtime.wiki, runtime.config)
    scope = await may_maintain(request, body)
    report = await asyncio.to_thread(sweeper.sweep, dry_run=body.dry_run, scope=scope)
    return report.to_dict()


@router.post("/lint")
async def run_lint(request: Request, runtime: RuntimeDep, body: ScopeBody) -> dict[str, Any]:
    """Lint one project (or every project) and write each ``_lint/report.md``."""
    scope = await may_maintain(request, body)
    reports = await asyncio.to_thread(lint, runtime.wiki, runtime.config, scope)
    return {"projects": reports}


@router.get(
    "/projects/{workspace}/{project}/checkpoints/{path:path}", dependencies=[Depends(read_path)]
)
async def list_checkpoints(
    runtime: RuntimeDep, workspace: str, project: str, path: str
) -> dict[str, Any]:
    """The git commits that changed a page, newest first."""
    ref = Scope.of(workspace, project).page(path)
    found = await asyncio.to_thread(restore.checkpoints, runtime.wiki, ref)
    return {
        "workspace": ref.workspace,
        "project": ref.project,
        "path": ref.path,
        "checkpoints": found,
    }


@router.post("/restore-page")
async def restore_page(request: Request, runtime: RuntimeDep, body: RestoreBody) -> dict[str, Any]:
    """Write a page's text at a checkpoint back as a new version (a removed page returns)."""
    ref = Scope.of(body.workspace, body.project).page(body.path)
    await access.require_write(request, Scope(ref.workspace, ref.project))
    return await asyncio.to_thread(restore.restore_page, runtime.wiki, ref, body.rev)


@router.post("/commit", dependencies=AdminOnly)
async def commit(runtime: RuntimeDep) -> dict[str, Any]:
    """Force a git checkpoint of everything written so far."""
    return await asyncio.to_thread(restore.force_checkpoint, runtime.wiki)


@router.get("/maintenance", dependencies=AdminOnly)
async def maintenance_status(request: Request, runtime: RuntimeDep) -> dict[str, Any]:
    """The scheduled tasks: interval, next run, last run and its result, what runs now."""
    jobs: MaintenanceJobs | None = getattr(request.app.state, "maintenance", None)
    if jobs is None:
        return {"running": None, "tasks": {}}
    return jobs.status()


async def may_maintain(request: Request, body: ScopeBody) -> Scope | None:
    """The body's project, once the caller may write to it; every project: admins only."""
    scope = body.scope()
    if scope is None:
        access.require_admin(request)
    else:
        await access.require_write(request, scope)
    return scope
