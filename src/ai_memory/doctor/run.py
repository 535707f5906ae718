"""Every check, in the order a broken install is best fixed (a later check needs an earlier)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from ai_memory.doctor import agents, install, llm, server, signed_in, store
from ai_memory.doctor.context import DoctorContext
from ai_memory.doctor.findings import Finding, Severity

Check = Callable[[DoctorContext], list[Finding]]
ON_DISK: tuple[Check, ...] = (
    install.check_config,
    install.check_data_dir,
    install.check_token,
    install.check_release,
)
INDEXED: tuple[Check, ...] = (store.check_schema, store.check_git, store.check_index)
LIVE: tuple[Check, ...] = (
    server.check_server,
    server.check_capture,
    store.check_providers,
    llm.check_llm,
)
CLIENTS: tuple[Check, ...] = (agents.check_hooks, agents.check_mcp, store.check_spool)


def run_checks(
    data_dir: Path | None, home: Path, env: Mapping[str, str], timeout_s: float = 3.0
) -> list[Finding]:
    ctx = DoctorContext.load(data_dir, home, env, timeout_s)
    try:
        if ctx.signed_in is not None:
            findings = signed_in.check_signed_in(ctx)
            return findings + [f for check in CLIENTS for f in check(ctx)]
        findings = [f for check in ON_DISK for f in check(ctx)]
        broken = {f.check for f in findings if f.severity is Severity.ERROR}
        if "data_dir" not in broken and ctx.config is not None:
            findings += [f for check in INDEXED for f in check(ctx)]
        findings += [f for check in LIVE for f in check(ctx)]
        findings += [f for check in CLIENTS for f in check(ctx)]
        return findings
    finally:
        ctx.close()
