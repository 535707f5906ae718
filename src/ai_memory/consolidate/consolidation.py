"""One consolidation: read the session and its project, ask the provider, write one batch.

The pages, their evidence and the job's completion commit in one writer
transaction, so a job is done exactly when its pages are written: a server killed
mid-job leaves no page and a job that the next start runs again.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ai_memory.config_llm import ConsolidationSettings
from ai_memory.consolidate.consolidation_plan import Plan, plan_writes
from ai_memory.consolidate.consolidation_prompt import Material, build_prompt
from ai_memory.consolidate.consolidation_reads import (
    SessionState,
    read_named,
    read_session,
    related_paths,
)
from ai_memory.consolidate.consolidation_schema import ConsolidationAnswer
from ai_memory.core.errors import PreconditionFailed
from ai_memory.core.identity import Scope
from ai_memory.core.page import WriteResult
from ai_memory.retrieval.models import MAX_QUERY_CHARS, SearchRequest
from ai_memory.runtime import Runtime
from ai_memory.store import evidence, llm_jobs, pages
from ai_memory.wiki.batch import awrite_batch

if TYPE_CHECKING:
    from ai_memory.llm.chat import Chat


@dataclass(frozen=True, slots=True)
class Request:
    scope: Scope
    session_id: str
    multi_page: bool
    dry_run: bool = False


async def consolidate(
    runtime: Runtime,
    chat: Chat,
    request: Request,
    settings: ConsolidationSettings,
    job_id: int | None = None,
) -> dict[str, Any]:
    """Run one consolidation; with ``dry_run`` only say what it would write."""
    state, material = await _read(runtime, request, settings)
    prompt = build_prompt(
        material,
        input_chars=settings.input_chars,
        multi_page=request.multi_page,
        max_pages=settings.max_pages,
    )
    answer = await chat.structured("consolidation", prompt, ConsolidationAnswer)
    await _read_named(runtime, state, answer)
    plan = plan_writes(state, answer, multi_page=request.multi_page, max_pages=settings.max_pages)
    report = _report(request, state, plan)
    if request.dry_run:
        return {**report, "dry_run": True, "summary": answer.summary, "title": answer.title}
    now = runtime.wiki.clock

    def also(conn: sqlite3.Connection, results: list[WriteResult]) -> dict[str, Any]:
        at = now()
        for result in results:
            relation = "produced" if result.changed else "reaffirmed"
            evidence.record(
                conn,
                result.page_id,
                result.workspace,
                result.project,
                result.path,
                state.session_id,
                relation,
                at,
            )
        for page in plan.reaffirmed:
            _check_unchanged(conn, state.scope, page.path, page.page_id)
            evidence.record(
                conn,
                int(page.page_id or 0),
                state.scope.workspace,
                state.scope.project,
                page.path,
                state.session_id,
                "reaffirmed",
                at,
            )
        done = {**report, "written": [_written(r) for r in results]}
        if job_id is not None:
            llm_jobs.finish(conn, job_id, done, at)
        return done

    batch = await awrite_batch(runtime.wiki, plan.writes, also, actor="consolidation")
    return batch.also


async def _read(
    runtime: Runtime, request: Request, settings: ConsolidationSettings
) -> tuple[SessionState, Material]:
    scope, sid = request.scope, request.session_id
    state, material = await runtime.readers.aread(
        lambda conn: read_session(conn, scope, sid, settings.prompt_chars)
    )
    paths = await _related(runtime, state, material, settings.related_pages)
    chosen = [(p, state.durable[p].title, state.durable[p].body) for p in paths]
    return state, Material(
        material.project,
        material.session_id,
        material.session_text,
        chosen,
        material.listing,
        material.advisory,
    )


async def _read_named(runtime: Runtime, state: SessionState, answer: ConsolidationAnswer) -> None:
    """The pages the answer writes or links: the plan updates (or links) them as the
    pages they are, even past the listing."""
    named = {draft.path for draft in answer.pages}
    named.update(link for draft in answer.pages for link in draft.links)
    await _add_pages(runtime, state, named)


async def _add_pages(runtime: Runtime, state: SessionState, paths: set[str]) -> None:
    """Add to ``state`` those of ``paths`` that exist but the capped listing left out."""
    missing = sorted(paths - set(state.durable))
    if missing:
        found = await runtime.readers.aread(lambda conn: read_named(conn, state.scope, missing))
        state.durable.update(found)


async def _related(
    runtime: Runtime, state: SessionState, material: Material, limit: int
) -> list[str]:
    """The durable pages retrieval finds for the session's words, best first."""
    if limit <= 0 or not state.durable or not hasattr(runtime, "retrieval"):
        return []
    words = f"{state.session_title}\n{material.session_text}"[: MAX_QUERY_CHARS // 2]
    request = SearchRequest(
        query=words,
        limit=min(limit * 3, 100),
        workspace=state.scope.workspace,
        project=state.scope.project,
    )
    response = await runtime.retrieval.search_unreinforced(request)  # no agent read these
    found = related_paths(response.hits, limit)
    await _add_pages(runtime, state, set(found))
    return [p for p in found if p in state.durable]


def _check_unchanged(
    conn: sqlite3.Connection, scope: Scope, path: str, page_id: int | None
) -> None:
    """A reaffirmation stands by the version it read; a newer one makes the run retry."""
    row = pages.latest(conn, scope.page(path))
    current = int(row["id"]) if row is not None else None
    if current != page_id:
        raise PreconditionFailed(f"page {path} changed during consolidation", current)


def _report(request: Request, state: SessionState, plan: Plan) -> dict[str, Any]:
    return {
        "workspace": state.scope.workspace,
        "project": state.scope.project,
        "session_id": state.session_id,
        "observation_count": state.observation_count,
        "multi_page": request.multi_page,
        "session_page": plan.session_path,
        "pages": plan.describe(),
    }


def _written(result: WriteResult) -> dict[str, Any]:
    return {
        "path": result.path,
        "page_id": result.page_id,
        "version": result.version,
        "changed": result.changed,
    }
