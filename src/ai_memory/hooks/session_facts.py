"""Facts read out of captured text with no model: commands and their outcome, commits,
decisions, open questions and next steps.

Everything is extractive (sentences as they were written) and bounded, so a page
says only what the session said, and a long session cannot make it huge.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

MAX_FACTS = 8
SENTENCE_CHARS = 300
# A tool observation's body: "<tool>: <input>\n-> <result>\n!! <error>".
_RESULT = "\n-> "
_ERROR = "\n!! "
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d{1,2}[.)])\s+(.+)$")
_DECISION = re.compile(
    r"\b(?:decided|decide to|decision|we(?:'ll| will) (?:go with|use|keep)|going with|"
    r"let'?s (?:go with|use|keep|stick with)|chose|chosen|opted|settled on|instead of|"
    r"rather than)\b",
    re.IGNORECASE,
)
_QUESTION_CUE = re.compile(
    r"\b(?:open question|unresolved|not sure|unclear|tbd|to be decided|undecided|"
    r"still need to decide|needs? a decision)\b",
    re.IGNORECASE,
)
_NEXT_CUE = re.compile(
    r"\b(?:next steps?|todo|to do|remaining|left to do|still needs?|still to|follow[- ]up|"
    r"not yet|afterwards|for later|later we|should also|then we)\b",
    re.IGNORECASE,
)
_NEXT_HEADING = re.compile(r"^\s*(?:#+\s*)?(?:\*\*)?(?:next steps?|todo|remaining)\b", re.I)
_EXIT_LINE = re.compile(r"exit code:? -?\d+", re.IGNORECASE)
_COMMIT_OUT = re.compile(r"^\[([^\]\s]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\] (.+)$", re.M)
_COMMIT_MSG = re.compile(r"""(?:-m|--message)[= ]\s*(?:"([^"]{1,300})"|'([^']{1,300})')""")
_TEST_SUMMARY = re.compile(
    r"(?:\b\d+ (?:passed|failed|errors?|skipped)\b.*|^Tests?:.*|^test result:.*|"
    r"^(?:FAIL|ok)\s+\S+.*|^Ran \d+ tests?.*|^FAILED.*|^OK\b.*)",
    re.IGNORECASE | re.MULTILINE,
)


@dataclass(frozen=True, slots=True)
class Command:
    """One command a session ran, and how it came out."""

    tool: str
    text: str
    outcome: str
    failed: bool
    exit_code: int | None


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str | None
    message: str


def split_tool_body(body: str, tool: str | None) -> tuple[str, str, str]:
    """The input, the result and the error of a tool observation's body."""
    head = f"{tool or 'tool'}: "
    text = body[len(head) :] if body.startswith(head) else body
    error = ""
    if _ERROR in text:
        text, error = text.split(_ERROR, 1)
    result = ""
    if _RESULT in text:
        text, result = text.split(_RESULT, 1)
    return text.strip(), result.strip(), error.strip()


def command_of(
    tool: str, body: str, failed: bool, exit_code: int | None
) -> tuple[Command, Commit | None]:
    """The command a run-tool observation holds, its outcome, and the commit it made."""
    text, result, error = split_tool_body(body, tool)
    failed = failed or (exit_code is not None and exit_code != 0)
    outcome = _outcome(result, error, failed, exit_code)
    commit = _commit(text, result) if "git" in text and "commit" in text else None
    return Command(tool, text, outcome, failed, exit_code), commit


def _outcome(result: str, error: str, failed: bool, exit_code: int | None) -> str:
    tests = [m.group(0).strip() for m in _TEST_SUMMARY.finditer(result or error)]
    detail = tests[-1] if tests else _last_line(error) or _last_line(result)
    if failed:
        status = f"failed (exit {exit_code})" if exit_code is not None else "failed"
    else:
        status = "ok" if exit_code in (None, 0) else f"exit {exit_code}"
    return f"{status}: {detail[:200]}" if detail else status


def _last_line(text: str) -> str:
    lines = without_exit_line(text).splitlines()
    return lines[-1].strip() if lines else ""


def without_exit_line(text: str) -> str:
    """The text with its "Exit code N" lines (the agent's own note) left out."""
    lines = [line for line in text.splitlines() if line.strip()]
    return "\n".join(line for line in lines if not _EXIT_LINE.fullmatch(line.strip()))


def _commit(command: str, result: str) -> Commit | None:
    found = _COMMIT_OUT.search(result)
    if found:
        return Commit(found.group(2), found.group(3).strip())
    message = _COMMIT_MSG.search(command)
    if message:
        return Commit(None, (message.group(1) or message.group(2)).strip())
    return None


def sentences(text: str) -> list[str]:
    """The sentences and list items of ``text``, each on one line."""
    found: list[str] = []
    for line in text.splitlines():
        bullet = _BULLET.match(line)
        if bullet:
            found.append(bullet.group(1).strip())
            continue
        found += [part.strip() for part in _SENTENCE_END.split(line) if part.strip()]
    return [" ".join(s.split())[:SENTENCE_CHARS] for s in found if len(s) > 3]


def decisions(texts: list[str]) -> list[str]:
    return _pick(texts, lambda s: bool(_DECISION.search(s)) and not s.endswith("?"))


def open_questions(prompts: list[str], answers: list[str]) -> list[str]:
    """Questions the assistant asked back, and anything either side called unresolved."""
    asked = _pick(answers, lambda s: s.endswith("?") or bool(_QUESTION_CUE.search(s)))
    stated = _pick(prompts, lambda s: bool(_QUESTION_CUE.search(s)))
    return _dedupe(asked + stated)[:MAX_FACTS]


def next_steps(answers: list[str], prompts: list[str]) -> list[str]:
    """What is left: the items under the latest "Next steps" line an answer wrote, else cue
    sentences ("still needs", "later", "TODO") of the last answer and the last prompt."""
    for answer in reversed(answers):
        under = _items_under_heading(answer)
        if under:
            return under[:MAX_FACTS]
    texts = [answers[-1]] if answers else []
    texts += prompts[-1:]
    return _pick(texts, lambda s: bool(_NEXT_CUE.search(s)) and not s.endswith("?"))


def _items_under_heading(text: str) -> list[str]:
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if not _NEXT_HEADING.match(line):
            continue
        under: list[str] = []
        for item in lines[index + 1 :]:
            bullet = _BULLET.match(item)
            if bullet:
                under.append(" ".join(bullet.group(1).split())[:SENTENCE_CHARS])
            elif item.strip() and under:
                break
        if under:
            return under
    return []


def _pick(texts: list[str], wanted: Callable[[str], bool]) -> list[str]:
    found: list[str] = []
    for text in texts:
        for sentence in sentences(text[:20_000]):
            if wanted(sentence):
                found.append(sentence)
    return _dedupe(found)[:MAX_FACTS]


def _dedupe(items: list[str]) -> list[str]:
    seen: dict[str, str] = {}
    for item in items:
        seen.setdefault(item.casefold(), item)
    return list(seen.values())
