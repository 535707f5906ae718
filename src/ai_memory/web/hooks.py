"""HTTP surface of capture: /hook, /hook/batch, /handoff, and /api/v1 handoffs and sessions."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from ai_memory.core.fence import neutralise_tree
from ai_memory.core.identity import Scope
from ai_memory.core.validate import STORABLE, JsonObject, SqlId, Text
from ai_memory.hooks import handoffs as handoff_ops
from ai_memory.hooks.observations import recent_sessions, session_observations
from ai_memory.hooks.service import HookService
from ai_memory.runtime import Runtime
from ai_memory.web.deps import get_runtime
from ai_memory.web.hook_asgi import ACCEPTED, DUPLICATE, json_body

router = APIRouter()
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


async def get_hooks(request: Request) -> HookService:
    """Async, so FastAPI calls it on the event loop rather than in a worker thread."""
    hooks: HookService = request.app.state.hooks
    return hooks


HooksDep = Annotated[HookService, Depends(get_hooks)]
Summary = Annotated[str, Field(min_length=1, max_length=handoff_ops.MAX_SUMMARY_CHARS), STORABLE]
Agent = Annotated[str, Field(max_length=64), STORABLE]
SessionId = Annotated[str, Field(max_length=100), STORABLE]
Cwd = Annotated[str, Field(max_length=4096), STORABLE]


# POST /hook and /hook/batch are answered ahead of this router by
# ai_memory.web.hook_asgi.HookRoutes; these routes stay for an app served without it.
@router.post("/hook", status_code=202)
async def hook(request: Request, hooks: HooksDep) -> Response:
    """One agent event, body unchanged; 202 once it is durable, 429 when saturated."""
    params = dict(request.query_params)
    raw = await request.body()
    outcome = await hooks.ingest(params, json_body(raw, {}), len(raw))
    return Response(ACCEPTED if outcome.stored else DUPLICATE, 202, media_type="application/json")


@router.post("/hook/batch")
async def hook_batch(request: Request, hooks: HooksDep) -> JSONResponse:
    """Up to 256 ``{"params", "body"}`` items, answered one by one, in order."""
    results = await hooks.ingest_batch(json_body(await request.body(), None))
    return JSONResponse({"results": [r.to_dict() for r in results]})


@router.get("/handoff")
async def handoff(request: Request, hooks: HooksDep) -> dict[str, Any]:
    """The session-start packet: the claimed handoff plus the fenced project brief."""
    return delivered(await hooks.session_start_packet(dict(request.query_params)))


@router.get("/recap")
async def recap(request: Request, hooks: HooksDep) -> dict[str, Any]:
    """Re-grounding for a session: its own goal, prompts and changes, then the brief."""
    return delivered(await hooks.recap(dict(request.query_params)))


@router.get("/brief")
async def brief(request: Request, hooks: HooksDep) -> dict[str, Any]:
    """The fenced project brief alone (a subagent's start); claims no handoff."""
    return delivered(await hooks.brief(dict(request.query_params)))


def delivered(packet: dict[str, Any]) -> dict[str, Any]:
    """A packet as agents receive it: ``context`` carries the real fence (its inside is
    neutralised already); every other field with stored text (the handoff, the recovery
    snapshot) can neither close nor fake it."""
    return {
        key: value if key == "context" else neutralise_tree(value) for key, value in packet.items()
    }


# -- /api/v1/handoffs ------------------------------------------------------------------


class HandoffOpen(BaseModel):
    model_config = ConfigDict(extra="forbid")

    workspace: str | None = None
    project: str
    summary: Summary
    next_steps: list[Text] | Text | None = None
    open_questions: list[Text] | Text | None = None
    content: JsonObject | None = None
    agent: Agent | None = None
    session_id: SessionId | None = None
    cwd: Cwd | None = None


class HandoffAccept(BaseModel):
    model_config = ConfigDict(extra="forbid")

    workspace: str | None = None
    project: str
    id: SqlId | None = None
    agent: Agent | None = None
    session_id: SessionId | None = None
    cwd: Cwd | None = None


class SessionFinalize(BaseModel):
    model_config = ConfigDict(extra="forbid")

    workspace: str | None = None
    project: str
    agent: Agent | None = None
    session_id: SessionId | None = None


@router.post("/api/v1/handoffs", status_code=201)
async def open_handoff(runtime: RuntimeDep, body: HandoffOpen) -> dict[str, Any]:
    content = dict(body.content or {})
    if body.next_steps:
        content["next_steps"] = body.next_steps
    if body.open_questions:
        content["open_questions"] = body.open_questions
    return await handoff_ops.begin_handoff(
        runtime.writer,
        Scope.of(body.workspace, body.project),
        body.summary,
        content=content,
        from_agent=body.agent,
        from_session=body.session_id,
        cwd=body.cwd,
        timeout=runtime.config.store.write_timeout_s,
        redact_patterns=runtime.config.hooks.redact_patterns,
    )


@router.get("/api/v1/handoffs")
async def list_handoffs(
    runtime: RuntimeDep,
    project: str,
    workspace: str | None = None,
    status: str | None = "open",
    limit: Annotated[int, Query(ge=1, le=200)] = 20,
) -> dict[str, Any]:
    scope = Scope.of(workspace, project)
    wanted = None if status in ("all", "") else status
    items = await handoff_ops.list_handoffs(runtime.readers, scope, status=wanted, limit=limit)
    return {"handoffs": items}


@router.post("/api/v1/handoffs/accept")
async def accept_handoff(runtime: RuntimeDep, body: HandoffAccept) -> dict[str, Any]:
    return await handoff_ops.accept_handoff(
        runtime.writer,
        Scope.of(body.workspace, body.project),
        body.id,
        agent=body.agent,
        session_id=body.session_id,
        cwd=body.cwd,
        timeout=runtime.config.store.write_timeout_s,
    )


@router.post("/api/v1/handoffs/{handoff_id}/cancel")
async def cancel_handoff(
    runtime: RuntimeDep, handoff_id: SqlId, project: str, workspace: str | None = None
) -> dict[str, Any]:
    return await handoff_ops.cancel_handoff(
        runtime.writer,
        Scope.of(workspace, project),
        handoff_id,
        timeout=runtime.config.store.write_timeout_s,
    )


# -- /api/v1/sessions --------------------------------------------------------------------


@router.get("/api/v1/sessions")
async def list_sessions(
    runtime: RuntimeDep,
    project: str,
    workspace: str | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 20,
) -> dict[str, Any]:
    sessions = await recent_sessions(runtime.readers, Scope.of(workspace, project), limit)
    return {"sessions": sessions}


@router.get("/api/v1/sessions/status")
async def sessions_status(hooks: HooksDep) -> dict[str, Any]:
    """How much follow-up work (session pages) is still queued."""
    return hooks.stats()


@router.post("/api/v1/sessions/flush")
async def flush_sessions(
    hooks: HooksDep, timeout: Annotated[float, Query(gt=0, le=600)] = 30.0
) -> dict[str, Any]:
    """Wait until every session ended so far has its page (or ``timeout`` seconds)."""
    pending = await hooks.finisher.flush(timeout)
    return {"pending": pending, **hooks.stats()}


@router.post("/api/v1/sessions/finalize")
async def finalize_session(hooks: HooksDep, body: SessionFinalize) -> dict[str, Any]:
    """End a session now (the agent's newest open one unless named); waits for its page."""
    return await hooks.finalize(
        Scope.of(body.workspace, body.project), agent=body.agent, session_id=body.session_id
    )


@router.get("/api/v1/sessions/observations")
async def newest_session_observations(
    runtime: RuntimeDep,
    project: str,
    workspace: str | None = None,
    exclude_session: str | None = None,
    before_id: Annotated[SqlId | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> dict[str, Any]:
    """The newest session other than ``exclude_session``, newest observations first."""
    return await session_observations(
        runtime.readers,
        Scope.of(workspace, project),
        exclude_session=exclude_session,
        before_id=before_id,
        limit=limit,
    )


@router.get("/api/v1/sessions/{session_id}/observations")
async def one_session_observations(
    runtime: RuntimeDep,
    session_id: str,
    project: str,
    workspace: str | None = None,
    before_id: Annotated[SqlId | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> dict[str, Any]:
    return await session_observations(
        runtime.readers,
        Scope.of(workspace, project),
        session_id,
        before_id=before_id,
        limit=limit,
    )
