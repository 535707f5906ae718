"""Rewriting the links of a page whose targets moved, so each still reaches its page.

A link names its target relative to the page that holds it (``[[path.md]]`` is
the same project, ``[[api:path.md]]`` the same workspace). When a project is
renamed, moved to another workspace or merged, the text of every page that
linked into it, and of its own pages that name another project, is rewritten
to the shortest form that reaches the same page from where the page now is.
The text and the index then agree, so a reindex derives the same links.
Links inside code (fenced or inline) are not links, and are left as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ai_memory.core.identity import PageRef
from ai_memory.wiki.links import parse_links

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_WIKILINK = re.compile(r"\[\[([^\[\]\n|]+)(?:\|([^\[\]\n]*))?\]\]")
_MDLINK = re.compile(r"(?<!!)\[([^\[\]\n]*)\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")

Mover = Callable[[PageRef], PageRef]  # where a page that was at the argument is now


def relink(body: str, was: PageRef, now: PageRef, move: Mover) -> str:
    """``body`` of the page that was at ``was`` and is now at ``now``, every link whose
    target ``move`` relocates (or whose meaning the page's own move changes) rewritten."""
    code = [m.span() for m in _FENCE.finditer(body)]
    code += [m.span() for m in _INLINE_CODE.finditer(body)]

    def in_code(at: int) -> bool:
        return any(start <= at < end for start, end in code)

    def wiki(match: re.Match[str]) -> str:
        inner, label = match.group(1), match.group(2)
        want = _target(f"[[{inner}]]", was, now, move)
        if want is None or in_code(match.start()):
            return match.group(0)
        anchor = "#" + inner.split("#", 1)[1] if "#" in inner else ""
        text = f"{_qualifier(want, now)}{want.path}{anchor}"
        return f"[[{text}|{label}]]" if label is not None else f"[[{text}]]"

    def markdown(match: re.Match[str]) -> str:
        label, target = match.group(1), match.group(2)
        want = _target(f"[{label}]({target})", was, now, move)
        if want is None or in_code(match.start()):
            return match.group(0)
        if want.scope == now.scope:
            anchor = "#" + target.split("#", 1)[1] if "#" in target else ""
            return match.group(0).replace(f"({target}", f"({want.path}{anchor}", 1)
        return f"[[{_qualifier(want, now)}{want.path}|{label}]]"

    return _MDLINK.sub(markdown, _WIKILINK.sub(wiki, body))


def _target(text: str, was: PageRef, now: PageRef, move: Mover) -> PageRef | None:
    """Where the link ``text`` must lead from ``now``; None when it already does."""
    before = parse_links(text, was)
    if not before:
        return None
    old = before[0]
    want = move(PageRef(old.workspace, old.project, old.path))
    after = parse_links(text, now)
    if after and (after[0].workspace, after[0].project, after[0].path) == (
        want.workspace,
        want.project,
        want.path,
    ):
        return None
    return want


def _qualifier(target: PageRef, source: PageRef) -> str:
    """The shortest scope prefix that names ``target``'s project from ``source``."""
    if target.scope == source.scope:
        return ""
    if target.workspace == source.workspace:
        return f"{target.project}:"
    return f"{target.workspace}/{target.project}:"
