"""The reference pages mirror the code: a command, tool or setting changed without them fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "reference"
PAGES = ("cli.md", "mcp.md", "configuration.md")


def test_reference_pages_match_the_code() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "cogapp", "--check", "-I", str(REFERENCE)]
        + [str(REFERENCE / page) for page in PAGES],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, (
        "docs/reference is stale; run `make docs` and commit the result:\n"
        + result.stdout
        + result.stderr
    )


def test_every_command_tool_and_setting_is_listed() -> None:
    cli = (REFERENCE / "cli.md").read_text(encoding="utf-8")
    for command in ("serve", "search", "setup", "reindex", "write-page", "mcp-bridge"):
        assert f"## `ai-memory {command}`" in cli
    mcp = (REFERENCE / "mcp.md").read_text(encoding="utf-8")
    assert mcp.count("\n## `memory_") >= 15
    config = (REFERENCE / "configuration.md").read_text(encoding="utf-8")
    for key in ("AI_MEMORY_SERVER__BIND", "AI_MEMORY_DECAY__LAMBDA", "AI_MEMORY_STORE__READERS"):
        assert key in config
