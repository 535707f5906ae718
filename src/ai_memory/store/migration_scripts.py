"""The schema migration scripts, in order. Append new ones; never edit one that has shipped.

``migrations`` applies them; the list lives here so the logic stays short.
"""

from __future__ import annotations

from ai_memory.store.migration_scripts_ingest import INGEST_MIGRATIONS
from ai_memory.store.migration_scripts_team import TEAM_MIGRATIONS

# The FTS tokenizer keeps identifiers and paths whole (``_ - / .`` are token
# characters) and stems English words; text is normalised before indexing so a
# sentence's final period does not glue itself to the last word.
PAGE_TOKENIZER = "porter unicode61 remove_diacritics 2 tokenchars '_-/.'"

MIGRATIONS: list[str] = [
    # 1: the foundation.
    f"""
    CREATE TABLE workspaces (
        name TEXT PRIMARY KEY,
        created_at TEXT NOT NULL
    );
    CREATE TABLE projects (
        workspace TEXT NOT NULL REFERENCES workspaces(name),
        name TEXT NOT NULL,
        remote TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (workspace, name)
    );
    CREATE TABLE pages (
        id INTEGER PRIMARY KEY,
        workspace TEXT NOT NULL,
        project TEXT NOT NULL,
        path TEXT NOT NULL,
        version INTEGER NOT NULL,
        is_latest INTEGER NOT NULL DEFAULT 1,
        supersedes INTEGER REFERENCES pages(id),
        title TEXT NOT NULL,
        kind TEXT NOT NULL,
        tier TEXT NOT NULL,
        tags TEXT NOT NULL DEFAULT '[]',
        pinned INTEGER NOT NULL DEFAULT 0,
        expires_at TEXT,
        frontmatter TEXT NOT NULL DEFAULT '{{}}',
        frontmatter_error TEXT,
        body TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        created_at TEXT NOT NULL,
        deleted_at TEXT,
        actor TEXT NOT NULL DEFAULT 'api',
        access_count INTEGER NOT NULL DEFAULT 0,
        last_access_at TEXT,
        FOREIGN KEY (workspace, project) REFERENCES projects(workspace, name),
        UNIQUE (workspace, project, path, version)
    );
    CREATE UNIQUE INDEX pages_latest ON pages(workspace, project, path) WHERE is_latest = 1;
    CREATE INDEX pages_recent ON pages(workspace, project, created_at) WHERE is_latest = 1;
    CREATE VIRTUAL TABLE pages_fts USING fts5(title, body, tokenize="{PAGE_TOKENIZER}");
    CREATE TABLE links (
        src_id INTEGER NOT NULL REFERENCES pages(id),
        workspace TEXT NOT NULL,
        project TEXT NOT NULL,
        src_path TEXT NOT NULL,
        dst_workspace TEXT NOT NULL,
        dst_project TEXT NOT NULL,
        dst_path TEXT NOT NULL,
        label TEXT
    );
    CREATE INDEX links_src ON links(src_id);
    CREATE INDEX links_dst ON links(dst_workspace, dst_project, dst_path);
    CREATE TABLE entities (
        page_id INTEGER NOT NULL REFERENCES pages(id),
        workspace TEXT NOT NULL,
        project TEXT NOT NULL,
        name TEXT NOT NULL,
        norm TEXT NOT NULL
    );
    CREATE INDEX entities_norm ON entities(workspace, project, norm);
    CREATE INDEX entities_page ON entities(page_id);
    CREATE TABLE sessions (
        id INTEGER PRIMARY KEY,
        workspace TEXT NOT NULL,
        project TEXT NOT NULL,
        session_id TEXT NOT NULL,
        agent TEXT NOT NULL,
        cwd TEXT,
        started_at TEXT NOT NULL,
        last_event_at TEXT NOT NULL,
        ended_at TEXT,
        end_reason TEXT,
        page_id INTEGER,
        FOREIGN KEY (workspace, project) REFERENCES projects(workspace, name),
        UNIQUE (workspace, project, session_id)
    );
    CREATE INDEX sessions_recent ON sessions(workspace, project, last_event_at);
    CREATE TABLE observations (
        id INTEGER PRIMARY KEY,
        workspace TEXT NOT NULL,
        project TEXT NOT NULL,
        session_id TEXT NOT NULL,
        agent TEXT NOT NULL,
        kind TEXT NOT NULL,
        ingest_key TEXT,
        tool_name TEXT,
        body TEXT NOT NULL,
        created_at TEXT NOT NULL,
        FOREIGN KEY (workspace, project) REFERENCES projects(workspace, name)
    );
    CREATE UNIQUE INDEX observations_ingest
        ON observations(workspace, project, ingest_key) WHERE ingest_key IS NOT NULL;
    CREATE INDEX observations_session ON observations(workspace, project, session_id, id);
    CREATE VIRTUAL TABLE observations_fts USING fts5(body, tokenize="{PAGE_TOKENIZER}");
    CREATE TABLE handoffs (
        id INTEGER PRIMARY KEY,
        workspace TEXT NOT NULL,
        project TEXT NOT NULL,
        origin TEXT NOT NULL CHECK (origin IN ('manual', 'automatic')),
        status TEXT NOT NULL CHECK (status IN ('open', 'claimed', 'cancelled', 'expired')),
        from_session TEXT,
        from_agent TEXT,
        cwd TEXT,
        summary TEXT NOT NULL,
        content TEXT NOT NULL DEFAULT '{{}}',
        created_at TEXT NOT NULL,
        claimed_at TEXT,
        claimed_by_agent TEXT,
        claimed_by_session TEXT,
        claimed_via TEXT,
        FOREIGN KEY (workspace, project) REFERENCES projects(workspace, name)
    );
    CREATE INDEX handoffs_open ON handoffs(workspace, project, status, created_at);
    CREATE TABLE page_feedback (
        id INTEGER PRIMARY KEY,
        workspace TEXT NOT NULL,
        project TEXT NOT NULL,
        path TEXT NOT NULL,
        page_id INTEGER,
        signal TEXT NOT NULL CHECK (signal IN ('helpful', 'not_helpful', 'stale', 'wrong')),
        reason TEXT,
        created_at TEXT NOT NULL
    );
    CREATE INDEX page_feedback_page ON page_feedback(workspace, project, path);
    CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY,
        at TEXT NOT NULL,
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        workspace TEXT,
        project TEXT,
        path TEXT,
        detail TEXT NOT NULL DEFAULT '{{}}'
    );
    """,
    # 2: structured extras of an observation (files touched, event source, ...) as JSON.
    """
    ALTER TABLE observations ADD COLUMN meta TEXT NOT NULL DEFAULT '{}';
    CREATE INDEX sessions_open ON sessions(ended_at, last_event_at);
    """,
    # 3: retrieval companions. Text with CJK characters (no spaces between words)
    # is also indexed by trigrams; page-chunk vectors carry the provider, model and
    # dimension that made them, so vectors of another model are ignored, not misread.
    """
    CREATE VIRTUAL TABLE pages_cjk USING fts5(title, body, tokenize="trigram");
    CREATE TABLE page_vectors (
        id INTEGER PRIMARY KEY,
        page_id INTEGER NOT NULL,
        workspace TEXT NOT NULL,
        project TEXT NOT NULL,
        chunk INTEGER NOT NULL,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX page_vectors_page ON page_vectors(page_id);
    CREATE INDEX page_vectors_model ON page_vectors(provider, model, dim, id);
    """,
    # 4: per-term document counts of the page index, read by query preparation to
    # drop terms too common to rank anything (a view over pages_fts: no data of its own).
    """
    CREATE VIRTUAL TABLE pages_fts_vocab USING fts5vocab(pages_fts, 'row');
    """,
    # 5: the page index keeps no copy of the text (snippets are cut from pages.body),
    # which halves the database. A contentless table is maintained with 'delete'
    # commands that repeat the indexed text, so it is rebuilt here with fts_text(),
    # the same normalisation the writer applies (a function of the writing connection).
    f"""
    DROP TABLE pages_fts_vocab;
    DROP TABLE pages_fts;
    CREATE VIRTUAL TABLE pages_fts USING fts5(
        title, body, content='', tokenize="{PAGE_TOKENIZER}"
    );
    CREATE VIRTUAL TABLE pages_fts_vocab USING fts5vocab(pages_fts, 'row');
    INSERT INTO pages_fts(rowid, title, body)
        SELECT id, fts_text(title), fts_text(body) FROM pages WHERE is_latest = 1;
    """,
    # 6: observations are never rewritten or deleted, so their index keeps no copy of
    # the text either (it is in observations.body); same text as ingest indexes.
    f"""
    DROP TABLE observations_fts;
    CREATE VIRTUAL TABLE observations_fts USING fts5(
        body, content='', tokenize="{PAGE_TOKENIZER}"
    );
    INSERT INTO observations_fts(rowid, body)
        SELECT id, fts_text(CASE WHEN coalesce(tool_name, '') != ''
            THEN tool_name || ' ' || body ELSE body END)
        FROM observations;
    """,
    # 7: scope resolution looks up a calling agent's session by its id on every MCP call.
    """
    CREATE INDEX sessions_by_id ON sessions(session_id, last_event_at);
    """,
    # 8: the memory lifecycle. Feedback is read per page version; the sweep finds
    # tombstones and old observations by time (a purge checks what supersedes a version);
    # the scheduler's cadence survives restarts.
    """
    CREATE INDEX page_feedback_version ON page_feedback(page_id);
    CREATE INDEX pages_tombstones ON pages(deleted_at) WHERE deleted_at IS NOT NULL;
    CREATE INDEX pages_supersedes ON pages(supersedes) WHERE supersedes IS NOT NULL;
    CREATE INDEX observations_age ON observations(created_at);
    CREATE TABLE maintenance_runs (
        task TEXT PRIMARY KEY,
        started_at TEXT,
        finished_at TEXT,
        result TEXT NOT NULL DEFAULT '{}'
    );
    """,
    # 9: a project's listing (kind counts, the folder tree, the link graph's nodes) read
    # from a covering index instead of every latest page row with its body.
    """
    CREATE INDEX pages_listing ON pages(workspace, project, is_latest, kind, path, title,
        deleted_at) WHERE is_latest = 1;
    """,
    # 10: the sessions timeline counts each session's failed tool calls; this index holds
    # those calls alone (its condition is the timeline's, word for word), so the count does
    # not read every event of a long session.
    """
    CREATE INDEX observations_failed ON observations(workspace, project, session_id)
        WHERE kind = 'post-tool-use' AND meta LIKE '%"failed": true%';
    """,
    # 11: a search of every project looks entities up by their normalised name alone.
    """
    CREATE INDEX entities_by_norm ON entities(norm);
    """,
    # 12: the LLM layer's durable work. A job is one session's consolidation (or review)
    # at one observation count, so re-queuing the same work is a no-op; a lease lets a
    # restarted server take over a job whose worker died. Evidence records which sessions
    # produced or reaffirmed each page version.
    """
    CREATE TABLE llm_jobs (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        workspace TEXT NOT NULL,
        project TEXT NOT NULL,
        session_id TEXT NOT NULL,
        observation_count INTEGER NOT NULL,
        state TEXT NOT NULL DEFAULT 'queued',
        attempts INTEGER NOT NULL DEFAULT 0,
        lease_until TEXT,
        next_attempt_at TEXT NOT NULL,
        last_error TEXT,
        result TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (kind, workspace, project, session_id, observation_count)
    );
    CREATE INDEX llm_jobs_due ON llm_jobs(state, next_attempt_at);
    CREATE TABLE page_evidence (
        id INTEGER PRIMARY KEY,
        page_id INTEGER NOT NULL,
        workspace TEXT NOT NULL,
        project TEXT NOT NULL,
        path TEXT NOT NULL,
        session_id TEXT NOT NULL,
        relation TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX page_evidence_page ON page_evidence(workspace, project, path);
    CREATE INDEX page_evidence_session ON page_evidence(session_id);
    """,
    # 13: the reviewed learning loop. A proposal keeps an immutable snapshot of its target
    # (the version it was made against, NULL for a new page) so approving it after the
    # target changed is refused, not merged; the watermark keeps an upgrade from reviewing
    # a project's whole history.
    """
    CREATE TABLE pending_writes (
        id INTEGER PRIMARY KEY,
        workspace TEXT NOT NULL,
        project TEXT NOT NULL,
        path TEXT NOT NULL,
        session_id TEXT,
        base_page_id INTEGER,
        base_body TEXT,
        proposed TEXT NOT NULL,
        rationale TEXT NOT NULL DEFAULT '',
        state TEXT NOT NULL DEFAULT 'pending',
        created_at TEXT NOT NULL,
        decided_at TEXT,
        decided_by TEXT,
        result_page_id INTEGER,
        error TEXT
    );
    CREATE INDEX pending_writes_state ON pending_writes(state, workspace, project);
    CREATE TABLE learning_watermarks (
        workspace TEXT NOT NULL,
        project TEXT NOT NULL,
        reviewed_until TEXT NOT NULL,
        reviewed_session TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (workspace, project)
    );
    """,
    # 14: a renamed, moved or merged project's old name, so the checkouts that still
    # resolve to it (their remote, folder or marker) land in the new one.
    """
    CREATE TABLE project_aliases (
        workspace TEXT NOT NULL, name TEXT NOT NULL, target_workspace TEXT NOT NULL,
        target_project TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (workspace, name)
    );
    """,
    # 15: the start-up check trusts a file whose size and modification time are what they
    # were when its bytes last hashed to ``content_hash``, and reads only the others.
    """
    CREATE TABLE file_stamps (
        workspace TEXT NOT NULL, project TEXT NOT NULL, path TEXT NOT NULL,
        size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, content_hash TEXT NOT NULL,
        PRIMARY KEY (workspace, project, path)
    ) WITHOUT ROWID;
    """,
    *TEAM_MIGRATIONS,
    *INGEST_MIGRATIONS,
]
