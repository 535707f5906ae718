"""purge-session, move-session and purge-project on a populated data dir with a real
server and real git: each leaves the wiki and the index equal (a reindex changes nothing),
a dry run reports exactly what the real run then does, and bad input changes nothing."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ai_memory.hygiene.history import rewrite_history
from tests.conftest import ServerProcess, run_cli, run_cli_here
from tests.hooks_support import make_checkout
from tests.hygiene_sessions_support import (
    API,
    SECRET,
    SECRET_REPLY,
    SHOP,
    assert_reindex_changes_nothing,
    audit_rows,
    capture_session,
    cli,
    files_containing,
    populate,
    search,
)

pytestmark = pytest.mark.slow  # a server per test, a dozen CLI runs each

TABLES = ("sessions", "observations", "handoffs", "pages", "links", "entities", "projects")


def state(data_dir: Path) -> dict[str, Any]:
    """Row counts, wiki files and the git HEAD: what any change would show in."""
    with sqlite3.connect(f"file:{data_dir / 'db' / 'memory.sqlite'}?mode=ro", uri=True) as conn:
        counts = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
    wiki = data_dir / "wiki"
    files = sorted(str(p.relative_to(wiki)) for p in wiki.rglob("*.md") if ".git" not in p.parts)
    return {"counts": counts, "files": files, "head": git(wiki, "rev-parse", "HEAD")}


def git(wiki: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=wiki, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_purge_session_leaves_no_trace_and_its_dry_run_is_exact(
    server: ServerProcess, tmp_path: Path
) -> None:
    populate(server, tmp_path)
    data_dir = server.data_dir
    before = state(data_dir)
    dry = cli(server, "purge-session", "s-wrong", "--dry-run")
    assert state(data_dir) == before
    assert dry["dry_run"] and dry["target"]["project"] == SHOP
    assert dry["pages"] == [f"default/{SHOP}/sessions/s-wrong.md"]
    assert dry["rows"]["sessions"] == 1 and dry["rows"]["handoffs"] == 1
    assert dry["rows"]["observations"] >= 3 and dry["rows"]["pages"] >= 1

    done = cli(server, "purge-session", "s-wrong", "--yes")
    assert not done["dry_run"] and done["warnings"] == []
    assert {k: done[k] for k in ("rows", "pages", "files")} == {
        k: dry[k] for k in ("rows", "pages", "files")
    }
    with server.client() as client:
        assert (
            client.get(f"/api/v1/projects/default/{SHOP}/pages/sessions/s-wrong.md").status_code
            == 404
        )
        handoffs = client.get("/api/v1/handoffs", params={"project": SHOP}).json()["handoffs"]
        assert all(h.get("from_session") != "s-wrong" for h in handoffs)
    assert handoff_projects(data_dir, "s-wrong") == []
    with server.client() as client:
        assert search(client, SECRET, SHOP) == [] and search(client, SECRET_REPLY, SHOP) == []
        coupons = client.get(f"/api/v1/projects/default/{SHOP}/pages/concepts/coupons.md").json()
        links = {link["path"]: link["resolved"] for link in coupons["links"]}
        assert links == {"sessions/s-wrong.md": False, "sessions/s-keep.md": True}
    # No copy of the text in the database file, its WAL or the wiki's files.
    db = data_dir / "db"
    for word in (SECRET, SECRET_REPLY):
        assert [p.name for p in db.iterdir() if word.encode() in p.read_bytes()] == []
        assert files_containing(data_dir / "wiki", word) == []
    (row,) = audit_rows(data_dir, "purge-session")
    assert row["path"] == "sessions/s-wrong.md" and row["detail"]["rows"] == done["rows"]
    assert row["actor"] == "api"
    assert "sessions/s-wrong.md" not in git(
        data_dir / "wiki", "ls-tree", "-r", "--name-only", "HEAD"
    )

    server.stop()
    assert_reindex_changes_nothing(data_dir, [(SECRET, SHOP), ("coupon", SHOP)])


def test_bad_input_is_a_clear_error_and_changes_nothing(
    server: ServerProcess, tmp_path: Path
) -> None:
    populate(server, tmp_path)
    capture_session_in_both(server, tmp_path)
    before = state(server.data_dir)
    cases = [
        (("purge-session", "nope", "--yes"), "no session 'nope'"),
        (("purge-session", "s-wrong"), "pass --yes"),
        (("purge-session", "s-dup", "--yes"), "several projects"),
        (("move-session", "nope", "--to", API), "no session 'nope'"),
        (("move-session", "s-wrong", "--to", SHOP), "already in default/acme-shop"),
        (("move-session", "s-dup", "--project", SHOP, "--to", API), "already has a session"),
        (("move-session", "s-wrong", "--to", "../x"), "project"),
        (("purge-project", "nope", "--yes"), "no project default/nope"),
        (("purge-project", SHOP), "pass --yes"),
        (("purge-project", "_global", "--yes"), "--force-global"),
        (("purge-session", "s-wrong", "--rewrite-history", "--yes"), "stop it first"),
    ]
    for index, args_message in enumerate(cases):
        args, message = args_message
        run = run_cli if index == 0 else run_cli_here  # the first through the installed entry
        done = run(*args, "--server", server.url, data_dir=server.data_dir)
        assert done.returncode == 1, (args, done.stdout, done.stderr)
        assert message in done.stderr.decode(), (args, done.stderr)
        assert b"Traceback" not in done.stderr
    with server.client() as client:
        unknown = client.post("/admin/hygiene/purge-session", json={"session_id": "nope"})
        assert unknown.status_code == 404 and unknown.json()["error"] == "not_found"
        gone = client.post("/admin/hygiene/purge-project", json={"project": "nope"})
        assert gone.status_code == 404
        extra = client.post("/admin/hygiene/move-session", json={"session_id": "x", "to": "y"})
        assert extra.status_code in (400, 422)
        clash = client.post(
            "/admin/hygiene/move-session",
            json={"session_id": "s-dup", "project": SHOP, "to_project": API, "dry_run": True},
        ).json()
        assert len(clash["collisions"]) == 3  # the session, its page, its events
    assert state(server.data_dir) == before


def capture_session_in_both(server: ServerProcess, tmp: Path) -> None:
    """The same session id in both projects (a second checkout of each)."""
    shop = make_checkout(tmp / "shop2")
    api = make_checkout(tmp / "api2", remote="git@github.com:acme/api.git")
    with server.client() as client:
        for cwd in (shop, api):
            capture_session(client, "s-dup", cwd, "Bump the lockfile", "Bumped it.")
        assert client.post("/api/v1/sessions/flush", params={"timeout": 30}).is_success
    assert run_cli_here("commit", "--server", server.url, data_dir=server.data_dir).returncode == 0


def test_move_session_is_found_under_its_new_project_only(
    server: ServerProcess, tmp_path: Path
) -> None:
    populate(server, tmp_path)
    with server.client() as client:
        assert (SHOP, "sessions/s-wrong.md") in search(client, SECRET, SHOP)
    before = state(server.data_dir)
    dry = cli(server, "move-session", "s-wrong", "--to", API, "--dry-run")
    assert state(server.data_dir) == before and dry["collisions"] == []
    assert dry["pages"] == [
        f"default/{API}/sessions/s-wrong.md",
        f"default/{SHOP}/sessions/s-wrong.md",
    ]
    done = cli(server, "move-session", "s-wrong", "--to", API)
    assert {k: done[k] for k in ("rows", "pages", "files")} == {
        k: dry[k] for k in ("rows", "pages", "files")
    }
    with server.client() as client:
        assert search(client, SECRET, SHOP) == []
        assert (API, "sessions/s-wrong.md") in search(client, SECRET, API)
        assert (
            client.get(f"/api/v1/projects/default/{SHOP}/pages/sessions/s-wrong.md").status_code
            == 404
        )
        moved = client.get(f"/api/v1/projects/default/{API}/pages/sessions/s-wrong.md").json()
        assert SECRET in moved["body"] and moved["version"] >= 1
        observations = client.get("/api/v1/sessions/s-wrong/observations", params={"project": API})
        assert observations.status_code == 200 and observations.json()["observations"]
    wiki = server.data_dir / "wiki"
    tree = git(wiki, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert f"default/{API}/sessions/s-wrong.md" in tree
    assert f"default/{SHOP}/sessions/s-wrong.md" not in tree
    assert handoff_projects(server.data_dir, "s-wrong") == [API]
    (row,) = audit_rows(server.data_dir, "move-session")
    assert row["project"] == API and row["detail"]["from"] == f"default/{SHOP}/sessions/s-wrong.md"

    server.stop()
    assert_reindex_changes_nothing(server.data_dir, [(SECRET, API), (SECRET, SHOP)])
    # Without a server the command runs in this process, under the data dir's lock.
    back = run_cli("move-session", "s-wrong", "--to", SHOP, "--json", data_dir=server.data_dir)
    assert back.returncode == 0, back.stderr.decode()
    assert local_page_exists(server.data_dir, SHOP, "sessions/s-wrong.md")
    assert_reindex_changes_nothing(server.data_dir, [(SECRET, SHOP)])


def handoff_projects(data_dir: Path, session: str) -> list[str]:
    with sqlite3.connect(f"file:{data_dir / 'db' / 'memory.sqlite'}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT project FROM handoffs WHERE from_session = ?", (session,))
        return [r[0] for r in rows]


def local_page_exists(data_dir: Path, project: str, path: str) -> bool:
    return (data_dir / "wiki" / "default" / project / path).is_file()


def test_purge_project_removes_every_row_and_its_folder(
    server: ServerProcess, tmp_path: Path
) -> None:
    populate(server, tmp_path)
    with sqlite3.connect(server.data_dir / "db" / "memory.sqlite", timeout=10) as conn:
        conn.execute(  # the old name of a project once renamed to acme-shop
            "INSERT INTO project_aliases VALUES ('default', 'old-shop', 'default', ?, 'now')",
            (SHOP,),
        )
    before = state(server.data_dir)
    dry = cli(server, "purge-project", SHOP, "--dry-run")
    assert state(server.data_dir) == before
    assert f"default/{SHOP}/concepts/coupons.md" in dry["pages"]
    assert dry["rows"]["sessions"] == 2 and dry["rows"]["pages"] >= 3
    assert dry["rows"]["project_aliases"] == 1
    done = cli(server, "purge-project", SHOP, "--yes")
    assert {k: done[k] for k in ("rows", "pages", "files")} == {
        k: dry[k] for k in ("rows", "pages", "files")
    }
    data_dir = server.data_dir
    assert not (data_dir / "wiki" / "default" / SHOP).exists()
    with sqlite3.connect(f"file:{data_dir / 'db' / 'memory.sqlite'}?mode=ro", uri=True) as conn:
        tables = [
            name
            for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if "project" in {c[1] for c in conn.execute(f"PRAGMA table_info({name})")}
        ]
        left = {
            t: conn.execute(f"SELECT count(*) FROM {t} WHERE project = ?", (SHOP,)).fetchone()[0]
            for t in tables
        }
        assert conn.execute("SELECT count(*) FROM project_aliases").fetchone()[0] == 0
        # The audit log keeps its record of what was done (paths and ids, no text).
        assert {t: n for t, n in left.items() if n and t != "audit_log"} == {}
        assert (
            conn.execute("SELECT count(*) FROM projects WHERE name = ?", (SHOP,)).fetchone()[0] == 0
        )
    for word in (SECRET, "coupon field"):
        assert [
            p.name for p in (data_dir / "db").iterdir() if word.encode() in p.read_bytes()
        ] == []
    tree = git(data_dir / "wiki", "ls-tree", "-r", "--name-only", "HEAD")
    assert SHOP not in tree and f"default/{API}/sessions/s-api.md" in tree
    with server.client() as client:
        assert (
            client.get(f"/api/v1/projects/default/{API}/pages/sessions/s-api.md").status_code == 200
        )
        assert search(client, SECRET, SHOP) == []
    (row,) = audit_rows(data_dir, "purge-project")
    assert row["detail"]["project"] == SHOP and row["detail"]["rows"] == done["rows"]

    server.stop()
    assert_reindex_changes_nothing(data_dir, [("rate limiter", API), (SECRET, SHOP)])


def test_rewrite_history_removes_the_text_from_git(server: ServerProcess, tmp_path: Path) -> None:
    populate(server, tmp_path)
    wiki = server.data_dir / "wiki"
    assert SECRET in git(wiki, "log", "-p", "--all")
    server.stop()
    dry = run_cli_here(
        "purge-session", "s-wrong", "--rewrite-history", "--dry-run", data_dir=server.data_dir
    )
    assert dry.returncode == 0 and b"would also rewrite history" in dry.stderr
    done = run_cli(
        "purge-session", "s-wrong", "--rewrite-history", "--yes", data_dir=server.data_dir
    )
    assert done.returncode == 0, done.stderr.decode()
    assert b"every clone of it diverges" in done.stderr
    log = git(wiki, "log", "-p", "--all")
    assert SECRET not in log and SECRET_REPLY not in log and "Added the coupon field" in log
    subprocess.run(["git", "fsck", "--full"], cwd=wiki, check=True, capture_output=True)
    assert SECRET.encode() not in every_object(wiki)
    backups = list((server.data_dir / "backups").glob("pre-rewrite-*.tar.gz"))
    assert len(backups) == 1
    assert_reindex_changes_nothing(server.data_dir, [(SECRET, SHOP), ("coupon", SHOP)])


@pytest.mark.parametrize("filter_repo", [True, False], ids=["git-filter-repo", "filter-branch"])
def test_both_rewrites_drop_only_the_purged_file(tmp_path: Path, filter_repo: bool) -> None:
    repo = tmp_path / "wiki"
    (repo / "p").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", "git@example.com:me/wiki.git")
    for n, (name, text) in enumerate([("p/keep.md", "kept text"), ("p/gone.md", SECRET)]):
        (repo / name).write_text(f"{text} {n}\n")
        git(repo, "add", name)
        git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", name)
    (repo / "p" / "gone.md").unlink()
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "remove")
    result = rewrite_history(repo, ["p/gone.md"], filter_repo=filter_repo)
    assert result.tool == ("git-filter-repo" if filter_repo else "git filter-branch")
    log = git(repo, "log", "-p", "--all")
    assert SECRET not in log and "kept text" in log and result.fsck_clean
    assert git(repo, "remote", "get-url", "origin") == "git@example.com:me/wiki.git"
    assert SECRET.encode() not in every_object(repo)


def every_object(repo: Path) -> bytes:
    """The content of every object the repository stores, reachable or not."""
    command = ["git", "cat-file", "--batch-all-objects", "--batch"]
    return subprocess.run(command, cwd=repo, capture_output=True, check=True).stdout


def session_places(data_dir: Path, session: str) -> dict[str, list[str]]:
    """The projects holding the session's row, and those holding its observations."""
    with sqlite3.connect(f"file:{data_dir / 'db' / 'memory.sqlite'}?mode=ro", uri=True) as conn:
        sql = "SELECT DISTINCT project FROM {} WHERE session_id = ? ORDER BY project"
        return {
            table: [r[0] for r in conn.execute(sql.format(table), (session,))]
            for table in ("sessions", "observations")
        }


