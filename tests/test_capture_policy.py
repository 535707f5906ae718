"""Capture policy through the real hook command: what it drops is nowhere on disk.

Each test runs ``python -I -S …/agent_entry.py hook`` as agents do, against a
real server (or none), then greps the spool, the logs, the SQLite file and its
WAL, the wiki and its ``git log -p`` for a marker only the dropped content held.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ai_memory.config import Config
from ai_memory.maintenance.init import initialise
from tests.capture_policy_support import (
    env_for,
    event,
    observations,
    policy_checkout,
    read_tool,
    run_all,
    run_stderr,
    session_page,
    traces,
)
from tests.conftest import ServerProcess, clean_env, run_cli
from tests.hooks_support import hook_env, make_checkout

INGEST = {
    "AI_MEMORY_INGEST__DROP_EVENTS": '["Notification"]',
    "AI_MEMORY_INGEST__DROP_TOOL_NAMES": '["mcp__vault__*", "WebFetch"]',
    "AI_MEMORY_INGEST__DROP_TOOL_USE_ID_PREFIXES": '["toolu_private_"]',
}


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server for the tests that need one up, with the [ingest] lists of :data:`INGEST`
    (no other test sends what they name); each test has a project of its own."""
    root = tmp_path_factory.mktemp("policy") / "data"
    initialise(Config.load(root, {}))
    proc = ServerProcess(root, env=clean_env(**INGEST)).start()
    try:
        yield proc
    finally:
        proc.stop()


def test_excluded_paths_and_the_assistant_message_leave_no_trace(
    shared: ServerProcess, tmp_path: Path
) -> None:
    server, project = shared, "p-exclude"
    policy = 'exclude = ["secrets/**", "*.pem"]\ncapture_assistant = false'
    checkout = policy_checkout(tmp_path / "shop", policy, project)
    env = env_for(server, tmp_path / "xdg")
    s = "pol-1"
    run_all(
        [
            event(s, checkout, "SessionStart", source="startup"),
            event(s, checkout, "UserPromptSubmit", prompt="Wire the payment client"),
            read_tool(s, checkout, "secrets/a.env", "greeting = dropped-env-7f3a"),
            read_tool(s, checkout, str(checkout / "certs/key.pem"), "dropped-pem-51c2"),
            event(
                s,
                checkout,
                "PreToolUse",
                tool_name="Bash",
                tool_input={"command": "cat secrets/a.env  # dropped-shell-9e0d"},
            ),
            event(
                s,
                checkout,
                "PostToolUse",
                tool_name="apply_patch",
                tool_input={
                    "command": "*** Begin Patch\n*** Add File: secrets/new.env\n"
                    "+colour dropped-patch-2b5c\n*** End Patch"
                },
            ),
            read_tool(s, checkout, "src/pay.py", "def pay(): kept-read-4b81"),
            event(s, checkout, "Stop", last_assistant_message="Wired it. dropped-answer-c3d7"),
        ],
        env,
        checkout,
    )
    cursor_read = {
        "conversation_id": s,
        "workspace_roots": [str(checkout)],
        "file_path": str(checkout / "secrets" / "dropped-cursor-8d1e.env"),
        "content": "API_KEY=x",
    }
    run_all([{**cursor_read, "hook_event_name": "beforeReadFile"}], env, checkout, "cursor")
    run_all([event(s, checkout, "SessionEnd", reason="exit")], env, checkout)
    page = session_page(server, s, project)
    assert "Wire the payment client" in page and "src/pay.py" in page
    assert [o[2] for o in observations(server.data_dir, project) if "kept-read-4b81" in o[2]]
    for marker in ("env-7f3a", "pem-51c2", "shell-9e0d", "patch-2b5c", "cursor-8d1e"):
        assert traces(f"dropped-{marker}", server.data_dir) == [], marker
    assert traces("dropped-answer-c3d7", server.data_dir) == []
    assert traces("kept-read-4b81", server.data_dir)  # the grep does find what is kept
    # The next agent still gets a handoff, from the prompt and the tool work (read through
    # the API: the hook's own fetch has a deadline a loaded machine can miss).
    with server.client() as client:
        handoffs = client.get("/api/v1/handoffs", params={"project": project}).json()
    (handoff,) = handoffs["handoffs"]
    assert "Wire the payment client" in json.dumps(handoff) and "dropped-" not in json.dumps(
        handoff
    )


