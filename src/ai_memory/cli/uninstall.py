"""Taking ai-memory out of every agent config it wrote, and optionally its data.

Each file ``install-hooks``, ``install-mcp`` and ``setup`` write (Claude Code,
Codex, Gemini CLI, OpenCode, Cursor) is looked at once, with every entry of ours
it may hold (hooks, the MCP server):

* **restore**: a backup beside it (``<file>.bak-<stamp>``, written before our
  first write) holds exactly what the file holds without our entries, so the
  file was not changed since but by us: the backup goes back byte for byte.
* **remove**: we created the file (no backup) and it holds nothing but ours.
* **edit**: otherwise only our entries go, and every other byte stays: a Codex
  TOML file loses our table, a JSON file our members and array elements, each
  with its comma (cli/json_edit.py). A JSON file whose text that cannot express
  is written back whole, in the form install writes it.

The OpenCode plugin file is ours whole and is removed. The service unit is
removed when it is the file ai-memory wrote. ``purge_data`` deletes the data
dir too, and is refused while a server owns it (the live-process check).
"""

from __future__ import annotations

import json
import os
import shutil
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ai_memory.cli import hook_install
from ai_memory.cli.json_edit import remove_to
from ai_memory.core.errors import InvalidInput
from ai_memory.hygiene.report import HygieneReport
from ai_memory.maintenance.lock import ServerLock
from ai_memory.mcp import install as mcp_install

PLUGIN_MARK = "ai-memory"
# What every initialised data dir holds; a folder without either is not one to delete.
DATA_DIR_MARKS = ("config.toml", "db/memory.sqlite")


