"""Redacting secrets in the hook client, before an event is spooled or sent.

Standard library only: the table of :mod:`ai_memory.hookclient.patterns` run with
:mod:`re`. Its patterns cannot backtrack without bound, and every string here
was already cut to 64 KiB (:mod:`ai_memory.hookclient.shrink`), so a hostile
payload costs milliseconds, not seconds. A pattern is compiled only when the
text holds one of its trigger words (``re`` keeps it for the run), so an
ordinary event compiles few of them. The server redacts again with RE2 and any
configured patterns: this pass keeps secrets out of the spool on disk.
"""

from __future__ import annotations

from ai_memory.hookclient.patterns import (
    REDACTED,
    SECRETS,
    SENSITIVE_KEY,
    SENSITIVE_KEY_TRIGGERS,
    kept_around,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable
    from typing import Any

    from ai_memory.hookclient.fastre import Patterns

MAX_DEPTH = 40


def redact(text: str, patterns: Patterns | None = None) -> str:
    """``text`` with every secret of the table replaced by ``[REDACTED]``.

    ``patterns`` compiles them (the hook client's cache); by default ``re`` does.
    """
    if len(text) < 8:
        return text
    lowered = text.lower()
    for secret in SECRETS:
        for word in secret.triggers:  # a plain loop: a generator per pattern costs more
            if word in lowered:
                break
        else:
            if secret.triggers:
                continue
        text = _compiled(secret.re_pattern or secret.pattern, patterns).sub(_replace, text)
    return text


def holds_secret(text: str, patterns: Patterns | None = None) -> bool:
    return redact(text, patterns) != text


def redact_payload(payload: dict[str, Any], patterns: Patterns | None = None) -> dict[str, Any]:
    """``payload`` with secrets redacted in every string, key and credential-named field."""
    value = redact_tree(payload, lambda text: redact(text, patterns), patterns=patterns)
    return value if isinstance(value, dict) else {}


def redact_tree(
    value: Any, text: Callable[[str], str], depth: int = 0, patterns: Patterns | None = None
) -> Any:
    """A JSON-like value with ``text`` applied to every string and key.

    A field named like a credential (``password``, ``api_key``…) loses its string value
    whatever it looks like; nesting deeper than 40 levels is dropped.
    """
    if isinstance(value, str):
        return text(value)
    if depth >= MAX_DEPTH:
        return None
    if isinstance(value, dict):
        return {
            text(str(k)): REDACTED
            if isinstance(v, str) and v and _sensitive(str(k), patterns)
            else redact_tree(v, text, depth + 1, patterns)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact_tree(v, text, depth + 1, patterns) for v in value]
    return value


def _compiled(pattern: str, patterns: Patterns | None) -> re.Pattern[str]:
    if patterns is not None:
        return patterns.get(pattern)
    import re

    return re.compile(pattern)


def _sensitive(key: str, patterns: Patterns | None = None) -> bool:
    lowered = key.lower()
    if not any(word in lowered for word in SENSITIVE_KEY_TRIGGERS):
        return False
    return _compiled(SENSITIVE_KEY, patterns).search(key[:200]) is not None


def _replace(match: re.Match[str]) -> str:
    index = match.re.groupindex
    secret = match.span(index["v"]) if "v" in index else None
    kept_end = max(match.end(index["k"]), match.start()) if "k" in index else match.start()
    return kept_around(match.group(), match.start(), secret, kept_end)
