"""Migration 17: indexes a hook event no longer rewrites.

Every stored event moves its session's ``last_event_at`` and adds an observation,
and every index over a column that changes is rewritten in the same COMMIT (one
WAL page each, most of a one-event commit's cost). The lookup of a session by its
id keys on the id and its start, which seldom move (only back, for an event retried
late from a spool; a session id has a row or two, so ordering them by last event
needs no index); the idle sweep finds open sessions
by ``ended_at`` alone. The observations' age index served one query, the sweep's
old rows of ended sessions, which reads them session by session: the session index
carries ``created_at`` instead, so that read stays within the index.
"""

from __future__ import annotations

INGEST_MIGRATIONS: list[str] = [
    # 17: see the module docstring.
    """
    DROP INDEX sessions_by_id;
    CREATE INDEX sessions_by_id ON sessions(session_id, started_at);
    DROP INDEX sessions_open;
    CREATE INDEX sessions_open ON sessions(ended_at);
    DROP INDEX observations_age;
    DROP INDEX observations_session;
    CREATE INDEX observations_session ON observations(workspace, project, session_id, id,
        created_at);
    """,
]
