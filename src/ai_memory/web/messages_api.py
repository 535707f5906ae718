"""``/api/v1/messages``: the HTTP side of memory_message_send/list/pop/cancel.

HTTP carries no session, so the calling project is named in every request
(``workspace``/``project``); the checks on both ends are the MCP tools' own
(:mod:`ai_memory.messages.mail`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from ai_memory.core.fence import NOTE
from ai_memory.core.identity import Scope
from ai_memory.core.principal import principal_in
from ai_memory.core.validate import STORABLE, SqlId, Text
from ai_memory.messages import mail
from ai_memory.messages.rules import MAX_SUBJECT_CHARS, AgentKind
from ai_memory.runtime import Runtime
from ai_memory.web.deps import get_runtime

router = APIRouter(prefix="/api/v1/messages")
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
Name = Annotated[str, Field(min_length=1, max_length=200), STORABLE]


class MessageSend(BaseModel):
    model_config = ConfigDict(extra="forbid")

    workspace: Name | None = None
    project: Name
    to_workspace: Name | None = None
    to_project: Name
    to_agent: AgentKind | None = None
    subject: Annotated[str, Field(min_length=1, max_length=MAX_SUBJECT_CHARS), STORABLE]
    body: Text
    agent: AgentKind | None = None
    session_id: Name | None = None


class MessagePop(BaseModel):
    model_config = ConfigDict(extra="forbid")

    workspace: Name | None = None
    project: Name
    agent: AgentKind | None = None
    session_id: Name | None = None


@router.post("", status_code=201)
async def send(request: Request, runtime: RuntimeDep, message: MessageSend) -> dict[str, Any]:
    sent = await mail.send(
        runtime,
        principal_in(request.scope),
        Scope.of(message.workspace, message.project),
        Scope.of(message.to_workspace, message.to_project),
        subject=message.subject,
        body=message.body,
        to_agent=message.to_agent,
        session=message.session_id,
        agent=message.agent,
    )
    return {"message": sent}


@router.get("")
async def list_messages(
    request: Request,
    runtime: RuntimeDep,
    project: Annotated[str, Query(min_length=1, max_length=200)],
    workspace: Annotated[str | None, Query(max_length=200)] = None,
    box: Literal["inbox", "outbox", "both"] = "inbox",
    status: Literal["queued", "claimed", "cancelled", "any"] = "queued",
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> dict[str, Any]:
    scope = Scope.of(workspace, project)
    found: dict[str, Any] = {}
    for name in ("inbox", "outbox") if box == "both" else (box,):
        found[name] = await mail.listing(
            runtime,
            principal_in(request.scope),
            scope,
            outbox=name == "outbox",
            status=None if status == "any" else status,
            limit=limit,
        )
    return {**found, "note": NOTE}


@router.post("/pop")
async def pop(request: Request, runtime: RuntimeDep, claim: MessagePop) -> dict[str, Any]:
    claimed = await mail.pop(
        runtime,
        principal_in(request.scope),
        Scope.of(claim.workspace, claim.project),
        agent=claim.agent,
        session=claim.session_id,
    )
    return {"message": claimed, "note": NOTE}


@router.post("/{message_id}/cancel")
async def cancel(request: Request, runtime: RuntimeDep, message_id: SqlId) -> dict[str, Any]:
    cancelled = await mail.cancel(runtime, principal_in(request.scope), message_id)
    return {"message": cancelled, "cancelled": True}
