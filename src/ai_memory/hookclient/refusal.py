"""What to do when the server refuses this machine's credential (401), named by its source.

Standard library only: the hook client, the MCP bridge and the CLI all resolve their
credential the same way (:func:`ai_memory.locate.token`), so the advice depends on the
environment alone. It names a variable or a file and a key's public id, never a secret.
"""

from __future__ import annotations

from ai_memory import locate
from ai_memory.hookclient.deliver import KEY_START, key_id

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


def advice(env: Mapping[str, str]) -> str:
    """Which credential the server refused and how to replace it."""
    if env.get("AI_MEMORY_AUTH_TOKEN"):
        return "the token in AI_MEMORY_AUTH_TOKEN was refused; check or unset AI_MEMORY_AUTH_TOKEN"
    signed_in = locate.credential(env)
    if signed_in is not None and signed_in[1]:
        found = key_id(signed_in[1])
        public = f"{KEY_START}{found}" if found else "(key)"
        server = signed_in[0] or "URL"
        return (
            f"the API key {public} stored by `ai-memory login` was refused (revoked, its user "
            f"disabled, or another server's key); run `ai-memory login --server {server} "
            "--key-stdin` with a new key"
        )
    return "the data dir's root token was refused; check the data dir's auth-tokens/default"
