"""Compiled patterns without importing ``re``, from a cache of what ``re`` compiled.

``re`` (with ``enum``, ``functools``, its parser and its compiler) costs the hook
client more to import than the interpreter takes to start, and compiling a
pattern costs more again. What ``re`` builds for a pattern is code for the
``_sre`` engine; :class:`Patterns` keeps that code in a file beside this module
(as Python keeps bytecode in ``__pycache__``), keyed by the interpreter and the
engine's version, and builds each pattern with ``_sre`` directly. A pattern not
in the file is compiled by ``re``, checked to equal what ``re`` returns, and
added. Where the file cannot be written, or ``_sre`` differs, ``re`` does it all.
"""

from __future__ import annotations

import marshal
import sys

from ai_memory.hookclient import fs

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any


def cache_file() -> str | None:
    """The cache for this interpreter, in the package's ``__pycache__``."""
    try:
        import _sre  # type: ignore[import-not-found]

        tag = f"{sys.implementation.cache_tag}-{_sre.MAGIC}-{_sre.CODESIZE}"
    except (ImportError, AttributeError):
        return None
    return fs.join(fs.dirname(__file__), "__pycache__", f"patterns.{tag}.marshal")


class Patterns:
    """The patterns one process compiles, from the cache file when it has them."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.entries: dict[str, tuple[Any, ...]] = _load(path)
        self.compiled: dict[str, re.Pattern[str]] = {}
        self.added = False

    def get(self, pattern: str) -> re.Pattern[str]:
        found = self.compiled.get(pattern)
        if found is None:
            found = self._build(pattern)
            self.compiled[pattern] = found
        return found

    def _build(self, pattern: str) -> re.Pattern[str]:
        entry = self.entries.get(pattern)
        if entry is not None:
            try:
                import _sre

                built: re.Pattern[str] = _sre.compile(*entry)
                return built
            except Exception:  # an entry this engine refuses: ask re again
                self.entries.pop(pattern, None)
        compiled, entry = _compile(pattern)
        if entry is not None and self.path is not None:
            self.entries[pattern] = entry
            self.added = True
        return compiled

    def save(self) -> None:
        """Write the cache if this run added to it (atomically; quietly not, where read-only)."""
        if not self.added or self.path is None:
            return
        temp = f"{self.path}.{fs.getpid()}.tmp"
        try:
            # Another run may have written since this one read: keep what it added too.
            data = marshal.dumps({**_load(self.path), **self.entries})
            fs.makedirs(fs.dirname(self.path), exist_ok=True)
            with open(temp, "wb") as handle:
                handle.write(data)
            fs.replace(temp, self.path)
            self.added = False
        except (OSError, ValueError):
            try:
                fs.unlink(temp)
            except OSError:
                return


def warm(patterns: list[str], path: str | None = None) -> None:
    """Compile ``patterns`` into the cache now, so no hook run pays for it later."""
    cache = Patterns(cache_file() if path is None else path)
    for pattern in patterns:
        cache.get(pattern)
    cache.save()


def _load(path: str | None) -> dict[str, tuple[Any, ...]]:
    if path is None:
        return {}
    try:
        with open(path, "rb") as handle:
            entries = marshal.loads(handle.read())
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    return entries if isinstance(entries, dict) else {}


def _compile(pattern: str) -> tuple[re.Pattern[str], tuple[Any, ...] | None]:
    """``re.compile(pattern)``, and the ``_sre.compile`` arguments that rebuild it (or None)."""
    import re

    compiled = re.compile(pattern)
    try:
        import _sre
        from re import _compiler, _parser  # type: ignore[attr-defined]

        parsed = _parser.parse(pattern, 0)
        code = [int(op) for op in _compiler._code(parsed, 0)]  # plain ints: marshal takes them
        groupindex = dict(parsed.state.groupdict)
        indexgroup: list[str | None] = [None] * parsed.state.groups
        for name, index in groupindex.items():
            indexgroup[index] = name
        groups = parsed.state.groups - 1
        entry = (pattern, compiled.flags, code, groups, groupindex, tuple(indexgroup))
        if _sre.compile(*entry) == compiled:
            return compiled, entry
    except Exception:  # another re: no cache, re alone
        pass
    return compiled, None
