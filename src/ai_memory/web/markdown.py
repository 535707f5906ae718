"""Page bodies as safe HTML: markdown-it with raw HTML off, wiki links pointed at the UI.

Page text is untrusted (agents and captures write it), so nothing in it may
become markup: raw HTML is escaped, and markdown-it refuses ``javascript:``,
``vbscript:``, ``file:`` and non-image ``data:`` links. Links between pages
(``[[path.md]]``, ``[label](path.md)``, cross-project forms) are resolved with
the wiki's own link parser and point at the UI's page view.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from ai_memory.core.identity import PageRef
from ai_memory.core.page import Link
from ai_memory.wiki.links import parse_links

_WIKILINK = re.compile(r"\[\[([^\[\]\n|]+)(?:\|([^\[\]\n]*))?\]\]")


def page_url(workspace: str, project: str, path: str) -> str:
    return f"/web/{quote(workspace)}/{quote(project)}/page/{quote(path, safe='/')}"


def build_renderer() -> MarkdownIt:
    """One renderer per app; ``render(md, text, source)`` uses it."""
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table").enable("strikethrough")
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    md.add_render_rule("wikilink", _render_wikilink)
    md.core.ruler.push("page_links", _rewrite_page_links)
    return md


def render(
    md: MarkdownIt, text: str, source: PageRef, missing: frozenset[tuple[str, str, str]]
) -> str:
    """``missing`` holds the (workspace, project, path) of links not resolved yet."""
    html: str = md.render(text, {"source": source, "missing": missing})
    return html


def _classes(env: EnvType, link: Link, base: str) -> str:
    missing = (link.workspace, link.project, link.path) in env["missing"]
    return f"{base} unresolved".strip() if missing else base


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    if not state.src.startswith("[[", state.pos):
        return False
    match = _WIKILINK.match(state.src, state.pos)
    if match is None:
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.meta = {"text": match.group(0), "label": (match.group(2) or "").strip()}
    state.pos = match.end()
    return True


def _render_wikilink(
    self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    meta = tokens[idx].meta
    links = parse_links(meta["text"], env["source"])
    if not links:
        return escapeHtml(meta["text"])
    link = links[0]
    label = meta["label"] or link.path
    href = page_url(link.workspace, link.project, link.path)
    classes = _classes(env, link, "wikilink")
    return f'<a class="{classes}" href="{escapeHtml(href)}">{escapeHtml(label)}</a>'


def _rewrite_page_links(state: Any) -> None:
    """``[label](other.md)`` in a page points at the UI's view of that page."""
    source: PageRef = state.env["source"]
    for block in state.tokens:
        for token in block.children or ():
            if token.type != "link_open":
                continue
            href = str(token.attrGet("href") or "")
            links = parse_links(f"[x]({href})", source) if href else ()
            if links:
                link = links[0]
                token.attrSet("href", page_url(link.workspace, link.project, link.path))
                if classes := _classes(state.env, link, ""):
                    token.attrSet("class", classes)
            elif href.startswith(("http://", "https://")):
                token.attrSet("rel", "noopener noreferrer nofollow")
