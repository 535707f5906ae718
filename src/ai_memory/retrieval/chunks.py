"""Cutting a page into the short chunks that get embedded.

Short chunks (a paragraph, a prompt) embed far better than whole pages, and
they keep the names in them ("Caroline: ..."), which matter to recall. The
first chunk is the title with the page's summary; a session page's trailing
list of raw observations repeats its prompts and is left out.
"""

from __future__ import annotations

import re
from typing import Any

MAX_WORDS = 80
MIN_WORDS = 6
MAX_CHUNKS = 256
_HEADING = re.compile(r"^#{1,6}\s+(.*)$")
_SKIPPED_SECTIONS = ("observations",)


def chunk_page(title: str, body: str, frontmatter: dict[str, Any]) -> list[str]:
    head = title.strip()
    summary = frontmatter.get("summary") or frontmatter.get("abstract")
    if isinstance(summary, str) and summary.strip():
        head = f"{head}. {summary.strip()}"
    chunks = [head] if head else []
    for paragraph in _paragraphs(body):
        chunks.extend(_windows(paragraph))
        if len(chunks) >= MAX_CHUNKS:
            break
    return chunks[:MAX_CHUNKS] or [""]


def _paragraphs(body: str) -> list[str]:
    paragraphs: list[str] = []
    current: list[str] = []
    skipping = False
    for line in body.splitlines():
        heading = _HEADING.match(line.strip())
        if heading or not line.strip():
            if current:
                paragraphs.append(" ".join(current))
                current = []
            if heading:
                skipping = heading.group(1).strip().lower().startswith(_SKIPPED_SECTIONS)
            continue
        if not skipping:
            current.append(line.strip())
    if current:
        paragraphs.append(" ".join(current))
    return _merge_short(paragraphs)


def _merge_short(paragraphs: list[str]) -> list[str]:
    """Tiny paragraphs (list items, one-liners) ride along with their neighbour."""
    merged: list[str] = []
    for paragraph in paragraphs:
        if merged and len(merged[-1].split()) < MIN_WORDS:
            merged[-1] = f"{merged[-1]} {paragraph}"
        else:
            merged.append(paragraph)
    return merged


def _windows(paragraph: str) -> list[str]:
    words = paragraph.split()
    if len(words) <= MAX_WORDS:
        return [paragraph]
    step = MAX_WORDS * 3 // 4
    return [" ".join(words[i : i + MAX_WORDS]) for i in range(0, len(words) - MAX_WORDS // 4, step)]
