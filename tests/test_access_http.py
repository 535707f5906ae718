"""Project access over HTTP: every route and search mode, for every kind of user.

One server holds two projects: ``open`` and ``restricted`` (restricted holds the
marker word and links to ``open``, which links back). Four users ask: ``none``
(no grant), ``reader`` (a read grant on restricted), ``writer`` (a write grant)
and ``admin``. The tables below are the whole specification: each cell is the
status that user gets on that project, and a route the tables do not name
fails :func:`test_every_route_is_in_the_matrix`.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.access_support import (
    ELSEWHERE,
    HYGIENE,
    MARKER,
    PAGES,
    PROJECTS,
    SHARED_MARKER,
    USERS,
    Team,
    action_of,
    app_routes,
    ask,
    cells,
    db_path,
    fill,
    pending_id,
    team_server,
)

# method, route (as the app names it), URL ({p} project, {u} user, {pending}: a pending
# write of that project made for this cell), JSON body, then per user: open restricted.
#                                                                 none    reader  writer  admin
PROJECT_ROUTES: list[tuple[str, str, str, Any, str]] = [
    ("GET", "/api/v1/projects/{workspace}/{project}/pages", PAGES, None,
     "200 403 200 200 200 200 200 200"),
    ("GET", "/api/v1/projects/{workspace}/{project}/pages/{path:path}", PAGES + "/index.md", None,
     "200 403 200 200 200 200 200 200"),
    ("GET", "/api/v1/projects/{workspace}/{project}/history/{path:path}",
     "/api/v1/projects/default/{p}/history/index.md", None,
     "200 403 200 200 200 200 200 200"),
    ("PUT", "/api/v1/projects/{workspace}/{project}/pages/{path:path}", PAGES + "/w-{u}.md",
     {"body": "written by {u}"},
     "200 403 200 403 200 200 200 200"),
    ("DELETE", "/api/v1/projects/{workspace}/{project}/pages/{path:path}", PAGES + "/w-{u}.md",
     None,
     "200 403 200 403 200 200 200 200"),
    ("GET", "/api/v1/projects/{workspace}/{project}/checkpoints/{path:path}",
     "/api/v1/projects/default/{p}/checkpoints/index.md", None,
     "200 403 200 200 200 200 200 200"),
    ("GET", "/api/v1/status", "/api/v1/status?project={p}", None,
     "200 403 200 200 200 200 200 200"),
    ("GET", "/api/v1/graph", "/api/v1/graph?project={p}", None,
     "200 403 200 200 200 200 200 200"),
    ("GET", "/api/v1/search", "/api/v1/search?q=index&project={p}", None,
     "200 403 200 200 200 200 200 200"),
    ("POST", "/api/v1/forget-sweep", "/api/v1/forget-sweep", {"project": "{p}", "dry_run": True},
     "200 403 200 403 200 200 200 200"),
    ("POST", "/api/v1/lint", "/api/v1/lint", {"project": "{p}"},
     "200 403 200 403 200 200 200 200"),
    ("POST", "/api/v1/restore-page", "/api/v1/restore-page", {"project": "{p}", "path": "index.md"},
     "200 403 200 403 200 200 200 200"),
    # No LLM provider on this server: whoever may write gets the clear 503.
    ("POST", "/api/v1/consolidate", "/api/v1/consolidate", {"project": "{p}"},
     "503 403 503 403 503 503 503 503"),
    ("POST", "/api/v1/auto-improve", "/api/v1/auto-improve", {"project": "{p}"},
     "503 403 503 403 503 503 503 503"),
    ("GET", "/api/v1/pending-writes", "/api/v1/pending-writes?project={p}", None,
     "200 403 200 200 200 200 200 200"),
    ("GET", "/api/v1/pending-writes/{pending_id}", "/api/v1/pending-writes/{pending}", None,
     "200 403 200 200 200 200 200 200"),
    ("POST", "/api/v1/pending-writes/{pending_id}/approve",
     "/api/v1/pending-writes/{pending}/approve", None,
     "200 403 200 403 200 200 200 200"),
    ("POST", "/api/v1/pending-writes/{pending_id}/reject",
     "/api/v1/pending-writes/{pending}/reject", None,
     "200 403 200 403 200 200 200 200"),
    ("GET", "/web/{workspace}/{project}", "/web/default/{p}", None,
     "200 403 200 200 200 200 200 200"),
    ("GET", "/web/{workspace}/{project}/page/{path:path}", "/web/default/{p}/page/index.md", None,
     "200 403 200 200 200 200 200 200"),
    ("GET", "/web/{workspace}/{project}/tree", "/web/default/{p}/tree", None,
     "200 403 200 200 200 200 200 200"),
    ("GET", "/web/{workspace}/{project}/diff/{path:path}", "/web/default/{p}/diff/index.md", None,
     "200 403 200 200 200 200 200 200"),
    ("GET", "/web/{workspace}/{project}/graph", "/web/default/{p}/graph", None,
     "200 403 200 200 200 200 200 200"),
    ("GET", "/web/{workspace}/{project}/sessions", "/web/default/{p}/sessions", None,
     "200 403 200 200 200 200 200 200"),
    # The operator's session: its raw events are for their owner and admins alone.
    ("GET", "/web/{workspace}/{project}/session/{session_id}", "/web/default/{p}/session/s-{p}",
     None,
     "403 403 403 403 403 403 200 200"),
    ("GET", "/web/search", "/web/search?q=index&project={p}", None,
     "200 403 200 200 200 200 200 200"),
]  # fmt: skip

# Routes over every project: admins only.                     none reader writer admin
ADMIN_ROUTES: list[tuple[str, str, Any, str]] = [
    ("GET", "/api/v1/embeddings", None,                         "403 403 403 200"),
    ("GET", "/api/v1/maintenance", None,                        "403 403 403 200"),
    ("POST", "/api/v1/commit", None,                            "403 403 403 200"),
    ("POST", "/api/v1/forget-sweep", {"dry_run": True},         "403 403 403 200"),
    ("POST", "/api/v1/lint", {},                                "403 403 403 200"),
    ("GET", "/admin/status", None,                              "403 403 403 200"),
    ("GET", "/admin/metrics", None,                             "403 403 403 200"),
    ("GET", "/web/health", None,                                "403 403 403 200"),
]  # fmt: skip

# Routes that list several projects: 200 for all; does the restricted project show?
#                                                          none    reader  writer  admin
LISTINGS: list[tuple[str, str, str]] = [
    ("/api/v1/projects", "/api/v1/projects",                "absent shown shown shown"),
    ("/api/v1/pending-writes", "/api/v1/pending-writes",    "absent shown shown shown"),
    ("/api/v1/consolidate/jobs", "/api/v1/consolidate/jobs", "absent shown shown shown"),
    ("/web", "/web",                                         "absent shown shown shown"),
    ("/web/sessions", "/web/sessions",                       "absent shown shown shown"),
    ("/web/pending-writes", "/web/pending-writes",           "absent shown shown shown"),
    ("/web/search", f"/web/search?q={MARKER}",               "absent shown shown shown"),
]  # fmt: skip

# Search modes for the marker word (only the restricted project holds it).
#                                                                     none    reader writer admin
SEARCHES: list[tuple[str, str]] = [
    ("project=restricted",                                            "403    hit    hit    hit"),
    ("scope=open&scope=restricted",                                   "403    hit    hit    hit"),
    ("scope=open&scope=default/restricted&explain=true",              "403    hit    hit    hit"),
    ("global=true",                                                   "absent hit    hit    hit"),
    ("global=true&explain=true",                                      "absent hit    hit    hit"),
    ("project=open",                                                "absent absent absent absent"),
    ("project=open&explain=true",                                   "absent absent absent absent"),
]  # fmt: skip

# The shared project searched beside a named one, when it is restricted.
#                                                            none    reader writer admin
SHARED_SEARCHES: list[tuple[str, str]] = [
    ("workspace=team&project=plain",                         "absent shared absent shared"),
    ("workspace=team&scope=plain&explain=true",              "absent shared absent shared"),
    ("workspace=team&project=_global",                       "403    shared 403    shared"),
]  # fmt: skip


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    with team_server(tmp_path_factory.mktemp("access") / "data") as found:
        yield found


def test_each_project_route_gives_each_user_exactly_its_cell(team: Team) -> None:
    server, users = team
    wrong = []
    for method, _route, url, body, row in PROJECT_ROUTES:
        expected = iter(cells(row))
        for user in USERS:
            for project in PROJECTS:
                number = pending_id(server, project, user, action_of(url))
                target = fill(url, p=project, u=user, pending=str(number))
                answer = ask(users[user], method, target, fill(body, p=project, u=user))
                want = int(next(expected))
                if answer.status_code != want:
                    wrong.append((method, target, user, want, answer.status_code))
                if answer.status_code == 403:
                    assert MARKER not in answer.text
    assert not wrong, "\n".join(map(str, wrong))


def test_forbidden_writes_leave_no_file_row_or_commit(team: Team) -> None:
    server, users = team
    put = users["reader"].put(PAGES.format(p="restricted") + "/w-late.md", json={"body": "no"})
    assert put.status_code == 403
    assert put.json()["message"] == "user 'reader' may not write to project default/restricted"
    wiki = server.data_dir / "wiki"
    with sqlite3.connect(db_path(server)) as conn:
        for user in ("none", "reader", "late"):
            path = f"w-{user}.md"
            assert not (wiki / "default" / "restricted" / path).exists()
            rows = conn.execute(
                "SELECT count(*) FROM pages WHERE project = 'restricted' AND path = ?", (path,)
            ).fetchone()[0]
            assert rows == 0
            log = subprocess.run(
                ["git", "log", "--all", "--format=%H", "--", f"default/restricted/{path}"],
                cwd=wiki, capture_output=True, text=True, check=True,
            )  # fmt: skip
            assert log.stdout == ""
        for user in ("none", "reader"):
            for action in ("approve", "reject"):
                state = conn.execute(
                    "SELECT state FROM pending_writes WHERE project = 'restricted' AND path = ?",
                    (f"proposed/{user}-{action}.md",),
                ).fetchone()[0]
                assert state == "pending"
            made = wiki / "default" / "restricted" / "proposed" / f"{user}-approve.md"
            assert not made.exists()


def test_routes_over_every_project_are_for_admins(team: Team) -> None:
    _, users = team
    got = {
        (method, url, user): str(ask(users[user], method, url, body).status_code)
        for method, url, body, _ in ADMIN_ROUTES
        for user in USERS
    }
    want = {
        (method, url, user): cell
        for method, url, _, row in ADMIN_ROUTES
        for user, cell in zip(USERS, cells(row), strict=True)
    }
    assert got == want


def test_every_admin_route_refuses_other_users(team: Team) -> None:
    """Whatever its body or parameters, an /admin route is refused to a user who is not one."""
    server, users = team
    admin_routes = [(m, p) for m, p in app_routes(server.data_dir) if p.startswith("/admin")]
    assert len(admin_routes) >= 2 + len(HYGIENE)
    for user in ("none", "reader", "writer"):
        for method, path in admin_routes:
            url = path.replace("{workspace}", "default").replace("{project}", "restricted")
            url = url.replace("{name}", "admin").replace("{user}", "admin")
            url = url.replace("{prefix}", "abcdefghij")
            answer = ask(users[user], method, url, {} if method != "GET" else None)
            assert answer.status_code == 403, (user, method, url, answer.text)


def shows_restricted(client: httpx.Client, url: str) -> bool:
    answer = client.get(url)
    assert answer.status_code == 200, (url, answer.text)
    if url.startswith("/web"):
        return "restricted" in answer.text or "secret.md" in answer.text
    data = answer.json()
    rows = next(v for v in data.values() if isinstance(v, list))
    return any(r.get("project", r.get("name")) == "restricted" for r in rows)


def test_lists_of_projects_leave_out_what_a_user_may_not_read(team: Team) -> None:
    _, users = team
    got = {
        (url, user): shows_restricted(users[user], url) for _, url, _ in LISTINGS for user in USERS
    }
    want = {
        (url, user): cell == "shown"
        for _, url, row in LISTINGS
        for user, cell in zip(USERS, cells(row), strict=True)
    }
    assert got == want


def search(client: httpx.Client, mode: str) -> str:
    answer = client.get(f"/api/v1/search?q={MARKER}&{mode}")
    if answer.status_code == 403:
        assert MARKER not in answer.json()["message"]
        return "403"
    assert answer.status_code == 200, answer.text
    data = answer.json()
    hits = data["hits"] + data.get("global_hits", []) + data.get("raw_hits", [])
    if any(h["project"] == "restricted" for h in hits):
        return "hit"
    assert "secret.md" not in answer.text and "restricted" not in answer.text
    return "absent"


def test_every_search_mode_leaves_out_or_refuses_what_a_user_may_not_read(team: Team) -> None:
    _, users = team
    got = {(mode, user): search(users[user], mode) for mode, _ in SEARCHES for user in USERS}
    want = {
        (mode, user): cell
        for mode, row in SEARCHES
        for user, cell in zip(USERS, cells(row), strict=True)
    }
    assert got == want


def shared_search(client: httpx.Client, mode: str) -> str:
    answer = client.get(f"/api/v1/search?q={SHARED_MARKER}&{mode}")
    if answer.status_code == 403:
        return "403"
    assert answer.status_code == 200, answer.text
    data = answer.json()
    if any(h["project"] == "_global" for h in data["hits"] + data["global_hits"]):
        return "shared"
    assert "notes.md" not in answer.text
    return "absent"


def test_the_shared_project_beside_a_named_one_is_left_out_when_unreadable(team: Team) -> None:
    _, users = team
    got = {(m, user): shared_search(users[user], m) for m, _ in SHARED_SEARCHES for user in USERS}
    want = {
        (mode, user): cell
        for mode, row in SHARED_SEARCHES
        for user, cell in zip(USERS, cells(row), strict=True)
    }
    assert got == want


def test_links_and_backlinks_never_name_a_page_a_user_may_not_read(team: Team) -> None:
    _, users = team
    for user in USERS:
        page = users[user].get(PAGES.format(p="open") + "/notes/link.md").json()
        html = users[user].get("/web/default/open/page/notes/link.md").text
        listed = html[html.index('<section id="links">') :]  # the body is the page's own text
        named = {link["project"] for link in page["links"] + page["backlinks"]}
        if user == "none":
            assert named == set() and "restricted" not in listed
        else:
            assert named == {"restricted"} and listed.count("secret.md") >= 2


def test_a_list_is_full_when_what_a_user_may_not_read_is_newer(team: Team) -> None:
    """The restricted project's proposals are the newest: a list pages on past them."""
    _, users = team
    for user in ("none", "admin"):
        rows = users[user].get("/api/v1/pending-writes?state=all&limit=3").json()
        projects = [row["project"] for row in rows["pending_writes"]]
        assert projects == (["open"] * 3 if user == "none" else ["restricted"] * 3)


