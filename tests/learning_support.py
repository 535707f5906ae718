"""What the learning-loop tests share: a finished session, a scripted review answer,
and the settings that point the server's real provider at the fake LLM service."""

from __future__ import annotations

import time
from typing import Any

from tests.fake_llm import FakeLlm, Reply, answer


def llm_settings(fake: FakeLlm, **more: str) -> dict[str, str]:
    """``app_client`` settings: the real openai-compat provider, talking to ``fake``."""
    return {
        "llm__provider": "openai-compat",
        "llm__model": "m",
        "llm__base_url": fake.openai_url,
        **more,
    }


def llm_env(fake: FakeLlm, **more: str) -> dict[str, str]:
    """The same as environment variables, for a server subprocess."""
    return {f"AI_MEMORY_{k.upper()}": v for k, v in llm_settings(fake, **more).items()}


def review(*proposals: tuple[str, str]) -> Reply:
    """The provider's answer: ``(path, body)`` proposals, each with a rationale."""
    return answer(
        {
            "proposals": [
                {"path": path, "body": body, "rationale": f"learned from the session: {path}"}
                for path, body in proposals
            ]
        }
    )


def finish_session(client: Any, project: str, session_id: str, prompt: str) -> None:
    """A session that ran and ended through the real hook route, its page written."""
    hook = {"workspace": "default", "project": project, "agent": "claude-code"}
    hook["session_id"] = session_id
    events = [
        {"hook_event_name": "UserPromptSubmit", "prompt": prompt},
        {"hook_event_name": "Stop", "last_assistant_message": "Done: " + prompt},
        {"hook_event_name": "SessionEnd", "reason": "exit"},
    ]
    for event in events:
        assert client.post("/hook", params=hook, json=event).status_code == 202
    page = f"/api/v1/projects/default/{project}/pages/sessions/{session_id}.md"
    deadline = time.monotonic() + 30
    while client.get(page).status_code != 200:  # written after the 202
        assert time.monotonic() < deadline, "the session page was never written"
        time.sleep(0.05)


def page_url(project: str, path: str) -> str:
    return f"/api/v1/projects/default/{project}/pages/{path}"


def improve(client: Any, project: str, **body: Any) -> Any:
    return client.post("/api/v1/auto-improve", json={"project": project, **body})