class ServiceUnit(Protocol):
    """The part of :class:`~ai_memory.service.control.Service` uninstall uses."""

    @property
    def path(self) -> Path: ...

    def uninstall(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class FileChange:
    path: Path
    action: str  # restore, remove, edit
    parts: tuple[str, ...]  # what of ours it held: hooks:<agent>, mcp:<client>
    text: str | None = None  # the edited content
    backup: Path | None = None  # the backup restored


def plan(home: Path) -> list[FileChange]:
    """Every agent config under ``home`` that holds something of ours, and what to do."""
    strips: dict[Path, list[tuple[str, Callable[[Any], Any]]]] = {}
    for agent in hook_install.AGENT_HOOKS:
        path = hook_install.settings_path(agent, home)
        strips.setdefault(path, []).append((f"hooks:{agent}", _hooks_strip(agent)))
    toml_files: dict[Path, str] = {}
    for client in mcp_install.CLIENTS:
        path = mcp_install.config_path(client, home)
        if client == "codex":
            toml_files[path] = f"mcp:{client}"
        else:
            key = mcp_install._JSON_KEYS[client]
            strips.setdefault(path, []).append((f"mcp:{client}", _mcp_strip(key)))
    changes = [c for path, s in strips.items() if (c := _json_change(path, s))]
    changes += [c for path, part in toml_files.items() if (c := _toml_change(path, part))]
    for agent in hook_install.PLUGIN_AGENTS:
        path = hook_install.settings_path(agent, home)
        if path.is_file() and PLUGIN_MARK in path.read_text(encoding="utf-8", errors="replace"):
            changes.append(FileChange(path, "remove", (f"hooks:{agent}",)))
    return sorted(changes, key=lambda c: str(c.path))


def uninstall(
    home: Path,
    data_dir: Path,
    *,
    service: ServiceUnit | None = None,
    purge_data: bool = False,
    dry_run: bool = False,
) -> HygieneReport:
    """Plan, then (unless ``dry_run``) restore, remove or edit each file."""
    if purge_data and data_dir.exists():
        require_data_dir(data_dir, home)
    lock = ServerLock(data_dir, operation="uninstall --purge-data") if purge_data else None
    if lock is not None and data_dir.exists():
        lock.acquire()  # refused (ServerRunning) while a server owns the data dir
    try:
        changes = plan(home)
        report = HygieneReport("uninstall", dry_run, target={"home": str(home)})
        report.files = [str(c.path) for c in changes]
        report.details["files"] = {
            str(c.path): {"action": c.action, "parts": list(c.parts)}
            | ({"backup": str(c.backup)} if c.backup else {})
            for c in changes
        }
        unit = _service_unit(service)
        if unit is not None:
            report.files.append(str(unit))
            report.details["service"] = str(unit)
        if purge_data and data_dir.exists():
            report.details["purge_data"] = str(data_dir)
        if dry_run:
            return report
        for change in changes:
            apply(change)
        if unit is not None and service is not None:
            service.uninstall()
        if purge_data and data_dir.exists():
            shutil.rmtree(data_dir)
        return report
    finally:
        if lock is not None:
            lock.release()


def require_data_dir(data_dir: Path, home: Path) -> None:
    """Refuse to delete a folder that is not an ai-memory data dir (a mistyped
    ``--data-dir``: ``/``, HOME or a folder above it, a project checkout)."""
    real, own_home = _real(data_dir), _real(home)
    holds_home = real == own_home or real in own_home.parents
    if holds_home or not any((real / mark).is_file() for mark in DATA_DIR_MARKS):
        raise InvalidInput(
            f"{data_dir} is not an ai-memory data dir (no {' or '.join(DATA_DIR_MARKS)}"
            + (", and it holds your home folder" if holds_home else "")
            + "); refusing to delete it, nothing was changed"
        )


def apply(change: FileChange) -> None:
    if change.action == "restore" and change.backup is not None:
        hook_install.save(change.path, change.backup.read_text(encoding="utf-8"))
    elif change.action == "remove":
        _real(change.path).unlink(missing_ok=True)  # a user's symlink stays, as before install
    elif change.text is not None:
        hook_install.save(change.path, change.text)


def _service_unit(service: ServiceUnit | None) -> Path | None:
    """The unit file when it is ours (a file changed by hand is refused, and named)."""
    if service is None:
        return None
    from ai_memory.core.errors import NoServiceManager
    from ai_memory.service.files import require_removable

    try:
        path = service.path
    except NoServiceManager:
        return None
    return path if require_removable(path) else None


def _json_change(path: Path, strips: list[tuple[str, Callable[[Any], Any]]]) -> FileChange | None:
    if not path.is_file():
        return None
    data = hook_install.load(path)
    stripped, parts = data, []
    for part, strip in strips:
        after = strip(stripped)
        if after != stripped:
            parts.append(part)
        stripped = after
    if not parts:
        return None
    clean = []
    for backup in _backups(path):
        try:
            before = json.loads(backup.read_text(encoding="utf-8") or "{}")
        except (ValueError, UnicodeDecodeError):
            continue
        if _strip_all(before, strips) == before:
            clean.append((backup, before))
    # Cursor's hooks file gets a "version" from install: with nothing else left, it was ours.
    empty = {"version": 1} if "version" in stripped and len(stripped) == 1 else {}
    text = path.read_text(encoding="utf-8")
    edited = remove_to(text, stripped, _holds_own) or hook_install.render(stripped)
    return _decide(path, tuple(parts), clean, stripped, empty, edited)


def _holds_own(value: Any) -> bool:
    """Whether an array element is, or holds, one of our hook handlers."""
    if isinstance(value, dict):
        return hook_install.is_own(value) or any(_holds_own(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_own(v) for v in value)
    return False


def _strip_all(data: Any, strips: list[tuple[str, Callable[[Any], Any]]]) -> Any:
    for _, strip in strips:
        data = strip(data)
    return data


def _decide(
    path: Path,
    parts: tuple[str, ...],
    clean: list[tuple[Path, Any]],
    stripped: Any,
    empty: Any,
    text: str,
) -> FileChange:
    """Restore a backup holding nothing of ours that equals the file without ours; remove
    a file that was only ever ours; else edit."""
    for backup, content in clean:
        if content == stripped:
            return FileChange(path, "restore", parts, backup=backup)
    if stripped == empty and not clean:
        return FileChange(path, "remove", parts)
    return FileChange(path, "edit", parts, text=text)


def _toml_change(path: Path, part: str) -> FileChange | None:
    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8")
        tomllib.loads(text)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InvalidInput(f"{path} is not valid TOML ({exc}); nothing was changed") from exc
    kept = mcp_install._without_our_tables(text)
    if kept == text:
        return None
    kept = kept.rstrip("\n") + "\n" if kept.strip() else ""
    clean = []
    for backup in _backups(path):
        try:
            before = backup.read_text(encoding="utf-8")
            if mcp_install._without_our_tables(before) == before:
                clean.append((backup, tomllib.loads(before)))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
    return _decide(path, (part,), clean, tomllib.loads(kept), {}, kept)


def _backups(path: Path) -> list[Path]:
    """Backups install made of ``path``, newest first: beside the file a symlink leads to,
    where install wrote them."""
    real = _real(path)
    return sorted(real.parent.glob(f"{real.name}.bak-*"), reverse=True)


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _hooks_strip(agent: str) -> Callable[[Any], Any]:
    def strip(data: Any) -> Any:
        return hook_install.uninstall(data, agent) if isinstance(data, dict) else data

    return strip


def _mcp_strip(key: str) -> Callable[[Any], Any]:
    def strip(data: Any) -> Any:
        servers = data.get(key) if isinstance(data, dict) else None
        if not isinstance(servers, dict) or mcp_install.NAME not in servers:
            return data
        result = dict(data)
        rest = {k: v for k, v in servers.items() if k != mcp_install.NAME}
        if rest:
            result[key] = rest
        else:
            del result[key]
        return result

    return strip
