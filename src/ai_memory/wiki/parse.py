"""Reading and parsing page files for a reconcile: the work that can run anywhere.

Everything here is a plain function of a file's bytes, so it runs the same in
the indexing process and in a worker process (``parse_pool``). What it finds
wrong with a file becomes a warning in the outcome, never an exception.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from ai_memory.core.identity import PageRef
from ai_memory.core.page import PageDocument
from ai_memory.wiki.document import build_document
from ai_memory.wiki.frontmatter import parse_file


@dataclass(slots=True)
class Outcome:
    """One file read: its document, or None when it is unchanged or could not be read."""

    ref: PageRef
    doc: PageDocument | None = None
    unchanged: bool = False
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Chunk:
    """Files to read: each with the content hash the index holds for it (None: not indexed).

    ``full`` parses a file even when its hash matches (a rebuild of the derived rows).
    """

    root: str
    items: list[tuple[PageRef, str | None]]
    full: bool = False


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_bytes(ref: PageRef, file: Path, warnings: list[str]) -> bytes | None:
    try:
        return file.read_bytes()
    except OSError as exc:
        warnings.append(f"skipped {ref.relpath}: {exc}")
        return None


def document(ref: PageRef, data: bytes, warnings: list[str]) -> PageDocument | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        warnings.append(f"skipped {ref.relpath}: not UTF-8 ({exc.reason})")
        return None
    try:
        parsed = parse_file(text)
        if parsed.error:
            warnings.append(f"{ref.relpath}: {parsed.error}")
        return build_document(ref, parsed.frontmatter, parsed.body, text=text, error=parsed.error)
    except Exception as exc:  # one unreadable file must never stop a start or a reindex
        error = f"frontmatter could not be read ({type(exc).__name__}); indexed as text"
        warnings.append(f"{ref.relpath}: {error}")
        return build_document(ref, {}, text, text=text, error=error)


def read_one(root: Path, ref: PageRef, indexed_hash: str | None, full: bool) -> Outcome:
    outcome = Outcome(ref)
    data = read_bytes(ref, root / ref.relpath, outcome.warnings)
    if data is None:
        return outcome
    if indexed_hash is not None and digest(data) == indexed_hash:
        outcome.unchanged = True
        if not full:
            return outcome
    outcome.doc = document(ref, data, outcome.warnings)
    return outcome


def parse_chunk(chunk: Chunk) -> list[Outcome]:
    """Read and parse every file of ``chunk`` in order (in this process)."""
    root = Path(chunk.root)
    return [read_one(root, ref, known, chunk.full) for ref, known in chunk.items]
