"""``ai-memory doctor`` on a healthy install and on each broken state it knows, one by one."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

from ai_memory.cli import hook_install
from ai_memory.cli.mcp import bridge_command
from ai_memory.config import Config
from ai_memory.core.identity import Scope
from ai_memory.doctor.findings import Finding, Severity, worst
from ai_memory.doctor.run import run_checks
from ai_memory.maintenance.init import initialise
from ai_memory.mcp import install as mcp_install
from ai_memory.runtime import Runtime
from tests.conftest import ServerProcess, clean_env, free_port, run_cli, shared_server


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    (folder / ".claude").mkdir(parents=True)
    return folder


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One running install for the file: each test installs agents into a home of its own,
    and the one that breaks the data dir puts it back."""
    with shared_server(tmp_path_factory, "doctor") as proc:
        with proc.client() as client:
            body = {"body": "WAL lets readers proceed."}
            client.put("/api/v1/projects/default/api/pages/concepts/wal.md", json=body)
        yield proc


def env_for(server: ServerProcess | None, port: int | None = None) -> dict[str, str]:
    url = server.url if server else f"http://127.0.0.1:{port or free_port()}"
    return {"AI_MEMORY_SERVER__URL": url}


def install_agent(home: Path, data_dir: Path, url: str) -> None:
    path = hook_install.settings_path("claude-code", home)
    path.write_text(hook_install.render(hook_install.install({}, "claude-code", data_dir)))
    launch = mcp_install.Launch(bridge_command(data_dir, None), url)
    target = mcp_install.config_path("claude-code", home)
    mcp_install.apply(mcp_install.plan("claude-code", "bridge", launch, target))


def doctor(data_dir: Path, home: Path, env: dict[str, str]) -> dict[str, Finding]:
    """The findings by check; a check reporting twice keeps its worst."""
    found: dict[str, Finding] = {}
    for finding in run_checks(data_dir, home, env, timeout_s=5):
        kept = found.get(finding.check)
        if kept is None or finding.severity > kept.severity:
            found[finding.check] = finding
    return found


def broken(found: dict[str, Finding], check: str, severity: Severity = Severity.ERROR) -> Finding:
    finding = found[check]
    assert finding.severity == severity, finding
    assert finding.fix, finding
    return finding


def test_a_healthy_install_reports_every_check_ok(live: ServerProcess, home: Path) -> None:
    data_dir = live.data_dir
    install_agent(home, data_dir, live.url)
    found = doctor(data_dir, home, env_for(live))
    assert worst(found.values()) == Severity.OK, [f for f in found.values() if f.severity]
    for check in (
        "config",
        "data_dir",
        "token",
        "server",
        "capture",
        "hooks:claude-code",
        "mcp:claude-code",
        "spool",
        "git",
        "index",
        "schema",
        "embedder",
        "service",
    ):
        assert check in found, check
    assert "read back" in found["capture"].message


def test_doctor_command_exits_with_the_worst_finding_and_speaks_json(
    live: ServerProcess, home: Path
) -> None:
    data_dir = live.data_dir
    install_agent(home, data_dir, live.url)
    env = clean_env(HOME=str(home), **env_for(live))
    done = run_cli("doctor", "--json", data_dir=data_dir, env=env)
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["status"] == "ok", report
    token = data_dir / "auth-tokens" / "default"
    os.chmod(token, 0o644)
    try:
        done = run_cli("doctor", data_dir=data_dir, env=env)
    finally:
        os.chmod(token, 0o600)  # the server is shared with the file's other tests
    assert done.returncode == 2
    assert b"chmod 600" in done.stdout


def test_an_uninitialised_data_dir_says_run_init(tmp_path: Path, home: Path) -> None:
    found = doctor(tmp_path / "nothing", home, env_for(None))
    fix = broken(found, "data_dir").fix
    assert fix is not None and fix.startswith("ai-memory init --data-dir")


def test_a_data_dir_readable_by_others(data_dir: Path, home: Path) -> None:
    os.chmod(data_dir, 0o755)
    finding = broken(doctor(data_dir, home, env_for(None)), "data_dir", Severity.WARNING)
    assert finding.fix == f"chmod 700 {data_dir}"


