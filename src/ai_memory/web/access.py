"""Project access at the HTTP edge: one line per route.

The decision itself is :func:`ai_memory.store.project_access.authorize` (or
``hidden_projects`` for anything that lists several projects); these helpers
find the request's principal and skip the read entirely for the operator and
admins, so a single-user server runs exactly the queries it always ran.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from fastapi import Request

from ai_memory.core.errors import Forbidden
from ai_memory.core.identity import Scope
from ai_memory.core.principal import Access, Principal, principal_in
from ai_memory.runtime import Runtime
from ai_memory.store.project_access import authorize, hidden_projects
from ai_memory.store.project_access import hidden_json as hidden_json
from ai_memory.store.project_access import not_hidden as not_hidden

Row = TypeVar("Row", bound=Mapping[str, Any])
NOTHING: frozenset[Scope] = frozenset()


def principal(request: Request) -> Principal:
    return principal_in(request.scope)


def _runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


async def require(request: Request, scope: Scope, need: Access) -> None:
    """403 unless the caller has ``need`` on ``scope``; before anything is read or staged."""
    who = principal(request)
    if who.admin:
        return
    await _runtime(request).readers.aread(lambda conn: authorize(conn, who, scope, need))


async def require_read(request: Request, scope: Scope) -> None:
    await require(request, scope, Access.READ)


async def require_write(request: Request, scope: Scope) -> None:
    await require(request, scope, Access.WRITE)


def require_admin(request: Request) -> None:
    """Operator routes (``/admin``, hygiene, maintenance of every project): admins only."""
    who = principal(request)
    if not who.admin:
        raise Forbidden(f"user {who.name!r} may not use {request.url.path}: it is for admins")


async def admin_only(request: Request) -> None:
    """:func:`require_admin` as a router dependency (async: no worker thread for it)."""
    require_admin(request)


async def read_path(request: Request, workspace: str, project: str) -> None:
    """A route dependency: read access to the project named in the path."""
    await require_read(request, Scope.of(workspace, project))


async def write_path(request: Request, workspace: str, project: str) -> None:
    await require_write(request, Scope.of(workspace, project))


async def hidden(request: Request) -> frozenset[Scope]:
    """The projects the caller may not read; no read at all for admins."""
    who = principal(request)
    if who.admin:
        return NOTHING
    return await _runtime(request).readers.aread(lambda conn: hidden_projects(conn, who))


def visible(rows: Iterable[Row], hide: frozenset[Scope], name: str = "project") -> list[Row]:
    """``rows`` without those of a hidden project (``name`` is the project's column)."""
    if not hide:
        return list(rows)
    return [r for r in rows if Scope(r["workspace"], r[name]) not in hide]


def without_hidden_links(page: dict[str, Any], hide: frozenset[Scope]) -> dict[str, Any]:
    """A page's links and backlinks, minus any that name a page of a hidden project."""
    if hide:
        page["links"] = visible(page["links"], hide)
        page["backlinks"] = visible(page["backlinks"], hide)
    return page


async def pending_write(request: Request, pending_id: int, need: Access) -> dict[str, Any]:
    """A pending write, once the caller has ``need`` on the project it would change."""
    from ai_memory.consolidate import pending

    row = await _runtime(request).readers.aread(lambda conn: pending.get_write(conn, pending_id))
    await require(request, Scope(row["workspace"], row["project"]), need)
    return row