def test_capture_assistant_on_keeps_the_final_message(
    shared: ServerProcess, tmp_path: Path
) -> None:
    server, project = shared, "p-assistant"
    checkout = policy_checkout(tmp_path / "shop", "capture_assistant = true", project)
    env = env_for(server, tmp_path / "xdg")
    s = "pol-a"
    run_all(
        [
            event(s, checkout, "UserPromptSubmit", prompt="Rename the cart module"),
            event(s, checkout, "Stop", last_assistant_message="Renamed it. kept-answer-0a9c"),
            event(s, checkout, "SessionEnd", reason="exit"),
        ],
        env,
        checkout,
    )
    assert "kept-answer-0a9c" in session_page(server, s, project)


def test_metadata_mode_keeps_the_events_without_their_text(
    shared: ServerProcess, tmp_path: Path
) -> None:
    server, project = shared, "p-metadata"
    policy = 'mode = "metadata"\ncapture_assistant = true'
    checkout = policy_checkout(tmp_path / "shop", policy, project)
    env = env_for(server, tmp_path / "xdg")
    s = "pol-m"
    run_all(
        [
            event(s, checkout, "UserPromptSubmit", prompt="dropped-prompt-2d4e"),
            read_tool(s, checkout, "src/meta.py", "dropped-output-8c1f"),
            event(
                s,
                checkout,
                "PostToolUse",
                tool_name="Bash",
                tool_input={"command": "echo dropped-command-6a2b"},
                tool_response={"stdout": "dropped-stdout-3f9e"},
                tool_use_id="toolu_meta_1",
            ),
            event(s, checkout, "Stop", last_assistant_message="dropped-assistant-1b7d"),
            event(s, checkout, "SessionEnd", reason="exit"),
        ],
        env,
        checkout,
    )
    page = session_page(server, s, project)
    kinds = [(kind, tool) for kind, tool, _ in observations(server.data_dir, project)]
    assert kinds == [
        ("user-prompt", None),
        ("post-tool-use", "Read"),
        ("post-tool-use", "Bash"),
        ("stop", None),
        ("session-end", None),
    ]
    assert "src/meta.py" in page  # a file a tool named is metadata
    for marker in ("prompt-2d4e", "output-8c1f", "command-6a2b", "stdout-3f9e", "assistant-1b7d"):
        assert traces(f"dropped-{marker}", server.data_dir) == [], marker


def test_off_sends_and_spools_nothing_with_the_server_up_or_down(
    shared: ServerProcess, tmp_path: Path
) -> None:
    server, project = shared, "p-off"
    checkout = policy_checkout(tmp_path / "client-repo", 'mode = "off"', project)
    s = "pol-off"
    payloads = [
        event(s, checkout, "SessionStart", source="startup"),
        event(s, checkout, "UserPromptSubmit", prompt="dropped-off-5e6f"),
        read_tool(s, checkout, "src/a.py", "dropped-off-read-7a8b"),
        event(s, checkout, "SessionEnd", reason="exit"),
    ]
    alone = tmp_path / "down-data"  # server down: a data dir of its own, for its spool
    down = hook_env(alone, "http://127.0.0.1:9", XDG_CONFIG_HOME=str(tmp_path / "x"))
    for env in (env_for(server, tmp_path / "xdg"), down):
        assert run_all(payloads, env, checkout) == [{}, {}, {}, {}]
    with server.client() as client:
        sessions = client.get("/api/v1/sessions", params={"project": project}).json()
    assert sessions["sessions"] == [] and observations(server.data_dir, project) == []
    assert not list(alone.rglob("*.json"))
    for marker in ("dropped-off-5e6f", "dropped-off-read-7a8b", "pol-off"):
        assert traces(marker, server.data_dir) == traces(marker, alone) == [], marker


