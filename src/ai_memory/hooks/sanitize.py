"""The sanitizer: the only way untrusted hook text becomes something the store accepts.

It strips ANSI escapes and control characters, redacts secrets, and only then
caps sizes, so a secret can never be cut in half and slip past the scrubber.
A :class:`SanitizedObservation` can only be built here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, InitVar, dataclass

from ai_memory.core.errors import ConfigError
from ai_memory.hooks.aliases import Normalised

REDACTED = "[REDACTED]"
PROMPT_CAP = 16 * 1024
BODY_CAP = 16 * 1024
EXCERPT_CAP = 2000
FILE_CAP = 512
MAX_FILES = 20
# Text is cut to this many characters before redaction; the token crossing the
# cut is dropped whole, so no half of a secret is kept unrecognised.
_PRECUT_FACTOR = 4
_TRAILING_TOKEN = re.compile(r"[^\s\"',;]*\Z")

_SEAL = object()

# Each pattern may name a ``k`` group: that part is kept, the rest becomes REDACTED.
SECRET_PATTERNS: tuple[str, ...] = (
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY"
    r"(?: BLOCK)?-----|.*\Z)",
    r"(?P<k>(?i:\bbearer)\s+)[A-Za-z0-9._~+/=-]{6,}",
    r"(?P<k>(?i:\b(?:proxy-)?authorization)[\"']?\s*[:=]\s*[\"']?(?i:(?:basic|bearer|token|digest)\s+)?)"
    r"[^\s\"',;]+",
    r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{8,}",
    r"\bsk-[A-Za-z0-9_-]{16,}",
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",
    r"\bgithub_pat_[A-Za-z0-9_]{20,}",
    r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b",
    r"\bAIza[0-9A-Za-z_-]{35}",
    r"\bxox[abposre]-[A-Za-z0-9-]{10,}",
    r"\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*",
    r"(?P<k>\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]*:)[^@\s/]+(?=@)",
    r"(?P<k>\b[A-Za-z0-9_]*(?i:API_KEY|APIKEY|TOKEN|SECRET|PASSWORD|PASSWD|ACCESS_KEY|"
    r"PRIVATE_KEY|CREDENTIALS?)[A-Za-z0-9_]*[\"']?\s*[:=]\s*[\"']?)[^\s\"',;&}]+",
    r"(?P<k>(?i:\b(?:password|passwd|pwd|secret|api[_-]?key|x-api-key|access[_-]?key|"
    r"client[_-]?secret|auth[_-]?token|session[_-]?token|private[_-]?key|cookie))[\"']?"
    r"\s*[:=]\s*[\"']?)[^\s\"',;&}]+",
)

# Every built-in pattern needs one of these (lower-cased) in the text to match.
_TRIGGERS = (
    "private",
    "bearer",
    "authoriz",
    "sk-",
    "sk_",
    "rk_",
    "pk_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat",
    "akia",
    "asia",
    "aiza",
    "xox",
    "eyj",
    "://",
    "key",
    "token",
    "secret",
    "passw",
    "pwd",
    "credential",
    "cookie",
)
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_SAFE_TOOL = re.compile(r"[^A-Za-z0-9_.:/@-]+")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)
_FILE_KEYS = (
    "file_path",
    "filePath",
    "path",
    "notebook_path",
    "absolute_path",
    "target_file",
    "file",
)


@dataclass(frozen=True, slots=True)
class SanitizedObservation:
    """An observation fit to store. Only :class:`Sanitizer` can construct one."""

    agent: str
    kind: str
    session_id: str
    tool_name: str | None
    body: str
    meta: str  # JSON object: event name, files touched, source/reason
    files: tuple[str, ...] = ()
    _: KW_ONLY
    # No default and not stored: ``dataclasses.replace`` cannot copy it, so a
    # copy with new text cannot be made outside the sanitizer either.
    seal: InitVar[object]

    def __post_init__(self, seal: object) -> None:
        if seal is not _SEAL:
            raise TypeError("a SanitizedObservation can only be built by the Sanitizer")


class Sanitizer:
    """Precompiled once: one combined pass redacts every secret pattern."""

    def __init__(self, extra_patterns: Sequence[str] = ()) -> None:
        patterns = [*SECRET_PATTERNS, *extra_patterns]
        parts: list[str] = []
        self._keeps: dict[str, str | None] = {}
        for index, pattern in enumerate(patterns):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ConfigError(f"redaction pattern {pattern!r} is invalid: {exc}") from exc
            name = f"p{index}"
            keep = f"k{index}"
            renamed = pattern.replace("(?P<k>", f"(?P<{keep}>")
            self._keeps[name] = keep if keep in renamed else None
            parts.append(f"(?P<{name}>{renamed})")
        self._secret = re.compile("|".join(parts), re.DOTALL)
        # Plain ASCII text without any trigger word cannot match a built-in pattern;
        # configured patterns are checked on their own, so they never switch this off.
        self._extra = (
            re.compile(
                "|".join(f"(?:{p.replace('(?P<k>', '(?:')})" for p in extra_patterns), re.DOTALL
            )
            if extra_patterns
            else None
        )

    # -- text -----------------------------------------------------------------

    def redact(self, text: str) -> str:
        plain = text.isascii() and not _has_trigger(text)
        if plain and (self._extra is None or not self._extra.search(text)):
            return text
        return self._secret.sub(self._replace, text)

    def _replace(self, match: re.Match[str]) -> str:
        name = match.lastgroup
        keep = self._keeps.get(name) if name else None
        prefix = match.group(keep) if keep else None
        return f"{prefix or ''}{REDACTED}"

    def clean(self, text: str, cap: int) -> str:
        """Strip escapes and controls, redact, then cap at ``cap`` UTF-8 bytes."""
        cut = precut(text, cap * _PRECUT_FACTOR)
        total = len(text.encode("utf-8", "surrogatepass")) if cut is not text else None
        text = cut
        if "\x1b" in text:
            text = _ANSI.sub("", text)
        if not text.isprintable():
            text = _CONTROL.sub("", text.replace("\r\n", "\n"))
        return cap_bytes(self.redact(text), cap, total)

    def tool_name(self, value: object) -> str | None:
        """A tool's name is captured text too: one holding a secret becomes REDACTED."""
        if not isinstance(value, str):
            return None
        cleaned = _SAFE_TOOL.sub("_", value)[:100]
        if self.redact(value) != value or self.redact(cleaned) != cleaned:
            return REDACTED
        return cleaned or None

    # -- observations -----------------------------------------------------------

    def observation(
        self, event: Normalised, session_id: str, extra: Mapping[str, str] | None = None
    ) -> SanitizedObservation:
        tool = self.tool_name(event.fields.get("tool_name")) if _is_tool(event.kind) else None
        body = self._body(event, tool)
        files = self._files(event) if _is_tool(event.kind) else ()
        meta: dict[str, object] = {"event": self.clean(event.event, 200)}
        for key, value in (extra or {}).items():
            meta[key] = self.clean(value, 1024)
        if files:
            meta["files"] = list(files)
        reason = event.fields.get("reason")
        if isinstance(reason, str) and event.kind in ("session-start", "session-end"):
            meta["reason"] = self.clean(reason, 200)
        return SanitizedObservation(
            agent=event.agent,
            kind=event.kind,
            session_id=session_id,
            tool_name=tool,
            body=body,
            meta=json.dumps(meta, ensure_ascii=False),
            files=files,
            seal=_SEAL,
        )

    def _body(self, event: Normalised, tool: str | None) -> str:
        fields = event.fields
        kind = event.kind
        if kind == "user-prompt":
            return self.clean(_as_text(fields.get("prompt")), PROMPT_CAP)
        if kind == "post-compaction":
            return self.clean(_as_text(fields.get("summary")), PROMPT_CAP)
        if kind == "stop":
            return self.clean(_as_text(fields.get("assistant")), BODY_CAP)
        if kind in ("pre-tool-use", "post-tool-use"):
            text = (
                f"{tool or 'tool'}: {self.clean(_as_text(fields.get('tool_input')), EXCERPT_CAP)}"
            )
            if kind == "post-tool-use" and fields.get("tool_response") is not None:
                response = self.clean(_as_text(fields.get("tool_response")), EXCERPT_CAP)
                text += f"\n-> {response}"
            # The tool's name next to its input could read as an assignment: check the whole.
            return self.redact(text)
        if kind == "notification":
            return self.clean(_as_text(fields.get("message")), EXCERPT_CAP)
        if kind == "pre-compact":
            return self.clean(_as_text(fields.get("instructions")), EXCERPT_CAP)
        if kind in ("session-start", "session-end"):
            return self.clean(_as_text(fields.get("reason")), EXCERPT_CAP)
        return self.clean(_as_text(dict(fields)) if fields else "", EXCERPT_CAP)

    def _files(self, event: Normalised) -> tuple[str, ...]:
        found: dict[str, None] = {}
        for candidate in _file_candidates(event.fields.get("tool_input")):
            cleaned = self.clean(candidate.strip(), FILE_CAP)
            if cleaned:
                found.setdefault(cleaned, None)
            if len(found) >= MAX_FILES:
                break
        return tuple(found)


