"""Migration 16: the shared-server tables (users, keys, project access, ownership, messages).

Kept apart from ``migration_scripts`` so each file stays short; ``MIGRATIONS`` there
appends these in order. Every column added to an existing table is nullable or has a
default, so a data dir from before it keeps working unchanged: rows with no owner
belong to the operator (the root token), and every project is ``open``.
"""

from __future__ import annotations

TEAM_MIGRATIONS: list[str] = [
    # 16: identities, per-project access, ownership, web sign-in, cross-project messages.
    """
    CREATE TABLE users (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        admin INTEGER NOT NULL DEFAULT 0,
        password_hash TEXT,
        created_at TEXT NOT NULL,
        disabled_at TEXT,
        removed_at TEXT
    );
    CREATE TABLE api_keys (
        id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id),
        prefix TEXT NOT NULL UNIQUE,
        secret_hash TEXT NOT NULL,
        label TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        last_used_at TEXT,
        revoked_at TEXT
    );
    CREATE INDEX api_keys_user ON api_keys(user_id);
    ALTER TABLE projects ADD COLUMN visibility TEXT NOT NULL DEFAULT 'open'
        CHECK (visibility IN ('open', 'restricted'));
    ALTER TABLE projects ADD COLUMN created_by INTEGER;
    CREATE TABLE project_grants (
        workspace TEXT NOT NULL,
        project TEXT NOT NULL,
        user_id INTEGER NOT NULL REFERENCES users(id),
        access TEXT NOT NULL CHECK (access IN ('read', 'write')),
        granted_at TEXT NOT NULL,
        PRIMARY KEY (workspace, project, user_id)
    ) WITHOUT ROWID;
    CREATE INDEX project_grants_user ON project_grants(user_id);
    ALTER TABLE sessions ADD COLUMN owner INTEGER;
    ALTER TABLE observations ADD COLUMN owner INTEGER;
    ALTER TABLE handoffs ADD COLUMN owner INTEGER;
    ALTER TABLE handoffs ADD COLUMN shared INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE audit_log ADD COLUMN user_name TEXT;
    CREATE TABLE web_sessions (
        id_hash TEXT PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id),
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX web_sessions_user ON web_sessions(user_id);
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        from_workspace TEXT NOT NULL,
        from_project TEXT NOT NULL,
        to_workspace TEXT NOT NULL,
        to_project TEXT NOT NULL,
        to_agent TEXT,
        sender_user INTEGER,
        sender_session TEXT,
        sender_agent TEXT,
        subject TEXT NOT NULL DEFAULT '',
        body TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('queued', 'claimed', 'cancelled')),
        created_at TEXT NOT NULL,
        claimed_at TEXT,
        claimed_by_user INTEGER,
        claimed_by_session TEXT,
        claimed_by_agent TEXT,
        cancelled_at TEXT
    );
    CREATE INDEX messages_inbox ON messages(to_workspace, to_project, status, id);
    CREATE INDEX messages_outbox ON messages(from_workspace, from_project, status, id);
    """,
]
