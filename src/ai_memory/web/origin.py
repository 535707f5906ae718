"""Which ``Host`` and ``Origin`` headers a request may carry: one rule for every route.

A loopback server is reachable from any web page the user opens: a page on a
rebinding domain (``evil.example`` resolving to 127.0.0.1) sends its own name
as ``Host``, and a page on another origin sends its own ``Origin``. So a
loopback server answers only to loopback host names, and refuses a browser
request from any origin but its own. Standard library only: the middleware
and the MCP mount both use it.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
SAFE_METHODS = frozenset({"GET", "HEAD"})


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and any loopback address (``127.0.0.0/8``, ``::1``)."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_name(value: str) -> str | None:
    """The name in a ``Host`` value (``[::1]:80`` gives ``::1``); None when malformed."""
    value = value.strip().lower()
    if value.startswith("["):
        name, sep, rest = value[1:].partition("]")
        if not sep or (rest and not _is_port_suffix(rest)):
            return None
        return name or None
    name, sep, port = value.partition(":")
    if sep and not _is_port_suffix(sep + port):
        return None
    return name or None


def _is_port_suffix(text: str) -> bool:
    port = text[1:]
    return text.startswith(":") and port.isascii() and port.isdigit() and 0 < len(port) <= 5


class HostRule:
    """What a server bound to ``bind_host`` accepts; a non-loopback bind checks no Host."""

    def __init__(self, bind_host: str) -> None:
        self.loopback = is_loopback(bind_host)
        self.names = LOOPBACK_NAMES | {bind_host.strip("[]").lower()}

    def host_problem(self, hosts: list[bytes]) -> str | None:
        """Why these ``Host`` headers are refused, or None when they are fine."""
        if len(hosts) > 1:
            return "more than one Host header; send exactly one"
        if not self.loopback:
            return None
        if not hosts:
            return "missing Host header"
        value = hosts[0].decode("latin-1")
        if host_name(value) in self.names:
            return None
        shown = value[:100]
        return (
            f"Host header {shown!r} is not an address of this server: a loopback server "
            "answers only to 127.0.0.1, localhost and [::1] (any port)"
        )

    @staticmethod
    def origin_problem(origin: bytes, host: bytes) -> str | None:
        """Why a request from ``origin`` to ``host`` is refused: only same-origin passes."""
        text = origin.decode("latin-1").strip()
        parts = urlsplit(text)
        if (
            parts.scheme in ("http", "https")
            and parts.netloc.lower() == host.decode("latin-1").strip().lower()
            and parts.path in ("", "/")
            and not parts.query
        ):
            return None
        return (
            f"Origin {text[:100]!r} is not this server's own origin; "
            "requests from other web pages are refused"
        )

    @staticmethod
    def checks_origin(method: str, is_web_path: bool) -> bool:
        """A foreign Origin is refused on every write, and on every /web page (cookie use)."""
        return method not in SAFE_METHODS or is_web_path