def test_a_session_moved_while_open_keeps_its_later_events(
    server: ServerProcess, tmp_path: Path
) -> None:
    """The checkout still resolves to the old project: the hooks' later events follow the
    session to where it was moved, also after a restart, so it stays in one place."""
    from tests.hygiene_sessions_support import post_event

    shop = make_checkout(tmp_path / "shop")
    make_checkout(tmp_path / "api")
    with server.client() as client:
        capture_session(client, "s-api", tmp_path / "api", "Rate limiter", "Documented.")
        post_event(client, "BeforeAgent", "s-live", shop, "s-live-1", prompt="First prompt")
    cli(server, "move-session", "s-live", "--to", API)
    with server.client() as client:
        post_event(client, "BeforeAgent", "s-live", shop, "s-live-2", prompt="Second prompt")
    server.stop()
    server.start()
    with server.client() as client:
        post_event(client, "BeforeAgent", "s-live", shop, "s-live-3", prompt="Third prompt")
        post_event(client, "SessionEnd", "s-live", shop, "s-live-e", reason="exit")
        flushed = client.post("/api/v1/sessions/flush", params={"timeout": 30})
        assert flushed.is_success, flushed.text
        page = client.get(f"/api/v1/projects/default/{API}/pages/sessions/s-live.md")
        assert page.status_code == 200 and "Third prompt" in page.json()["body"]
    assert session_places(server.data_dir, "s-live") == {"sessions": [API], "observations": [API]}


def test_a_purged_project_no_longer_captures_under_its_old_name(
    server: ServerProcess, tmp_path: Path
) -> None:
    """acme-shop was renamed, then the new name purged: the checkout that still resolves to
    acme-shop captures into acme-shop again, it does not bring the purged project back."""
    shop = make_checkout(tmp_path / "shop")
    with server.client() as client:
        capture_session(client, "s-one", shop, "Coupon field", "Added.")
    cli(server, "rename-project", SHOP, "shop-renamed")
    cli(server, "purge-project", "shop-renamed", "--yes")
    with server.client() as client:
        capture_session(client, "s-two", shop, "Coupon limits", "Limited.")
        projects = client.get("/api/v1/projects").json()
    names = sorted(p["name"] for p in projects["projects"])
    assert "shop-renamed" not in names and SHOP in names
    assert session_places(server.data_dir, "s-two") == {"sessions": [SHOP], "observations": [SHOP]}
