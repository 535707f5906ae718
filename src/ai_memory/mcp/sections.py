"""A page body's sections, each with a hash, and the patches agents apply to them.

A section runs from its heading to the next heading of the same or a higher
level. Its hash covers exactly that text, so an agent that read the page can
prove it is replacing what it saw; anything else fails before a write.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

from markdown_it import MarkdownIt

from ai_memory.core.errors import AmbiguousSection, Conflict, SectionConflict, SectionNotFound
from ai_memory.core.fence import neutralise
from ai_memory.mcp.errors import InvalidArgument

PatchOp = Literal["append", "append_to_section", "add_section", "replace_section"]
HASH_CHARS = 16


@dataclass(frozen=True, slots=True)
class Section:
    heading: str
    level: int
    start: int  # line index of the heading
    end: int  # line index after the section's last line
    hash: str

    def to_dict(self) -> dict[str, object]:
        """The agent's view (answer() neutralises the heading on the way out)."""
        return {
            "heading": self.heading,
            "level": self.level,
            "line": self.start + 1,
            "hash": self.hash,
        }


def sections(body: str) -> list[Section]:
    """Every heading's section (code fences are not headings)."""
    lines = body.splitlines(keepends=True)
    tokens = MarkdownIt("commonmark").parse(body)
    heads: list[tuple[int, int, str]] = []
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.map is not None:
            inline = tokens[index + 1]
            heads.append((token.map[0], int(token.tag[1:]), inline.content.strip()))
    found = []
    for position, (start, level, heading) in enumerate(heads):
        end = len(lines)
        for later_start, later_level, _ in heads[position + 1 :]:
            if later_level <= level:
                end = later_start
                break
        found.append(Section(heading, level, start, end, section_hash(lines[start:end])))
    return found


def section_hash(lines: list[str]) -> str:
    text = "".join(lines).rstrip("\n")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_CHARS]


def apply_patch(
    body: str,
    op: PatchOp,
    content: str,
    *,
    section: str | None = None,
    section_hash: str | None = None,
    level: int = 2,
) -> str:
    """The new body, or a typed error; never a partial edit."""
    if op == "append":
        return _join(body.rstrip("\n"), content)
    if op == "add_section":
        return _add_section(body, content, section, level)
    target = _find(body, section, section_hash, require_hash=op == "replace_section")
    lines = body.splitlines(keepends=True)
    if op == "append_to_section":
        kept = "".join(lines[: target.end]).rstrip("\n")
        rest = "".join(lines[target.end :])
        return _join(kept, content) + ("\n" + rest if rest else "")
    head = "".join(lines[: target.start + 1])
    rest = "".join(lines[target.end :])
    replaced = head + ("\n" if not head.endswith("\n") else "") + "\n" + content.strip("\n") + "\n"
    return replaced + ("\n" + rest if rest else "")


def _join(before: str, content: str) -> str:
    addition = content.strip("\n")
    return f"{before}\n\n{addition}\n" if before else f"{addition}\n"


def _add_section(body: str, content: str, heading: str | None, level: int) -> str:
    if not heading or not heading.strip():
        raise InvalidArgument("section", "add_section needs the new section's heading")
    if "\n" in heading:
        raise InvalidArgument("section", "a heading is one line")
    name = _norm(heading)
    if any(_norm(s.heading) == name for s in sections(body)):
        raise Conflict(f"a section {heading.strip()!r} already exists; append to it or replace it")
    return _join(body.rstrip("\n"), f"{'#' * level} {heading.strip()}\n\n{content.strip(chr(10))}")


def _find(
    body: str, heading: str | None, wanted_hash: str | None, *, require_hash: bool
) -> Section:
    if not heading and not wanted_hash:
        raise InvalidArgument("section", "name the section by its heading (and hash)")
    if require_hash and not wanted_hash:
        raise InvalidArgument("section_hash", "replace_section needs the section's current hash")
    every = sections(body)
    named = [s for s in every if heading is None or _norm(s.heading) == _norm(heading)]
    if not named:
        raise SectionNotFound(f"no section {heading!r}", headings=[s.heading for s in every])
    if wanted_hash:
        matching = [s for s in named if s.hash == wanted_hash]
        if not matching:
            raise SectionConflict(
                f"section {heading or wanted_hash!r} changed since it was read; "
                "read the page again and retry",
                sections=[s.to_dict() for s in named],
            )
        named = matching
    if len(named) > 1:
        raise AmbiguousSection(
            f"{len(named)} sections are called {heading!r}; pass section_hash to pick one",
            sections=[s.to_dict() for s in named],
        )
    return named[0]


def _norm(heading: str) -> str:
    """Headings compare as shown to agents too, so a heading read back neutralised matches."""
    return " ".join(neutralise(heading).strip().lstrip("#").split()).casefold()