def test_a_user_level_policy_applies_and_the_checkout_wins_key_by_key(
    data_dir: Path, tmp_path: Path
) -> None:
    """Server down: the spool holds exactly what would be sent."""
    user = tmp_path / "xdg" / "ai-memory" / "capture.toml"
    user.parent.mkdir(parents=True)
    user.write_text('[capture]\nmode = "off"\nexclude = [\n  "private/**",  # notes\n]\n')
    plain = make_checkout(tmp_path / "plain")  # no marker: the user's "off" holds
    full = policy_checkout(tmp_path / "full", 'mode = "full"')  # "full" wins, exclude stays
    env = hook_env(data_dir, "http://127.0.0.1:9", XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    run_all([event("u-1", plain, "UserPromptSubmit", prompt="dropped-user-off-4c3d")], env, plain)
    run_all(
        [
            event("u-2", full, "UserPromptSubmit", prompt="kept-prompt-9d8e"),
            read_tool("u-2", full, "private/plan.md", "dropped-private-2e1f"),
        ],
        env,
        full,
    )
    (spooled,) = (data_dir / "spool").glob("*.json")
    assert json.loads(spooled.read_text())["body"]["prompt"] == "kept-prompt-9d8e"
    for marker in ("dropped-user-off-4c3d", "dropped-private-2e1f"):
        assert traces(marker, data_dir) == [], marker


def test_a_malformed_policy_captures_nothing_and_says_why(data_dir: Path, tmp_path: Path) -> None:
    env = hook_env(data_dir, "http://127.0.0.1:9", XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    cases = {
        'mode = "everything"': "mode must be one of full, metadata, off",
        'exclude = ["secrets/[abc"]': "never closed",
        'exclude = "secrets/**"': "exclude must be an array",
        "exclude = [42]": "must be a string",
        'capture_assistant = "yes"': "capture_assistant must be true or false",
        'modes = "off"': "no key 'modes'",
        "mode = = 1": "not valid TOML",
        'mode = "full"\n[other]\nnote = "a" "b"': "not valid TOML",  # outside [capture] too
    }
    for index, (line, message) in enumerate(cases.items()):
        checkout = policy_checkout(tmp_path / f"bad{index}", line)
        payload = event(f"bad-{index}", checkout, "UserPromptSubmit", prompt="dropped-bad-8f7e")
        code, out, err = run_stderr(payload, env, checkout)
        assert (code, json.loads(out)) == (0, {}), line
        assert "capture policy not applied, nothing is captured" in err and message in err, err
        assert str(checkout / ".ai-memory.toml") in err
    assert not list((data_dir / "spool").glob("*.json"))
    assert traces("dropped-bad-8f7e", data_dir) == []


def test_the_ingest_lists_drop_events_before_storage_even_after_the_spool(
    shared: ServerProcess, tmp_path: Path
) -> None:
    """Spooled while the server is out of reach, then delivered: the server drops them still."""
    server, data_dir, project = shared, shared.data_dir, "p-ingest"
    checkout = policy_checkout(tmp_path / "shop", "capture_assistant = false", project)
    down = hook_env(data_dir, "http://127.0.0.1:9", XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    s = "ing-1"
    run_all(
        [
            event(s, checkout, "UserPromptSubmit", prompt="Look up the vault entry"),
            event(s, checkout, "Notification", message="dropped-notice-1a2b"),
            event(
                s,
                checkout,
                "PostToolUse",
                tool_name="mcp__vault__read",
                tool_input={"entry": "dropped-vault-3c4d"},
                tool_response="x",
            ),
            event(
                s,
                checkout,
                "PostToolUse",
                tool_name="Bash",
                tool_use_id="toolu_private_7",
                tool_input={"command": "echo dropped-private-5e6f"},
                tool_response="x",
            ),
        ],
        down,
        checkout,
    )
    assert len(_spooled(data_dir, s)) == 4
    run_all(
        [
            event(s, checkout, "PostToolUse", tool_name="webfetch", tool_input="dropped-web"),
            read_tool(s, checkout, "src/ok.py", "kept-ok-7a8b", tool_use_id="toolu_01"),
            event(s, checkout, "SessionEnd", reason="exit"),
        ],
        env_for(server, tmp_path / "xdg"),
        checkout,
    )
    page = session_page(server, s, project)
    assert _spooled(data_dir, s) == []  # every event was delivered
    stored = observations(data_dir, project)
    assert [(kind, tool) for kind, tool, _ in stored] == [
        ("user-prompt", None),
        ("post-tool-use", "Read"),
        ("session-end", None),
    ]
    assert "Look up the vault entry" in page and "src/ok.py" in page
    for marker in ("notice-1a2b", "vault-3c4d", "private-5e6f", "web"):
        assert traces(f"dropped-{marker}", data_dir) == [], marker


def test_a_bad_ingest_list_stops_the_server_at_start_up(data_dir: Path) -> None:
    """The other bad lists: tests/test_capture_policy_units.py, through Config.load."""
    env = clean_env(AI_MEMORY_INGEST__DROP_EVENTS='["SessionEnd"]')
    ran = run_cli("serve", "--bind", "127.0.0.1:9", data_dir=data_dir, env=env)
    assert ran.returncode != 0, ran.stdout
    assert "'SessionEnd' cannot be dropped" in ran.stderr.decode(), ran.stderr


def _spooled(data_dir: Path, session: str) -> list[Path]:
    needle = f'"session_id":"{session}"'
    return [p for p in (data_dir / "spool").glob("*.json") if needle in p.read_text()]


def test_a_secret_path_hidden_inside_a_shell_command_is_still_excluded(
    data_dir: Path, tmp_path: Path
) -> None:
    """Server down: the spool holds nothing of a command that names an excluded file, however
    the path is glued to the words around it or however long the command is."""
    checkout = policy_checkout(tmp_path / "vaulted", 'exclude = ["secrets/**", "*.env"]')
    env = hook_env(data_dir, "http://127.0.0.1:9", XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    commands = [
        "cat secrets/a.env;echo dropped-semicolon-1a2b",
        "grep --file=secrets/words.txt dropped-option-3c4d src",
        "python -c \"print(open('secrets/k').read())\" # dropped-quoted-5e6f",
        "echo " + " ".join(f"w{n}" for n in range(400)) + " && cat secrets/k # dropped-long-7a8b",
    ]
    shell = [
        event("sh-1", checkout, "PreToolUse", tool_name="Bash", tool_input={"command": command})
        for command in commands
    ]
    kept = event("sh-1", checkout, "UserPromptSubmit", prompt="kept-prompt-9c0d")
    run_all([*shell, kept], env, checkout)
    (spooled,) = (data_dir / "spool").glob("*.json")
    assert json.loads(spooled.read_text())["body"]["prompt"] == "kept-prompt-9c0d"
    for marker in ("semicolon-1a2b", "option-3c4d", "quoted-5e6f", "long-7a8b"):
        assert traces(f"dropped-{marker}", data_dir) == [], marker


def test_a_parent_folders_off_holds_until_a_checkout_turns_it_back_on(
    data_dir: Path, tmp_path: Path
) -> None:
    """Server down: a repository's own marker that does not speak of capture, or speaks of
    other keys, keeps the ``mode = "off"`` of the folder above; an explicit mode wins."""
    clients = tmp_path / "clients"
    clients.mkdir()
    (clients / ".ai-memory.toml").write_text('[capture]\nmode = "off"\n')
    named = policy_checkout(clients / "named", "", "named")
    other = policy_checkout(clients / "other", "capture_assistant = true", "other")
    on = policy_checkout(clients / "on", 'mode = "full"', "on")
    env = hook_env(data_dir, "http://127.0.0.1:9", XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    for checkout in (named, other, on):
        prompt = f"{checkout.name}-prompt-4d5e"
        run_all([event(checkout.name, checkout, "UserPromptSubmit", prompt=prompt)], env, checkout)
    (spooled,) = (data_dir / "spool").glob("*.json")
    assert json.loads(spooled.read_text())["body"]["prompt"] == "on-prompt-4d5e"
    for name in ("named", "other"):
        assert traces(f"{name}-prompt-4d5e", data_dir) == [], name
