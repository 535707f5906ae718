"""What a check reports: a severity, a sentence, and the command that fixes it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from enum import IntEnum
from typing import Any


class Severity(IntEnum):
    """Ordered, so the worst finding decides the exit status."""

    OK = 0
    WARNING = 1
    ERROR = 2


@dataclass(frozen=True, slots=True)
class Finding:
    check: str
    severity: Severity
    message: str
    fix: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["severity"] = self.severity.name.lower()
        return data


def ok(check: str, message: str) -> Finding:
    return Finding(check, Severity.OK, message)


def warning(check: str, message: str, fix: str | None = None) -> Finding:
    return Finding(check, Severity.WARNING, message, fix)


def error(check: str, message: str, fix: str | None = None) -> Finding:
    return Finding(check, Severity.ERROR, message, fix)


def worst(findings: Iterable[Finding]) -> Severity:
    return max((f.severity for f in findings), default=Severity.OK)
