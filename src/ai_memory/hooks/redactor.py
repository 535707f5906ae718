"""The server's secret redaction: the shared pattern table, run with RE2.

RE2 matches in time linear in the input, whatever the pattern and the text, so
no captured field can stall the server (Python's ``re`` took seconds to minutes
on inputs like ``"token" * 13107``). Configured ``hooks.redact_patterns`` are
compiled with RE2 as well and refused with a :class:`ConfigError` when RE2
cannot run them (look-arounds, back-references).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import re2

from ai_memory.core.errors import ConfigError
from ai_memory.hookclient.patterns import SECRETS, kept_around

# RE2 reads UTF-8, which cannot hold a lone surrogate (JSON's "\\ud800" can spell one).
_SURROGATE = re.compile("[\ud800-\udfff]")


def without_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, so any string can be scanned."""
    return _SURROGATE.sub("\ufffd", text) if not text.isascii() else text


class _Pass:
    """One compiled pattern and the words one of which its matches always hold."""

    __slots__ = ("keep", "regex", "secret", "triggers")

    def __init__(self, pattern: str, triggers: tuple[str, ...], options: Any) -> None:
        self.regex = re2.compile(pattern, options)
        groups: dict[str, int] = self.regex.groupindex
        self.triggers = triggers
        self.secret = groups.get("v")
        self.keep = groups.get("k")

    def apply(self, text: str, lowered: str) -> str:
        if self.triggers and not any(word in lowered for word in self.triggers):
            return text
        result: str = self.regex.sub(self._replace, text)
        return result

    def _replace(self, match: Any) -> str:
        start: int = match.start()
        secret = match.span(self.secret) if self.secret is not None else None
        kept_end = max(match.end(self.keep), start) if self.keep is not None else start
        replaced: str = kept_around(match.group(), start, secret, kept_end)
        return replaced


class Redactor:
    """Every built-in pattern, then the configured ones, each its own linear pass."""

    def __init__(self, extra_patterns: Sequence[str] = ()) -> None:
        options = re2.Options()
        options.log_errors = False
        options.dot_nl = True  # configured patterns have always matched across lines
        passes = [_Pass(s.pattern, s.triggers, options) for s in SECRETS]
        for pattern in extra_patterns:
            try:
                passes.append(_Pass(pattern, (), options))
            except re2.error as exc:
                raise ConfigError(
                    f"hooks.redact_patterns: {pattern!r} is not a valid RE2 pattern "
                    f"({_reason(exc)}); RE2 has no look-arounds or back-references, "
                    "so use a named group 'v' for the part to redact instead"
                ) from None
        self._passes = tuple(passes)

    def redact(self, text: str) -> str:
        """``text`` with every secret replaced by ``[REDACTED]``; linear in its length."""
        if not text:
            return text
        text = without_surrogates(text)
        lowered = text.lower()
        for one in self._passes:
            text = one.apply(text, lowered)
        return text

    def holds_secret(self, text: str) -> bool:
        """Whether redaction would change ``text`` (a lone surrogate is not a secret)."""
        text = without_surrogates(text)
        return self.redact(text) != text


def _reason(exc: Exception) -> str:
    detail = exc.args[0] if exc.args else exc
    if isinstance(detail, bytes):
        return detail.decode("utf-8", errors="replace")
    return str(detail)
