"""Which agents' stores there are, and every past session in them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from ai_memory.importers import claude_code, codex, gemini, opencode
from ai_memory.importers.model import Transcript, Unreadable

Reader = Callable[[Path, Mapping[str, str]], Iterator[Transcript | Unreadable]]
READERS: Mapping[str, Reader] = {
    claude_code.AGENT: claude_code.transcripts,
    codex.AGENT: codex.transcripts,
    gemini.AGENT: gemini.transcripts,
    opencode.AGENT: opencode.transcripts,
}
ALIASES = {"claude": claude_code.AGENT, "gemini-cli": gemini.AGENT, "codex-cli": codex.AGENT}


def agent_names(given: Iterable[str]) -> list[str]:
    """The agents named (aliases accepted), checked; none named means every agent."""
    names: list[str] = []
    for name in given:
        agent = ALIASES.get(name.strip().lower(), name.strip().lower())
        if agent not in READERS:
            known = ", ".join(READERS)
            raise ValueError(f"unknown agent {name!r}: backfill reads {known}")
        if agent not in names:
            names.append(agent)
    return names or list(READERS)


def find(
    home: Path, env: Mapping[str, str], agents: Iterable[str]
) -> Iterator[Transcript | Unreadable]:
    """Every session each of ``agents`` kept under ``home``, read from disk, never written."""
    for agent in agents:
        yield from READERS[agent](home, env)
