"""The one report every hygiene operation returns, so the CLI, the HTTP API and the
tests read the same figures whether the run was a dry run or the real thing."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class HygieneReport:
    """What an operation would change (``dry_run``) or changed.

    ``rows`` counts rows per table; ``pages`` lists ``workspace/project/path`` of pages
    touched (removed, moved or written); ``files`` the wiki or bundle files written or
    removed; ``collisions`` paths that block the operation (nothing moves when any is
    present); ``warnings`` what the user must know (history diverges, backup taken).
    """

    operation: str
    dry_run: bool
    target: dict[str, str] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)
    pages: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    collisions: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    def count(self, table: str, n: int) -> None:
        """Add ``n`` to a table's count (a table with nothing to change is still listed)."""
        self.rows[table] = self.rows.get(table, 0) + n

    @property
    def total_rows(self) -> int:
        return sum(self.rows.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "operation": self.operation,
            "dry_run": self.dry_run,
            "target": dict(self.target),
            "rows": dict(sorted(self.rows.items())),
            "pages": sorted(self.pages),
            "files": sorted(self.files),
            "collisions": sorted(self.collisions),
            "warnings": list(self.warnings),
            "details": dict(self.details),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HygieneReport:
        """Rebuild a report the server sent, so the CLI prints it like a local one."""
        return cls(
            operation=str(data["operation"]),
            dry_run=bool(data["dry_run"]),
            target={str(k): str(v) for k, v in dict(data.get("target") or {}).items()},
            rows={str(k): int(v) for k, v in dict(data.get("rows") or {}).items()},
            pages=[str(p) for p in data.get("pages") or []],
            files=[str(p) for p in data.get("files") or []],
            collisions=[str(p) for p in data.get("collisions") or []],
            warnings=[str(w) for w in data.get("warnings") or []],
            details=dict(data.get("details") or {}),
        )

    def summary_lines(self) -> list[str]:
        """A short human summary: what, on what, how many rows/pages/files."""
        verb = "would change" if self.dry_run else "changed"
        target = " ".join(f"{k}={v}" for k, v in self.target.items())
        lines = [f"{self.operation} {target}: {verb}".rstrip()]
        for table, n in sorted(self.rows.items()):
            lines.append(f"  {table}: {n} row(s)")
        lines.append(f"  pages: {len(self.pages)}")
        for page in sorted(self.pages):
            lines.append(f"    {page}")
        if self.files:
            lines.append(f"  files: {len(self.files)}")
        for path in sorted(self.collisions):
            lines.append(f"  collision: {path}")
        for warning in self.warnings:
            lines.append(f"  warning: {warning}")
        if self.dry_run:
            lines.append("  (dry run: nothing was changed)")
        return lines
