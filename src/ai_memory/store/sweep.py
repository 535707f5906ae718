"""SQL of the forget sweep: what ages, what expired, which tombstones and observations go.

Reads run on a reader; the ``purge_*`` and ``prune_*`` functions run inside the
writer's transaction, each on a bounded batch, so no command holds the write
lock for long.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ai_memory.core.identity import PageRef, Scope

# (:project IS NULL ...) lets one statement serve a sweep of one project or of all.
SCOPE = (
    "(:workspace IS NULL OR {t}workspace = :workspace) "
    "AND (:project IS NULL OR {t}project = :project)"
)

LIVE_PAGES = f"""
SELECT id, workspace, project, path, title, kind, tier, pinned, expires_at, created_at,
    access_count, last_access_at
FROM pages WHERE is_latest = 1 AND {SCOPE.format(t="")}
ORDER BY workspace, project, path
"""

# Working pages end with their session: once it has ended they go like cold ones.
ENDED_WORKING = f"""
SELECT p.id, p.workspace, p.project, p.path FROM pages p
JOIN sessions s ON s.workspace = p.workspace AND s.project = p.project
    AND s.session_id = json_extract(p.frontmatter, '$.session_id')
WHERE p.is_latest = 1 AND p.tier = 'working' AND p.pinned = 0 AND s.ended_at IS NOT NULL
    AND p.path NOT LIKE '\\_slots/%' ESCAPE '\\' AND p.path NOT LIKE '\\_lint/%' ESCAPE '\\'
    AND {SCOPE.format(t="p.")}
ORDER BY p.workspace, p.project, p.path
"""

VERSION_SIGNALS = """
SELECT page_id, signal FROM page_feedback WHERE page_id IN ({marks}) ORDER BY id
"""

TOMBSTONES = f"""
SELECT t.workspace, t.project, t.path, t.deleted_at FROM pages t
WHERE t.deleted_at IS NOT NULL AND t.deleted_at < :cutoff AND {SCOPE.format(t="t.")}
    AND NOT EXISTS (
        SELECT 1 FROM pages l WHERE l.workspace = t.workspace AND l.project = t.project
            AND l.path = t.path AND (l.is_latest = 1 OR l.version > t.version))
ORDER BY t.workspace, t.project, t.path
"""

NEWEST_VERSION = """
SELECT is_latest, deleted_at FROM pages WHERE workspace = ? AND project = ? AND path = ?
ORDER BY version DESC LIMIT 1
"""
PURGE_VECTORS = """
DELETE FROM page_vectors WHERE page_id IN (
    SELECT id FROM pages WHERE workspace = ? AND project = ? AND path = ?)
"""
PURGE_FEEDBACK = "DELETE FROM page_feedback WHERE workspace = ? AND project = ? AND path = ?"
PURGE_VERSIONS = "DELETE FROM pages WHERE workspace = ? AND project = ? AND path = ?"

# Sessions whose raw observations may go: ended, their summary page live.
PRUNABLE_SESSIONS = f"""
SELECT s.workspace, s.project, s.session_id, count(o.id) AS n
FROM sessions s JOIN observations o ON o.workspace = s.workspace AND o.project = s.project
    AND o.session_id = s.session_id AND o.created_at < :cutoff
WHERE s.ended_at IS NOT NULL AND {SCOPE.format(t="s.")}
    AND EXISTS (
        SELECT 1 FROM pages p WHERE p.workspace = s.workspace AND p.project = s.project
            AND p.path = 'sessions/' || s.session_id || '.md' AND p.is_latest = 1)
GROUP BY s.workspace, s.project, s.session_id
ORDER BY s.workspace, s.project, s.session_id
"""
SESSION_PAGE_LIVE = """
SELECT 1 FROM pages WHERE workspace = ? AND project = ? AND path = ? AND is_latest = 1
"""
OLD_OBSERVATIONS = """
SELECT id FROM observations
WHERE workspace = ? AND project = ? AND session_id = ? AND created_at < ? ORDER BY id LIMIT ?
"""
# The observation index is contentless: a removal repeats the text it indexed.
UNINDEX_OBSERVATIONS = """
INSERT INTO observations_fts(observations_fts, rowid, body)
SELECT 'delete', id, fts_text(CASE WHEN coalesce(tool_name, '') != ''
    THEN tool_name || ' ' || body ELSE body END)