def test_a_missing_token(data_dir: Path, home: Path) -> None:
    (data_dir / "auth-tokens" / "default").unlink()
    assert "ai-memory init" in (broken(doctor(data_dir, home, env_for(None)), "token").fix or "")


def test_an_invalid_config(data_dir: Path, home: Path) -> None:
    (data_dir / "config.toml").write_text("[server]\nbind = 12\n")
    finding = broken(doctor(data_dir, home, env_for(None)), "config")
    assert "config.toml" in (finding.fix or "")


def test_no_server_on_the_configured_address(data_dir: Path, home: Path) -> None:
    finding = broken(doctor(data_dir, home, env_for(None)), "server")
    assert "nothing answers" in finding.message
    assert finding.fix == f"ai-memory serve --data-dir {data_dir}"


def test_the_configured_port_serves_another_data_dir(
    live: ServerProcess, tmp_path: Path, home: Path
) -> None:
    other = tmp_path / "other"
    initialise(Config.load(other, {}))
    finding = broken(doctor(other, home, env_for(live)), "server")
    assert "serves another data dir" in finding.message
    assert "server.url" in (finding.fix or "")


def test_hooks_missing_for_a_detected_agent(live: ServerProcess, home: Path) -> None:
    data_dir = live.data_dir
    found = doctor(data_dir, home, env_for(live))
    finding = broken(found, "hooks:claude-code")
    assert (
        finding.fix == f"ai-memory install-hooks --agent claude-code --data-dir {data_dir} --apply"
    )
    assert broken(found, "mcp:claude-code").fix == (
        f"ai-memory install-mcp --client claude-code --data-dir {data_dir} --apply"
    )
    assert "hooks:codex" not in found  # not installed on this machine: not a finding


def test_hooks_and_mcp_pointing_at_another_data_dir(
    live: ServerProcess, home: Path, tmp_path: Path
) -> None:
    data_dir = live.data_dir
    install_agent(home, tmp_path / "elsewhere", live.url)
    found = doctor(data_dir, home, env_for(live))
    assert "elsewhere" in broken(found, "hooks:claude-code").message
    assert "elsewhere" in broken(found, "mcp:claude-code").message


def test_hooks_pointing_at_another_server(live: ServerProcess, home: Path) -> None:
    data_dir = live.data_dir
    path = hook_install.settings_path("claude-code", home)
    wrong = f"http://127.0.0.1:{free_port()}"
    settings = hook_install.install({}, "claude-code", data_dir, server=wrong)
    path.write_text(hook_install.render(settings))
    finding = broken(doctor(data_dir, home, env_for(live)), "hooks:claude-code")
    assert wrong in finding.message and "install-hooks" in (finding.fix or "")


def test_hooks_and_mcp_that_run_an_entry_file_that_is_gone(live: ServerProcess, home: Path) -> None:
    data_dir = live.data_dir
    install_agent(home, data_dir, live.url)
    for path in (hook_install.settings_path("claude-code", home), home / ".claude.json"):
        text = path.read_text()
        assert "agent_entry.py" in text
        path.write_text(text.replace("agent_entry.py", "moved/agent_entry.py"))
    found = doctor(data_dir, home, env_for(live))
    hooks = broken(found, "hooks:claude-code")
    assert "moved/agent_entry.py" in hooks.message and "no longer exists" in hooks.message
    assert hooks.fix == f"ai-memory install-hooks --agent claude-code --data-dir {data_dir} --apply"
    assert "no longer exists" in broken(found, "mcp:claude-code").message


def test_capture_that_loses_what_it_accepts(data_dir: Path, home: Path) -> None:
    """A redaction pattern so broad it eats captured text: events come back without it."""
    eager = clean_env(AI_MEMORY_HOOKS__REDACT_PATTERNS='["probe [0-9a-f]+"]')
    proc = ServerProcess(data_dir, env=eager).start()
    try:
        finding = broken(doctor(data_dir, home, env_for(proc)), "capture", Severity.WARNING)
    finally:
        proc.stop()
    assert "could not be read back" in finding.message
    assert "ai-memory serve" in (finding.fix or "")


