"""What ``serve`` checks before anything heavy is imported: the address and the token."""

from __future__ import annotations

from pathlib import Path

from ai_memory.core.errors import ConfigError, InvalidInput, NotInitialised
from ai_memory.web.origin import is_loopback


def parse_bind(bind: str) -> tuple[str, int]:
    host, sep, port = bind.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ConfigError(f"bind {bind!r} is not host:port")
    number = int(port)
    if not 0 < number < 65536:
        raise ConfigError(f"bind {bind!r}: port must be 1-65535")
    return host.strip("[]"), number


def require_token(token: str | None, token_file: Path) -> str:
    """No token, no server: every route but /healthz needs one, on any address."""
    if not token:
        raise NotInitialised(f"no bearer token in {token_file}; run `ai-memory init` first")
    return token


def check_bind(host: str, allow_remote: bool) -> bool:
    """True when ``host`` is reachable from other machines, which needs ``allow_remote``."""
    if is_loopback(host):
        return False
    if not allow_remote:
        raise InvalidInput(
            f"refusing to listen on {host}, which is reachable from other machines; "
            "pass --allow-remote to serve it anyway (the bearer token is then the only guard)"
        )
    return True
