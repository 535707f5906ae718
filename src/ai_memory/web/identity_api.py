"""``/admin/users``, ``/admin/api-keys``, ``/admin/projects/{ws}/{p}/access``: the team's admin.

Admins only (the root token or a user with admin rights): anyone else gets 403
before a row is read. Changes run as writer commands, so the audit row names the
acting user; the one answer holding a key (its creation) is marked not to be cached.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel, ConfigDict, Field, StrictBool

from ai_memory.core.clock import now_iso
from ai_memory.core.errors import Forbidden
from ai_memory.core.identity import Scope
from ai_memory.core.principal import principal_in
from ai_memory.runtime import Runtime
from ai_memory.store import identity_admin as ops
from ai_memory.web.deps import get_runtime

T = TypeVar("T")
Name = Annotated[str, Field(min_length=1, max_length=200)]


def require_admin(request: Request) -> None:
    principal = principal_in(request.scope)
    if not principal.admin:
        raise Forbidden(
            f"user {principal.name!r} is not an admin; only admins manage users, keys and access"
        )


router = APIRouter(include_in_schema=False)
admin = APIRouter(prefix="/admin", dependencies=[Depends(require_admin)])
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


class UserBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Name
    admin: StrictBool = False  # "yes", "on" or 1 is a mistake, not an admin


class KeyBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    user: Name
    label: Annotated[str, Field(max_length=ops.MAX_LABEL)] = ""


class VisibilityBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    visibility: Literal["open", "restricted"]


class GrantBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    access: Literal["read", "write"]


async def _change(runtime: Runtime, command: Callable[[Any, str], T]) -> T:
    """Run ``command(conn, now)`` on the writer and await its committed answer."""
    now = now_iso()
    return await runtime.writer.run(lambda conn: command(conn, now), timeout=10.0)


@router.get("/api/v1/whoami")
async def whoami(request: Request) -> dict[str, Any]:
    """Who the presented credential signs in as: what ``ai-memory login`` checks a key with."""
    principal = principal_in(request.scope)
    return {"user": principal.name, "admin": principal.admin, "root": principal.is_root}


# -- users --------------------------------------------------------------------------


@admin.get("/users")
async def list_users(runtime: RuntimeDep) -> dict[str, Any]:
    return await runtime.readers.aread(ops.list_users)


@admin.post("/users", status_code=201)
async def add_user(runtime: RuntimeDep, body: UserBody) -> dict[str, Any]:
    return await _change(
        runtime, lambda c, now: ops.add_user(c, body.name, admin=body.admin, now=now)
    )


@admin.post("/users/{name}/disable")
async def disable_user(runtime: RuntimeDep, name: str) -> dict[str, Any]:
    return await _change(runtime, lambda c, now: ops.set_enabled(c, name, enabled=False, now=now))


@admin.post("/users/{name}/enable")
async def enable_user(runtime: RuntimeDep, name: str) -> dict[str, Any]:
    return await _change(runtime, lambda c, now: ops.set_enabled(c, name, enabled=True, now=now))


@admin.delete("/users/{name}")
async def remove_user(runtime: RuntimeDep, name: str) -> dict[str, Any]:
    return await _change(runtime, lambda c, now: ops.remove_user(c, name, now=now))


# -- keys ---------------------------------------------------------------------------


@admin.post("/api-keys", status_code=201)
async def create_key(runtime: RuntimeDep, body: KeyBody, response: Response) -> dict[str, Any]:
    response.headers["cache-control"] = "no-store"
    return await _change(
        runtime, lambda c, now: ops.create_key(c, body.user, label=body.label, now=now)
    )


@admin.get("/api-keys")
async def list_keys(runtime: RuntimeDep, user: str | None = None) -> dict[str, Any]:
    return await runtime.readers.aread(lambda conn: ops.list_keys(conn, user))


@admin.post("/api-keys/{prefix}/revoke")
async def revoke_key(runtime: RuntimeDep, prefix: str) -> dict[str, Any]:
    return await _change(runtime, lambda c, now: ops.revoke_key(c, prefix, now=now))


# -- project access -----------------------------------------------------------------


@admin.get("/projects/{workspace}/{project}/access")
async def project_rule(runtime: RuntimeDep, workspace: str, project: str) -> dict[str, Any]:
    scope = Scope.of(workspace, project)
    return await runtime.readers.aread(lambda conn: ops.project_rule(conn, scope))


@admin.put("/projects/{workspace}/{project}/access")
async def set_visibility(
    runtime: RuntimeDep, workspace: str, project: str, body: VisibilityBody
) -> dict[str, Any]:
    scope = Scope.of(workspace, project)
    return await _change(
        runtime, lambda c, now: ops.set_visibility(c, scope, body.visibility, now=now)
    )


@admin.put("/projects/{workspace}/{project}/grants/{user}")
async def grant(
    runtime: RuntimeDep, workspace: str, project: str, user: str, body: GrantBody
) -> dict[str, Any]:
    scope = Scope.of(workspace, project)
    return await _change(runtime, lambda c, now: ops.grant(c, scope, user, body.access, now=now))


@admin.delete("/projects/{workspace}/{project}/grants/{user}")
async def revoke_grant(
    runtime: RuntimeDep, workspace: str, project: str, user: str
) -> dict[str, Any]:
    scope = Scope.of(workspace, project)
    return await _change(runtime, lambda c, now: ops.revoke_grant(c, scope, user, now=now))


router.include_router(admin)  # last: it copies the routes defined above
