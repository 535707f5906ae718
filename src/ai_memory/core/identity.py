"""The typed identity every domain row carries: ``(workspace, project, path)``."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ai_memory.core.errors import InvalidIdentity
from ai_memory.core.paths import validate_page_path

DEFAULT_WORKSPACE = "default"
GLOBAL_PROJECT = "_global"
SCRATCH_PROJECT = "scratch"
RESERVED_PROJECTS = frozenset({GLOBAL_PROJECT, SCRATCH_PROJECT})

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")


def validate_name(value: str, what: str) -> str:
    """Workspace and project names become folder names, so keep them tame.

    The whole value must match (``fullmatch``): a trailing newline would otherwise
    pass and make a look-alike folder.
    """
    if not isinstance(value, str) or not _NAME.fullmatch(value) or value.endswith("."):
        raise InvalidIdentity(
            f"invalid {what} {value!r}: use 1-64 letters, digits, '_', '-' or '.', "
            "starting with a letter, digit or '_'"
        )
    return value


@dataclass(frozen=True, slots=True)
class Scope:
    """A project inside a workspace."""

    workspace: str
    project: str

    @classmethod
    def of(cls, workspace: str | None, project: str) -> Scope:
        return cls(
            validate_name(workspace or DEFAULT_WORKSPACE, "workspace"),
            validate_name(project, "project"),
        )

    def page(self, path: str) -> PageRef:
        return PageRef(self.workspace, self.project, validate_page_path(path))

    def __str__(self) -> str:
        return f"{self.workspace}/{self.project}"


@dataclass(frozen=True, slots=True)
class PageRef:
    """One page: the full typed identity."""

    workspace: str
    project: str
    path: str

    @property
    def scope(self) -> Scope:
        return Scope(self.workspace, self.project)

    @property
    def relpath(self) -> str:
        """The page's file path relative to the wiki root."""
        return f"{self.workspace}/{self.project}/{self.path}"

    def __str__(self) -> str:
        return f"{self.workspace}/{self.project}:{self.path}"
