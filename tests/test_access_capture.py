"""Project access and ownership on the capture routes: hooks, handoffs and sessions.

Users ``none`` (no grant), ``reader``, ``writer`` and ``admin`` against an open and
a restricted project, over real HTTP with each user's key. Every cell is the status
that user gets; ``own`` is a 403 for a session another user captured (the project
itself was allowed). A capture route the table does not name fails the test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.access_support import app_routes
from tests.conftest import ServerProcess
from tests.mcp_support import module_server
from tests.team_support import as_user, grant, make_project, make_user, restrict

WS = "default"
OPEN, LOCKED = "cx-open", "cx-locked"
USERS = ("none", "reader", "writer", "admin")
PREFIXES = ("/hook", "/handoff", "/recap", "/brief", "/api/v1/handoffs", "/api/v1/sessions")
READ = {OPEN: "200 200 200 200", LOCKED: "403 200 200 200"}
WRITE = {OPEN: "200 200 200 200", LOCKED: "403 403 200 200"}
ANY = {OPEN: "200 200 200 200", LOCKED: "200 200 200 200"}


@dataclass(frozen=True)
class Seed:
    keys: dict[str, str]
    handoffs: dict[tuple[str, str], int]  # (project, user) -> a shared handoff to cancel


Ask = Callable[[httpx.Client, str, str, Seed], httpx.Response]


def where(project: str) -> dict[str, str]:
    return {"workspace": WS, "project": project}


def hook(user: str, project: str, event: str) -> dict[str, str]:
    return {**where(project), "agent": "claude-code", "session_id": f"{user}-s", "event": event}


def batch_status(answer: httpx.Response) -> httpx.Response:
    """A batch answers 200 with a status per item: the item's status is the cell."""
    if answer.status_code != 200:
        return answer
    item = answer.json()["results"][0]
    return httpx.Response(200 if item["status"] == 202 else item["status"], json=item)


# (method, route as the app names it, the request, expected status per user and project)
ROUTES: list[tuple[str, str, Ask, dict[str, str]]] = [
    (
        "POST",
        "/hook",
        lambda c, u, p, s: c.post(
            "/hook", params=hook(u, p, "UserPromptSubmit"), json={"prompt": "hi"}
        ),
        {OPEN: "202 202 202 202", LOCKED: "403 403 202 202"},
    ),
    (
        "POST",
        "/hook/batch",
        lambda c, u, p, s: batch_status(
            c.post("/hook/batch", json=[{"params": hook(u, p, "Stop"), "body": {}}])
        ),
        WRITE,
    ),
    (  # a resumed session claims nothing: the handoffs below stay for the cancel cells
        "GET",
        "/handoff",
        lambda c, u, p, s: c.get("/handoff", params={**hook(u, p, "x"), "source": "resume"}),
        READ,
    ),
    ("GET", "/recap", lambda c, u, p, s: c.get("/recap", params=hook(u, p, "x")), READ),
    ("GET", "/brief", lambda c, u, p, s: c.get("/brief", params=hook(u, p, "x")), READ),
    (
        "POST",
        "/api/v1/handoffs",
        lambda c, u, p, s: c.post("/api/v1/handoffs", json={**where(p), "summary": u}),
        {OPEN: "201 201 201 201", LOCKED: "403 403 201 201"},
    ),
    (
        "GET",
        "/api/v1/handoffs",
        lambda c, u, p, s: c.get("/api/v1/handoffs", params=where(p)),
        READ,
    ),
    (
        "POST",
        "/api/v1/handoffs/accept",
        lambda c, u, p, s: c.post("/api/v1/handoffs/accept", json=where(p)),
        WRITE,
    ),
    (
        "POST",
        "/api/v1/handoffs/{handoff_id}/cancel",
        lambda c, u, p, s: c.post(f"/api/v1/handoffs/{s.handoffs[(p, u)]}/cancel", params=where(p)),
        WRITE,
    ),
    (
        "GET",
        "/api/v1/sessions",
        lambda c, u, p, s: c.get("/api/v1/sessions", params=where(p)),
        READ,
    ),
    ("GET", "/api/v1/sessions/status", lambda c, u, p, s: c.get("/api/v1/sessions/status"), ANY),
    (
        "POST",
        "/api/v1/sessions/flush",
        lambda c, u, p, s: c.post("/api/v1/sessions/flush", params={"timeout": 5}),
        ANY,
    ),
    (
        "POST",
        "/api/v1/sessions/finalize",
        lambda c, u, p, s: c.post(
            "/api/v1/sessions/finalize", json={**where(p), "session_id": f"{p}-root"}
        ),
        {OPEN: "own own own 200", LOCKED: "403 403 own 200"},
    ),
    (
        "GET",
        "/api/v1/sessions/observations",
        lambda c, u, p, s: c.get(
            "/api/v1/sessions/observations", params={**where(p), "exclude_session": f"{u}-s"}
        ),
        # without a session of their own but the one excluded, a user has nothing to read
        {OPEN: "404 404 404 200", LOCKED: "403 404 404 200"},
    ),
    (
        "GET",
        "/api/v1/sessions/{session_id}/observations",
        lambda c, u, p, s: c.get(f"/api/v1/sessions/{p}-root/observations", params=where(p)),
        {OPEN: "own own own 200", LOCKED: "403 own own 200"},
    ),
]


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from module_server(tmp_path_factory)


