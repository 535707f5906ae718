"""``purge-session`` and ``move-session``: a session's rows, its page and its handoffs,
removed for good or moved to the project it belonged to.

Both find the session first (a session id in several projects needs the project named),
count what it owns on a reader, and, unless ``dry_run``, change it in one writer
transaction that also removes or writes the page file and records the audit row; the
git checkpoint follows the commit.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from ai_memory.core.errors import Conflict, InvalidInput, NotFound
from ai_memory.core.identity import PageRef, Scope
from ai_memory.hygiene.exclusive import one_at_a_time
from ai_memory.hygiene.report import HygieneReport
from ai_memory.hygiene.scrub import scrubbing, settle
from ai_memory.runtime import Runtime
from ai_memory.store import hygiene_sql as sql
from ai_memory.store import pages
from ai_memory.wiki.document import build_document
from ai_memory.wiki.frontmatter import parse_file


@dataclass(frozen=True, slots=True)
class SessionTarget:
    scope: Scope
    session_id: str

    @property
    def page(self) -> PageRef:
        return self.scope.page(f"sessions/{self.session_id}.md")

    def params(self) -> dict[str, object]:
        page = self.page
        return {
            "ws": self.scope.workspace,
            "proj": self.scope.project,
            "sid": self.session_id,
            "path": page.path,
        }


def find_session(
    conn: sqlite3.Connection, session_id: str, workspace: str | None, project: str | None
) -> SessionTarget:
    """The one session ``session_id`` names; NotFound, or InvalidInput when it is ambiguous."""
    params = {"sid": session_id, "ws": workspace, "proj": project}
    found = [Scope(r["workspace"], r["project"]) for r in conn.execute(sql.SESSION_SCOPES, params)]
    where = f" in {workspace or '*'}/{project}" if project else ""
    if not found:
        raise NotFound(f"no session {session_id!r}{where}")
    if len(found) > 1:
        names = ", ".join(f"{s.workspace}/{s.project}" for s in found)
        raise InvalidInput(f"session {session_id!r} is in several projects ({names}); name one")
    target = SessionTarget(found[0], session_id)
    target.page  # noqa: B018 - a session id that cannot name a page path is refused here
    return target


def _owned(conn: sqlite3.Connection, target: SessionTarget) -> dict[str, int]:
    params = target.params()
    counts = sql.session_counts(conn, params)
    for table, n in sql.page_counts(conn, params).items():
        counts[table] = counts.get(table, 0) + n
    return counts


def _report(operation: str, target: SessionTarget, dry_run: bool) -> HygieneReport:
    return HygieneReport(
        operation,
        dry_run,
        target={
            "session": target.session_id,
            "workspace": target.scope.workspace,
            "project": target.scope.project,
        },
    )


# -- purge -------------------------------------------------------------------------


def purge_session(
    runtime: Runtime,
    session_id: str,
    *,
    workspace: str | None = None,
    project: str | None = None,
    dry_run: bool = False,
    actor: str = "cli",
) -> HygieneReport:
    """Remove the session's observations, page (every version), handoffs and what hangs
    off them; links to the page become unresolved. Git history is left to
    :func:`ai_memory.hygiene.history.rewrite_history`."""
    wiki = runtime.wiki

    def plan(conn: sqlite3.Connection) -> tuple[SessionTarget, dict[str, int]]:
        target = find_session(conn, session_id, workspace, project)
        return target, _owned(conn, target)

    target, counts = runtime.readers.read(plan)
    report = _report("purge-session", target, dry_run)
    report.details["page"] = target.page.relpath
    _fill(report, target, counts, wiki.file_path(target.page).is_file())
    if dry_run:
        return report

    def command(conn: sqlite3.Connection) -> dict[str, int]:
        found = find_session(conn, session_id, workspace, project)
        params = found.params()
        removed = _owned(conn, found)  # exactly the rows the statements below remove
        latest = conn.execute(sql.LATEST_PAGE, params).fetchone()
        if latest is not None:
            pages.drop_derived(conn, int(latest["id"]))
        sql.delete_session_rows(conn, params)
        sql.delete_page_rows(conn, params)
        pages.audit(
            conn,
            now=wiki.clock(),
            actor=actor,
            action="purge-session",
            ref=found.page,
            detail={"session_id": session_id, "rows": removed},
        )
        if wiki.file_path(found.page).is_file():
            wiki.writer.files.delete(wiki.file_path(found.page))
        return removed

    removed = wiki.writer.call(scrubbing(command), timeout=wiki.write_timeout)
    report.rows = removed
    settle(runtime, report, [target.page.relpath])
    return report


def _fill(
    report: HygieneReport, target: SessionTarget, counts: dict[str, int], file_present: bool
) -> None:
    for table, n in counts.items():
        report.count(table, n)
    if counts.get("pages"):
        report.pages.append(target.page.relpath)
    if file_present:
        report.files.append(target.page.relpath)


# -- move --------------------------------------------------------------------------


def move_session(
    runtime: Runtime,
    session_id: str,
    to: Scope,
    *,
    workspace: str | None = None,
    project: str | None = None,
    dry_run: bool = False,
    actor: str = "cli",
) -> HygieneReport:
    """Move the session row, its observations, handoffs and page (every version, to
    ``sessions/<id>.md`` of ``to``); collisions in the target are refused before anything
    moves."""
    wiki = runtime.wiki

    def plan(conn: sqlite3.Connection) -> tuple[SessionTarget, dict[str, int], list[str]]:
        target = find_session(conn, session_id, workspace, project)
        return target, _owned(conn, target), _collisions(conn, target, to)

    target, counts, collisions = runtime.readers.read(plan)
    counts = {t: n for t, n in counts.items() if t not in sql.STAYING_WITH_PAGES}
    if target.scope == to:
        raise InvalidInput(f"session {session_id!r} is already in {to.workspace}/{to.project}")
    report = _report("move-session", target, dry_run)
    report.target.update({"to_workspace": to.workspace, "to_project": to.project})
    destination = SessionTarget(to, session_id).page
    _fill(report, target, counts, wiki.file_path(target.page).is_file())
    if counts.get("pages"):
        report.pages.append(destination.relpath)
    if report.files:
        report.files.append(destination.relpath)
    report.collisions.extend(collisions)
    if dry_run:
        return report
    if collisions:
        raise Conflict(f"cannot move session {session_id!r}: {'; '.join(collisions)}")

    def command(conn: sqlite3.Connection) -> dict[str, int]:
        found = find_session(conn, session_id, workspace, project)
        clash = _collisions(conn, found, to)
        if clash:
            raise Conflict(f"cannot move session {session_id!r}: {'; '.join(clash)}")
        now = wiki.clock()
        pages.ensure_project(conn, to, now)
        params = {**found.params(), "to_ws": to.workspace, "to_proj": to.project}
        moved = sql.move_session_rows(conn, params)
        moved.update(_move_page(conn, runtime, found.page, destination))
        pages.audit(
            conn,
            now=now,
            actor=actor,
            action="move-session",
            ref=destination,
            detail={
                "session_id": session_id,
                "from": found.page.relpath,
                # where its hooks may still send events: they follow it (hooks/project_aliases)
                "from_workspace": found.scope.workspace,
                "from_project": found.scope.project,
                "to_workspace": to.workspace,
                "to_project": to.project,
                "rows": moved,
            },
        )
        return moved

    with one_at_a_time(runtime.config.db_path, "move-session"):  # never mid-purge
        moved = wiki.writer.call(command, timeout=wiki.write_timeout)
    for table in report.rows:
        report.rows[table] = moved.get(table, 0)
    settle(runtime, report, [target.page.relpath, destination.relpath])
    return report


def _collisions(conn: sqlite3.Connection, target: SessionTarget, to: Scope) -> list[str]:
    params = {**target.params(), "to_ws": to.workspace, "to_proj": to.project}
    found = []
    if conn.execute(sql.TARGET_SESSION, params).fetchone() is not None:
        found.append(f"{to.workspace}/{to.project} already has a session {target.session_id!r}")
    if conn.execute(sql.TARGET_PAGE, params).fetchone() is not None:
        found.append(f"{to.workspace}/{to.project}/{target.page.path} already exists")
    keys = [r[0] for r in conn.execute(sql.TARGET_INGEST_KEYS, params)]
    if keys:
        found.append(f"{to.workspace}/{to.project} already holds events {', '.join(keys)}")
    return found


def _move_page(
    conn: sqlite3.Connection, runtime: Runtime, source: PageRef, destination: PageRef
) -> dict[str, int]:
    """Every version and its feedback change scope; the latest is indexed again under the
    new scope (its relative links now point into the target project), as a reindex would."""
    wiki = runtime.wiki
    params = {
        "ws": source.workspace,
        "proj": source.project,
        "path": source.path,
        "to_ws": destination.workspace,
        "to_proj": destination.project,
    }
    counts = sql.page_counts(conn, params)
    latest = conn.execute(sql.LATEST_PAGE, params).fetchone()
    if latest is not None:
        pages.drop_derived(conn, int(latest["id"]))
    counts["pages"] = conn.execute(sql.MOVE_PAGE_VERSIONS, params).rowcount
    counts["page_feedback"] = conn.execute(sql.MOVE_PAGE_FEEDBACK, params).rowcount
    path = wiki.file_path(source)
    if latest is not None and path.is_file():
        text = path.read_text(encoding="utf-8")
        parsed = parse_file(text)
        doc = build_document(
            destination, parsed.frontmatter, parsed.body, text=text, error=parsed.error
        )
        pages.index_derived(conn, int(latest["id"]), destination, doc)
        wiki.writer.files.write(wiki.file_path(destination), text.encode("utf-8"))
        wiki.writer.files.delete(path)
    return counts
