"""The CLI prints page and captured text literally, on a terminal as in a pipe.

The real ``ai-memory`` command runs against a real server with a terminal forced
(FORCE_COLOR, TERM, COLUMNS), so Rich would render markup, emoji codes and links
if any stored text reached it unescaped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.conftest import ServerProcess, clean_env, run_cli
from tests.mcp_support import module_server

PROJECT = "literal"
TITLE = "Title [bold]x[/bold] [[y]] :smile:"
LINK = "[link=https://evil.example]click[/link]"
OSC8 = "\x1b]8;;https://evil.example\x07osc\x1b]8;;\x07"
BODY = (
    "# Notes\n\nliteralword see [[decisions/x.md]] and "
    f"{LINK}, [red]not red[/red], {OSC8} and \x1b[31mraw red\x1b[0m.\n"
)
PROMPT = f"rawonlyword {LINK} [[decisions/x.md]] [bold]b[/bold]"
TERMINAL = {"FORCE_COLOR": "1", "TERM": "xterm-256color", "COLUMNS": "400"}


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    for server in module_server(tmp_path_factory):
        with server.client() as client:
            pages = f"/api/v1/projects/default/{PROJECT}/pages"
            for path in ("notes/x.md", "decisions/x.md"):
                written = client.put(f"{pages}/{path}", json={"body": BODY, "title": TITLE})
                assert written.status_code == 200, written.text
            hook = {"workspace": "default", "project": PROJECT, "agent": "claude-code"}
            params = {**hook, "event": "UserPromptSubmit", "session_id": "live-1"}
            prompt = client.post("/hook", params=params, json={"prompt": PROMPT})
            assert prompt.status_code == 202, prompt.text
        yield server


def cli(srv: ServerProcess, *args: str, code: int = 0) -> str:
    """Run the real CLI on a forced terminal; stdout and stderr together, decoded."""
    result = run_cli(
        *args,
        "--server",
        srv.url,
        "--project",
        PROJECT,
        data_dir=srv.data_dir,
        env=clean_env(**TERMINAL),
    )
    assert result.returncode == code, result.stderr
    text = (result.stdout + result.stderr).decode()
    assert "\x1b]8;" not in text  # no OSC-8 hyperlink, whatever the text said
    assert "\U0001f604" not in text  # :smile: stayed a word
    return text


def test_search_prints_titles_and_snippets_literally(srv: ServerProcess) -> None:
    shown = cli(srv, "search", "literalword")
    assert "\x1b[" in shown  # the terminal was forced: Rich styled its own table
    assert TITLE in shown
    assert "[[decisions/x.md]]" in shown and LINK in shown


def test_search_prints_raw_observation_hits_literally(srv: ServerProcess) -> None:
    shown = cli(srv, "search", "rawonlyword")
    assert "no page matched" in shown
    assert LINK in shown and "[[decisions/x.md]]" in shown and "[bold]b[/bold]" in shown


def test_list_pages_and_history_print_titles_literally(srv: ServerProcess) -> None:
    assert TITLE in cli(srv, "list-pages")
    assert TITLE in cli(srv, "history", "notes/x.md")


def test_read_page_prints_title_and_body_literally(srv: ServerProcess) -> None:
    shown = cli(srv, "read-page", "notes/x.md")
    assert TITLE in shown
    assert "[[decisions/x.md]]" in shown and LINK in shown and "[red]not red[/red]" in shown
    # Escapes in stored text are written out, not sent to the terminal.
    assert "\x1b[31mraw red" not in shown and "\\x1b[31mraw red" in shown
    assert "\\x1b]8;;https://evil.example\\x07osc" in shown


def test_json_output_keeps_the_exact_text(srv: ServerProcess) -> None:
    page = json.loads(cli(srv, "read-page", "notes/x.md", "--json"))
    assert page["title"] == TITLE and BODY.strip() in page["body"]


def test_error_messages_print_literally(srv: ServerProcess) -> None:
    shown = cli(srv, "read-page", "notes/[bold]gone[/bold] [link=https://evil.example]x.md", code=1)
    assert "error:" in shown and "[bold]gone[/bold]" in shown
