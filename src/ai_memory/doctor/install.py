"""Checks of the data dir on disk: initialised, private, a token, a config that loads."""

from __future__ import annotations

import stat
from pathlib import Path

from ai_memory.doctor.context import DoctorContext
from ai_memory.doctor.findings import Finding, error, ok, warning

PRIVATE_DIRS = ("", "auth-tokens", "spool")


def check_config(ctx: DoctorContext) -> list[Finding]:
    if ctx.config_error is not None:
        path = ctx.data_dir / "config.toml"
        return [error("config", ctx.config_error, f"$EDITOR {path}")]
    return [ok("config", f"{ctx.data_dir / 'config.toml'} is valid")]


def check_data_dir(ctx: DoctorContext) -> list[Finding]:
    root = ctx.data_dir
    if not (root / "wiki" / ".git").exists() or not (root / "db" / "memory.sqlite").exists():
        return [error("data_dir", f"{root} is not initialised", f"ai-memory init {ctx.dir_arg}")]
    found: list[Finding] = []
    for name in PRIVATE_DIRS:
        folder = root / name
        if folder.exists() and _mode(folder) & 0o077:
            found.append(
                warning(
                    "data_dir",
                    f"{folder} is readable by others (mode {_mode(folder):o})",
                    f"chmod 700 {folder}",
                )
            )
    return found or [ok("data_dir", f"{root} is initialised and private")]


def check_token(ctx: DoctorContext) -> list[Finding]:
    path = ctx.data_dir / "auth-tokens" / "default"
    if not path.exists() or not ctx.token:
        return [error("token", f"no bearer token in {path}", f"ai-memory init {ctx.dir_arg}")]
    if _mode(path) & 0o077:
        return [
            error(
                "token",
                f"{path} is readable by others (mode {_mode(path):o})",
                f"chmod 600 {path}",
            )
        ]
    return [ok("token", f"{path} holds a token, mode 600")]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def check_release(ctx: DoctorContext) -> list[Finding]:
    """The version and schema this install runs, and whether its service file runs it."""
    from ai_memory.service.check import install_check
    from ai_memory.service.spec import Host

    current = Host.current()
    host = Host(
        current.platform, {**ctx.env, "HOME": str(ctx.home)}, current.interpreter, current.uid
    )
    found = install_check(ctx.data_dir, ctx.data_dir / "db" / "memory.sqlite", host)
    line = f"ai-memory {found.version}, schema {found.code_schema}"
    service_fix = f"ai-memory service install {ctx.dir_arg}"
    if found.service_file == "stale":
        return [
            warning(
                "service",
                f"{line}; the service file {found.service_path} runs another install or data dir",
                service_fix,
            )
        ]
    if found.service_file == "edited":
        return [
            warning(
                "service",
                f"{line}; the service file {found.service_path} was changed by hand",
                f"{service_fix} --force",
            )
        ]
    where = {"current": f"the service file {found.service_path} runs it"}
    return [ok("service", f"{line}; {where.get(found.service_file, found.service_file)}")]
