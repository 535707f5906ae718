"""Links between pages: ``[[path.md]]``, ``[label](path.md)`` and cross-project forms."""

from __future__ import annotations

import posixpath
import re

from ai_memory.core.errors import InvalidInput
from ai_memory.core.identity import GLOBAL_PROJECT, PageRef, validate_name
from ai_memory.core.page import Link
from ai_memory.core.paths import MAX_PATH_BYTES, MAX_SEGMENT_BYTES, validate_page_path

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_WIKILINK = re.compile(r"\[\[([^\[\]\n|]+)(?:\|([^\[\]\n]*))?\]\]")
# The ``[`` comes first and the "not an image" lookbehind after it (the same matches as
# ``(?<!!)\[``), so the engine scans for the bracket instead of trying every position.
_MDLINK = re.compile(r"\[(?<!!\[)([^\[\]\n]*)\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
# A path every rule of ``validate_page_path`` passes (ASCII words, no hidden or empty
# segment, a markdown name), so it needs no check beyond the lengths; others get it.
_PLAIN_PATH = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*\.md")


def parse_links(body: str, source: PageRef) -> tuple[Link, ...]:
    """Every well-formed link in ``body``, deduplicated, in order; bad targets are skipped."""
    fenced = "```" in body or "~~~" in body  # no fence marker, no fenced block to drop
    text = _INLINE_CODE.sub("", _FENCE.sub("", body) if fenced else body)
    found: dict[tuple[str, str, str], Link] = {}
    for match in _WIKILINK.finditer(text):
        link = _wikilink(match.group(1).strip(), match.group(2), source)
        if link:
            found.setdefault((link.workspace, link.project, link.path), link)
    for match in _MDLINK.finditer(text):
        link = _mdlink(match.group(2).strip(), match.group(1), source)
        if link:
            found.setdefault((link.workspace, link.project, link.path), link)
    return tuple(found.values())


def _wikilink(target: str, label: str | None, source: PageRef) -> Link | None:
    target = target.split("#", 1)[0].strip()
    workspace, project = source.workspace, source.project
    if ":" in target:
        scope, _, target = target.partition(":")
        if "/" in scope:
            workspace, _, project = scope.partition("/")
        else:
            project = scope
    if not target.endswith(".md"):
        target += ".md"
    return _make(workspace, project, target, label, source)


def _mdlink(target: str, label: str | None, source: PageRef) -> Link | None:
    if _SCHEME.match(target) or target.startswith("#"):
        return None
    target = target.split("#", 1)[0]
    if not target.endswith(".md"):
        return None
    if target.startswith(("./", "../")):
        base = posixpath.dirname(source.path)
        target = posixpath.normpath(posixpath.join(base, target))
    return _make(source.workspace, source.project, target, label, source)


def _make(
    workspace: str, project: str, path: str, label: str | None, source: PageRef
) -> Link | None:
    try:
        if workspace != source.workspace or project != source.project:
            validate_name(workspace, "workspace")
            validate_name(project, "project")
        if not _plain(path):
            validate_page_path(path)
    except InvalidInput:
        return None
    if project == GLOBAL_PROJECT and workspace != source.workspace:
        workspace = source.workspace
    return Link(workspace, project, path, (label or "").strip() or None)


def _plain(path: str) -> bool:
    return (
        _PLAIN_PATH.fullmatch(path) is not None
        and len(path) <= MAX_PATH_BYTES
        and all(len(segment) <= MAX_SEGMENT_BYTES for segment in path.split("/"))
    )
