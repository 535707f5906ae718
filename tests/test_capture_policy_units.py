"""The parts of the capture policy on their own: globs, the marker's [capture], the
paths a tool event names, what metadata keeps, and the [ingest] lists' checks."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from ai_memory.config import Config
from ai_memory.core.errors import ConfigError
from ai_memory.hookclient.globs import GlobError, compile_glob
from ai_memory.hookclient.pathnames import file_paths
from ai_memory.hookclient.plain_toml import values
from ai_memory.hookclient.policy import Policy, apply, load_policy, metadata, user_file
from ai_memory.hookclient.resolve import locate_checkout
from tests.capture_policy_support import observations
from tests.hooks_support import app_client

HOME = "/home/dev"


@pytest.mark.parametrize(
    ("pattern", "path", "matched"),
    [
        ("secrets/**", "secrets/a.env", True),
        ("secrets/**", "src/secrets.py", False),
        ("secrets", "secrets/deep/a.env", True),  # a folder: everything under it
        ("secrets/", "src/secrets/a.env", True),  # no inner '/': at any depth
        ("*.env", "config/prod.env", True),
        ("*.env", "config/prod.envy", False),
        ("**/*.pem", "a/b/key.pem", True),
        ("config/*.toml", "config/prod.toml", True),
        ("config/*.toml", "sub/config/prod.toml", False),  # an inner '/': anchored
        ("a/*/c", "a/b/d/c", False),
        ("key-[0-9]?.txt", "key-7x.txt", True),
        ("key-[!0-9]?.txt", "key-7x.txt", False),
        ("**", "anything/at/all", True),
    ],
)
def test_globs_match_paths_relative_to_their_base(pattern: str, path: str, matched: bool) -> None:
    assert compile_glob(pattern, HOME).matches(path, f"/repo/{path}") is matched


def test_absolute_globs_and_paths_outside_the_base() -> None:
    assert compile_glob("~/clients/**", HOME).matches(None, "/home/dev/clients/acme/a.py")
    assert compile_glob("/srv/vault", HOME).matches(None, "/srv/vault/k")
    assert compile_glob("*.env", HOME).matches(None, "/etc/app.env")
    assert not compile_glob("etc", HOME).matches(None, "/etc/app.env")  # only the file's name
    assert not compile_glob("secrets/**", HOME).matches(None, "/elsewhere/secrets/a")


@pytest.mark.parametrize("pattern", ["", "  ", "a/[bc", 3, None, "../up", "a\x00b"])
def test_bad_globs_are_refused_with_a_reason(pattern: object) -> None:
    with pytest.raises(GlobError):
        compile_glob(pattern, HOME)


@pytest.mark.parametrize(
    "text",
    [
        '[capture]\nmode = "metadata"\nexclude = ["a/**", \'*.pem\']\ncapture_assistant = true\n',
        '[capture]\nexclude = [\n  "a/**",  # the notes\n  # none\n  "b",\n]\nmode = "off"\n',
        'project = "p"\n[capture]\nexclude = []\n[other]\nlist = [\n "x",\n]\n',
        "[capture]\ncapture_assistant = false # no\n",
    ],
)
def test_the_plain_reader_agrees_with_tomllib(text: str) -> None:
    assert values(text, "capture") == tomllib.loads(text).get("capture", {})


@pytest.mark.parametrize(
    "text",
    [
        '[capture]\nexclude = ["a\\\\b"]\n',  # an escape
        "[capture]\nexclude = [1, 2]\n",
        '[capture]\nexclude = ["a"\n',  # never closed
        'capture.mode = "off"\n',
        'project = "a"\nproject = "b"\n[capture]\nmode = "full"\n',  # a key twice elsewhere
        '[other]\nx = "a" "b"\n[capture]\nmode = "full"\n',  # junk after a value elsewhere
        '[other]\nx = {y = 1}\n[capture]\nmode = "full"\n',
        '[capture]\nmode = "full"\n[capture.more]\nx = 1\n',  # a sub-table is a key of it
    ],
)
def test_the_plain_reader_defers_to_tomllib_when_unsure(text: str) -> None:
    assert values(text, "capture") is None


def test_the_nearest_marker_is_found_above_the_checkout_too(tmp_path: Path) -> None:
    clients = tmp_path / "clients"
    repo = clients / "acme" / "api"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text('[remote "origin"]\n\turl = git@h.com:acme/api.git\n')
    (clients / ".ai-memory.toml").write_text('[capture]\nmode = "off"\n')
    identity, marker = locate_checkout(repo / "src")
    assert identity.project == "acme-api" and identity.root == str(repo)
    assert marker == (str(clients), '[capture]\nmode = "off"\n')
    policy = load_policy(identity.root, marker, {"HOME": str(tmp_path)})
    assert policy.mode == "off" and policy.problem is None


def test_the_user_file_and_the_checkout_merge_key_by_key(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    assert user_file(env) == str(tmp_path / "cfg" / "ai-memory" / "capture.toml")
    assert (
        user_file({"HOME": "/h", "XDG_CONFIG_HOME": "rel"}) == "/h/.config/ai-memory/capture.toml"
    )
    Path(user_file(env)).parent.mkdir(parents=True)
    Path(user_file(env)).write_text('[capture]\nmode = "metadata"\nexclude = ["notes/**"]\n')
    marker = (str(tmp_path / "repo"), "[capture]\ncapture_assistant = false\n")
    policy = load_policy(str(tmp_path / "repo"), marker, env)
    assert (policy.mode, policy.capture_assistant) == ("metadata", False)
    assert [g.text for g in policy.exclude] == ["notes/**"] and policy.base == marker[0]
    default = load_policy(str(tmp_path / "repo"), None, {"HOME": str(tmp_path / "none")})
    assert (default.mode, default.capture_assistant, default.exclude) == ("full", True, ())


def test_tool_events_name_their_paths() -> None:
    patch = "*** Begin Patch\n*** Update File: src/a.py\n*** Add File: secrets/b.env\n"
    assert file_paths({"tool_input": {"command": patch}}, shell=False) == [
        "src/a.py",
        "secrets/b.env",
    ]
    assert file_paths({"file_path": "/r/x.py", "edits": []}, shell=False) == ["/r/x.py"]
    glob = {"tool_name": "Glob", "tool_input": {"pattern": "secrets/*", "path": "/r"}}
    assert file_paths(glob, shell=False) == ["/r", "secrets/*"]
    bash = {"tool_name": "Bash", "tool_input": {"command": "cat 'secrets/a.env' | wc"}}
    assert "secrets/a.env" in file_paths(bash, shell=True)
    assert file_paths(bash, shell=False) == []
    assert file_paths({"prompt": "read secrets/a.env", "input": "secrets/a.env"}, shell=True) == []


def test_metadata_keeps_names_ids_and_paths_only() -> None:
    payload = {
        "session_id": "s",
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_use_id": "toolu_1",
        "tool_input": {"file_path": "src/a.py", "old_string": "x", "new_string": "secret"},
        "tool_response": {"filePath": "src/a.py", "success": True},
        "prompt": "words",
        "transcript_path": "/t.jsonl",
        "model": "m" * 500,
    }
    assert metadata(payload) == {
        "session_id": "s",
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_use_id": "toolu_1",
        "model": "m" * 200,
        "tool_input": {"paths": ["src/a.py"]},
    }


def test_the_assistant_message_is_dropped_unless_wanted() -> None:
    stop = {"last_assistant_message": "a", "session_id": "s"}
    cursor = {"text": "answer", "conversation_id": "c"}
    prompt = {"text": "a prompt", "session_id": "s"}
    off = Policy(capture_assistant=False)
    assert apply(off, "Stop", stop, "/r") == {"session_id": "s"}
    assert apply(off, "afterAgentResponse", cursor, "/r") == {"conversation_id": "c"}
    assert apply(off, "AfterAgent", {"prompt_response": "p"}, "/r") == {}
    assert apply(off, "beforeSubmitPrompt", prompt, "/r") == prompt  # not an answer
    assert apply(Policy(), "Stop", stop, "/r") == stop  # kept by default


@pytest.mark.parametrize(
    ("lists", "message"),
    [
        ({"drop_events": ["session-start"]}, "'session-start' cannot be dropped"),
        ({"drop_events": ["SessionStart"]}, "'SessionStart' cannot be dropped"),
        ({"drop_events": ["post-tool"]}, "unknown event 'post-tool'"),
        ({"drop_events": "stop"}, "drop_events"),
        ({"drop_tool_names": [""]}, "not blank"),
        ({"drop_tool_use_id_prefixes": [7]}, "drop_tool_use_id_prefixes"),
        ({"drop_everything": True}, "drop_everything"),
    ],
)
def test_bad_ingest_lists_are_start_up_errors(
    tmp_path: Path, lists: dict[str, object], message: str
) -> None:
    (tmp_path / "config.toml").write_text(
        "[ingest]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in lists.items())
    )
    with pytest.raises(ConfigError) as raised:
        Config.load(tmp_path, {})
    assert message in str(raised.value) and "config.toml" in str(raised.value)


def test_ingest_lists_take_an_agents_own_event_names(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[ingest]\ndrop_events = ["PostToolUse", "stop"]\n')
    assert Config.load(tmp_path, {}).ingest.drop_events == ["post-tool-use", "stop"]


def test_the_batch_route_drops_listed_events_and_answers_each(data_dir: Path) -> None:
    settings = {"ingest__drop_tool_names": '["Bash"]', "ingest__drop_events": '["notification"]'}
    base = {"project": "policy", "session_id": "b-1", "agent": "claude-code"}
    items = [
        {"params": {**base, "event": "UserPromptSubmit"}, "body": {"prompt": "kept"}},
        {
            "params": {**base, "event": "PostToolUse"},
            "body": {"tool_name": "Bash", "tool_input": {"command": "dropped-batch-1"}},
        },
        {"params": {**base, "event": "Notification"}, "body": {"message": "dropped-batch-2"}},
        {"params": {**base, "agent": "bad agent!"}, "body": {}},
    ]
    with app_client(data_dir, **settings) as client:
        answer = _post(client, items)
        single = client.post(
            "/hook",
            params={**base, "event": "Notification"},
            json={"message": "dropped-batch-3"},
        )
    assert [r["status"] for r in answer["results"]] == [202, 202, 202, 400]
    assert single.status_code == 202
    assert [body for _, _, body in observations(data_dir)] == ["kept"]


def _post(client: TestClient, items: list[dict[str, object]]) -> dict[str, list[dict[str, int]]]:
    response = client.post("/hook/batch", json=items)
    assert response.status_code == 200, response.text
    result: dict[str, list[dict[str, int]]] = response.json()
    return result


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return str(value)


def test_a_long_patch_is_judged_by_its_headers_and_a_long_command_is_dropped() -> None:
    policy = Policy("full", (compile_glob("secrets/**", HOME),), "/repo")
    body = "".join(f"+line {n} of the new file\n" for n in range(5000))
    patch = f"*** Begin Patch\n*** Add File: src/big.py\n{body}*** End Patch"
    kept = {"tool_name": "apply_patch", "tool_input": {"command": patch}}
    assert apply(policy, "PostToolUse", kept, "/repo") == kept
    secret = patch.replace("src/big.py", "secrets/big.py")
    assert apply(policy, "PostToolUse", {"tool_input": {"command": secret}}, "/repo") is None
    then = {"tool_input": {"command": f"apply_patch <<'E'\n{patch}\nE\ncat secrets/k"}}
    assert apply(policy, "PostToolUse", then, "/repo") is None
    long = {"tool_name": "Bash", "tool_input": {"command": "echo " + "x" * 70000}}
    assert apply(policy, "PostToolUse", long, "/repo") is None  # too long to check whole
    assert apply(Policy(), "PostToolUse", long, "/repo") == long  # no exclude: kept
