"""``ai-memory export --project P --to DIR``: a plain markdown bundle of one project.

The bundle is what another tool (an editor, a static site generator, another memory
system) can read without ai-memory: ``pages/<path>`` is each live page's file exactly as
the wiki holds it (frontmatter included, session pages among them), and ``index.md``
lists every page with its title, kind, path and last update. Nothing else is written.
It reads the index read-only and the wiki's files, so it runs beside a server or
without one, and changes nothing in the data dir (no audit row: nothing was changed).
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from ai_memory.core.errors import Conflict, InvalidInput, NotFound
from ai_memory.core.identity import Scope
from ai_memory.hygiene.report import HygieneReport

LIVE_PAGES = """
SELECT path, title, kind, frontmatter, created_at FROM pages
WHERE workspace = ? AND project = ? AND is_latest = 1 AND deleted_at IS NULL ORDER BY path
"""
PROJECT_EXISTS = "SELECT 1 FROM projects WHERE workspace = ? AND name = ?"
INDEX_NAME = "index.md"
PAGES_DIR = "pages"


def export_project(
    conn: sqlite3.Connection,
    data_dir: Path,
    wiki_root: Path,
    scope: Scope,
    target: Path,
    *,
    force: bool = False,
    dry_run: bool = False,
) -> HygieneReport:
    """Write the bundle of ``scope`` into ``target`` (refused when it holds anything,
    unless ``force``, which writes over the bundle's own names and leaves the rest)."""
    if conn.execute(PROJECT_EXISTS, (scope.workspace, scope.project)).fetchone() is None:
        raise NotFound(f"no project {scope.workspace}/{scope.project}")
    target = target.expanduser().absolute()
    _require_outside(target, data_dir)
    if target.exists() and not target.is_dir():
        raise Conflict(f"{target} exists and is not a folder")
    above = next((p for p in target.parents if p.exists()), None)
    if above is not None and not above.is_dir():
        raise Conflict(f"cannot create {target}: {above} is a file")
    if target.is_dir() and any(target.iterdir()) and not force:
        raise Conflict(f"{target} is not empty; pass --force to write into it anyway")
    rows = conn.execute(LIVE_PAGES, (scope.workspace, scope.project)).fetchall()
    report = HygieneReport(
        "export",
        dry_run,
        target={"workspace": scope.workspace, "project": scope.project, "to": str(target)},
    )
    listed: list[tuple[str, str, str, str]] = []
    folder = wiki_root / scope.workspace / scope.project
    for row in rows:
        source = folder / row["path"]
        if not source.is_file():
            report.warnings.append(f"{row['path']} is indexed but has no file; left out")
            continue
        listed.append((row["title"], row["kind"], row["path"], _updated(row)))
        report.pages.append(scope.page(row["path"]).relpath)
        report.files.append(f"{PAGES_DIR}/{row['path']}")
        if not dry_run:
            _write(target / PAGES_DIR / row["path"], source.read_bytes())
    report.files.append(INDEX_NAME)
    report.count("pages", len(listed))
    if not dry_run:
        _write(target / INDEX_NAME, render_index(scope, listed).encode("utf-8"))
    return report


def render_index(scope: Scope, listed: list[tuple[str, str, str, str]]) -> str:
    lines = [
        f"# {scope.workspace}/{scope.project}",
        "",
        f"{len(listed)} page(s) exported from ai-memory.",
        "",
        "| Title | Kind | Path | Updated |",
        "| --- | --- | --- | --- |",
    ]
    for title, kind, path, updated in listed:
        link = f"[{_cell(path)}]({PAGES_DIR}/{path.replace(' ', '%20')})"
        lines.append(f"| {_cell(title)} | {kind} | {link} | {updated} |")
    return "\n".join(lines) + "\n"


def _updated(row: sqlite3.Row) -> str:
    try:
        frontmatter = json.loads(row["frontmatter"] or "{}")
    except ValueError:
        frontmatter = {}
    value = frontmatter.get("updated") if isinstance(frontmatter, dict) else None
    return str(value or row["created_at"])


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _require_outside(target: Path, data_dir: Path) -> None:
    """A bundle inside the data dir would land in the wiki (indexed as pages of their own)
    or beside the index; symlinks are followed to where the files would really go."""
    real, root = Path(os.path.realpath(target)), Path(os.path.realpath(data_dir))
    if real == root or root in real.parents:
        raise InvalidInput(f"{target} is inside the data dir {root}; export to a folder outside it")


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_bytes(data)
    os.replace(partial, path)
