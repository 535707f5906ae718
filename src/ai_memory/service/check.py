"""What is installed, for ``ai-memory status`` (and a future ``doctor``): one function.

The code's version and schema version, the database's schema version, and whether the
service file is exactly what this install would write (so it runs this interpreter on
this data dir), is stale (another install or data dir: install again), edited by hand,
or absent.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ai_memory import __version__
from ai_memory.core.errors import AiMemoryError
from ai_memory.service.control import Service
from ai_memory.service.spec import Host
from ai_memory.store.migrations import SCHEMA_VERSION
from ai_memory.store.upgrade import schema_on_disk

_ADVICE = {
    "current": "",
    "stale": " (it runs another install or data dir: run `ai-memory service install`)",
    "edited": " (changed by hand since ai-memory wrote it)",
    "not installed": " (`ai-memory service install` starts the server at login)",
}


@dataclass(frozen=True, slots=True)
class InstallCheck:
    version: str
    code_schema: int
    database_schema: int | None  # None: no database yet
    service_file: str  # current, stale, edited, not installed, unsupported
    service_path: str | None

    @property
    def ok(self) -> bool:
        return self.service_file in ("current", "not installed") and (
            self.database_schema is None or self.database_schema <= self.code_schema
        )

    def summary(self) -> str:
        db = "none yet" if self.database_schema is None else str(self.database_schema)
        line = f"ai-memory {self.version}; schema {self.code_schema} (database: {db})"
        if self.database_schema is not None and self.database_schema > self.code_schema:
            line += " — the database is newer than this release"
        where = f" {self.service_path}" if self.service_path else ""
        return f"{line}\nservice: {self.service_file}{where}{_ADVICE.get(self.service_file, '')}"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


def install_check(data_dir: Path, db_path: Path, host: Host) -> InstallCheck:
    service = Service(host, data_dir)
    try:
        state, path = service.file_state(), str(service.path)
    except AiMemoryError:
        state, path = "unsupported", None  # no systemd or launchd on this OS
    return InstallCheck(__version__, SCHEMA_VERSION, schema_on_disk(db_path), state, path)
