"""The learning loop through a real server process: MCP ``memory_auto_improve`` and the
``ai-memory pending-writes`` / ``auto-improve`` commands."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ai_memory.config import Config
from ai_memory.maintenance.init import initialise
from tests.conftest import ServerProcess, clean_env, run_cli, run_cli_here
from tests.fake_llm import FakeLlm
from tests.learning_support import finish_session, llm_env, page_url, review
from tests.mcp_support import connect, data, failure

RULE = "_rules/tests.md"
pytestmark = pytest.mark.slow  # two servers and a dozen CLI runs, each a new interpreter


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLlm]:
    with FakeLlm() as service:
        yield service


def start(root: Path, env: dict[str, str]) -> ServerProcess:
    initialise(Config.load(root, {}))
    return ServerProcess(root, env=clean_env(**env)).start()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, fake: FakeLlm) -> Iterator[ServerProcess]:
    proc = start(tmp_path_factory.mktemp("learning") / "data", llm_env(fake))
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = start(tmp_path_factory.mktemp("bare") / "data", {})
    try:
        yield proc
    finally:
        proc.stop()


def tool(srv: ServerProcess, **args: Any) -> Any:
    async def call() -> Any:
        async with connect(srv) as client:
            return await client.call_tool("memory_auto_improve", args)

    return asyncio.run(call())


def cli(srv: ServerProcess, *args: str, real: bool = False) -> tuple[int, str, str]:
    """The command in this process, or (``real``) through the installed entry."""
    done = (run_cli if real else run_cli_here)(*args, "--server", srv.url, data_dir=srv.data_dir)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def test_the_mcp_tool_proposes_and_its_dry_run_stores_nothing(
    server: ServerProcess, fake: FakeLlm
) -> None:
    with server.client() as client:
        finish_session(client, "mcp", "s-1", "tests must run with -n 2 at most")
        fake.push(review((RULE, "# Tests\n\nRun pytest with -n 2 at most.")))
        dry = data(tool(server, project="mcp", dry_run=True))
        assert dry["dry_run"] is True and [p["path"] for p in dry["proposals"]] == [RULE]
        assert dry["proposals"][0]["id"] is None
        assert client.get("/api/v1/pending-writes", params={"project": "mcp"}).json() == {
            "pending_writes": []
        }
        fake.push(review((RULE, "# Tests\n\nRun pytest with -n 2 at most.")))
        made = data(tool(server, project="mcp", session_id="s-1"))
        (proposal,) = made["proposals"]
        assert proposal["state"] == "pending" and made["scope"]["project"] == "mcp"
        assert client.get(page_url("mcp", RULE)).status_code == 404


def test_the_mcp_tool_without_a_provider_is_llm_unavailable(bare: ServerProcess) -> None:
    with bare.client() as client:
        finish_session(client, "mcp", "s-1", "a session")
    answer = failure(tool(bare, project="mcp"))
    assert answer["error"] == "llm_unavailable"
    assert "no LLM provider is configured" in answer["message"]


def test_the_cli_lists_shows_approves_and_rejects(server: ServerProcess, fake: FakeLlm) -> None:
    with server.client() as client:
        client.put(page_url("cli", RULE), json={"body": "# Tests\n\nRun the tests."})
        finish_session(client, "cli", "s-1", "always lint first")
    fake.push(review((RULE, "# Tests\n\nLint, then run the tests."), ("_rules/other.md", "# O")))
    code, out, _ = cli(server, "auto-improve", "--project", "cli", real=True)
    assert code == 0 and "proposed 2 edit(s)" in out
    code, out, _ = cli(server, "pending-writes", "list", "--project", "cli", real=True)
    assert code == 0 and RULE in out and "_rules/other.md" in out
    code, listed, _ = cli(server, "pending-writes", "list", "--project", "cli", "--json")
    ids = {row["path"]: row["id"] for row in json.loads(listed)["pending_writes"]}

    code, out, _ = cli(server, "pending-writes", "show", str(ids[RULE]))
    assert code == 0
    assert "-Run the tests." in out and "+Lint, then run the tests." in out
    assert f"--- {RULE} (page_id" in out

    code, out, _ = cli(server, "pending-writes", "approve", str(ids[RULE]))
    assert code == 0 and "applied" in out
    code, out, _ = cli(
        server, "pending-writes", "reject", str(ids["_rules/other.md"]), "--reason", "no"
    )
    assert code == 0 and "rejected" in out
    with server.client() as client:
        assert "Lint, then run" in client.get(page_url("cli", RULE)).json()["body"]
        row = client.get(f"/api/v1/pending-writes/{ids['_rules/other.md']}").json()
        assert row["decided_by"].startswith("cli") and row["error"] == "no"
    code, _, err = cli(server, "pending-writes", "approve", str(ids[RULE]))
    assert code == 1 and "already applied" in err


def test_the_cli_without_a_provider_says_so(bare: ServerProcess) -> None:
    code, _, err = cli(bare, "auto-improve", "--project", "mcp")
    assert code == 1 and "no LLM provider is configured" in err
    code, out, _ = cli(bare, "pending-writes", "list")
    assert code == 0 and "nothing waits for a decision" in out
