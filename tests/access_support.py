"""The server, users and seed behind the project access matrix (tests/test_access_http.py).

Two projects, ``open`` and ``restricted`` (holding the marker word, linked both ways
with ``open``), plus ``team/_global`` restricted to ``reader``; four users with their
own clients. Helpers fill the matrix's URL templates and walk the app's routes.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from ai_memory.config import Config
from ai_memory.maintenance.init import initialise
from tests.conftest import ServerProcess
from tests.team_support import as_user, grant, make_project, make_user, restrict

USERS = ("none", "reader", "writer", "admin")
PROJECTS = ("open", "restricted")
MARKER = "quokkafrost"
SHARED_MARKER = "wombatglint"  # in team/_global, restricted with a read grant for reader only
PAGES = "/api/v1/projects/default/{p}/pages"

# Routes whose access rules other modules' tests prove (hooks, handoffs, sessions,
# messages, batch writes, sign-in, the identity admin API) or that need no project.
ELSEWHERE = (
    "/hook",
    "/handoff",
    "/recap",
    "/brief",
    "/api/v1/handoffs",
    "/api/v1/sessions",
    "/api/v1/messages",
    "/api/v1/whoami",
    "/api/v1/projects/{workspace}/{project}/pages:batch",
    "/admin/users",
    "/admin/api-keys",
    "/admin/projects/",
    "/web/login",
    "/web/logout",
    "/web/setup",
    "/web/style.css",
    "/web/{rest:path}",
    "/healthz",
    "/openapi.json",
    "/mcp",
)
HYGIENE = (
    "purge-session",
    "move-session",
    "purge-project",
    "rename-project",
    "move-project",
    "merge-project",
)


Team = tuple[ServerProcess, dict[str, httpx.Client]]


def cells(row: str) -> list[str]:
    return row.split()


@contextmanager
def team_server(root: Path) -> Iterator[Team]:
    """A running server with the users, grants and seed; each user's client stays open."""
    initialise(Config.load(root, {}))
    server = ServerProcess(root).start()
    try:
        keys = {name: make_user(server, name, admin=name == "admin") for name in USERS}
        seed(server)
        restrict(server, "default", "restricted")
        grant(server, "default", "restricted", "reader", "read")
        grant(server, "default", "restricted", "writer", "write")
        restrict(server, "team", "_global")
        grant(server, "team", "_global", "reader", "read")
        clients = {name: as_user(server, key) for name, key in keys.items()}
        try:
            yield server, clients
        finally:
            for client in clients.values():
                client.close()
    finally:
        server.stop()


def seed(server: ServerProcess) -> None:
    """Pages that link across the two projects, a session each, pending writes and a job."""
    for project in PROJECTS:
        make_project(server, "default", project)
    with server.client() as root:
        put = root.put
        put(
            PAGES.format(p="open") + "/notes/link.md",
            json={"body": "See [[restricted:secret.md]]."},
        )
        secret = {"body": f"The {MARKER} plan. Back: [[open:notes/link.md]]", "entities": [MARKER]}
        assert put(PAGES.format(p="restricted") + "/secret.md", json=secret).is_success
        team = "/api/v1/projects/team/{p}/pages/notes.md"
        assert put(team.format(p="plain"), json={"body": "plain notes"}).is_success
        shared = {"body": f"Prefer the {SHARED_MARKER} style."}
        assert put(team.format(p="_global"), json=shared).is_success
        for project in PROJECTS:
            hook = {"workspace": "default", "project": project, "session_id": f"s-{project}"}
            event = {"hook_event_name": "UserPromptSubmit", "prompt": f"work on {project}"}
            assert root.post(
                "/hook", params={**hook, "agent": "claude-code"}, json=event
            ).is_success
        handoff = {"project": "open", "summary": "the operator's own handoff"}
        assert root.post("/api/v1/handoffs", json=handoff).is_success
        assert root.post("/api/v1/commit").is_success
    with sqlite3.connect(db_path(server)) as conn:
        now = "2026-01-01T00:00:00+00:00"
        for project in PROJECTS:
            for user in USERS:
                for action in ("show", "approve", "reject"):
                    conn.execute(
                        "INSERT INTO pending_writes(workspace, project, path, proposed, created_at)"
                        " VALUES ('default', ?, ?, 'proposed text', ?)",
                        (project, f"proposed/{user}-{action}.md", now),
                    )
            conn.execute(
                "INSERT INTO llm_jobs(kind, workspace, project, session_id, observation_count,"
                " state, next_attempt_at, created_at, updated_at)"
                " VALUES ('consolidation', 'default', ?, ?, 1, 'done', ?, ?, ?)",
                (project, f"s-{project}", now, now, now),
            )
    wait_for_sessions(server)


def db_path(server: ServerProcess) -> str:
    return str(server.data_dir / "db" / "memory.sqlite")


def wait_for_sessions(server: ServerProcess) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with sqlite3.connect(db_path(server)) as conn:
            if conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == len(PROJECTS):
                return
        time.sleep(0.05)
    raise AssertionError("the seeded sessions never landed")


def pending_id(server: ServerProcess, project: str, user: str, action: str) -> int:
    with sqlite3.connect(db_path(server)) as conn:
        row = conn.execute(
            "SELECT id FROM pending_writes WHERE project = ? AND path = ?",
            (project, f"proposed/{user}-{action}.md"),
        ).fetchone()
    return int(row[0])


def fill(value: Any, **names: str) -> Any:
    if isinstance(value, str):
        return value.format(**names)
    if isinstance(value, dict):
        return {k: fill(v, **names) for k, v in value.items()}
    return value


def action_of(url: str) -> str:
    """Which of a user's pending writes a cell uses: each is decided at most once."""
    last = url.rsplit("/", 1)[-1]
    return last if last in ("approve", "reject") else "show"


def ask(client: httpx.Client, method: str, url: str, body: Any) -> httpx.Response:
    if body is None:
        return client.request(method, url)
    return client.request(method, url, json=body)


def app_routes(data_dir: Path) -> list[tuple[str, str]]:
    """Every (method, path) the app serves, read from the app the server builds."""
    from ai_memory.server import create_app

    app = create_app(Config.load(data_dir, {}), "t" * 43)
    return sorted(set(walk(app.routes, "")))


def walk(routes: list[Any], prefix: str) -> Iterator[tuple[str, str]]:
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from walk(inner.routes, prefix + route.include_context.prefix)
            continue
        for method in sorted(getattr(route, "methods", None) or {"ANY"}):
            if method != "HEAD":
                yield method, prefix + route.path