FROM observations WHERE id IN ({marks})
"""
DELETE_OBSERVATIONS = "DELETE FROM observations WHERE id IN ({marks})"

# FTS5 merges the page index's segments inside whichever transaction crosses its
# write counter ('automerge'): at 100,000 pages one such merge rewrites megabytes in
# a single removal. While a sweep runs it is off, and the sweep merges in steps of
# its own between transactions (a positive 'merge' takes the same levels automerge
# would: those holding at least 'usermerge', by default 4, segments).
AUTOMERGE_DEFAULT = 4
AUTOMERGE = "SELECT v FROM pages_fts_config WHERE k = 'automerge'"
SET_AUTOMERGE = "INSERT INTO pages_fts(pages_fts, rank) VALUES ('automerge', ?)"
MERGE_STEP = "INSERT INTO pages_fts(pages_fts, rank) VALUES ('merge', ?)"


@dataclass(frozen=True, slots=True)
class SessionObservations:
    workspace: str
    project: str
    session_id: str
    count: int

    @property
    def page(self) -> PageRef:
        return Scope(self.workspace, self.project).page(f"sessions/{self.session_id}.md")


def scope_params(scope: Scope | None) -> dict[str, str | None]:
    return {
        "workspace": scope.workspace if scope else None,
        "project": scope.project if scope else None,
    }


def live_pages(conn: sqlite3.Connection, scope: Scope | None) -> Iterator[sqlite3.Row]:
    yield from conn.execute(LIVE_PAGES, scope_params(scope))


def ended_working(conn: sqlite3.Connection, scope: Scope | None) -> list[sqlite3.Row]:
    return list(conn.execute(ENDED_WORKING, scope_params(scope)))


def version_signals(conn: sqlite3.Connection, page_ids: Sequence[int]) -> dict[int, list[str]]:
    """Feedback on exactly these page versions, oldest first (a rewrite leaves it behind)."""
    out: dict[int, list[str]] = {}
    for start in range(0, len(page_ids), 500):
        chunk = list(page_ids[start : start + 500])
        sql = VERSION_SIGNALS.format(marks=",".join("?" * len(chunk)))
        for row in conn.execute(sql, chunk):
            out.setdefault(int(row["page_id"]), []).append(row["signal"])
    return out


def tombstones(conn: sqlite3.Connection, scope: Scope | None, cutoff: str) -> list[PageRef]:
    params = {**scope_params(scope), "cutoff": cutoff}
    return [
        Scope(r["workspace"], r["project"]).page(r["path"])
        for r in conn.execute(TOMBSTONES, params)
    ]


def purge_page(conn: sqlite3.Connection, ref: PageRef, cutoff: str) -> bool:
    """Remove every version of a page that is still a tombstone older than ``cutoff``;
    False if it came back (or was removed again) since the sweep looked."""
    key = (ref.workspace, ref.project, ref.path)
    newest = conn.execute(NEWEST_VERSION, key).fetchone()
    if newest is None or newest["is_latest"] or not newest["deleted_at"]:
        return False
    if newest["deleted_at"] >= cutoff:
        return False
    conn.execute(PURGE_VECTORS, key)
    conn.execute(PURGE_FEEDBACK, key)
    return conn.execute(PURGE_VERSIONS, key).rowcount > 0


def prunable_sessions(
    conn: sqlite3.Connection, scope: Scope | None, cutoff: str
) -> list[SessionObservations]:
    params = {**scope_params(scope), "cutoff": cutoff}
    return [
        SessionObservations(r["workspace"], r["project"], r["session_id"], int(r["n"]))
        for r in conn.execute(PRUNABLE_SESSIONS, params)
    ]


def prune_observations(
    conn: sqlite3.Connection, session: SessionObservations, cutoff: str, limit: int
) -> int:
    """Delete up to ``limit`` old observations of a session whose page is still live."""
    page = session.page
    if (
        conn.execute(SESSION_PAGE_LIVE, (page.workspace, page.project, page.path)).fetchone()
        is None
    ):
        return 0
    ids = [
        int(r[0])
        for r in conn.execute(
            OLD_OBSERVATIONS,
            (session.workspace, session.project, session.session_id, cutoff, limit),
        )
    ]
    if not ids:
        return 0
    marks = ",".join("?" * len(ids))
    conn.execute(UNINDEX_OBSERVATIONS.format(marks=marks), ids)
    conn.execute(DELETE_OBSERVATIONS.format(marks=marks), ids)
    return len(ids)


def pause_automerge(conn: sqlite3.Connection) -> int:
    """Turn the page index's automatic merging off; return the setting to restore.

    A stored 0 can only be left by a sweep that never finished: the default is restored."""
    row = conn.execute(AUTOMERGE).fetchone()
    setting = int(row[0]) if row is not None and int(row[0]) > 0 else AUTOMERGE_DEFAULT
    conn.execute(SET_AUTOMERGE, (0,))
    return setting


def resume_automerge(conn: sqlite3.Connection, setting: int) -> None:
    conn.execute(SET_AUTOMERGE, (setting,))


def merge_step(conn: sqlite3.Connection, leaves: int) -> bool:
    """Merge up to ``leaves`` pages of the page index; False once nothing was left to do
    (FTS5 changes fewer than two rows when it found no level to merge)."""
    before = conn.total_changes
    conn.execute(MERGE_STEP, (leaves,))
    return conn.total_changes - before >= 2