def test_a_spool_the_server_does_not_drain(data_dir: Path, home: Path) -> None:
    spool = data_dir / "spool"
    spool.mkdir(exist_ok=True)
    old = time.time() - 3600
    for i in range(3):
        (spool / f"k{i}.json").write_text("{}")
        os.utime(spool / f"k{i}.json", (old, old))
    finding = broken(doctor(data_dir, home, env_for(None)), "spool", Severity.WARNING)
    assert "3 hook events" in finding.message
    assert finding.fix == f"ai-memory hook-drain --data-dir {data_dir}"


def test_an_unreadable_git_head(runtime_written: Path, home: Path) -> None:
    (runtime_written / "wiki" / ".git" / "HEAD").write_text("garbage\n")
    finding = broken(doctor(runtime_written, home, env_for(None)), "git")
    assert "HEAD is not readable" in finding.message


def test_a_last_checkpoint_older_than_the_newest_write(runtime_written: Path, home: Path) -> None:
    repo = pygit2.Repository(str(runtime_written / "wiki"))
    head = repo.head.peel(pygit2.Commit)
    stamp = pygit2.Signature("t", "t@example.com", int(time.time()) - 86400, 0)
    repo.create_commit("HEAD", stamp, stamp, "old", head.tree_id, [head.id])
    finding = broken(doctor(runtime_written, home, env_for(None)), "git", Severity.WARNING)
    assert "older than the newest write" in finding.message


def test_a_wiki_file_edited_behind_the_index(runtime_written: Path, home: Path) -> None:
    page = runtime_written / "wiki" / "default" / "api" / "concepts" / "wal.md"
    page.write_text(page.read_text() + "\nedited by hand while nothing watched\n")
    finding = broken(doctor(runtime_written, home, env_for(None)), "index", Severity.WARNING)
    assert "sampled pages differ" in finding.message
    assert "ai-memory reindex" in (finding.fix or "")


def test_a_wiki_file_removed_behind_the_index(runtime_written: Path, home: Path) -> None:
    (runtime_written / "wiki" / "default" / "api" / "concepts" / "wal.md").unlink()
    finding = broken(doctor(runtime_written, home, env_for(None)), "index", Severity.WARNING)
    assert "markdown files but" in finding.message


def test_an_index_from_a_newer_release(runtime_written: Path, home: Path) -> None:
    with sqlite3.connect(runtime_written / "db" / "memory.sqlite") as conn:
        conn.execute("INSERT INTO schema_migrations (version, applied_at) VALUES (999, 'now')")
    finding = broken(doctor(runtime_written, home, env_for(None)), "schema")
    assert finding.fix == "pip install --upgrade ai-memory"


@pytest.fixture
def runtime_written(data_dir: Path) -> Path:
    """A data dir holding one page, written and checkpointed by the data dir's own parts."""
    runtime = Runtime.start(Config.load(data_dir, {}))
    try:
        runtime.wiki.write_page(Scope.of("default", "api").page("concepts/wal.md"), "WAL.", {})
    finally:
        runtime.stop()
    return data_dir


def test_an_embedder_configured_but_not_loadable(data_dir: Path, home: Path) -> None:
    env = {
        **env_for(None),
        "AI_MEMORY_EMBEDDINGS__PROVIDER": "local",
        "AI_MEMORY_EMBEDDINGS__MODEL_PATH": str(data_dir / "no-model-here"),
    }
    finding = broken(doctor(data_dir, home, env), "embedder")
    assert "no-model-here" in finding.message or "install" in finding.message


def test_a_service_file_that_runs_another_install(data_dir: Path, home: Path) -> None:
    from ai_memory.service.control import Service
    from ai_memory.service.spec import Host

    old = Host("linux", {"HOME": str(home)}, Path("/old/venv/bin/python3"), os.getuid())
    Service(old, data_dir).install()  # an upgrade into a new virtualenv left this one behind
    finding = broken(doctor(data_dir, home, env_for(None)), "service", Severity.WARNING)
    assert "another install" in finding.message and "schema" in finding.message
    assert finding.fix == f"ai-memory service install --data-dir {data_dir}"
