"""From the provider's answer to page writes: paths, bodies, links, and what is left alone.

Pure: no I/O. A pinned page (or a slot) is never rewritten; a page the answer
says again word for word (its sources aside) is reaffirmed, not versioned; every durable page links
back to the sessions it came from, and the session page links to every page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ai_memory.consolidate.consolidation_reads import Existing, SessionState
from ai_memory.consolidate.consolidation_schema import (
    KIND_OF_FOLDER,
    ConsolidationAnswer,
    PageDraft,
)
from ai_memory.wiki.batch import PageWrite

START = "<!-- consolidated: start -->"
END = "<!-- consolidated: end -->"
_BLOCK = re.compile(re.escape(START) + r".*?" + re.escape(END) + r"\n*", re.DOTALL)
_SESSION_LINK = re.compile(r"\[\[(sessions/[^\]|]+\.md)\]\]")
MAX_SOURCES = 20


@dataclass(frozen=True, slots=True)
class Planned:
    path: str
    action: str  # create | update | reaffirm | skip-pinned
    title: str
    write: PageWrite | None = None
    page_id: int | None = None  # the version a reaffirmation stands by


@dataclass
class Plan:
    session_path: str
    session_write: PageWrite
    pages: list[Planned] = field(default_factory=list)

    @property
    def writes(self) -> list[PageWrite]:
        return [p.write for p in self.pages if p.write is not None] + [self.session_write]

    @property
    def reaffirmed(self) -> list[Planned]:
        return [p for p in self.pages if p.action == "reaffirm"]

    def describe(self) -> list[dict[str, Any]]:
        return [{"path": p.path, "action": p.action, "title": p.title} for p in self.pages]


def plan_writes(
    state: SessionState, answer: ConsolidationAnswer, *, multi_page: bool, max_pages: int
) -> Plan:
    drafts = _distinct(answer.pages)[:max_pages] if multi_page else []
    known = set(state.durable) | {d.path for d in drafts}
    session_path = f"sessions/{state.session_id}.md"
    planned = [_plan_page(state, d, known, session_path) for d in drafts]
    written = [p for p in planned if p.action != "skip-pinned"]
    session_write = PageWrite(
        state.scope.page(session_path),
        _session_body(state, answer, written),
        {"title": answer.title, "summary": answer.summary},
        expected_page_id=state.session_page_id,
    )
    return Plan(session_path, session_write, planned)


def _distinct(drafts: list[PageDraft]) -> list[PageDraft]:
    """One draft per path: the first wins (an answer naming a page twice is not merged)."""
    seen: set[str] = set()
    kept = []
    for draft in drafts:
        if draft.path not in seen:
            seen.add(draft.path)
            kept.append(draft)
    return kept


def _plan_page(state: SessionState, draft: PageDraft, known: set[str], session: str) -> Planned:
    existing = state.durable.get(draft.path)
    if existing is not None and existing.pinned:
        return Planned(draft.path, "skip-pinned", existing.title)
    sources = _sources(existing.body if existing else "", session)
    links = [link for link in draft.links if link in known and link != draft.path]
    body = _page_body(draft, links, sources)
    if existing is not None and _says_again(draft, body, existing):
        return Planned(draft.path, "reaffirm", existing.title, page_id=existing.page_id)
    meta: dict[str, Any] = {"title": draft.title, "kind": KIND_OF_FOLDER[draft.folder]}
    if draft.tags:
        meta["tags"] = draft.tags
    write = PageWrite(
        state.scope.page(draft.path),
        body,
        meta,
        expected_page_id=existing.page_id if existing else None,
        create_only=existing is None,
    )
    return Planned(draft.path, "update" if existing else "create", draft.title, write)


def _sources(old_body: str, session: str) -> list[str]:
    """The sessions an earlier version named, then this one: the page keeps its history."""
    found = [link for link in _SESSION_LINK.findall(old_body) if link != session]
    kept = [*dict.fromkeys(found)][-(MAX_SOURCES - 1) :]
    return [*kept, session]


def _says_again(draft: PageDraft, body: str, existing: Existing) -> bool:
    same_text = _without_sources(body) == _without_sources(existing.body)
    return same_text and draft.title == existing.title


def _without_sources(body: str) -> str:
    """A page's knowledge: its text without the list of sessions it came from."""
    head, found, _ = body.rpartition("\n## Sources\n")
    return head if found else body


def _page_body(draft: PageDraft, links: list[str], sources: list[str]) -> str:
    lines = [f"# {_one_line(draft.title)}", "", draft.body.strip(), ""]
    if links:
        lines += ["## Related", "", *[f"- [[{link}]]" for link in links], ""]
    lines += ["## Sources", "", *[f"- [[{source}]]" for source in sources]]
    return "\n".join(lines) + "\n"


def _session_body(state: SessionState, answer: ConsolidationAnswer, pages: list[Planned]) -> str:
    rest = _BLOCK.sub("", state.session_body)
    first, _, tail = rest.partition("\n")
    if first.startswith("# "):
        rest = tail.lstrip("\n")
    block = [START, "## Summary", "", answer.summary.strip(), ""]
    if pages:
        block += ["## Pages from this session", ""]
        block += [f"- [[{p.path}]] — {_one_line(p.title)}" for p in pages]
        block.append("")
    block.append(END)
    return f"# {_one_line(answer.title)}\n\n" + "\n".join(block) + "\n\n" + rest


def _one_line(text: str) -> str:
    return " ".join(text.split())
