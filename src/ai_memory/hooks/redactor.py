"""The server's secret redaction: the shared pattern table, run with RE2.

RE2 matches in time linear in the input, whatever the pattern and the text, so
no captured field can stall the server (Python's ``re`` took seconds to minutes
on inputs like ``"token" * 13107``). Configured ``hooks.redact_patterns`` are
compiled with RE2 as well and refused with a :class:`ConfigError` when RE2
cannot run them (look-arounds, back-references).

Every pattern is also in one ``re2.Set``: one linear scan of a field says which
patterns match anywhere in it, so ordinary text (most of it, matching none)
costs one pass instead of one per pattern. The patterns that match then run in
table order exactly as before, each on what the previous one left; after each
one that changed the text the set is asked again, so the result is the same as
running every pattern in turn.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import re2

from ai_memory.core.errors import ConfigError
from ai_memory.hookclient.patterns import REDACTED, SECRETS, kept_around

# RE2 reads UTF-8, which cannot hold a lone surrogate (JSON's "\\ud800" can spell one).
_SURROGATE = re.compile("[\ud800-\udfff]")
# Room for the combined automaton; RE2 allocates its states only as a scan needs them.
_SET_MEMORY = 64 << 20
# Short texts found clean are remembered (agent names, event names, session ids and
# paths recur on every event); nothing holding a secret is ever kept.
_REMEMBERED_CHARS = 256
_REMEMBERED_TEXTS = 4096
# Matches of one pattern replaced in one text; past them the whole text goes. Each
# replacement is a Python call (~10 us): a 64 KiB field of "token=v1 token=v2 …" took
# 50 ms, a batch of such fields seconds of CPU. Redacting more is the safe side, and
# all of it: a cut inside the text could split a secret another pattern needs whole
# (a URL's password ends at its "@").
MAX_MATCHES = 200
REDACTED_WHOLE = f"{REDACTED} (over {MAX_MATCHES} secrets of one kind in this text)"


def without_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, so any string can be scanned."""
    return _SURROGATE.sub("\ufffd", text) if not text.isascii() else text


class NeedsRedaction(Exception):
    """Raised by :meth:`Redactor.unchanged`: some pattern matches, so the text needs a full pass."""


class _Pass:
    """One compiled pattern and the words one of which its matches always hold."""

    __slots__ = ("keep", "pattern", "regex", "secret", "triggers")

    def __init__(self, pattern: str, triggers: tuple[str, ...], options: Any) -> None:
        self.pattern = pattern
        self.regex = re2.compile(pattern, options)
        groups: dict[str, int] = self.regex.groupindex
        self.triggers = triggers
        self.secret = groups.get("v")
        self.keep = groups.get("k")

    def apply(self, text: str, lowered: str) -> str:
        if self.triggers and not any(word in lowered for word in self.triggers):
            return text
        ends: list[int] = []

        def replace(match: Any) -> str:
            ends.append(match.end())
            return self._replace(match)

        result: str = self.regex.sub(replace, text, count=MAX_MATCHES)
        if len(ends) < MAX_MATCHES or self.regex.search(text, ends[-1]) is None:
            return result
        return REDACTED_WHOLE

    def _replace(self, match: Any) -> str:
        start: int = match.start()
        secret = match.span(self.secret) if self.secret is not None else None
        kept_end = max(match.end(self.keep), start) if self.keep is not None else start
        replaced: str = kept_around(match.group(), start, secret, kept_end)
        return replaced


class _Scan:
    """Every pattern in one RE2 set: which of them match somewhere in a text, in one pass.

    RE2 answers "no match" when its automaton runs out of memory; a last, empty pattern
    matches every text, so an answer without it means the scan failed, not that nothing
    matched (``None``: the caller then runs every pattern).
    """

    def __init__(self, patterns: Sequence[str], options: Any) -> None:
        """Raise ``re2.error`` when the set does not fit ``options.max_mem``."""
        self._set = re2.Set.SearchSet(options)
        for pattern in patterns:
            self._set.Add(pattern)
        self._sentinel = self._set.Add("")
        self._alone = [self._sentinel]
        self._set.Compile()

    def hits(self, text: str) -> set[int] | None:
        found = self._set.Match(text.encode())  # as bytes: RE2 reads UTF-8
        if found == self._alone:  # most text: nothing but the sentinel
            return set()
        if not found or self._sentinel not in found:
            return None
        found.remove(self._sentinel)
        return set(found)


class Redactor:
    """Every built-in pattern, then the configured ones, each as if in its own linear pass."""

    def __init__(
        self, extra_patterns: Sequence[str] = (), *, scan_memory: int = _SET_MEMORY
    ) -> None:
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
        self._clean: set[str] = set()
        options.max_mem = scan_memory
        try:
            self._scan: _Scan | None = _Scan([one.pattern for one in passes], options)
        except re2.error:
            self._scan = None  # every field then takes one pass per pattern

    def redact(self, text: str) -> str:
        """``text`` with every secret replaced by ``[REDACTED]``; linear in its length."""
        if not text or text in self._clean:
            return text
        given = text
        if not text.isascii():
            text = without_surrogates(text)
        hits = self._scan.hits(text) if self._scan is not None else None
        if hits is None:
            return self._each_from(0, text, text.lower())
        if not hits:
            self._remember(given, text)
            return text
        lowered = text.lower()  # triggers are looked for in the text as it came
        pending = sorted(hits)
        while pending:
            index = pending.pop(0)
            changed = self._passes[index].apply(text, lowered)
            if changed == text:
                continue
            text = changed
            hits = self._scan.hits(text) if self._scan is not None else None
            if hits is None:
                return self._each_from(index + 1, text, lowered)
            pending = sorted(i for i in hits if i > index)
        return text

    def unchanged(self, text: str) -> str:
        """``text`` (lone surrogates settled) when no pattern matches anywhere in it; else
        raise :class:`NeedsRedaction`. One scan, no per-match work: cheap enough to run
        where a request arrives, leaving text that holds a match to a worker thread."""
        if not text or text in self._clean:
            return text
        given = text
        text = without_surrogates(text)
        if self._scan is None or self._scan.hits(text) != set():
            raise NeedsRedaction
        self._remember(given, text)
        return text

    def redact_each(self, text: str) -> str:
        """The same result as :meth:`redact`, one pass per pattern (the reference it keeps to)."""
        if not text:
            return text
        text = without_surrogates(text)
        return self._each_from(0, text, text.lower())

    def holds_secret(self, text: str) -> bool:
        """Whether redaction would change ``text`` (a lone surrogate is not a secret)."""
        text = without_surrogates(text)
        return self.redact(text) != text

    def _remember(self, given: str, clean: str) -> None:
        """Keep ``given`` as clean if it is short and redaction returns it unchanged."""
        if given is clean and len(given) <= _REMEMBERED_CHARS:
            if len(self._clean) >= _REMEMBERED_TEXTS:
                self._clean.clear()
            self._clean.add(given)

    def _each_from(self, start: int, text: str, lowered: str) -> str:
        for one in self._passes[start:]:
            text = one.apply(text, lowered)
        return text


def _reason(exc: Exception) -> str:
    detail = exc.args[0] if exc.args else exc
    if isinstance(detail, bytes):
        return detail.decode("utf-8", errors="replace")
    return str(detail)