@pytest.fixture(scope="module")
def seed(srv: ServerProcess) -> Seed:
    keys = {user: make_user(srv, f"cx-{user}", admin=user == "admin") for user in USERS}
    handoffs = {}
    with srv.client() as root:
        for project in (OPEN, LOCKED):
            make_project(srv, WS, project)
            params = {**where(project), "agent": "claude-code", "session_id": f"{project}-root"}
            prompt = {"prompt": "the operator's session"}
            root.post("/hook", params={**params, "event": "UserPromptSubmit"}, json=prompt)
            for user in USERS:
                body = {**where(project), "summary": f"for {user}", "shared": True}
                handoffs[(project, user)] = root.post("/api/v1/handoffs", json=body).json()["id"]
    restrict(srv, WS, LOCKED)
    grant(srv, WS, LOCKED, "cx-reader", "read")
    grant(srv, WS, LOCKED, "cx-writer", "write")
    return Seed(keys, handoffs)


def cell(answer: httpx.Response) -> str:
    if answer.status_code == 403 and "another user" in answer.text:
        return "own"
    return str(answer.status_code)


def test_every_capture_route_gives_each_user_exactly_its_cell(
    srv: ServerProcess, seed: Seed
) -> None:
    wrong = []
    for user in USERS:
        with as_user(srv, seed.keys[user]) as client:
            for method, route, ask, expected in ROUTES:
                for project in (OPEN, LOCKED):
                    answer = ask(client, user, project, seed)
                    want = expected[project].split()[USERS.index(user)]
                    if cell(answer) != want:
                        got = f"{answer.status_code} {answer.text[:200]}"
                        wrong.append(f"{method} {route} {project} {user}: want {want}, got {got}")
                    elif want == "403" and f"cx-{user}" not in answer.text:
                        wrong.append(f"{method} {route} {project} {user}: {answer.text[:200]}")
    assert not wrong, "\n".join(wrong)


def test_every_capture_route_is_in_the_table(tmp_path: Path) -> None:
    served = {(m, p) for m, p in app_routes(tmp_path) if p.startswith(PREFIXES)}
    assert served == {(method, route) for method, route, *_ in ROUTES}


def test_any_owner_is_for_admins_on_every_handoff_route(srv: ServerProcess, seed: Seed) -> None:
    for user in USERS:
        with srv.client() as root:
            body = {**where(OPEN), "summary": f"left by root for {user}"}
            left = root.post("/api/v1/handoffs", json=body).json()["id"]
        every = {**where(OPEN), "any_owner": "true"}
        with as_user(srv, seed.keys[user]) as client:
            statuses = [
                client.get("/api/v1/handoffs", params=every).status_code,
                client.post(f"/api/v1/handoffs/{left}/cancel", params=every).status_code,
                client.post(
                    "/api/v1/handoffs/accept", json={**where(OPEN), "any_owner": True}
                ).status_code,
            ]
        assert statuses == ([200] * 3 if user == "admin" else [403] * 3), (user, statuses)
