"""The capture policy: what of a checkout's events may leave the hook client at all.

Read from the ``[capture]`` tables of the user-level
``$XDG_CONFIG_HOME/ai-memory/capture.toml`` (``~/.config/…`` when unset) and of
every ``.ai-memory.toml`` at or above the checkout; the nearer file wins key by
key. It is applied before anything is spooled, so a dropped event is never
written anywhere, server up or down:

* ``mode = "off"``: nothing is sent or spooled, not even session start or end;
* ``mode = "metadata"``: events keep only :data:`METADATA_KEYS` (event, session,
  cwd, tool name and id, exit status…) and the file paths a tool named; no
  prompt, tool input or output, or message text;
* ``exclude``: globs (:mod:`~ai_memory.hookclient.globs`) for file paths; a tool
  event naming a matching path is dropped whole;
* ``capture_assistant`` (default true): the assistant's final message is kept
  only when true; its "next steps" are what a handoff carries forward.

A policy that cannot be read (a bad mode, a bad glob, a wrong type, a marker
that is not TOML) fails closed: nothing is captured for the checkout, and the
run says why on stderr (the agent is never blocked).

Standard library only: imported on every agent event.
"""

from __future__ import annotations

from ai_memory.hookclient import fs
from ai_memory.hookclient.resolve import MARKER, marker_values, read_text

TYPE_CHECKING = False
if TYPE_CHECKING:  # ``typing`` is slow to import: annotations only
    from collections.abc import Mapping
    from typing import Any

    from ai_memory.hookclient.globs import Glob

MODES = ("full", "metadata", "off")
KEYS = frozenset({"mode", "exclude", "capture_assistant"})
USER_FILE = ("ai-memory", "capture.toml")
# What a metadata-only event keeps: names, ids and statuses, never text someone wrote.
METADATA_KEYS = frozenset(
    {
        "hook_event_name",
        "hookEventName",
        "session_id",
        "sessionId",
        "conversation_id",
        "conversationId",
        "cwd",
        "workspace_roots",
        "tool_name",
        "toolName",
        "tool",
        "tool_use_id",
        "toolUseId",
        "source",
        "reason",
        "exit_code",
        "exitCode",
        "success",
        "agent_id",
        "agentId",
        "agent_type",
        "agentType",
        "model",
        "turn_id",
        "permission_mode",
        "stop_hook_active",
        "timestamp",
    }
)
METADATA_TEXT = 200
# The assistant's own words: always under these names, and under ``text`` or
# ``response`` in the events that end a turn.
ASSISTANT_KEYS = ("last_assistant_message", "lastAssistantMessage", "assistant_message")
TURN_END_KEYS = ("prompt_response", "response", "text")
TURN_END_EVENTS = frozenset(
    {"stop", "subagentstop", "afteragent", "afteragentresponse", "sessionidle"}
)


class Policy:
    """The effective policy for one checkout; ``problem`` says why it failed closed."""

    __slots__ = ("base", "capture_assistant", "exclude", "mode", "problem")

    def __init__(
        self,
        mode: str = "full",
        exclude: tuple[Glob, ...] = (),
        base: str = "/",
        capture_assistant: bool = True,
        problem: str | None = None,
    ) -> None:
        self.mode = mode
        self.exclude = exclude
        self.base = base
        self.capture_assistant = capture_assistant
        self.problem = problem


def user_file(env: Mapping[str, str]) -> str:
    """``$XDG_CONFIG_HOME/ai-memory/capture.toml``, else ``~/.config/ai-memory/capture.toml``."""
    config = env.get("XDG_CONFIG_HOME") or ""
    if not fs.isabs(config):
        config = fs.join(env.get("HOME") or fs.expanduser("~"), ".config")
    return fs.join(config, *USER_FILE)


def load_policy(root: str, marker: tuple[str, str | None] | None, env: Mapping[str, str]) -> Policy:
    """The checkout's policy: the markers' ``[capture]`` over the user-level one, key by key.

    ``root`` is the checkout's root (the base of the user file's relative globs),
    ``marker`` the nearest marker's folder and text; the markers above it count too,
    the nearer one winning, so a repository's own marker keeps a parent folder's
    ``mode = "off"`` unless it sets a mode itself.
    """
    home = env.get("HOME") or fs.expanduser("~")
    layers: list[tuple[str, str, dict[str, object]]] = []
    user = user_file(env)
    for where, base, text in ((user, root, read_text(user)), *_marker_layers(marker)):
        if text is None:
            if where and fs.exists(where):  # there, but unreadable: fail closed
                return Policy("off", problem=f"{where} cannot be read")
            continue
        table = marker_values(text, "capture")
        if table is None:
            return Policy("off", problem=f"{where} is not valid TOML")
        layers.append((where, base, table))
    try:
        return _merge(layers, home)
    except ValueError as exc:  # a GlobError too
        return Policy("off", problem=str(exc))


