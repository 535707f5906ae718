"""The sanitizer: the only way untrusted hook text becomes something the store accepts.

Every field is first cut to a bounded length (dropping the token crossing the
cut), then stripped of ANSI escapes and control characters, redacted
(:mod:`ai_memory.hooks.redactor`, linear time) and only then capped, so a
secret can never be cut in half and slip past the scrubber. A
:class:`SanitizedObservation` can only be built here. The work is CPU-bound:
callers run it in a worker thread, never on the event loop.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, InitVar, dataclass
from json.encoder import encode_basestring

from ai_memory.hookclient.patterns import REDACTED, cut_at_token
from ai_memory.hookclient.redact import redact_tree
from ai_memory.hookclient.sessionid import MAX_RAW, derived_session_id, safe_session_id
from ai_memory.hooks.aliases import Normalised
from ai_memory.hooks.own_context import strip_own_context
from ai_memory.hooks.redactor import NeedsRedaction, Redactor
from ai_memory.hooks.tool_text import action_of, exit_code, response_text

__all__ = [
    "REDACTED",
    "NeedsRedaction",
    "SanitizedObservation",
    "Sanitizer",
    "cap_bytes",
    "meta_json",
    "precut",
]

PROMPT_CAP = 16 * 1024
BODY_CAP = 16 * 1024
EXCERPT_CAP = 2000
FILE_CAP = 512
MAX_FILES = 20
TOOL_NAME_CAP = 100
# Text is cut to this many characters before redaction; the token crossing the
# cut is dropped whole, so no half of a secret is kept unrecognised.
_PRECUT_FACTOR = 4
_TOOL_PRECUT = 400

_SEAL = object()
_TOOL_KINDS = ("pre-tool-use", "post-tool-use")
# The string writer json.dumps uses with ensure_ascii=False (C where it is available).
_quote = encode_basestring
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
    """Compiled once per server: every field goes through :meth:`clean` (or is refused)."""

    def __init__(
        self,
        extra_patterns: Sequence[str] = (),
        *,
        redactor: Redactor | None = None,
        scan_only: bool = False,
    ) -> None:
        self._redactor = redactor if redactor is not None else Redactor(extra_patterns)
        self._scan_only = scan_only
        # What redact does, chosen once: every field of every event takes it.
        self._redact = self._redactor.unchanged if scan_only else self._redactor.redact
        # Made once, not per request: POST /hook asks for it on every event.
        self._scanner = None if scan_only else Sanitizer(redactor=self._redactor, scan_only=True)

    def in_place(self) -> Sanitizer:
        """This sanitizer for text with nothing to redact: each field is only scanned, and
        one that any pattern matches raises :class:`NeedsRedaction` (redo it in a worker)."""
        return self._scanner or self

    # -- text -----------------------------------------------------------------

    def redact(self, text: str) -> str:
        """Secrets replaced by ``[REDACTED]``; linear in the length of ``text``."""
        return self._redact(text)

    def holds_secret(self, text: str) -> bool:
        if self._scan_only:
            self._redactor.unchanged(text)  # raises when there may be one
            return False
        return self._redactor.holds_secret(text)

    def clean(self, text: str, cap: int) -> str:
        """Strip escapes and controls, redact, then cap at ``cap`` UTF-8 bytes."""
        total = None
        if len(text) > cap * _PRECUT_FACTOR:  # most text is shorter: no call to cut it
            cut = precut(text, cap * _PRECUT_FACTOR)
            total = len(text.encode("utf-8", "surrogatepass")) if cut is not text else None
            text = cut
        if "\x1b" in text:
            text = _ANSI.sub("", text)
        if not text.isprintable():
            text = _CONTROL.sub("", text.replace("\r\n", "\n"))
        return cap_bytes(self._redact(text), cap, total)

    def tool_name(self, value: object) -> str | None:
        """A tool's name is captured text too: one holding a secret becomes REDACTED.

        It is cut before anything else looks at it (names are short; an 80,000-character
        one is refused as a name, not scanned whole).
        """
        if not isinstance(value, str):
            return None
        head = precut(value, _TOOL_PRECUT)
        cleaned = _SAFE_TOOL.sub("_", head)[:TOOL_NAME_CAP]
        if self.holds_secret(head) or self.holds_secret(cleaned):
            return REDACTED
        return cleaned or None

    def session_id(self, value: str) -> str | None:
        """A page-name-safe id; one holding a secret becomes an id derived from it, as does
        one over MAX_RAW characters (a hash of all of it, as the hook client derives it,
        without scanning it for secrets first)."""
        raw = value.strip()
        if len(raw) > MAX_RAW:
            return derived_session_id(raw)
        return safe_session_id(raw, self.holds_secret)

    def tree(self, value: object, cap: int) -> object:
        """A JSON-like value with every string and key cleaned (a handoff's content)."""
        return redact_tree(value, lambda text: self.clean(text, cap))

    # -- observations -----------------------------------------------------------

    def observation(
        self, event: Normalised, session_id: str, extra: Mapping[str, str] | None = None
    ) -> SanitizedObservation:
        fields = event.fields
        is_tool = event.kind in _TOOL_KINDS
        tool = self.tool_name(fields.get("tool_name")) if is_tool else None
        body = self._body(event, tool)
        files = self._files(event) if is_tool else ()
        meta: dict[str, object] = {"event": self.clean(event.event, 200)}
        if extra:
            for key, value in extra.items():
                meta[key] = self.clean(value, 1024)
        if files:
            meta["files"] = list(files)
        if is_tool:
            meta.update(self._outcome(event, tool))
        reason = fields.get("reason")
        if isinstance(reason, str) and event.kind in ("session-start", "session-end"):
            meta["reason"] = self.clean(reason, 200)
        for name in ("agent_id", "agent_type"):
            found = fields.get(name)
            if isinstance(found, str | int) and str(found).strip():
                meta[name] = self.clean(str(found), 200)
        return SanitizedObservation(
            event.agent, event.kind, session_id, tool, body, meta_json(meta), files, seal=_SEAL
        )

    def captured(self, value: object, cap: int) -> str:
        """Captured text cleaned, with any packet of ours that came back cut out."""
        return strip_own_context(self.clean(_as_text(value), cap))

    def _outcome(self, event: Normalised, tool: str | None) -> dict[str, object]:
        """What kind of call it was, and whether it failed (and with what exit status)."""
        fields = event.fields
        outcome: dict[str, object] = {"action": action_of(tool, event.event)}
        if event.kind != "post-tool-use":
            return outcome
        code = exit_code(fields.get("tool_response"), fields.get("error"), fields.get("exit_code"))
        failed = fields.get("failed") is True or (code is not None and code != 0)
        response = fields.get("tool_response")
        if isinstance(response, Mapping):
            failed = failed or response.get("success") is False or bool(response.get("is_error"))
        if code is not None:
            outcome["exit_code"] = code
        if failed or fields.get("error") is not None:
            outcome["failed"] = True
        return outcome

    def _body(self, event: Normalised, tool: str | None) -> str:
        fields = event.fields
        kind = event.kind
        if kind == "user-prompt":
            return self.captured(fields.get("prompt"), PROMPT_CAP)
        if kind == "post-compaction":
            return self.captured(fields.get("summary"), PROMPT_CAP)
        if kind in ("stop", "subagent-stop"):
            return self.captured(fields.get("assistant"), BODY_CAP)
        if kind == "subagent-start":
            return self.clean(_as_text(fields.get("agent_type") or fields.get("agent_id")), 200)
        if kind in ("pre-tool-use", "post-tool-use"):
            text = (
                f"{tool or 'tool'}: {self.clean(_as_text(fields.get('tool_input')), EXCERPT_CAP)}"
            )
            if kind == "post-tool-use" and fields.get("tool_response") is not None:
                response = self.captured(response_text(fields["tool_response"]), EXCERPT_CAP)
                text += f"\n-> {response}"
            if kind == "post-tool-use" and fields.get("error") is not None:
                error = self.captured(response_text(fields["error"]), EXCERPT_CAP)
                text += f"\n!! {error}"
            # The tool's name next to its input could read as an assignment: check the whole.
            return self.redact(text)
        if kind == "notification":
            return self.captured(fields.get("message"), EXCERPT_CAP)
        if kind == "pre-compact":
            return self.clean(_as_text(fields.get("instructions")), EXCERPT_CAP)
        if kind in ("session-start", "session-end"):
            return self.clean(_as_text(fields.get("reason")), EXCERPT_CAP)
        return self.captured(dict(fields) if fields else "", EXCERPT_CAP)

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
    return cut_at_token(text, limit)


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


def meta_json(meta: Mapping[str, object]) -> str:
    """``json.dumps(meta, ensure_ascii=False)``, written out for what meta holds (text,
    flags, whole numbers, lists of text); anything else takes ``json.dumps`` itself.

    Byte for byte the same (the same string writer, separators and number forms), without
    building an encoder per event: most of what dumping a small dict costs."""
    parts: list[str] = []
    for key, value in meta.items():
        if type(key) is not str:
            return json.dumps(meta, ensure_ascii=False)
        if type(value) is str:
            text = _quote(value)
        elif value is True or value is False:
            text = "true" if value else "false"
        elif type(value) is int:
            text = int.__repr__(value)
        elif type(value) is list and all(type(item) is str for item in value):
            text = "[" + ", ".join(map(_quote, value)) + "]"
        else:
            return json.dumps(meta, ensure_ascii=False)
        parts.append(f"{_quote(key)}: {text}")
    return "{" + ", ".join(parts) + "}"


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
