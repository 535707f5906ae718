"""``[backfill] on_start``: the first session start in an empty project imports its past, once."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.backfill_homes import agent_home, checkout
from tests.conftest import ServerProcess, clean_env

PROJECT = {"project": "acme-shop"}
CLAUDE = Path(".claude") / "projects" / "-tmp-bf-claude-acme-shop"


def start(data_dir: Path, home: Path) -> ServerProcess:
    config = data_dir / "config.toml"
    text = config.read_text().replace(
        "[backfill]\n", "[backfill]\non_start = true\nmax_sessions = 5\n"
    )
    config.write_text(text)
    return ServerProcess(data_dir, env=clean_env(HOME=str(home))).start()


def session_start(server: ServerProcess, cwd: Path, session_id: str) -> None:
    params = {"event": "SessionStart", "agent": "claude-code", "cwd": str(cwd),
              "session_id": session_id, **PROJECT}  # fmt: skip
    with server.client() as client:
        answer = client.post("/hook", params=params, json={"source": "startup"})
    assert answer.status_code == 202, answer.text


def sessions_when_settled(server: ServerProcess, expected: int) -> list[dict[str, Any]]:
    """The project's sessions once ``expected`` of them have their page (or 120 s passed)."""
    deadline = time.monotonic() + 120
    with server.client() as client:
        while True:
            client.post("/api/v1/sessions/flush", params={"timeout": 10})
            found: list[dict[str, Any]] = client.get(
                "/api/v1/sessions", params={**PROJECT, "limit": 50}
            ).json()["sessions"]
            done = [s for s in found if s["page_id"] is not None]
            if len(done) >= expected or time.monotonic() > deadline:
                return found
            time.sleep(0.2)


def past(sessions: list[dict[str, Any]]) -> set[str]:
    """The imported sessions: every one but those the test started live."""
    live = {"second-live-session", "after-restart"}
    return {s["session_id"] for s in sessions} - live


def test_first_session_start_imports_the_projects_own_past_once(
    data_dir: Path, tmp_path: Path
) -> None:
    source = checkout(tmp_path / "src")
    home = agent_home(tmp_path, source)
    elsewhere = checkout(tmp_path / "src" / "other-shop")
    other = home / ".claude" / "projects" / "-other-shop"
    other.mkdir()
    transcript = next((home / CLAUDE).glob("0410*.jsonl"))
    copied = transcript.read_text().replace(str(source), str(elsewhere))
    (other / "aaaaaaaa-0000-4000-8000-000000000000.jsonl").write_text(
        copied.replace(
            "0410c98e-07b1-4a53-8005-1896f3d0ced9", "aaaaaaaa-0000-4000-8000-000000000000"
        )
    )
    live = "f2d2a819-022c-49df-9728-4d0542a97a80"  # a session running now is not imported
    server = start(data_dir, home)
    try:
        session_start(server, source, live)
        imported = sessions_when_settled(server, 5)
        assert len(imported) == 5  # max_sessions: the newest five of the seven others
        assert live not in {s["session_id"] for s in imported}
        assert {s["agent"] for s in imported} >= {"gemini", "opencode"}  # the newest ones
        assert all(s["started_at"].startswith("2026-12-01") for s in imported)
        session_start(server, source, "second-live-session")
        assert past(sessions_when_settled(server, 5)) == past(imported)
    finally:
        server.stop()
    config = data_dir / "config.toml"  # a second import would now take all seven
    config.write_text(config.read_text().replace("max_sessions = 5", "max_sessions = 50"))
    again = ServerProcess(data_dir, env=clean_env(HOME=str(home))).start()
    try:
        session_start(again, source, "after-restart")
        # No longer empty: nothing more is imported.
        assert past(sessions_when_settled(again, 5)) == past(imported)
        with again.client() as client:
            others = client.get("/api/v1/sessions", params={"project": "other-shop"}).json()
    finally:
        again.stop()
    assert others["sessions"] == []
