"""The CLI's rough edges, smoothed: busy ports, help with choices, whole paths, local reads."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ServerProcess, clean_env, free_port, run_cli, shared_server

LONG = "procedures/release/checklists/long-page-name-release.md"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server for the file: each test keeps to a project of its own."""
    with shared_server(tmp_path_factory, "cli-polish") as proc:
        yield proc


def test_serve_on_a_busy_port_says_so_without_the_banner(data_dir: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_cli("serve", "--bind", f"127.0.0.1:{port}", data_dir=data_dir)
    assert done.returncode == 1
    assert b"already in use" in done.stderr and b"serving" not in done.stdout


def test_help_lists_the_choices(data_dir: Path) -> None:
    done = run_cli("write-page", "--help", data_dir=data_dir, env=clean_env(COLUMNS="200"))
    text = done.stdout.decode()
    for kind in ("decision", "concept", "gotcha", "procedure"):
        assert kind in text
    assert "--pinned" in text and "<bool>" not in text and "<int>" in text  # the real entry
    top = subprocess.run(
        [sys.executable, "-m", "ai_memory", "--help"],
        env=clean_env(COLUMNS="200"),
        capture_output=True,
        timeout=60,
    ).stdout.decode()
    assert "install-completion" not in top and "completion" in top


def test_list_pages_names_its_project_and_keeps_paths_whole(server: ServerProcess) -> None:
    with server.client() as client:
        body = {"body": "steps", "title": "A title long enough to need wrapping in a narrow table"}
        client.put(f"/api/v1/projects/default/cli-list/pages/{LONG}", json=body)
    env = clean_env(COLUMNS="80")
    done = run_cli(
        "list-pages", "-p", "cli-list", "--server", server.url, data_dir=server.data_dir, env=env
    )
    text = done.stdout.decode()
    assert done.returncode == 0, done.stderr
    assert "default/cli-list" in text
    assert LONG in text  # on one line, never cut


def test_read_commands_fall_back_to_the_index_without_a_server(own_server: ServerProcess) -> None:
    server = own_server
    with server.client() as client:
        client.put("/api/v1/projects/default/cli/pages/a.md", json={"body": "kept text"})
    server.stop()
    down = ("--server", f"http://127.0.0.1:{free_port()}", "-p", "cli")
    page = run_cli("read-page", "a.md", *down, data_dir=server.data_dir)
    assert page.returncode == 0, page.stderr
    assert b"kept text" in page.stdout and b"read-only" in page.stderr
    history = run_cli("history", "a.md", *down, "--json", data_dir=server.data_dir)
    assert history.returncode == 0 and b'"version": 1' in history.stdout
    found = run_cli("search", "kept", *down, "--json", data_dir=server.data_dir)
    assert found.returncode == 0, found.stderr
    assert [h["path"] for h in json.loads(found.stdout)["hits"]] == ["a.md"]


def test_shell_completion_script_and_answers(data_dir: Path) -> None:
    script = subprocess.run(
        [sys.executable, "-m", "ai_memory", "completion", "bash"],
        env=clean_env(),
        capture_output=True,
        timeout=60,
    )
    assert script.returncode == 0 and b"_AI_MEMORY_COMPLETE" in script.stdout
    env = clean_env(_AI_MEMORY_COMPLETE="complete_bash", COMP_WORDS="ai-memory doc", COMP_CWORD="1")
    done = subprocess.run(
        [sys.executable, "-m", "ai_memory"], env=env, capture_output=True, timeout=60
    )
    assert b"doctor" in done.stdout


def test_finalize_session_names_the_page_or_says_there_is_none(server: ServerProcess) -> None:
    hook = {"project": "cli-final", "agent": "claude-code"}
    with server.client() as client:
        start = {"hook_event_name": "SessionStart", "source": "startup"}
        assert client.post("/hook", params={**hook, "session_id": "empty"}, json=start).is_success
        for event in (
            {"hook_event_name": "UserPromptSubmit", "prompt": "tidy the release checklist"},
            {"hook_event_name": "Stop", "last_assistant_message": "Tidied the checklist."},
        ):
            answer = client.post("/hook", params={**hook, "session_id": "full"}, json=event)
            assert answer.is_success
    ended = {}
    for session_id in ("empty", "full"):
        done = run_cli(
            "finalize-session",
            "--session-id",
            session_id,
            "-p",
            "cli-final",
            "--server",
            server.url,
            data_dir=server.data_dir,
        )
        assert done.returncode == 0, done.stderr
        ended[session_id] = done.stdout.decode()
    assert "None" not in ended["empty"] and "no session page" in ended["empty"]
    assert "page sessions/full.md" in ended["full"] and "None" not in ended["full"]


def test_no_help_shows_a_bare_bool_and_options_show_their_types() -> None:
    """Every command's --help: flags take no value, typed options say their type."""
    import typer
    from click.testing import CliRunner

    from ai_memory.cli.app import app
    from ai_memory.cli.options import quiet_flags

    command = quiet_flags(typer.main.get_command(app))
    runner = CliRunner()
    seen = 0
    for name, sub in command.commands.items():
        for words in [[name], *([name, s] for s in getattr(sub, "commands", {}))]:
            shown = runner.invoke(command, [*words, "--help"], terminal_width=200)
            assert shown.exit_code == 0, (words, shown.output)
            assert "<bool>" not in shown.output, words
            assert "<list[" not in shown.output, words  # a repeatable option: one value's type
            seen += 1
    assert seen >= 25
    search = runner.invoke(command, ["search", "--help"], terminal_width=200).output
    assert "<int range>" in search and "<path>" in search


def test_search_keeps_paths_whole_in_a_narrow_terminal(server: ServerProcess) -> None:
    with server.client() as client:
        body = {"body": "Walk the checklist: " + "tag build publish announce " * 12}
        page = f"/api/v1/projects/default/cli-search/pages/{LONG}"
        client.put(page, json=body).raise_for_status()
    done = run_cli(
        "search",
        "checklist",
        "-p",
        "cli-search",
        "--server",
        server.url,
        data_dir=server.data_dir,
        env=clean_env(COLUMNS="80"),
    )
    assert done.returncode == 0, done.stderr
    assert LONG in done.stdout.decode()  # the snippet and title wrap; the path never does
