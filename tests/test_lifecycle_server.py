"""The lifecycle through a real server: the CLI, the HTTP API and the MCP tools."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from ai_memory.core.clock import iso
from tests.conftest import ServerProcess, run_cli, run_cli_here, shared_server
from tests.mcp_support import connect, data

PAGES = "/api/v1/projects/default/api/pages"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server for the file: each test keeps to a project of its own."""
    with shared_server(tmp_path_factory, "lifecycle") as proc:
        yield proc


def call(server: ServerProcess, name: str, **args: Any) -> dict[str, Any]:
    async def go() -> Any:
        async with connect(server) as client:
            return await client.call_tool(name, args)

    return data(asyncio.run(go()))


def cli_json(server: ServerProcess, *args: str) -> Any:
    result = run_cli_here(*args, "--server", server.url, "--json", data_dir=server.data_dir)
    assert result.returncode == 0, result.stderr.decode()
    return json.loads(result.stdout)


def test_sweep_restore_and_checkpoints_from_the_command_line(server: ServerProcess) -> None:
    with server.client() as client:
        gone = {"body": "# Gone\n\nstale draft", "expires_at": "2001-01-01T00:00:00Z"}
        assert client.put(f"{PAGES}/notes/gone.md", json=gone).is_success
        assert client.put(f"{PAGES}/notes/stays.md", json={"body": "# Stays"}).is_success
        bad = client.post("/api/v1/forget-sweep", json={"dry_run": "maybe"})
        assert bad.status_code == 422 or bad.status_code == 400
        assert client.post("/api/v1/forget-sweep", json={"project": "../x"}).status_code == 400
    assert run_cli("commit", "--server", server.url, data_dir=server.data_dir).returncode == 0

    dry = cli_json(server, "forget-sweep", "--dry-run", "--project", "api")
    assert dry["dry_run"] and [p["path"] for p in dry["expired"]] == ["notes/gone.md"]
    done = cli_json(server, "forget-sweep", "--project", "api")
    assert [p["path"] for p in done["expired"]] == ["notes/gone.md"]
    with server.client() as client:
        assert client.get(f"{PAGES}/notes/gone.md").status_code == 404
    run_cli_here("commit", "--server", server.url, data_dir=server.data_dir)

    listed = cli_json(server, "checkpoints", "notes/gone.md", "--project", "api")
    changes = [c["deleted"] for c in listed["checkpoints"]]
    assert changes[0] is True and False in changes
    written = next(c["rev"] for c in listed["checkpoints"] if not c["deleted"])
    restored = run_cli(
        *("restore-page", "notes/gone.md", "--project", "api", "--rev", written),
        *("--server", server.url),
        data_dir=server.data_dir,
    )
    assert restored.returncode == 0, restored.stderr.decode()
    assert b"as version 2" in restored.stdout
    unknown = run_cli(
        *("restore-page", "notes/gone.md", "--project", "api", "--rev", "nope"),
        *("--server", server.url),
        data_dir=server.data_dir,
    )
    assert unknown.returncode == 1 and b"not a commit" in unknown.stderr


def test_lint_sweep_and_restore_as_mcp_tools(server: ServerProcess) -> None:
    call(
        server, "memory_write_page", path="notes/a.md", body="see [[notes/missing.md]]", project="m"
    )
    linted = call(server, "memory_lint", project="m")
    assert {(f["rule"], f["path"]) for f in linted["findings"]} >= {("dangling-link", "notes/a.md")}
    assert linted["report"] == "_lint/report.md"
    soon = iso(__import__("datetime").datetime(2000, 1, 1))
    call(server, "memory_write_page", path="notes/old.md", body="old", project="m", expires_at=soon)
    dry = call(server, "memory_forget_sweep", project="m")
    assert dry["dry_run"] and dry["counts"]["expired"] == 1
    assert call(server, "memory_read_page", path="notes/old.md", project="m")
    done = call(server, "memory_forget_sweep", project="m", dry_run=False)
    assert done["counts"]["expired"] == 1 and done["expired"] == dry["expired"]
    with server.client() as client:
        assert client.post("/api/v1/commit").is_success
    back = call(server, "memory_restore_page", path="notes/old.md", project="m")
    assert back["version"] == 2


def access_counts(server: ServerProcess, project: str) -> dict[str, int]:
    import sqlite3
    import time

    sql = "SELECT path, access_count FROM pages WHERE project = ? AND is_latest = 1"
    deadline = time.monotonic() + 10
    while True:
        with sqlite3.connect(server.data_dir / "db" / "memory.sqlite") as conn:
            found = dict(conn.execute(sql, (project,)).fetchall())
        if all(found.values()) or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def test_reading_a_page_its_related_pages_and_the_briefing_reinforce_them(
    server: ServerProcess,
) -> None:
    call(server, "memory_write_page", path="notes/a.md", body="see [[notes/b.md]]", project="r")
    call(server, "memory_write_page", path="notes/b.md", body="the target", project="r")
    call(server, "memory_write_page", path="_slots/now.md", body="current focus", project="r")
    call(server, "memory_read_page", path="notes/a.md", project="r", include_related=True)
    call(server, "memory_briefing", project="r")
    counts = access_counts(server, "r")
    assert counts == {"notes/a.md": counts["notes/a.md"], "notes/b.md": 1, "_slots/now.md": 1}
    assert counts["notes/a.md"] >= 1


def test_a_feedback_reason_is_stored_redacted_and_flags_the_page_in_lint(
    server: ServerProcess,
) -> None:
    import sqlite3

    call(server, "memory_write_page", path="notes/f.md", body="old advice", project="fb")
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2
    call(
        server,
        "memory_feedback",
        path="notes/f.md",
        project="fb",
        signal="stale",
        reason=f"moved; token {secret}\x1b[31m",
    )
    with sqlite3.connect(server.data_dir / "db" / "memory.sqlite") as conn:
        (reason,) = conn.execute("SELECT reason FROM page_feedback WHERE project = 'fb'").fetchone()
    assert secret not in reason and "[REDACTED]" in reason and "\x1b" not in reason
    rules = {f["rule"] for f in call(server, "memory_lint", project="fb")["findings"]}
    assert "flagged-stale" in rules
