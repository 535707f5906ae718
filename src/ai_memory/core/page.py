"""What the index knows of one page version, independent of how it is stored."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Link:
    """A link from a page to ``(workspace, project, path)``; it may not exist yet."""

    workspace: str
    project: str
    path: str
    label: str | None = None


@dataclass(frozen=True, slots=True)
class PageDocument:
    """A page's parsed, derived form: everything the index stores for one version."""

    title: str
    kind: str
    tier: str
    tags: tuple[str, ...]
    pinned: bool
    expires_at: str | None
    frontmatter: dict[str, Any]
    body: str
    text: str  # the whole file: frontmatter + body, exactly as on disk
    content_hash: str
    frontmatter_error: str | None = None
    links: tuple[Link, ...] = ()
    entities: tuple[str, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class WriteResult:
    page_id: int
    version: int
    workspace: str
    project: str
    path: str
    changed: bool
    created: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "page_id": self.page_id,
            "version": self.version,
            "workspace": self.workspace,
            "project": self.project,
            "path": self.path,
            "changed": self.changed,
            "created": self.created,
        }
