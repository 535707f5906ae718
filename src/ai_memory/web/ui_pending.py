"""``/web/pending-writes``: the learning loop's queue, each proposal with its diff and
approve/reject buttons — the only writes the web UI makes.

The buttons are plain HTML forms (no script). Each POST must carry the page's CSRF
token, bound to the sign-in cookie (:func:`~ai_memory.web.webauth.csrf_in`), on top
of the same-origin rule every write already meets; anything else is a 403 and
changes nothing. A decision answers with a redirect back to the queue.
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from ai_memory.consolidate import pending
from ai_memory.core.errors import Conflict
from ai_memory.core.identity import Scope
from ai_memory.core.principal import Access, principal_in
from ai_memory.runtime import Runtime
from ai_memory.web import access, webauth
from ai_memory.web.page_views import line_class
from ai_memory.web.pending_api import readable_writes
from ai_memory.web.ui_common import READ, RuntimeDep, html_errors, parse_positive
from ai_memory.web.views import Views

QUEUE = "/web/pending-writes"
MAX_FORM_BYTES = 8192
SHOWN = 20  # a page of the queue; ?before= pages on
BY = "web"


def build_pending_router(views: Views) -> APIRouter:
    router = APIRouter()

    async def queue(
        runtime: Runtime,
        csrf: str,
        state: str,
        hide: frozenset[Scope],
        *,
        before: int | None = None,
        notice: str = "",
        error: str = "",
        status: int = 200,
    ) -> Response:
        wanted = pending.check_state(state)
        rows = await runtime.readers.aread(
            lambda conn: readable_writes(
                conn, state=wanted, limit=SHOWN + 1, before=before, hide=hide
            )
        )
        writes = [{**row, "lines": diff_lines(row)} for row in rows[:SHOWN]]
        response = views.html(
            "pending.html",
            status,
            writes=writes,
            state=state or "all",
            states=("pending", "applied", "rejected", "refused", "all"),
            older=writes[-1]["id"] if len(rows) > SHOWN else None,
            csrf=csrf,
            notice=notice,
            error=error,
        )
        # The forms' POST must carry this page's origin (``no-referrer`` sends "null").
        response.headers["referrer-policy"] = "same-origin"
        return response

    @router.api_route("/pending-writes", methods=READ)
    @html_errors(views)
    async def pending_page(
        request: Request,
        runtime: RuntimeDep,
        state: str = "pending",
        done: str = "",
        before: str = "",
    ) -> Response:
        older = parse_positive(before, "before", most=10**12) if before else None
        notice = ""
        if done:
            number = parse_positive(done, "done", most=10**12)
            row = await access.pending_write(request, number, Access.READ)
            notice = f"#{number} {row['path']}: {row['state']}."
        csrf = webauth.csrf_in(request.headers.get("cookie", ""))
        hide = await access.hidden(request)
        return await queue(runtime, csrf, state, hide, before=older, notice=notice)

    @router.post("/pending-writes/{pending_id}/{action}")
    @html_errors(views)
    async def decide(
        request: Request, runtime: RuntimeDep, pending_id: str, action: str
    ) -> Response:
        number = parse_positive(pending_id, "pending write id", most=10**12)
        if action not in ("approve", "reject"):
            return views.error(404, f"Nothing lives at {request.url.path}.")
        await access.pending_write(request, number, Access.WRITE)  # before the form is read
        form = await read_form(request)
        cookie = request.headers.get("cookie", "")
        if form is None or not webauth.csrf_matches(form.get("csrf", ""), cookie):
            return views.error(
                403, "This form is out of date or did not come from this page; reload it."
            )
        decider = principal_in(request.scope)
        by = BY if decider.is_root else decider.name  # the queue shows who decided
        try:
            if action == "approve":
                await asyncio.to_thread(pending.approve, runtime.wiki, number, by)
            else:
                reason = form.get("reason", "").strip()[:2000]
                await asyncio.to_thread(pending.reject, runtime.wiki, number, by, reason)
        except Conflict as exc:
            csrf = webauth.csrf_in(cookie)
            hide = await access.hidden(request)
            return await queue(runtime, csrf, "pending", hide, error=exc.message, status=409)
        return RedirectResponse(f"{QUEUE}?done={number}", status_code=303)

    return router


async def read_form(request: Request) -> dict[str, str] | None:
    """The urlencoded form, first value of each field; None when too large or unreadable."""
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        return None
    try:
        fields = parse_qs(body.decode("utf-8"), max_num_fields=10, strict_parsing=False)
    except (UnicodeDecodeError, ValueError):
        return None
    return {name: values[0] for name, values in fields.items()}


def diff_lines(row: dict[str, Any]) -> list[dict[str, str]]:
    return [{"text": line, "class": line_class(line)} for line in pending.diff_lines(row)]
