"""``PUT /api/v1/projects/{ws}/{p}/pages:batch``: memory_write_pages_batch over HTTP.

Same rules as the tool: an existing project the caller may write, 1-100 pages, all or
nothing, every failing entry named (:mod:`ai_memory.wiki.batch_check`).
"""

from __future__ import annotations

import sqlite3
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from ai_memory.core.errors import NotFound
from ai_memory.core.identity import Scope
from ai_memory.core.principal import Access, principal_in
from ai_memory.core.validate import STORABLE
from ai_memory.runtime import Runtime
from ai_memory.store import pages
from ai_memory.store.project_access import authorize
from ai_memory.web.api import PageWrite
from ai_memory.web.deps import get_runtime
from ai_memory.wiki.batch_check import MAX_ENTRIES, Entry, awrite_entries, summary

router = APIRouter(prefix="/api/v1")
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


class BatchEntry(PageWrite):
    path: Annotated[str, Field(min_length=1, max_length=1024), STORABLE]

    def entry(self) -> Entry:
        return Entry(self.path, self.body, self.meta(), self.expected_page_id, self.create_only)


class Batch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pages: Annotated[list[BatchEntry], Field(min_length=1, max_length=MAX_ENTRIES)]


@router.put("/projects/{workspace}/{project}/pages:batch")
async def write_batch(
    request: Request, runtime: RuntimeDep, workspace: str, project: str, batch: Batch
) -> dict[str, Any]:
    scope = Scope.of(workspace, project)
    who = principal_in(request.scope)

    def check(conn: sqlite3.Connection) -> bool:
        authorize(conn, who, scope, Access.WRITE)
        return pages.project_exists(conn, scope)

    if not await runtime.readers.aread(check):
        raise NotFound(f"no project {scope}: a batch writes only into an existing project")
    entries = [page.entry() for page in batch.pages]
    return summary(await awrite_entries(runtime.wiki, scope, entries, actor="api"))
