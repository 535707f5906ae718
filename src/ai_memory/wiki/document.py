"""Deriving a page's indexed form (title, kind, links, …) from frontmatter and body."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from ai_memory.core.identity import PageRef
from ai_memory.core.kinds import KINDS, TIERS, kind_for_path, pinned_by_path, tier_for_kind
from ai_memory.core.page import PageDocument
from ai_memory.wiki.frontmatter import render_markdown
from ai_memory.wiki.limits import TEXT_CHARS
from ai_memory.wiki.links import parse_links

_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)
MAX_TITLE_CHARS = TEXT_CHARS["title"]  # a title derived from a heading or a file name


def build_document(
    ref: PageRef,
    frontmatter: dict[str, Any],
    body: str,
    *,
    text: str | None = None,
    error: str | None = None,
) -> PageDocument:
    """``text`` is the file as it is on disk when indexing a file; else it is rendered."""
    kind = page_kind(ref, frontmatter)
    tier = _choice(frontmatter.get("tier"), TIERS) or tier_for_kind(kind)
    if text is None:
        text = render_markdown(frontmatter, body)
    expires = frontmatter.get("expires_at")
    return PageDocument(
        title=derive_title(ref, frontmatter, body),
        kind=kind,
        tier=tier,
        tags=_strings(frontmatter.get("tags")),
        pinned=bool(frontmatter.get("pinned")) or pinned_by_path(ref.path),
        expires_at=str(expires) if expires else None,
        frontmatter=frontmatter,
        body=body,
        text=text,
        content_hash=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        frontmatter_error=error,
        links=parse_links(body, ref),
        entities=_strings(frontmatter.get("entities")),
    )


def derive_title(ref: PageRef, frontmatter: dict[str, Any], body: str) -> str:
    title = frontmatter.get("title")
    if isinstance(title, str | int | float) and str(title).strip():
        return str(title).strip()[:MAX_TITLE_CHARS]
    heading = _HEADING.search(body)
    if heading:
        return heading.group(1).strip()[:MAX_TITLE_CHARS]
    stem = ref.path.rsplit("/", 1)[-1][:-3]
    return stem.replace("-", " ").replace("_", " ").strip() or stem


def _choice(value: Any, allowed: frozenset[str]) -> str | None:
    return value if isinstance(value, str) and value in allowed else None


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list):
        return ()
    seen: dict[str, None] = {}
    for item in value:
        if isinstance(item, str | int | float) and str(item).strip():
            seen.setdefault(str(item).strip(), None)
    return tuple(seen)


def page_kind(ref: PageRef, frontmatter: dict[str, Any]) -> str:
    return _choice(frontmatter.get("kind"), KINDS) or kind_for_path(ref.path)


def complete_frontmatter(ref: PageRef, frontmatter: dict[str, Any], body: str) -> dict[str, Any]:
    """A written page names its title and kind, so the file describes itself."""
    completed = dict(frontmatter)
    completed.setdefault("title", derive_title(ref, frontmatter, body))
    completed.setdefault("kind", page_kind(ref, frontmatter))
    return completed
