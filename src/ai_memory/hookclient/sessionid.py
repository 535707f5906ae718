"""Cleaning an agent's session id into a page-name-safe one; shared by the hook client and server.

Standard library only. A session id becomes a file name (``sessions/<id>.md``) and
a spool marker, so one that holds a secret is replaced by an id derived from it:
the same for every event of the session, and revealing nothing of it.
"""

from __future__ import annotations

from ai_memory.hookclient.redact import holds_secret
from ai_memory.hookclient.resolve import fold_unsafe

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

MAX_RAW = 512
# The characters fold_unsafe keeps: an id of these only (most ids) is kept as it is.
_KEPT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def safe_session_id(value: str, secret_in: Callable[[str], bool] = holds_secret) -> str | None:
    """Anything unusual is folded to ``-``; at most 100 characters; None when nothing is left.

    An id over 512 characters, or one ``secret_in`` finds a secret in, becomes
    ``s-<hash>`` (a hash of the whole value).
    """
    raw = value.strip()
    if len(raw) > MAX_RAW or secret_in(raw):
        return derived_session_id(raw)
    folded = raw if _KEPT.issuperset(raw) else fold_unsafe(raw)
    return folded.strip("-.")[:100] or None


def derived_session_id(raw: str) -> str:
    import hashlib  # only for the rare id that needs it: the hook client runs on every event

    return "s-" + hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:24]
