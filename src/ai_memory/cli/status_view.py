"""How ``ai-memory status`` gets and prints the counts and, for admins, the server's health."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from ai_memory.cli.client import ApiClient
from ai_memory.cli.output import out, styled
from ai_memory.config import Config
from ai_memory.core.errors import Forbidden
from ai_memory.core.identity import Scope
from ai_memory.service.check import InstallCheck
from ai_memory.store.counts import counts


def show_health(health: dict[str, Any]) -> None:
    writer, spool, last = health["writer"], health["spool"], health["last"]
    facts = Table(show_header=False, box=None, pad_edge=False)
    facts.add_column("what", style="bold")
    facts.add_column("value", overflow="fold")
    facts.add_row("sessions open", str(health["sessions_open"]))
    people = health.get("identities") or {}
    if people.get("users") or people.get("active_keys"):  # a single-user install: as before
        facts.add_row("users", f"{people['users']} ({people['active_keys']} active API keys)")
    facts.add_row(
        "writer",
        f"{writer['queue_depth']} queued; longest wait {writer['longest_recent_wait_ms']:.1f} ms "
        "(last 5 min)",
    )
    facts.add_row(
        "hook answers", f"slowest {health['hooks']['slowest_recent_answer_ms']} ms (last 5 min)"
    )
    facts.add_row("spool", f"{spool['depth']} waiting, oldest {spool['oldest_age_s']} s")
    facts.add_row("last write", str(last["write"] or "never"))
    facts.add_row("last checkpoint", str(last["checkpoint"] or "never"))
    facts.add_row("last maintenance", str(last["maintenance"] or "never"))
    facts.add_row(
        "sizes",
        f"index {health['sizes']['index_bytes'] / 1e6:.1f} MB; "
        f"wiki {health['pages']} pages, {health['versions']} versions",
    )
    embedder = health["embedder"]
    facts.add_row(
        "embedder",
        "off"
        if not embedder.get("configured")
        else f"{embedder['provider']} ({'loaded' if embedder.get('loaded') else 'NOT loaded'})",
    )
    facts.add_row("llm", llm_summary(health.get("llm") or {}))
    out.print(facts)
    for warning in health["warnings"]:
        out.print(styled("warning:", "yellow"), warning["message"], "→", warning["fix"])


def install_summary(installed: InstallCheck, config: Config) -> str:
    """What is installed here; a signed-in machine with no data dir of its own says whose
    counts follow rather than "database: none yet"."""
    import os

    from ai_memory import locate

    signed_in = locate.credential(os.environ)
    if signed_in is None or installed.database_schema is not None:
        return installed.summary()
    return (
        f"ai-memory {installed.version}; signed in to {signed_in[0] or 'a server'} "
        f"(no data dir at {config.data_dir}): the counts are the server's, as your key sees them"
    )


def served_status(
    client: ApiClient, scope: Scope | None
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The counts the caller may see (``/api/v1/status``) and, for an admin, the health.

    ``/admin/status`` is for admins: a user's key gets the counts alone, never an error.
    """
    data = client.status(scope)
    try:
        health: dict[str, Any] | None = client.request("GET", "/admin/status")
    except Forbidden:
        health = None
    return data, health


def local_status(config: Config, scope: Scope | None) -> dict[str, Any]:
    """The counts read straight from the index, read-only, when no server answers."""
    from ai_memory import __version__
    from ai_memory.cli.local_read import read_only

    with read_only(config) as conn:
        data = counts(conn, scope)

    return {"version": __version__, "data_dir": str(config.data_dir), "local": True, **data}


def llm_summary(llm: dict[str, Any]) -> str:
    """One line: each candidate with its circuit (and last error when not closed)."""
    if not llm.get("configured"):
        return "off"
    parts = []
    for c in llm.get("candidates", []):
        state = c["circuit"] if c["circuit"] == "closed" else f"{c['circuit']}: {c['last_error']}"
        parts.append(f"{c['provider']} {c['model']} ({state})")
    return "; ".join(parts)
