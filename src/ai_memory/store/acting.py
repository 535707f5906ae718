"""Who the current request acts for, carried to the writer thread with the command.

The auth middleware sets it once per request; the writer runs each command in
the context it was submitted from, so the audit row and a new project's creator
name the user without every call site passing a principal down.
"""

from __future__ import annotations

from contextvars import ContextVar, Token

from ai_memory.core.principal import Principal

_ACTING: ContextVar[Principal | None] = ContextVar("ai_memory_acting", default=None)


def acting() -> Principal:
    """The request's principal; outside a request (CLI, maintenance) the operator."""
    return _ACTING.get() or Principal.root()


def act_as(principal: Principal) -> Token[Principal | None]:
    """Set the principal for the rest of this context; returns a token for :func:`restore`."""
    return _ACTING.set(principal)


def restore(token: Token[Principal | None]) -> None:
    _ACTING.reset(token)
