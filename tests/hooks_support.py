"""Helpers for the capture tests: an in-process app over a real data dir, and the real hook CLI."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from ai_memory.cli import hook_install
from ai_memory.config import Config
from ai_memory.maintenance.init import read_token
from ai_memory.server import create_app
from tests.conftest import clean_env


@contextmanager
def app_client(data_dir: Path, **settings: str) -> Iterator[TestClient]:
    """The whole server app with its lifespan, in this process, over a real data dir."""
    env = {f"AI_MEMORY_{k.upper()}": v for k, v in settings.items()}
    config = Config.load(data_dir, env)
    token = read_token(config.token_file)
    app = create_app(config, token)
    # A loopback base URL: the server refuses any Host but its own.
    with TestClient(
        app, base_url="http://127.0.0.1", headers={"Authorization": f"Bearer {token}"}
    ) as client:
        yield client


def hook_env(data_dir: Path, url: str, **extra: str) -> dict[str, str]:
    return clean_env(AI_MEMORY_DATA_DIR=str(data_dir), AI_MEMORY_SERVER_URL=url, **extra)


def run_hook(
    agent: str, event: str, payload: dict[str, Any], env: dict[str, str], cwd: Path
) -> tuple[int, dict[str, Any]]:
    """Run the real hook command as installed for agents; return (exit code, stdout)."""
    proc = subprocess.run(
        [*hook_install.hook_argv(), "--agent", agent, "--event", event],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=60,
    )
    out = proc.stdout.decode().strip()
    return proc.returncode, json.loads(out) if out else {}


def make_checkout(root: Path, remote: str = "git@github.com:acme/shop.git") -> Path:
    """A directory that looks like a git clone with an origin remote."""
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text(f'[remote "origin"]\n\turl = {remote}\n')
    return root