def _marker_layers(marker: tuple[str, str | None] | None) -> list[tuple[str, str, str | None]]:
    """``(file, folder, text)`` of the nearest marker and of every one above it, outermost first."""
    if marker is None:
        return []
    folder, text = marker
    layers = [(fs.join(folder, MARKER), folder, text)]
    directory, parent = folder, fs.dirname(folder)
    while parent != directory:
        directory, parent = parent, fs.dirname(parent)
        path = fs.join(directory, MARKER)
        if fs.isfile(path):
            layers.append((path, directory, read_text(path)))
    return layers[::-1]


def _merge(layers: list[tuple[str, str, dict[str, object]]], home: str) -> Policy:
    policy = Policy()
    for where, base, table in layers:
        unknown = sorted(set(table) - KEYS)
        if unknown:
            raise ValueError(f"{where}: [capture] has no key {unknown[0]!r}")
        mode = table.get("mode", policy.mode)
        if mode not in MODES:
            raise ValueError(f"{where}: [capture] mode must be one of {', '.join(MODES)}")
        assistant = table.get("capture_assistant", policy.capture_assistant)
        if not isinstance(assistant, bool):
            raise ValueError(f"{where}: [capture] capture_assistant must be true or false")
        if "exclude" in table:
            from ai_memory.hookclient.globs import GlobError, compile_glob

            patterns = table["exclude"]
            if not isinstance(patterns, list):
                raise ValueError(f"{where}: [capture] exclude must be an array of globs")
            try:
                policy.exclude = tuple(compile_glob(item, home) for item in patterns)
            except GlobError as exc:
                raise ValueError(f"{where}: {exc}") from None
            policy.base = base
        policy.mode, policy.capture_assistant = str(mode), assistant
    return policy


def apply(policy: Policy, event: str, payload: dict[str, Any], cwd: str) -> dict[str, Any] | None:
    """The payload as the policy lets it leave; None when the event is dropped whole."""
    if policy.mode == "off":
        return None
    if policy.exclude:  # the path and glob code is imported only for a policy that needs it
        from ai_memory.hookclient.pathnames import file_paths

        paths = file_paths(payload, shell=True)
        if paths is None or (paths and _excluded(policy, paths, cwd)):
            return None  # None: too long to check whole, so it may name one
    if not policy.capture_assistant:
        payload = _without_assistant(payload, event)
    if policy.mode == "metadata":
        payload = metadata(payload)
    return payload


def metadata(payload: Mapping[str, Any]) -> dict[str, Any]:
    """What a metadata-only event keeps: short scalar fields, and the file paths named."""
    from ai_memory.hookclient.pathnames import file_paths

    kept: dict[str, Any] = {}
    for key, value in payload.items():
        if key not in METADATA_KEYS:
            continue
        if isinstance(value, bool | int | float) or value is None:
            kept[key] = value
        elif isinstance(value, str):
            kept[key] = value[:METADATA_TEXT]
        elif key == "workspace_roots" and isinstance(value, list):
            kept[key] = [root for root in value if isinstance(root, str)][:8]
    paths = file_paths(payload, shell=False)
    if paths:
        kept["tool_input"] = {"paths": paths}
    return kept


def _excluded(policy: Policy, paths: list[str], cwd: str) -> bool:
    base = fs.normpath(policy.base)
    for path in paths:
        absolute = fs.normpath(fs.join(cwd, fs.expanduser(path)))
        relative: str | None = None
        if absolute == base:
            relative = ""
        elif absolute.startswith(base.rstrip("/") + "/"):
            relative = absolute[len(base.rstrip("/")) + 1 :]
        if any(glob.matches(relative, absolute) for glob in policy.exclude):
            return True
    return False


def _without_assistant(payload: dict[str, Any], event: str) -> dict[str, Any]:
    folded = event.casefold().replace("_", "").replace("-", "").replace(".", "")
    dropped = ASSISTANT_KEYS + (TURN_END_KEYS if folded in TURN_END_EVENTS else ())
    if not any(key in payload for key in dropped):
        return payload
    return {key: value for key, value in payload.items() if key not in dropped}
