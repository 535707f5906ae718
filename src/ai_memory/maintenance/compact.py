"""Extractive compaction of a cold episodic page: keep what can be searched for, drop prose.

What stays: the abstract, a first-paragraph summary and the keep tokens (paths,
URLs, code spans, error codes, identifiers). The full text stays in git and in
the page's history, so compaction loses nothing that restore-page cannot bring back.
"""

from __future__ import annotations

import re
from typing import Any

import re2

SUMMARY_CHARS = 400
MARKER = "(compacted; the full text is version"
MAX_TOKENS = 200

_KEEP = re2.compile(
    r"(`[^`\n]{1,120}`"  # code spans
    r"|https?://[^\s)>\]]{1,300}"  # URLs
    r"|(?:[\w.-]+/)+[\w.-]+"  # paths
    r"|\b[A-Z][A-Z0-9]{1,10}[-_]?\d{2,6}\b"  # error codes (E1234, HTTP-404, ORA-00942)
    r"|\b[a-z]+(?:_[a-z0-9]+)+\b"  # snake_case identifiers
    r"|\b[a-z]+(?:[A-Z][a-z0-9]+)+\b"  # camelCase identifiers
    r"|\b(?:[A-Z][a-z0-9]+){2,}\b)"  # PascalCase identifiers
)
_HEADING = re.compile(r"^#{1,6}\s")


def keep_tokens(text: str) -> list[str]:
    """The searchable tokens of ``text``, first occurrence order, without repeats."""
    seen: dict[str, None] = {}
    for match in _KEEP.finditer(text):
        seen.setdefault(match.group(0), None)
        if len(seen) >= MAX_TOKENS:
            break
    return list(seen)


def first_paragraph(body: str) -> str:
    for block in body.split("\n\n"):
        lines = [ln for ln in block.strip().splitlines() if not _HEADING.match(ln)]
        text = " ".join(" ".join(lines).split())
        if text:
            return text[:SUMMARY_CHARS] + ("…" if len(text) > SUMMARY_CHARS else "")
    return ""


def compact_body(page: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The compacted body and the frontmatter changes for one page (as ``read_page`` gives it)."""
    body = str(page["body"])
    frontmatter = page.get("frontmatter") or {}
    summary = str(frontmatter.get("summary") or first_paragraph(body))
    parts = [f"# {page['title']}", ""]
    abstract = frontmatter.get("abstract")
    if abstract:
        parts += [str(abstract), ""]
    if summary:
        parts += [summary, ""]
    tokens = keep_tokens(body)
    if tokens:
        parts += ["Kept: " + " ".join(tokens), ""]
    parts.append(f"{MARKER} {page['version']} in the history)")
    return "\n".join(parts) + "\n", {"summary": summary or None}


def is_compacted(body: str) -> bool:
    """A compacted page is not compacted again; the next cold sweep evicts it."""
    return MARKER in body
