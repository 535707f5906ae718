"""A home folder holding the transcripts the real agent CLIs wrote (tests/fixtures/transcripts),
moved to a checkout of the test's own: every recorded directory points into it."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path
from typing import Any

from tests.conftest import run_cli_here

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
AGENTS = ("claude-code", "codex", "gemini", "opencode")
# Where each CLI ran when it wrote its transcripts.
RECORDED = {agent: f"/tmp/bf/{agent.split('-')[0]}/acme-shop" for agent in AGENTS}
SESSIONS = 8  # two per agent
EVENTS = 40  # per session: start, prompt, command, answer, end
CORRUPT_LINES = 4  # two in a Claude Code transcript, one in Codex's, one in Gemini's


def checkout(root: Path, name: str = "acme-shop") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def agent_home(root: Path, target: Path, agents: tuple[str, ...] = AGENTS) -> Path:
    """A home with every agent's store, each session recorded as run in ``target``."""
    home = root / "home"
    for agent in agents:
        shutil.copytree(FIXTURES / agent, home, dirs_exist_ok=True)
        for path in home.rglob("*"):
            if (
                path.is_file() and path.suffix in (".jsonl", ".json")
            ) or path.name == ".project_root":
                text = path.read_text()
                moved = text.replace(RECORDED[agent], str(target))
                if moved != text:
                    path.write_text(moved)
    database = home / ".local" / "share" / "opencode" / "opencode.db"
    if database.exists():
        with closing(sqlite3.connect(database)) as conn, conn:
            conn.execute("UPDATE session SET directory = ?", (str(target),))
    return home


def backfill(data_dir: Path, home: Path, *args: str) -> dict[str, Any]:
    done = run_cli_here("backfill", "--home", str(home), "--json", *args, data_dir=data_dir)
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    result: dict[str, Any] = json.loads(done.stdout)
    return result