def test_a_job_list_is_full_when_what_a_user_may_not_read_is_newer(team: Team) -> None:
    """The restricted project's job is the newest: the limit applies after it is left out."""
    _, users = team
    for user in ("none", "admin"):
        jobs = users[user].get("/api/v1/consolidate/jobs?limit=1").json()["jobs"]
        assert [job["project"] for job in jobs] == (["open"] if user == "none" else ["restricted"])


def test_a_project_page_shows_a_user_only_their_own_and_shared_handoffs(team: Team) -> None:
    _, users = team
    shown = {user: "operator&#39;s own handoff" in users[user].get("/web/default/open").text
             for user in USERS}  # fmt: skip
    assert shown == {"none": False, "reader": False, "writer": False, "admin": True}


def test_status_counts_leave_out_what_a_user_may_not_read(team: Team) -> None:
    server, users = team
    counts = {user: users[user].get("/api/v1/status").json() for user in USERS}
    with server.client() as root:
        restricted = root.get("/api/v1/status?project=restricted").json()["project"]
        shared = root.get("/api/v1/status?workspace=team&project=_global").json()["project"]
    names = ("pages", "versions")
    assert counts["reader"]["projects"] == counts["admin"]["projects"]
    assert counts["writer"]["projects"] == counts["admin"]["projects"] - 1
    assert counts["none"]["projects"] == counts["admin"]["projects"] - 2
    for name in names:
        assert counts["reader"][name] == counts["admin"][name]
        assert counts["writer"][name] == counts["admin"][name] - shared[name]
        assert counts["none"][name] == counts["admin"][name] - restricted[name] - shared[name]
    # Capture counts what each user's lists show: their own sessions and observations.
    hidden = {"none": ["default/restricted", "team/_global"], "writer": ["team/_global"]}
    with sqlite3.connect(db_path(server)) as conn:
        for user in ("none", "reader", "writer"):
            for name in ("sessions", "observations"):
                sql = OWN_ROWS.format(table=name)
                own = conn.execute(sql, (user, json.dumps(hidden.get(user, [])))).fetchone()[0]
                assert counts[user][name] == own, (user, name)
        every = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
    assert counts["admin"]["sessions"] == every > counts["reader"]["sessions"]
    # The server's data dir path is the operator's business, not every user's.
    assert [user for user in USERS if "data_dir" in counts[user]] == ["admin"]