def precut(text: str, limit: int) -> str:
    """Cut over-long text hard at ``limit`` before redaction, dropping the token crossing the cut.

    The caller adds the marker (from the original length): nothing is dropped silently.
    """
    if len(text) <= limit:
        return text
    return _TRAILING_TOKEN.sub("", text[:limit])


def cap_bytes(text: str, cap: int, total: int | None = None) -> str:
    """At most ``cap`` UTF-8 bytes, cut at a character boundary with a note of what was cut.

    ``total`` is the byte length of the text before any earlier cut: the note counts from it.
    """
    if total is None and len(text) * 4 <= cap:
        return text
    data = text.encode("utf-8")
    if total is None and len(data) <= cap:
        return text
    marker_room = 48
    kept = data[: max(cap - marker_room, 0)].decode("utf-8", errors="ignore")
    cut = max((total or 0), len(data)) - len(kept.encode("utf-8"))
    return f"{kept}\n[... cut {max(cut, 1)} bytes]"


def _has_trigger(text: str) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in _TRIGGERS)


def _is_tool(kind: str) -> bool:
    return kind in ("pre-tool-use", "post-tool-use")


def _as_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("command"), str):
        return str(value["command"])
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _file_candidates(tool_input: object) -> Iterable[str]:
    if isinstance(tool_input, Mapping):
        for key in _FILE_KEYS:
            value = tool_input.get(key)
            if isinstance(value, str) and value:
                yield value[:4096]
        for key in ("paths", "files"):
            values = tool_input.get(key)
            if isinstance(values, list):
                yield from (v[:4096] for v in values[:MAX_FILES] if isinstance(v, str) and v)
        for key in ("command", "patch", "input"):
            value = tool_input.get(key)
            if isinstance(value, list):
                value = "\n".join(str(v) for v in value)
            if isinstance(value, str) and "*** " in value:
                yield from _PATCH_FILE.findall(value[:65536])
    elif isinstance(tool_input, str) and "*** " in tool_input:
        yield from _PATCH_FILE.findall(tool_input[:65536])
