"""The LLM chains: keys present for every candidate, and the server's view of each circuit."""

from __future__ import annotations

from typing import Any

from ai_memory.core.errors import ConfigError
from ai_memory.doctor.context import DoctorContext
from ai_memory.doctor.findings import Finding, error, ok, warning


def check_llm(ctx: DoctorContext) -> list[Finding]:
    if ctx.config is None:
        return []
    if ctx.config.llm.provider == "none":
        return [ok("llm", "no LLM provider configured (LLM features off)")]
    from ai_memory.llm.build import chain_members
    from ai_memory.llm.credentials import key_env, resolve_key

    findings: list[Finding] = []
    try:
        members = chain_members(ctx.config)
    except ConfigError as exc:
        return [error("llm", exc.message, f"$EDITOR {ctx.config.config_file}")]
    for member in {
        (m.provider, m.model, key_env(m)): m for ms in members.values() for m in ms
    }.values():
        try:
            resolve_key(member, ctx.env)
        except ConfigError as exc:
            fix = f"export {key_env(member)}=… where the server runs"
            findings.append(error("llm", exc.message, fix))
    live: dict[str, Any] = (ctx.status or {}).get("llm") or {}
    for c in live.get("candidates", []):
        name = f"{c['provider']} {c['model']}"
        if c["circuit"] != "closed":
            message = f"{name}: circuit {c['circuit']}, last error {c['last_error']}"
            findings.append(warning("llm", message, "ai-memory llm-test"))
        elif c["last_success_at"]:
            findings.append(ok("llm", f"{name}: answering (last success {c['last_success_at']})"))
        else:
            findings.append(ok("llm", f"{name}: configured, not called yet"))
    if not findings:
        chains = ", ".join(members)
        findings.append(ok("llm", f"{ctx.config.llm.provider} configured (chains: {chains})"))
    return findings