OWN_ROWS = """
SELECT count(*) FROM {table} WHERE owner IS (SELECT id FROM users WHERE name = ?)
    AND (workspace || '/' || project) NOT IN (SELECT value FROM json_each(?))
"""


def test_every_route_is_in_the_matrix(tmp_path: Path) -> None:
    """A new route fails here until a table above says who may use it."""
    covered = {(method, route) for method, route, *_ in PROJECT_ROUTES}
    covered |= {(method, url.split("?")[0]) for method, url, *_ in ADMIN_ROUTES}
    covered |= {("GET", route) for route, *_ in LISTINGS}
    covered |= {("POST", "/web/pending-writes/{pending_id}/{action}")}  # see test below
    covered |= {("POST", f"/admin/hygiene/{name}") for name in HYGIENE}
    missing = [
        (method, path)
        for method, path in app_routes(tmp_path)
        if (method, path) not in covered and not path.startswith(ELSEWHERE)
    ]
    assert not missing, f"routes with no access cells: {missing}"


def test_a_web_decision_needs_write_access_before_its_form_is_read(team: Team) -> None:
    server, users = team
    form = {"content-type": "application/x-www-form-urlencoded", "origin": server.url}
    for user, want in (("reader", "may not write"), ("writer", "out of date")):
        number = pending_id(server, "restricted", user, "show")
        url = f"/web/pending-writes/{number}/approve"
        answer = users[user].post(url, content="csrf=forged", headers=form)
        assert answer.status_code == 403 and want in answer.text, (user, answer.text[:300])


def test_open_handoff_counts_match_each_users_handoff_list(team: Team) -> None:
    """A private handoff counts for its owner (and admins), never for another user."""
    server, users = team
    body = {"project": "counted", "summary": "the writer's own plan"}
    assert users["writer"].post("/api/v1/handoffs", json=body).status_code == 201
    params = {"project": "counted"}
    for user in USERS:
        listed = users[user].get("/api/v1/handoffs", params=params).json()["handoffs"]
        counted = users[user].get("/api/v1/status", params=params).json()["project"]
        want = 1 if user in ("writer", "admin") else 0
        assert counted["open_handoffs"] == want, user
        if user != "admin":  # an admin's list holds others' only with any_owner
            assert len(listed) == want, user
        page = users[user].get("/web/default/counted").text
        assert f"0 sessions · {want} open handoffs" in page, user
    with server.client() as root:
        assert root.get("/api/v1/status", params=params).json()["project"]["open_handoffs"] == 1
