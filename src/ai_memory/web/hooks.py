"""HTTP surface of capture: /hook, /hook/batch, /handoff, and /api/v1 handoffs and sessions.

Each route acts for the request's principal: it needs read (or, to change
something, write) access to the project, sees only its own or shared handoffs
(``any_owner`` is for admins), and reads raw observations only of its own sessions.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from ai_memory.core.errors import Forbidden
from ai_memory.core.fence import neutralise_tree
from ai_memory.core.identity import Scope
from ai_memory.core.principal import Access, Principal, principal_in
from ai_memory.core.validate import STORABLE, JsonObject, SqlId, Text
from ai_memory.hooks import handoff_ops
from ai_memory.hooks.handoffs import MAX_SUMMARY_CHARS, Viewer
from ai_memory.hooks.ingest_access import owns_session
from ai_memory.hooks.observations import recent_sessions, session_observations
from ai_memory.hooks.service import HookService
from ai_memory.runtime import Runtime
from ai_memory.store import project_access
from ai_memory.web.deps import get_runtime
from ai_memory.web.hook_asgi import ACCEPTED, DUPLICATE

router = APIRouter()
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


async def get_hooks(request: Request) -> HookService:
    """Async, so FastAPI calls it on the event loop rather than in a worker thread."""
    hooks: HookService = request.app.state.hooks
    return hooks


async def get_principal(request: Request) -> Principal:
    return principal_in(request.scope)


HooksDep = Annotated[HookService, Depends(get_hooks)]
WhoDep = Annotated[Principal, Depends(get_principal)]
AnyOwner = Annotated[bool, Query(description="Every owner's handoffs (admins only)")]
Summary = Annotated[str, Field(min_length=1, max_length=MAX_SUMMARY_CHARS), STORABLE]
Agent = Annotated[str, Field(max_length=64), STORABLE]
SessionId = Annotated[str, Field(max_length=100), STORABLE]
Cwd = Annotated[str, Field(max_length=4096), STORABLE]


# POST /hook and /hook/batch are answered ahead of this router by
# ai_memory.web.hook_asgi.HookRoutes; these routes stay for an app served without it.
@router.post("/hook", status_code=202)
async def hook(request: Request, hooks: HooksDep, who: WhoDep) -> Response:
    """One agent event, body unchanged; 202 once it is durable, 429 when saturated."""
    params = dict(request.query_params)
    raw = await request.body()
    outcome = await hooks.ingest(params, raw, who)
    return Response(ACCEPTED if outcome.stored else DUPLICATE, 202, media_type="application/json")


@router.post("/hook/batch")
async def hook_batch(request: Request, hooks: HooksDep, who: WhoDep) -> JSONResponse:
    """Up to 256 ``{"params", "body"}`` items, answered one by one, in order."""
    results = await hooks.ingest_batch(await request.body(), who)
    return JSONResponse({"results": [r.to_dict() for r in results]})


@router.get("/handoff")
async def handoff(request: Request, hooks: HooksDep, who: WhoDep) -> dict[str, Any]:
    """The session-start packet: the claimed handoff plus the fenced project brief."""
    return delivered(await hooks.session_start_packet(dict(request.query_params), who))


@router.get("/recap")
async def recap(request: Request, hooks: HooksDep, who: WhoDep) -> dict[str, Any]:
    """Re-grounding for a session: its own goal, prompts and changes, then the brief."""
    return delivered(await hooks.recap(dict(request.query_params), who=who))


@router.get("/brief")
async def brief(request: Request, hooks: HooksDep, who: WhoDep) -> dict[str, Any]:
    """The fenced project brief alone (a subagent's start); claims no handoff."""
    return delivered(await hooks.brief(dict(request.query_params), who))


async def require(runtime: Runtime, who: Principal, scope: Scope, need: Access) -> Scope:
    """403 unless ``who`` has ``need`` on ``scope`` (no read at all for admins)."""
    if not who.admin:
        await runtime.readers.aread(lambda conn: project_access.authorize(conn, who, scope, need))
    return scope


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
    shared: bool = False  # visible to everyone who may read the project, not only its owner


class HandoffAccept(BaseModel):
    model_config = ConfigDict(extra="forbid")

    workspace: str | None = None
    project: str
    id: SqlId | None = None
    agent: Agent | None = None
    session_id: SessionId | None = None
    cwd: Cwd | None = None
    any_owner: bool = False  # admins only


class SessionFinalize(BaseModel):
    model_config = ConfigDict(extra="forbid")

    workspace: str | None = None
    project: str
    agent: Agent | None = None
    session_id: SessionId | None = None


@router.post("/api/v1/handoffs", status_code=201)
async def open_handoff(runtime: RuntimeDep, who: WhoDep, body: HandoffOpen) -> dict[str, Any]:
    scope = await require(runtime, who, Scope.of(body.workspace, body.project), Access.WRITE)
    content = dict(body.content or {})
    if body.next_steps:
        content["next_steps"] = body.next_steps
    if body.open_questions:
        content["open_questions"] = body.open_questions
    return await handoff_ops.begin_handoff(
        runtime.writer,
        scope,
        body.summary,
        content=content,
        from_agent=body.agent,
        from_session=body.session_id,
        cwd=body.cwd,
        owner=who.owner,
        shared=body.shared,
        timeout=runtime.config.store.write_timeout_s,
        sanitizer=runtime.sanitizer,
    )


@router.get("/api/v1/handoffs")
async def list_handoffs(
    runtime: RuntimeDep,
    who: WhoDep,
    project: str,
    workspace: str | None = None,
    status: str | None = "open",
    limit: Annotated[int, Query(ge=1, le=200)] = 20,
    any_owner: AnyOwner = False,
) -> dict[str, Any]:
    viewer = Viewer.of(who, any_owner)
    scope = await require(runtime, who, Scope.of(workspace, project), Access.READ)
    wanted = None if status in ("all", "") else status
    items = await handoff_ops.list_handoffs(
        runtime.readers, scope, status=wanted, limit=limit, viewer=viewer
    )
    return {"handoffs": items}


@router.post("/api/v1/handoffs/accept")
async def accept_handoff(runtime: RuntimeDep, who: WhoDep, body: HandoffAccept) -> dict[str, Any]:
    viewer = Viewer.of(who, body.any_owner)
    scope = await require(runtime, who, Scope.of(body.workspace, body.project), Access.WRITE)
    return await handoff_ops.accept_handoff(
        runtime.writer,
        scope,
        body.id,
        agent=body.agent,
        session_id=body.session_id,
        cwd=body.cwd,
        viewer=viewer,
        timeout=runtime.config.store.write_timeout_s,
        sanitizer=runtime.sanitizer,
    )


@router.post("/api/v1/handoffs/{handoff_id}/cancel")
async def cancel_handoff(
    runtime: RuntimeDep,
    who: WhoDep,
    handoff_id: SqlId,
    project: str,
    workspace: str | None = None,
    any_owner: AnyOwner = False,
) -> dict[str, Any]:
    viewer = Viewer.of(who, any_owner)
    scope = await require(runtime, who, Scope.of(workspace, project), Access.WRITE)
    return await handoff_ops.cancel_handoff(
        runtime.writer,
        scope,
        handoff_id,
        viewer=viewer,
        timeout=runtime.config.store.write_timeout_s,
    )


# -- /api/v1/sessions --------------------------------------------------------------------


@router.get("/api/v1/sessions")
async def list_sessions(
    runtime: RuntimeDep,
    who: WhoDep,
    project: str,
    workspace: str | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 20,
) -> dict[str, Any]:
    """The caller's own sessions of the project (admins: everyone's)."""
    scope = await require(runtime, who, Scope.of(workspace, project), Access.READ)
    return {"sessions": await recent_sessions(runtime.readers, scope, limit, who)}


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
async def finalize_session(
    runtime: RuntimeDep, hooks: HooksDep, who: WhoDep, body: SessionFinalize
) -> dict[str, Any]:
    """End a session now (the agent's newest open one unless named); waits for its page.
    A user ends only a session of their own."""
    scope = await require(runtime, who, Scope.of(body.workspace, body.project), Access.WRITE)
    session_id = body.session_id
    if session_id is not None and not who.sees_every_owner():
        mine = await runtime.readers.aread(lambda c: owns_session(c, who, scope, session_id))
        if not mine:
            raise Forbidden(
                f"user {who.name!r} may not end session {session_id} in {scope}: "
                "another user captured it"
            )
    return await hooks.finalize(scope, agent=body.agent, session_id=session_id)


@router.get("/api/v1/sessions/observations")
async def newest_session_observations(
    runtime: RuntimeDep,
    who: WhoDep,
    project: str,
    workspace: str | None = None,
    exclude_session: str | None = None,
    before_id: Annotated[SqlId | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> dict[str, Any]:
    """The caller's newest session other than ``exclude_session``, newest observations first."""
    scope = await require(runtime, who, Scope.of(workspace, project), Access.READ)
    return await session_observations(
        runtime.readers,
        scope,
        exclude_session=exclude_session,
        before_id=before_id,
        limit=limit,
        who=who,
    )


@router.get("/api/v1/sessions/{session_id}/observations")
async def one_session_observations(
    runtime: RuntimeDep,
    who: WhoDep,
    session_id: str,
    project: str,
    workspace: str | None = None,
    before_id: Annotated[SqlId | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> dict[str, Any]:
    """One session's observations: the caller's own session (admins: any)."""
    scope = await require(runtime, who, Scope.of(workspace, project), Access.READ)
    return await session_observations(
        runtime.readers, scope, session_id, before_id=before_id, limit=limit, who=who
    )
