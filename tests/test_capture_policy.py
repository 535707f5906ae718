"""Capture policy through the real hook command: what it drops is nowhere on disk.

Each test runs ``python -I -S …/agent_entry.py hook`` as agents do, against a
real server (or none), then greps the spool, the logs, the SQLite file and its
WAL, the wiki and its ``git log -p`` for a marker only the dropped content held.
"""

from __future__ import annotations

import json
from pathlib import Path

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


def test_excluded_paths_and_the_assistant_message_leave_no_trace(
    server: ServerProcess, tmp_path: Path
) -> None:
    checkout = policy_checkout(tmp_path / "shop", 'exclude = ["secrets/**", "*.pem"]')
    env = env_for(server, tmp_path / "xdg")
    s = "pol-1"
    run_all(
        [
            event(s, checkout, "SessionStart", source="startup"),
            event(s, checkout, "UserPromptSubmit", prompt="Wire the payment client"),
            read_tool(s, checkout, "secrets/a.env", "API_PASSWORD=dropped-env-7f3a"),
            read_tool(s, checkout, str(checkout / "certs/key.pem"), "dropped-pem-51c2"),
            event(
                s,
                checkout,
                "PreToolUse",
                tool_name="Bash",
                tool_input={"command": "cat secrets/a.env  # dropped-shell-9e0d"},
            ),
            read_tool(s, checkout, "src/pay.py", "def pay(): kept-read-4b81"),
            event(s, checkout, "Stop", last_assistant_message="Wired it. dropped-answer-c3d7"),
            event(s, checkout, "SessionEnd", reason="exit"),
        ],
        env,
        checkout,
    )
    page = session_page(server, s)
    assert "Wire the payment client" in page and "src/pay.py" in page
    assert [o[2] for o in observations(server.data_dir) if "kept-read-4b81" in o[2]]
    for marker in ("dropped-env-7f3a", "dropped-pem-51c2", "dropped-shell-9e0d"):
        assert traces(marker, server.data_dir) == [], marker
    assert traces("dropped-answer-c3d7", server.data_dir) == []
    assert traces("kept-read-4b81", server.data_dir)  # the grep does find what is kept
    # The next agent still gets a handoff, from the prompt and the tool work (read through
    # the API: the hook's own fetch has a deadline a loaded machine can miss).
    with server.client() as client:
        handoffs = client.get("/api/v1/handoffs", params={"project": "policy"}).json()
    (handoff,) = handoffs["handoffs"]
    assert "Wire the payment client" in json.dumps(handoff) and "dropped-" not in json.dumps(
        handoff
    )


def test_capture_assistant_on_keeps_the_final_message(
    server: ServerProcess, tmp_path: Path
) -> None:
    checkout = policy_checkout(tmp_path / "shop", "capture_assistant = true")
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
    assert "kept-answer-0a9c" in session_page(server, s)


def test_metadata_mode_keeps_the_events_without_their_text(
    server: ServerProcess, tmp_path: Path
) -> None:
    checkout = policy_checkout(tmp_path / "shop", 'mode = "metadata"\ncapture_assistant = true')
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
    page = session_page(server, s)
    kinds = [(kind, tool) for kind, tool, _ in observations(server.data_dir)]
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
    server: ServerProcess, tmp_path: Path
) -> None:
    checkout = policy_checkout(tmp_path / "client-repo", 'mode = "off"')
    s = "pol-off"
    payloads = [
        event(s, checkout, "SessionStart", source="startup"),
        event(s, checkout, "UserPromptSubmit", prompt="dropped-off-5e6f"),
        read_tool(s, checkout, "src/a.py", "dropped-off-read-7a8b"),
        event(s, checkout, "SessionEnd", reason="exit"),
    ]
    down = hook_env(server.data_dir, "http://127.0.0.1:9", XDG_CONFIG_HOME=str(tmp_path / "x"))
    for env in (env_for(server, tmp_path / "xdg"), down):
        assert run_all(payloads, env, checkout) == [{}, {}, {}, {}]
    with server.client() as client:
        sessions = client.get("/api/v1/sessions", params={"project": "policy"}).json()
    assert sessions["sessions"] == [] and observations(server.data_dir) == []
    assert not list((server.data_dir / "spool").glob("*.json"))
    for marker in ("dropped-off-5e6f", "dropped-off-read-7a8b", "pol-off"):
        assert traces(marker, server.data_dir) == [], marker


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


INGEST = {
    "AI_MEMORY_INGEST__DROP_EVENTS": '["Notification"]',
    "AI_MEMORY_INGEST__DROP_TOOL_NAMES": '["mcp__vault__*", "WebFetch"]',
    "AI_MEMORY_INGEST__DROP_TOOL_USE_ID_PREFIXES": '["toolu_private_"]',
}


def test_the_ingest_lists_drop_events_before_storage_even_after_the_spool(
    data_dir: Path, tmp_path: Path
) -> None:
    """Spooled while the server is down, then delivered: the server drops them still."""
    checkout = policy_checkout(tmp_path / "shop", "capture_assistant = false")
    server = ServerProcess(data_dir, env=clean_env(**INGEST))
    down = hook_env(data_dir, server.url, XDG_CONFIG_HOME=str(tmp_path / "xdg"))
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
                tool_input={"key": "dropped-vault-3c4d"},
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
    assert len(list((data_dir / "spool").glob("*.json"))) == 4
    server.start()
    try:
        env = hook_env(data_dir, server.url, XDG_CONFIG_HOME=str(tmp_path / "xdg"))
        run_all(
            [
                event(s, checkout, "PostToolUse", tool_name="webfetch", tool_input="dropped-web"),
                read_tool(s, checkout, "src/ok.py", "kept-ok-7a8b", tool_use_id="toolu_01"),
                event(s, checkout, "SessionEnd", reason="exit"),
            ],
            env,
            checkout,
        )
        page = session_page(server, s)
    finally:
        server.stop()
    assert not list((data_dir / "spool").glob("*.json"))  # every event was delivered
    stored = observations(data_dir)
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
