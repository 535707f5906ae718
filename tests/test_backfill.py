"""``ai-memory backfill`` over transcripts the real agent CLIs wrote (and a few corrupt lines)."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from ai_memory.config import Config
from ai_memory.hooks.ingest import parse_event, store_command
from ai_memory.hooks.sanitize import Sanitizer
from ai_memory.importers.discover import agent_names
from ai_memory.importers.replay import Filters
from ai_memory.importers.run import Source, plan
from ai_memory.runtime import Runtime
from tests.backfill_homes import (
    AGENTS,
    CORRUPT_LINES,
    EVENTS,
    SESSIONS,
    agent_home,
    backfill,
    checkout,
)
from tests.conftest import ServerProcess, run_cli

COUNTED = ("sessions", "events", "skipped_lines", "projects")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return agent_home(tmp_path, checkout(tmp_path / "src"))


def rows(data_dir: Path, sql: str) -> list[tuple[object, ...]]:
    uri = f"file:{data_dir / 'db' / 'memory.sqlite'}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True)) as conn:
        return conn.execute(sql).fetchall()


def test_import_makes_one_dated_session_page_per_session(data_dir: Path, home: Path) -> None:
    dry = backfill(data_dir, home, "--dry-run")
    done = backfill(data_dir, home)
    assert done["via"] == "data dir" and done["dry_run"] is False
    assert {k: done[k] for k in COUNTED} == {k: dry[k] for k in COUNTED}
    assert done["sessions"] == SESSIONS and done["events"] == EVENTS
    assert done["skipped_lines"] == CORRUPT_LINES
    assert done["projects"] == {"default/acme-shop": {"sessions": SESSIONS, "events": EVENTS}}
    assert done["stored"] == EVENTS and done["rejected"] == 0
    sessions = rows(data_dir, "SELECT agent, started_at, ended_at, page_id FROM sessions")
    assert sorted({agent for agent, *_ in sessions}) == sorted(AGENTS)
    for _, started, ended, page_id in sessions:  # the CLIs ran these on 2026-12-01
        assert str(started).startswith("2026-12-01T15:0") and str(ended) >= str(started)
        assert page_id is not None
    page = data_dir / "wiki" / "default" / "acme-shop" / "sessions"
    claude = (page / "0410c98e-07b1-4a53-8005-1896f3d0ced9.md").read_text()
    assert "- Started: 2026-12-01T15:00:26.132000Z" in claude
    assert "- Ended: 2026-12-01T15:00:26.358000Z (imported)" in claude
    assert "created: '2026-12-01T15:00:26.358000Z'" in claude
    assert "echo hello-from-the-agent" in claude
    assert "Done: the greeting is printed" in claude  # capture_assistant is on by default
    created = rows(data_dir, "SELECT min(created_at), max(created_at) FROM observations")[0]
    assert str(created[0]).startswith("2026-12-01T15:00") and str(created[1]) < "2026-12-01T15:03"


def test_capture_policy_applies_to_imports(data_dir: Path, tmp_path: Path) -> None:
    source = checkout(tmp_path / "src")
    home = agent_home(tmp_path, source)
    marker = source / ".ai-memory.toml"
    marker.write_text('[capture]\nmode = "off"\n')
    off = backfill(data_dir, home, "--dry-run")
    assert off["sessions"] == 0 and off["not_captured"] == SESSIONS
    marker.write_text("[capture]\ncapture_assistant = false\n")
    kept = backfill(data_dir, home, "--agent", "claude-code")
    assert kept["stored"] == 10
    page = data_dir / "wiki" / "default" / "acme-shop" / "sessions"
    text = (page / "0410c98e-07b1-4a53-8005-1896f3d0ced9.md").read_text()
    assert "Done: the greeting is printed" not in text
    assert "add a test for the greeting" not in text
    marker.write_text('[capture]\nmode = "metadata"\n')
    other = backfill(data_dir, home, "--agent", "codex")
    assert other["stored"] == 10
    prompts = rows(data_dir, "SELECT body FROM observations WHERE agent = 'codex'")
    assert not any("greeting" in str(body) for (body,) in prompts)


def test_second_run_adds_nothing(data_dir: Path, home: Path) -> None:
    backfill(data_dir, home)
    before = rows(data_dir, "SELECT count(*) FROM observations")
    pages = rows(data_dir, "SELECT count(*) FROM pages")
    again = backfill(data_dir, home)
    assert again["stored"] == 0 and again["duplicates"] == EVENTS
    assert rows(data_dir, "SELECT count(*) FROM observations") == before
    assert rows(data_dir, "SELECT count(*) FROM pages") == pages


def test_a_transcript_that_grew_is_imported_again_and_ends_again(
    data_dir: Path, home: Path
) -> None:
    backfill(data_dir, home, "--agent", "claude-code")
    transcript = next((home / ".claude" / "projects").glob("*/0410c98e-*.jsonl"))
    lines = transcript.read_text().splitlines()
    prompt = next(line for line in lines if '"promptId"' in line and '"type":"user"' in line)
    later = prompt.replace("print the greeting number 0", "now print it twice").replace(
        "2026-12-01T15:00:26.132Z", "2026-12-01T15:01:00.000Z"
    )
    later = later.replace('"uuid":"', '"uuid":"later-')
    transcript.write_text("\n".join([*lines, later]) + "\n")
    again = backfill(data_dir, home, "--agent", "claude-code")
    assert again["stored"] == 2 and again["duplicates"] == 9  # the new prompt, a new end
    page = data_dir / "wiki" / "default" / "acme-shop" / "sessions" / transcript.name
    text = page.with_suffix(".md").read_text()
    assert "now print it twice" in text and "- Ended: 2026-12-01T15:01:00.000000Z" in text


def test_older_imports_leave_the_newest_handoff_first(data_dir: Path, home: Path) -> None:
    newest = "SELECT from_session FROM handoffs WHERE status = 'open' ORDER BY created_at DESC"
    backfill(data_dir, home, "--agent", "opencode")  # the newest sessions of the home
    (first,) = rows(data_dir, newest)[0]
    backfill(data_dir, home, "--agent", "claude-code")  # older ones, imported later
    assert rows(data_dir, newest)[0] == (first,) and str(first).startswith("ses_")


def test_filters(data_dir: Path, home: Path, tmp_path: Path) -> None:
    def found(**given: object) -> int:
        agents = agent_names(given.pop("agents", ()))  # type: ignore[arg-type]
        filters = Filters(tuple(agents), **given)  # type: ignore[arg-type]
        return plan(Source(home, {}), filters, agents)[1].sessions

    assert found(agents=["codex"]) == 2
    assert found(agents=["claude", "opencode"]) == 4
    assert found(project="acme-shop") == found(project="default/acme-shop") == SESSIONS
    assert found(project="other") == 0
    assert found(cwd=str(tmp_path / "src")) == SESSIONS
    assert found(cwd=str(tmp_path / "elsewhere")) == 0
    assert found(since="2026-12-01T00:00:00.000000Z") == SESSIONS
    assert found(since="2026-12-02T00:00:00.000000Z") == 0
    only = backfill(data_dir, home, "--agent", "gemini", "--since", "2026-12-01", "-p", "acme-shop")
    assert only["sessions"] == 2 and only["skipped_lines"] == 1
    assert rows(data_dir, "SELECT DISTINCT agent FROM sessions") == [("gemini",)]


def test_bad_options_are_named(data_dir: Path, home: Path) -> None:
    done = run_cli("backfill", "--home", str(home), "--agent", "vim", data_dir=data_dir)
    assert done.returncode == 1 and b"unknown agent 'vim'" in done.stderr
    done = run_cli("backfill", "--home", str(home), "--since", "last week", data_dir=data_dir)
    assert done.returncode == 1 and b"--since 'last week' is not a date" in done.stderr


def test_unreadable_transcript_is_reported_not_fatal(data_dir: Path, home: Path) -> None:
    (home / ".claude" / "projects" / "-somewhere" / "broken.jsonl").mkdir(parents=True)
    text = run_cli("backfill", "--home", str(home), "--dry-run", data_dir=data_dir)
    assert text.returncode == 0, text.stderr.decode()
    assert b"unreadable:" in text.stderr and b"broken.jsonl" in text.stderr
    assert b"would import 8 session(s), 40 event(s); 4 unreadable line(s) skipped" in text.stdout


def test_progress_and_summary_are_printed(data_dir: Path, home: Path) -> None:
    done = run_cli("backfill", "--home", str(home), data_dir=data_dir)
    assert done.returncode == 0, done.stderr.decode()
    assert b"imported 8/8 sessions" in done.stderr
    assert b"imported (data dir) 8 session(s), 40 event(s); 4 unreadable line(s) skipped" in (
        done.stdout
    )
    assert b"default/acme-shop: 8 session(s), 40 event(s)" in done.stdout


def test_through_a_running_server_searchable(data_dir: Path, home: Path) -> None:
    with_server = ServerProcess(data_dir).start()
    try:
        done = backfill(data_dir, home, "--server", with_server.url)
        assert done["via"] == "server" and done["accepted"] == EVENTS
        again = backfill(data_dir, home, "--server", with_server.url)
        assert again["rejected"] == 0 and again["accepted"] == EVENTS
        with with_server.client() as client:
            found = client.get("/api/v1/search", params={"q": "greeting", "project": "acme-shop"})
            sessions = client.get("/api/v1/sessions", params={"project": "acme-shop"}).json()
    finally:
        with_server.stop()
    hits = found.json()["hits"]
    assert {h["kind"] for h in hits} == {"session"} and len(hits) == SESSIONS
    assert all(s["page_id"] is not None for s in sessions["sessions"])
    assert rows(data_dir, "SELECT count(*) FROM observations") == [(EVENTS,)]
    assert {s["started_at"][:10] for s in sessions["sessions"]} == {"2026-12-01"}


def test_occurred_at_is_bounded(server: ServerProcess) -> None:
    params = {"project": "p", "event": "user-prompt", "agent": "codex", "session_id": "s1"}
    with server.client() as client:
        edges = ("0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "0999-06-01")
        for bad in ("1999-12-31T00:00:00Z", "2999-01-01T00:00:00Z", "yesterday", *edges):
            answer = client.post(
                "/hook", params={**params, "occurred_at": bad}, json={"prompt": "x"}
            )
            assert answer.status_code == 400 and "occurred_at" in answer.text
        good = {**params, "occurred_at": "2024-05-01T10:00:00+02:00"}
        assert client.post("/hook", params=good, json={"prompt": "x"}).status_code == 202
    assert rows(server.data_dir, "SELECT created_at FROM observations") == [
        ("2024-05-01T08:00:00.000000Z",)
    ]


def test_a_directory_ingest_refuses_leaves_the_session_out_before_it_is_counted(
    data_dir: Path, tmp_path: Path
) -> None:
    """A recorded cwd with a NUL or over 4,096 characters: the dry run and the real run both
    leave the session out and say why, instead of promising it and rejecting every event."""
    projects = tmp_path / "home" / ".claude" / "projects" / "-x"
    projects.mkdir(parents=True)
    for name, cwd in (("nul", "/src/a\x00b"), ("long", "/" + "a" * 5000)):
        record = {"type": "user", "sessionId": name, "cwd": cwd, "timestamp": "2026-03-01T10:00Z",
                  "message": {"content": f"hostile cwd {name}"}}  # fmt: skip
        (projects / f"{name}.jsonl").write_text(json.dumps(record) + "\n")
    home = tmp_path / "home"
    dry = backfill(data_dir, home, "--dry-run")
    done = backfill(data_dir, home)
    for result in (dry, done):
        assert (result["sessions"], result["events"], result["no_directory"]) == (0, 0, 2)
        assert result["projects"] == {} and result["rejected"] == 0
        assert len(result["errors"]) == 2
        assert any("cwd contains NUL characters" in error for error in result["errors"])
    assert rows(data_dir, "SELECT count(*) FROM observations") == [(0,)]


def test_a_rerun_writes_the_page_an_interrupted_import_left_unwritten(
    data_dir: Path, home: Path
) -> None:
    """What a SIGKILL between a session's last event and its page leaves (its events
    stored, the session ended, no page), made by the import's own steps: the next run
    writes the page, dated when the session ended, and stores nothing twice."""
    agents = agent_names(["claude-code"])
    plans, _ = plan(Source(home, {}), Filters(tuple(agents)), agents)
    runtime = Runtime.start(Config.load(data_dir, {}), embed=False, search=False)
    try:
        sanitizer = Sanitizer(runtime.config.hooks.redact_patterns)
        events = [parse_event(i["params"], i["body"], sanitizer) for i in plans[0].items]
        runtime.writer.call(store_command(events), timeout=30)
    finally:
        runtime.stop()
    session = plans[0].transcript.session_id
    killed = f"SELECT ended_at IS NOT NULL, page_id FROM sessions WHERE session_id = '{session}'"
    assert rows(data_dir, killed) == [(1, None)]
    again = backfill(data_dir, home, "--agent", "claude-code")
    assert again["duplicates"] == len(plans[0].items) and again["rejected"] == 0
    ((ended, page_id),) = rows(data_dir, killed)
    assert ended == 1 and page_id is not None
    page = data_dir / "wiki" / "default" / "acme-shop" / "sessions" / f"{session}.md"
    assert f"created: '{plans[0].transcript.ended_at}'" in page.read_text()


def test_large_tool_results_reach_a_running_server(server: ServerProcess, tmp_path: Path) -> None:
    """Tool results of 120 KB and one of 5 MB, as a transcript keeps them: cut like the live
    hook client cuts them, and sent in batches the server's request limit accepts."""
    projects = tmp_path / "home" / ".claude" / "projects" / "-big"
    projects.mkdir(parents=True)
    cwd, lines = str(checkout(tmp_path / "big")), []
    common = {"sessionId": "big", "cwd": cwd, "timestamp": "2026-03-01T10:00:00Z"}
    for n in range(40):
        result = ("y" * 5_000_000) if n == 0 else (f"result {n} " * 12_000)
        use = {"type": "tool_use", "id": f"t{n}", "name": "Read", "input": {"file_path": "a"}}
        block = {"type": "tool_result", "tool_use_id": f"t{n}", "content": result}
        lines.append({**common, "type": "assistant", "message": {"content": [use]}})
        lines.append({**common, "type": "user", "message": {"content": [block]}})
    (projects / "big.jsonl").write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    done = backfill(server.data_dir, tmp_path / "home", "--server", server.url)
    assert done["via"] == "server" and done["rejected"] == 0 and done["errors"] == []
    assert done["accepted"] == done["events"] == 42  # start, 40 results, end
