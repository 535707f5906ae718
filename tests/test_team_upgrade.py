"""A data dir written by the release before users existed, opened by this one.

The previous release's code (git rev ``c7c1f0f``, schema 15) builds and fills a
data dir: pages that link, a captured session with its page, a handoff. This
release then opens it: the schema goes to 16 with no question asked, every page,
session, observation and handoff is there unchanged, the root token still signs
in, and every search answers exactly as it did.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ai_memory.store.migrations import SCHEMA_VERSION
from tests.conftest import clean_env
from tests.hooks_support import app_client

PREVIOUS = "c7c1f0f"
REPO = Path(__file__).resolve().parents[1]
QUERIES = ["sqlite", "cart total rounds", "release publish", "wal readers"]
TABLES = ("pages", "sessions", "observations", "handoffs", "projects", "links")
# What a search answer holds that changes from one run to the next.
VOLATILE = re.compile(r"(_ms|_s|elapsed|took|timings?)$")

SEED = """
import json, sys, time
from pathlib import Path
from starlette.testclient import TestClient
from ai_memory.config import Config
from ai_memory.maintenance.init import initialise, read_token
from ai_memory.server import create_app

root, queries, tables = Path(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
config = Config.load(root, {})
initialise(config)
token = read_token(config.token_file)
auth = {"Authorization": f"Bearer {token}"}
pages = "/api/v1/projects/default/shop/pages/"
app = create_app(config, token)
with TestClient(app, base_url="http://127.0.0.1", headers=auth) as client:
    def ok(response):
        assert response.is_success, response.text
    ok(client.put(pages + "concepts/wal.md", json={"body": "WAL lets readers go on."}))
    ok(client.put(pages + "decisions/db.md",
                  json={"body": "We chose SQLite; see [[concepts/wal.md]].", "pinned": True}))
    ok(client.put("/api/v1/projects/default/web/pages/procedures/release.md",
                  json={"body": "Tag, build, publish the release."}))
    hook = {"workspace": "default", "project": "shop", "agent": "claude-code", "session_id": "s-1"}
    for event in (
        {"hook_event_name": "UserPromptSubmit", "prompt": "make the cart total round"},
        {"hook_event_name": "PostToolUse", "tool_name": "Bash",
         "tool_input": {"command": "pytest -q"}, "tool_response": {"stdout": "1 failed"}},
        {"hook_event_name": "Stop", "last_assistant_message": "The cart total rounds now."},
        {"hook_event_name": "SessionEnd"},
    ):
        ok(client.post("/hook", params=hook, json=event))
    ok(client.post("/api/v1/sessions/flush"))
    ok(client.post("/api/v1/handoffs", json={"project": "shop", "summary": "finish the cart",
                                              "next_steps": ["add the checkout test"]}))
    answers = {q: client.get("/api/v1/search", params={"q": q, "global": "true"}).json()
               for q in queries}
import sqlite3
conn = sqlite3.connect(config.db_path)
rows = {}
for table in tables:
    cursor = conn.execute(f"SELECT * FROM {table} ORDER BY rowid")
    rows[table] = {"columns": [d[0] for d in cursor.description], "rows": cursor.fetchall()}
version = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0]
print(json.dumps({"answers": answers, "rows": rows, "version": version}))
"""


def steady(value: Any) -> Any:
    """A search answer without the figures that change from one run to the next."""
    if isinstance(value, dict):
        return {k: steady(v) for k, v in value.items() if not VOLATILE.search(k)}
    if isinstance(value, list):
        return [steady(v) for v in value]
    return value


def rows_of(data: Path, tables: dict[str, Any]) -> dict[str, list[list[Any]]]:
    """Each table's rows, in the columns the previous release had."""
    conn = sqlite3.connect(data / "db" / "memory.sqlite")
    try:
        held = {}
        for table, old in tables.items():
            columns = ", ".join(f'"{c}"' for c in old["columns"])
            rows = conn.execute(f"SELECT {columns} FROM {table} ORDER BY rowid").fetchall()
            held[table] = [list(r) for r in rows]
        return held
    finally:
        conn.close()


@pytest.fixture(scope="module")
def previous(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A data dir the previous release built, and what it answered and held."""
    root = tmp_path_factory.mktemp("upgrade")
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", PREVIOUS, "src/ai_memory"],
        capture_output=True,
        timeout=60,
    )
    if archive.returncode != 0:
        pytest.skip(f"the previous release's code is not in this checkout ({PREVIOUS})")
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
    data = root / "data"
    env = clean_env(PYTHONPATH=str(root / "src"))
    seeded = subprocess.run(
        [sys.executable, "-c", SEED, str(data), json.dumps(QUERIES), json.dumps(TABLES)],
        capture_output=True,
        env=env,
        cwd=root,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert seeded.returncode == 0, seeded.stderr.decode()[-3000:]
    before: dict[str, Any] = json.loads(seeded.stdout)
    assert before["version"] == 15
    return data, before


def test_the_upgrade_keeps_everything_and_answers_the_same(
    previous: tuple[Path, dict[str, Any]],
) -> None:
    data, before = previous
    assert before["rows"]["handoffs"]["rows"] and before["rows"]["observations"]["rows"]
    with app_client(data) as client:  # the root token, from the data dir, as before
        held = rows_of(data, before["rows"])  # before searching: a search counts its reads
        answers = {
            q: client.get("/api/v1/search", params={"q": q, "global": "true"}).json()
            for q in QUERIES
        }
        assert client.get("/admin/users").json() == {"users": []}
        status = client.get("/api/v1/status")
        assert status.status_code == 200, status.text
    assert steady(answers) == steady(before["answers"])
    assert "decisions/db.md" in json.dumps(answers["sqlite"])
    assert "sessions/s-1.md" in json.dumps(answers["cart total rounds"])
    conn = sqlite3.connect(data / "db" / "memory.sqlite")
    try:
        version = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0]
        assert version == SCHEMA_VERSION >= 16
        for table, old in before["rows"].items():
            assert held[table] == old["rows"], table
        owners = conn.execute(
            "SELECT (SELECT count(*) FROM sessions WHERE owner IS NOT NULL)"
            " + (SELECT count(*) FROM handoffs WHERE owner IS NOT NULL)"
            " + (SELECT count(*) FROM projects WHERE visibility != 'open')"
        ).fetchone()[0]
    finally:
        conn.close()
    assert owners == 0  # everything is the operator's, and every project open
    assert list((data / "backups").glob("memory-schema15-*.sqlite"))
