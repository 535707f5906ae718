"""Typed errors of the domain.

Every surface (HTTP, MCP, CLI) maps these to its own error shape in one place,
so each error carries a stable machine-readable ``code`` and a human message.
"""

from __future__ import annotations

from typing import Any


class AiMemoryError(Exception):
    """Base class of every error ai-memory raises on purpose."""

    code = "error"
    http_status = 500

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        return {"error": self.code, "message": self.message, **self.details}


class InvalidInput(AiMemoryError):
    code = "invalid_input"
    http_status = 400


class InvalidPath(InvalidInput):
    code = "invalid_path"


class InvalidIdentity(InvalidInput):
    code = "invalid_identity"


class InvalidFrontmatter(InvalidInput):
    code = "invalid_frontmatter"


class TooLarge(AiMemoryError):
    code = "too_large"
    http_status = 413


class NotFound(AiMemoryError):
    code = "not_found"
    http_status = 404


class PreconditionFailed(AiMemoryError):
    """A compare-and-write precondition did not hold; nothing was written."""

    code = "precondition_failed"
    http_status = 409

    def __init__(self, message: str, current_page_id: int | None) -> None:
        super().__init__(message, current_page_id=current_page_id)
        self.current_page_id = current_page_id


class Conflict(AiMemoryError):
    code = "conflict"
    http_status = 409


class Unauthorized(AiMemoryError):
    code = "unauthorized"
    http_status = 401


class Forbidden(AiMemoryError):
    code = "forbidden"
    http_status = 403


class Saturated(AiMemoryError):
    """A bounded queue is full; the caller should retry later."""

    code = "saturated"
    http_status = 429


class ConfigError(AiMemoryError):
    code = "config_error"


class SchemaTooNew(AiMemoryError):
    code = "schema_too_new"


class ServerRunning(AiMemoryError):
    """A direct-disk lifecycle operation was refused because a server owns the data dir."""

    code = "server_running"
    http_status = 409


class NotInitialised(AiMemoryError):
    code = "not_initialised"


class Unavailable(AiMemoryError):
    code = "unavailable"
    http_status = 503


class NoServiceManager(Unavailable):
    """No systemd user manager or launchd here (a container, WSL without systemd)."""

    code = "no_service_manager"


class ServiceFileEdited(Conflict):
    """A service file that ai-memory did not write, or that was changed since, is left alone."""

    code = "service_file_edited"


class ScopeUnresolved(AiMemoryError):
    """A write named no project and none could be resolved from the caller's session or cwd."""

    code = "scope_unresolved"
    http_status = 422


class SectionNotFound(NotFound):
    code = "section_not_found"


class AmbiguousSection(Conflict):
    """Several sections match; the caller must name one by its hash."""

    code = "ambiguous_section"


class SectionConflict(Conflict):
    """The section changed since the caller read it (its hash differs); nothing was written."""

    code = "section_conflict"


class LlmUnavailable(Unavailable):
    """No provider is configured for this task, or every candidate of its chain failed."""

    code = "llm_unavailable"


class LlmBadAnswer(AiMemoryError):
    """A provider answered, but not with what was asked: malformed, truncated or empty.

    Never half-used: the caller gets this error instead of a partly parsed result.
    """

    code = "llm_bad_answer"
    http_status = 502
