"""What a message may hold, and the one place its text is cleaned before it is queued."""

from __future__ import annotations

import re
from typing import Literal, get_args

import re2

from ai_memory.core.errors import InvalidInput, TooLarge
from ai_memory.core.identity import Scope
from ai_memory.hooks.sanitize import Sanitizer
from ai_memory.store.messages import Draft

MAX_BODY_BYTES = 16 * 1024
MAX_SUBJECT_CHARS = 200
# Queued (not yet popped or cancelled) messages one project's inbox may hold.
MAX_QUEUED = 1_000
# Of those, how many one user (not an admin) may have sent: one user cannot fill an inbox.
MAX_QUEUED_PER_SENDER = 100
# Format characters (Unicode category Cf) are stripped: bidi overrides and isolates, marks,
# zero-width spaces, tag characters. Not the joiners (U+200C, U+200D): they spell Persian,
# Indic and emoji text and neither reorder nor hide any.
_FORMAT = re2.compile(r"[^\P{Cf}\x{200c}\x{200d}]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# The agent kinds the hooks know (``hooks.aliases.AGENTS``), spelled out for the schemas.
AgentKind = Literal["claude-code", "codex", "gemini", "cursor", "opencode", "generic"]
AGENT_KINDS: tuple[str, ...] = get_args(AgentKind)


def known_agent(value: str | None) -> str | None:
    """An agent kind a transport reported, if it is one we know (else: none addressed)."""
    return value if value in AGENT_KINDS else None


def check_agent(agent: str | None, argument: str) -> str | None:
    if agent is None or agent in AGENT_KINDS:
        return agent
    raise InvalidInput(
        f"{argument} {agent!r} is not an agent kind ({', '.join(AGENT_KINDS)})", argument=argument
    )


def clean_draft(
    sender: Scope,
    recipient: Scope,
    to_agent: str | None,
    subject: str,
    body: str,
    sanitizer: Sanitizer,
) -> Draft:
    """Refuse what is over a limit (nothing is cut silently), then sanitize like a capture:
    format characters, escapes and controls stripped, secrets redacted. CPU-bound: run it
    off the event loop."""
    if len(subject) > MAX_SUBJECT_CHARS:
        raise InvalidInput(
            f"the subject is {len(subject)} characters; the limit is {MAX_SUBJECT_CHARS}",
            argument="subject",
        )
    size = len(body.encode("utf-8", "surrogatepass"))
    if size > MAX_BODY_BYTES:
        raise TooLarge(
            f"the message body is {size} bytes; the limit is {MAX_BODY_BYTES} (16 KiB)",
            argument="body",
            limit=MAX_BODY_BYTES,
        )
    check_agent(to_agent, "to_agent")
    clean_body = sanitizer.clean(strip_format(body), MAX_BODY_BYTES).strip()
    if not clean_body:
        raise InvalidInput("the message body is empty", argument="body")
    clean_subject = " ".join(sanitizer.clean(strip_format(subject), MAX_SUBJECT_CHARS * 4).split())
    return Draft(sender, recipient, to_agent, clean_subject, clean_body)


def strip_format(text: str) -> str:
    """``text`` without invisible format characters, before redaction sees it.

    A right-to-left override makes ``pay\u202eexe.txt`` read as ``paytxt.exe``, and a
    zero-width space inside a key hides it from the redactor, so both go first. RE2
    knows the Cf characters (a Python loop over ``unicodedata`` is ten times slower);
    it reads UTF-8, so lone surrogates, which the sanitizer strips anyway, go first."""
    if text.isascii():
        return text
    return str(_FORMAT.sub("", _SURROGATE.sub("", text)))
