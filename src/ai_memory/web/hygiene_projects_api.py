"""``POST /admin/hygiene/{rename,move,merge}-project``: fixing which project memory is in.

Each runs its one writer command (and the git checkpoint after it) in a worker
thread, never on the event loop; after a real run the capture service reloads
the project aliases, so the next hook from a checkout under the old name lands
in the new project.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from ai_memory.core.identity import Scope
from ai_memory.hygiene.merge import merge_project
from ai_memory.hygiene.projects import move_project, rename_project
from ai_memory.hygiene.report import HygieneReport
from ai_memory.runtime import Runtime
from ai_memory.web.access import admin_only
from ai_memory.web.deps import get_runtime

router = APIRouter(
    prefix="/admin/hygiene", include_in_schema=False, dependencies=[Depends(admin_only)]
)
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
Name = Annotated[str, Field(min_length=1, max_length=200)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")

    project: Name
    workspace: Name | None = None
    dry_run: bool = False

    def scope(self) -> Scope:
        return Scope.of(self.workspace, self.project)


class RenameBody(_Body):
    new_name: Name


class MoveBody(_Body):
    to_workspace: Name


class MergeBody(_Body):
    into: Name
    into_workspace: Name | None = None
    on_collision: Literal["refuse", "keep-dst", "suffix"] = "refuse"


@router.post("/rename-project")
async def rename(request: Request, runtime: RuntimeDep, body: RenameBody) -> dict[str, Any]:
    report = await asyncio.to_thread(
        rename_project, runtime, body.scope(), body.new_name, dry_run=body.dry_run
    )
    return answer(request, report)


@router.post("/move-project")
async def move(request: Request, runtime: RuntimeDep, body: MoveBody) -> dict[str, Any]:
    report = await asyncio.to_thread(
        move_project, runtime, body.scope(), body.to_workspace, dry_run=body.dry_run
    )
    return answer(request, report)


@router.post("/merge-project")
async def merge(request: Request, runtime: RuntimeDep, body: MergeBody) -> dict[str, Any]:
    src = body.scope()
    dst = Scope.of(body.into_workspace or src.workspace, body.into)
    report = await asyncio.to_thread(
        merge_project, runtime, src, dst, on_collision=body.on_collision, dry_run=body.dry_run
    )
    return answer(request, report)


def answer(request: Request, report: HygieneReport) -> dict[str, Any]:
    """The report; after a real run the capture service reloads its aliases first."""
    hooks = getattr(request.app.state, "hooks", None)
    if not report.dry_run and hooks is not None:
        hooks.aliases.reload()
    return report.to_json()
