"""rename-project, move-project and merge-project through the real command line: with
and without a server, and from a checkout whose remote still names the old project."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ServerProcess, run_cli, run_cli_here
from tests.hooks_support import app_client
from tests.test_hygiene_projects import assert_reindex_changes_nothing, db, populate


@pytest.mark.slow  # the real CLI (and a real server) several times
def test_cli_runs_through_a_server_and_in_process(data_dir: Path) -> None:
    with app_client(data_dir) as client:
        populate(client)
    # No server: the command holds the data dir and runs the operation itself.
    dry = run_cli("rename-project", "shop", "store", "--dry-run", "--json", data_dir=data_dir)
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["dry_run"] is True
    merge = run_cli_here("merge-project", "shop", "--into", "billing", data_dir=data_dir)
    assert merge.returncode == 1 and b"--yes" in merge.stderr
    proc = ServerProcess(data_dir).start()
    try:
        moved = run_cli(
            "rename-project", "shop", "store", "--json", "--server", proc.url, data_dir=data_dir
        )
        assert moved.returncode == 0, moved.stderr
        assert json.loads(moved.stdout)["target"]["to"] == "default/store"
        again = run_cli_here(
            "rename-project", "shop", "store", "--server", proc.url, data_dir=data_dir
        )
        assert again.returncode == 1 and b"no project default/shop" in again.stderr
    finally:
        proc.stop()
    text = run_cli("move-project", "store", "--to-workspace", "clients", data_dir=data_dir)
    assert text.returncode == 0, text.stderr
    assert b"move-project" in text.stdout and b"clients/store" in text.stdout
    assert_reindex_changes_nothing(data_dir)


@pytest.mark.slow  # the real CLI (and a real server) several times
def test_a_renamed_checkout_keeps_landing_in_the_new_name(data_dir: Path, tmp_path: Path) -> None:
    """The real hook command and an MCP client from a checkout whose remote still names
    the old project, against a real server, before and after the rename."""
    import asyncio
    from urllib.parse import quote

    from tests.hooks_support import hook_env, make_checkout, run_hook
    from tests.mcp_support import connect, data

    checkout = make_checkout(tmp_path / "shop", "git@github.com:acme/shop.git")
    proc = ServerProcess(data_dir).start()
    try:
        env = hook_env(data_dir, proc.url)

        def prompt(session: str, text: str) -> None:
            payload = {
                "session_id": session,
                "cwd": str(checkout),
                "prompt": text,
                "hook_event_name": "UserPromptSubmit",
            }
            code, _ = run_hook("claude-code", "UserPromptSubmit", payload, env, checkout)
            assert code == 0
            # On a loaded machine the hook may have spooled the event: deliver it now.
            drained = run_cli("hook-drain", "--server", proc.url, data_dir=data_dir)
            assert drained.returncode == 0, drained.stderr

        prompt("before-1", "first prompt before the rename")
        renamed = run_cli(
            "rename-project", "acme-shop", "shop", "--server", proc.url, data_dir=data_dir
        )
        assert renamed.returncode == 0, renamed.stderr
        prompt("after-1", "second prompt after the rename")
        with db(data_dir) as conn:
            rows = conn.execute("SELECT project, session_id FROM sessions ORDER BY id").fetchall()
            remote = conn.execute("SELECT remote FROM projects WHERE name = 'shop'").fetchone()
        assert [(r["project"], r["session_id"]) for r in rows] == [
            ("shop", "before-1"),
            ("shop", "after-1"),
        ]
        assert remote["remote"] == "github.com/acme/shop"

        async def status() -> dict[str, Any]:
            async with connect(proc, {"X-AI-Memory-Cwd": quote(str(checkout))}) as client:
                return data(await client.call_tool("memory_status", {}))

        scope = asyncio.run(status())["scope"]
        assert (scope["source"], scope["project"], scope["exists"]) == ("launch_dir", "shop", True)
    finally:
        proc.stop()
