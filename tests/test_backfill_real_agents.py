"""Each real agent CLI runs one turn offline; backfill then imports the transcript it just wrote."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import agent_runs
from tests.backfill_homes import backfill
from tests.fake_models import COMMAND, FakeModels

pytestmark = pytest.mark.slow
Run = Callable[[FakeModels, Path, Path, str], str]
RUNS: dict[str, tuple[str, Run]] = {
    "claude-code": ("claude", agent_runs.run_claude),
    "codex": ("codex", agent_runs.run_codex),
    "gemini": ("gemini", agent_runs.run_gemini),
    "opencode": ("opencode", agent_runs.run_opencode),
}


def bare_home(root: Path) -> Path:
    """A home with the agents' settings files empty: no hooks, so only the transcript is left."""
    home = root / "home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text("{}")
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text("")
    (home / ".config" / "opencode").mkdir(parents=True)
    (home / ".config" / "opencode" / "opencode.json").write_text("{}")
    return home


@pytest.mark.parametrize("agent", list(RUNS))
def test_import_what_the_real_cli_just_wrote(agent: str, data_dir: Path, tmp_path: Path) -> None:
    command, run = RUNS[agent]
    agent_runs.cli(command)  # skips, saying why, when the CLI is not installed
    home = bare_home(tmp_path)
    checkout = tmp_path / "shop-live"
    checkout.mkdir()
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    prompt = "print the greeting for the live shop"
    with FakeModels() as fake:
        run(fake, home, checkout, prompt)
    done = backfill(data_dir, home, "--agent", agent)
    assert done["sessions"] == 1 and done["projects"]["default/shop-live"]["sessions"] == 1
    assert done["rejected"] == 0 and done["skipped_lines"] == 0
    (page,) = (data_dir / "wiki" / "default" / "shop-live" / "sessions").glob("*.md")
    text = page.read_text()
    assert prompt in text and COMMAND in text and f"- Agent: {agent}" in text
    assert backfill(data_dir, home, "--agent", agent)["stored"] == 0
