"""Cutting a page into the short chunks that get embedded.

Short chunks (a paragraph, a prompt) embed far better than whole pages, and
they keep the names in them ("Caroline: ..."), which matter to recall. The
first chunk is the title with the page's summary.

A session page is embedded for what was said and done in it, not for the parts the
server writes around that: the list of who, where and when under its title, the
placeholders of empty sections ("(no file edited)"), the count line of how it
ended, the tool-call tally, and the trailing timeline, which repeats the prompts cut
short behind a timestamp each. Those parts are alike on every session page, so a
query that matches none of a session's words would rank sessions by them. (They
follow ``hooks/session_render.py``; ``tests/test_retrieval_chunks.py`` renders a real
session page and checks what is left.)
"""

from __future__ import annotations

import re
from typing import Any

MAX_WORDS = 80
MIN_WORDS = 6
MAX_CHUNKS = 256
_HEADING = re.compile(r"^#{1,6}\s+(.*)$")
_FENCE = re.compile(r"^(`{3,}|~{3,})[\w+-]*$")  # a code block's markup, not its text
# A session page's sections that only index it again; "observations" on older pages.
_SESSION_INDEXES = ("timeline", "observations", "tool calls")
# A line the server writes on every session page: a field under the title, a
# placeholder of an empty section, the count of prompts and commands it ended after.
_SESSION_BOILERPLATE = re.compile(
    r"^(?:- (?:Agent|Session|Started|Ended|Directory): .*|\([^()]*\)\.?|Ended \(.*\) after .*)$"
)


def chunk_page(title: str, body: str, frontmatter: dict[str, Any]) -> list[str]:
    head = title.strip()
    summary = frontmatter.get("summary") or frontmatter.get("abstract")
    if isinstance(summary, str) and summary.strip():
        head = f"{head}. {summary.strip()}"
    chunks = [head] if head else []
    # Written by the server: a hand-written page of that kind has no session id.
    session = frontmatter.get("kind") == "session" and bool(frontmatter.get("session_id"))
    for paragraph in _paragraphs(body, session):
        chunks.extend(_windows(paragraph))
        if len(chunks) >= MAX_CHUNKS:
            break
    return chunks[:MAX_CHUNKS] or [""]


def _paragraphs(body: str, session: bool) -> list[str]:
    """The body's paragraphs; inside a code block every line is text (a prompt quoted
    there may hold what looks like a heading or a field), and only the fence goes."""
    paragraphs: list[str] = []
    current: list[str] = []
    skipping = False
    fence = ""
    for line in body.splitlines():
        text = line.strip()
        opened = _FENCE.match(text)
        if fence or opened:
            if opened and (not fence or text.startswith(fence)):
                fence = "" if fence else opened.group(1)
            elif text and not skipping:
                current.append(text)
            continue
        heading = _HEADING.match(text)
        if heading or not text:
            if current:
                paragraphs.append(" ".join(current))
                current = []
            if heading:
                name = heading.group(1).strip().lower()
                skipping = session and name.startswith(_SESSION_INDEXES)
            continue
        if not skipping and not (session and _SESSION_BOILERPLATE.match(text)):
            current.append(text)
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
