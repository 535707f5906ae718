"""``PUT /api/v1/projects/{workspace}/{project}/pages/{path}`` answered before FastAPI's router.

Most of a page write's time on the event loop went to the framework (matching the
path against every route, dependency injection, the request and response objects)
rather than to the write. This handler sits where :mod:`ai_memory.web.hook_asgi`
does (inside Host/Origin, auth, the caps and the metrics) and answers a well-formed
write itself: the same body model, the same access check, the same write and the
same answer. Anything it would not answer exactly as the route does — a body that
is not JSON or does not validate, another content type, a root path — goes on to
FastAPI with the body replayed, so every error answer stays the route's own.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from email.message import Message as MimeHeader
from json.encoder import encode_basestring as _string
from typing import Any

import anyio.to_thread
from pydantic import ValidationError

from ai_memory.core.identity import Scope as ProjectScope
from ai_memory.core.json_bodies import SMALL_JSON_BYTES, decode
from ai_memory.core.page import WriteResult
from ai_memory.core.principal import Access, principal_in
from ai_memory.runtime import Runtime
from ai_memory.store.project_access import authorize
from ai_memory.web.api import PageWrite
from ai_memory.web.asgi_answer import answer, failure, read_body
from ai_memory.web.middleware import ASGIApp, Receive, Scope, Send, replay_body

# The route's own pattern, as Starlette compiles ``{workspace}/{project}/pages/{path:path}``.
_PAGE = re.compile(r"^/api/v1/projects/([^/]+)/([^/]+)/pages/(.*)$")
_BOOL = {True: "true", False: "false"}


class PageWriteRoute:
    """Answers a page PUT; ``runtime`` finds the running one (None before start-up,
    when the request goes on to the app unchanged)."""

    def __init__(self, app: ASGIApp, runtime: Callable[[], Runtime | None]) -> None:
        self.app = app
        self.runtime = runtime

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = page_route(scope)
        runtime = self.runtime() if match is not None else None
        if match is None or runtime is None or not json_content(scope):
            await self.app(scope, receive, send)
            return
        raw = await read_body(receive)
        if raw is None:
            return  # the client left mid-body; nothing to answer
        await self.respond(runtime, match, scope, raw, receive, send)

    async def respond(
        self,
        runtime: Runtime,
        match: tuple[str, str, str],
        scope: Scope,
        raw: bytes,
        receive: Receive,
        send: Send,
    ) -> None:
        """Answer a page PUT whose body ``raw`` is read (``receive`` is what follows it).
        A large body is decoded and validated on a worker thread: its cost grows with the
        values it holds (tens of thousands of tags, say), which the loop must not wait out."""
        if len(raw) <= SMALL_JSON_BYTES:
            page = _page(raw)
        else:
            page = await anyio.to_thread.run_sync(_page, raw)
        if page is None:  # FastAPI answers it, with its own words for what is wrong
            await self.app(scope, replay_body(raw, receive), send)
            return
        workspace, project, path = match
        try:
            status, body = 200, await _write(runtime, scope, workspace, project, path, page)
        except Exception as exc:
            status, body = failure(exc, f"PUT {scope['path']}")
        await answer(send, status, body)


async def _write(
    runtime: Runtime, scope: Scope, workspace: str, project: str, path: str, page: PageWrite
) -> bytes:
    """The route's work in the route's order: access to the project, then the write."""
    project_scope = ProjectScope.of(workspace, project)
    who = principal_in(scope)
    if not who.admin:
        await runtime.readers.aread(lambda conn: authorize(conn, who, project_scope, Access.WRITE))
    ref = project_scope.page(path)
    result = await runtime.wiki.awrite_page(
        ref,
        page.body,
        page.meta(),
        expected_page_id=page.expected_page_id,
        create_only=page.create_only,
    )
    return written(result)


def written(result: WriteResult) -> bytes:
    """``result.to_dict()`` as the route's JSON answer encodes it, written out directly."""
    return (
        f'{{"page_id":{result.page_id:d},"version":{result.version:d},'
        f'"workspace":{_string(result.workspace)},"project":{_string(result.project)},'
        f'"path":{_string(result.path)},"changed":{_BOOL[result.changed]},'
        f'"created":{_BOOL[result.created]}}}'
    ).encode()


def page_route(scope: Scope) -> tuple[str, str, str] | None:
    """Workspace, project and page path of a page PUT the route answers; None otherwise."""
    if scope["type"] != "http" or scope["method"] != "PUT" or scope.get("root_path"):
        return None
    match = _PAGE.match(scope["path"])
    return None if match is None else (match[1], match[2], match[3])


def json_content(scope: Scope) -> bool:
    """Whether FastAPI would read the body as JSON: a JSON content type (with none, its
    strict content-type check refuses the body, so the route answers that case)."""
    values = [v for k, v in scope["headers"] if k == b"content-type"]
    if not values:
        return False
    if values[0] == b"application/json":
        return True
    header = MimeHeader()
    header["content-type"] = values[0].decode("latin-1")
    subtype = header.get_content_subtype()
    return header.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )


def _page(raw: bytes) -> PageWrite | None:
    """The body as the route's model, or None when it is not one (the route says why)."""
    if not raw:
        return None
    try:
        data: Any = decode(raw)
        return PageWrite.model_validate(data)
    except (ValueError, RecursionError, ValidationError):
        return None
