"""Rendering the UI's templates into HTML responses with a strict content policy."""

from __future__ import annotations

import json
from functools import cached_property
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from fastapi.responses import HTMLResponse

if TYPE_CHECKING:
    from jinja2 import Environment
    from markdown_it import MarkdownIt

    from ai_memory.core.identity import PageRef

# No script may run and nothing may load from elsewhere, whatever a page contains.
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


def project_url(workspace: str, project: str) -> str:
    return f"/web/{quote(workspace)}/{quote(project)}"


def session_url(workspace: str, project: str, session_id: str) -> str:
    return f"{project_url(workspace, project)}/session/{quote(session_id, safe='')}"


def diff_url(workspace: str, project: str, path: str) -> str:
    return f"{project_url(workspace, project)}/diff/{quote(path, safe='/')}"


def when(value: str | None) -> str:
    """ISO timestamps to the minute, in the zone they were written in."""
    return value[:16].replace("T", " ") if value else ""


def frontmatter_value(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else str(value)


def build_environment() -> Environment:
    """Jinja2 and the filters' modules load with the first page the UI renders, not with
    the server: they are not needed to answer its first request."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    from ai_memory.web.explain_view import explain_html
    from ai_memory.web.graph_svg import graph_svg
    from ai_memory.web.markdown import page_url
    from ai_memory.web.text_view import snippet_html

    env = Environment(
        loader=PackageLoader("ai_memory.web", "templates"),
        autoescape=select_autoescape(["html"], default_for_string=True, default=True),
        auto_reload=False,  # templates ship with the package: no stat() per request
    )
    env.globals.update(
        page_url=page_url,
        project_url=project_url,
        session_url=session_url,
        diff_url=diff_url,
        graph_svg=graph_svg,
    )
    env.filters.update(
        when=when, fm=frontmatter_value, snippet=snippet_html, explain_html=explain_html
    )
    return env


class Views:
    """The template environment and the markdown renderer, built once per app, on first use."""

    @cached_property
    def env(self) -> Environment:
        return build_environment()

    @cached_property
    def md(self) -> MarkdownIt:
        from ai_memory.web.markdown import build_renderer

        return build_renderer()

    def markdown(self, text: str, source: PageRef, missing: frozenset[tuple[str, str, str]]) -> str:
        """A page body as safe HTML (see ``web.markdown.render``)."""
        from ai_memory.web.markdown import render

        return render(self.md, text, source, missing)

    def html(self, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        body = self.env.get_template(template).render(**context)
        return HTMLResponse(body, status_code=status_code, headers=SECURITY_HEADERS)

    def cached(self, status_code: int, body: bytes) -> HTMLResponse:
        """A body rendered earlier by :meth:`html`, answered with the same headers."""
        return HTMLResponse(body, status_code=status_code, headers=SECURITY_HEADERS)

    def error(self, status: int, message: str) -> HTMLResponse:
        heading = {404: "Not found", 400: "Bad request"}.get(status, "Something went wrong")
        return self.html("error.html", status, status=status, heading=heading, message=message)
