"""The start-up drain: every agent's spooled events delivered once, bounded, without a hook."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
import sqlite3
import time
from pathlib import Path

from ai_memory.hookclient import spool
from ai_memory.hookclient.main import run
from ai_memory.hooks.service import HookService
from ai_memory.runtime import Runtime
from ai_memory.service.drain import DrainSummary, drain_spool
from tests.conftest import free_port
from tests.hooks_support import app_client, hook_env, make_checkout

AGENTS = ("claude-code", "codex")


def spool_while_down(data_dir: Path, checkout: Path, count: int) -> None:
    """Real hook runs against a dead server: each event lands in the spool."""
    env = hook_env(data_dir, f"http://127.0.0.1:{free_port()}")
    for n in range(count):
        agent = AGENTS[n % len(AGENTS)]
        payload = {
            "session_id": f"{agent}-s",
            "cwd": str(checkout),
            "hook_event_name": "UserPromptSubmit",
            "prompt": f"spooled prompt {n}",
        }
        stdin = io.BytesIO(json.dumps(payload).encode())
        argv = ["--agent", agent, "--event", "UserPromptSubmit"]
        assert run(argv, stdin=stdin, stdout=io.StringIO(), env=env) == 0


def wait_for_empty(folder: Path) -> None:
    deadline = time.monotonic() + 60
    while spool.pending(folder, 1) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert spool.pending(folder) == []


def prompts(data_dir: Path) -> list[str]:
    conn = sqlite3.connect(data_dir / "db" / "memory.sqlite")
    try:
        rows = conn.execute("SELECT body FROM observations WHERE kind = 'user-prompt'")
        return [row[0] for row in rows]
    finally:
        conn.close()


def test_the_spool_of_every_agent_is_delivered_once_at_start(
    data_dir: Path, tmp_path: Path
) -> None:
    checkout = make_checkout(tmp_path / "shop")
    spool_while_down(data_dir, checkout, 300)  # more than one batch
    folder = data_dir / "spool"
    first = sorted(folder.glob("*.json"))[0]
    shutil.copy(first, folder / f"{spool.new_ingest_key()}.json")  # same ingest_key, twice
    invalid = {"params": {"agent": "not an agent!", "project": "acme-shop"}, "body": {}}
    spool.write(folder, spool.new_ingest_key(), invalid)
    assert len(spool.pending(folder)) == 302

    with app_client(data_dir):  # the server's whole lifespan; no hook runs from here on
        wait_for_empty(folder)
    assert sorted(prompts(data_dir)) == sorted(f"spooled prompt {n}" for n in range(300))
    assert len(list((folder / "rejected").glob("*.json"))) == 1


def test_a_drain_is_bounded_and_a_second_one_finds_nothing(
    runtime: Runtime, tmp_path: Path
) -> None:
    data_dir = runtime.config.data_dir
    spool_while_down(data_dir, make_checkout(tmp_path / "shop"), 12)

    async def drains() -> list[DrainSummary]:
        hooks = HookService(runtime)
        hooks.start()
        try:
            return [
                await drain_spool(hooks, data_dir, batch=4, limit=5),
                await drain_spool(hooks, data_dir),
                await drain_spool(hooks, data_dir),
            ]
        finally:
            await hooks.stop()

    assert asyncio.run(drains()) == [
        DrainSummary(5, 5, 0, 0),
        DrainSummary(7, 7, 0, 0),
        DrainSummary(0, 0, 0, 0),
    ]
    assert len(prompts(data_dir)) == 12


def test_what_a_hook_spools_while_the_server_runs_is_delivered_without_another_hook(
    data_dir: Path, tmp_path: Path
) -> None:
    checkout = make_checkout(tmp_path / "shop")
    folder = data_dir / "spool"
    with app_client(data_dir, hooks__spool_recheck_s="0.2"):
        # A hook that gave up on the running server (here: one sent to a dead address).
        spool_while_down(data_dir, checkout, 3)
        assert len(spool.pending(folder)) == 3
        wait_for_empty(folder)
        assert sorted(prompts(data_dir)) == [f"spooled prompt {n}" for n in range(3)]


def test_a_queue_smaller_than_a_batch_still_takes_the_whole_spool_in_order(
    data_dir: Path, tmp_path: Path
) -> None:
    spool_while_down(data_dir, make_checkout(tmp_path / "shop"), 40)
    folder = data_dir / "spool"
    with app_client(data_dir, hooks__queue_size="16"):  # 16 at once, not a drain's 256
        wait_for_empty(folder)
    conn = sqlite3.connect(data_dir / "db" / "memory.sqlite")
    try:
        rows = conn.execute(
            "SELECT body FROM observations WHERE kind = 'user-prompt' ORDER BY id"
        ).fetchall()
    finally:
        conn.close()
    # Stored in the order they were captured, every one of them.
    assert [body for (body,) in rows] == [f"spooled prompt {n}" for n in range(40)]
